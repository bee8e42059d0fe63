//! `cuda-compile`'s tests, one binary: real compiles with NVRTC 12.9 and
//! 13.5 (`compile`), our standard headers (`headers`) and the compile
//! cache (`cache`).

mod cache;
mod compile;
mod headers;
