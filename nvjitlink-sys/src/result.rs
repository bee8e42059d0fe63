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

/// The name of an `nvJitLinkResult`, e.g. `"NVJITLINK_ERROR_INVALID_INPUT"`.
pub fn result_name(result: nvJitLinkResult) -> &'static str {
    const NAMES: &[&str] = &[
        "NVJITLINK_SUCCESS",
        "NVJITLINK_ERROR_UNRECOGNIZED_OPTION",
        "NVJITLINK_ERROR_MISSING_ARCH",
        "NVJITLINK_ERROR_INVALID_INPUT",
        "NVJITLINK_ERROR_PTX_COMPILE",
        "NVJITLINK_ERROR_NVVM_COMPILE",
        "NVJITLINK_ERROR_INTERNAL",
        "NVJITLINK_ERROR_THREADPOOL",
        "NVJITLINK_ERROR_UNRECOGNIZED_INPUT",
        "NVJITLINK_ERROR_FINALIZE",
        "NVJITLINK_ERROR_NULL_INPUT",
        "NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS",
        "NVJITLINK_ERROR_INCORRECT_INPUT_TYPE",
        "NVJITLINK_ERROR_ARCH_MISMATCH",
        "NVJITLINK_ERROR_OUTDATED_LIBRARY",
        "NVJITLINK_ERROR_MISSING_FATBIN",
        "NVJITLINK_ERROR_UNRECOGNIZED_ARCH",
        "NVJITLINK_ERROR_UNSUPPORTED_ARCH",
        "NVJITLINK_ERROR_LTO_NOT_ENABLED",
    ];
    NAMES
        .get(result.0 as usize)
        .copied()
        .unwrap_or("NVJITLINK_ERROR_UNKNOWN")
}
