//! `cargo fuzz run lexer`: the one reader of CUDA source on any text:
//! tokens in order and on character boundaries, an include list or a
//! reason, a blanked text of the same length and lines, kernel names, and
//! no panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut end = 0;
    for token in cuda_compile::source::tokens(&text) {
        assert!(token.offset >= end && !token.text.is_empty());
        end = token.offset + token.text.len();
        let _ = token.spliced();
    }
    let _ = cuda_compile::source::includes(&text);
    let _ = cuda_compile::source::extern_c_kernels(&text);
});
