//! `cuda-compile`'s tests, one binary: real compiles with NVRTC 12.9 and
//! 13.5 (`compile`), our standard headers (`headers`), the compile
//! cache (`cache`) and the include closures it remembers (`remembered`).

mod cache;
mod compile;
mod headers;
mod lexer;
mod nvvm;
#[cfg(unix)]
mod remembered;
mod stale;
