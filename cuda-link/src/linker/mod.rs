//! [`Linker`]: one linker over nvJitLink and the driver's `cuLink*`.

#[cfg(feature = "cache")]
mod cached;
mod device;
mod driver;
mod error;
mod inputs;
#[cfg(unix)]
mod isolated;
mod link_target;
mod multi;
mod nvjitlink;

mod options;
mod settings;

use std::fmt;
use std::sync::Arc;

pub use device::DeviceContext;
pub use driver::current_device_arch;
pub use error::LinkError;
#[cfg(all(feature = "nvvm", unix))]
pub(crate) use isolated::compile_nvvm as compile_nvvm_isolated;
pub use link_target::{Gencode, GencodeError, LinkTarget};
pub use nvjitlink_sys::NvJitLink;
pub use options::{Backend, Isolation, LinkerOptions, OutputKind};

use crate::arch::Arch;
#[cfg(feature = "cache")]
use crate::cache::LinkCache;
use crate::kind::ObjectKind;
use crate::object_code::ObjectCode;
use cuda_driver_sys::log_text;

/// Backend handles (nvJitLink handles and `CUlinkState`s) open right now,
/// across all linkers. A link opens one and closes it on every path, so
/// this is zero whenever no link is running: a leak check for tests.
pub fn live_handles() -> usize {
    LIVE_HANDLES.load(std::sync::atomic::Ordering::SeqCst)
}

static LIVE_HANDLES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Counts one open backend handle for as long as it lives; each backend's
/// handle guard holds one.
struct LiveHandle(());

impl LiveHandle {
    fn new() -> Self {
        LIVE_HANDLES.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        LiveHandle(())
    }
}

impl Drop for LiveHandle {
    fn drop(&mut self) {
        LIVE_HANDLES.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// An arch nvJitLink can be given: on a one-digit SM (`-arch=sm_9`) it
/// prints "Unknown arch name" and ends the process, its caller's too.
fn check_arch(arch: Arch) -> Result<(), LinkError> {
    if arch.sm >= 10 {
        return Ok(());
    }
    Err(LinkError::InvalidOption {
        option: "arch",
        detail: format!("sm_{} is no GPU architecture (sm_{}0?)", arch.sm, arch.sm),
    })
}

/// Option strings as C strings; one with a NUL byte is an invalid `option`.
fn c_strings(
    strings: &[String],
    option: &'static str,
) -> Result<Vec<std::ffi::CString>, LinkError> {
    strings
        .iter()
        .map(|s| std::ffi::CString::new(s.as_str()))
        .collect::<Result<_, _>>()
        .map_err(|e| LinkError::InvalidOption {
            option,
            detail: e.to_string(),
        })
}

/// An input's name as a C string for the backend's logs; a NUL in it
/// becomes `?` rather than failing the link.
fn c_input_name(input: &ObjectCode) -> std::ffi::CString {
    std::ffi::CString::new(input.name().replace('\0', "?")).unwrap_or_default()
}

/// The backend a linker resolved to.
#[derive(Clone)]
enum Resolved {
    NvJitLink(Arc<NvJitLink>),
    Driver(&'static cuda_driver_sys::Driver),
}

/// Links device code of any kind into a cubin, PTX or LTO-IR.
///
/// Inputs are checked as they are added; the backend handle lives only
/// inside [`link`](Self::link) and is released on every path. A `Linker` is
/// `Send`: run many in parallel threads, one linker per thread. nvJitLink
/// handles are independent, and the driver backend links in the calling
/// thread's current context.
///
/// ```no_run
/// use cuda_link::{Arch, Linker, LinkerOptions, ObjectCode, OutputKind};
///
/// let mut linker = Linker::new(LinkerOptions::for_arch(Arch::sm(90)))?;
/// linker.add(&ObjectCode::from_path("kernels.ptx")?)?;
/// linker.add(&ObjectCode::from_path("libcudadevrt.a")?)?;
/// let cubin = linker.link(OutputKind::Cubin)?;
/// println!("{}", cubin.inspect()?);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Linker {
    options: LinkerOptions,
    backend: Resolved,
    inputs: Vec<ObjectCode>,
    /// The inputs' strong definitions, for duplicate checks.
    definitions: inputs::Definitions,
    info_log: String,
    error_log: String,
    /// Who runs a multi-arch link's per-target links.
    executor: Arc<dyn crate::executor::Executor>,
    #[cfg(feature = "cache")]
    cache: Option<Arc<LinkCache>>,
    /// The backend's identity for cache keys, computed once per linker:
    /// it costs a `stat`, and for a library the system loader found, a
    /// read of `/proc/self/maps`.
    #[cfg(feature = "cache")]
    backend_identity: std::sync::OnceLock<String>,
    /// The libNVVM that compiles NVVM IR inputs, when given.
    #[cfg(feature = "nvvm")]
    pub(crate) nvvm: Option<Arc<nvvm_sys::Nvvm>>,
}

impl fmt::Debug for Linker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Linker")
            .field("backend", &self.backend_name())
            .field("options", &self.options)
            .field(
                "inputs",
                &self.inputs.iter().map(ObjectCode::name).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl Linker {
    /// A linker with the backend `options.backend` picks.
    pub fn new(options: LinkerOptions) -> Result<Self, LinkError> {
        // What can be known without a driver is reported before loading one.
        if options.backend == Backend::Driver {
            options.check_driver_options()?;
        }
        let backend = match options.backend {
            Backend::NvJitLink => Resolved::NvJitLink(Arc::clone(NvJitLink::global()?)),
            Backend::Driver => Resolved::Driver(cuda_driver_sys::Driver::global()?),
            Backend::Auto => match NvJitLink::global() {
                Ok(lib) => Resolved::NvJitLink(Arc::clone(lib)),
                Err(nvjitlink) => match cuda_driver_sys::Driver::global() {
                    Ok(driver) => Resolved::Driver(driver),
                    Err(driver) => return Err(LinkError::NoBackend { nvjitlink, driver }),
                },
            },
        };
        Self::from_parts(options, backend)
    }

    /// A linker on this very nvJitLink, e.g. a specific major.
    pub fn with_nvjitlink(
        library: Arc<NvJitLink>,
        mut options: LinkerOptions,
    ) -> Result<Self, LinkError> {
        options.backend = Backend::NvJitLink;
        Self::from_parts(options, Resolved::NvJitLink(library))
    }

    fn from_parts(options: LinkerOptions, backend: Resolved) -> Result<Self, LinkError> {
        Ok(Linker {
            options,
            backend,
            inputs: Vec::new(),
            definitions: inputs::Definitions::default(),
            info_log: String::new(),
            error_log: String::new(),
            executor: Arc::new(crate::executor::ThreadPerJob),
            #[cfg(feature = "cache")]
            cache: None,
            #[cfg(feature = "cache")]
            backend_identity: std::sync::OnceLock::new(),
            #[cfg(feature = "nvvm")]
            nvvm: None,
        })
    }

    /// The PTX ISA of the first driver of this backend's CUDA release
    /// (nvJitLink 13.x: 9.0, the ISA CUDA 13.0's driver JIT-compiles):
    /// the floor to lower PTX output to, as cuda-build does by default,
    /// so that every driver of the release loads it. `None` for the driver
    /// backend, whose own PTX it takes as it is.
    pub fn release_ptx_isa(&self) -> Option<crate::PtxIsa> {
        match &self.backend {
            Resolved::NvJitLink(lib) => crate::PtxIsa::first_of_cuda(lib.version().0),
            Resolved::Driver(_) => None,
        }
    }

    /// `"nvJitLink 13.5"` or `"driver 13000"`: the backend and its version.
    pub fn backend_name(&self) -> String {
        match &self.backend {
            Resolved::NvJitLink(lib) => format!("nvJitLink {}", lib.version_string()),
            Resolved::Driver(driver) => match driver.version() {
                Ok(version) => format!("driver {version}"),
                Err(_) => "driver".to_owned(),
            },
        }
    }

    /// The backend in use.
    pub fn backend(&self) -> Backend {
        match self.backend {
            Resolved::NvJitLink(_) => Backend::NvJitLink,
            Resolved::Driver(_) => Backend::Driver,
        }
    }

    /// The options.
    pub fn options(&self) -> &LinkerOptions {
        &self.options
    }

    /// Adds an input. Refused: an executable cubin anywhere in it (nvJitLink
    /// would drop its kernels), a strong symbol an earlier input already
    /// defines, and LTO-IR on the driver backend.
    pub fn add(&mut self, input: &ObjectCode) -> Result<&mut Self, LinkError> {
        let _phase = phase!("add");
        Self::admit(self.backend(), &mut self.definitions, input)?;
        self.inputs.push(input.clone());
        Ok(self)
    }

    /// The checks of [`add`](Self::add) for `input`, after the inputs
    /// whose definitions are in `definitions`.
    fn admit(
        backend: Backend,
        definitions: &mut inputs::Definitions,
        input: &ObjectCode,
    ) -> Result<(), LinkError> {
        let facts = input.link_facts()?;
        if input.kind() == ObjectKind::NvvmIr {
            if !cfg!(feature = "nvvm") {
                return Err(LinkError::NvvmIrNeedsNvvm {
                    input: input.name().to_owned(),
                });
            }
            if backend == Backend::Driver {
                return Err(LinkError::LtoirNeedsNvJitLink {
                    input: input.name().to_owned(),
                });
            }
        }
        if backend == Backend::Driver && !facts.ltoir_arches.is_empty() {
            return Err(LinkError::LtoirNeedsNvJitLink {
                input: input.name().to_owned(),
            });
        }
        definitions.admit(input)
    }

    /// Everything a link of `inputs` with `options` would refuse that needs
    /// no backend library: invalid or unsupported options, and every input
    /// [`add`](Self::add) refuses. With `Backend::Auto`, the checks are
    /// those of nvJitLink. Lets a tool report these on a machine without
    /// the driver or nvJitLink.
    pub fn check(options: &LinkerOptions, inputs: &[ObjectCode]) -> Result<(), LinkError> {
        let targets = options.targets.iter().map(|target| target.arch());
        options
            .arch
            .into_iter()
            .chain(targets)
            .try_for_each(check_arch)?;
        if options.backend == Backend::Driver {
            options.check_driver_options()?;
        }
        let mut definitions = inputs::Definitions::default();
        for input in inputs {
            Self::admit(options.backend, &mut definitions, input)?;
        }
        Ok(())
    }

    /// Adds several inputs, stopping at the first refused one.
    pub fn add_many<'a>(
        &mut self,
        inputs: impl IntoIterator<Item = &'a ObjectCode>,
    ) -> Result<&mut Self, LinkError> {
        for input in inputs {
            self.add(input)?;
        }
        Ok(self)
    }

    /// The inputs added so far.
    pub fn inputs(&self) -> &[ObjectCode] {
        &self.inputs
    }

    /// The info log of the last [`link`](Self::link).
    pub fn info_log(&self) -> &str {
        &self.info_log
    }

    /// The error log of the last [`link`](Self::link).
    pub fn error_log(&self) -> &str {
        &self.error_log
    }

    /// Whether a link now would use LTO: as set, or because an input
    /// carries LTO-IR (bare, or in an object, archive or fatbin) for the
    /// target arch, as set or from the current context. With neither, no
    /// link can run; this then says whether any input carries LTO-IR.
    pub fn uses_lto(&self) -> bool {
        match target(&self.options, &self.inputs, driver::current_device_arch) {
            Ok(target) => target.lto,
            Err(_) => self.options.link_time_optimization.unwrap_or_else(|| {
                self.inputs
                    .iter()
                    .filter_map(|input| input.link_facts().ok())
                    .any(|facts| !facts.ltoir_arches.is_empty())
            }),
        }
    }

    /// The link's target and nvJitLink's flags for `output`.
    fn flags_for(&self, output: OutputKind) -> Result<(Target, Vec<String>), LinkError> {
        let _phase = phase!("options");
        let target = target(&self.options, &self.inputs, driver::current_device_arch)?;
        let flags = self
            .options
            .nvjitlink_flags(target.arch, target.lto, output);
        Ok((target, flags))
    }

    /// Links every input into `output`.
    ///
    /// # Errors
    /// [`LinkError::NoInputs`]; [`LinkError::OutputNeedsLto`] for PTX or
    /// LTO-IR output without LTO; [`LinkError::MissingArch`] with no arch
    /// and no current context; [`LinkError::NvJitLink`] or
    /// [`LinkError::Driver`] with the backend's logs when the link fails
    /// (undefined symbols, bad options); [`LinkError::Crashed`] or
    /// [`LinkError::TimedOut`] when an isolated link's worker dies or runs
    /// past its deadline.
    ///
    /// ```no_run
    /// use cuda_link::{Arch, LinkError, Linker, LinkerOptions, ObjectCode, OutputKind};
    ///
    /// let mut linker = Linker::new(LinkerOptions::for_arch(Arch::sm(90)))?;
    /// linker.add(&ObjectCode::from_path("kernels.ptx")?)?;
    /// match linker.link(OutputKind::Cubin) {
    ///     Ok(cubin) => cubin.write_to("kernels.cubin")?,
    ///     Err(LinkError::NvJitLink { error_log, .. }) => eprintln!("{error_log}"),
    ///     Err(other) => return Err(other.into()),
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn link(&mut self, output: OutputKind) -> Result<ObjectCode, LinkError> {
        let _phase = phase!("link");
        let linked = self.link_once(output)?;
        match self.options.ptx_isa {
            Some(isa) if output == OutputKind::Ptx => self.lower_ptx(linked, isa),
            _ => Ok(linked),
        }
    }

    /// PTX made elsewhere (NVRTC's) as [`link`](Self::link) returns its
    /// own: its `.version` lowered to [`LinkerOptions::ptx_isa`] where it
    /// states a newer one, once ptxas has assembled the lowered text for
    /// this linker's arch. Without `ptx_isa`, or for PTX that states no
    /// newer ISA, `ptx` comes back as it is, and nvJitLink is not called.
    ///
    /// # Errors
    /// [`LinkError::PtxIsaTooLow`] with ptxas's words when the code needs
    /// the newer ISA; [`LinkError::Input`] when `ptx` is not PTX;
    /// otherwise as [`link`](Self::link).
    pub fn lower_ptx_isa(&self, ptx: ObjectCode) -> Result<ObjectCode, LinkError> {
        match self.options.ptx_isa {
            Some(isa) => self.lower_ptx(ptx, isa),
            None => Ok(ptx),
        }
    }

    /// `ptx` with its `.version` lowered to `isa` when it states a newer
    /// one, after ptxas (inside nvJitLink) has assembled the lowered text
    /// for the link's arch, unoptimised: ptxas refuses what the older ISA
    /// lacks. Any other failure of that check (a crash, a deadline) is
    /// itself.
    fn lower_ptx(&self, ptx: ObjectCode, isa: crate::PtxIsa) -> Result<ObjectCode, LinkError> {
        let Some((stated, lowered)) = crate::ptx::lower_isa(ptx.as_bytes(), isa)
            .map_err(|reason| crate::ObjectError::new(ptx.name(), reason))?
        else {
            return Ok(ptx);
        };
        let lowered = ObjectCode::from_ptx(lowered, ptx.name())?;
        let mut options = self.options.clone();
        options.targets.clear();
        options.ptx = false;
        options.ptx_isa = None;
        options.link_time_optimization = None;
        // ptxas refuses an ISA's missing features as it reads the text, at
        // any optimisation level; the check's cubin is thrown away, so it
        // is not optimised (ptxas -O0 takes about half the time).
        options.optimization_level = Some(0);
        options.ptxas_options.retain(|flag| !sets_opt_level(flag));
        options.extra_flags.retain(|flag| !sets_opt_level(flag));
        options.name = Some(format!("{} at PTX ISA {isa}", ptx.name()));
        let mut check = Linker::from_parts(options, self.backend.clone())?;
        // Through the cache: a rebuild's check is then a hit, not a
        // ptxas run per PTX slot.
        #[cfg(feature = "cache")]
        {
            check.cache = self.cache.clone();
        }
        check.add(&lowered)?;
        match check.link_once(OutputKind::Cubin) {
            Ok(_) => Ok(lowered),
            Err(error @ LinkError::NvJitLink { .. }) => Err(LinkError::PtxIsaTooLow {
                isa,
                stated: stated.to_string(),
                log: error.error_log().unwrap_or_default().trim().to_owned(),
            }),
            Err(other) => Err(other),
        }
    }

    /// One link, from the cache or the backend, as the options say.
    fn link_once(&mut self, output: OutputKind) -> Result<ObjectCode, LinkError> {
        if self.inputs.is_empty() {
            return Err(LinkError::NoInputs);
        }
        let (Target { arch, lto }, flags) = self.flags_for(output)?;
        check_arch(arch)?;
        if self.options.ptx && output != OutputKind::Ptx {
            return Err(LinkError::InvalidOption {
                option: "ptx",
                detail: format!(
                    "ptx = true asks for PTX output, but link was called for {output:?}"
                ),
            });
        }
        match output {
            OutputKind::Ptx if !lto => return Err(LinkError::OutputNeedsLto { output: "PTX" }),
            OutputKind::Ltoir if !lto => {
                return Err(LinkError::OutputNeedsLto { output: "LTO-IR" });
            }
            _ => {}
        }
        self.info_log.clear();
        self.error_log.clear();
        let (kind, default_name) = match output {
            OutputKind::Cubin => (ObjectKind::Cubin, "linked.cubin"),
            OutputKind::Ptx => (ObjectKind::Ptx, "linked.ptx"),
            OutputKind::Ltoir => (ObjectKind::Ltoir, "linked.ltoir"),
        };
        let name = self
            .options
            .name
            .clone()
            .unwrap_or_else(|| default_name.to_owned());
        #[cfg(feature = "cache")]
        let cached = self.cache_entry(output, &flags);
        #[cfg(feature = "cache")]
        if let Some(code) = self.cache_hit(cached.as_ref(), kind, &name) {
            return Ok(code);
        }
        #[cfg(feature = "nvvm")]
        let lowered = self.lowered_nvvm_inputs(arch)?;
        #[cfg(feature = "nvvm")]
        let inputs = lowered.as_deref().unwrap_or(&self.inputs);
        #[cfg(not(feature = "nvvm"))]
        let inputs = &self.inputs;
        let result = match &self.backend {
            Resolved::NvJitLink(lib) => {
                if output == OutputKind::Ltoir && lib.version().0 < 13 {
                    return Err(LinkError::LtoirOutputNeedsNvJitLink13 {
                        version: lib.version_string(),
                    });
                }
                match self.options.isolation {
                    Isolation::InProcess => nvjitlink::link(lib, &flags, inputs, output),
                    #[cfg(unix)]
                    Isolation::Process {
                        timeout,
                        memory_limit,
                    } => isolated::link(lib, &flags, inputs, output, timeout, memory_limit),
                    #[cfg(not(unix))]
                    Isolation::Process { .. } => {
                        return Err(LinkError::UnsupportedOption {
                            option: "isolation",
                            backend: "nvJitLink on this platform",
                        });
                    }
                }
            }
            Resolved::Driver(driver) => {
                self.options.check_driver_support(output)?;
                driver::link(driver, &self.options, arch, lto, inputs)
            }
        };
        let (bytes, logs) = match result {
            Ok(done) => done,
            Err(error) => {
                self.error_log = error.error_log().unwrap_or_default().to_owned();
                self.info_log = error.info_log().unwrap_or_default().to_owned();
                return Err(error);
            }
        };
        (self.info_log, self.error_log) = logs;
        let linked = {
            let _phase = phase!("output");
            ObjectCode::with_kind(kind, bytes, name)?
        };
        if output != OutputKind::Ltoir && self.options.kernels_used.is_empty() {
            kernels_kept(&self.inputs, &linked)?;
        }
        #[cfg(feature = "cache")]
        if let Some(at) = &cached {
            self.cache_store(at, &linked);
        }
        Ok(linked)
    }
}
/// Checks that `linked` holds every kernel the inputs define that can be
/// read: NVVM IR's annotated kernels, a cubin's and a PTX's entries
/// (LTO-IR and bitcode name none; a fatbin's slots are the link's to
/// choose among).
fn kernels_kept(inputs: &[ObjectCode], linked: &ObjectCode) -> Result<(), LinkError> {
    let defined: Vec<(String, &str)> = inputs
        .iter()
        .filter(|input| {
            matches!(
                input.kind(),
                ObjectKind::Cubin | ObjectKind::Ptx | ObjectKind::NvvmIr
            )
        })
        .filter_map(|input| Some((input.inspect().ok()?, input.name())))
        .flat_map(|(info, name)| {
            let kernels: Vec<String> = info.kernels().into_iter().map(str::to_owned).collect();
            kernels.into_iter().map(move |kernel| (kernel, name))
        })
        .collect();
    if defined.is_empty() {
        return Ok(());
    }
    let info = linked.inspect()?;
    let kept: std::collections::HashSet<&str> = info.kernels().into_iter().collect();
    let missing: Vec<(String, String)> = defined
        .into_iter()
        .filter(|(kernel, _)| !kept.contains(kernel.as_str()))
        .map(|(kernel, input)| (kernel, input.to_owned()))
        .collect();
    match missing.is_empty() {
        true => Ok(()),
        false => Err(LinkError::KernelsLost { missing }),
    }
}

/// The target of one link, decided once: both backends, the output checks
/// and the cache key get this one answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Target {
    /// As set, or the current context's device's.
    arch: Arch,
    /// As set, or whether an input carries LTO-IR for `arch`.
    lto: bool,
}

/// Resolves the arch first (as set, else `context_arch`), then LTO from
/// that arch, so the two cannot disagree.
fn target(
    options: &LinkerOptions,
    inputs: &[ObjectCode],
    context_arch: impl FnOnce() -> Option<Arch>,
) -> Result<Target, LinkError> {
    let arch = match options.arch {
        Some(arch) => arch,
        None => context_arch().ok_or(LinkError::MissingArch)?,
    };
    let lto = options.link_time_optimization.unwrap_or_else(|| {
        // Read when each input was added, so no error is left here.
        inputs
            .iter()
            .filter_map(|input| input.link_facts().ok())
            .any(|facts| facts.has_ltoir_for(&arch))
    });
    Ok(Target { arch, lto })
}

/// Logs of a successful link: `(info, error)`.
pub(crate) type Logs = (String, String);

/// Whether `flag` sets nvJitLink's or ptxas's optimisation level (`-O3`,
/// `--opt-level=3`), which the PTX ISA check sets itself.
fn sets_opt_level(flag: &str) -> bool {
    let flag = flag.trim_start_matches('-');
    let level = flag.strip_prefix('O').is_some_and(|rest| {
        let rest = rest.strip_prefix('=').unwrap_or(rest);
        !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit())
    });
    level || flag.starts_with("opt-level")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opt_levels_are_told_from_other_flags() {
        for level in ["-O3", "-O0", "--O=2", "--opt-level=3", "-opt-level"] {
            assert!(sets_opt_level(level), "{level}");
        }
        for other in [
            "-Ofc=max",
            "-Ofast-compile=max",
            "-O",
            "-lineinfo",
            "-maxrregcount=32",
        ] {
            assert!(!sets_opt_level(other), "{other}");
        }
    }

    /// `{:#}` of anyhow, or any report that walks `source()`, prints each
    /// cause once.
    #[test]
    fn sources_print_once() {
        let load = nvjitlink_sys::LoadError::Open {
            path: "/nowhere/libnvJitLink.so.13".into(),
            reason: "no such file".into(),
        };
        let error = LinkError::from(load);
        let mut chain = vec![error.to_string()];
        let mut source = std::error::Error::source(&error);
        while let Some(cause) = source {
            chain.push(cause.to_string());
            source = cause.source();
        }
        let report = chain.join(": ");
        assert_eq!(
            report,
            "nvJitLink is not available: cannot open /nowhere/libnvJitLink.so.13: no such file"
        );
    }

    /// With the arch from the current context, LTO follows that arch: a
    /// fatbin's sm_90 LTO-IR does not turn LTO on for an sm_80 device, and
    /// the flags nvJitLink gets and the driver's answer are the same one.
    #[test]
    fn lto_is_decided_once_from_the_resolved_arch() {
        let fatbin = crate::fatbin::tests::build(&[(8, 90, 0, b"LTO-IR for sm_90")]);
        let inputs = [ObjectCode::from_fatbin(fatbin, "sm90-ir.fatbin").unwrap()];
        let options = LinkerOptions::default();
        let on_sm80 = target(&options, &inputs, || Some(Arch::sm(80))).unwrap();
        assert_eq!(
            on_sm80,
            Target {
                arch: Arch::sm(80),
                lto: false
            }
        );
        let flags = options.nvjitlink_flags(on_sm80.arch, on_sm80.lto, OutputKind::Cubin);
        assert_eq!(flags, ["-arch=sm_80"]);
        let on_sm90 = target(&options, &inputs, || Some(Arch::sm(90))).unwrap();
        assert!(on_sm90.lto);
        assert!(matches!(
            target(&options, &inputs, || None),
            Err(LinkError::MissingArch)
        ));
        let forced = options.link_time_optimization(false);
        assert!(!target(&forced, &inputs, || Some(Arch::sm(90))).unwrap().lto);
    }

    #[test]
    fn linker_is_send() {
        fn assert_send<T: Send>() {}
        assert_send::<Linker>();
        assert_send::<LinkError>();
    }
}
