//! One call of [`Build::compile`](crate::Build::compile): what it
//! resolves before compiling (the compiler, the archs, the PTX slot, the
//! cache), then the pipeline: compile every (file, arch), link each group,
//! write the fatbins and the module.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cuda_compile::{Compiler, Dependencies, HostCode, Program, Target};
use cuda_link::{Arch, LinkCache, LinkTarget, ObjectCode, PtxIsa};

use crate::archs::{parse_arch, resolve_archs};
use crate::build::{Build, Ptx, PtxIsaChoice, Route};
use crate::built::Built;
use crate::error::BuildError;
use crate::nvcc;
use crate::store::open_cache;

/// One call of [`Build::compile`]: what it resolved before compiling.
pub(crate) struct Session<'a> {
    pub(crate) build: &'a Build,
    pub(crate) name: &'a str,
    pub(crate) out_dir: PathBuf,
    /// The build's flags as nvcc reads them, read once.
    pub(crate) flags: cuda_compile::Flags,
    /// `None` when NVRTC is missing and nvcc stands in.
    pub(crate) compiler: Option<Compiler>,
    /// nvcc, where it is found: for host-code files, and the fallback.
    pub(crate) nvcc: Option<PathBuf>,
    /// The files NVRTC compiles into the fatbin.
    pub(crate) device_files: Vec<PathBuf>,
    /// The files nvcc compiles into `lib{name}.a`.
    pub(crate) host_files: Vec<PathBuf>,
    pub(crate) archs: Vec<Arch>,
    pub(crate) ptx: Option<Arch>,
    /// The PTX slot's ISA, and whether a refusal by ptxas is an error.
    pub(crate) ptx_isa: Option<(PtxIsa, bool)>,
    pub(crate) cache: Arc<LinkCache>,
    /// NVRTC's warnings printed so far: each once, not once per arch.
    pub(crate) warned: std::sync::Mutex<std::collections::HashSet<String>>,
}

/// The threads one NVRTC compile optimises on (`--split-compile`). The
/// same on every machine: the cubin records the count (NVRTC passes it to
/// ptxas), so a build's output, and its cache key, do not depend on the
/// cores; and a machine of many cores does not run cores² threads at
/// once. On two cores, 4 threads compile candle's `quantized.cu` as fast
/// as 2 (9.99 s against 9.81 s; 16.8 s without).
pub(crate) const SPLIT_THREADS: u32 = 4;

/// What one NVRTC compile of a file makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Unit {
    /// LTO-IR for an arch, which nvJitLink links with the other files of
    /// its group into each slot.
    Ltoir(Arch),
    /// A slot's code itself, for a file alone in its group: a cubin or
    /// PTX straight from NVRTC, whole-program as nvcc compiles a file, with
    /// no link after it.
    Slot(LinkTarget),
    /// The cubin slot of an arch and the PTX slot of the same arch, from
    /// one compile (nvcc's `code=[sm_80,compute_80]`), for a file alone.
    CubinAndPtx(Arch),
}

impl Unit {
    /// The arch NVRTC compiles for.
    pub(crate) fn arch(self) -> Arch {
        match self {
            Unit::Ltoir(arch) | Unit::CubinAndPtx(arch) => arch,
            Unit::Slot(target) => target.arch(),
        }
    }

    /// What errors name: the arch (`sm_90`), or the slot (`compute_90`).
    pub(crate) fn name(self) -> String {
        match self {
            Unit::Ltoir(arch) => arch.to_string(),
            Unit::Slot(target) => target.to_string(),
            Unit::CubinAndPtx(arch) => format!("{arch} and {}", arch.compute()),
        }
    }

    /// What NVRTC writes (a [`Unit::CubinAndPtx`] keeps the PTX too).
    pub(crate) fn target(self) -> Target {
        match self {
            Unit::Ltoir(_) => Target::Ltoir,
            Unit::Slot(LinkTarget::Cubin(_)) | Unit::CubinAndPtx(_) => Target::Cubin,
            Unit::Slot(LinkTarget::Ptx(_)) => Target::Ptx,
        }
    }

    /// Whether this compile makes `target`'s slot code.
    pub(crate) fn makes(self, target: LinkTarget) -> bool {
        match self {
            Unit::Slot(slot) => slot == target,
            Unit::CubinAndPtx(arch) => target.arch() == arch,
            Unit::Ltoir(_) => false,
        }
    }
}

/// One (file, unit) compile's output.
pub(crate) struct Compiled {
    pub(crate) code: ObjectCode,
    /// A cubin's PTX, from [`Unit::CubinAndPtx`].
    pub(crate) ptx: Option<ObjectCode>,
    pub(crate) from_cache: bool,
    /// What NVRTC's compile read of the program's files; `None` from nvcc.
    pub(crate) dependencies: Option<Dependencies>,
}

/// The build's files for NVRTC and for nvcc: as [`Build::route`] says,
/// else as `is_host_code` says.
fn split(
    build: &Build,
    is_host_code: impl Fn(&Path) -> bool,
) -> Result<(Vec<PathBuf>, Vec<PathBuf>), BuildError> {
    // `./a.cu` and `a.cu` are one file.
    let same = |a: &Path, b: &Path| {
        a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
    };
    if let Some((file, _)) = build
        .routes
        .iter()
        .find(|(routed, _)| !build.files.iter().any(|f| same(f, routed)))
    {
        return Err(BuildError::UnknownRoute(file.clone()));
    }
    let (mut device, mut host) = (Vec::new(), Vec::new());
    for file in &build.files {
        let given = build.routes.iter().find(|(f, _)| same(f, file));
        let to_nvcc = match given.map(|(_, route)| *route) {
            Some(Route::Nvcc) => true,
            Some(Route::Nvrtc) => false,
            None => is_host_code(file),
        };
        match to_nvcc {
            true => host.push(file.clone()),
            false => device.push(file.clone()),
        }
    }
    Ok((device, host))
}

impl<'a> Session<'a> {
    pub(crate) fn new(
        build: &'a Build,
        name: &'a str,
        out_dir: PathBuf,
    ) -> Result<Self, BuildError> {
        // The flags are read once here, so that one that cannot be read
        // fails the build before anything is compiled.
        let flags = cuda_compile::Flags::parse(&build.flags, cuda_compile::Dialect::Nvcc)
            .map_err(BuildError::Flag)?;
        let cache = Arc::new(open_cache(build));
        let nvcc = nvcc::find();
        let pch_dir = out_dir.join(format!("{name}.pch"));
        // NVRTC's files of an earlier build are of no use to this process.
        let _ = std::fs::remove_dir_all(&pch_dir);
        let mut no_nvrtc = None;
        let compiler = match Compiler::new() {
            Ok(compiler) => {
                let mut compiler = compiler.with_cache(Arc::clone(&cache));
                // Keys name the crate's files relative to its root, so
                // that checkouts at other paths share entries.
                if let Some(root) = crate::env::var_os("CARGO_MANIFEST_DIR") {
                    compiler = compiler.with_base_dir(PathBuf::from(root));
                }
                Some(match build.precompiled_headers {
                    true => compiler.with_precompiled_headers(pch_dir),
                    false => compiler,
                })
            }
            // Every file may be host code, for nvcc: said after the split.
            Err(error) if nvcc.is_some() => {
                no_nvrtc = Some(error);
                None
            }
            Err(error) => return Err(BuildError::NoNvrtc(Box::new(error))),
        };
        // Without NVRTC, which finds the headers, the verdict reads each
        // file's own text; every file must then be nvcc's (or the
        // fallback's), said before what only NVRTC would answer (its archs).
        let split_without_nvrtc = match no_nvrtc {
            Some(error) => {
                let in_source = |file: &Path| {
                    Program::from_path(file).is_ok_and(|p| HostCode::in_source(&p).is_some())
                };
                let (device, host) = split(build, in_source)?;
                if !device.is_empty() && !build.nvcc_fallback {
                    return Err(BuildError::NoNvrtc(Box::new(error)));
                }
                Some((device, host))
            }
            None => None,
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
                .map(|lib| lib.version().0)
                .or_else(|| compiler.as_ref().map(|c| c.nvrtc().version().0))
                .and_then(PtxIsa::first_of_cuda)
                .map(|isa| (isa, false)),
        };
        let mut session = Session {
            build,
            name,
            out_dir,
            flags,
            compiler,
            nvcc,
            device_files: Vec::new(),
            host_files: Vec::new(),
            archs,
            ptx,
            ptx_isa,
            cache,
            warned: Default::default(),
        };
        match split_without_nvrtc {
            Some((device, host)) => (session.device_files, session.host_files) = (device, host),
            None => session.route()?,
        }
        Ok(session)
    }

    /// The slots of each fatbin: a cubin per arch, then the PTX.
    pub(crate) fn targets(&self) -> Vec<LinkTarget> {
        let mut targets: Vec<LinkTarget> =
            self.archs.iter().map(|&a| LinkTarget::Cubin(a)).collect();
        targets.extend(self.ptx.map(LinkTarget::Ptx));
        targets
    }

    /// What NVRTC compiles: each slot's code of a file alone in its group
    /// (one compile for a cubin and the PTX of one arch); LTO-IR per arch
    /// of files linked together.
    pub(crate) fn units(&self) -> Vec<(PathBuf, Unit)> {
        // Flags that ask for relocatable code or LTO-IR (`-rdc=true`, `-dc`,
        // `-dlto`, in any spelling: read as the nvcc stage reads them) keep
        // the link: NVRTC's own cubin would be unlinked.
        let relocatable = self
            .archs
            .first()
            .or(self.ptx.as_ref())
            .is_some_and(|&arch| {
                let options = self.options(Unit::Slot(LinkTarget::Ptx(arch)));
                options.relocatable_device_code == Some(true) || options.link_time_optimization
            });
        let alone = (self.build.per_file || self.device_files.len() == 1) && !relocatable;
        let both = |arch: Arch| self.archs.contains(&arch) && self.ptx == Some(arch);
        let mut per_file: Vec<Unit> = match alone {
            true => self
                .targets()
                .into_iter()
                .map(|target| match target.arch() {
                    arch if both(arch) => Unit::CubinAndPtx(arch),
                    _ => Unit::Slot(target),
                })
                .collect(),
            false => self
                .targets()
                .into_iter()
                .map(|target| Unit::Ltoir(target.arch()))
                .collect(),
        };
        let mut seen = std::collections::HashSet::new();
        per_file.retain(|unit| seen.insert(*unit));
        self.device_files
            .iter()
            .flat_map(|file| per_file.iter().map(move |&unit| (file.clone(), unit)))
            .collect()
    }

    /// Splits the files between NVRTC and nvcc: as [`Build::route`]
    /// says, else by the host-code verdict, which runs before any compile
    /// (under `-default-device` NVRTC would compile a launcher as device
    /// code and drop it).
    fn route(&mut self) -> Result<(), BuildError> {
        let arch = self.archs.first().copied().or(self.ptx);
        let (device, host) = split(self.build, |file| self.is_host_code(file, arch))?;
        (self.device_files, self.host_files) = (device, host);
        Ok(())
    }

    /// The verdict: whether `file` holds host code NVRTC cannot compile.
    fn is_host_code(&self, file: &Path, arch: Option<Arch>) -> bool {
        let (Some(compiler), Some(arch)) = (&self.compiler, arch) else {
            return false;
        };
        Program::from_path(file)
            .ok()
            .and_then(|program| {
                HostCode::scan(compiler, &program, &self.options(Unit::Ltoir(arch)))
            })
            .is_some()
    }

    /// Says what the cache did: a shared store's failure as a cargo
    /// warning (the build went on without it), and the summary line.
    pub(crate) fn report_cache(&self, built: &Built) {
        if !self.build.cargo_metadata {
            return;
        }
        #[cfg(feature = "remote-tier")]
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

    /// What the build names in `rerun-if-changed`: each file's
    /// dependencies as its compile scanned them (`scanned`), else (nvcc's
    /// compile) as a scan of its includes finds them, else the file and
    /// the include folders.
    pub(crate) fn dependencies<'c>(
        &self,
        scanned: impl Fn(&Path) -> Option<&'c Dependencies>,
    ) -> Vec<PathBuf> {
        let cache_dir = Some(self.cache.dir());
        let mut found: Vec<PathBuf> = Vec::new();
        for file in &self.device_files {
            let watched = match scanned(file) {
                Some(dependencies) => Some(dependencies.to_watch(cache_dir)),
                None => self.compiler.as_ref().and_then(|compiler| {
                    let program = Program::from_path(file).ok()?;
                    let arch = self.archs.first().copied().or(self.ptx)?;
                    let options = self.options(Unit::Ltoir(arch));
                    compiler.dependencies(&program, &options).ok()
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
