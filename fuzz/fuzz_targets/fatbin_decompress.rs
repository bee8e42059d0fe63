//! `cargo fuzz run fatbin_decompress`: parse fatbins and decompress every
//! entry; LZ4 and zstd payloads with lying sizes must give errors.
#![no_main]

use cuda_link::fuzzing as fatbin;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(fatbins) = fatbin::parse_all(data) {
        for (_, fatbin) in fatbins {
            for entry in fatbin.entries().flatten() {
                if let Ok(bytes) = entry.decompress() {
                    assert!(bytes.len() as u64 <= fatbin::MAX_DECOMPRESSED_SIZE);
                }
            }
        }
    }
});
