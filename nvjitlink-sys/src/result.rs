//! [`NvJitLinkError`]: an `nvJitLinkResult` other than success, typed.

use crate::nvJitLinkResult;

/// A failed nvJitLink call's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{} ({})", result_name(self.result), self.result.0)]
pub struct NvJitLinkError {
    /// The result code.
    pub result: nvJitLinkResult,
}

impl NvJitLinkError {
    /// `Ok` for `NVJITLINK_SUCCESS`, else the typed error.
    pub fn check(result: nvJitLinkResult) -> Result<(), NvJitLinkError> {
        match result {
            nvJitLinkResult::NVJITLINK_SUCCESS => Ok(()),
            result => Err(NvJitLinkError { result }),
        }
    }

    /// The result's name, e.g. `"NVJITLINK_ERROR_INVALID_INPUT"`.
    pub fn name(&self) -> &'static str {
        result_name(self.result)
    }
}

/// The name of an `nvJitLinkResult`, e.g. `"NVJITLINK_ERROR_INVALID_INPUT"`,
/// from the generated constants; `"NVJITLINK_ERROR_UNKNOWN"` for a value
/// the pinned header does not name.
pub fn result_name(result: nvJitLinkResult) -> &'static str {
    result.name().unwrap_or("NVJITLINK_ERROR_UNKNOWN")
}
