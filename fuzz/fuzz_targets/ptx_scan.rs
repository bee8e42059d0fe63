//! `cargo fuzz run ptx_scan`: detection, validation and the kernel scan of
//! PTX text on any bytes, in memory and streamed alike.
#![no_main]

use cuda_link::fuzzing as ptx;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = ptx::looks_like_ptx(data);
    let _ = ptx::validate(data);
    let in_memory = ptx::inspect(data);
    if let Ok(info) = &in_memory {
        assert!(info.kernels.iter().all(|k| !k.is_empty()));
    }
    let step = data.first().map_or(1, |&b| usize::from(b % 16) + 1);
    assert_eq!(ptx::inspect_streamed(data, step), in_memory);
});
