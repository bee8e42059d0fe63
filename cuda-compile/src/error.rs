//! [`CompileError`]: why a compile failed, with NVRTC's log.

use nvrtc_sys::NvrtcError;

/// Why a compile failed. NVRTC's log is carried where there is one, and
/// the program's name always.
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum CompileError {
    /// NVRTC could not be loaded.
    #[error("NVRTC is not available")]
    Load(#[from] nvrtc_sys::LoadError),
    /// The loaded NVRTC lacks a function this compile needs.
    #[error(transparent)]
    Missing(#[from] nvrtc_sys::SymbolUnavailable),
    /// The source does not compile: NVRTC's log says why.
    #[error(
        "{program} does not compile{}{}",
        cuda_link::log_suffix("NVRTC log", log),
        crate::wheels::missing_header_hint(log).map(|hint| format!("\n{hint}")).unwrap_or_default()
    )]
    Compilation {
        /// The program's name.
        program: String,
        /// NVRTC's log: errors and warnings, with line numbers.
        log: String,
    },
    /// An NVRTC call failed.
    #[error(
        "{call} failed with {error} for {program}{}",
        cuda_link::log_suffix("NVRTC log", log)
    )]
    Nvrtc {
        /// The C function.
        call: &'static str,
        /// What it returned.
        error: NvrtcError,
        /// The program's name.
        program: String,
        /// NVRTC's log, if it wrote one.
        log: String,
    },
    /// An option the loaded NVRTC is too old for. (An output it lacks, such
    /// as LTO-IR before 12.0, is [`CompileError::Missing`].)
    #[error(
        "{option} needs NVRTC {}.{} or newer; the loaded one is {}.{}",
        since.0, since.1, nvrtc.0, nvrtc.1
    )]
    Unsupported {
        /// The option's field name.
        option: &'static str,
        /// The oldest NVRTC that has it.
        since: (u32, u32),
        /// The loaded NVRTC.
        nvrtc: (u32, u32),
    },
    /// The loaded NVRTC does not know an option (NVRTC checks the command
    /// line before it compiles anything): a misspelling, an nvcc option
    /// NVRTC lacks, or one from a newer NVRTC.
    #[error(
        "NVRTC {}.{} does not know the option `{option}` (compiling {program})",
        nvrtc.0, nvrtc.1
    )]
    UnknownOption {
        /// The option as NVRTC quoted it.
        option: String,
        /// The loaded NVRTC.
        nvrtc: (u32, u32),
        /// The program's name.
        program: String,
    },
    /// No arch was set and no CUDA context is current to take one from.
    #[error(
        "no arch: set ProgramOptions::arch (e.g. Arch::sm(90)); without it the \
         current context's device decides, and none is current"
    )]
    MissingArch,
    /// An option's value cannot be passed (a NUL byte), or options that
    /// contradict each other.
    #[error("option {option}: {detail}")]
    InvalidOption {
        /// The option.
        option: &'static str,
        /// What is wrong with it.
        detail: String,
    },
    /// A raw option that cannot be read: an include folder or file named
    /// so that the scan and NVRTC could read it differently, a missing
    /// value.
    #[error(transparent)]
    Flag(#[from] FlagError),
    /// A name expression NVRTC did not lower: it names no `__global__`
    /// function or `__device__` variable of the program.
    #[error("{program}: the name expression `{expression}` names nothing NVRTC compiled")]
    NameExpression {
        /// The program's name.
        program: String,
        /// The expression.
        expression: String,
    },
    /// NVRTC's output failed our validation: NVRTC wrote something that is
    /// not what it was asked for.
    #[error("NVRTC's output for {program} is not valid")]
    Output {
        /// The program's name.
        program: String,
        /// What validation found.
        #[source]
        error: cuda_link::ObjectError,
    },
    /// libNVVM, which compiles NVVM IR, could not be loaded.
    #[error("libNVVM is not available")]
    NvvmUnavailable(#[from] cuda_link::nvvm::nvvm_sys::LoadError),
    /// libNVVM refused or failed an NVVM program, or left a function of it
    /// unresolved: the failure says which, with libNVVM's log.
    #[error("{program}: NVVM IR does not compile")]
    Nvvm {
        /// The program's name.
        program: String,
        /// What went wrong.
        #[source]
        failure: Box<cuda_link::nvvm::NvvmFailure>,
    },
    /// An NVVM program needs libdevice (a text module calls it, or
    /// `Libdevice::Always`), and none is beside libNVVM. Bitcode alone
    /// compiles without it.
    #[error(
        "{program} needs libdevice (a module calls `__nv_*`, or Libdevice::Always), and there \
         is no nvvm/libdevice/libdevice.10.bc beside libNVVM at {library}: point \
         CUDA_LINK_NVVM_PATH at a libNVVM of a toolkit or wheel that has one, or give libdevice \
         with Libdevice::Path"
    )]
    NoLibdevice {
        /// The program's name.
        program: String,
        /// libNVVM's path.
        library: String,
    },
    /// A module given to an NVVM program is not NVVM IR (empty, PTX, C++,
    /// or bitcode cut short).
    #[error("{program}: a module is not NVVM IR")]
    NotNvvmIr {
        /// The program's name.
        program: String,
        /// What the module is instead.
        #[source]
        error: cuda_link::ObjectError,
    },
    /// The PTX of an NVVM program did not assemble to a cubin.
    #[error("{program}: its PTX does not link to a cubin")]
    Link {
        /// The program's name.
        program: String,
        /// nvJitLink's error.
        #[source]
        error: Box<cuda_link::LinkError>,
    },
    /// The source file, or the folder of NVRTC's bundled headers, could
    /// not be read or written. (A header the cache's scan cannot read
    /// makes the compile uncached instead.)
    #[error("{path}: {detail}")]
    Io {
        /// The file or folder.
        path: String,
        /// The I/O error.
        detail: String,
    },
}

/// The message and its causes on one line, `a: b`, for `main`'s `{:?}`.
impl std::fmt::Debug for CompileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&cuda_link::Report(self), f)
    }
}

/// A flag that cannot be read into [`Flags`](crate::Flags).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("option `{option}`: {why}")]
#[non_exhaustive]
pub struct FlagError {
    /// The option as given.
    pub option: String,
    /// What is wrong with it.
    pub why: String,
}
