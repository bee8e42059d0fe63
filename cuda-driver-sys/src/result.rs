//! [`DriverError`]: a `CUresult` other than success, typed, with the
//! driver's own name and description (cudarc's `DriverError`).

use std::ffi::{CStr, c_char};

use crate::{CUresult, Driver};

/// A failed driver call's `CUresult`, with the names the driver gives it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{name} ({code}): {description}", code = .result.0)]
pub struct DriverError {
    /// The result code.
    pub result: CUresult,
    /// `cuGetErrorName`, e.g. `"CUDA_ERROR_INVALID_PTX"`; `"CUresult N"`
    /// for a code the driver does not name.
    pub name: Box<str>,
    /// `cuGetErrorString`, e.g. `"a PTX JIT compilation failed"`.
    pub description: Box<str>,
}

impl Driver {
    /// `result` as a typed error, named by this driver.
    pub fn error(&self, result: CUresult) -> DriverError {
        DriverError {
            result,
            name: self.error_name(result).into(),
            description: self.error_text(result).into(),
        }
    }

    /// `Ok` for `CUDA_SUCCESS`, else the typed error.
    pub fn check(&self, result: CUresult) -> Result<(), DriverError> {
        match result {
            CUresult::CUDA_SUCCESS => Ok(()),
            error => Err(self.error(error)),
        }
    }

    /// The name of a `CUresult`, e.g. `"CUDA_ERROR_INVALID_PTX"`, via
    /// `cuGetErrorName`; `"CUresult N"` for a code the driver does not name.
    pub fn error_name(&self, result: CUresult) -> String {
        let mut name: *const c_char = std::ptr::null();
        // SAFETY: an out-pointer; the driver returns a static string.
        let status = unsafe { self.fns.cuGetErrorName(result, &mut name) };
        static_text(status, name).unwrap_or_else(|| format!("CUresult {}", result.0))
    }

    /// The description of a `CUresult`, via `cuGetErrorString`; empty for a
    /// code the driver does not describe.
    pub fn error_text(&self, result: CUresult) -> String {
        let mut text: *const c_char = std::ptr::null();
        // SAFETY: an out-pointer; the driver returns a static string.
        let status = unsafe { self.fns.cuGetErrorString(result, &mut text) };
        static_text(status, text).unwrap_or_default()
    }
}

/// The static string a successful `cuGetError*` call pointed to.
fn static_text(
    status: Result<CUresult, crate::SymbolUnavailable>,
    text: *const c_char,
) -> Option<String> {
    match status {
        Ok(CUresult::CUDA_SUCCESS) if !text.is_null() => {
            // SAFETY: non-null, NUL-terminated and static, as cuda.h says.
            Some(
                unsafe { CStr::from_ptr(text) }
                    .to_string_lossy()
                    .into_owned(),
            )
        }
        _ => None,
    }
}

/// The text of a log buffer that C code filled, such as the driver's
/// `CU_JIT_ERROR_LOG_BUFFER` or nvJitLink's logs: up to the first NUL (or
/// the whole buffer), invalid UTF-8 replaced.
pub fn log_text(buffer: &[u8]) -> String {
    let end = buffer.iter().position(|&b| b == 0).unwrap_or(buffer.len());
    String::from_utf8_lossy(&buffer[..end]).into_owned()
}
