//! `cuda-module`'s tests, one binary: what is decided before the driver
//! (`cpu`), and on a GPU (`gpu`, `gpu_corpus`: every test
//! `#[ignore = "needs a GPU"]`, run by `cargo xtask test-gpu` with
//! `--include-ignored`). The cudarc tests need a feature, so they are a
//! binary of their own (`gpu_cudarc.rs`).
#![allow(clippy::result_large_err)]

mod cpu;
mod gpu;
mod gpu_corpus;
