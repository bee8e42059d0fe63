//! [`NvFatbinError`]: an `nvFatbinResult` other than success, typed.

use crate::nvFatbinResult;

/// A failed nvFatbin call's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{} ({})", result_name(self.result), self.result.0)]
pub struct NvFatbinError {
    /// The result code.
    pub result: nvFatbinResult,
}

impl NvFatbinError {
    /// `Ok` for `NVFATBIN_SUCCESS`, else the typed error.
    pub fn check(result: nvFatbinResult) -> Result<(), NvFatbinError> {
        match result {
            nvFatbinResult::NVFATBIN_SUCCESS => Ok(()),
            result => Err(NvFatbinError { result }),
        }
    }

    /// The result's name, e.g. `"NVFATBIN_ERROR_INVALID_INPUT"`.
    pub fn name(&self) -> &'static str {
        result_name(self.result)
    }
}

/// The name of an `nvFatbinResult`, e.g. `"NVFATBIN_ERROR_INVALID_INPUT"`,
/// from the generated constants; `"NVFATBIN_ERROR_UNKNOWN"` for a value
/// the pinned header does not name.
pub fn result_name(result: nvFatbinResult) -> &'static str {
    result.name().unwrap_or("NVFATBIN_ERROR_UNKNOWN")
}
