//! `cuda-link compile`: CUDA C++ to PTX, LTO-IR, cubins or a fatbin with
//! NVRTC, spelt as nvcc is, and NVVM IR (`.ll`, `.bc`) the same ways with
//! libNVVM; and the compile flags `link` shares for its `.cu` inputs.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use cuda_compile::{
    CompileError, Compiler, HostCode, NvvmCompiler, NvvmOptions, NvvmProgram, Program,
    ProgramOptions, Std, Target,
};
use cuda_link::{Arch, FatbinBuilder, ObjectCode, ObjectKind};

use crate::make_rule::{RuleStyle, depfile_of, emit_rule, make_rule};
use crate::{Failure, report, say};

/// The flags of a compile, shared by `compile` and `link`'s `.cu` inputs.
#[derive(clap::Args, Clone, Default)]
pub(crate) struct CompileFlags {
    /// A folder searched for includes (repeatable; `-Idir` or `-I dir`;
    /// `-I a,b` is two, as nvcc reads it).
    #[arg(
        short = 'I',
        long = "include-path",
        value_name = "DIR",
        value_delimiter = ','
    )]
    pub(crate) include: Vec<PathBuf>,
    /// A folder searched after every `-I` (nvcc's `-isystem`; NVRTC has
    /// one kind of include folder).
    #[arg(long = "isystem", value_name = "DIR", value_delimiter = ',')]
    pub(crate) isystem: Vec<PathBuf>,
    /// Defines a macro: `-DNAME` or `-DNAME=VALUE` (repeatable; a comma
    /// separates two, as nvcc reads it).
    #[arg(
        short = 'D',
        long = "define-macro",
        value_name = "NAME[=VALUE]",
        value_delimiter = ','
    )]
    pub(crate) define: Vec<String>,
    /// Undefines a macro, after every `-D` (repeatable).
    #[arg(
        short = 'U',
        long = "undefine-macro",
        value_name = "NAME",
        value_delimiter = ','
    )]
    pub(crate) undefine: Vec<String>,
    /// Includes FILE before the source (nvcc's `-include`).
    #[arg(
        long = "include",
        alias = "pre-include",
        value_name = "FILE",
        value_delimiter = ','
    )]
    pub(crate) pre_include: Vec<String>,
    /// The C++ dialect: c++03, c++11, c++14, c++17 (NVRTC's default),
    /// c++20, c++23.
    #[arg(long, value_name = "DIALECT", value_parser = parse_std)]
    pub(crate) std: Option<Std>,
    /// Accepted for nvcc's command lines. NVRTC 12.9 to 13.5 have no such
    /// option ("unrecognized option"), and in NVRTC a function without
    /// `__device__` is refused, constexpr or not; so this passes
    /// `-default-device`, which makes such functions device functions: the
    /// code nvcc's flag accepts compiles.
    #[arg(long = "expt-relaxed-constexpr")]
    pub(crate) relaxed_constexpr: bool,
    /// Accepted for nvcc's command lines, and changes nothing: NVRTC has no
    /// such option and refuses `__device__` lambdas whatever the flags
    /// (plain lambdas in device code need none).
    #[arg(long = "expt-extended-lambda", alias = "extended-lambda")]
    pub(crate) extended_lambda: bool,
    /// Fast, less precise math (`--use_fast_math`).
    #[arg(long = "use_fast_math", alias = "use-fast-math")]
    pub(crate) use_fast_math: bool,
    /// An NVRTC option as it is written, for anything else (repeatable:
    /// `-Xnvrtc --dopt=on`). One NVRTC does not know is refused by name.
    #[arg(long = "Xnvrtc", value_name = "OPTION", allow_hyphen_values = true)]
    pub(crate) xnvrtc: Vec<String>,
}

impl CompileFlags {
    /// The flags given that only NVRTC reads, as nvcc spells them: NVVM
    /// IR has no preprocessor and no C++ dialect.
    pub(crate) fn for_cuda_cxx_only(&self) -> Vec<&'static str> {
        [
            (!self.include.is_empty(), "-I"),
            (!self.isystem.is_empty(), "-isystem"),
            (!self.define.is_empty(), "-D"),
            (!self.undefine.is_empty(), "-U"),
            (!self.pre_include.is_empty(), "--include"),
            (self.std.is_some(), "-std"),
            (self.relaxed_constexpr, "--expt-relaxed-constexpr"),
            (self.extended_lambda, "--expt-extended-lambda"),
            (!self.xnvrtc.is_empty(), "-Xnvrtc"),
        ]
        .into_iter()
        .filter_map(|(given, flag)| given.then_some(flag))
        .collect()
    }

    /// These flags on top of `options`.
    pub(crate) fn apply(&self, mut options: ProgramOptions) -> ProgramOptions {
        let paths = self.include.iter().chain(&self.isystem);
        options
            .include_path
            .extend(paths.map(|dir| dir.display().to_string()));
        options.define_macro.extend(self.define.iter().cloned());
        options.undefine_macro.extend(self.undefine.iter().cloned());
        options.pre_include.extend(self.pre_include.iter().cloned());
        options.std = self.std.or(options.std);
        // nvcc's spellings mean what cuda-compile's one table says.
        let nvcc = [
            (self.relaxed_constexpr, "--expt-relaxed-constexpr"),
            (self.extended_lambda, "--expt-extended-lambda"),
        ];
        let _ = options.nvcc_options(nvcc.iter().filter(|(on, _)| *on).map(|(_, flag)| flag));
        options.use_fast_math |= self.use_fast_math;
        options.extra_options.extend(self.xnvrtc.iter().cloned());
        options
    }
}

/// `-std=c++17`, or nvcc's `c++17`-less spellings `17`.
fn parse_std(text: &str) -> Result<Std, String> {
    Ok(
        match text.trim_start_matches("c++").trim_start_matches("gnu++") {
            "03" | "98" => Std::Cxx03,
            "11" => Std::Cxx11,
            "14" => Std::Cxx14,
            "17" => Std::Cxx17,
            "20" => Std::Cxx20,
            "23" => Std::Cxx23,
            _ => return Err("expected c++03, c++11, c++14, c++17, c++20 or c++23".into()),
        },
    )
}

/// The flags of `compile`.
#[derive(clap::Args)]
pub(crate) struct CompileArgs {
    /// Target architectures, comma-separated or repeated: `sm_90` (a
    /// cubin), `compute_90` (PTX), `lto_90` (LTO-IR), or `90`. Several give
    /// one output per arch, or one fatbin with `--fatbin`.
    #[arg(
        long,
        alias = "gpu-architecture",
        value_delimiter = ',',
        required_unless_present = "gencode"
    )]
    pub(crate) arch: Vec<String>,
    /// nvcc's `-gencode arch=compute_80,code=[sm_80,compute_80]`
    /// (repeatable): a cubin per `sm_XX`, PTX per `compute_XX`.
    #[arg(
        long,
        alias = "generate-code",
        value_name = "arch=compute_XX,code=[sm_XX,compute_XX]"
    )]
    pub(crate) gencode: Vec<String>,
    /// Output file, for one output. Without it: the input's name with the
    /// output's extension, in the current folder (`saxpy.sm_90.cubin` for
    /// one of several arches).
    #[arg(short, long)]
    pub(crate) output: Option<PathBuf>,
    /// CUDA C++ files, or NVVM IR (`.ll` text, `.bc` bitcode), which
    /// libNVVM compiles.
    #[arg(required = true)]
    pub(crate) inputs: Vec<PathBuf>,
    #[command(flatten)]
    pub(crate) flags: CompileFlags,
    /// Write PTX for every arch.
    #[arg(long, group = "kind")]
    pub(crate) ptx: bool,
    /// The highest PTX ISA of the PTX written (alone or in a fatbin),
    /// lowered to it and checked by ptxas through nvJitLink: by default
    /// the ISA of the first driver of nvJitLink's CUDA release (13.x:
    /// 9.0), as `link` and cuda-build lower theirs; `as-linked` keeps the
    /// compiler's.
    #[arg(long, value_name = "MAJOR.MINOR|as-linked")]
    pub(crate) ptx_isa: Option<crate::PtxIsaArg>,
    /// Write a cubin for every arch (the default for `sm_XX`).
    #[arg(long, group = "kind")]
    pub(crate) cubin: bool,
    /// Write LTO-IR for every arch (nvcc's `-dlto`).
    #[arg(long, alias = "dlto", group = "kind")]
    pub(crate) ltoir: bool,
    /// Write one fatbin per input, a slot per arch.
    #[arg(long, group = "kind")]
    pub(crate) fatbin: bool,
    /// Relocatable device code, for a later link (`-rdc=true`).
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub(crate) rdc: Option<bool>,
    /// Relocatable device code (nvcc's `-dc`: `-rdc=true -c`).
    #[arg(long)]
    pub(crate) dc: bool,
    /// Line information for profilers and sanitizers.
    #[arg(long)]
    pub(crate) lineinfo: bool,
    /// Device debug information (`-G`), which turns optimisation off.
    #[arg(short = 'G', long = "device-debug")]
    pub(crate) device_debug: bool,
    /// Accepted for nvcc's command lines: nvcc's `-O` is the host
    /// compiler's level, and NVRTC compiles no host code; device code is
    /// optimised unless `-G`. For NVVM IR, libNVVM's `-opt` (0 to 3).
    #[arg(short = 'O', value_name = "LEVEL")]
    pub(crate) host_optimization: Option<String>,
    /// Maximum registers per thread.
    #[arg(long = "maxrregcount", value_name = "N")]
    pub(crate) max_register_count: Option<u32>,
    /// Flush denormals to zero.
    #[arg(long)]
    pub(crate) ftz: Option<bool>,
    /// Precise division.
    #[arg(long = "prec-div")]
    pub(crate) prec_div: Option<bool>,
    /// Precise square root.
    #[arg(long = "prec-sqrt")]
    pub(crate) prec_sqrt: Option<bool>,
    /// Fused multiply-add.
    #[arg(long)]
    pub(crate) fmad: Option<bool>,
    /// A template instantiation or `&variable` to compile (repeatable):
    /// its lowered (mangled) name is printed, `EXPRESSION<TAB>NAME`, a
    /// line each, for `Library::kernel` or the driver.
    #[arg(long = "name-expression", value_name = "EXPRESSION")]
    pub(crate) name_expressions: Vec<String>,
    /// Print a make rule of each input's includes and compile nothing
    /// (into `--MF`'s file or `-o`'s, when given, as nvcc's `-M`).
    #[arg(short = 'M')]
    pub(crate) make_deps_only: bool,
    /// Also write a make rule of the includes, beside the output
    /// (`out.cubin.d`) or at `--MF`.
    #[arg(long = "MD", alias = "MMD")]
    pub(crate) make_deps: bool,
    /// The file `--MD` writes.
    #[arg(long = "MF", value_name = "FILE")]
    pub(crate) make_deps_file: Option<PathBuf>,
    /// The make rule's target, as given, instead of the output's name.
    #[arg(long = "MT", value_name = "TARGET")]
    pub(crate) make_target: Option<String>,
    /// Also a rule without prerequisites for each header, so that make
    /// does not stop when one is deleted.
    #[arg(long = "MP")]
    pub(crate) make_phony: bool,
    /// Print NVRTC's info and what was written.
    #[arg(short, long)]
    pub(crate) verbose: bool,
    #[command(flatten)]
    pub(crate) cache: crate::cache::CacheArgs,
}

/// What one arch slot of a compile writes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Slot {
    pub(crate) target: Target,
    pub(crate) arch: Arch,
}

impl Slot {
    /// `sm_90` for a cubin, `compute_90` for PTX, `lto_90` for LTO-IR.
    fn label(self) -> String {
        match self.target {
            Target::Cubin => self.arch.to_string(),
            Target::Ptx => self.arch.compute(),
            Target::Ltoir => self.arch.lto(),
        }
    }

    fn extension(self) -> &'static str {
        match self.target {
            Target::Cubin => "cubin",
            Target::Ptx => "ptx",
            Target::Ltoir => "ltoir",
        }
    }
}

/// The slots an arch list asks for: the kind from each arch's spelling
/// (`compute_` PTX, `lto_` LTO-IR, else a cubin), unless `forced`.
pub(crate) fn slots(
    arches: &[String],
    gencodes: &[String],
    forced: Option<Target>,
) -> Result<Vec<Slot>, Failure> {
    let mut slots = Vec::new();
    for text in arches {
        let arch =
            crate::parse_arch(text).map_err(|e| Failure::Usage(format!("-arch {text}: {e}")))?;
        let spelt = match text.parse::<cuda_link::ArchCode>().map(|code| code.kind) {
            Ok(cuda_link::CodeKind::Compute) => Target::Ptx,
            Ok(cuda_link::CodeKind::Lto) => Target::Ltoir,
            _ => Target::Cubin,
        };
        slots.push(Slot {
            target: forced.unwrap_or(spelt),
            arch,
        });
    }
    for gencode in gencodes {
        let parsed = gencode_as_compiled(gencode)?;
        for target in parsed.targets {
            let spelt = match target {
                cuda_link::LinkTarget::Cubin(_) => Target::Cubin,
                cuda_link::LinkTarget::Ptx(_) => Target::Ptx,
            };
            slots.push(Slot {
                target: forced.unwrap_or(spelt),
                arch: target.arch(),
            });
        }
        // `code=lto_90`: LTO-IR, as nvcc's `-dlto` compile writes it.
        for arch in parsed.ltoir {
            slots.push(Slot {
                target: forced.unwrap_or(Target::Ltoir),
                arch,
            });
        }
    }
    let mut seen = Vec::new();
    slots.retain(|slot| {
        let new = !seen.contains(slot);
        seen.push(*slot);
        new
    });
    Ok(slots)
}

/// A `-gencode` for CUDA C++: a slot of another arch than its `arch=`
/// is refused. nvcc compiles it as the virtual arch and assembles that
/// PTX for the slot's; compiled as the slot's own arch instead,
/// `__CUDA_ARCH__` would differ, silently.
pub(crate) fn gencode_as_compiled(gencode: &str) -> Result<cuda_link::Gencode, Failure> {
    let parsed = cuda_link::Gencode::parse(gencode).map_err(|e| Failure::Usage(e.to_string()))?;
    let other = parsed.assembled_for_another_arch().next();
    match other {
        None => Ok(parsed),
        Some(other) => Err(Failure::Usage(format!(
            "-gencode {gencode}: code for {} compiled as {} is not made here; pass \
             arch={},code={other} (its __CUDA_ARCH__ is {}0), or -arch {}",
            other.arch(),
            parsed.virtual_arch.compute(),
            other.arch().compute(),
            other.arch().sm,
            parsed.virtual_arch,
        ))),
    }
}

/// The compilers of one `compile`, each made when an input first needs
/// it: a run of NVVM IR alone needs no NVRTC.
struct Compilers {
    cache: Option<Arc<cuda_link::LinkCache>>,
    nvrtc: OnceLock<Compiler>,
    nvvm: OnceLock<NvvmCompiler>,
}

impl Compilers {
    fn nvrtc(&self) -> Result<&Compiler, Failure> {
        if let Some(compiler) = self.nvrtc.get() {
            return Ok(compiler);
        }
        let made = compiler(self.cache.clone())?;
        Ok(self.nvrtc.get_or_init(|| made))
    }

    fn nvvm(&self) -> Result<&NvvmCompiler, Failure> {
        if let Some(compiler) = self.nvvm.get() {
            return Ok(compiler);
        }
        let made = NvvmCompiler::new().map_err(compile_failure)?;
        let made = match &self.cache {
            Some(cache) => made.with_cache(Arc::clone(cache)),
            None => made,
        };
        Ok(self.nvvm.get_or_init(|| made))
    }
}

/// An input of `compile`.
enum Source {
    /// CUDA C++, for NVRTC.
    Cuda(Program),
    /// NVVM IR, for libNVVM.
    Nvvm(NvvmProgram),
}

impl Source {
    /// NVVM IR by its bytes, or by its extension (`.ll`, `.bc`) when the
    /// bytes are not CUDA C++; else CUDA C++.
    fn read(path: &Path) -> Result<Source, Failure> {
        let by_name = path
            .extension()
            .and_then(|e| e.to_str())
            .and_then(ObjectKind::from_extension);
        let detected = std::fs::read(path).map(|bytes| ObjectKind::detect(&bytes));
        let ir = match detected {
            Ok(Ok(ObjectKind::NvvmIr)) => true,
            Ok(Err(cuda_link::Reason::CudaSource)) => false,
            _ => by_name == Some(ObjectKind::NvvmIr),
        };
        Ok(match ir {
            true => Source::Nvvm(NvvmProgram::from_path(path).map_err(compile_failure)?),
            false => Source::Cuda(Program::from_path(path).map_err(compile_failure)?),
        })
    }
}

/// A compiler with the process's NVRTC, and the cache when asked for.
pub(crate) fn compiler(cache: Option<Arc<cuda_link::LinkCache>>) -> Result<Compiler, Failure> {
    let compiler = Compiler::new().map_err(compile_failure)?;
    Ok(match cache {
        Some(cache) => compiler.with_cache(cache),
        None => compiler,
    })
}

/// A compile error in a command-line user's words: a missing NVRTC is
/// exit 3, as `--help` says of a missing library.
pub(crate) fn compile_failure(error: CompileError) -> Failure {
    match error {
        CompileError::Load(_) | CompileError::NvvmUnavailable(_) => {
            Failure::NoBackend(report(&error))
        }
        _ => Failure::Reported(report(&error)),
    }
}

/// What to do with a file of host code, after its verdict.
const HOST_CODE_ADVICE: &str = "compile it with nvcc, or let cuda-build route it to nvcc (it \
     sends a file with host code there by itself); for NVRTC, launch its kernels from Rust \
     (cuda-module or cudarc) and guard the host code with `#ifndef __CUDACC_RTC__`";

/// Compiles `path` for one slot; NVRTC's warnings go to `warnings`.
pub(crate) fn compile_file(
    compiler: &Compiler,
    program: &Program,
    slot: Slot,
    options: &ProgramOptions,
    warnings: &mut Vec<String>,
) -> Result<ObjectCode, Failure> {
    let options = options.clone().arch(slot.arch);
    // The verdict before any compile, as cuda-build's: under
    // `-default-device` (nvcc's `--expt-relaxed-constexpr`) NVRTC would
    // compile a launcher as device code and drop it, or `extern "C"` stubs
    // to an empty output.
    if let Some(host) = HostCode::scan(compiler, program, &options) {
        return Err(Failure::Reported(format!("{host}: {HOST_CODE_ADVICE}")));
    }
    let compiled = compiler
        .compile(program, slot.target, &options)
        .map_err(
            |error| match HostCode::find(compiler, program, &options, &error) {
                Some(host) => Failure::Reported(format!("{host}: {HOST_CODE_ADVICE}")),
                None => compile_failure(error),
            },
        )?;
    for warning in &compiled.warnings {
        let line = warning.to_string();
        if !warnings.contains(&line) {
            warnings.push(line);
        }
    }
    no_kernel_lost(program, &compiled.code)?;
    Ok(compiled.code)
}

/// PTX lowered to `--ptx-isa`, else to the first ISA of nvJitLink's CUDA
/// release, as `link` and cuda-build lower theirs: a driver JIT-compiles
/// no newer ISA than its own. Other kinds pass as they are. Without
/// nvJitLink, which checks the lowered copy with ptxas, the default
/// leaves the PTX as it is, saying so; an asked ISA is an error.
pub(crate) fn floored(
    code: ObjectCode,
    arch: Arch,
    choice: Option<crate::PtxIsaArg>,
) -> Result<ObjectCode, Failure> {
    if code.kind() != ObjectKind::Ptx || choice == Some(crate::PtxIsaArg::AsLinked) {
        return Ok(code);
    }
    let options = cuda_link::LinkerOptions::for_arch(arch).backend(cuda_link::Backend::NvJitLink);
    let linker = match cuda_link::Linker::new(options.clone()) {
        Ok(linker) => linker,
        Err(error) => {
            let stated = cuda_link::PtxIsa::stated_by(code.as_bytes());
            if let Some(crate::PtxIsaArg::Isa(isa)) = choice
                && stated.is_some_and(|stated| stated > isa)
            {
                return Err(Failure::Reported(format!(
                    "--ptx-isa {isa}: lowering {} needs nvJitLink, which checks it with ptxas: {}",
                    code.name(),
                    report(&error)
                )));
            }
            say::err(format!(
                "note: {} is left at its PTX ISA{}: nvJitLink, which checks a lowered copy, is \
                 not available",
                code.name(),
                stated.map(|isa| format!(" {isa}")).unwrap_or_default()
            ));
            return Ok(code);
        }
    };
    let isa = match choice {
        Some(crate::PtxIsaArg::Isa(isa)) => isa,
        _ => match linker.release_ptx_isa() {
            Some(isa) => isa,
            None => return Ok(code),
        },
    };
    let linker =
        cuda_link::Linker::new(options.ptx_isa(isa)).map_err(|e| Failure::Reported(report(&e)))?;
    linker
        .lower_ptx_isa(code)
        .map_err(|e| Failure::Reported(report(&e)))
}

/// An output with no kernel from a file that defines `__global__`
/// functions is an error, not an empty success: a template kernel is
/// compiled only where something NVRTC sees instantiates it. LTO-IR names
/// no kernel, and is not checked so.
fn no_kernel_lost(program: &Program, code: &ObjectCode) -> Result<(), Failure> {
    if code.kind() == ObjectKind::Ltoir {
        return Ok(());
    }
    let defined = cuda_compile::source::global_functions(program.source());
    let made = code.inspect().map(|info| info.kernels().len()).unwrap_or(1);
    if defined.is_empty() || made > 0 {
        return Ok(());
    }
    Err(Failure::Reported(format!(
        "{}: defines `__global__` {} but compiles to no kernel: a template kernel is compiled \
         only where code NVRTC sees instantiates it (`template __global__ void {}<float>(...);`), \
         not by a launcher behind `#ifndef __CUDACC_RTC__`",
        program.name(),
        defined
            .iter()
            .map(|name| format!("`{name}`"))
            .collect::<Vec<_>>()
            .join(", "),
        defined[0]
    )))
}

/// Compiles an NVVM program for one slot; libNVVM's warnings go to
/// `warnings`.
fn compile_nvvm(
    compiler: &NvvmCompiler,
    program: &NvvmProgram,
    slot: Slot,
    options: &NvvmOptions,
    warnings: &mut Vec<String>,
) -> Result<ObjectCode, Failure> {
    let mut options = options.clone();
    options.arch = Some(slot.arch);
    // A register limit is the cubins' (as nvcc applies it); PTX and
    // LTO-IR carry none.
    if slot.target != Target::Cubin {
        options.max_register_count = None;
    }
    let compiled = compiler
        .compile(program, slot.target, &options)
        .map_err(compile_failure)?;
    warnings.extend(compiled.warnings.iter().map(ToString::to_string));
    Ok(compiled.code)
}

/// libNVVM's options from `compile`'s flags.
fn nvvm_options(args: &CompileArgs) -> Result<NvvmOptions, Failure> {
    let mut options = NvvmOptions::default();
    if args.device_debug {
        // `-G` turns optimisation off, as numba's debug builds do
        // (`-opt=0 -g`); an `-O` given with it wins.
        options = options.opt_level(0);
    }
    if let Some(level) = &args.host_optimization {
        let level = level
            .parse()
            .map_err(|_| Failure::Usage(format!("-O{level}: libNVVM takes -O0 to -O3")))?;
        options = options.opt_level(level);
    }
    if args.flags.use_fast_math {
        options = options.fast_math();
    }
    options.ftz = args.ftz.or(options.ftz);
    options.prec_div = args.prec_div.or(options.prec_div);
    options.prec_sqrt = args.prec_sqrt.or(options.prec_sqrt);
    options.fma = args.fmad.or(options.fma);
    options.max_register_count = args.max_register_count;
    Ok(options.debug(args.device_debug).line_info(args.lineinfo))
}

/// Runs `cuda-link compile`.
pub(crate) fn run(args: CompileArgs) -> Result<(), Failure> {
    let forced = match (args.ptx, args.cubin, args.ltoir) {
        (true, _, _) => Some(Target::Ptx),
        (_, true, _) => Some(Target::Cubin),
        (_, _, true) => Some(Target::Ltoir),
        _ => None,
    };
    let slots = slots(&args.arch, &args.gencode, forced)?;
    if slots.is_empty() {
        return Err(Failure::Usage(
            "no target: pass -arch sm_XX or -gencode".into(),
        ));
    }
    if !(args.make_deps || args.make_deps_only) {
        let rule_flag = [
            args.make_deps_file.as_ref().map(|_| "--MF"),
            args.make_target.as_ref().map(|_| "--MT"),
            args.make_phony.then_some("--MP"),
        ];
        if let Some(flag) = rule_flag.into_iter().flatten().next() {
            return Err(Failure::Usage(format!(
                "{flag} shapes the make rule of -MD or -M: add one"
            )));
        }
    }
    if let Some(file) = &args.make_deps_file {
        // Said before the compile, not after it.
        crate::output::check(file)?;
    }
    let mut options = args.flags.apply(ProgramOptions::default());
    options.relocatable_device_code = args.rdc.or(args.dc.then_some(true));
    options.lineinfo = args.lineinfo;
    options.debug = args.device_debug;
    options.max_register_count = args.max_register_count;
    options.ftz = args.ftz;
    options.prec_div = args.prec_div;
    options.prec_sqrt = args.prec_sqrt;
    options.fma = args.fmad;
    let outputs = if args.fatbin { 1 } else { slots.len() };
    if args.output.is_some() && args.inputs.len() * outputs > 1 {
        return Err(Failure::Usage(format!(
            "-o names one output, and this compile writes {}: drop -o (each \
             output is named after its input and arch), or pass --fatbin",
            args.inputs.len() * outputs
        )));
    }
    if let Some(output) = &args.output {
        crate::output::refuse_output_among_inputs(output, &args.inputs)?;
    }
    let nvvm_options = nvvm_options(&args)?;
    let compilers = Compilers {
        cache: args.cache.open()?,
        nvrtc: OnceLock::new(),
        nvvm: OnceLock::new(),
    };
    // A missing input is said before any output is written.
    if let Some((input, error)) = args
        .inputs
        .iter()
        .find_map(|input| std::fs::metadata(input).err().map(|e| (input, e)))
    {
        return Err(Failure::Reported(format!("{}: {error}", input.display())));
    }
    // Each input read once: whether any is CUDA C++ decides what NVVM IR
    // inputs make of CUDA C++ flags.
    let sources: Vec<_> = args
        .inputs
        .iter()
        .map(|input| Source::read(input))
        .collect();
    let any_cxx = sources
        .iter()
        .any(|source| matches!(source, Ok(Source::Cuda(_))));
    for (input, source) in args.inputs.iter().zip(sources) {
        let program = match source? {
            Source::Cuda(program) => program,
            Source::Nvvm(program) => {
                // `-rdc=true` / `-dc`: calls left for a later link.
                let relocatable = args.rdc.or(args.dc.then_some(true)).unwrap_or(false);
                if relocatable && slots.iter().any(|slot| slot.target == Target::Cubin) {
                    return Err(Failure::Usage(format!(
                        "{}: -rdc/-dc NVVM IR compiles to --ptx or --ltoir for a later link \
                         (nvJitLink, which makes cubins of NVVM IR, makes executables only)",
                        input.display()
                    )));
                }
                let program = program.relocatable(relocatable);
                compile_ir(
                    &args,
                    &slots,
                    &compilers,
                    input,
                    &program,
                    any_cxx,
                    &nvvm_options,
                )?;
                continue;
            }
        };
        let compiler = compilers.nvrtc()?;
        let program = args
            .name_expressions
            .iter()
            .fold(program, |program, expression| {
                program.name_expression(expression)
            });
        if args.make_deps_only {
            let first = (!args.fatbin).then_some(slots[0]);
            let target = default_output_path(input, first, slots.len() > 1);
            let rule = rule(&args, &target, compiler, &program, &options)?;
            emit_rule(rules_file(&args), &rule)?;
            continue;
        }
        let mut warnings = Vec::new();
        let mut written = Vec::new();
        if args.fatbin {
            let mut builder = FatbinBuilder::new();
            let mut lowered = None;
            for &slot in &slots {
                let step = format!("compiling {} for {}", input.display(), slot.label());
                let code = crate::progress::while_running(&step, || {
                    compile_file(compiler, &program, slot, &options, &mut warnings)
                })?;
                let code = floored(code, slot.arch, args.ptx_isa)?;
                lowered.get_or_insert_with(|| code.name_expressions().to_vec());
                builder = builder
                    .add(&code, Some(slot.arch))
                    .map_err(|e| Failure::Reported(format!("{}: {}", slot.label(), report(&e))))?;
            }
            let path = output_path(&args, input, None, false);
            let fatbin = builder
                .build(path.display().to_string())
                .map_err(|e| Failure::Reported(report(&e)))?;
            crate::output::write(&path, fatbin.as_bytes())?;
            written.push((path, lowered.unwrap_or_default()));
        } else {
            for &slot in &slots {
                let step = format!("compiling {} for {}", input.display(), slot.label());
                let code = crate::progress::while_running(&step, || {
                    compile_file(compiler, &program, slot, &options, &mut warnings)
                })?;
                let code = floored(code, slot.arch, args.ptx_isa)?;
                let path = output_path(&args, input, Some(slot), slots.len() > 1);
                crate::output::write(&path, code.as_bytes())?;
                written.push((path, code.name_expressions().to_vec()));
            }
        }
        for warning in &warnings {
            say::err(format!("warning: {warning}"));
        }
        if let Some((_, lowered)) = written.first() {
            for (expression, name) in lowered {
                let _ = say::out(format!("{expression}\t{name}"));
            }
        }
        if args.make_deps {
            for (path, _) in &written {
                let depfile = depfile_of(path, args.make_deps_file.as_deref());
                let rule = rule(&args, path, compiler, &program, &options)?;
                crate::output::write(&depfile, rule.as_bytes())?;
            }
        }
        if args.verbose {
            for (path, _) in &written {
                say::err(format!("cuda-link: wrote {}", path.display()));
            }
        }
    }
    if let Some(cache) = &compilers.cache {
        crate::cache::report(cache, args.verbose);
    }
    Ok(())
}

/// `compile` of one NVVM IR file: an output per slot, or one fatbin. Its
/// make rule names the file alone (NVVM IR includes nothing). `any_cxx`:
/// a CUDA C++ input stands beside it, whose CUDA C++ flags are.
fn compile_ir(
    args: &CompileArgs,
    slots: &[Slot],
    compilers: &Compilers,
    input: &Path,
    program: &NvvmProgram,
    any_cxx: bool,
    options: &NvvmOptions,
) -> Result<(), Failure> {
    if !args.name_expressions.is_empty() {
        return Err(Failure::Usage(format!(
            "{}: --name-expression is for CUDA C++; NVVM IR names its kernels itself",
            input.display()
        )));
    }
    let ignored = args.flags.for_cuda_cxx_only();
    match (ignored.is_empty(), any_cxx) {
        (true, _) => {}
        // Beside a `.cu` input they are that input's.
        (false, true) => say::err(format!(
            "note: {}: {} apply to CUDA C++ and are ignored for NVVM IR",
            input.display(),
            ignored.join(", ")
        )),
        (false, false) => {
            return Err(Failure::Usage(format!(
                "{}: {} apply to CUDA C++, and NVVM IR takes none of them: drop {}",
                input.display(),
                ignored.join(", "),
                if ignored.len() == 1 { "it" } else { "them" }
            )));
        }
    }
    // Applied to the cubins among the slots; with none, it would apply
    // to nothing.
    if let Some(registers) = args.max_register_count
        && !slots.iter().any(|slot| slot.target == Target::Cubin)
    {
        return Err(Failure::Usage(format!(
            "{}: --maxrregcount {registers} is applied where PTX is assembled into a cubin, \
             and this compile makes none (libNVVM's PTX and LTO-IR carry no limit): add a \
             cubin (-arch sm_XX), or pass it to `cuda-link link`",
            input.display(),
        )));
    }
    if args.make_deps_only {
        let first = (!args.fatbin).then_some(slots[0]);
        let target = default_output_path(input, first, slots.len() > 1);
        let rule = make_rule(rule_style(args), &target, &[input.to_owned()]);
        return emit_rule(rules_file(args), &rule);
    }
    let compiler = compilers.nvvm()?;
    let mut warnings = Vec::new();
    let mut written = Vec::new();
    let mut builder = FatbinBuilder::new();
    for &slot in slots {
        let step = format!("compiling {} for {}", input.display(), slot.label());
        let code = crate::progress::while_running(&step, || {
            compile_nvvm(compiler, program, slot, options, &mut warnings)
        })?;
        let code = floored(code, slot.arch, args.ptx_isa)?;
        if args.fatbin {
            builder = builder
                .add(&code, Some(slot.arch))
                .map_err(|e| Failure::Reported(format!("{}: {}", slot.label(), report(&e))))?;
        } else {
            let path = output_path(args, input, Some(slot), slots.len() > 1);
            crate::output::write(&path, code.as_bytes())?;
            written.push(path);
        }
    }
    if args.fatbin {
        let path = output_path(args, input, None, false);
        let fatbin = builder
            .build(path.display().to_string())
            .map_err(|e| Failure::Reported(report(&e)))?;
        crate::output::write(&path, fatbin.as_bytes())?;
        written.push(path);
    }
    warnings.dedup();
    for warning in &warnings {
        say::err(format!("warning: {warning}"));
    }
    for path in &written {
        if args.make_deps {
            let depfile = depfile_of(path, args.make_deps_file.as_deref());
            let rule = make_rule(rule_style(args), path, &[input.to_owned()]);
            crate::output::write(&depfile, rule.as_bytes())?;
        }
        if args.verbose {
            say::err(format!("cuda-link: wrote {}", path.display()));
        }
    }
    Ok(())
}

/// Where an output goes: `-o`, else the input's stem with the slot's
/// extension (and the arch, when there are several), in the current
/// folder; `None` is the fatbin.
fn output_path(args: &CompileArgs, input: &Path, slot: Option<Slot>, several: bool) -> PathBuf {
    match &args.output {
        Some(output) => output.clone(),
        None => default_output_path(input, slot, several),
    }
}

/// The output's name without `-o`: also a `-M` rule's target, as nvcc's
/// names the object whatever `-o` says.
fn default_output_path(input: &Path, slot: Option<Slot>, several: bool) -> PathBuf {
    let stem = input.file_stem().unwrap_or_default().to_string_lossy();
    PathBuf::from(match slot {
        None => format!("{stem}.fatbin"),
        Some(slot) if several => format!("{stem}.{}.{}", slot.label(), slot.extension()),
        Some(slot) => format!("{stem}.{}", slot.extension()),
    })
}

/// The make rule of a C++ compile's output: the source and the headers
/// it reads.
fn rule(
    args: &CompileArgs,
    output: &Path,
    compiler: &Compiler,
    program: &Program,
    options: &ProgramOptions,
) -> Result<String, Failure> {
    let files = compiler
        .included_files(program, options)
        .map_err(compile_failure)?;
    Ok(make_rule(rule_style(args), output, &files))
}

fn rule_style(args: &CompileArgs) -> RuleStyle<'_> {
    RuleStyle {
        target: args.make_target.as_deref(),
        phony_headers: args.make_phony,
    }
}

/// Where `-M` writes: `--MF`'s file, else `-o`'s (as nvcc's `-M -o`).
fn rules_file(args: &CompileArgs) -> Option<&Path> {
    args.make_deps_file.as_deref().or(args.output.as_deref())
}
