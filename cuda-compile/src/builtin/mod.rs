//! Our device-side C and C++ standard headers, given to NVRTC in memory:
//! it has none, and real kernel files include them for fixed-width types,
//! limits, math constants, `assert` and `std::min`. jitify's set is the
//! reference.
//!
//! Where CCCL (libcu++) is on the include path (NVRTC 13.3+'s bundled
//! headers, or the CCCL wheel), the C headers that define macros include
//! CCCL's own (`<cuda/std/cstdint>`, `climits`, `cfloat`: a few
//! milliseconds), so that a file including ours and a CUB header never
//! sees a macro defined twice, in either order; otherwise they define the
//! same values themselves. The fixed-width types are CCCL's under NVRTC
//! (`int64_t` is `long long`, `int_fast16_t` is `int16_t`): a kernel
//! taking `int64_t` mangles it `x`, where nvcc on Linux (`long`) has `l`.
//! `<type_traits>`, `<limits>`, `<tuple>` and `<utility>` are libcu++'s
//! with their names also in `std` (each costs NVRTC about half a second,
//! only in the files that include it). `ProgramOptions::no_builtin_headers`
//! turns all of them off.

/// The header pre-included, on a second try, into a file that uses one of
/// `<math.h>`'s constants without including it, as nvcc's implicit
/// `cuda_runtime.h` lets it.
pub(crate) const MATH_CONSTANTS: &str = "__cuda_compile/math_constants.h";

/// `(include name, contents)`.
/// A static, not a const: [`is_builtin`] knows them by address.
pub(crate) static HEADERS: &[(&str, &str)] = &[
    ("stdint.h", include_str!("stdint.h")),
    ("cstdint", include_str!("cstdint")),
    ("limits.h", include_str!("limits.h")),
    ("climits", include_str!("climits")),
    ("float.h", include_str!("float.h")),
    ("cfloat", include_str!("cfloat")),
    ("stddef.h", include_str!("stddef.h")),
    ("cstddef", include_str!("cstddef")),
    ("stdbool.h", include_str!("stdbool.h")),
    ("cstdbool", include_str!("cstdbool")),
    ("assert.h", include_str!("assert.h")),
    ("cassert", include_str!("cassert")),
    ("stdlib.h", include_str!("stdlib.h")),
    ("cstdlib", include_str!("cstdlib")),
    ("stdio.h", include_str!("stdio.h")),
    ("cstdio", include_str!("cstdio")),
    ("math.h", include_str!("math.h")),
    ("cmath", include_str!("cmath")),
    (MATH_CONSTANTS, include_str!("math_constants.h")),
    ("algorithm", include_str!("algorithm")),
    ("utility", include_str!("utility")),
    ("type_traits", include_str!("type_traits")),
    ("limits", include_str!("limits")),
    ("tuple", include_str!("tuple")),
    ("cuda.h", include_str!("cuda.h")),
    (CUDA_RUNTIME, include_str!("cuda_runtime.h")),
];

/// Whether `text` is one of [`HEADERS`] (by address: the program's own
/// headers are owned strings, never these statics).
pub(crate) fn is_builtin(text: &str) -> bool {
    HEADERS.iter().any(|(_, ours)| std::ptr::eq(*ours, text))
}

/// The hash of every header of ours, made once: a key names which of them
/// a compile was given, and this, rather than hashing their text again.
pub(crate) fn digest() -> &'static cuda_link::CacheKey {
    static DIGEST: std::sync::OnceLock<cuda_link::CacheKey> = std::sync::OnceLock::new();
    DIGEST.get_or_init(|| {
        let mut key = cuda_link::CacheKey::builder("cuda-compile builtin headers");
        key.count(HEADERS.len());
        for (name, text) in HEADERS {
            key.field(name.as_bytes()).field(text.as_bytes());
        }
        key.finish()
    })
}

/// Our device-side `cuda_runtime.h`, given only where NVIDIA's header
/// folders have none: theirs, where present, is NVRTC-safe.
pub(crate) const CUDA_RUNTIME: &str = "cuda_runtime.h";

/// What nvcc's implicit `cuda_runtime.h` makes visible to device code
/// without an include (`std::min`, `std::is_same_v`), pre-included on a
/// second try when NVRTC says `std` lacks a name.
pub(crate) const NVCC_ENVIRONMENT: &[&str] = &["algorithm", "type_traits", "utility", "limits"];

/// Whether NVRTC's log of a failed compile says `std` has no member of a
/// name nvcc's implicit includes would have given.
pub(crate) fn needs_nvcc_environment(log: &str) -> bool {
    log.contains("namespace \"std\" has no member")
}

/// The identifiers of [`MATH_CONSTANTS`]: NVRTC's "identifier X is
/// undefined" for one of them asks for the second try.
const CONSTANT_NAMES: &[&str] = &[
    "INFINITY",
    "NAN",
    "HUGE_VAL",
    "HUGE_VALF",
    "M_E",
    "M_LOG2E",
    "M_LOG10E",
    "M_LN2",
    "M_LN10",
    "M_PI",
    "M_PI_2",
    "M_PI_4",
    "M_1_PI",
    "M_2_PI",
    "M_2_SQRTPI",
    "M_SQRT2",
    "M_SQRT1_2",
];

/// Whether NVRTC's log of a failed compile says a math constant is
/// undefined.
pub(crate) fn needs_math_constants(log: &str) -> bool {
    log.match_indices("identifier \"").any(|(at, quote)| {
        let rest = &log[at + quote.len()..];
        rest.split_once("\" is undefined")
            .is_some_and(|(name, _)| CONSTANT_NAMES.contains(&name))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_math_constants_ask_for_a_second_try() {
        let log = "k.cu(3): error: identifier \"INFINITY\" is undefined\n";
        assert!(needs_math_constants(log));
        assert!(needs_math_constants(
            "k.cu(1): error: identifier \"foo\" is undefined\nk.cu(2): error: identifier \"M_PI\" is undefined"
        ));
        assert!(!needs_math_constants(
            "k.cu(3): error: identifier \"INFINITY_X\" is undefined"
        ));
        assert!(!needs_math_constants("k.cu(3): error: expected a \";\""));
        assert!(needs_nvcc_environment(
            "k.cu(2): error: namespace \"std\" has no member \"min\""
        ));
        assert!(!needs_nvcc_environment("k.cu(2): error: expected a \";\""));
    }
}
