//! Phase spans: the steps of a link and a load as `tracing` spans, for
//! finding where the time goes. With the `tracing` feature each step is a
//! DEBUG span under its crate's target; without it, a step's guard is a
//! unit struct and costs nothing. `cuda-module` uses the same macro, so the
//! feature's state is decided here, once.

/// Enters a span named `$name` (a literal) under the target `$target`
/// until the returned guard drops: `let _phase = phase!("complete");`.
#[cfg(feature = "tracing")]
#[doc(hidden)]
#[macro_export]
macro_rules! __phase {
    ($target:literal, $name:literal) => {
        $crate::phase::tracing::debug_span!(target: $target, $name).entered()
    };
}

/// Without the `tracing` feature: a guard that does nothing.
#[cfg(not(feature = "tracing"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __phase {
    ($target:literal, $name:literal) => {
        $crate::phase::Off
    };
}

/// A step of this crate.
macro_rules! phase {
    ($name:literal) => {
        $crate::__phase!("cuda_link", $name)
    };
}

#[cfg(feature = "tracing")]
pub use tracing;

/// The guard of a step when the `tracing` feature is off.
#[cfg(not(feature = "tracing"))]
pub struct Off;

/// A step may end early with `drop(phase)`, with or without the feature.
#[cfg(not(feature = "tracing"))]
impl Drop for Off {
    fn drop(&mut self) {}
}
