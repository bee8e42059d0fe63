//! [`NvvmProgram`] and [`NvvmCompiler`]: NVVM IR (what numba-cuda,
//! cuda.core's `Program(code_type="nvvm")` and Rust GPU compilers emit)
//! to PTX, LTO-IR or a cubin with libNVVM, through the same caches as C++
//! programs.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use cuda_link::nvvm::{self, LibdeviceNeed, Nvvm, NvvmRequest};
use cuda_link::{
    Arch, Bytes, CacheKey, Isolation, LinkCache, Linker, LinkerOptions, MemoryCache, ObjectCode,
    ObjectKind, OutputKind,
};

use crate::dependencies::Dependencies;
use crate::error::CompileError;
use crate::nvrtc::Target;
use crate::program::{Compiled, Warning};

/// The cache entries' format (see `compiler.rs`'s).
const CACHE_DOMAIN: &str = "cuda-compile nvvm v1";

/// When libdevice, the `__nv_*` math functions' bitcode, is linked.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Libdevice {
    /// When a text module declares an `__nv_*` function, or a module is
    /// bitcode (which cannot be read here; then only if there is one):
    /// the one beside libNVVM.
    #[default]
    Auto,
    /// Always, the one beside libNVVM.
    Always,
    /// Never: an `__nv_*` call is then an error, unless named resolved
    /// later.
    Never,
    /// This file.
    Path(PathBuf),
}

/// NVVM IR modules that libNVVM compiles as one program, in the order
/// they are added (it matters: a `linkonce` definition is kept only when a
/// module added before it calls it).
///
/// ```no_run
/// use cuda_compile::{NvvmCompiler, NvvmOptions, NvvmProgram, Target};
/// use cuda_link::Arch;
///
/// let program = NvvmProgram::from_path("kernel.ll")?;
/// let compiled = NvvmCompiler::new()?
///     .compile(&program, Target::Ptx, &NvvmOptions::for_arch(Arch::sm(90)))?;
/// println!("{}", compiled.code.inspect()?);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct NvvmProgram {
    name: String,
    modules: Vec<ObjectCode>,
    /// The files the modules were read from.
    files: Vec<PathBuf>,
    libdevice: Libdevice,
    resolved_later: Vec<String>,
    /// Whether the modules call libdevice, read as each is added.
    libdevice_need: LibdeviceNeed,
    /// Whether any function may be left for a later link to resolve.
    relocatable: bool,
    /// The hash of the modules and the names resolved later, made at the
    /// first compile: a repeated compile of this program hashes none of
    /// its bytes again.
    digest: OnceLock<CacheKey>,
}

impl NvvmProgram {
    /// An empty program; `name` names it in messages.
    pub fn new(name: impl Into<String>) -> Self {
        NvvmProgram {
            name: name.into(),
            ..Self::default()
        }
    }

    /// A program of one `.ll` or `.bc` file.
    pub fn from_path(path: impl AsRef<Path>) -> Result<Self, CompileError> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|e| CompileError::Io {
            path: path.display().to_string(),
            detail: e.to_string(),
        })?;
        let name = path.display().to_string();
        let mut program = NvvmProgram::new(&name).module(bytes, name)?;
        program.files.push(path.to_owned());
        Ok(program)
    }

    /// Adds a module, text or bitcode, named `name` in libNVVM's log.
    pub fn module(
        mut self,
        ir: impl Into<Bytes>,
        name: impl Into<String>,
    ) -> Result<Self, CompileError> {
        let name = name.into();
        let code =
            ObjectCode::from_nvvm_ir(ir, &name).map_err(|error| CompileError::NotNvvmIr {
                program: self.name.clone(),
                error,
            })?;
        self.libdevice_need = self.libdevice_need.max(LibdeviceNeed::of(&code));
        self.modules.push(code);
        self.digest = OnceLock::new();
        Ok(self)
    }

    /// When libdevice is linked (by default, when the IR calls it).
    pub fn libdevice(mut self, libdevice: Libdevice) -> Self {
        self.libdevice = libdevice;
        self
    }

    /// Functions another input of a later link defines: left unresolved
    /// without an error (numba links some later, `cudaGetParameterBuffer`
    /// of `libcudadevrt.a` for one).
    pub fn resolved_later<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.resolved_later
            .extend(names.into_iter().map(Into::into));
        self.digest = OnceLock::new();
        self
    }

    /// The modules' names and bytes and the names resolved later, hashed
    /// once.
    fn digest(&self) -> &CacheKey {
        self.digest.get_or_init(|| {
            let mut key = CacheKey::builder("cuda-compile nvvm modules");
            key.field(&[u8::from(self.relocatable)])
                .count(self.resolved_later.len());
            for name in &self.resolved_later {
                key.field(name.as_bytes());
            }
            key.count(self.modules.len());
            for module in &self.modules {
                key.field(module.name().as_bytes()).field(module.as_bytes());
            }
            key.finish()
        })
    }

    /// Relocatable code, as `-rdc=true` makes of C++: any function it
    /// calls and does not define is left for a later link (nvJitLink
    /// names the ones no input defines), not refused here. Definitions
    /// dropped for module order are still refused. Its outputs are PTX
    /// and LTO-IR: a cubin, which nvJitLink makes executable, is
    /// [`CompileError::InvalidOption`].
    pub fn relocatable(mut self, on: bool) -> Self {
        self.relocatable = on;
        self.digest = OnceLock::new();
        self
    }

    /// The program's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The modules, in order.
    pub fn modules(&self) -> &[ObjectCode] {
        &self.modules
    }
}

/// libNVVM's options, typed as [`ProgramOptions`](crate::ProgramOptions)
/// are for NVRTC. `None` leaves libNVVM's default.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct NvvmOptions {
    /// The target; without it, the current context's device.
    pub arch: Option<Arch>,
    /// `-opt=N`, 0 to 3 (libNVVM's default 3).
    pub opt_level: Option<u8>,
    /// `-ftz=1|0`: flush single-precision denormals to zero.
    pub ftz: Option<bool>,
    /// `-prec-div=1|0`: IEEE single-precision division.
    pub prec_div: Option<bool>,
    /// `-prec-sqrt=1|0`: IEEE single-precision square root.
    pub prec_sqrt: Option<bool>,
    /// `-fma=1|0`: contract multiplies and adds.
    pub fma: Option<bool>,
    /// `-g`: debug information.
    pub debug: bool,
    /// `-generate-line-info`.
    pub line_info: bool,
    /// The registers a thread may use, when the PTX is assembled to a
    /// cubin (`-maxrregcount`, numba's `max_registers`). libNVVM takes no
    /// such limit, so PTX and LTO-IR get it at their link instead.
    pub max_register_count: Option<u32>,
    /// Where libNVVM runs: by default in a worker process, which a crash
    /// on the IR takes down instead of the caller.
    pub isolation: Isolation,
}

impl Default for NvvmOptions {
    fn default() -> Self {
        NvvmOptions {
            arch: None,
            opt_level: None,
            ftz: None,
            prec_div: None,
            prec_sqrt: None,
            fma: None,
            debug: false,
            line_info: false,
            max_register_count: None,
            isolation: Isolation::process(),
        }
    }
}

impl NvvmOptions {
    /// Options for one arch, everything else default.
    pub fn for_arch(arch: Arch) -> Self {
        NvvmOptions {
            arch: Some(arch),
            ..Self::default()
        }
    }

    /// `-opt=N`.
    pub fn opt_level(mut self, level: u8) -> Self {
        self.opt_level = Some(level);
        self
    }

    /// numba's `fastmath`: `-ftz=1 -prec-div=0 -prec-sqrt=0 -fma=1`.
    pub fn fast_math(mut self) -> Self {
        (self.ftz, self.prec_div, self.prec_sqrt, self.fma) =
            (Some(true), Some(false), Some(false), Some(true));
        self
    }

    /// `-g`.
    pub fn debug(mut self, on: bool) -> Self {
        self.debug = on;
        self
    }

    /// `-generate-line-info`.
    pub fn line_info(mut self, on: bool) -> Self {
        self.line_info = on;
        self
    }

    /// The registers a thread may use in a cubin (`-maxrregcount`).
    pub fn max_register_count(mut self, registers: u32) -> Self {
        self.max_register_count = Some(registers);
        self
    }

    /// Where libNVVM runs.
    pub fn isolation(mut self, isolation: Isolation) -> Self {
        self.isolation = isolation;
        self
    }

    /// libNVVM's arguments for `arch`, LTO-IR with `-gen-lto`.
    fn args(&self, arch: Arch, ltoir: bool) -> Result<Vec<String>, CompileError> {
        let mut args = vec![format!("-arch={}", arch.compute())];
        if let Some(level) = self.opt_level {
            if level > 3 {
                return Err(CompileError::InvalidOption {
                    option: "opt_level",
                    detail: format!("{level}: libNVVM takes 0 to 3"),
                });
            }
            args.push(format!("-opt={level}"));
        }
        for (name, value) in [
            ("ftz", self.ftz),
            ("prec-div", self.prec_div),
            ("prec-sqrt", self.prec_sqrt),
            ("fma", self.fma),
        ] {
            if let Some(on) = value {
                args.push(format!("-{name}={}", u8::from(on)));
            }
        }
        if self.debug {
            args.push("-g".to_owned());
        }
        if self.line_info {
            args.push("-generate-line-info".to_owned());
        }
        if ltoir {
            args.push("-gen-lto".to_owned());
        }
        Ok(args)
    }
}

/// Compiles [`NvvmProgram`]s with one libNVVM, optionally through a cache
/// (the one [`Compiler`](crate::Compiler) uses: in memory, local and
/// shared), keyed by the modules' names and bytes, the options, the
/// target, libdevice's bytes and libNVVM's identity.
///
/// The program is verified before it is compiled (libNVVM crashes on some
/// IR its verifier refuses), and what libNVVM silently gets wrong is an
/// error: a `linkonce` definition dropped for the order its module was
/// added in, and a function left unresolved (`__nv_*` without libdevice,
/// or one the program did not name as [resolved later]).
///
/// [resolved later]: NvvmProgram::resolved_later
pub struct NvvmCompiler {
    nvvm: Arc<Nvvm>,
    cache: Option<Arc<LinkCache>>,
    /// libNVVM's version and file, for keys.
    identity: OnceLock<String>,
    /// nvJitLink's, for the keys of cubins.
    nvjitlink_identity: OnceLock<Option<String>>,
}

impl std::fmt::Debug for NvvmCompiler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NvvmCompiler")
            .field("nvvm", &self.nvvm.path())
            .field("cache", &self.cache.as_ref().map(|c| c.dir().to_owned()))
            .finish()
    }
}

impl NvvmCompiler {
    /// A compiler with the libNVVM [`Nvvm::global`] finds
    /// (`CUDA_LINK_NVVM_PATH`, a toolkit's `nvvm/lib64`, the pip wheels).
    pub fn new() -> Result<Self, CompileError> {
        Ok(Self::with_nvvm(Arc::clone(Nvvm::global()?)))
    }

    /// A compiler with this libNVVM.
    pub fn with_nvvm(nvvm: Arc<Nvvm>) -> Self {
        NvvmCompiler {
            nvvm,
            cache: None,
            identity: OnceLock::new(),
            nvjitlink_identity: OnceLock::new(),
        }
    }

    /// Serves repeated compiles from `cache` (and the in-memory tier).
    pub fn with_cache(mut self, cache: Arc<LinkCache>) -> Self {
        self.cache = Some(cache);
        self.identity = OnceLock::new();
        self.nvjitlink_identity = OnceLock::new();
        self
    }

    /// The libNVVM in use.
    pub fn nvvm(&self) -> &Arc<Nvvm> {
        &self.nvvm
    }

    /// Compiles `program` to `target`: PTX or LTO-IR from libNVVM, a cubin
    /// from its PTX through nvJitLink.
    pub fn compile(
        &self,
        program: &NvvmProgram,
        target: Target,
        options: &NvvmOptions,
    ) -> Result<Compiled, CompileError> {
        if program.modules.is_empty() {
            return Err(CompileError::InvalidOption {
                option: "modules",
                detail: format!("{}: an NVVM program needs a module", program.name),
            });
        }
        // nvJitLink, which assembles the cubin, makes executables only.
        if program.relocatable && target == Target::Cubin {
            return Err(CompileError::InvalidOption {
                option: "relocatable",
                detail: format!(
                    "{}: a relocatable NVVM program is compiled to PTX or LTO-IR for a later \
                     link; a cubin of it would need that link",
                    program.name
                ),
            });
        }
        if let Some(registers) = options.max_register_count
            && target != Target::Cubin
        {
            return Err(CompileError::InvalidOption {
                option: "max_register_count",
                detail: format!(
                    "{}: a limit of {registers} registers is applied when PTX is assembled \
                     into a cubin, and {} carries none: give it to the link or the load \
                     (LinkerOptions::max_register_count), or compile to a cubin",
                    program.name,
                    target.name()
                ),
            });
        }
        let arch = options
            .arch
            .or_else(cuda_link::current_device_arch)
            .ok_or(CompileError::MissingArch)?;
        let args = options.args(arch, target == Target::Ltoir)?;
        let libdevice = self.libdevice(program)?;
        let key = self.cache_key(
            program,
            target,
            &args,
            libdevice.as_ref(),
            options.max_register_count,
        );
        let memory = MemoryCache::fronts(self.cache.as_deref());
        if let Some(key) = &key
            && let Some(hit) = MemoryCache::load_decoded(self.cache.as_deref(), memory, key, |e| {
                made_of(program, target, e)
            })
        {
            return Ok(compiled(program, hit, true));
        }
        let request = NvvmRequest {
            modules: &program.modules,
            libdevice: libdevice.as_ref().map(|(bytes, _)| &bytes[..]),
            options: &args,
            resolved_later: &program.resolved_later,
            check_unresolved: !program.relocatable,
            isolation: options.isolation,
        };
        let output = nvvm::compile(&self.nvvm, &request).map_err(|failure| CompileError::Nvvm {
            program: program.name.clone(),
            failure: Box::new(failure),
        })?;
        let code = match target {
            Target::Cubin => cubin(program, arch, output.code, options)?,
            Target::Ptx | Target::Ltoir => output_code(program, target, output.code)?,
        };
        let made = Made {
            code,
            log: output.log,
        };
        if let Some(key) = &key {
            let entry = cuda_link::CacheEntry::default()
                .with("output", made.code.as_bytes())
                .with("log", made.log.as_bytes());
            MemoryCache::store_decoded(self.cache.as_deref(), memory, key, entry, made.clone());
        }
        Ok(compiled(program, made, false))
    }

    /// libdevice's bytes and digest, when the program links it.
    fn libdevice(&self, program: &NvvmProgram) -> Result<Option<(Bytes, String)>, CompileError> {
        let path = match (&program.libdevice, program.libdevice_need) {
            (Libdevice::Never, _) | (Libdevice::Auto, LibdeviceNeed::NotNeeded) => {
                return Ok(None);
            }
            // Without one, the PTX check names any `__nv_*` left unresolved.
            (Libdevice::Auto, LibdeviceNeed::IfFound) => {
                match nvvm::libdevice_beside(self.nvvm.path()) {
                    Some(path) => path,
                    None => return Ok(None),
                }
            }
            (Libdevice::Path(path), _) => path.clone(),
            (Libdevice::Auto, LibdeviceNeed::Required) | (Libdevice::Always, _) => {
                nvvm::libdevice_beside(self.nvvm.path()).ok_or_else(|| {
                    CompileError::NoLibdevice {
                        program: program.name.clone(),
                        library: self.nvvm.path().display().to_string(),
                    }
                })?
            }
        };
        nvvm::read_libdevice(&path)
            .map(Some)
            .map_err(|e| CompileError::Io {
                path: path.display().to_string(),
                detail: e.to_string(),
            })
    }

    /// The nvJitLink a cubin is assembled with (the one `Linker::new`
    /// loads), for keys; `None` when it cannot be loaded or identified.
    fn nvjitlink_identity(&self) -> Option<&str> {
        self.nvjitlink_identity
            .get_or_init(|| {
                let lib = cuda_link::NvJitLink::global().ok()?;
                let symbol = lib.nvJitLinkVersion.map(|f| f as *const std::ffi::c_void);
                let file = cuda_link::library_identity(symbol, lib.path(), self.portable()).ok()?;
                Some(format!("nvJitLink {} | {file}", lib.version_string()))
            })
            .as_deref()
    }

    /// Whether keys are shared between machines (a remote store).
    fn portable(&self) -> bool {
        self.cache.as_ref().is_some_and(|c| c.portable_keys())
    }

    fn identity(&self) -> &str {
        self.identity.get_or_init(|| {
            let symbol = self.nvvm.nvvmVersion.map(|f| f as *const std::ffi::c_void);
            let file = cuda_link::library_identity(symbol, self.nvvm.path(), self.portable())
                .unwrap_or_else(|why| format!("\0unidentified ({why})"));
            format!("libNVVM {} | {file}", self.nvvm.version_string())
        })
    }

    /// The key of a compile, or `None` when nothing caches it.
    fn cache_key(
        &self,
        program: &NvvmProgram,
        target: Target,
        args: &[String],
        libdevice: Option<&(Bytes, String)>,
        max_register_count: Option<u32>,
    ) -> Option<CacheKey> {
        if self.cache.is_none() && !MemoryCache::fronts(None) {
            return None;
        }
        if self.identity().contains('\0') {
            return None;
        }
        let mut key = CacheKey::builder(CACHE_DOMAIN);
        key.field(self.identity().as_bytes())
            .field(cuda_link::nvvm::PREPARATION.as_bytes())
            .field(target.name().as_bytes())
            .field(libdevice.map_or("none", |(_, digest)| digest).as_bytes())
            .count(args.len());
        for arg in args {
            key.field(arg.as_bytes());
        }
        key.field(program.digest().as_bytes());
        if target == Target::Cubin {
            // nvJitLink assembles the PTX: its identity and limit decide
            // the cubin.
            key.field(self.nvjitlink_identity()?.as_bytes())
                .field(format!("maxrregcount {max_register_count:?}").as_bytes());
        }
        Some(key.finish())
    }
}

/// What a compile made; cheap to clone.
#[derive(Clone)]
struct Made {
    code: ObjectCode,
    log: String,
}

fn compiled(program: &NvvmProgram, made: Made, from_cache: bool) -> Compiled {
    let warnings = made
        .log
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| Warning::Nvvm(line.trim().to_owned()))
        .collect();
    Compiled {
        code: made.code,
        log: made.log,
        warnings,
        from_cache,
        dependencies: Dependencies {
            files: program.files.clone(),
            ..Dependencies::default()
        },
    }
}

/// A cache entry as a compile's result.
fn made_of(
    program: &NvvmProgram,
    target: Target,
    mut entry: cuda_link::CacheEntry,
) -> Result<Made, String> {
    let log = String::from_utf8(entry.get("log").ok_or("no log")?.to_vec())
        .map_err(|_| "a log that is not UTF-8")?;
    let output = entry.take("output").ok_or("no output")?;
    let code = output_code(program, target, output).map_err(|e| e.to_string())?;
    Ok(Made { code, log })
}

/// libNVVM's output as validated device code.
fn output_code(
    program: &NvvmProgram,
    target: Target,
    bytes: Vec<u8>,
) -> Result<ObjectCode, CompileError> {
    let name = format!("{} ({})", program.name, target.name());
    let kind = match target {
        Target::Ptx => ObjectKind::Ptx,
        Target::Ltoir => ObjectKind::Ltoir,
        Target::Cubin => ObjectKind::Cubin,
    };
    ObjectCode::with_kind(kind, bytes, name).map_err(|error| CompileError::Output {
        program: program.name.clone(),
        error,
    })
}

/// The PTX assembled to an `arch` cubin by nvJitLink.
/// With the program's `-g` and line info (ptxas keeps them only when
/// asked too).
fn cubin(
    program: &NvvmProgram,
    arch: Arch,
    ptx: Vec<u8>,
    options: &NvvmOptions,
) -> Result<ObjectCode, CompileError> {
    let ptx = output_code(program, Target::Ptx, ptx)?;
    let failed = |error: cuda_link::LinkError| CompileError::Link {
        program: program.name.clone(),
        error: Box::new(error),
    };
    let linker_options = LinkerOptions::for_arch(arch)
        .isolation(options.isolation)
        .debug(options.debug)
        .lineinfo(options.line_info);
    let linker_options = match options.max_register_count {
        Some(registers) => linker_options.max_register_count(registers),
        None => linker_options,
    };
    let mut linker = Linker::new(linker_options).map_err(failed)?;
    linker.add(&ptx).map_err(failed)?;
    let cubin = linker.link(OutputKind::Cubin).map_err(failed)?;
    Ok(cubin.renamed(format!("{} (cubin)", program.name)))
}
