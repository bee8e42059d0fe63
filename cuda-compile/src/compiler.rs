//! [`Compiler`]: one NVRTC, an optional cache, and the compile itself.

use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use cuda_link::{Arch, CacheKey, LinkCache, MemoryCache, ObjectCode, ObjectKind};
use nvrtc_sys::Nvrtc;

use crate::closure::Closure;
use crate::dependencies::Dependencies;
use crate::error::CompileError;
use crate::headers;
use crate::made::{Made, Wanted, output_code};
use crate::nvrtc::{RawProgram, Target, c_string};
use crate::options::ProgramOptions;
use crate::program::{Compiled, Program, Warning, log_warnings, newest_ptx_isa};
use crate::search::{SearchPath, under_base};

/// The cache entries' format: a new layout of key or entry gets a new
/// domain, so old entries are never read as new ones.
const CACHE_DOMAIN: &str = "cuda-compile v1";

/// Compiles [`Program`]s with one NVRTC, optionally through a cache.
///
/// The cache is the link cache's store ([`LinkCache`]: the same trust
/// checks, atomic publishing, size bound and eviction), keyed by the
/// source, every option in order, the target and arch, the name
/// expressions, every in-memory header, the NVRTC file's identity, and
/// the header closure our own scan finds: every place each `#include` may
/// resolve to (the includer's folder, the source's folder, the in-memory
/// headers, `include_path`, NVIDIA's folders), followed through NVIDIA's
/// headers too; the bytes of ours and the program's, NVIDIA's by path,
/// size and modification time; and each include that resolves nowhere.
/// The lowered names and the log are stored with the output. A program
/// is compiled every time when the scan cannot follow it (`#include
/// MACRO`, `__has_include(MACRO)`, `#embed`, a directive spelt with a digraph or
/// a comment, `__TIME__`), or when an option writes or reads files the
/// key cannot see (`time`, `create_pch`, `pch`, `pch_dir`); an output is
/// not stored when a header changed while NVRTC read it. What stays
/// NVIDIA's: an include through a macro inside NVIDIA's own headers.
///
/// Repeated compiles in one process cost microseconds: the outputs are in
/// the in-memory tier ([`cuda_link::MemoryCache`]), and on Linux the scan
/// is remembered while inotify reports no change to anything it looked at
/// (local filesystems; a fork's child scans anew).
///
/// ```no_run
/// use std::sync::Arc;
/// use cuda_compile::{Compiler, Program, ProgramOptions, Target};
/// use cuda_link::{Arch, LinkCache};
///
/// let compiler = Compiler::new()?.with_cache(Arc::new(LinkCache::open_default()));
/// let program = Program::from_path("kernels/add.cu")?;
/// let options = ProgramOptions::for_arch(Arch::sm(90)).include_path(["kernels/include"]);
/// let first = compiler.compile(&program, Target::Cubin, &options)?;
/// let again = compiler.compile(&program, Target::Cubin, &options)?;
/// assert!(again.from_cache);
/// # Ok::<(), cuda_compile::CompileError>(())
/// ```
pub struct Compiler {
    nvrtc: Arc<Nvrtc>,
    cache: Option<Arc<LinkCache>>,
    /// NVIDIA's header folders, found (and the bundled ones installed)
    /// on first use: with the bundled headers, and without.
    system_dirs: [OnceLock<Result<Vec<PathBuf>, String>>; 2],
    /// Whether those folders have NVIDIA's own `cuda_runtime.h`, looked
    /// up once (no `stat` on a repeated compile).
    nvidia_runtime: [OnceLock<bool>; 2],
    /// The NVRTC file's identity, for keys.
    identity: OnceLock<String>,
    /// A private temporary folder for the bundled headers, without a
    /// cache (or with one whose folder is not this user's alone).
    private_headers: OnceLock<Result<tempfile::TempDir, String>>,
    /// Where NVRTC keeps the precompiled headers it makes, when on.
    pch_dir: Option<PathBuf>,
    /// Paths under it are written relative to it in keys.
    base_dir: Option<PathBuf>,
}

impl std::fmt::Debug for Compiler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compiler")
            .field("nvrtc", &self.nvrtc)
            .field("cache", &self.cache.as_ref().map(|c| c.dir().to_path_buf()))
            .finish_non_exhaustive()
    }
}

impl Compiler {
    /// A compiler on the process-wide NVRTC ([`Nvrtc::global`]), without a
    /// cache.
    ///
    /// # Errors
    /// [`CompileError::Load`] when no NVRTC is found; the message names
    /// the pip packages and `CUDA_LINK_NVRTC_PATH`.
    pub fn new() -> Result<Self, CompileError> {
        Ok(Self::with_nvrtc(Arc::clone(Nvrtc::global()?)))
    }

    /// A compiler on this NVRTC, e.g. a specific major.
    pub fn with_nvrtc(nvrtc: Arc<Nvrtc>) -> Self {
        Compiler {
            nvrtc,
            cache: None,
            system_dirs: [OnceLock::new(), OnceLock::new()],
            nvidia_runtime: [OnceLock::new(), OnceLock::new()],
            identity: OnceLock::new(),
            private_headers: OnceLock::new(),
            pch_dir: None,
            base_dir: None,
        }
    }

    /// Lets NVRTC (12.8 and newer) precompile the headers a compile starts
    /// with and reuse them in this process's later compiles with the same
    /// options (`--pch`): a build script compiling many files that include
    /// the same CUDA headers (fp16, CUB) pays for them about once per arch.
    /// NVRTC writes its files in `dir`, which should be this user's alone
    /// (a build's `OUT_DIR`); without one it would use a shared `/tmp`
    /// folder. Each process gets a folder of its own in `dir`, named by its
    /// id ([`precompiled_headers_dir`](Self::precompiled_headers_dir)),
    /// since a PCH is of use only to the process that made it. The output
    /// is the same as without, so the compile cache keys and serves such
    /// compiles as any other. Older NVRTCs compile as before. A compile
    /// that sets its own PCH options keeps them.
    pub fn with_precompiled_headers(mut self, dir: impl Into<PathBuf>) -> Self {
        self.pch_dir = Some(dir.into());
        self
    }

    /// This process's folder of precompiled headers, when they are on:
    /// the folder given to [`with_precompiled_headers`](Self::with_precompiled_headers),
    /// then the process id. NVRTC 13.0 was seen to remove its files there
    /// at a normal exit; whoever forks a child that compiles removes the
    /// child's folder.
    pub fn precompiled_headers_dir(&self) -> Option<PathBuf> {
        let dir = self.pch_dir.as_ref()?;
        Some(dir.join(std::process::id().to_string()))
    }

    /// Writes paths under `dir` relative to it in cache keys (a crate's
    /// root, as sccache's base dirs): two checkouts at different paths
    /// share their entries. The output may still name the file as the
    /// first checkout compiled it (`-lineinfo`'s file names).
    pub fn with_base_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        let dir = dir.into();
        self.base_dir = Some(dir.canonicalize().unwrap_or(dir));
        self
    }

    /// Serves repeated compiles from `cache`; NVRTC 13.3+'s bundled
    /// headers are installed in its folder.
    pub fn with_cache(mut self, cache: Arc<LinkCache>) -> Self {
        self.cache = Some(cache);
        // NVRTC's identity depends on the cache (portable keys).
        self.identity = OnceLock::new();
        self
    }

    /// The NVRTC in use.
    pub fn nvrtc(&self) -> &Nvrtc {
        &self.nvrtc
    }

    /// The real archs the loaded NVRTC compiles for
    /// (`nvrtcGetSupportedArchs`), oldest first.
    pub fn supported_archs(&self) -> Result<Vec<Arch>, CompileError> {
        Ok(crate::nvrtc::supported_archs(&self.nvrtc)?
            .into_iter()
            .map(Arch::sm)
            .collect())
    }

    /// The files and folders of the program's own that a compile of it
    /// with `options` may read, for a build script's `rerun-if-changed`:
    /// [`Dependencies::to_watch`] of a scan of its includes, as a compile's
    /// [`Compiled::dependencies`] holds it.
    pub fn dependencies(
        &self,
        program: &Program,
        options: &ProgramOptions,
    ) -> Result<Vec<PathBuf>, CompileError> {
        let cache_dir = self.cache.as_deref().map(LinkCache::dir);
        Ok(self.scan(program, options)?.to_watch(cache_dir))
    }

    /// The scan of `program`'s includes under `options`, alone.
    fn scan(
        &self,
        program: &Program,
        options: &ProgramOptions,
    ) -> Result<Dependencies, CompileError> {
        let options = &*options.resolved_cow()?;
        let system = self.system_dirs(options)?;
        let memory = memory_headers(program, options, self.nvidia_runtime(options, &system));
        let search = search_path(program, options, &memory, system, self.portable());
        let closure = search.remembered_closure(&program.source, &options.pre_include);
        Ok(Dependencies::new(&program.name, &closure, search.folders()))
    }

    /// The program's own files a compile with `options` reads: the source
    /// file, then each header the scan reaches in the program's folders
    /// (the source's and the include path's), for a make or ninja depfile
    /// (nvcc's `-MMD`: NVIDIA's headers and in-memory ones are left out).
    ///
    /// # Errors
    /// [`CompileError::Io`] when the scan cannot follow an include (an
    /// `#include MACRO`): a depfile missing a header would leave builds
    /// stale.
    pub fn included_files(
        &self,
        program: &Program,
        options: &ProgramOptions,
    ) -> Result<Vec<PathBuf>, CompileError> {
        self.scan(program, options)?
            .to_depfile()
            .map_err(|why| CompileError::Io {
                path: program.name.clone(),
                detail: format!("its includes cannot be listed: {why}"),
            })
    }

    /// The cache in use, if any.
    pub fn cache(&self) -> Option<&Arc<LinkCache>> {
        self.cache.as_ref()
    }

    /// Compiles `program` to `target`.
    ///
    /// The arch is `options.arch`, else the current context's device's.
    /// PTX and LTO-IR are compiled for `compute_XX`, a cubin for `sm_XX`;
    /// LTO-IR adds `--dlink-time-opt`. Unless turned off, our small
    /// device-side libc headers are given in memory, and NVIDIA's headers
    /// (NVRTC 13.3+'s bundled ones, else the toolkit's or the wheels') are
    /// put on the include path.
    ///
    /// # Errors
    /// [`CompileError::Compilation`] with NVRTC's log when the source does
    /// not compile; [`CompileError::Unsupported`] for an option the loaded
    /// NVRTC is too old for, before NVRTC is called;
    /// [`CompileError::Missing`] for an output it lacks;
    /// [`CompileError::MissingArch`]; [`CompileError::NameExpression`] for
    /// an expression that names nothing; [`CompileError::Output`] when
    /// NVRTC's output does not validate.
    pub fn compile(
        &self,
        program: &Program,
        target: Target,
        options: &ProgramOptions,
    ) -> Result<Compiled, CompileError> {
        let (compiled, _) = self.compile_for(program, Wanted { target, ptx: false }, options)?;
        Ok(compiled)
    }

    /// Compiles `program` to a cubin for `options.arch` and keeps the PTX
    /// NVRTC compiled it from: the PTX a [`Target::Ptx`] compile for the
    /// arch's `compute_XX` gives, from one compile, as nvcc's
    /// `code=[sm_90,compute_90]` makes both. Cached as one entry.
    ///
    /// # Errors
    /// As [`compile`](Self::compile).
    pub fn compile_cubin_and_ptx(
        &self,
        program: &Program,
        options: &ProgramOptions,
    ) -> Result<(Compiled, ObjectCode), CompileError> {
        let wanted = Wanted {
            target: Target::Cubin,
            ptx: true,
        };
        let (compiled, ptx) = self.compile_for(program, wanted, options)?;
        // Always there: the compile and the cache entry both hold it.
        let ptx = ptx.ok_or_else(|| CompileError::Output {
            program: program.name.clone(),
            error: cuda_link::ObjectError {
                name: program.name.clone(),
                reason: cuda_link::Reason::Malformed {
                    what: "compile",
                    detail: "no PTX".to_owned(),
                },
            },
        })?;
        Ok((compiled, ptx))
    }

    /// One compile of what is `wanted`: from the tiers when keyed and
    /// there, else NVRTC's, stored.
    fn compile_for(
        &self,
        program: &Program,
        wanted: Wanted,
        options: &ProgramOptions,
    ) -> Result<(Compiled, Option<ObjectCode>), CompileError> {
        // Raw options read once, into the fields the scan and key read.
        let options = &*options.resolved_cow()?;
        let target = wanted.target;
        let version = self.nvrtc.version();
        let arch = options
            .arch
            .or_else(cuda_link::current_device_arch)
            .ok_or(CompileError::MissingArch)?;
        let mut args = vec![target_arch(target, arch)];
        if target == Target::Ltoir && !options.link_time_optimization {
            args.push("--dlink-time-opt".to_owned());
        }
        args.extend(options.nvrtc_args(version)?);
        let system = self.system_dirs(options)?;
        args.extend(
            system
                .iter()
                .map(|dir| format!("--include-path={}", dir.display())),
        );
        let memory = memory_headers(program, options, self.nvidia_runtime(options, &system));
        // One scan of the includes: the key and the dependencies read it.
        let mut search = search_path(program, options, &memory, system.clone(), self.portable());
        search.base = self.base_dir.clone();
        let closure = search.remembered_closure(&program.source, &options.pre_include);
        let dependencies = Dependencies::new(&program.name, &closure, search.folders());

        let key_args = self.key_args(&args, &system);
        let key = self.cache_key(program, wanted, &key_args, &memory, options, &closure);
        if let Some(key) = &key
            && let Some(hit) = self.cached(key, program, wanted)
        {
            let compiled = self.finish(hit.code, hit.log, true, &system, dependencies);
            return Ok((compiled, hit.ptx));
        }
        let mut nvrtc_args = args.clone();
        nvrtc_args.extend(self.pch_args(options)?);
        let made = self.compile_with_implicit_constants(program, wanted, &nvrtc_args, &memory)?;
        // A header edited while NVRTC read it: the output may be of
        // neither version, so it is not stored.
        if let Some(key) = &key
            && closure.unchanged()
        {
            let entry = made.entry();
            let memory = self.memory_tier();
            MemoryCache::store_decoded(self.cache.as_deref(), memory, key, entry, made.clone());
        }
        let compiled = self.finish(made.code, made.log, false, &system, dependencies);
        Ok((compiled, made.ptx))
    }

    /// A compile's output from the in-memory tier, else from the cache
    /// (kept in memory then).
    fn cached(&self, key: &CacheKey, program: &Program, wanted: Wanted) -> Option<Made> {
        let made =
            MemoryCache::load_decoded(self.cache.as_deref(), self.memory_tier(), key, |entry| {
                Made::from_entry(program, wanted, entry)
            })?;
        // Named as this program: a key with a base folder is shared by
        // checkouts at other paths.
        Some(made.named_for(program, wanted))
    }

    /// Whether the process's in-memory tier is asked and filled.
    fn memory_tier(&self) -> bool {
        MemoryCache::fronts(self.cache.as_deref())
    }

    /// The automatic-PCH options [`with_precompiled_headers`] adds, when
    /// this NVRTC has them and the compile sets no PCH option of its own.
    /// They are not part of the key: they change how fast NVRTC compiles,
    /// not what.
    ///
    /// [`with_precompiled_headers`]: Self::with_precompiled_headers
    fn pch_args(&self, options: &ProgramOptions) -> Result<Vec<String>, CompileError> {
        let Some(dir) = self.precompiled_headers_dir() else {
            return Ok(Vec::new());
        };
        let own = options.pch
            || options.create_pch.is_some()
            || options.use_pch.is_some()
            || options.pch_dir.is_some();
        if own || self.nvrtc.version() < (12, 8) {
            return Ok(Vec::new());
        }
        std::fs::create_dir_all(&dir).map_err(|e| CompileError::Io {
            path: dir.display().to_string(),
            detail: e.to_string(),
        })?;
        crate::nvrtc::reserve_pch_heap(&self.nvrtc);
        Ok(vec![
            "--pch".to_owned(),
            format!("--pch-dir={}", dir.display()),
            "--pch-messages=false".to_owned(),
        ])
    }

    /// Calls NVRTC; when the source uses a math constant nvcc's implicit
    /// `cuda_runtime.h` would have defined (`INFINITY` without an include),
    /// or a `std` name it would have made visible (`std::min`,
    /// `std::is_same_v`), once more with our constants or our small
    /// standard headers pre-included. Only such files pay a second
    /// compile, and no other file gets the macros (CCCL's `<cmath>`
    /// defines `INFINITY` too).
    fn compile_with_implicit_constants(
        &self,
        program: &Program,
        wanted: Wanted,
        args: &[String],
        memory: &[(&str, &str)],
    ) -> Result<Made, CompileError> {
        let given = |name: &str| memory.iter().any(|&(given, _)| given == name);
        match self.compile_now(program, wanted, args, memory) {
            Err(CompileError::Compilation { log, .. }) => {
                let mut headers = Vec::new();
                if crate::builtin::needs_math_constants(&log) {
                    headers.push(crate::builtin::MATH_CONSTANTS);
                }
                if crate::builtin::needs_nvcc_environment(&log) {
                    headers.extend(crate::builtin::NVCC_ENVIRONMENT);
                }
                headers.retain(|name| given(name));
                if headers.is_empty() {
                    return Err(CompileError::Compilation {
                        program: program.name.clone(),
                        log,
                    });
                }
                let mut args = args.to_vec();
                args.extend(headers.iter().map(|name| format!("--pre-include={name}")));
                self.compile_now(program, wanted, &args, memory)
            }
            result => result,
        }
    }

    /// Calls NVRTC.
    fn compile_now(
        &self,
        program: &Program,
        wanted: Wanted,
        args: &[String],
        memory: &[(&str, &str)],
    ) -> Result<Made, CompileError> {
        let target = wanted.target;
        let source = c_string(&program.source, "source")?;
        let headers = memory
            .iter()
            .map(|&(name, text)| Ok((c_string(name, "header name")?, c_string(text, "header")?)))
            .collect::<Result<Vec<_>, CompileError>>()?;
        let c_args = args
            .iter()
            .map(|arg| c_string(arg, "options"))
            .collect::<Result<Vec<CString>, _>>()?;
        let raw = RawProgram::create(&self.nvrtc, &source, &program.name, &headers)?;
        for expression in &program.name_expressions {
            raw.add_name_expression(expression)?;
        }
        raw.compile(&c_args)?;
        let log = raw.log();
        let bytes = raw.output(target)?;
        let ptx = match wanted.ptx {
            true => Some(raw.output(Target::Ptx)?),
            false => None,
        };
        let lowered = program
            .name_expressions
            .iter()
            .map(|expression| Ok((expression.clone(), raw.lowered_name(expression)?)))
            .collect::<Result<Vec<_>, CompileError>>()?;
        drop(raw);
        let code = output_code(program, target, bytes)?.with_name_expressions(lowered);
        let ptx = ptx
            .map(|bytes| output_code(program, Target::Ptx, bytes))
            .transpose()?;
        Ok(Made { code, ptx, log })
    }

    /// The result, with its warnings.
    fn finish(
        &self,
        code: ObjectCode,
        log: String,
        from_cache: bool,
        system: &[PathBuf],
        dependencies: Dependencies,
    ) -> Compiled {
        let is_theirs = |file: &str| {
            crate::builtin::HEADERS
                .iter()
                .any(|(name, _)| *name == file)
                || system.iter().any(|dir| Path::new(file).starts_with(dir))
        };
        let log = crate::nvrtc::without_pch_notes(&log);
        let mut warnings: Vec<Warning> = log_warnings(&log, is_theirs).collect();
        if code.kind() == ObjectKind::Ptx {
            warnings.extend(ptx_too_new(&code));
        }
        Compiled {
            code,
            log,
            warnings,
            from_cache,
            dependencies,
        }
    }

    /// Whether NVIDIA's folders `system` (those of `options`) have its own
    /// `cuda_runtime.h`.
    fn nvidia_runtime(&self, options: &ProgramOptions, system: &[PathBuf]) -> bool {
        // `minimal`: no folders, whatever `no_bundled_headers` says.
        if system.is_empty() {
            return false;
        }
        let bundled = !options.no_bundled_headers;
        *self.nvidia_runtime[usize::from(bundled)].get_or_init(|| {
            system
                .iter()
                .any(|dir| dir.join(crate::builtin::CUDA_RUNTIME).is_file())
        })
    }

    fn system_dirs(&self, options: &ProgramOptions) -> Result<Vec<PathBuf>, CompileError> {
        if options.minimal {
            return Ok(Vec::new());
        }
        let bundled = !options.no_bundled_headers;
        let found = self.system_dirs[usize::from(bundled)].get_or_init(|| {
            let folder = |name: &str| self.bundled_folder(name);
            let folder: Option<headers::BundledFolder<'_>> = bundled.then_some(&folder);
            headers::system_dirs(&self.nvrtc, folder, self.identity()).map_err(|e| e.to_string())
        });
        found.clone().map_err(|detail| CompileError::Io {
            path: "NVIDIA's header folders".into(),
            detail,
        })
    }

    /// Where NVRTC 13.3+'s bundled headers are installed, read back by
    /// path: the folder `name` in the cache's directory, checked as the
    /// cache checks its own (this user's, writable by no one else); else,
    /// without a cache or when its directory is refused, a private
    /// temporary folder that lives as long as this compiler.
    fn bundled_folder(&self, name: &str) -> Result<PathBuf, CompileError> {
        if let Some(cache) = &self.cache {
            match cache.private_folder(name) {
                Ok(folder) => return Ok(folder),
                Err(error) => log::warn!(
                    "cuda-compile: NVRTC's bundled headers not in {}: {error}; \
                     using a private temporary folder",
                    cache.dir().display()
                ),
            }
        }
        let private = self.private_headers.get_or_init(|| {
            tempfile::Builder::new()
                .prefix("cuda-compile-headers-")
                .tempdir()
                .map_err(|e| e.to_string())
        });
        match private {
            Ok(dir) => Ok(dir.path().to_path_buf()),
            Err(detail) => Err(CompileError::Io {
                path: std::env::temp_dir().display().to_string(),
                detail: detail.clone(),
            }),
        }
    }

    /// Whether keys must be the same on every machine (a cache with a
    /// remote store): see [`LinkCache::portable_keys`].
    fn portable(&self) -> bool {
        self.cache
            .as_ref()
            .is_some_and(|cache| cache.portable_keys())
    }

    fn identity(&self) -> &str {
        self.identity.get_or_init(|| {
            let symbol = self
                .nvrtc
                .nvrtcVersion
                .map(|f| f as *const std::ffi::c_void);
            let file = cuda_link::library_identity(symbol, self.nvrtc.path(), self.portable())
                .unwrap_or_else(|why| format!("\0unidentified ({why})"));
            format!("NVRTC {} | {file}", self.nvrtc.version_string())
        })
    }

    /// NVRTC's arguments as the key holds them: NVIDIA's folders are where
    /// this machine keeps them, so with portable keys each is named by its
    /// place in the list (the closure holds the contents of what it read).
    fn key_args(&self, args: &[String], system: &[PathBuf]) -> Vec<String> {
        let portable = self.portable();
        args.iter()
            .map(|arg| {
                let folder = arg
                    .strip_prefix("--include-path=")
                    .and_then(|dir| system.iter().position(|s| s.as_os_str() == dir))
                    .filter(|_| portable);
                match folder {
                    Some(n) => format!("--include-path=<NVIDIA folder {n}>"),
                    None => arg.clone(),
                }
            })
            .collect()
    }

    /// The key of a compile, or `None` when it cannot be cached.
    fn cache_key(
        &self,
        program: &Program,
        wanted: Wanted,
        args: &[String],
        memory: &[(&str, &str)],
        options: &ProgramOptions,
        closure: &Closure,
    ) -> Option<CacheKey> {
        if self.cache.is_none() && !self.memory_tier() {
            return None;
        }
        if options.uncacheable().is_some()
            || self.identity().contains('\0')
            || closure.unresolved.is_some()
        {
            return None;
        }
        let mut key = CacheKey::builder(CACHE_DOMAIN);
        key.field(self.identity().as_bytes())
            .field(wanted.name().as_bytes())
            .count(args.len());
        let base = self.base_dir.as_deref();
        for arg in args {
            key.field(under_base(arg, base).as_bytes());
        }
        key.field(under_base(&program.name, base).as_bytes())
            .field(program.source.as_bytes())
            .count(program.name_expressions.len());
        for expression in &program.name_expressions {
            key.field(expression.as_bytes());
        }
        // Every header given in memory, reached by the scan or not; ours
        // by name, with the hash of all of them.
        key.field(crate::builtin::digest().as_bytes())
            .count(memory.len());
        for &(name, text) in memory {
            key.field(name.as_bytes());
            match crate::builtin::is_builtin(text) {
                true => key.field(b"builtin"),
                false => key.field(text.as_bytes()),
            };
        }
        if let Some(pch) = &options.use_pch {
            key.field(&std::fs::read(pch).ok()?);
        }
        closure.key_into(&mut key);
        // Line tables, debug information and `__FILE__` name the files
        // as NVRTC found them, absolute (from the working folder): such an
        // output is another checkout's only if it is at the same place.
        if names_its_files(options) || closure.names_files {
            let here = std::env::current_dir().unwrap_or_default();
            key.field(b"names its files")
                .field(here.as_os_str().as_encoded_bytes())
                .field(base.map_or(&[][..], |b| b.as_os_str().as_encoded_bytes()));
        }
        Some(key.finish())
    }
}

/// Whether `options` make the output name the files it was compiled from:
/// line information or debug information, NVRTC's or ptxas's.
fn names_its_files(options: &ProgramOptions) -> bool {
    let ptxas = |option: &str| {
        let option = option
            .trim_start_matches("-Xptxas")
            .trim_start_matches("--ptxas-options")
            .trim_start_matches('=');
        matches!(
            option,
            "-g" | "--device-debug" | "-lineinfo" | "--generate-line-info"
        )
    };
    options.lineinfo
        || options.debug
        || options.ptxas_options.iter().any(|o| ptxas(o))
        || options.extra_options.iter().any(|o| ptxas(o))
}

/// The headers given in memory: the program's, then ours that it does not
/// replace.
fn memory_headers<'a>(
    program: &'a Program,
    options: &ProgramOptions,
    nvidia_runtime: bool,
) -> Vec<(&'a str, &'a str)> {
    let mut memory: Vec<(&str, &str)> = program
        .headers
        .iter()
        .map(|(name, text)| (name.as_str(), text.as_str()))
        .collect();
    if !options.no_builtin_headers {
        // NVIDIA's own `cuda_runtime.h`, where its folders have one.
        for &(name, text) in crate::builtin::HEADERS {
            if name == crate::builtin::CUDA_RUNTIME && nvidia_runtime {
                continue;
            }
            if !memory.iter().any(|&(given, _)| given == name) {
                memory.push((name, text));
            }
        }
    }
    memory
}

/// Where the program's includes may resolve to.
fn search_path<'a>(
    program: &Program,
    options: &ProgramOptions,
    memory: &'a [(&'a str, &'a str)],
    system: Vec<PathBuf>,
    portable: bool,
) -> SearchPath<'a> {
    SearchPath {
        portable,
        memory,
        source_dir: (!options.no_source_include)
            .then(|| Path::new(&program.name).parent().map(Path::to_path_buf))
            .flatten(),
        user: options.include_path.iter().map(PathBuf::from).collect(),
        system,
        base: None,
    }
}

/// `-arch=`: `compute_XX` for PTX and LTO-IR, `sm_XX` for a cubin, with
/// the `a` / `f` suffix.
fn target_arch(target: Target, arch: Arch) -> String {
    match target {
        Target::Cubin => format!("-arch={arch}"),
        Target::Ptx | Target::Ltoir => format!("-arch={}", arch.compute()),
    }
}

/// A warning when PTX's ISA is newer than the installed driver takes.
fn ptx_too_new(code: &ObjectCode) -> Option<Warning> {
    let driver = cuda_driver_sys::Driver::global().ok()?.version().ok()?;
    let driver = (driver as u32 / 1000, (driver as u32 % 1000) / 10);
    let info = code.inspect().ok()?;
    let cuda_link::inspect::Contents::Ptx(ptx) = &info.contents else {
        return None;
    };
    let (major, minor) = ptx.version.split_once('.')?;
    let isa: (u32, u32) = (major.parse().ok()?, minor.parse().ok()?);
    let newest = newest_ptx_isa(driver);
    (isa > newest).then(|| Warning::PtxNewerThanDriver {
        ptx_isa: ptx.version.clone(),
        driver,
        driver_isa: format!("{}.{}", newest.0, newest.1),
    })
}

// Here rather than in `program`, so that `program` stays below the
// compiler: the convenience is the compiler's.
impl Program {
    /// Compiles with the process-wide NVRTC, without a cache: see
    /// [`Compiler::compile`].
    pub fn compile(
        &self,
        target: Target,
        options: &ProgramOptions,
    ) -> Result<Compiled, CompileError> {
        Compiler::new()?.compile(self, target, options)
    }
}
