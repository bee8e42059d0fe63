//! `cuda-link link`: what can be known before a backend loads is checked
//! first; the link runs isolated unless asked otherwise; the output is
//! written whole or not at all.

use std::path::PathBuf;
use std::time::Duration;

use cuda_link::inspect::{Contents, EntryKind};
use cuda_link::{
    Arch, Backend, DeviceContext, Isolation, LinkError, LinkTarget, Linker, LinkerOptions,
    ObjectCode, ObjectKind, OutputKind,
};

use crate::{Failure, LinkArgs, report, say};

/// Links `args.inputs` into `args.output`.
pub fn run(args: LinkArgs) -> Result<(), Failure> {
    let output = if args.ptx {
        OutputKind::Ptx
    } else if args.ltoir {
        OutputKind::Ltoir
    } else {
        OutputKind::Cubin
    };
    let options = options(&args)?;
    crate::output::refuse_output_among_inputs(&args.output, &args.inputs)?;
    let mut inputs = Inputs::read(&args)?;
    let arches: Vec<Arch> = options
        .arch
        .into_iter()
        .chain(options.targets.iter().map(|t| t.arch()))
        .collect();
    // What is wrong with the options, the inputs or the output path is
    // said before a backend is loaded and before a long link runs.
    let first = inputs.for_arch(arches.first().copied())?;
    Linker::check(&options, &first).map_err(link_failure)?;
    check_inputs(&args, &options, &first, inputs.has_sources())?;
    crate::output::check(&args.output)?;

    let _context = match options.backend {
        Backend::Driver => Some(DeviceContext::make_current(args.device).map_err(link_failure)?),
        _ => None,
    };
    let multi_arch = !options.targets.is_empty();
    let mut linker = Linker::new(options.clone()).map_err(link_failure)?;
    if linker.backend() == Backend::Driver && options.isolation != Isolation::InProcess {
        // Auto found no nvJitLink and fell back to the driver, which
        // cannot be forked.
        linker = Linker::new(options.isolation(Isolation::InProcess)).map_err(link_failure)?;
    }
    // PTX it writes gets the release's floor unless told otherwise, as
    // cuda-build's does: a driver JIT-compiles no newer ISA than its own.
    let writes_ptx = args.ptx
        || linker
            .options()
            .targets
            .iter()
            .any(|t| matches!(t, LinkTarget::Ptx(_)));
    if writes_ptx
        && args.ptx_isa.is_none()
        && let Some(isa) = linker.release_ptx_isa()
    {
        let floored = linker.options().clone().ptx_isa(isa);
        linker = Linker::new(floored).map_err(link_failure)?;
    }
    if let Some(cache) = args.cache.open()? {
        linker = linker.with_cache(cache);
    }
    let step = format!(
        "linking {} input{} with {}",
        first.len(),
        if first.len() == 1 { "" } else { "s" },
        linker.backend_name()
    );
    let linked = if multi_arch && inputs.has_sources() {
        // Each arch gets the sources compiled for it (`__CUDA_ARCH__`).
        let per_target = inputs.per_target(&linker.options().targets.clone())?;
        crate::progress::while_running(&step, || linker.link_fatbin_each(per_target))
    } else {
        linker.add_many(&first).map_err(link_failure)?;
        crate::progress::while_running(&step, || match multi_arch {
            false => linker.link(output),
            true => linker.link_fatbin(),
        })
    }
    .map_err(link_failure)?;
    // What nvcc users ask for by these flags is in the info log: ptxas's
    // register counts (`-Xptxas -v`) and the timings (`--time`).
    let ptxas_verbose = args.xptxas.iter().any(|o| o == "-v" || o == "--verbose");
    let wants_info = args.verbose || args.time || ptxas_verbose;
    if wants_info && !linker.info_log().trim().is_empty() {
        say::err(linker.info_log().trim_end());
    }
    crate::output::write(&args.output, linked.as_bytes())?;
    warn_of_kernels_not_linked(&args.kernels_used, &linked);
    if let Some(cache) = linker.cache() {
        crate::cache::report(cache, args.verbose);
    }
    if args.verbose {
        say::err(format!(
            "cuda-link: wrote {} ({} bytes, {})",
            args.output.display(),
            linked.as_bytes().len(),
            linker.backend_name()
        ));
    }
    Ok(())
}

/// The inputs as read: object code, and CUDA C++ (`.cu`) to compile with
/// NVRTC to LTO-IR for each arch the link needs, in their order.
struct Inputs {
    read: Vec<Input>,
    /// How the sources are compiled, but for the arch.
    options: cuda_compile::ProgramOptions,
    compiler: Option<cuda_compile::Compiler>,
    /// The inputs of each arch asked for so far: a source is compiled
    /// once per arch, however many slots or checks need it.
    per_arch: Vec<(Arch, Vec<ObjectCode>)>,
    /// NVRTC's warnings shown so far: each once, not once per arch.
    warned: Vec<String>,
}

enum Input {
    Code(ObjectCode),
    Source(cuda_compile::Program),
}

impl Inputs {
    fn read(args: &LinkArgs) -> Result<Self, Failure> {
        let read = args
            .inputs
            .iter()
            .map(|path| {
                if path.extension().is_some_and(|e| e == "cu") {
                    cuda_compile::Program::from_path(path)
                        .map(Input::Source)
                        .map_err(crate::compile::compile_failure)
                } else {
                    ObjectCode::from_path(path)
                        .map(Input::Code)
                        .map_err(|e| Failure::Reported(report(&e)))
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut read = read;
        for name in &args.libraries {
            let path = library(name, &args.library_paths)?;
            let code = ObjectCode::from_path(&path).map_err(|e| Failure::Reported(report(&e)))?;
            read.push(Input::Code(code));
        }
        let mut options = args
            .compile
            .apply(cuda_compile::ProgramOptions::default())
            .relocatable_device_code(true);
        options.debug = args.debug;
        options.lineinfo = args.lineinfo;
        Ok(Inputs {
            read,
            options,
            compiler: None,
            per_arch: Vec::new(),
            warned: Vec::new(),
        })
    }

    fn has_sources(&self) -> bool {
        self.read
            .iter()
            .any(|input| matches!(input, Input::Source(_)))
    }

    /// The inputs, the sources compiled for `arch` (to LTO-IR).
    fn for_arch(&mut self, arch: Option<Arch>) -> Result<Vec<ObjectCode>, Failure> {
        let source = self.read.iter().find_map(|input| match input {
            Input::Source(program) => Some(program.name()),
            Input::Code(_) => None,
        });
        let arch = match (source, arch) {
            (None, _) => {
                let codes = self.read.iter().filter_map(|input| match input {
                    Input::Code(code) => Some(code.clone()),
                    Input::Source(_) => None,
                });
                return Ok(codes.collect());
            }
            (Some(name), None) => {
                return Err(Failure::Usage(format!("{name}: compiling needs -arch")));
            }
            (Some(_), Some(arch)) => arch,
        };
        if let Some((_, inputs)) = self.per_arch.iter().find(|(done, _)| *done == arch) {
            return Ok(inputs.clone());
        }
        if self.compiler.is_none() {
            self.compiler = Some(crate::compile::compiler(None)?);
        }
        let compiler = self.compiler.as_ref().expect("set above");
        let slot = crate::compile::Slot {
            target: cuda_compile::Target::Ltoir,
            arch,
        };
        let mut warnings = Vec::new();
        let mut inputs = Vec::with_capacity(self.read.len());
        for input in &self.read {
            inputs.push(match input {
                Input::Code(code) => code.clone(),
                Input::Source(program) => crate::compile::compile_file(
                    compiler,
                    program,
                    slot,
                    &self.options,
                    &mut warnings,
                )?,
            });
        }
        for warning in warnings {
            if !self.warned.contains(&warning) {
                say::err(format!("warning: {warning}"));
                self.warned.push(warning);
            }
        }
        self.per_arch.push((arch, inputs.clone()));
        Ok(inputs)
    }

    /// Every target's inputs.
    fn per_target(
        &mut self,
        targets: &[LinkTarget],
    ) -> Result<Vec<(LinkTarget, Vec<ObjectCode>)>, Failure> {
        targets
            .iter()
            .map(|&target| Ok((target, self.for_arch(Some(target.arch()))?)))
            .collect()
    }
}

/// `libNAME.a` of `-l NAME`: in each `-L` folder in order, then CUDA's
/// own library folders (`CUDA_HOME`'s or `CUDA_PATH`'s `lib64` and `lib`,
/// the pip wheels' `nvidia/cu13/lib` and `nvidia/cuda_runtime/lib`), as
/// nvcc looks in its own after the `-L` ones.
fn library(name: &str, folders: &[PathBuf]) -> Result<PathBuf, Failure> {
    let file = format!("lib{name}.a");
    let env = cuda_dylib::SearchEnv::from_process();
    let own = cuda_dylib::existing_dirs(
        &[
            "lib64",
            "lib",
            "targets/x86_64-linux/lib",
            "targets/sbsa-linux/lib",
        ],
        &["nvidia/cu13/lib", "nvidia/cuda_runtime/lib"],
        &env,
    );
    let searched: Vec<PathBuf> = folders.iter().cloned().chain(own).collect();
    searched
        .iter()
        .map(|dir| dir.join(&file))
        .find(|path| path.is_file())
        .ok_or_else(|| {
            Failure::Usage(format!(
                "-l{name}: no {file} in {}; name its folder with -L",
                match searched.is_empty() {
                    true => "any folder (no -L, and no CUDA_HOME or CUDA wheels found)".to_owned(),
                    false => searched
                        .iter()
                        .map(|d| d.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", "),
                }
            ))
        })
}

/// The options the flags ask for.
fn options(args: &LinkArgs) -> Result<LinkerOptions, Failure> {
    let backend = match args.backend {
        crate::BackendArg::Auto => Backend::Auto,
        crate::BackendArg::Nvjitlink => Backend::NvJitLink,
        crate::BackendArg::Driver => Backend::Driver,
    };
    let seconds = args.timeout;
    let timeout = match Duration::try_from_secs_f64(seconds) {
        Ok(limit) if limit.is_zero() => None,
        Ok(limit) => Some(limit),
        Err(_) => {
            return Err(Failure::Usage(format!(
                "--timeout {seconds}: not a number of seconds"
            )));
        }
    };
    let memory_limit = match args.memory_limit {
        None => Some(Isolation::default_memory_limit()),
        Some(gib) if gib.is_finite() && gib >= 0.0 => {
            Some((gib * (1u64 << 30) as f64) as u64).filter(|&bytes| bytes > 0)
        }
        Some(gib) => {
            return Err(Failure::Usage(format!(
                "--memory-limit {gib}: not a number of GiB"
            )));
        }
    };
    let mut options = LinkerOptions::default()
        .name(args.output.display().to_string())
        .time(args.time)
        .verbose(args.verbose)
        .ptx(args.ptx)
        .debug(args.debug)
        .lineinfo(args.lineinfo)
        .kernels_used(args.kernels_used.clone())
        .variables_used(args.variables_used.clone())
        .optimize_unused_variables(args.optimize_unused_variables)
        .ptxas_options(args.xptxas.clone())
        .no_cache(args.no_nvjitlink_cache)
        .extra_flags(args.flags.clone())
        .backend(backend)
        // nvJitLink runs in a worker unless asked otherwise; the driver cannot.
        .isolation(if args.in_process || backend == Backend::Driver {
            Isolation::InProcess
        } else {
            Isolation::Process {
                timeout,
                memory_limit,
            }
        });
    options.ptx_isa = match args.ptx_isa {
        Some(crate::PtxIsaArg::Isa(isa)) => Some(isa),
        _ => None,
    };
    options.fatbin_compression = args.compress.map(|compress| compress.compression());
    // One arch links one output; several, or -gencode, link a fatbin.
    let mut targets = Vec::new();
    for gencode in &args.gencode {
        targets
            .extend(LinkTarget::parse_gencode(gencode).map_err(|e| Failure::Usage(e.to_string()))?);
    }
    // `compute_XX` alone is PTX for that arch, as nvcc's `-arch=compute_XX`
    // embeds: a fatbin's PTX slot, unless --ptx or --ltoir asks for one
    // output of that kind.
    let virtual_only =
        |arch: &str| matches!(arch.parse(), Ok(LinkTarget::Ptx(_))) && !(args.ptx || args.ltoir);
    match args.arch.as_slice() {
        [one] if targets.is_empty() && !virtual_only(one) => {
            options.arch = Some(crate::parse_arch(one).map_err(Failure::Usage)?);
        }
        arches => {
            for arch in arches {
                targets.push(
                    arch.parse()
                        .map_err(|_| Failure::Usage(format!("--arch {arch}")))?,
                );
            }
        }
    }
    if !targets.is_empty() && (args.ptx || args.ltoir) {
        return Err(Failure::Usage(
            "--ptx and --ltoir make one output; a multi-arch link makes a fatbin".into(),
        ));
    }
    // A fatbin under a single-output name would be read as the wrong kind.
    let extension = args.output.extension().and_then(|e| e.to_str());
    if let (false, Some(kind @ ("cubin" | "ptx" | "ltoir"))) = (targets.is_empty(), extension) {
        return Err(Failure::Usage(format!(
            "-o {}: a multi-arch or compute_XX link writes a fatbin, not a .{kind}; name \
             the output .fatbin, or give one sm_XX -arch (--ptx for PTX alone)",
            args.output.display()
        )));
    }
    options.targets = targets;
    // The options that stay unset unless given.
    options.max_register_count = args.max_register_count;
    options.link_time_optimization = args.lto.then_some(true);
    options.optimization_level = args.optimization_level;
    options.ftz = args.ftz;
    options.prec_div = args.prec_div;
    options.prec_sqrt = args.prec_sqrt;
    options.fma = args.fma;
    options.split_compile = args.split_compile;
    options.split_compile_extended = args.split_compile_extended;
    Ok(options)
}

/// `--kernels-used` names no kernel of the output: likely a misspelt or
/// unmangled name, and every kernel was removed but the ones it names.
fn warn_of_kernels_not_linked(names: &[String], linked: &ObjectCode) {
    // A cubin or PTX lists its kernels; LTO-IR and fatbins are not read.
    if names.is_empty() || !matches!(linked.kind(), ObjectKind::Cubin | ObjectKind::Ptx) {
        return;
    }
    let Ok(inspection) = linked.inspect() else {
        return;
    };
    let kernels = inspection.kernels();
    for name in names {
        if !kernels.contains(&name.as_str()) {
            say::err(format!(
                "warning: --kernels-used {name} names no kernel of the output (kernels are \
                 named as linked: mangled, as `cuda-link inspect` lists them)"
            ));
        }
    }
}

/// A link error in the words of a command-line user.
fn link_failure(error: LinkError) -> Failure {
    match &error {
        LinkError::MissingArch => Failure::Usage(
            "no target architecture: pass -arch sm_XX (e.g. -arch sm_90), \
             or use --backend driver on a machine with a GPU"
                .into(),
        ),
        LinkError::NvJitLinkUnavailable(_)
        | LinkError::DriverUnavailable(_)
        | LinkError::NoBackend { .. } => Failure::NoBackend(report(&error)),
        LinkError::NvvmUnavailable { .. } => Failure::NoBackend(report(&error)),
        _ => Failure::Reported(report(&error)),
    }
}

/// What inspection already knows against what the flags ask: PTX for a
/// newer GPU than `-arch`, and `--ptx` over inputs that are not LTO-IR.
fn check_inputs(
    args: &LinkArgs,
    options: &LinkerOptions,
    inputs: &[ObjectCode],
    has_sources: bool,
) -> Result<(), Failure> {
    // `.cu` inputs are compiled for each slot, as `compile` does.
    if has_sources {
        for gencode in &args.gencode {
            crate::compile::gencode_as_compiled(gencode)?;
        }
    }
    // Compile flags with nothing to compile would change nothing.
    let compile_only = args.compile.for_cuda_cxx_only();
    if !has_sources && !compile_only.is_empty() {
        return Err(Failure::Usage(format!(
            "{} compile CUDA C++ (`.cu` inputs), and this link has none: drop {}",
            compile_only.join(", "),
            if compile_only.len() == 1 {
                "it"
            } else {
                "them"
            }
        )));
    }
    // nvJitLink refuses other levels only once it is loaded.
    if let Some(level) = args.optimization_level
        && !matches!(level, 0 | 3)
        && options.backend != cuda_link::Backend::Driver
    {
        return Err(Failure::Usage(format!(
            "-O{level}: nvJitLink takes -O0 or -O3 (the driver backend, --backend driver, \
             takes -O0 to -O4)"
        )));
    }
    // `.cu` inputs are compiled to what each target needs.
    let ptx_target = options
        .targets
        .iter()
        .find(|t| matches!(t, LinkTarget::Ptx(_)))
        .filter(|_| !has_sources);
    let arches: Vec<Arch> = match options.arch {
        Some(arch) => vec![arch],
        None => options.targets.iter().map(|t| t.arch()).collect(),
    };
    for input in inputs {
        let info = input.inspect().map_err(|e| Failure::Reported(report(&e)))?;
        // PTX and LTO-IR for a later GPU than the link's: nvJitLink's own
        // words for it are "bad input" and "NVVM_ERROR not found".
        let (what, made_for): (&str, Vec<Arch>) = match &info.contents {
            Contents::Ptx(ptx) => (
                "PTX",
                ptx.target.iter().filter_map(|t| t.parse().ok()).collect(),
            ),
            Contents::Ltoir(header) => ("LTO-IR", vec![header.arch]),
            _ => ("", Vec::new()),
        };
        for &arch in &arches {
            if let Some(target) = made_for.iter().find(|t| !t.ir_compatible_with(&arch)) {
                // Arch-specific code (`sm_90a`) runs on that arch alone.
                let or_newer = match target.variant {
                    cuda_link::ArchVariant::Specific => "",
                    _ => " or newer",
                };
                return Err(Failure::Usage(format!(
                    "{}: {what} for {target} cannot be linked for -arch {arch}: \
                     pass -arch {target}{or_newer}, or regenerate the {what}",
                    input.name()
                )));
            }
        }
        // NVVM IR is compiled to LTO-IR for the link.
        let has_ltoir = matches!(input.kind(), ObjectKind::Ltoir | ObjectKind::NvvmIr)
            || info.fatbin_entries().any(|e| e.kind == EntryKind::Ltoir);
        if args.ptx && !has_ltoir {
            return Err(Failure::Usage(format!(
                "--ptx links LTO-IR into PTX, and {} holds no LTO-IR",
                input.name()
            )));
        }
        if let (Some(target), false) = (ptx_target, has_ltoir) {
            return Err(Failure::Usage(format!(
                "-arch {target} makes PTX, which nvJitLink links from LTO-IR only, and {} \
                 holds none: pass -arch {} for a cubin",
                input.name(),
                target.arch()
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    /// The options a command line sets.
    fn options_of(command_line: &str) -> cuda_link::LinkerOptions {
        let words = command_line.split_whitespace().filter(|w| *w != "\\");
        let cli = crate::Cli::try_parse_from(crate::normalise_args(words.map(str::to_owned)));
        let crate::Command::Link(args) = cli.unwrap().command else {
            panic!("not a link command");
        };
        super::options(&args).unwrap_or_else(|_| panic!("options refused: {command_line}"))
    }

    /// A link is isolated with a deadline and a memory limit unless told
    /// otherwise: a 4 MB fatbin of 1 GiB of PTX once ran past 400 s with
    /// no end. `0` turns a limit off; `--in-process` turns isolation off.
    #[test]
    fn links_are_limited_by_default() {
        use cuda_link::Isolation;
        let default = options_of("cuda-link link -arch sm_90 -o out.cubin in.ptx");
        assert_eq!(default.isolation, Isolation::process());
        let unlimited = options_of(
            "cuda-link link -arch sm_90 --timeout 0 --memory-limit 0 -o out.cubin in.ptx",
        );
        assert_eq!(
            unlimited.isolation,
            Isolation::Process {
                timeout: None,
                memory_limit: None
            }
        );
        let set = options_of(
            "cuda-link link -arch sm_90 --timeout 2.5 --memory-limit 0.5 -o out.cubin in.ptx",
        );
        assert_eq!(
            set.isolation,
            Isolation::Process {
                timeout: Some(std::time::Duration::from_millis(2500)),
                memory_limit: Some(512 << 20)
            }
        );
        let trusted = options_of("cuda-link link -arch sm_90 --in-process -o out.cubin in.ptx");
        assert_eq!(trusted.isolation, Isolation::InProcess);
    }

    /// Every `LinkerOptions` field has a flag: two command lines (one
    /// output, or a multi-arch fatbin, which `--ptx` cannot be) set every
    /// option between them.
    #[test]
    fn every_linker_option_has_a_flag() {
        let single = options_of(
            "cuda-link link --arch sm_90 -o out.cubin in.ptx --lto --ptx \
            --backend nvjitlink --max-register-count 32 -O 3 -g --lineinfo --time \
            --verbose --ftz true --prec-div false --prec-sqrt true --fma false \
            --kernels-used k --variables-used v --optimize-unused-variables \
            --xptxas=-v --split-compile 0 --split-compile-extended 2 \
            --no-nvjitlink-cache --flag -jump-table-density=50 --timeout 10",
        );
        let multi = options_of(
            "cuda-link link -arch sm_80,sm_90 -gencode arch=compute_90,code=[sm_100,compute_90] \
            --ptx-isa 9.0 --compress lz4 -o out.fatbin in.ltoir",
        );
        let targets: Vec<String> = multi.targets.iter().map(ToString::to_string).collect();
        assert_eq!(targets, ["sm_100", "compute_90", "sm_80", "sm_90"]);
        let mut set = single.names_set();
        set.extend(multi.names_set());
        set.sort();
        set.dedup();
        let mut all = cuda_link::LinkerOptions::NAMES.to_vec();
        all.sort();
        assert_eq!(set, all);
    }
}
