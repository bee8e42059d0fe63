//! NVIDIA's header folders for the loaded NVRTC: the bundled headers it
//! installs (13.3+), or the toolkit's and the wheels'.

use std::path::{Path, PathBuf};

use nvrtc_sys::Nvrtc;

use crate::error::CompileError;

/// Makes (or finds) the private folder of a name, for the bundled headers.
pub(crate) type BundledFolder<'a> = &'a dyn Fn(&str) -> Result<PathBuf, CompileError>;

/// NVIDIA's header folders for the loaded NVRTC: the bundled headers it
/// installed (13.3+, into the folder `bundled` gives), or the toolkit's
/// and the wheels' (`CUDA_HOME`, `nvidia/cuda_runtime`, `nvidia/cuda_cccl`;
/// `nvidia/cu13` for 13.x). Their files are NVIDIA's and versioned with
/// them, so the cache key holds each folder's identity rather than every
/// file's bytes.
pub(crate) fn system_dirs(
    nvrtc: &Nvrtc,
    bundled: Option<BundledFolder<'_>>,
    identity: &str,
) -> Result<Vec<PathBuf>, CompileError> {
    let (major, minor) = nvrtc.version();
    if let Some(folder) = bundled.filter(|_| (major, minor) >= (13, 3)) {
        let dir = folder(&bundled_name(nvrtc, identity))?;
        install_bundled(nvrtc, &dir)?;
        return Ok(vec![dir.join("cccl"), dir]);
    }
    let env = cuda_dylib::SearchEnv::from_process();
    Ok(match major {
        // nvcc's wheel holds `crt/` (`mma.h` includes `crt/mma.h`).
        12 => cuda_dylib::existing_dirs(
            &["include"],
            &[
                "nvidia/cuda_runtime/include",
                "nvidia/cuda_cccl/include",
                "nvidia/cuda_nvcc/include",
            ],
            &env,
        ),
        _ => cuda_dylib::existing_dirs(
            &["include/cccl", "include"],
            &["nvidia/cu13/include/cccl", "nvidia/cu13/include"],
            &env,
        ),
    })
}

/// `nvrtc-headers-<version>-<file>`: one folder per NVRTC file (a patch
/// release keeps the minor version but may bundle other headers), so its
/// path, which the compile key holds, names the headers in it.
fn bundled_name(nvrtc: &Nvrtc, identity: &str) -> String {
    let mut key = cuda_link::CacheKey::builder("nvrtc bundled headers");
    key.field(identity.as_bytes());
    let file = &key.finish().to_hex()[..16];
    format!("nvrtc-headers-{}-{file}", nvrtc.version_string())
}

/// `nvrtcInstallBundledHeaders` into `dir`, a folder only this user can
/// write: NVRTC skips an install whose version marker matches, and
/// serialises concurrent installs with a file lock.
fn install_bundled(nvrtc: &Nvrtc, dir: &Path) -> Result<(), CompileError> {
    let io = |detail: String| CompileError::Io {
        path: dir.display().to_string(),
        detail,
    };
    if dir.join(".nvrtc_headers_version").is_file() {
        return Ok(());
    }
    let c_dir = crate::nvrtc::c_string(&dir.to_string_lossy(), "bundled headers folder")?;
    let mut error_log: *const std::ffi::c_char = std::ptr::null();
    // SAFETY: a C string, flags 0 (skip if installed), and an out-pointer
    // NVRTC sets to a string of its own or leaves null.
    let installed = unsafe {
        nvrtc.nvrtcInstallBundledHeaders(
            c_dir.as_ptr(),
            nvrtc_sys::sys::NVRTC_INSTALL_HEADERS_SKIP_IF_EXISTS,
            &mut error_log,
        )
    }?;
    if installed != nvrtc_sys::sys::nvrtcResult::NVRTC_SUCCESS {
        let detail = if error_log.is_null() {
            nvrtc_sys::NvrtcError { result: installed }.to_string()
        } else {
            // SAFETY: NVRTC's NUL-terminated message, valid until the next
            // call on this thread; copied at once.
            unsafe { std::ffi::CStr::from_ptr(error_log) }
                .to_string_lossy()
                .into_owned()
        };
        return Err(io(format!("nvrtcInstallBundledHeaders: {detail}")));
    }
    Ok(())
}
