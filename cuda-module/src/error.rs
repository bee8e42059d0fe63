//! [`ModuleError`] and the driver-call checks every module shares.

use std::ffi::CString;
use std::sync::OnceLock;

use cuda_driver_sys::{CUresult, Driver};
use cuda_link::ObjectKind;

/// Why loading, lookup or launching failed.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ModuleError {
    /// The driver could not be loaded.
    #[error("the CUDA driver is not available: {0}")]
    DriverUnavailable(#[from] cuda_driver_sys::LoadError),
    /// The driver lacks an entry point.
    #[error(transparent)]
    SymbolUnavailable(#[from] cuda_driver_sys::SymbolUnavailable),
    /// A driver call failed.
    #[error("{call} failed with {result}{}", if log.is_empty() { String::new() } else { format!(" for {name}:\n{log}") })]
    Call {
        /// The C function.
        call: &'static str,
        /// The `CUresult` name.
        result: String,
        /// Its code.
        code: u32,
        /// The library's name.
        name: String,
        /// The JIT error log, for loads.
        log: String,
    },
    /// No kernel of that name.
    #[error("no kernel named `{kernel}` in {library}")]
    KernelNotFound {
        /// The name looked up.
        kernel: String,
        /// The library's name.
        library: String,
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
    /// A name with an interior NUL.
    #[error("name contains a NUL byte: {0:?}")]
    BadName(String),
}

pub(crate) fn driver() -> Result<&'static Driver, ModuleError> {
    static INIT: OnceLock<Result<(), ModuleError>> = OnceLock::new();
    let driver = Driver::global()?;
    INIT.get_or_init(|| {
        // SAFETY: cuInit takes only flags.
        let status = unsafe { driver.cuInit(0) }?;
        check(driver, status, "cuInit", "")
    })
    .clone()?;
    Ok(driver)
}

pub(crate) fn check(
    driver: &Driver,
    status: CUresult,
    call: &'static str,
    name: &str,
) -> Result<(), ModuleError> {
    if status == CUresult::CUDA_SUCCESS {
        return Ok(());
    }
    Err(ModuleError::Call {
        call,
        result: driver.error_name(status),
        code: status.0,
        name: name.to_owned(),
        log: String::new(),
    })
}

pub(crate) fn c_name(name: &str) -> Result<CString, ModuleError> {
    CString::new(name).map_err(|_| ModuleError::BadName(name.to_owned()))
}
