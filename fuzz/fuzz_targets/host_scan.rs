//! `cargo fuzz run host_scan`: the host-code verdict on any text, which
//! decides whether a file goes to NVRTC or nvcc: an answer, a line of the
//! text, and no panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let program = cuda_compile::Program::new(text.as_ref(), "fuzz.cu");
    if let Some(host) = cuda_compile::HostCode::in_source(&program) {
        assert!(host.line >= 1 && host.line <= text.lines().count().max(1));
    }
});
