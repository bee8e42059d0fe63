//! The {{display}} wheels that `cargo xtask test` provisions, for the tests.

use std::io::Write as _;
use std::path::PathBuf;

/// The provisioned library of one wheel (`12`, `13`, or `130` for 13.0),
/// or `None` (a skip) outside `cargo xtask test`, which sets
/// `CUDA_LINK_REQUIRE_REDIST` to turn the skip into a failure.
pub fn provisioned(wheel: u32) -> Option<PathBuf> {
    let var = format!("{{test_var}}{wheel}_PATH");
    match std::env::var_os(&var) {
        Some(path) => Some(PathBuf::from(path)),
        None if std::env::var_os("CUDA_LINK_REQUIRE_REDIST").is_some() => {
            panic!("{var} is not set although CUDA_LINK_REQUIRE_REDIST is")
        }
        None => {
            // Past the harness's capture of `eprintln!`: a skip is said, not hidden.
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED: {var} not set; run through `cargo xtask test`"
            );
            None
        }
    }
}
