//! `cargo fuzz run ptx_scan`: detection, validation and the kernel scan of
//! PTX text on any bytes.
#![no_main]

use cuda_link::fuzzing as ptx;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = ptx::looks_like_ptx(data);
    let _ = ptx::validate(data);
    if let Ok(info) = ptx::inspect(data) {
        assert!(info.kernels.iter().all(|k| !k.is_empty()));
    }
});
