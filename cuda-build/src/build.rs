//! [`Build`]: `.cu` files to one multi-arch fatbin (or one per file) and
//! a Rust module naming its kernels, from a build script.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cuda_compile::{
    CompileError, Compiler, Dependencies, HostCode, Program, ProgramOptions, Target,
};
use cuda_link::inspect::Compression;
use cuda_link::{
    Arch, ArchVariant, Backend, LinkCache, LinkError, LinkTarget, Linker, LinkerOptions,
    ObjectCode, PtxIsa,
};

use crate::built::Built;
use crate::error::BuildError;
use crate::{env, jobs, names, nvcc, processes, stamp};

/// Compiles `.cu` files in a build script, as `cc::Build` compiles C:
/// every file for every arch with NVRTC (to LTO-IR, in parallel under
/// cargo's jobserver), linked per arch with nvJitLink, bundled into one
/// fatbin with a cubin per arch and PTX for later GPUs, and a Rust module
/// that names its kernels, for [`include_kernels!`](crate::include_kernels).
///
/// ```no_run
/// // build.rs
/// cuda_build::Build::new()
///     .files(["kernels/add.cu", "kernels/reduce.cu"])
///     .include("kernels/include")
///     .define("BLOCK", "256")
///     .archs(["sm_80", "sm_90"])
///     .compile("kernels")?;
/// # Ok::<(), cuda_build::BuildError>(())
/// ```
///
/// Nothing of NVIDIA's beyond NVRTC and nvJitLink is needed: no nvcc, no
/// host compiler, no GPU, no `nvidia-smi`. Both are found as every crate
/// of this workspace finds them (pip wheels, `CUDA_HOME`,
/// `CUDA_LINK_NVRTC_PATH` / `CUDA_LINK_NVJITLINK_PATH`), and compiles and
/// links go through the per-user cache, shared by every crate, profile
/// and target folder.
#[derive(Debug, Clone)]
pub struct Build {
    files: Vec<PathBuf>,
    includes: Vec<PathBuf>,
    defines: Vec<String>,
    undefines: Vec<String>,
    flags: Vec<String>,
    archs: Option<Vec<String>>,
    ptx: Ptx,
    ptx_isa: PtxIsaChoice,
    options: ProgramOptions,
    per_file: bool,
    write_ptx: bool,
    compress: bool,
    nvcc_fallback: bool,
    out_dir: Option<PathBuf>,
    cache: Option<PathBuf>,
    #[cfg(feature = "remote")]
    cache_url: Option<Secret>,
    #[cfg(feature = "remote")]
    cache_read_only: bool,
    #[cfg(feature = "remote")]
    cache_signing_key: Option<Secret>,
    #[cfg(feature = "remote")]
    cache_verify_key: Option<String>,
    cargo_metadata: bool,
    warnings: bool,
    precompiled_headers: bool,
}

/// The PTX slot.
#[derive(Debug, Clone)]
enum Ptx {
    /// For the lowest arch.
    Lowest,
    None,
    For(String),
}

/// The PTX ISA of the PTX slot.
#[derive(Debug, Clone)]
enum PtxIsaChoice {
    /// The first of nvJitLink's major release, where ptxas takes it.
    FirstOfRelease,
    /// As nvJitLink writes it.
    AsLinked,
    /// This one (`"9.0"`), or an error.
    Exactly(String),
}

impl Default for Build {
    fn default() -> Self {
        Self::new()
    }
}

impl Build {
    /// A build of no files, for every arch NVRTC supports (or
    /// `CUDA_COMPUTE_CAP`'s), PTX for the lowest, entries compressed with
    /// LZ4, cargo directives printed.
    pub fn new() -> Self {
        Build {
            files: Vec::new(),
            includes: Vec::new(),
            defines: Vec::new(),
            undefines: Vec::new(),
            flags: Vec::new(),
            archs: None,
            ptx: Ptx::Lowest,
            ptx_isa: PtxIsaChoice::FirstOfRelease,
            options: ProgramOptions::default(),
            per_file: false,
            write_ptx: false,
            compress: true,
            nvcc_fallback: false,
            out_dir: None,
            cache: None,
            #[cfg(feature = "remote")]
            cache_url: None,
            #[cfg(feature = "remote")]
            cache_read_only: false,
            #[cfg(feature = "remote")]
            cache_signing_key: None,
            #[cfg(feature = "remote")]
            cache_verify_key: None,
            cargo_metadata: true,
            warnings: true,
            precompiled_headers: true,
        }
    }

    /// Adds a `.cu` file (once: a file given again is ignored).
    pub fn file(&mut self, file: impl AsRef<Path>) -> &mut Self {
        let file = file.as_ref().to_path_buf();
        if !self.files.contains(&file) {
            self.files.push(file);
        }
        self
    }

    /// Adds `.cu` files.
    pub fn files<P: AsRef<Path>>(&mut self, files: impl IntoIterator<Item = P>) -> &mut Self {
        for file in files {
            self.file(file);
        }
        self
    }

    /// Adds an include folder (`-I`).
    pub fn include(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.includes.push(dir.as_ref().to_path_buf());
        self
    }

    /// Defines a macro: `-D name=value`, or `-D name` for `None`.
    pub fn define<'v>(&mut self, name: &str, value: impl Into<Option<&'v str>>) -> &mut Self {
        self.defines.push(match value.into() {
            Some(value) => format!("{name}={value}"),
            None => name.to_owned(),
        });
        self
    }

    /// Undefines a macro (`-U name`), after every definition: nvcc's
    /// `-U__CUDA_NO_HALF_OPERATORS__` family.
    pub fn undefine(&mut self, name: &str) -> &mut Self {
        self.undefines.push(name.to_owned());
        self
    }

    /// An option as NVRTC or nvcc spells it (`"-default-device"`,
    /// `"--expt-relaxed-constexpr"`), for what has no setter here or in
    /// [`ProgramOptions`], as `cc::Build::flag`; an option's value is the
    /// next flag or follows an `=`.
    ///
    /// nvcc's options go through [`ProgramOptions::nvcc_options`]:
    /// `--expt-relaxed-constexpr` becomes `-default-device`, and options of
    /// nvcc's host side (`-O3`, `-Xcompiler -fPIC`, `--default-stream
    /// per-thread`) change nothing in device code, so they are left out
    /// with a `cargo:warning` that says why. Any other option NVRTC does
    /// not know fails the build, naming it. The nvcc fallback does not get
    /// these: its options are nvcc's.
    pub fn flag(&mut self, flag: &str) -> &mut Self {
        self.flags.push(flag.to_owned());
        self
    }

    /// The cubin archs: `"sm_90"`, `"90"` or `"9.0"`. Without it,
    /// `CUDA_COMPUTE_CAP` (one or several, comma-separated, as crates
    /// migrating from `bindgen_cuda` set it), else every arch the loaded
    /// NVRTC supports and the loaded nvJitLink links (13.x: sm_75 and up).
    pub fn archs<S: AsRef<str>>(&mut self, archs: impl IntoIterator<Item = S>) -> &mut Self {
        self.archs = Some(archs.into_iter().map(|a| a.as_ref().to_owned()).collect());
        self
    }

    /// The PTX slot, JIT-compiled by GPUs newer than every cubin:
    /// `Some("compute_80")`, or `None` for none. By default, PTX for the
    /// lowest arch.
    pub fn ptx(&mut self, arch: Option<&str>) -> &mut Self {
        self.ptx = match arch {
            Some(arch) => Ptx::For(arch.to_owned()),
            None => Ptx::None,
        };
        self
    }

    /// The highest PTX ISA of the PTX slot: `Some("9.0")`, checked by
    /// ptxas (a kernel that needs a newer ISA is an error), or `None` for
    /// the ISA nvJitLink writes (13.5: 9.5).
    ///
    /// A driver JIT-compiles PTX only up to its own CUDA release's ISA
    /// (580, CUDA 13.0: 9.0). By default the PTX states the first ISA of
    /// the loaded nvJitLink's major release (13.x: 9.0, 12.x: 8.0), which
    /// every driver of that release takes; a kernel that needs a newer ISA
    /// keeps nvJitLink's, with a `cargo:warning`.
    pub fn ptx_isa(&mut self, isa: Option<&str>) -> &mut Self {
        self.ptx_isa = match isa {
            Some(isa) => PtxIsaChoice::Exactly(isa.to_owned()),
            None => PtxIsaChoice::AsLinked,
        };
        self
    }

    /// NVRTC options for every compile (`std`, `use_fast_math`, ...); the
    /// arch, includes and defines of this builder are added to them.
    pub fn options(&mut self, options: ProgramOptions) -> &mut Self {
        self.options = options;
        self
    }

    /// One fatbin per file, each its own module inside the build's,
    /// instead of one for all (whose files are linked together, so one
    /// may call another's `extern __device__` functions).
    pub fn per_file(&mut self, per_file: bool) -> &mut Self {
        self.per_file = per_file;
        self
    }

    /// Also writes each fatbin's PTX slot as text, `{stem}.ptx` next to it
    /// ([`Built::ptx_files`]), and a `PTX` constant in its module: for
    /// loaders that take PTX text (candle's modules are `&str`). It is the
    /// fatbin's PTX, byte for byte. Needs a PTX slot ([`ptx`](Self::ptx));
    /// with [`archs`](Self::archs) empty, the fatbin holds that PTX alone.
    pub fn write_ptx(&mut self, write: bool) -> &mut Self {
        self.write_ptx = write;
        self
    }

    /// Whether fatbin entries are compressed (LZ4, as nvcc's default).
    pub fn compress(&mut self, compress: bool) -> &mut Self {
        self.compress = compress;
        self
    }

    /// Compiles with nvcc, where it is installed (`NVCC`, `CUDA_HOME`,
    /// `PATH`), a file NVRTC fails on (host code), or every file when no
    /// NVRTC is found. Off by default: with it, a build may need nvcc.
    pub fn nvcc_fallback(&mut self, fallback: bool) -> &mut Self {
        self.nvcc_fallback = fallback;
        self
    }

    /// Where to write; `OUT_DIR` by default.
    pub fn out_dir(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.out_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// The cache folder; the per-user default (`CUDA_LINK_CACHE_DIR`, else
    /// `~/.cache/cuda-link`) by default, shared across crates.
    pub fn cache_dir(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.cache = Some(dir.as_ref().to_path_buf());
        self
    }

    /// A store the team shares compiled kernels through, behind the cache
    /// folder (default: `CUDA_LINK_CACHE_URL`): `redis://host:6379/0`,
    /// `s3://bucket/prefix`, `file:///shared/folder`, ... (see
    /// `cuda_link::RemoteCache`). Needs the `remote` feature.
    #[cfg(feature = "remote")]
    pub fn cache_url(&mut self, url: impl Into<String>) -> &mut Self {
        self.cache_url = Some(Secret(url.into()));
        self
    }

    /// Reads the shared store without ever writing to it (default:
    /// `CUDA_LINK_CACHE_READ_ONLY=1`), as pull-request builds should.
    /// Needs the `remote` feature.
    #[cfg(feature = "remote")]
    pub fn cache_read_only(&mut self, read_only: bool) -> &mut Self {
        self.cache_read_only = read_only;
        self
    }

    /// Signs what this build publishes to the shared store with the
    /// Ed25519 key in `hex` (default: `CUDA_LINK_CACHE_SIGNING_KEY`; make
    /// one with `cuda-link cache keygen`), and serves what it signed. A
    /// secret: give it to the builds that publish. Needs the `remote`
    /// feature.
    #[cfg(feature = "remote")]
    pub fn cache_signing_key(&mut self, hex: impl Into<String>) -> &mut Self {
        self.cache_signing_key = Some(Secret(hex.into()));
        self
    }

    /// Serves the shared store's entries signed by the Ed25519 key whose
    /// public half `hex` holds (default: `CUDA_LINK_CACHE_VERIFY_KEY`). A
    /// build with a verify key alone reads the team's kernels and never
    /// publishes. Without any key the store is not used. Needs the
    /// `remote` feature.
    #[cfg(feature = "remote")]
    pub fn cache_verify_key(&mut self, hex: impl Into<String>) -> &mut Self {
        self.cache_verify_key = Some(hex.into());
        self
    }

    /// Whether to print `cargo:rerun-if-changed` and
    /// `cargo:rerun-if-env-changed` (on by default).
    pub fn cargo_metadata(&mut self, print: bool) -> &mut Self {
        self.cargo_metadata = print;
        self
    }

    /// Whether NVRTC (12.8+) precompiles the headers the files start with
    /// and reuses them for the build's later files of the same arch (on
    /// by default): files that include CUB or `cuda_fp16.h` then pay for
    /// those headers about once per arch. The outputs are the same bytes;
    /// NVRTC's files go in a folder of the build's output, emptied at
    /// each build.
    pub fn precompiled_headers(&mut self, on: bool) -> &mut Self {
        self.precompiled_headers = on;
        self
    }

    /// Whether the source's own NVRTC warnings are printed as
    /// `cargo:warning` (on by default), each once, not once per arch.
    /// Warnings located in NVIDIA's and CCCL's headers never are.
    pub fn warnings(&mut self, print: bool) -> &mut Self {
        self.warnings = print;
        self
    }

    /// Compiles, links and writes `OUT_DIR/cuda-build/{name}.rs` (a module
    /// `name`) and the fatbins under `OUT_DIR/cuda-build/{name}/`, for
    /// [`include_kernels!("name")`](crate::include_kernels). When nothing
    /// it read or wrote last time has changed, it returns that build
    /// ([`Built::unchanged`]) without loading NVIDIA's libraries.
    ///
    /// Under docs.rs (`DOCS_RS` set), where there is no CUDA, nothing is
    /// compiled: `FATBIN` is empty, and only the `extern "C"` kernels a
    /// scan of the files finds have constants.
    ///
    /// # Errors
    /// A [`BuildError`] naming the file, the arch and the remedy: host code
    /// NVRTC cannot compile (with its line), a compile or link error with
    /// NVIDIA's log, a missing NVRTC or nvJitLink (naming the pip packages
    /// and variables), an unknown arch.
    pub fn compile(&self, name: &str) -> Result<Built, BuildError> {
        jobs::init();
        if !names::is_module_name(name) {
            return Err(BuildError::BadName(name.to_owned()));
        }
        if self.files.is_empty() {
            return Err(BuildError::NoFiles);
        }
        if self.per_file {
            let mut modules: std::collections::HashMap<String, &PathBuf> = Default::default();
            for file in &self.files {
                if let Some(first) = modules.insert(module_name(file), file)
                    && first != file
                {
                    return Err(BuildError::DuplicateModule {
                        module: module_name(file),
                        first: first.clone(),
                        second: file.clone(),
                    });
                }
            }
        }
        let out_dir = match &self.out_dir {
            Some(dir) => dir.clone(),
            None => PathBuf::from(env::var_os("OUT_DIR").ok_or(BuildError::NoOutDir)?),
        }
        .join("cuda-build");
        std::fs::create_dir_all(&out_dir).map_err(|e| output_error(&out_dir, e))?;
        let variables = env::watched();
        if self.cargo_metadata {
            for var in &variables {
                println!("cargo:rerun-if-env-changed={var}");
            }
            for dropped in ProgramOptions::default().nvcc_options(&self.flags) {
                println!(
                    "cargo:warning=cuda-build: `{}` is left out: {}",
                    dropped.option, dropped.why
                );
            }
        }
        if env::var_os("DOCS_RS").is_some() {
            return self.write_empty(name, &out_dir);
        }
        let stamp_path = out_dir.join(format!("{name}.stamp"));
        let context = self.stamp_context(name, &variables);
        if let Some(context) = &context
            && let Some(mut built) = stamp::check(&stamp_path, context)
        {
            built.unchanged = true;
            self.print_dependencies(&built.dependencies);
            return Ok(built);
        }
        let started = std::time::SystemTime::now();
        // An older stamp must not outlive this build's outputs.
        let _ = std::fs::remove_file(&stamp_path);
        let built = Session::new(self, name, out_dir)?.run()?;
        if let Some(context) = &context {
            // Best effort: without a stamp the next build only takes longer.
            let _ = stamp::write(&stamp_path, context, &built, started);
        }
        Ok(built)
    }

    fn print_dependencies(&self, dependencies: &[PathBuf]) {
        if self.cargo_metadata {
            for path in dependencies {
                println!("cargo:rerun-if-changed={}", path.display());
            }
        }
    }

    /// What a no-op rebuild must find unchanged besides the files: these
    /// settings, the variables, the build script, every NVIDIA library
    /// file the search may load and NVIDIA's header folders. `None` when
    /// the search would end at the system loader, whose choice cannot be
    /// seen without loading.
    fn stamp_context(&self, name: &str, variables: &[&'static str]) -> Option<String> {
        let env = cuda_dylib::SearchEnv::from_process();
        let mut libraries = vec![std::env::current_exe().ok()?];
        for spec in [&nvrtc_sys::SPEC, &nvjitlink_sys::SPEC] {
            let found: Vec<PathBuf> = cuda_dylib::candidates(spec, &env)
                .into_iter()
                .map(|candidate| candidate.path)
                .filter(|path| path.is_absolute() && path.is_file())
                .collect();
            if found.is_empty() {
                return None;
            }
            libraries.extend(found);
        }
        if self.nvcc_fallback {
            libraries.extend(nvcc::find());
        }
        let headers = cuda_dylib::existing_dirs(
            &["include", "include/cccl"],
            &[
                "nvidia/cuda_runtime/include",
                "nvidia/cuda_cccl/include",
                "nvidia/cu13/include",
            ],
            &env,
        );
        let settings = format!("{name} {} {self:?}", env!("CARGO_PKG_VERSION"));
        Some(stamp::context(&settings, variables, &libraries, &headers))
    }

    /// docs.rs: the modules, with nothing compiled: an empty `FATBIN`,
    /// and the constants of the `extern "C"` kernels a scan of the files
    /// finds (a C++ kernel's mangled name needs a compile).
    fn write_empty(&self, name: &str, out_dir: &Path) -> Result<Built, BuildError> {
        let doc = "Kernels: built without CUDA (docs.rs); the extern \"C\" ones are listed.";
        // `PTX` is there, empty, as `FATBIN` is: the crate's code compiles.
        let ptx = self.write_ptx.then_some("");
        let scanned = |files: &[PathBuf]| -> Vec<String> {
            files
                .iter()
                .filter_map(|file| std::fs::read_to_string(file).ok())
                .flat_map(|text| names::extern_c_kernels(&text))
                .collect()
        };
        let text = match self.per_file {
            false => names::module(name, doc, None, ptx, &scanned(&self.files)),
            true => {
                let modules: String = self
                    .files
                    .iter()
                    .map(|file| {
                        let kernels = scanned(std::slice::from_ref(file));
                        names::module(&module_name(file), doc, None, ptx, &kernels)
                    })
                    .collect();
                format!("#[doc = {doc:?}]\npub mod {name} {{\n{modules}}}\n")
            }
        };
        let module_path = out_dir.join(format!("{name}.rs"));
        write_if_changed(&module_path, &text)?;
        Ok(Built {
            module: module_path,
            fatbins: Vec::new(),
            ptx_files: Vec::new(),
            kernels: scanned(&self.files),
            archs: Vec::new(),
            ptx: None,
            compiled: 0,
            cached: 0,
            remote: 0,
            processes: 0,
            dependencies: Vec::new(),
            unchanged: false,
            cache: Default::default(),
        })
    }
}

/// One call of [`Build::compile`]: what it resolved before compiling.
struct Session<'a> {
    build: &'a Build,
    name: &'a str,
    out_dir: PathBuf,
    /// `None` when NVRTC is missing and nvcc stands in.
    compiler: Option<Compiler>,
    nvcc: Option<PathBuf>,
    archs: Vec<Arch>,
    ptx: Option<Arch>,
    /// The PTX slot's ISA, and whether a refusal by ptxas is an error.
    ptx_isa: Option<(PtxIsa, bool)>,
    cache: Arc<LinkCache>,
    /// NVRTC's warnings printed so far: each once, not once per arch.
    warned: std::sync::Mutex<std::collections::HashSet<String>>,
}

/// One (file, arch) compile's output.
struct Compiled {
    code: ObjectCode,
    from_cache: bool,
    /// What NVRTC's compile read of the program's files; `None` from nvcc.
    dependencies: Option<Dependencies>,
}

impl<'a> Session<'a> {
    fn new(build: &'a Build, name: &'a str, out_dir: PathBuf) -> Result<Self, BuildError> {
        let cache = Arc::new(open_cache(build));
        let nvcc = build.nvcc_fallback.then(nvcc::find).flatten();
        let pch_dir = out_dir.join(format!("{name}.pch"));
        // NVRTC's files of an earlier build are of no use to this process.
        let _ = std::fs::remove_dir_all(&pch_dir);
        let compiler = match Compiler::new() {
            Ok(compiler) => {
                let compiler = compiler.with_cache(Arc::clone(&cache));
                Some(match build.precompiled_headers {
                    true => compiler.with_precompiled_headers(pch_dir),
                    false => compiler,
                })
            }
            Err(_) if nvcc.is_some() => None,
            Err(error) => return Err(BuildError::NoNvrtc(Box::new(error))),
        };
        let archs = resolve_archs(build, compiler.as_ref())?;
        let ptx = match &build.ptx {
            Ptx::None => None,
            Ptx::Lowest => archs.first().copied(),
            Ptx::For(arch) => Some(parse_arch("Build::ptx", arch)?),
        };
        if ptx.is_none() {
            if archs.is_empty() {
                return Err(BuildError::NoPtxSlot("Build::archs is empty"));
            }
            if build.write_ptx {
                return Err(BuildError::NoPtxSlot("Build::write_ptx asks for PTX text"));
            }
        }
        let ptx_isa = match &build.ptx_isa {
            PtxIsaChoice::AsLinked => None,
            PtxIsaChoice::Exactly(text) => Some((
                text.parse().map_err(|_| BuildError::BadArch {
                    from: "Build::ptx_isa",
                    value: text.clone(),
                })?,
                true,
            )),
            PtxIsaChoice::FirstOfRelease => nvjitlink_sys::NvJitLink::global()
                .ok()
                .and_then(|lib| PtxIsa::first_of_cuda(lib.version().0))
                .map(|isa| (isa, false)),
        };
        Ok(Session {
            build,
            name,
            out_dir,
            compiler,
            nvcc,
            archs,
            ptx,
            ptx_isa,
            cache,
            warned: Default::default(),
        })
    }

    fn run(self) -> Result<Built, BuildError> {
        let build = self.build;
        let mut compile_archs = self.archs.clone();
        compile_archs.extend(self.ptx);
        compile_archs.sort_by_key(|arch| (arch.sm, arch.suffix()));
        compile_archs.dedup();
        let pairs: Vec<(&Path, Arch)> = build
            .files
            .iter()
            .flat_map(|file| {
                compile_archs
                    .iter()
                    .map(move |&arch| (file.as_path(), arch))
            })
            .collect();
        let (processes, fresh, remote_in_children) = self.compile_in_processes(&compile_archs);
        let remote_before = self.cache.stats().remote_hits;
        let compiled: Vec<Compiled> = jobs::run_all(&pairs, |&(file, arch)| {
            let mut compiled = self.compile(file, arch)?;
            compiled.from_cache &= !fresh.contains(&(file, arch));
            Ok(compiled)
        })
        .into_iter()
        .collect::<Result<_, BuildError>>()?;
        let remote = remote_in_children
            + usize::try_from(self.cache.stats().remote_hits - remote_before).unwrap_or(0);
        let for_pair = |file: &Path, arch: Arch| {
            let index = pairs
                .iter()
                .position(|&(f, a)| f == file && a == arch)
                .expect("every pair was compiled");
            &compiled[index].code
        };

        // Groups of files linked together: all, or each alone; a fatbin
        // each, of a cubin per arch and the PTX.
        let groups: Vec<Vec<&Path>> = match build.per_file {
            true => build.files.iter().map(|f| vec![f.as_path()]).collect(),
            false => vec![build.files.iter().map(PathBuf::as_path).collect()],
        };
        let mut targets: Vec<LinkTarget> =
            self.archs.iter().map(|&a| LinkTarget::Cubin(a)).collect();
        targets.extend(self.ptx.map(LinkTarget::Ptx));
        let linked: Vec<(ObjectCode, Option<ObjectCode>)> = jobs::run_all(&groups, |files| {
            let per_target = targets
                .iter()
                .map(|&target| {
                    let inputs = files
                        .iter()
                        .map(|file| for_pair(file, target.arch()).clone());
                    (target, inputs.collect())
                })
                .collect();
            let name = match build.per_file {
                true => files[0].display().to_string(),
                false => self.name.to_owned(),
            };
            self.link_fatbin(&name, per_target)
        })
        .into_iter()
        .collect::<Result<_, _>>()?;

        let mut fatbins = Vec::new();
        let mut ptx_files = Vec::new();
        let mut kernels = Vec::new();
        let mut modules = Vec::new();
        for (files, (fatbin, ptx)) in groups.iter().zip(&linked) {
            let stem = match build.per_file {
                true => module_name(files[0]),
                false => self.name.to_owned(),
            };
            let (path, listed) = self.write_fatbin(&stem, fatbin)?;
            let doc = self.module_doc(files);
            // Next to the generated file: `include_bytes!` in it resolves
            // relative to it, whatever the path's spelling.
            let relative = format!("{}/{stem}.fatbin", self.name);
            let ptx_relative = match ptx {
                Some(ptx) => {
                    ptx_files.push(self.write_ptx(&stem, ptx)?);
                    Some(format!("{}/{stem}.ptx", self.name))
                }
                None => None,
            };
            modules.push(names::module(
                &stem,
                &doc,
                Some(&relative),
                ptx_relative.as_deref(),
                &listed,
            ));
            kernels.extend(listed);
            fatbins.push(path);
        }
        let text = match build.per_file {
            true => format!(
                "#[doc = {:?}]\npub mod {} {{\n{}}}\n",
                format!("Kernels of {} files, a module per file.", build.files.len()),
                self.name,
                modules.concat()
            ),
            false => modules.concat(),
        };
        let module_path = self.out_dir.join(format!("{}.rs", self.name));
        write_if_changed(&module_path, &text)?;

        let first_arch = compile_archs.first().copied();
        let dependencies = self.dependencies(|file| {
            let index = pairs
                .iter()
                .position(|&(f, a)| f == file && Some(a) == first_arch)?;
            compiled[index].dependencies.as_ref()
        });
        build.print_dependencies(&dependencies);
        let cached = compiled.iter().filter(|c| c.from_cache).count();
        self.cache.flush();
        let built = Built {
            module: module_path,
            fatbins,
            ptx_files,
            kernels,
            archs: self.archs.clone(),
            ptx: self.ptx,
            compiled: compiled.len() - cached,
            cached,
            remote: remote.min(cached),
            processes,
            dependencies,
            unchanged: false,
            cache: self.cache.stats(),
        };
        self.report_cache(&built);
        Ok(built)
    }

    /// Compiles every (file, arch) into the compile cache in child
    /// processes as well as this one, when that can be done (see
    /// `processes`), arch by arch so that each process reuses its
    /// precompiled headers. Returns how many processes compiled, and the
    /// pairs they compiled rather than found cached.
    fn compile_in_processes<'p>(
        &'p self,
        archs: &[Arch],
    ) -> (usize, HashSet<(&'p Path, Arch)>, usize) {
        const FRESH: u8 = 1;
        const REMOTE: u8 = 2;
        let Some(compiler) = &self.compiler else {
            return (1, HashSet::new(), 0);
        };
        if !self.cache.is_writable() {
            return (1, HashSet::new(), 0);
        }
        let by_arch: Vec<(&Path, Arch)> = archs
            .iter()
            .flat_map(|&arch| {
                self.build
                    .files
                    .iter()
                    .map(move |file| (file.as_path(), arch))
            })
            .collect();
        // Each process compiles one file at a time, so the remote hits
        // counted around a compile are its own.
        let into_cache = |&(file, arch): &(&Path, Arch)| {
            let remote_before = self.cache.stats().remote_hits;
            let compiled = Program::from_path(file).ok().and_then(|program| {
                compiler
                    .compile(&program, Target::Ltoir, &self.options(arch))
                    .ok()
            });
            match compiled {
                Some(compiled) if !compiled.from_cache => FRESH,
                Some(_) if self.cache.stats().remote_hits > remote_before => REMOTE,
                _ => 0,
            }
        };
        // A child's remote writes finish before it exits.
        let flush = || self.cache.flush();
        // NVIDIA's header folders (NVRTC 13.3+ installs its bundled ones)
        // are set up once, before the fork, rather than by every child.
        let set_up_headers = || {
            if let (Some(file), Some(&arch)) = (self.build.files.first(), archs.first())
                && let Ok(program) = Program::from_path(file)
            {
                let _ = compiler.dependencies(&program, &self.options(arch));
            }
        };
        // A child's precompiled headers, in its folder of the PCH folder
        // (named by its id), are removed however it ended.
        let pch_root = compiler
            .precompiled_headers_dir()
            .and_then(|dir| dir.parent().map(Path::to_path_buf));
        let remove_pch = |pid: u32| {
            if let Some(root) = &pch_root {
                let _ = std::fs::remove_dir_all(root.join(pid.to_string()));
            }
        };
        match processes::spread(&by_arch, into_cache, set_up_headers, flush, remove_pch) {
            Some(spread) => {
                let marked = |wanted: u8| {
                    spread
                        .marked
                        .iter()
                        .filter(move |(_, mark)| *mark == wanted)
                        .filter_map(|(index, _)| by_arch.get(*index).copied())
                };
                let remote = marked(REMOTE).count();
                (spread.processes, marked(FRESH).collect(), remote)
            }
            None => (1, HashSet::new(), 0),
        }
    }

    /// The program options of one compile.
    fn options(&self, arch: Arch) -> ProgramOptions {
        let mut options = self
            .build
            .options
            .clone()
            .arch(arch)
            .relocatable_device_code(true);
        options.include_path.extend(
            self.build
                .includes
                .iter()
                .map(|dir| dir.display().to_string()),
        );
        options
            .define_macro
            .extend(self.build.defines.iter().cloned());
        options
            .undefine_macro
            .extend(self.build.undefines.iter().cloned());
        // nvcc's spellings too; what they drop was said once per build.
        let _ = options.nvcc_options(&self.build.flags);
        options
    }

    /// `file` for `arch` to LTO-IR: NVRTC, else (opted in) nvcc.
    fn compile(&self, file: &Path, arch: Arch) -> Result<Compiled, BuildError> {
        let Some(compiler) = &self.compiler else {
            return self.with_nvcc(file, arch);
        };
        let program = Program::from_path(file).map_err(|error| BuildError::Compile {
            file: file.to_path_buf(),
            arch: arch.to_string(),
            error: Box::new(error),
        })?;
        match compiler.compile(&program, Target::Ltoir, &self.options(arch)) {
            Ok(compiled) => {
                if self.build.cargo_metadata && self.build.warnings {
                    let mut warned = self.warned.lock().unwrap_or_else(|p| p.into_inner());
                    for warning in &compiled.warnings {
                        // NVRTC's lines start with the file's name.
                        if warned.insert(warning.to_string()) {
                            println!("cargo:warning={warning}");
                        }
                    }
                }
                Ok(Compiled {
                    code: compiled.code,
                    from_cache: compiled.from_cache,
                    dependencies: Some(compiled.dependencies),
                })
            }
            Err(CompileError::Compilation { .. }) if self.nvcc.is_some() => {
                self.with_nvcc(file, arch)
            }
            Err(error @ CompileError::Compilation { .. }) => {
                let options = self.options(arch);
                Err(match HostCode::find(compiler, &program, &options, &error) {
                    Some(host) => BuildError::HostCode {
                        file: host.file,
                        line: host.line,
                        construct: host.construct,
                        error: Box::new(error),
                    },
                    None => BuildError::Compile {
                        file: file.to_path_buf(),
                        arch: arch.to_string(),
                        error: Box::new(error),
                    },
                })
            }
            Err(error) => Err(BuildError::Compile {
                file: file.to_path_buf(),
                arch: arch.to_string(),
                error: Box::new(error),
            }),
        }
    }

    fn with_nvcc(&self, file: &Path, arch: Arch) -> Result<Compiled, BuildError> {
        let nvcc = self.nvcc.as_deref().ok_or_else(|| BuildError::Nvcc {
            file: file.to_path_buf(),
            detail: "nvcc was not found (NVCC, CUDA_HOME/bin, PATH)".into(),
        })?;
        let code = nvcc::compile(
            nvcc,
            file,
            arch,
            &self.build.includes,
            &self.build.defines,
            &self.build.undefines,
            &self.out_dir,
        )?;
        Ok(Compiled {
            code,
            from_cache: false,
            dependencies: None,
        })
    }

    /// Links one group's files into a fatbin through the linker's
    /// multi-arch pipeline, its per-target links under the jobserver and
    /// through the link cache; returns the PTX slot's output too when
    /// [`Build::write_ptx`] asks for the text.
    fn link_fatbin(
        &self,
        name: &str,
        per_target: Vec<(LinkTarget, Vec<ObjectCode>)>,
    ) -> Result<(ObjectCode, Option<ObjectCode>), BuildError> {
        let fail = |error: Box<LinkError>| BuildError::Link {
            name: name.to_owned(),
            error,
        };
        let link = |ptx_isa| -> Result<(ObjectCode, Option<ObjectCode>), Box<LinkError>> {
            // nvJitLink only: a build script never falls back to a driver.
            let mut options = LinkerOptions::default()
                .backend(Backend::NvJitLink)
                .targets(per_target.iter().map(|(target, _)| *target))
                .name(format!("{name}.fatbin"));
            options.ptx_isa = ptx_isa;
            if self.build.compress {
                options.fatbin_compression = Some(Compression::Lz4);
            }
            let mut linker = Linker::new(options)?
                .with_cache(Arc::clone(&self.cache))
                .with_executor(Arc::new(jobs::Jobserver));
            let linked = linker.link_each(per_target.clone())?;
            let ptx = self.build.write_ptx.then(|| {
                linked
                    .iter()
                    .find(|(target, _)| matches!(target, LinkTarget::Ptx(_)))
                    .map(|(_, ptx)| ptx.clone())
            });
            Ok((linker.bundle(&linked)?, ptx.flatten()))
        };
        let error = match link(self.ptx_isa.map(|(isa, _)| isa)) {
            Ok(linked) => return Ok(linked),
            Err(error) => *error,
        };
        match error {
            // The default ISA is best effort: else nvJitLink's, said once.
            LinkError::ForTarget { target, source } => match *source {
                LinkError::PtxIsaTooLow { isa, stated, log }
                    if self.ptx_isa == Some((isa, false)) =>
                {
                    if self.build.cargo_metadata {
                        println!(
                            "cargo:warning={name}: the PTX for {target} keeps PTX ISA {stated}, \
                             which older drivers cannot JIT: ptxas refuses it at {isa}: {log}"
                        );
                    }
                    link(None).map_err(fail)
                }
                source => Err(fail(Box::new(LinkError::ForTarget {
                    target,
                    source: Box::new(source),
                }))),
            },
            error => Err(fail(Box::new(error))),
        }
    }

    /// Says what the cache did: a shared store's failure as a cargo
    /// warning (the build went on without it), and the summary line.
    fn report_cache(&self, built: &Built) {
        if !self.build.cargo_metadata {
            return;
        }
        #[cfg(feature = "remote")]
        if let Some(remote) = self.cache.remote()
            && let Some(why) = remote.failure()
        {
            println!(
                "cargo:warning=cuda-build: the shared cache {} failed ({why}); this build \
                 compiled without it",
                remote.url()
            );
        }
        println!("cuda-build: {}", built.summary());
    }

    /// Writes one group's fatbin to `{stem}.fatbin` unless it holds that
    /// already; returns its path and its kernels.
    fn write_fatbin(
        &self,
        stem: &str,
        fatbin: &ObjectCode,
    ) -> Result<(PathBuf, Vec<String>), BuildError> {
        let path = self.out_dir.join(self.name).join(format!("{stem}.fatbin"));
        let fail = |detail: String| BuildError::Output {
            name: path.display().to_string(),
            detail,
        };
        let kernels = fatbin
            .inspect()
            .map_err(|e| fail(e.to_string()))?
            .kernels()
            .into_iter()
            .map(str::to_owned)
            .collect();
        if std::fs::read(&path).ok().as_deref() != Some(fatbin.as_bytes()) {
            std::fs::create_dir_all(self.out_dir.join(self.name))
                .and_then(|()| fatbin.write_to(&path))
                .map_err(|e| fail(e.to_string()))?;
        }
        Ok((path, kernels))
    }

    /// Writes one group's PTX text to `{stem}.ptx` unless it holds that
    /// already; returns its path.
    fn write_ptx(&self, stem: &str, ptx: &ObjectCode) -> Result<PathBuf, BuildError> {
        let path = self.out_dir.join(self.name).join(format!("{stem}.ptx"));
        let fail = |detail: String| BuildError::Output {
            name: path.display().to_string(),
            detail,
        };
        // `as_bytes` is the text without the NUL nvJitLink and the driver
        // need; UTF-8, for `include_str!`.
        let text = std::str::from_utf8(ptx.as_bytes()).map_err(|e| fail(e.to_string()))?;
        if std::fs::read(&path).ok().as_deref() != Some(text.as_bytes()) {
            std::fs::create_dir_all(self.out_dir.join(self.name))
                .and_then(|()| std::fs::write(&path, text))
                .map_err(|e| fail(e.to_string()))?;
        }
        Ok(path)
    }

    fn module_doc(&self, files: &[&Path]) -> String {
        let files: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
        let archs: Vec<String> = self.archs.iter().map(Arch::to_string).collect();
        let mut parts = Vec::new();
        if !archs.is_empty() {
            parts.push(format!("cubins for {}", archs.join(", ")));
        }
        if let Some(arch) = self.ptx {
            parts.push(format!("PTX for {}", arch.compute()));
        }
        format!(
            "Kernels of {}: {}. Built by cuda-build.",
            files.join(", "),
            parts.join(", ")
        )
    }

    /// What the build names in `rerun-if-changed`: each file's
    /// dependencies as its compile scanned them (`scanned`), else (nvcc's
    /// compile) as a scan of its includes finds them, else the file and
    /// the include folders.
    fn dependencies<'c>(
        &self,
        scanned: impl Fn(&Path) -> Option<&'c Dependencies>,
    ) -> Vec<PathBuf> {
        let cache_dir = Some(self.cache.dir());
        let mut found: Vec<PathBuf> = Vec::new();
        for file in &self.build.files {
            let watched = match scanned(file) {
                Some(dependencies) => Some(dependencies.to_watch(cache_dir)),
                None => self.compiler.as_ref().and_then(|compiler| {
                    let program = Program::from_path(file).ok()?;
                    let arch = self.archs.first().copied().or(self.ptx)?;
                    compiler.dependencies(&program, &self.options(arch)).ok()
                }),
            };
            match watched {
                Some(paths) => found.extend(paths),
                None => {
                    found.push(file.clone());
                    found.extend(self.build.includes.iter().cloned());
                }
            }
        }
        let mut seen = std::collections::HashSet::new();
        found.retain(|path| seen.insert(path.clone()));
        found
    }
}

/// A setting that may hold a password (a store's URL): its `Debug`, which
/// goes into the stamp in `target/`, holds nothing of it, not even a hash
/// (the outputs do not depend on where they are shared).
#[cfg(feature = "remote")]
#[derive(Clone)]
struct Secret(String);

#[cfg(feature = "remote")]
impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("(not recorded)")
    }
}

/// The cache folder (`Build::cache_dir`, else the default one), and with
/// the `remote` feature the shared store behind it (`Build::cache_url`,
/// else `CUDA_LINK_CACHE_URL`).
fn open_cache(build: &Build) -> LinkCache {
    let cache = LinkCache::new(build.cache.clone().unwrap_or_else(LinkCache::default_dir));
    #[cfg(feature = "remote")]
    {
        let remote = cuda_link::RemoteCache::from_env(|name| {
            let name = *cuda_link::RemoteCache::VARIABLES
                .iter()
                .find(|v| **v == name)?;
            match name {
                "CUDA_LINK_CACHE_URL" if build.cache_url.is_some() => {
                    build.cache_url.as_ref().map(|url| url.0.clone())
                }
                "CUDA_LINK_CACHE_READ_ONLY" if build.cache_read_only => Some("1".into()),
                "CUDA_LINK_CACHE_SIGNING_KEY" if build.cache_signing_key.is_some() => {
                    build.cache_signing_key.as_ref().map(|key| key.0.clone())
                }
                "CUDA_LINK_CACHE_VERIFY_KEY" if build.cache_verify_key.is_some() => {
                    build.cache_verify_key.clone()
                }
                _ => env::var(name),
            }
        });
        match remote {
            Some(Ok(remote)) if !remote.is_trusted() => {
                if build.cargo_metadata {
                    println!(
                        "cargo:warning=cuda-build: the shared cache {} is not used: {}",
                        remote.url(),
                        cuda_link::RemoteCache::UNTRUSTED
                    );
                }
            }
            Some(Ok(remote)) => return cache.with_remote(remote),
            // A build never fails because of its cache: said, and built
            // without the store.
            Some(Err(error)) if build.cargo_metadata => {
                println!("cargo:warning=cuda-build: the shared cache is off: {error}");
            }
            Some(Err(_)) | None => {}
        }
    }
    #[cfg(not(feature = "remote"))]
    if build.cargo_metadata && env::var("CUDA_LINK_CACHE_URL").is_some() {
        println!(
            "cargo:warning=cuda-build: CUDA_LINK_CACHE_URL is set, but cuda-build was built \
             without its `remote` feature: the shared cache is not used"
        );
    }
    cache
}

/// The cubin archs: explicit, else `CUDA_COMPUTE_CAP`, else every arch
/// NVRTC supports; each checked against NVRTC's list.
fn resolve_archs(build: &Build, compiler: Option<&Compiler>) -> Result<Vec<Arch>, BuildError> {
    let supported = match compiler {
        Some(compiler) => Some(
            compiler
                .supported_archs()
                .map_err(|e| BuildError::NoNvrtc(Box::new(e)))?,
        ),
        None => None,
    };
    let from_env = env::var("CUDA_COMPUTE_CAP");
    let mut archs: Vec<Arch> = match (&build.archs, from_env) {
        (Some(archs), _) => archs
            .iter()
            .map(|a| parse_arch("Build::archs", a))
            .collect::<Result<_, _>>()?,
        (None, Some(caps)) => caps
            .split(',')
            .map(|a| parse_arch("CUDA_COMPUTE_CAP", a))
            .collect::<Result<_, _>>()?,
        (None, None) => match &supported {
            Some(supported) => linkable(supported),
            None => {
                return Err(BuildError::BadArch {
                    from: "Build::archs",
                    value: "(none: set archs or CUDA_COMPUTE_CAP when nvcc stands in for NVRTC)"
                        .into(),
                });
            }
        },
    };
    archs.sort_by_key(|arch| (arch.sm, arch.suffix()));
    archs.dedup();
    // `a` archs exist from sm_90, `f` ones from sm_100.
    if let Some(bad) = archs.iter().find(|arch| match arch.variant {
        ArchVariant::Base => false,
        ArchVariant::Specific => arch.sm < 90,
        ArchVariant::Family => arch.sm < 100,
    }) {
        return Err(BuildError::BadArch {
            from: "Build::archs or CUDA_COMPUTE_CAP",
            value: bad.to_string(),
        });
    }
    if let (Some(supported), Some(compiler)) = (&supported, compiler)
        && let Some(missing) = archs
            .iter()
            .find(|arch| !supported.iter().any(|s| s.sm == arch.sm))
    {
        let list: Vec<String> = supported.iter().map(|a| a.sm.to_string()).collect();
        return Err(BuildError::UnsupportedArch {
            sm: missing.sm,
            nvrtc: compiler.nvrtc().version_string(),
            supported: list.join(", "),
        });
    }
    Ok(archs)
}

/// Of NVRTC's archs, those the loaded nvJitLink links under LTO (13.x
/// dropped sm_50 to sm_72 and sm_101, which NVRTC 12.x compiles). Without
/// nvJitLink, all: the first link says what is missing.
fn linkable(supported: &[Arch]) -> Vec<Arch> {
    match nvjitlink_sys::NvJitLink::global() {
        Ok(lib) => supported
            .iter()
            .copied()
            .filter(|arch| lib.links_arch(arch.sm, true))
            .collect(),
        Err(_) => supported.to_vec(),
    }
}

/// `sm_90`, `compute_90`, `90`, `9.0` (nvidia-smi's spelling), `sm_90a`.
fn parse_arch(from: &'static str, text: &str) -> Result<Arch, BuildError> {
    text.parse().map_err(|_| BuildError::BadArch {
        from,
        value: text.trim().to_owned(),
    })
}

/// A file's module name: its stem as a Rust identifier, `_` after a
/// keyword (`type.cu` is `type_`).
fn module_name(file: &Path) -> String {
    let stem = file.file_stem().unwrap_or_default().to_string_lossy();
    let mut name: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    if !name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        name.insert(0, '_');
    }
    if !names::is_module_name(&name) {
        name.push('_');
    }
    name
}

/// Writes `text` unless the file already holds it, so that cargo sees no
/// change when nothing changed.
fn write_if_changed(path: &Path, text: &str) -> Result<(), BuildError> {
    if std::fs::read(path).ok().as_deref() == Some(text.as_bytes()) {
        return Ok(());
    }
    std::fs::write(path, text).map_err(|e| output_error(path, e))
}

fn output_error(path: &Path, error: std::io::Error) -> BuildError {
    BuildError::Output {
        name: path.display().to_string(),
        detail: error.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn archs_parse_in_every_spelling() {
        for text in ["sm_86", "compute_86", "86", "8.6", " 86 "] {
            assert_eq!(parse_arch("test", text).unwrap(), Arch::sm(86), "{text}");
        }
        assert_eq!(parse_arch("test", "sm_90a").unwrap().to_string(), "sm_90a");
        for bad in ["", "8.", ".6", "8.6.1", "gfx90a", "sm_"] {
            assert!(parse_arch("test", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn module_names_are_identifiers() {
        assert_eq!(module_name(Path::new("k/add-f32.cu")), "add_f32");
        assert_eq!(module_name(Path::new("1d.cu")), "_1d");
        assert_eq!(module_name(Path::new("type.cu")), "type_");
    }
}
