//! `cuda-compile`'s tests, one binary: real compiles with NVRTC 12.9 and
//! 13.5 (`compile`) and the compile cache (`cache`).

mod cache;
mod compile;
