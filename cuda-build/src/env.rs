//! The one way this crate reads the environment, as `cc` has one getter:
//! every variable read is one [`watched`] lists (cargo reruns the build
//! script when it changes, and the no-op rebuild's stamp records it), or
//! one cargo sets for every run of a build script. `std::env::var*` is
//! banned elsewhere in the crate (`cuda-build/clippy.toml`).

use std::ffi::OsString;

use cuda_link::LinkCache;

/// Read by this crate itself.
const OWN: &[&str] = &[
    "CUDA_COMPUTE_CAP",
    "DOCS_RS",
    "NVCC",
    "CUDA_LINK_NVCC",
    "CXX",
    "AR",
];

/// The shared store's settings (`cuda_link::RemoteCache::VARIABLES`; the
/// URL is read without the `remote` feature too, to say it is not used).
#[cfg(feature = "remote-tier")]
const REMOTE: [&str; 8] = cuda_link::RemoteCache::VARIABLES;
#[cfg(not(feature = "remote-tier"))]
const REMOTE: [&str; 1] = ["CUDA_LINK_CACHE_URL"];

/// What nvcc (and the host compiler it runs) reads of the environment
/// besides its arguments: part of every object's key, and watched.
pub(crate) const NVCC_READS: [&str; 5] = [
    "NVCC_PREPEND_FLAGS",
    "NVCC_APPEND_FLAGS",
    "CPATH",
    "CPLUS_INCLUDE_PATH",
    "C_INCLUDE_PATH",
];

/// Set by cargo for every run of a build script: never watched.
const CARGO_SETS: &[&str] = &["OUT_DIR", "NUM_JOBS", "CARGO_MANIFEST_DIR"];

/// Every variable a build reads and cargo must watch, once each: this
/// crate's, the library search's and the cache folder's.
pub(crate) fn watched() -> Vec<&'static str> {
    let overrides = [
        nvrtc_sys::SPEC.override_var,
        nvjitlink_sys::SPEC.override_var,
    ];
    let mut seen = std::collections::HashSet::new();
    OWN.iter()
        .chain(&overrides)
        .chain(cuda_dylib::SEARCH_VARIABLES)
        .chain(LinkCache::DIR_VARIABLES)
        .chain(&REMOTE)
        .chain(&NVCC_READS)
        .copied()
        .filter(|var| seen.insert(*var))
        .collect()
}

/// The variable `name`, which must be watched or set by cargo (a test
/// holds every call to that).
#[allow(clippy::disallowed_methods)]
pub(crate) fn var_os(name: &'static str) -> Option<OsString> {
    debug_assert!(
        CARGO_SETS.contains(&name) || watched().contains(&name),
        "{name} is read but not watched"
    );
    std::env::var_os(name)
}

/// [`var_os`], as text, `None` when unset, empty or not UTF-8.
pub(crate) fn var(name: &'static str) -> Option<String> {
    var_os(name)
        .and_then(|value| value.into_string().ok())
        .filter(|value| !value.trim().is_empty())
}

#[cfg(test)]
mod tests {
    /// Every `env::var*("NAME")` in the crate's source names a variable
    /// that is watched or set by cargo.
    #[test]
    fn every_variable_read_is_watched_or_cargos() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut names = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            for call in ["env::var_os(\"", "env::var(\""] {
                for (at, _) in text.match_indices(call) {
                    let rest = &text[at + call.len()..];
                    names.push(rest[..rest.find('"').unwrap()].to_owned());
                }
            }
        }
        assert!(names.iter().any(|n| n == "NVCC"), "{names:?}");
        let watched = super::watched();
        for name in names {
            assert!(
                super::CARGO_SETS.contains(&name.as_str()) || watched.contains(&name.as_str()),
                "{name} is read but not watched"
            );
        }
    }
}
