//! `cargo fuzz run depfile`: nvcc's dependency files (`-MD -MF`), which
//! decide what a cached host-code object is keyed by, on any bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(names) = cuda_compile::parse_depfile(&text) {
        assert!(names.iter().all(|name| !name.is_empty()));
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len());
    }
});
