//! [`Linker`]: one linker over nvJitLink and the driver's `cuLink*`.

#[cfg(feature = "cache")]
mod cached;
mod device;
mod driver;
mod inputs;
mod nvjitlink;
mod options;

use std::fmt;
use std::sync::Arc;

pub use device::DeviceContext;
pub use nvjitlink_sys::NvJitLink;
pub use options::{Backend, LinkerOptions, OutputKind};

#[cfg(feature = "cache")]
use crate::cache::LinkCache;
use crate::{Arch, ObjectCode, ObjectError, ObjectKind};
use cuda_driver_sys::log_text;
pub(crate) use inputs::InputFacts;

/// Why a link failed. Backend failures carry both logs and the input names.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum LinkError {
    /// An input was refused before linking.
    #[error(transparent)]
    Input(#[from] ObjectError),
    /// nvJitLink could not be loaded; the source says why.
    #[error("nvJitLink is not available")]
    NvJitLinkUnavailable(#[from] nvjitlink_sys::LoadError),
    /// The driver could not be loaded; the source says why.
    #[error("the CUDA driver is not available")]
    DriverUnavailable(#[from] cuda_driver_sys::LoadError),
    /// Neither backend loads.
    #[error("no linker backend: nvJitLink: {nvjitlink}; driver: {driver}")]
    NoBackend {
        /// Why nvJitLink did not load.
        nvjitlink: nvjitlink_sys::LoadError,
        /// Why the driver did not load.
        driver: cuda_driver_sys::LoadError,
    },
    /// A symbol the operation needs is absent from the loaded library.
    #[error("symbol `{symbol}` is not available in the loaded {library}")]
    SymbolUnavailable {
        /// The library's display name.
        library: &'static str,
        /// The missing symbol.
        symbol: &'static str,
    },
    /// An option the backend cannot honour.
    #[error("option `{option}` is not supported by the {backend} backend")]
    UnsupportedOption {
        /// The `LinkerOptions` field.
        option: &'static str,
        /// The backend's name.
        backend: &'static str,
    },
    /// An option value that is not valid.
    #[error("invalid option `{option}`: {detail}")]
    InvalidOption {
        /// The `LinkerOptions` field.
        option: &'static str,
        /// What is wrong.
        detail: String,
    },
    /// No architecture given and no current context to take it from.
    #[error(
        "no target architecture: set LinkerOptions::arch (e.g. Arch::sm(90)); no current CUDA context to take it from"
    )]
    MissingArch,
    /// LTO-IR given to the driver backend.
    #[error(
        "{input}: LTO-IR input requires the nvJitLink backend; the driver's cuLink* cannot link it"
    )]
    LtoirNeedsNvJitLink {
        /// The input's name.
        input: String,
    },
    /// PTX or LTO-IR output without LTO.
    #[error(
        "{output} output requires link-time optimization (LTO-IR inputs or link_time_optimization = true)"
    )]
    OutputNeedsLto {
        /// `"PTX"` or `"LTO-IR"`.
        output: &'static str,
    },
    /// LTO-IR output from nvJitLink 12, which cannot produce it.
    #[error("LTO-IR output requires nvJitLink 13 or newer; the loaded one is {version}")]
    LtoirOutputNeedsNvJitLink13 {
        /// The loaded version.
        version: String,
    },
    /// Two inputs define the same strong (non-weak) symbol. nvJitLink 13
    /// would keep one, report it only on the process's stderr, and succeed.
    #[error("multiple definition of `{symbol}`: in {first} and in {second}")]
    DuplicateDefinition {
        /// The symbol.
        symbol: String,
        /// The input defining it first (with the archive member, if any).
        first: String,
        /// The input defining it again.
        second: String,
    },
    /// `link` with no inputs.
    #[error("nothing to link: add at least one input")]
    NoInputs,
    /// A device's primary context could not be made current.
    #[error("device {device}: {call} failed with {error}")]
    DeviceContext {
        /// The device ordinal.
        device: i32,
        /// The failing driver call.
        call: &'static str,
        /// What it returned.
        error: cuda_driver_sys::DriverError,
    },
    /// The driver backend without a current context.
    #[error("the driver backend needs a current CUDA context")]
    NoCurrentContext,
    /// nvJitLink returned an error.
    #[error("{call} failed with {error} linking [{inputs}]{}{}", log_suffix("error log", error_log), log_suffix("info log", info_log), inputs = .inputs.join(", "))]
    NvJitLink {
        /// The failing C function.
        call: &'static str,
        /// What it returned.
        error: nvjitlink_sys::NvJitLinkError,
        /// The input being added, if the failure was in `nvJitLinkAddData`.
        input: Option<String>,
        /// Every input's name.
        inputs: Vec<String>,
        /// nvJitLink's error log.
        error_log: String,
        /// nvJitLink's info log.
        info_log: String,
    },
    /// The driver's `cuLink*` returned an error.
    #[error("{call} failed with {error} linking [{inputs}]{}{}", log_suffix("error log", error_log), log_suffix("info log", info_log), inputs = .inputs.join(", "))]
    Driver {
        /// The failing C function.
        call: &'static str,
        /// What it returned.
        error: cuda_driver_sys::DriverError,
        /// The input being added, if the failure was in `cuLinkAddData`.
        input: Option<String>,
        /// Every input's name.
        inputs: Vec<String>,
        /// The JIT error log.
        error_log: String,
        /// The JIT info log.
        info_log: String,
    },
}

impl From<nvjitlink_sys::SymbolUnavailable> for LinkError {
    fn from(e: nvjitlink_sys::SymbolUnavailable) -> Self {
        LinkError::SymbolUnavailable {
            library: e.library,
            symbol: e.symbol,
        }
    }
}

impl From<cuda_driver_sys::SymbolUnavailable> for LinkError {
    fn from(e: cuda_driver_sys::SymbolUnavailable) -> Self {
        LinkError::SymbolUnavailable {
            library: e.library,
            symbol: e.symbol,
        }
    }
}

fn log_suffix(label: &str, log: &str) -> String {
    let log = log.trim_end();
    if log.is_empty() {
        String::new()
    } else {
        format!("\n{label}:\n{log}")
    }
}

impl LinkError {
    /// The backend's error log, when the backend failed.
    pub fn error_log(&self) -> Option<&str> {
        match self {
            LinkError::NvJitLink { error_log, .. } | LinkError::Driver { error_log, .. } => {
                Some(error_log)
            }
            _ => None,
        }
    }

    /// The backend's info log, when the backend failed.
    pub fn info_log(&self) -> Option<&str> {
        match self {
            LinkError::NvJitLink { info_log, .. } | LinkError::Driver { info_log, .. } => {
                Some(info_log)
            }
            _ => None,
        }
    }
}

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
    #[cfg(feature = "cache")]
    cache: Option<Arc<LinkCache>>,
    /// The backend's identity for cache keys, computed once per linker:
    /// it costs a `stat`, and for a library the system loader found, a
    /// read of `/proc/self/maps`.
    #[cfg(feature = "cache")]
    backend_identity: std::sync::OnceLock<String>,
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
            Backend::NvJitLink => Resolved::NvJitLink(NvJitLink::global()?),
            Backend::Driver => Resolved::Driver(cuda_driver_sys::Driver::global()?),
            Backend::Auto => match NvJitLink::global() {
                Ok(lib) => Resolved::NvJitLink(lib),
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
            #[cfg(feature = "cache")]
            cache: None,
            #[cfg(feature = "cache")]
            backend_identity: std::sync::OnceLock::new(),
        })
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
        if backend == Backend::Driver && !facts.ltoir_arches.is_empty() {
            return Err(LinkError::LtoirNeedsNvJitLink {
                input: input.name().to_owned(),
            });
        }
        definitions.admit(input, facts)
    }

    /// Everything a link of `inputs` with `options` would refuse that needs
    /// no backend library: invalid or unsupported options, and every input
    /// [`add`](Self::add) refuses. With `Backend::Auto`, the checks are
    /// those of nvJitLink. Lets a tool report these on a machine without
    /// the driver or nvJitLink.
    pub fn check(options: &LinkerOptions, inputs: &[ObjectCode]) -> Result<(), LinkError> {
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

    /// The target arch, as set or from the current context, and the final
    /// nvJitLink flag list for `output`.
    fn resolved_flags(&self, output: OutputKind) -> Result<(Arch, Vec<String>), LinkError> {
        let arch = match self.options.arch {
            Some(arch) => arch,
            None => driver::current_device_arch().ok_or(LinkError::MissingArch)?,
        };
        let lto = self.lto_for(Some(&arch));
        let flags = self.options.nvjitlink_flags(arch, lto, output);
        Ok((arch, flags))
    }

    /// Whether LTO is on: as set, or because an input carries LTO-IR (bare,
    /// or in an object, archive or fatbin) for the target arch; any LTO-IR
    /// when the arch comes from the current context.
    pub fn uses_lto(&self) -> bool {
        self.lto_for(self.options.arch.as_ref())
    }

    fn lto_for(&self, arch: Option<&Arch>) -> bool {
        self.options.link_time_optimization.unwrap_or_else(|| {
            // Read when each input was added, so no error is left here.
            self.inputs
                .iter()
                .filter_map(|input| input.link_facts().ok())
                .any(|facts| facts.has_ltoir_for(arch))
        })
    }

    /// Links every input into `output`.
    pub fn link(&mut self, output: OutputKind) -> Result<ObjectCode, LinkError> {
        if self.inputs.is_empty() {
            return Err(LinkError::NoInputs);
        }
        let lto = self.uses_lto();
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
        let (arch, flags) = self.resolved_flags(output)?;
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
        let result = match &self.backend {
            Resolved::NvJitLink(lib) => {
                if output == OutputKind::Ltoir && lib.version().0 < 13 {
                    return Err(LinkError::LtoirOutputNeedsNvJitLink13 {
                        version: lib.version_string(),
                    });
                }
                nvjitlink::link(lib, &flags, &self.inputs, output)
            }
            Resolved::Driver(driver) => {
                self.options.check_driver_support(output)?;
                driver::link(driver, &self.options, arch, lto, &self.inputs)
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
        let linked = ObjectCode::with_kind(kind, bytes, name)?;
        #[cfg(feature = "cache")]
        if let Some((cache, key)) = cached {
            cache.store(&key, linked.as_bytes(), &self.info_log);
        }
        Ok(linked)
    }
}
/// Logs of a successful link: `(info, error)`.
pub(crate) type Logs = (String, String);

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn linker_is_send() {
        fn assert_send<T: Send>() {}
        assert_send::<Linker>();
        assert_send::<LinkError>();
    }
}
