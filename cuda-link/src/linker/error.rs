//! [`LinkError`]: why a link failed.

use crate::error::log_suffix;
use crate::error::{ObjectError, Report};

/// Why a link failed. Backend failures carry both logs and the input names.
/// `Debug` prints the message and its causes, as `Display` does them.
#[derive(Clone, thiserror::Error)]
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
    /// NVVM IR given to a linker built without the `nvvm` feature, which
    /// compiles it with libNVVM.
    #[error("{input}: NVVM IR needs cuda-link's `nvvm` feature, which compiles it with libNVVM")]
    NvvmIrNeedsNvvm {
        /// The input's name.
        input: String,
    },
    /// libNVVM, which compiles NVVM IR inputs, could not be loaded.
    #[cfg(feature = "nvvm")]
    #[error("libNVVM, which compiles the NVVM IR input {input}, is not available")]
    NvvmUnavailable {
        /// The input's name.
        input: String,
        /// Why.
        #[source]
        error: nvvm_sys::LoadError,
    },
    /// No libdevice beside libNVVM, for NVVM IR that calls it.
    #[error(
        "{input} calls libdevice (`__nv_*`), and there is no nvvm/libdevice/libdevice.10.bc \
         beside libNVVM at {library}"
    )]
    NoLibdevice {
        /// The input's name.
        input: String,
        /// libNVVM's path.
        library: String,
    },
    /// libNVVM failed on an NVVM IR input, or left it unresolved.
    #[cfg(feature = "nvvm")]
    #[error("compiling the NVVM IR input {input} to LTO-IR for {arch}")]
    Nvvm {
        /// The input's name.
        input: String,
        /// The link's arch.
        arch: crate::Arch,
        /// What went wrong.
        #[source]
        failure: crate::nvvm_program::NvvmFailure,
    },
    /// PTX or LTO-IR output without LTO.
    #[error(
        "{output} output requires link-time optimization (LTO-IR inputs or link_time_optimization = true)"
    )]
    OutputNeedsLto {
        /// `"PTX"` or `"LTO-IR"`.
        output: &'static str,
    },
    /// PTX lowered to [`LinkerOptions::ptx_isa`] that ptxas refuses: the
    /// code needs the newer ISA nvJitLink wrote.
    ///
    /// [`LinkerOptions::ptx_isa`]: crate::LinkerOptions::ptx_isa
    #[error("the linked PTX states .version {stated}; lowered to {isa}, ptxas refuses it: {log}")]
    PtxIsaTooLow {
        /// The ISA asked for.
        isa: crate::PtxIsa,
        /// The ISA nvJitLink wrote.
        stated: String,
        /// ptxas's words, from nvJitLink's error log.
        log: String,
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
    /// The link's output lacks kernels its inputs define (NVVM IR's
    /// annotated kernels, a cubin's or PTX's entries): LTO dropped them.
    /// A link that names the kernels it keeps
    /// ([`kernels_used`](crate::LinkerOptions::kernels_used)) is not
    /// checked so.
    #[error(
        "the link's output lacks {} the inputs define: {}; LTO keeps an NVVM IR kernel only \
         where `@llvm.used` names it (text IR is marked so before it is lowered; bitcode is not), \
         or name the kernels to keep with kernels_used (`--kernels-used`)",
        if .missing.len() == 1 { "a kernel" } else { "kernels" },
        .missing.iter().map(|(kernel, input)| format!("`{kernel}` ({input})")).collect::<Vec<_>>().join(", ")
    )]
    KernelsLost {
        /// Each kernel lost, with the input that defines it.
        missing: Vec<(String, String)>,
    },
    /// `link` with no inputs.
    #[error("nothing to link: add at least one input")]
    NoInputs,
    /// [`link_fatbin`](crate::Linker::link_fatbin) without
    /// [`targets`](crate::LinkerOptions::targets).
    #[error("no targets to link for: set LinkerOptions::targets (sm_80, compute_90, ...)")]
    NoTargets,
    /// An [`Executor`](crate::Executor) returned without running a
    /// target's link.
    #[error("the executor returned without running this link")]
    NotRun,
    /// One target of a multi-arch link failed.
    #[error("linking for {target} failed")]
    ForTarget {
        /// The target: `sm_90`, `compute_90`.
        target: String,
        /// Why.
        #[source]
        source: Box<LinkError>,
    },
    /// The per-target outputs could not be bundled.
    #[error("cannot bundle the fatbin")]
    Fatbin(#[from] crate::FatbinError),
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
    /// The isolated link's process died before it answered: nvJitLink
    /// crashed or aborted on an input's contents (see
    /// [`Isolation::Process`](crate::Isolation::Process)).
    #[error("the linker process {how} linking [{inputs}]", inputs = .inputs.join(", "))]
    Crashed {
        /// How it ended, e.g. `"was killed by SIGSEGV (segmentation fault)"`.
        how: String,
        /// Every input's name.
        inputs: Vec<String>,
    },
    /// The isolated link ran past its deadline and was killed.
    #[error("the link ran past its {timeout:?} deadline and was stopped, linking [{inputs}]", inputs = .inputs.join(", "))]
    TimedOut {
        /// The deadline.
        timeout: std::time::Duration,
        /// Every input's name.
        inputs: Vec<String>,
    },
    /// The isolated link's resident memory passed its limit, and the
    /// worker was stopped.
    #[error(
        "the link used more than its memory limit of {limit} bytes and was stopped, \
         linking [{inputs}]",
        inputs = .inputs.join(", ")
    )]
    MemoryLimit {
        /// The limit, in bytes.
        limit: u64,
        /// Every input's name.
        inputs: Vec<String>,
    },
    /// The child process of an isolated link could not be made, or its
    /// answer could not be read.
    #[error("cannot link in a child process: {detail}")]
    Isolation {
        /// What failed.
        detail: String,
    },
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

impl std::fmt::Debug for LinkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&Report(self), f)
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
