//! [`NvrtcError`]: an `nvrtcResult` other than success, typed.

use crate::nvrtcResult;

/// A failed NVRTC call's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{} ({})", self.name(), self.result.0)]
pub struct NvrtcError {
    /// The result code.
    pub result: nvrtcResult,
}

impl NvrtcError {
    /// `Ok` for `NVRTC_SUCCESS`, else the typed error.
    pub fn check(result: nvrtcResult) -> Result<(), NvrtcError> {
        match result {
            nvrtcResult::NVRTC_SUCCESS => Ok(()),
            result => Err(NvrtcError { result }),
        }
    }

    /// The result's name as `nvrtc.h` spells it, e.g.
    /// `"NVRTC_ERROR_COMPILATION"`; `"NVRTC_ERROR_UNKNOWN"` for a value
    /// the pinned header does not name.
    pub fn name(&self) -> &'static str {
        self.result.name().unwrap_or("NVRTC_ERROR_UNKNOWN")
    }
}
