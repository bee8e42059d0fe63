//! [`Build`]: `.cu` files to one multi-arch fatbin (or one per file) and
//! a Rust module naming its kernels, from a build script.

use std::path::{Path, PathBuf};

use cuda_compile::ProgramOptions;

/// Compiles `.cu` files in a build script, as `cc::Build` compiles C:
/// every file for every arch with NVRTC (in parallel under cargo's
/// jobserver; files compiled together to LTO-IR, linked per arch with
/// nvJitLink; a file alone straight to its cubins and PTX), bundled into
/// one fatbin with a cubin per arch and PTX for later GPUs, and a Rust
/// module that names its kernels, for
/// [`include_kernels!`](crate::include_kernels).
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
    pub(crate) files: Vec<PathBuf>,
    pub(crate) includes: Vec<PathBuf>,
    pub(crate) defines: Vec<String>,
    pub(crate) undefines: Vec<String>,
    pub(crate) flags: Vec<String>,
    pub(crate) archs: Option<Vec<String>>,
    pub(crate) ptx: Ptx,
    pub(crate) ptx_isa: PtxIsaChoice,
    pub(crate) options: ProgramOptions,
    pub(crate) per_file: bool,
    pub(crate) write_ptx: bool,
    pub(crate) compress: bool,
    pub(crate) nvcc_fallback: bool,
    pub(crate) routes: Vec<(PathBuf, Route)>,
    pub(crate) cudart: Cudart,
    pub(crate) out_dir: Option<PathBuf>,
    pub(crate) cache: Option<PathBuf>,
    #[cfg(feature = "remote-tier")]
    pub(crate) cache_url: Option<Secret>,
    #[cfg(feature = "remote-tier")]
    pub(crate) cache_read_only: bool,
    #[cfg(feature = "remote-tier")]
    pub(crate) cache_signing_key: Option<Secret>,
    #[cfg(feature = "remote-tier")]
    pub(crate) cache_verify_key: Option<String>,
    pub(crate) cargo_metadata: bool,
    pub(crate) warnings: bool,
    pub(crate) precompiled_headers: bool,
}

/// How a host-code build links the CUDA runtime.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Cudart {
    /// `libcudart_static.a`, as nvcc links by default.
    #[default]
    Static,
    /// `libcudart.so`.
    Shared,
    /// Not linked: the crate links it itself.
    None,
}

/// Which compiler takes a file: see [`Build::route`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Route {
    /// NVRTC: device code, into the fatbin.
    Nvrtc,
    /// nvcc: host and device code, into `lib{name}.a`.
    Nvcc,
}

/// The PTX slot.
#[derive(Debug, Clone)]
pub(crate) enum Ptx {
    /// For the lowest arch.
    Lowest,
    None,
    For(String),
}

/// The PTX ISA of the PTX slot.
#[derive(Debug, Clone)]
pub(crate) enum PtxIsaChoice {
    /// The first of nvJitLink's (else NVRTC's) major release, where
    /// ptxas takes it.
    FirstOfRelease,
    /// As NVRTC or nvJitLink writes it.
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
            routes: Vec::new(),
            cudart: Cudart::Static,
            out_dir: None,
            cache: None,
            #[cfg(feature = "remote-tier")]
            cache_url: None,
            #[cfg(feature = "remote-tier")]
            cache_read_only: false,
            #[cfg(feature = "remote-tier")]
            cache_signing_key: None,
            #[cfg(feature = "remote-tier")]
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
    /// `"--expt-relaxed-constexpr"`, `"-Iinc"`), for what has no setter
    /// here or in [`ProgramOptions`], as `cc::Build::flag`; an option's
    /// value is the next flag or follows an `=`.
    ///
    /// The flags are read once, as nvcc reads them
    /// ([`cuda_compile::Flags`]), and a flag that cannot be read (`-I`
    /// with no folder) fails the build before anything is compiled. The
    /// two routes then take them so:
    ///
    /// - Device-only files (NVRTC): each flag becomes the option it means
    ///   ([`ProgramOptions::nvcc_options`]): `-I` (every spelling, nvcc's
    ///   comma lists included) an include folder the cache key's scan
    ///   reads, `-dc` relocatable code, `--expt-relaxed-constexpr`
    ///   `-default-device`; nvcc's host-side options (`-O3`, `-Xcompiler
    ///   -fPIC`, `--default-stream per-thread`) change nothing in device
    ///   code and are left out with a `cargo:warning` that says why. Any
    ///   other option NVRTC does not know fails the build, naming it.
    /// - Host-code files (nvcc, see [`route`](Self::route)): every flag as
    ///   written but NVRTC's own (`-default-device`, `--pch`, ...); their
    ///   include folders, `CPATH` and the host compiler's are what the
    ///   objects' keys are scanned through.
    ///
    /// The [`nvcc_fallback`](Self::nvcc_fallback) gets the includes and
    /// defines only.
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
    /// lowest arch. Host-code files get it too: each nvcc object holds the
    /// slot's PTX beside its cubins (`-gencode
    /// arch=compute_80,code=compute_80`), as nvcc's own multi-arch builds
    /// do, which makes an archive larger than one of cubins alone (a
    /// quarter, for one crate's); `None` leaves it out of both.
    pub fn ptx(&mut self, arch: Option<&str>) -> &mut Self {
        self.ptx = match arch {
            Some(arch) => Ptx::For(arch.to_owned()),
            None => Ptx::None,
        };
        self
    }

    /// The highest PTX ISA of the PTX slot: `Some("9.0")`, checked by
    /// ptxas (a kernel that needs a newer ISA is an error), or `None` for
    /// the ISA NVRTC or nvJitLink writes (13.5: 9.5).
    ///
    /// A driver JIT-compiles PTX only up to its own CUDA release's ISA
    /// (580, CUDA 13.0: 9.0). By default the PTX states the first ISA of
    /// the loaded nvJitLink's (else NVRTC's) major release (13.x: 9.0,
    /// 12.x: 8.0), which every driver of that release takes; a kernel that
    /// needs a newer ISA keeps the ISA it was written with, with a
    /// `cargo:warning`. PTX that states no newer ISA is not checked again.
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
    /// ([`Built::ptx_files`](crate::Built::ptx_files)), and a `PTX` constant in its module: for
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
    /// `PATH`), a device-only file NVRTC refuses, to LTO-IR in the
    /// fatbin, with the build's includes and defines; and, when no NVRTC
    /// is found, the device-only files too. Off by default: with it, a
    /// build may need nvcc. Files with host code need no fallback: the
    /// verdict sends them to nvcc in any case ([`route`](Self::route)).
    pub fn nvcc_fallback(&mut self, fallback: bool) -> &mut Self {
        self.nvcc_fallback = fallback;
        self
    }

    /// Sends `file` (one of the build's files) to NVRTC or to nvcc,
    /// whatever the host-code verdict says. By default the verdict runs
    /// before any compile, `-default-device` or not: a file with host code
    /// (a host function that launches a kernel with `<<<...>>>` or calls
    /// the runtime's host API, an `extern "C"` host function, or `main`,
    /// written out or made by a macro) goes to nvcc, as
    /// `cc::Build::cuda(true)` compiles it, into `lib{name}.a`; every
    /// other file goes to NVRTC, into the fatbin. Routed to NVRTC, a file
    /// with host code is [`BuildError::HostCode`](crate::BuildError::HostCode),
    /// naming the launcher's definition.
    pub fn route(&mut self, file: impl AsRef<Path>, route: Route) -> &mut Self {
        let file = file.as_ref().to_path_buf();
        self.routes.retain(|(given, _)| *given != file);
        self.routes.push((file, route));
        self
    }

    /// How host-code files link the CUDA runtime: statically by default,
    /// as nvcc does.
    pub fn cudart(&mut self, cudart: Cudart) -> &mut Self {
        self.cudart = cudart;
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
    #[cfg(feature = "remote-tier")]
    pub fn cache_url(&mut self, url: impl Into<String>) -> &mut Self {
        self.cache_url = Some(Secret(url.into()));
        self
    }

    /// Reads the shared store without ever writing to it (default:
    /// `CUDA_LINK_CACHE_READ_ONLY=1`), as pull-request builds should.
    /// Needs the `remote` feature.
    #[cfg(feature = "remote-tier")]
    pub fn cache_read_only(&mut self, read_only: bool) -> &mut Self {
        self.cache_read_only = read_only;
        self
    }

    /// Signs what this build publishes to the shared store with the
    /// Ed25519 key in `hex` (default: `CUDA_LINK_CACHE_SIGNING_KEY`; make
    /// one with `cuda-link cache keygen`), and serves what it signed. A
    /// secret: give it to the builds that publish. Needs the `remote`
    /// feature.
    #[cfg(feature = "remote-tier")]
    pub fn cache_signing_key(&mut self, hex: impl Into<String>) -> &mut Self {
        self.cache_signing_key = Some(Secret(hex.into()));
        self
    }

    /// Serves the shared store's entries signed by the Ed25519 key whose
    /// public half `hex` holds (default: `CUDA_LINK_CACHE_VERIFY_KEY`). A
    /// build with a verify key alone reads the team's kernels and never
    /// publishes. Without any key the store is not used. Needs the
    /// `remote` feature.
    #[cfg(feature = "remote-tier")]
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

    pub(crate) fn print_dependencies(&self, dependencies: &[PathBuf]) {
        if self.cargo_metadata {
            for path in dependencies {
                println!("cargo:rerun-if-changed={}", path.display());
            }
        }
    }
}

/// A setting that may hold a password (a store's URL): its `Debug`, which
/// goes into the stamp in `target/`, holds nothing of it, not even a hash
/// (the outputs do not depend on where they are shared).
#[cfg(feature = "remote-tier")]
#[derive(Clone)]
pub(crate) struct Secret(pub(crate) String);

#[cfg(feature = "remote-tier")]
impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("(not recorded)")
    }
}
