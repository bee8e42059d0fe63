//! `cargo xtask test-gpu`: filled in by the cuda-module work.

use std::path::Path;

use crate::Result;

/// Builds and optionally runs the GPU tests.
pub fn test_gpu(_workspace: &Path, _args: &[String]) -> Result<()> {
    Err("test-gpu is not implemented yet".into())
}
