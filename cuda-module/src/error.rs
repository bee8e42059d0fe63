//! [`ModuleError`] and the driver-call checks every module shares.

use std::ffi::CString;
use std::sync::OnceLock;

use cuda_driver_sys::{Call, Driver, driver_call};
use cuda_link::ObjectKind;

/// Why loading, lookup or launching failed. `Debug` prints the message
/// and its causes, as `Display` does them.
#[derive(Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ModuleError {
    /// The driver could not be loaded; the source says why.
    #[error("the CUDA driver is not available")]
    DriverUnavailable(#[from] cuda_driver_sys::LoadError),
    /// The driver lacks an entry point.
    #[error(transparent)]
    SymbolUnavailable(#[from] cuda_driver_sys::SymbolUnavailable),
    /// A driver call failed.
    #[error(
        "{call} failed with {error}{}{}",
        about(library, symbol),
        cuda_link::log_suffix("JIT error log", log)
    )]
    Call {
        /// The C function, named as the driver exports it: versioned where
        /// the call is (`cuModuleGetGlobal_v2`, the symbol that `cuda.h`'s
        /// `cuModuleGetGlobal` stands for).
        call: &'static str,
        /// What it returned.
        error: cuda_driver_sys::DriverError,
        /// The library's name, when the call was about one.
        library: Option<Box<str>>,
        /// The kernel, global or managed variable, when the call was
        /// about one.
        symbol: Option<Box<str>>,
        /// The JIT error log, for calls that may compile.
        log: Box<str>,
    },
    /// No kernel of that name.
    #[error(
        "no kernel named `{kernel}` in {library}{}",
        suggestions(closest, kernels)
    )]
    KernelNotFound {
        /// The name looked up.
        kernel: String,
        /// The library's name.
        library: String,
        /// The library's kernels, where the driver can list them.
        kernels: Vec<String>,
        /// The names among them closest to `kernel`, best first.
        closest: Vec<String>,
    },
    /// A demangled name that more than one kernel has (`scale<float>` for
    /// two overloads).
    #[error(
        "`{kernel}` in {library} names several kernels: {}",
        quoted(candidates)
    )]
    AmbiguousKernel {
        /// The name looked up.
        kernel: String,
        /// The library's name.
        library: String,
        /// The mangled names it matches.
        candidates: Vec<String>,
    },
    /// LTO-IR, a library or host object cannot be loaded as is.
    #[error("{name}: {kind} cannot be loaded; link it into a cubin first")]
    NotLoadable {
        /// The input's name.
        name: String,
        /// Its kind.
        kind: ObjectKind,
    },
    /// The bytes or file to load failed validation.
    #[error(transparent)]
    Object(#[from] cuda_link::ObjectError),
    /// A checked launch was given more or fewer arguments than the kernel
    /// has parameters.
    #[error("kernel `{kernel}` takes {expected} arguments; {given} were given")]
    ArgumentCount {
        /// The kernel.
        kernel: String,
        /// Its parameter count.
        expected: usize,
        /// The argument count.
        given: usize,
    },
    /// A checked launch's argument differs in size from its parameter.
    #[error(
        "kernel `{kernel}`: argument {index} is {given} bytes; the parameter is {expected} bytes"
    )]
    ArgumentSize {
        /// The kernel.
        kernel: String,
        /// The argument's position, from 0.
        index: usize,
        /// The parameter's size.
        expected: usize,
        /// The argument's size.
        given: usize,
    },
    /// A launch on a stream of another context than the one given.
    #[error(
        "kernel `{kernel}`: the stream does not belong to the context (make it with Context::from_cudarc of the stream's context, or launch with Kernel::launch_on_stream, which takes the stream's)"
    )]
    ForeignStream {
        /// The kernel.
        kernel: String,
    },
    /// After a fallback to the module API, a kernel or global was asked
    /// for in another context than the one its module was loaded into: a
    /// `CUmodule`, its functions and its globals belong to that one context.
    #[error(
        "`{kernel}` of {library} was loaded with the module API into another context; a module's kernels and globals exist only there (load it again with this context current, or load it with the library API, which serves every context)"
    )]
    ForeignContext {
        /// The kernel, or the global (see `Library::global`).
        kernel: String,
        /// The library's name.
        library: String,
    },
    /// The driver reported more parameters than a kernel can have (see
    /// [`MAX_KERNEL_PARAMS`](crate::MAX_KERNEL_PARAMS)).
    #[error(
        "kernel `{kernel}`: the driver reports more than {limit} parameters, which no kernel has"
    )]
    TooManyParameters {
        /// The kernel.
        kernel: String,
        /// The most parameters a kernel can have.
        limit: usize,
    },
    /// cudarc reported an error.
    #[cfg(feature = "cudarc")]
    #[cfg_attr(docsrs, doc(cfg(feature = "cudarc")))]
    #[error("cudarc: {0}")]
    Cudarc(cudarc::driver::DriverError),
    /// A name with an interior NUL.
    #[error("name contains a NUL byte: {0:?}")]
    BadName(String),
}

pub(crate) fn driver() -> Result<&'static Driver, ModuleError> {
    static INIT: OnceLock<Result<(), ModuleError>> = OnceLock::new();
    #[cfg(not(test))]
    let driver = Driver::global()?;
    // The unit tests run on the stub driver of `src/stub`, never a real one.
    #[cfg(test)]
    let driver = crate::stub::driver();
    INIT.get_or_init(|| {
        // SAFETY: cuInit takes only flags.
        let call = unsafe { driver_call!(driver, cuInit(0)) }?;
        check(driver, call, About::NOTHING)
    })
    .clone()?;
    Ok(driver)
}

/// What a driver call was about, for its error.
#[derive(Clone, Copy, Default)]
pub(crate) struct About<'a> {
    pub library: Option<&'a str>,
    pub symbol: Option<&'a str>,
}

impl std::fmt::Debug for ModuleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&cuda_link::Report(self), f)
    }
}

impl<'a> About<'a> {
    /// A call about nothing in particular (contexts, memory).
    pub const NOTHING: About<'static> = About {
        library: None,
        symbol: None,
    };

    /// A call about a library.
    pub fn library(library: &'a str) -> Self {
        About {
            library: Some(library),
            symbol: None,
        }
    }

    /// A call about one symbol of a library.
    pub fn symbol(library: &'a str, symbol: &'a str) -> Self {
        About {
            library: Some(library),
            symbol: Some(symbol),
        }
    }
}

/// `Ok` for a call that succeeded, else [`ModuleError::Call`] naming the
/// symbol called (see [`driver_call!`]) and what it was about.
pub(crate) fn check(driver: &Driver, call: Call, about: About<'_>) -> Result<(), ModuleError> {
    driver
        .check(call.result)
        .map_err(|error| ModuleError::Call {
            call: call.symbol,
            error,
            library: about.library.map(Box::from),
            symbol: about.symbol.map(Box::from),
            log: Box::default(),
        })
}

fn about(library: &Option<Box<str>>, symbol: &Option<Box<str>>) -> String {
    match (library, symbol) {
        (Some(library), Some(symbol)) => format!(" for `{symbol}` of {library}"),
        (Some(library), None) => format!(" for {library}"),
        (None, Some(symbol)) => format!(" for `{symbol}`"),
        (None, None) => String::new(),
    }
}

fn suggestions(closest: &[String], kernels: &[String]) -> String {
    const LISTED: usize = 16;
    let mut text = String::new();
    if !closest.is_empty() {
        text.push_str(&format!("; did you mean {}?", quoted(closest)));
    }
    if !kernels.is_empty() {
        let shown = &kernels[..kernels.len().min(LISTED)];
        text.push_str(&format!("; its kernels: {}", quoted(shown)));
        if kernels.len() > LISTED {
            text.push_str(&format!(" and {} more", kernels.len() - LISTED));
        }
    }
    text
}

fn quoted(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The names of `candidates` within a small edit distance of `name`,
/// closest first (at most three).
pub(crate) fn closest_names(name: &str, candidates: &[String]) -> Vec<String> {
    let limit = (name.chars().count() / 3).max(2);
    let mut scored: Vec<(usize, &String)> = candidates
        .iter()
        .map(|candidate| (strsim::levenshtein(name, candidate), candidate))
        .filter(|(distance, _)| *distance <= limit)
        .collect();
    scored.sort();
    scored.into_iter().take(3).map(|(_, n)| n.clone()).collect()
}

pub(crate) fn c_name(name: &str) -> Result<CString, ModuleError> {
    CString::new(name).map_err(|_| ModuleError::BadName(name.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn closest_names_are_near_misses_best_first() {
        let kernels = names(&["saxpy", "daxpy", "scale", "reduce_sum"]);
        assert_eq!(closest_names("saxpi", &kernels), ["saxpy", "daxpy"]);
        assert_eq!(closest_names("reduce_sun", &kernels), ["reduce_sum"]);
        assert!(closest_names("completely_else", &kernels).is_empty());
    }

    /// The JIT log follows the message under its label, as cuda-link's
    /// `LinkError` shows its logs; an empty log adds nothing.
    #[test]
    fn a_call_error_shows_its_log_under_a_label() {
        let call = |log: &str| ModuleError::Call {
            call: "cuLibraryLoadData",
            error: cuda_driver_sys::DriverError {
                result: cuda_driver_sys::sys::CUresult::CUDA_ERROR_INVALID_PTX,
                name: "CUDA_ERROR_INVALID_PTX".into(),
                description: "a PTX JIT compilation failed".into(),
            },
            library: Some("bad.ptx".into()),
            symbol: None,
            log: log.into(),
        };
        let head = "cuLibraryLoadData failed with CUDA_ERROR_INVALID_PTX (218): \
                    a PTX JIT compilation failed for bad.ptx";
        assert_eq!(call("").to_string(), head);
        assert_eq!(call(" \n").to_string(), head);
        assert_eq!(
            call("ptxas fatal: bogus\n").to_string(),
            format!("{head}\nJIT error log:\nptxas fatal: bogus")
        );
    }

    #[test]
    fn a_missing_kernel_lists_suggestions_and_kernels() {
        let kernels: Vec<String> = (0..20).map(|i| format!("k{i}")).collect();
        let error = ModuleError::KernelNotFound {
            kernel: "k100".into(),
            library: "lib.cubin".into(),
            closest: closest_names("k100", &kernels),
            kernels,
        };
        let text = error.to_string();
        assert!(
            text.starts_with("no kernel named `k100` in lib.cubin; did you mean `k10`"),
            "{text}"
        );
        assert!(text.ends_with("`k15` and 4 more"), "{text}");
    }
}
