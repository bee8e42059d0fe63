//! Context-independent loading of CUDA device code and kernel lookup.
//!
//! A [`Library`] is loaded once with `cuLibraryLoadData` and serves every
//! context and device: [`Library::kernel`] gives a [`Kernel`] (a
//! `CUkernel`), and [`Kernel::function`] the `CUfunction` of one context.
//! Both lookups are cached, so repeated ones make no driver call. Where the
//! driver lacks `cuLibrary*` (before 12.0), or when asked, loading falls back
//! to `cuModuleLoadDataEx` in the current context.
//!
//! ```no_run
//! use cuda_link::ObjectCode;
//! use cuda_module::{Context, Library};
//!
//! let context = Context::primary(0)?;
//! let library = Library::load(&ObjectCode::from_path("saxpy.cubin")?)?;
//! let saxpy = library.kernel("saxpy")?;
//! let function = saxpy.function(&context)?;
//! # let _ = function;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::HashMap;
use std::ffi::{CStr, CString, c_void};
use std::sync::{Arc, Mutex, OnceLock, RwLock, Weak};

use cuda_driver_sys::{
    CUcontext, CUdevice, CUdeviceptr, CUfunction, CUfunction_attribute, CUkernel, CUlibrary,
    CUmodule, CUresult, CUstream, Driver,
};
use cuda_link::{ObjectCode, ObjectKind};

/// Why loading, lookup or launching failed.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ModuleError {
    /// The driver could not be loaded.
    #[error("the CUDA driver is not available: {0}")]
    DriverUnavailable(#[from] cuda_driver_sys::LoadError),
    /// The driver lacks an entry point.
    #[error(transparent)]
    SymbolUnavailable(#[from] cuda_driver_sys::SymbolUnavailable),
    /// A driver call failed.
    #[error("{call} failed with {result}{}", if log.is_empty() { String::new() } else { format!(" for {name}:\n{log}") })]
    Call {
        /// The C function.
        call: &'static str,
        /// The `CUresult` name.
        result: String,
        /// Its code.
        code: u32,
        /// The library's name.
        name: String,
        /// The JIT error log, for loads.
        log: String,
    },
    /// No kernel of that name.
    #[error("no kernel named `{kernel}` in {library}")]
    KernelNotFound {
        /// The name looked up.
        kernel: String,
        /// The library's name.
        library: String,
    },
    /// LTO-IR, a library or host object cannot be loaded as is.
    #[error("{name}: {kind} cannot be loaded; link it into a cubin first")]
    NotLoadable {
        /// The input's name.
        name: String,
        /// Its kind.
        kind: ObjectKind,
    },
    /// The bytes or file to load failed validation.
    #[error(transparent)]
    Object(#[from] cuda_link::ObjectError),
    /// A name with an interior NUL.
    #[error("name contains a NUL byte: {0:?}")]
    BadName(String),
}

fn driver() -> Result<&'static Driver, ModuleError> {
    static INIT: OnceLock<Result<(), ModuleError>> = OnceLock::new();
    let driver = Driver::global()?;
    INIT.get_or_init(|| {
        // SAFETY: cuInit takes only flags.
        let status = unsafe { driver.cuInit(0) }?;
        check(driver, status, "cuInit", "")
    })
    .clone()?;
    Ok(driver)
}

fn check(
    driver: &Driver,
    status: CUresult,
    call: &'static str,
    name: &str,
) -> Result<(), ModuleError> {
    if status == CUresult::CUDA_SUCCESS {
        return Ok(());
    }
    Err(ModuleError::Call {
        call,
        result: driver.error_name(status),
        code: status.0,
        name: name.to_owned(),
        log: String::new(),
    })
}

fn c_name(name: &str) -> Result<CString, ModuleError> {
    CString::new(name).map_err(|_| ModuleError::BadName(name.to_owned()))
}

/// A CUDA context: the device's primary context or a created one.
///
/// Kernels cache their `CUfunction` per `Context` and libraries wait for a
/// context's work before unloading; both hold only weak references, so a
/// context dropped first is simply skipped, never touched after its end.
pub struct Context {
    inner: Arc<ContextInner>,
}

struct ContextInner {
    raw: CUcontext,
    device: CUdevice,
    primary: bool,
}

// SAFETY: a CUcontext may be used from any thread; the driver synchronises.
unsafe impl Send for ContextInner {}
// SAFETY: as above; shared access only pushes and pops it.
unsafe impl Sync for ContextInner {}

impl Context {
    /// Retains the primary context of device `ordinal`.
    pub fn primary(ordinal: i32) -> Result<Self, ModuleError> {
        let driver = driver()?;
        let device = device(driver, ordinal)?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: an out-pointer and a valid device.
        let status = unsafe { driver.cuDevicePrimaryCtxRetain(&mut raw, device) }?;
        check(driver, status, "cuDevicePrimaryCtxRetain", "")?;
        Ok(Self::wrap(raw, device, true))
    }

    /// Creates a new context on device `ordinal` (it becomes current).
    pub fn create(ordinal: i32) -> Result<Self, ModuleError> {
        let driver = driver()?;
        let device = device(driver, ordinal)?;
        let mut raw = std::ptr::null_mut();
        // cuCtxCreate_v4 (12.5+) is the one signature both pinned headers
        // declare; null parameters ask for a plain context.
        // SAFETY: an out-pointer, null optional parameters and a valid device.
        let status = unsafe { driver.cuCtxCreate_v4(&mut raw, std::ptr::null_mut(), 0, device) }?;
        check(driver, status, "cuCtxCreate", "")?;
        Ok(Self::wrap(raw, device, false))
    }

    fn wrap(raw: CUcontext, device: CUdevice, primary: bool) -> Self {
        Context {
            inner: Arc::new(ContextInner {
                raw,
                device,
                primary,
            }),
        }
    }

    /// The raw handle.
    pub fn as_raw(&self) -> CUcontext {
        self.inner.raw
    }

    /// The device.
    pub fn device(&self) -> CUdevice {
        self.inner.device
    }

    /// Makes this context current on the calling thread.
    pub fn make_current(&self) -> Result<(), ModuleError> {
        let driver = driver()?;
        // SAFETY: a live context.
        let status = unsafe { driver.cuCtxSetCurrent(self.inner.raw) }?;
        check(driver, status, "cuCtxSetCurrent", "")
    }

    /// Runs `f` with this context pushed, popping it afterwards.
    fn with_current<T>(
        &self,
        f: impl FnOnce() -> Result<T, ModuleError>,
    ) -> Result<T, ModuleError> {
        self.inner.with_current(f)
    }
}

impl ContextInner {
    fn with_current<T>(
        &self,
        f: impl FnOnce() -> Result<T, ModuleError>,
    ) -> Result<T, ModuleError> {
        let driver = driver()?;
        // SAFETY: a live context: `self` is borrowed from a strong reference.
        let status = unsafe { driver.cuCtxPushCurrent_v2(self.raw) }?;
        check(driver, status, "cuCtxPushCurrent", "")?;
        let result = f();
        let mut popped = std::ptr::null_mut();
        // SAFETY: pops what was pushed above.
        let _ = unsafe { driver.cuCtxPopCurrent_v2(&mut popped) };
        result
    }
}

impl Drop for ContextInner {
    fn drop(&mut self) {
        if let Ok(driver) = driver() {
            // SAFETY: releases what `primary` retained or destroys what
            // `create` made, once.
            let _ = unsafe {
                if self.primary {
                    driver.cuDevicePrimaryCtxRelease_v2(self.device)
                } else {
                    driver.cuCtxDestroy_v2(self.raw)
                }
            };
        }
    }
}

fn device(driver: &Driver, ordinal: i32) -> Result<CUdevice, ModuleError> {
    let mut device = 0;
    // SAFETY: an out-pointer.
    let status = unsafe { driver.cuDeviceGet(&mut device, ordinal) }?;
    check(driver, status, "cuDeviceGet", "")?;
    Ok(device)
}

/// How to load.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoadOptions {
    /// Use `cuModuleLoadDataEx` in the current context even where
    /// `cuLibraryLoadData` exists: the single-context fast path. On an
    /// H200 with driver 580, a 472 KiB cubin under lazy loading costs 402 µs
    /// to load, look up and unload through the module API against 684 µs
    /// through the library API, which loads the code into a context only at
    /// the first `cuKernelGetFunction` (`docs/benchmarks.md`). The library
    /// API serves every context and device from one load.
    pub force_module_api: bool,
    /// Look up every kernel and load its code into the current context at
    /// load time, whatever `CUDA_MODULE_LOADING` says, so that no first
    /// launch pays for it.
    pub eager: bool,
    /// Let the driver use the caller's image instead of copying it
    /// (`CU_LIBRARY_BINARY_IS_PRESERVED`); the library keeps the bytes alive.
    pub binary_is_preserved: bool,
}

/// Whether modules load lazily, as `CUDA_MODULE_LOADING` set it at `cuInit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadingMode {
    /// Kernels are loaded at first use.
    Lazy,
    /// Everything is loaded at load time.
    Eager,
}

/// The process's module loading mode. The driver fixes it at `cuInit` from
/// `CUDA_MODULE_LOADING=LAZY|EAGER`; set that before the first CUDA call.
pub fn loading_mode() -> Result<LoadingMode, ModuleError> {
    let driver = driver()?;
    let mut mode = cuda_driver_sys::CUmoduleLoadingMode::CU_MODULE_EAGER_LOADING;
    // SAFETY: an out-pointer.
    let status = unsafe { driver.cuModuleGetLoadingMode(&mut mode) }?;
    check(driver, status, "cuModuleGetLoadingMode", "")?;
    Ok(
        if mode == cuda_driver_sys::CUmoduleLoadingMode::CU_MODULE_LAZY_LOADING {
            LoadingMode::Lazy
        } else {
            LoadingMode::Eager
        },
    )
}

enum Handle {
    Library(CUlibrary),
    Module(CUmodule),
}

/// Loaded device code, usable from every context (or, after a fallback to
/// the module API, from the context current at load time).
pub struct Library {
    loaded: Arc<Loaded>,
    name: String,
    kernels: RwLock<HashMap<Box<str>, Kernel, BuildFnv>>,
}

/// The loaded handle and what must live as long as it. Every [`Kernel`]
/// holds it, so the code stays loaded while a kernel can still be launched.
struct Loaded {
    handle: Handle,
    /// The JIT error log buffer given to the driver at load time. The driver
    /// may compile lazily and write it later, so it lives as long as the
    /// handle, and every call that may compile holds its lock.
    log: JitLog,
    /// Contexts that resolved a function of this library: their work is
    /// waited for before unloading, if they still exist.
    contexts: Mutex<Vec<Weak<ContextInner>>>,
    /// The image, when the driver was told it stays alive.
    _image: Option<Arc<[u8]>>,
}

impl Loaded {
    fn record_context(&self, context: &Arc<ContextInner>) {
        let mut contexts = self.contexts.lock().unwrap_or_else(|p| p.into_inner());
        contexts.retain(|weak| weak.strong_count() > 0);
        if !contexts
            .iter()
            .any(|weak| std::ptr::eq(weak.as_ptr(), Arc::as_ptr(context)))
        {
            contexts.push(Arc::downgrade(context));
        }
    }
}

impl Drop for Loaded {
    fn drop(&mut self) {
        let Ok(driver) = driver() else { return };
        let contexts = std::mem::take(self.contexts.get_mut().unwrap_or_else(|p| p.into_inner()));
        for context in contexts.iter().filter_map(Weak::upgrade) {
            // Work queued there may still run this library's code.
            let _ = context.with_current(|| {
                // SAFETY: no arguments; the context is pushed and alive.
                let _ = unsafe { driver.cuCtxSynchronize() };
                Ok(())
            });
        }
        // SAFETY: unloads what `load_image` loaded, once, after the work
        // that used it.
        let _ = unsafe {
            match self.handle {
                Handle::Library(library) => driver.cuLibraryUnload(library),
                Handle::Module(module) => driver.cuModuleUnload(module),
            }
        };
    }
}

/// A heap buffer the driver writes its JIT error log into.
///
/// The driver keeps the pointer for the library's lifetime: with lazy
/// loading it compiles, and writes the log, inside later calls such as
/// `cuKernelGetFunction` or `cuLibraryGetGlobal` in a new context. Every
/// such call is made through [`JitLog::lock`], and the text is read only
/// under that same lock, so the driver's writes and our reads never overlap.
struct JitLog {
    buffer: *mut u8,
    len: usize,
    lock: Mutex<()>,
}

// SAFETY: the buffer is a plain heap allocation owned by this value; the
// driver writes it only during calls made under `lock` (see the type's
// docs), and it is read only under `lock`.
unsafe impl Send for JitLog {}
// SAFETY: as above: shared access goes through `lock`.
unsafe impl Sync for JitLog {}

/// Proof that the log's lock is held: driver calls that may compile this
/// library's code are made while one lives, and the log is read through it.
struct LogGuard<'a> {
    log: &'a JitLog,
    _held: std::sync::MutexGuard<'a, ()>,
}

impl JitLog {
    const SIZE: usize = 16 * 1024;

    fn new() -> Self {
        let buffer = Box::into_raw(vec![0u8; Self::SIZE].into_boxed_slice());
        JitLog {
            buffer: buffer.cast(),
            len: Self::SIZE,
            lock: Mutex::new(()),
        }
    }

    fn lock(&self) -> LogGuard<'_> {
        LogGuard {
            log: self,
            _held: self.lock.lock().unwrap_or_else(|p| p.into_inner()),
        }
    }
}

impl LogGuard<'_> {
    fn text(&self) -> String {
        // SAFETY: `buffer` holds `len` initialised bytes until Drop. Every
        // driver call that may write it runs under this lock (see `JitLog`),
        // and none is running: this guard holds the lock.
        let bytes = unsafe { std::slice::from_raw_parts(self.log.buffer, self.log.len) };
        let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
        String::from_utf8_lossy(&bytes[..end]).into_owned()
    }
}

impl Drop for JitLog {
    fn drop(&mut self) {
        // SAFETY: reconstructs the box made in `new`, once. No library holds
        // the pointer any more: `Loaded::drop` unloads before its fields
        // drop, and a failed load leaves no library behind.
        drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(self.buffer, self.len)) });
    }
}

/// A failed call whose JIT log, if the driver wrote one, goes in the error.
fn check_with_log(
    driver: &Driver,
    status: CUresult,
    call: &'static str,
    name: &str,
    log: &LogGuard<'_>,
) -> Result<(), ModuleError> {
    check(driver, status, call, name).map_err(|error| match error {
        ModuleError::Call {
            call,
            result,
            code,
            name,
            ..
        } => ModuleError::Call {
            call,
            result,
            code,
            name,
            log: log.text(),
        },
        other => other,
    })
}

/// FNV-1a: kernel names are short, and SipHash's DoS resistance buys
/// nothing for a cache keyed by names the program itself chose.
#[derive(Default)]
struct Fnv(u64);

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut hash = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for &byte in bytes {
            hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = hash;
    }
}

type BuildFnv = std::hash::BuildHasherDefault<Fnv>;

// SAFETY: library and module handles are process-wide driver objects,
// usable from any thread; the context list is behind a mutex.
unsafe impl Send for Loaded {}
// SAFETY: as above.
unsafe impl Sync for Loaded {}

impl Library {
    /// Loads a cubin, PTX or fatbin with `cuLibraryLoadData`.
    ///
    /// # What the driver trusts
    /// `cuLibraryLoadData` takes no size. Only an [`ObjectCode`]'s
    /// [`ValidatedImage`](cuda_link::ValidatedImage) reaches it, so the
    /// driver never reads outside the image: the ELF header, the section
    /// and program header tables, every section's and segment's range, the
    /// name, symbol and string tables, every relocation's symbol and offset,
    /// every note, and the same inside every fatbin entry are checked first.
    ///
    /// What lies inside those bounds is the driver's to interpret: SASS,
    /// the `.nv.info` attributes, relocation types, section types and
    /// flags. The GPU fuzz campaign (`docs/reliability.md`) found that the
    /// 580 driver can still crash on such in-bounds corruption, which no
    /// check of ours can rule out without reimplementing the loader. Images
    /// from nvcc, NVRTC, ptxas or nvJitLink are safe to load; bytes from an
    /// untrusted source belong in a separate process.
    pub fn load(code: &ObjectCode) -> Result<Self, ModuleError> {
        Self::load_with(code, LoadOptions::default())
    }

    /// Reads, validates and loads a file.
    ///
    /// The file is read and validated like [`ObjectCode::from_path`], then
    /// loaded from memory: `cuLibraryLoadFromFile` would let the driver
    /// parse bytes that no one checked, or that changed after the check.
    pub fn from_file(path: impl AsRef<std::path::Path>) -> Result<Self, ModuleError> {
        Self::load(&ObjectCode::from_path(path)?)
    }

    /// Loads with options.
    pub fn load_with(code: &ObjectCode, options: LoadOptions) -> Result<Self, ModuleError> {
        if !matches!(
            code.kind(),
            ObjectKind::Cubin | ObjectKind::Ptx | ObjectKind::Fatbin
        ) {
            return Err(ModuleError::NotLoadable {
                name: code.name().to_owned(),
                kind: code.kind(),
            });
        }
        // Only a validated image reaches the size-less load calls.
        Self::load_image(code.image(), code.name(), options)
    }

    /// Loads validated bytes: the type is the proof.
    fn load_image(
        image: &cuda_link::ValidatedImage,
        name: &str,
        options: LoadOptions,
    ) -> Result<Self, ModuleError> {
        let driver = driver()?;
        let log = JitLog::new();
        let mut jit_keys = [
            cuda_driver_sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
            cuda_driver_sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
        ];
        let mut jit_values = [
            log.buffer.cast::<c_void>(),
            std::ptr::without_provenance_mut(log.len),
        ];
        let preserve = options.binary_is_preserved;
        let mut library_keys = [cuda_driver_sys::CUlibraryOption::CU_LIBRARY_BINARY_IS_PRESERVED];
        let mut library_values = [std::ptr::without_provenance_mut::<c_void>(1)];
        let library_count = u32::from(preserve);
        let use_library = !options.force_module_api && driver.cuLibraryLoadData.is_some();

        let mut library: CUlibrary = std::ptr::null_mut();
        let mut module: CUmodule = std::ptr::null_mut();
        let guard = log.lock();
        // SAFETY: `image` is validated (every offset inside it is in bounds,
        // PTX ends in a NUL), so the size-less calls read only its bytes; it
        // outlives the call, and the library when preserved, as the library
        // keeps it. The option arrays match their counts; out-pointers are
        // valid; the log buffer lives as long as the handle.
        let (status, call) = unsafe {
            if use_library {
                let status = driver.cuLibraryLoadData(
                    &mut library,
                    image.as_bytes().as_ptr().cast(),
                    jit_keys.as_mut_ptr(),
                    jit_values.as_mut_ptr(),
                    jit_keys.len() as u32,
                    library_keys.as_mut_ptr(),
                    library_values.as_mut_ptr(),
                    library_count,
                )?;
                (status, "cuLibraryLoadData")
            } else {
                let status = driver.cuModuleLoadDataEx(
                    &mut module,
                    image.as_bytes().as_ptr().cast(),
                    jit_keys.len() as u32,
                    jit_keys.as_mut_ptr(),
                    jit_values.as_mut_ptr(),
                )?;
                (status, "cuModuleLoadDataEx")
            }
        };
        check_with_log(driver, status, call, name, &guard)?;
        drop(guard);
        let loaded = Library {
            loaded: Arc::new(Loaded {
                handle: if use_library {
                    Handle::Library(library)
                } else {
                    Handle::Module(module)
                },
                log,
                contexts: Mutex::default(),
                _image: preserve.then(|| image.shared()),
            }),
            name: name.to_owned(),
            kernels: RwLock::default(),
        };
        if options.eager && use_library {
            loaded.resolve_all_in_current_context()?;
        }
        Ok(loaded)
    }

    /// Looks up every kernel and loads its code into the current context,
    /// if there is one.
    fn resolve_all_in_current_context(&self) -> Result<(), ModuleError> {
        let driver = driver()?;
        let mut context = std::ptr::null_mut();
        // SAFETY: an out-pointer.
        let status = unsafe { driver.cuCtxGetCurrent(&mut context) }?;
        check(driver, status, "cuCtxGetCurrent", &self.name)?;
        for name in self.kernels()? {
            let kernel = self.kernel(&name)?;
            if !context.is_null() {
                kernel.function_in_current()?;
            }
        }
        Ok(())
    }

    /// Whether this library fell back to the context-bound module API.
    pub fn is_module(&self) -> bool {
        matches!(self.loaded.handle, Handle::Module(_))
    }

    /// The library's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The kernel `name`; cached, so a second lookup makes no driver call.
    pub fn kernel(&self, name: &str) -> Result<Kernel, ModuleError> {
        let cached = self
            .kernels
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(name)
            .cloned();
        if let Some(kernel) = cached {
            return Ok(kernel);
        }
        let mut cache = self.kernels.write().unwrap_or_else(|p| p.into_inner());
        if let Some(kernel) = cache.get(name) {
            return Ok(kernel.clone());
        }
        let driver = driver()?;
        let c = c_name(name)?;
        let not_found = || ModuleError::KernelNotFound {
            kernel: name.to_owned(),
            library: self.name.clone(),
        };
        let log = self.loaded.log.lock();
        let handle = match self.loaded.handle {
            Handle::Library(library) => {
                let mut raw: CUkernel = std::ptr::null_mut();
                // SAFETY: a live library, a C string and an out-pointer.
                let status = unsafe { driver.cuLibraryGetKernel(&mut raw, library, c.as_ptr()) }?;
                if status == CUresult::CUDA_ERROR_NOT_FOUND {
                    return Err(not_found());
                }
                check_with_log(driver, status, "cuLibraryGetKernel", &self.name, &log)?;
                KernelHandle::Kernel(raw)
            }
            Handle::Module(module) => {
                let mut raw: CUfunction = std::ptr::null_mut();
                // SAFETY: a live module, a C string and an out-pointer.
                let status = unsafe { driver.cuModuleGetFunction(&mut raw, module, c.as_ptr()) }?;
                if status == CUresult::CUDA_ERROR_NOT_FOUND {
                    return Err(not_found());
                }
                check_with_log(driver, status, "cuModuleGetFunction", &self.name, &log)?;
                KernelHandle::Function(raw)
            }
        };
        drop(log);
        let kernel = Kernel {
            name: name.into(),
            inner: Arc::new(KernelInner {
                handle,
                first_context: OnceLock::new(),
                other_contexts: Mutex::default(),
                loaded: Arc::clone(&self.loaded),
            }),
        };
        cache.insert(name.into(), kernel.clone());
        Ok(kernel)
    }

    /// Every kernel's name, through `cuLibraryEnumerateKernels`.
    pub fn kernels(&self) -> Result<Vec<String>, ModuleError> {
        let Handle::Library(library) = self.loaded.handle else {
            return Err(cuda_driver_sys::SymbolUnavailable {
                library: "module API",
                symbol: "cuLibraryEnumerateKernels",
            }
            .into());
        };
        let driver = driver()?;
        let mut count = 0u32;
        // SAFETY: a live library and an out-pointer.
        let status = unsafe { driver.cuLibraryGetKernelCount(&mut count, library) }?;
        check(driver, status, "cuLibraryGetKernelCount", &self.name)?;
        let mut raws: Vec<CUkernel> = vec![std::ptr::null_mut(); count as usize];
        // SAFETY: a buffer of `count` handles.
        let status =
            unsafe { driver.cuLibraryEnumerateKernels(raws.as_mut_ptr(), count, library) }?;
        check(driver, status, "cuLibraryEnumerateKernels", &self.name)?;
        raws.into_iter()
            .map(|raw| {
                let mut text: *const std::ffi::c_char = std::ptr::null();
                // SAFETY: a kernel of this library and an out-pointer.
                let status = unsafe { driver.cuKernelGetName(&mut text, raw) }?;
                check(driver, status, "cuKernelGetName", &self.name)?;
                if text.is_null() {
                    return Ok(String::new());
                }
                // SAFETY: non-null, and the driver's names are NUL-terminated
                // and live as long as the library, which `self` keeps loaded.
                Ok(unsafe { CStr::from_ptr(text) }
                    .to_string_lossy()
                    .into_owned())
            })
            .collect()
    }

    /// The address and size of a `__managed__` variable: one address valid
    /// on the host and every device (`cuLibraryGetManaged`).
    pub fn managed(&self, name: &str) -> Result<(CUdeviceptr, usize), ModuleError> {
        let Handle::Library(library) = self.loaded.handle else {
            // In a module, managed variables are ordinary globals.
            return self.global(name);
        };
        let driver = driver()?;
        let c = c_name(name)?;
        let (mut pointer, mut size) = (0, 0);
        // Lazy loading may load and compile the code here, writing the log.
        let log = self.loaded.log.lock();
        // SAFETY: a live library, a C string and out-pointers.
        let status =
            unsafe { driver.cuLibraryGetManaged(&mut pointer, &mut size, library, c.as_ptr()) }?;
        check_with_log(driver, status, "cuLibraryGetManaged", &self.name, &log)?;
        Ok((pointer, size))
    }

    /// The address and size of a `__device__` variable in the current
    /// context's device.
    pub fn global(&self, name: &str) -> Result<(CUdeviceptr, usize), ModuleError> {
        let driver = driver()?;
        let c = c_name(name)?;
        let (mut pointer, mut size) = (0, 0);
        // Lazy loading may load and compile the code here, writing the log.
        let log = self.loaded.log.lock();
        // SAFETY: a live handle, a C string and out-pointers.
        let (status, call) = unsafe {
            match self.loaded.handle {
                Handle::Library(library) => (
                    driver.cuLibraryGetGlobal(&mut pointer, &mut size, library, c.as_ptr())?,
                    "cuLibraryGetGlobal",
                ),
                Handle::Module(module) => (
                    driver.cuModuleGetGlobal_v2(&mut pointer, &mut size, module, c.as_ptr())?,
                    "cuModuleGetGlobal",
                ),
            }
        };
        check_with_log(driver, status, call, &self.name, &log)?;
        Ok((pointer, size))
    }
}

#[derive(Clone, Copy)]
enum KernelHandle {
    Kernel(CUkernel),
    Function(CUfunction),
}

struct KernelInner {
    handle: KernelHandle,
    /// `(context, function)` of the first context asked for: most programs
    /// use one, and a set `OnceLock` is read with a single atomic load. The
    /// weak reference keeps the context's allocation, so its address cannot
    /// be reused by another context while the entry exists.
    first_context: OnceLock<(Weak<ContextInner>, usize)>,
    other_contexts: Mutex<Vec<(Weak<ContextInner>, usize)>>,
    loaded: Arc<Loaded>,
}

// SAFETY: CUkernel and CUfunction are driver handles usable from any thread;
// the caches are a OnceLock and a Mutex.
unsafe impl Send for KernelInner {}
// SAFETY: as above.
unsafe impl Sync for KernelInner {}

/// A kernel of a [`Library`]; cheap to clone.
#[derive(Clone)]
pub struct Kernel {
    name: Arc<str>,
    inner: Arc<KernelInner>,
}

/// A kernel's resource use on one device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelAttributes {
    /// Registers per thread.
    pub registers: i32,
    /// Static shared memory in bytes.
    pub shared_bytes: i32,
    /// Constant memory in bytes.
    pub const_bytes: i32,
    /// Local memory per thread in bytes.
    pub local_bytes: i32,
    /// The largest block this kernel can launch with.
    pub max_threads_per_block: i32,
}

impl Kernel {
    /// The kernel's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The `CUfunction` of `context`; cached per context.
    pub fn function(&self, context: &Context) -> Result<CUfunction, ModuleError> {
        let inner = &*self.inner;
        if let KernelHandle::Function(raw) = inner.handle {
            return Ok(raw);
        }
        let is_this =
            |weak: &Weak<ContextInner>| std::ptr::eq(weak.as_ptr(), Arc::as_ptr(&context.inner));
        match inner.first_context.get() {
            Some((first, function)) if is_this(first) => return Ok(*function as CUfunction),
            Some(_) => {}
            None => {
                let function = self.resolve(context)? as usize;
                let (winner, _) = inner
                    .first_context
                    .get_or_init(|| (Arc::downgrade(&context.inner), function));
                if is_this(winner) {
                    return Ok(function as CUfunction);
                }
                // Another thread took the slot for another context.
                let mut others = inner
                    .other_contexts
                    .lock()
                    .unwrap_or_else(|p| p.into_inner());
                others.push((Arc::downgrade(&context.inner), function));
                return Ok(function as CUfunction);
            }
        }
        let mut others = inner
            .other_contexts
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if let Some((_, function)) = others.iter().find(|(weak, _)| is_this(weak)) {
            return Ok(*function as CUfunction);
        }
        let function = self.resolve(context)?;
        others.retain(|(weak, _)| weak.strong_count() > 0);
        others.push((Arc::downgrade(&context.inner), function as usize));
        Ok(function)
    }

    /// Asks the driver for the function in `context`, and remembers the
    /// context so that unloading waits for its work.
    fn resolve(&self, context: &Context) -> Result<CUfunction, ModuleError> {
        let function = context.with_current(|| self.function_in_current())?;
        self.inner.loaded.record_context(&context.inner);
        Ok(function)
    }

    fn function_in_current(&self) -> Result<CUfunction, ModuleError> {
        match self.inner.handle {
            KernelHandle::Function(raw) => Ok(raw),
            KernelHandle::Kernel(raw) => {
                let driver = driver()?;
                let mut function: CUfunction = std::ptr::null_mut();
                // May load and compile the code in this context, writing the log.
                let log = self.inner.loaded.log.lock();
                // SAFETY: a live kernel and an out-pointer; the driver uses
                // the calling thread's current context.
                let status = unsafe { driver.cuKernelGetFunction(&mut function, raw) }?;
                check_with_log(driver, status, "cuKernelGetFunction", &self.name, &log)?;
                Ok(function)
            }
        }
    }

    /// Registers, shared, const and local bytes, and the block limit.
    pub fn attributes(&self, context: &Context) -> Result<KernelAttributes, ModuleError> {
        let function = self.function(context)?;
        let driver = driver()?;
        let get = |attribute: CUfunction_attribute| -> Result<i32, ModuleError> {
            let mut value = 0;
            // SAFETY: a live function and an out-pointer.
            let status = unsafe { driver.cuFuncGetAttribute(&mut value, attribute, function) }?;
            check(driver, status, "cuFuncGetAttribute", &self.name)?;
            Ok(value)
        };
        Ok(KernelAttributes {
            registers: get(CUfunction_attribute::CU_FUNC_ATTRIBUTE_NUM_REGS)?,
            shared_bytes: get(CUfunction_attribute::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?,
            const_bytes: get(CUfunction_attribute::CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES)?,
            local_bytes: get(CUfunction_attribute::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)?,
            max_threads_per_block: get(
                CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
            )?,
        })
    }

    /// `(offset, size)` of each parameter, through `cuKernelGetParamInfo`
    /// (or `cuFuncGetParamInfo` after a module fallback).
    pub fn param_info(&self) -> Result<Vec<(usize, usize)>, ModuleError> {
        let driver = driver()?;
        let mut params = Vec::new();
        for index in 0.. {
            let (mut offset, mut size) = (0usize, 0usize);
            // SAFETY: a live handle and out-pointers; the driver reports an
            // error past the last parameter.
            let status = unsafe {
                match self.inner.handle {
                    KernelHandle::Kernel(raw) => {
                        driver.cuKernelGetParamInfo(raw, index, &mut offset, &mut size)?
                    }
                    KernelHandle::Function(raw) => {
                        driver.cuFuncGetParamInfo(raw, index, &mut offset, &mut size)?
                    }
                }
            };
            if status != CUresult::CUDA_SUCCESS {
                break;
            }
            params.push((offset, size));
        }
        Ok(params)
    }

    /// Launches on `context` with `config`.
    ///
    /// # Safety
    /// `params` must point at one value per kernel parameter, of the
    /// parameter's type, and every pointer argument must be valid for what
    /// the kernel does with it, for as long as it runs. `config.stream` must
    /// be null or a live stream of `context`.
    pub unsafe fn launch(
        &self,
        context: &Context,
        config: LaunchConfig,
        params: &mut [*mut c_void],
    ) -> Result<(), ModuleError> {
        let function = self.function(context)?;
        let driver = driver()?;
        let LaunchConfig {
            grid,
            block,
            shared_bytes,
            stream,
        } = config;
        context.with_current(|| {
            // SAFETY: the caller vouches for the parameters.
            let status = unsafe {
                driver.cuLaunchKernel(
                    function,
                    grid.0,
                    grid.1,
                    grid.2,
                    block.0,
                    block.1,
                    block.2,
                    shared_bytes,
                    stream,
                    params.as_mut_ptr(),
                    std::ptr::null_mut(),
                )
            }?;
            check(driver, status, "cuLaunchKernel", &self.name)
        })
    }
}

/// Grid, block, dynamic shared memory and stream of a launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchConfig {
    /// Blocks in x, y, z.
    pub grid: (u32, u32, u32),
    /// Threads per block in x, y, z.
    pub block: (u32, u32, u32),
    /// Dynamic shared memory per block, in bytes.
    pub shared_bytes: u32,
    /// The stream; null is the context's default stream.
    pub stream: CUstream,
}

impl LaunchConfig {
    /// One thread per element: `block` threads a block, enough blocks to
    /// cover `elements`, on the default stream.
    pub fn for_elements(elements: u32, block: u32) -> Self {
        LaunchConfig {
            grid: (elements.div_ceil(block.max(1)), 1, 1),
            block: (block, 1, 1),
            shared_bytes: 0,
            stream: std::ptr::null_mut(),
        }
    }
}

/// Device memory for tests and small programs: allocate, copy, free.
///
/// It keeps its context alive, so freeing never meets a destroyed context
/// or a reused address.
pub struct DeviceBuffer {
    pointer: CUdeviceptr,
    bytes: usize,
    context: Arc<ContextInner>,
}

impl DeviceBuffer {
    /// Copies `data` to a new allocation in `context`.
    pub fn from_slice<T: bytemuck::NoUninit>(
        context: &Context,
        data: &[T],
    ) -> Result<Self, ModuleError> {
        let driver = driver()?;
        let bytes: &[u8] = bytemuck::cast_slice(data);
        context.with_current(|| {
            let mut pointer = 0;
            // SAFETY: an out-pointer, in the pushed context.
            let status = unsafe { driver.cuMemAlloc_v2(&mut pointer, bytes.len().max(1)) }?;
            check(driver, status, "cuMemAlloc", "")?;
            let buffer = DeviceBuffer {
                pointer,
                bytes: bytes.len(),
                context: Arc::clone(&context.inner),
            };
            // SAFETY: the new allocation holds `bytes.len()` bytes; the
            // source is that many initialised host bytes.
            let status =
                unsafe { driver.cuMemcpyHtoD_v2(pointer, bytes.as_ptr().cast(), bytes.len()) }?;
            check(driver, status, "cuMemcpyHtoD", "")?;
            Ok(buffer)
        })
    }

    /// The device address.
    pub fn pointer(&self) -> CUdeviceptr {
        self.pointer
    }

    /// The size in bytes.
    pub fn len(&self) -> usize {
        self.bytes
    }

    /// Whether the buffer holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.bytes == 0
    }

    /// Copies the allocation back into a vector of `T`: as many whole `T`
    /// as it holds. `T` accepts any bit pattern, so any device bytes are a
    /// valid `T`.
    pub fn to_vec<T: bytemuck::AnyBitPattern>(&self) -> Result<Vec<T>, ModuleError> {
        let driver = driver()?;
        let mut out = vec![T::zeroed(); self.bytes / std::mem::size_of::<T>().max(1)];
        let size = std::mem::size_of_val(&out[..]);
        self.context.with_current(|| {
            // SAFETY: `out` holds exactly `size` bytes, no more than the
            // allocation; every byte pattern the copy leaves is a valid `T`.
            let status =
                unsafe { driver.cuMemcpyDtoH_v2(out.as_mut_ptr().cast(), self.pointer, size) }?;
            check(driver, status, "cuMemcpyDtoH", "")
        })?;
        Ok(out)
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        if let Ok(driver) = driver() {
            let _ = self.context.with_current(|| {
                // SAFETY: frees what `from_slice` allocated, once, in its
                // context, which this buffer keeps alive.
                let _ = unsafe { driver.cuMemFree_v2(self.pointer) };
                Ok(())
            });
        }
    }
}

/// Copies host values to a device address, e.g. a global from
/// [`Library::global`].
///
/// # Safety
/// `destination` must be valid for writes of `size_of_val(data)` bytes in
/// the current context: device memory, or under unified addressing also
/// managed, pinned or registered host memory, which this call writes as
/// ordinary memory. Nothing may read or write those bytes concurrently.
pub unsafe fn copy_to_device<T: bytemuck::NoUninit>(
    destination: CUdeviceptr,
    data: &[T],
) -> Result<(), ModuleError> {
    let driver = driver()?;
    let bytes: &[u8] = bytemuck::cast_slice(data);
    // SAFETY: the caller vouches for the destination; the source is
    // `bytes.len()` initialised host bytes.
    let status =
        unsafe { driver.cuMemcpyHtoD_v2(destination, bytes.as_ptr().cast(), bytes.len()) }?;
    check(driver, status, "cuMemcpyHtoD", "")
}

/// Waits for all work in the current context.
pub fn synchronize(context: &Context) -> Result<(), ModuleError> {
    let driver = driver()?;
    context.with_current(|| {
        // SAFETY: no arguments.
        let status = unsafe { driver.cuCtxSynchronize() }?;
        check(driver, status, "cuCtxSynchronize", "")
    })
}

/// The number of devices.
pub fn device_count() -> Result<i32, ModuleError> {
    let driver = driver()?;
    let mut count = 0;
    // SAFETY: an out-pointer.
    let status = unsafe { driver.cuDeviceGetCount(&mut count) }?;
    check(driver, status, "cuDeviceGetCount", "")?;
    Ok(count)
}
