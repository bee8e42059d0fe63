//! Raw bindings to the whole CUDA driver API, loaded at run time.
//!
//! The types, constants and the function table ([`DriverFns`]) are generated
//! by `cargo xtask bindgen` from the pinned `cuda.h` of CUDA 12.9 (feature
//! `cuda-12090`, the default) or 13.0 (feature `cuda-13000`, which wins when
//! both are on) and checked in, so building needs neither CUDA nor libclang.
//! [`Driver`] opens `libcuda.so.1` with `libloading` and resolves every
//! entry point:
//!
//! * plain names through `cuGetProcAddress`, each at the version of the ABI
//!   its declaration has ([`DriverFns::proc_version`], from the pinned
//!   `cudaTypedefs.h`, never above [`CUDA_VERSION`]): asking at
//!   `CUDA_VERSION` itself could hand out a newer ABI than the declaration
//!   (13.0's `cuCtxSynchronize`);
//! * versioned names (`cuMemAlloc_v2`, `cuCtxCreate_v4`, `_ptds`) through
//!   plain `dlsym`, as the name fixes the ABI, and `dlsym` as the fallback
//!   where `cuGetProcAddress` is absent or does not know a name.
//!
//! ```no_run
//! use cuda_driver_sys::{CUresult, Driver, Resolution};
//!
//! // With the default `discover` feature, `Driver::load()` searches.
//! // SAFETY: the file is the CUDA driver.
//! let driver = unsafe { Driver::open("libcuda.so.1", Resolution::ProcAddress) }?;
//! // SAFETY: cuInit takes no pointers.
//! let status = unsafe { driver.cuInit(0) }?;
//! assert_eq!(status, CUresult::CUDA_SUCCESS);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! On a machine without the driver, `Driver::load` returns
//! `LoadError::NotFound` naming every place tried; nothing panics.

use std::ffi::{CStr, c_char, c_void};
use std::path::{Path, PathBuf};

#[cfg(feature = "discover")]
pub use cuda_dylib::{NotFound, Source};
pub use libloading::Library;

#[cfg(feature = "cuda-13000")]
#[rustfmt::skip]
#[path = "bindings/cuda_13000.rs"]
mod bindings;
#[cfg(not(feature = "cuda-13000"))]
#[rustfmt::skip]
#[path = "bindings/cuda_12090.rs"]
mod bindings;
pub use bindings::*;

mod result;
pub use result::DriverError;

/// The library's name in errors.
const DISPLAY_NAME: &str = "libcuda (the CUDA driver)";

/// A symbol that the loaded library does not export.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("symbol `{symbol}` is not available in the loaded {library}")]
pub struct SymbolUnavailable {
    /// The library's display name.
    pub library: &'static str,
    /// The missing symbol.
    pub symbol: &'static str,
}

/// Where and under which names the driver is searched for.
///
/// The driver ships with the kernel module, not with the toolkit or the
/// wheels, so only the override and the system loader apply; the toolkit's
/// `stubs/libcuda.so` is never loaded because it fails every call.
#[cfg(feature = "discover")]
pub const SPEC: cuda_dylib::LibrarySpec = cuda_dylib::LibrarySpec {
    display_name: DISPLAY_NAME,
    override_var: "CUDA_LINK_LIBCUDA_PATH",
    file_names: &["libcuda.so.1", "libcuda.so"],
    wheel_dirs: &[],
    toolkit_dirs: &[],
};

/// How entry points are resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolution {
    /// `cuGetProcAddress` at the pinned version, `dlsym` for versioned names
    /// and as the fallback.
    ProcAddress,
    /// `dlsym` only, as on drivers older than 11.3.
    DlsymOnly,
}

/// Why the driver could not be loaded.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// No driver library on this machine; lists every place tried.
    #[cfg(feature = "discover")]
    #[error(transparent)]
    NotFound(#[from] NotFound),
    /// The file given to [`Driver::open`] could not be opened.
    #[error("cannot open {path}: {reason}")]
    Open {
        /// The file.
        path: PathBuf,
        /// The dynamic loader's message.
        reason: String,
    },
    /// The library opened but lacks `cuDriverGetVersion` or `cuInit`.
    #[error("{path} is not a usable CUDA driver: {missing}")]
    MissingSymbol {
        /// The file that was opened.
        path: PathBuf,
        /// The missing symbol.
        missing: SymbolUnavailable,
    },
}

/// An opened CUDA driver: the function table plus where it came from.
///
/// Dereferences to [`DriverFns`]. The library stays loaded while this value
/// lives.
pub struct Driver {
    fns: DriverFns,
    path: PathBuf,
    #[cfg(feature = "discover")]
    source: Option<Source>,
    resolution: Resolution,
    _library: Library,
}

impl std::fmt::Debug for Driver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Driver")
            .field("path", &self.path)
            .field("resolution", &self.resolution)
            .finish_non_exhaustive()
    }
}

impl std::ops::Deref for Driver {
    type Target = DriverFns;
    fn deref(&self) -> &DriverFns {
        &self.fns
    }
}

/// The `cuGetProcAddress` signature of CUDA 12.0 and later.
type GetProcAddress = unsafe extern "C" fn(
    *const c_char,
    *mut *mut c_void,
    i32,
    u64,
    *mut CUdriverProcAddressQueryResult,
) -> CUresult;

#[cfg(feature = "discover")]
impl Driver {
    /// Searches for the driver and resolves every entry point.
    ///
    /// Safe, unlike [`open`](Self::open): it opens only `libcuda.so.1` (or
    /// `.so`) through the system loader, or the file that the process
    /// environment names in `CUDA_LINK_LIBCUDA_PATH`, with the same trust as
    /// `LD_LIBRARY_PATH`.
    pub fn load() -> Result<Self, LoadError> {
        let env = cuda_dylib::SearchEnv::from_process();
        // SAFETY: as above; the driver's initialisers have no preconditions.
        let opened = unsafe { cuda_dylib::open(&SPEC, &env) }?;
        // SAFETY: found under the driver's names in the driver's places.
        let mut driver =
            unsafe { Self::from_library(opened.library, opened.path, Resolution::ProcAddress) }?;
        driver.source = Some(opened.source);
        Ok(driver)
    }

    /// The process-wide instance, loaded on first use.
    pub fn global() -> Result<&'static Self, LoadError> {
        static GLOBAL: std::sync::OnceLock<Result<Driver, LoadError>> = std::sync::OnceLock::new();
        GLOBAL
            .get_or_init(Self::load)
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Which search step found the library; `None` when it was opened by
    /// path or handed in.
    pub fn source(&self) -> Option<Source> {
        self.source
    }
}

impl Driver {
    /// Loads exactly this file with the chosen resolution.
    ///
    /// # Safety
    /// `path` must be the CUDA driver, or a library whose initialisers are
    /// sound to run and which exports none of the driver's symbols (it then
    /// fails the symbol check): loading runs its initialisers, and every
    /// later call trusts its exports to have the driver's signatures.
    pub unsafe fn open(path: impl AsRef<Path>, resolution: Resolution) -> Result<Self, LoadError> {
        let path = path.as_ref();
        // SAFETY: the caller vouches for `path`.
        let library = unsafe { open_resident(path) }.map_err(|e| LoadError::Open {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
        // SAFETY: as above.
        unsafe { Self::from_library(library, path.to_path_buf(), resolution) }
    }

    /// Takes a library the caller opened, e.g. with its own search; `path`
    /// is what [`path`](Self::path) reports.
    ///
    /// # Safety
    /// As for [`open`](Self::open): `library` must be the CUDA driver, or
    /// export none of its symbols.
    pub unsafe fn from_library(
        library: Library,
        path: PathBuf,
        mut resolution: Resolution,
    ) -> Result<Self, LoadError> {
        let symbol = |name: &CStr| -> *mut c_void {
            // SAFETY: the address is taken as an untyped pointer; the table
            // gives it the driver's type, which the caller vouched for.
            unsafe { library.get::<*mut c_void>(name.to_bytes_with_nul()) }
                .map_or(std::ptr::null_mut(), |s| *s)
        };
        for name in [c"cuInit", c"cuDriverGetVersion"] {
            if symbol(name).is_null() {
                let missing = SymbolUnavailable {
                    library: DISPLAY_NAME,
                    symbol: name.to_str().unwrap_or("?"),
                };
                return Err(LoadError::MissingSymbol { path, missing });
            }
        }
        let proc_address = symbol(c"cuGetProcAddress_v2");
        let proc_address: Option<GetProcAddress> = if resolution == Resolution::ProcAddress {
            // SAFETY: `cuGetProcAddress_v2` has this signature in every
            // driver that exports it (12.0+); null maps to None.
            unsafe { std::mem::transmute::<*mut c_void, Option<GetProcAddress>>(proc_address) }
        } else {
            None
        };
        if proc_address.is_none() {
            resolution = Resolution::DlsymOnly;
        }
        let resolve = |name: &CStr| -> *mut c_void {
            // A plain name is asked for at the version of its declared ABI,
            // not at CUDA_VERSION: there the driver may hand out a newer ABI
            // (13.0's `cuCtxSynchronize` takes a context at 13000, while the
            // header's plain declaration takes none).
            let version = DriverFns::proc_version(name).map(|v| v.min(CUDA_VERSION as i32));
            if let (Some(get), Some(version)) = (proc_address, version) {
                let mut pointer = std::ptr::null_mut();
                let mut found = CUdriverProcAddressQueryResult::CU_GET_PROC_ADDRESS_SUCCESS;
                // SAFETY: a NUL-terminated name and two valid out-pointers.
                let status = unsafe {
                    get(
                        name.as_ptr(),
                        &mut pointer,
                        version,
                        CUdriverProcAddress_flags::CU_GET_PROC_ADDRESS_DEFAULT.0 as u64,
                        &mut found,
                    )
                };
                if status == CUresult::CUDA_SUCCESS && !pointer.is_null() {
                    return pointer;
                }
            }
            symbol(name)
        };
        // SAFETY: every address comes from the driver for exactly that name,
        // at the ABI of the header the table was generated from; the table
        // is stored next to `library`, which keeps the addresses valid.
        let fns = unsafe { DriverFns::load(resolve) };
        Ok(Driver {
            fns,
            path,
            #[cfg(feature = "discover")]
            source: None,
            resolution,
            _library: library,
        })
    }

    /// The file that was loaded (a bare name when the system loader chose).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How the entry points were resolved.
    pub fn resolution(&self) -> Resolution {
        self.resolution
    }

    /// The driver's CUDA version, e.g. 13000 for CUDA 13.0.
    pub fn version(&self) -> Result<i32, CUresult> {
        let mut version = 0;
        // SAFETY: a valid out-pointer; the symbol is checked at load time.
        match unsafe { self.fns.cuDriverGetVersion(&mut version) } {
            Ok(CUresult::CUDA_SUCCESS) => Ok(version),
            Ok(error) => Err(error),
            Err(_) => Err(CUresult::CUDA_ERROR_NOT_FOUND),
        }
    }
}

/// Whether `name` is a versioned symbol (`cuMemAlloc_v2`, `cuMemcpy_ptds`),
/// which is resolved with `dlsym` because its name already fixes its ABI.
pub fn is_versioned_symbol(name: &CStr) -> bool {
    let name = name.to_bytes();
    if name.ends_with(b"_ptds") || name.ends_with(b"_ptsz") {
        return true;
    }
    match name.iter().rposition(|&b| b == b'_') {
        Some(at) => {
            let suffix = &name[at + 1..];
            suffix.len() >= 2 && suffix[0] == b'v' && suffix[1..].iter().all(u8::is_ascii_digit)
        }
        None => false,
    }
}

/// Opens a library that stays loaded until the process exits
/// (`RTLD_NODELETE`): NVIDIA's libraries start worker threads, and
/// unmapping their code under a running thread crashes the process.
///
/// # Safety
/// As for `libloading::Library::new`: loading runs the file's
/// initialisers.
unsafe fn open_resident(path: &Path) -> Result<Library, libloading::Error> {
    #[cfg(target_os = "linux")]
    {
        use libloading::os::unix::{Library as Unix, RTLD_LAZY, RTLD_LOCAL};
        const RTLD_NODELETE: std::ffi::c_int = 0x1000;
        // SAFETY: the caller vouches for the file's initialisers.
        unsafe { Unix::open(Some(path), RTLD_LAZY | RTLD_LOCAL | RTLD_NODELETE) }.map(Into::into)
    }
    #[cfg(not(target_os = "linux"))]
    // SAFETY: the caller vouches for the file's initialisers.
    unsafe {
        Library::new(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versioned_symbols_are_recognised() {
        assert!(is_versioned_symbol(c"cuMemAlloc_v2"));
        assert!(is_versioned_symbol(c"cuCtxCreate_v4"));
        assert!(is_versioned_symbol(c"cuMemcpy_ptds"));
        assert!(!is_versioned_symbol(c"cuLibraryLoadData"));
        assert!(!is_versioned_symbol(c"cuInit"));
        assert!(!is_versioned_symbol(c"cuFoo_vx"));
    }

    #[test]
    fn plain_names_resolve_at_their_declared_abi() {
        assert_eq!(DriverFns::proc_version(c"cuInit"), Some(2000));
        assert_eq!(DriverFns::proc_version(c"cuCtxSynchronize"), Some(2000));
        assert_eq!(DriverFns::proc_version(c"cuLibraryLoadData"), Some(12000));
        // Versioned names are not asked of cuGetProcAddress: dlsym.
        assert_eq!(DriverFns::proc_version(c"cuCtxCreate_v4"), None);
        assert_eq!(DriverFns::proc_version(c"cuMemAlloc_v2"), None);
        #[cfg(not(feature = "cuda-13000"))]
        assert_eq!(DriverFns::proc_version(c"cuMemAdvise"), Some(8000));
        assert!(
            DriverFns::PROC_VERSIONS.windows(2).all(|w| w[0].0 < w[1].0),
            "sorted for binary search"
        );
    }

    #[test]
    fn the_table_covers_the_whole_api() {
        assert!(
            DriverFns::SYMBOLS.len() >= 440,
            "{}",
            DriverFns::SYMBOLS.len()
        );
        for name in [
            c"cuLibraryLoadData",
            c"cuKernelGetFunction",
            c"cuLinkCreate_v2",
            c"cuGetProcAddress_v2",
        ] {
            assert!(DriverFns::SYMBOLS.contains(&name), "{name:?}");
        }
        #[cfg(not(feature = "cuda-13000"))]
        assert_eq!(CUDA_VERSION, 12090);
        #[cfg(feature = "cuda-13000")]
        assert_eq!(CUDA_VERSION, 13000);
    }
}
