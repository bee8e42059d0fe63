//! The probe is `tests/probe.rs`, a test target without the test harness:
//! built by the same `cargo test` as candle-core's tests, it shares their
//! build of candle and its kernels.
