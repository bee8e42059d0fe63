//! `Library`: device code loaded once with `cuLibraryLoadData` (or a
//! module), its kernels, globals and managed variables.

use std::collections::HashMap;
use std::ffi::{CStr, c_void};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use cuda_driver_sys::driver_call;
use cuda_driver_sys::sys::{CUdeviceptr, CUfunction, CUkernel, CUlibrary, CUmodule, CUresult};
use cuda_link::{ObjectCode, ObjectKind};

use crate::context::{Context, Home};
use crate::error::{About, ModuleError, c_name, check, closest_names, driver};
use crate::jit_log::{JitLog, check_with_log};
use crate::kernel::{Kernel, KernelHandle, KernelInner};
use crate::loaded::{Handle, Loaded};

/// How to load.
///
/// Build it with `default()` and the setters, which are named after the
/// fields (as cuda-link's `LinkerOptions`); options will be added, so it
/// cannot be written as a struct literal outside this crate:
///
/// ```
/// use cuda_module::LoadOptions;
///
/// let options = LoadOptions::default().force_module_api(true).eager(true);
/// assert!(options.force_module_api && options.eager && !options.binary_is_preserved);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
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

impl LoadOptions {
    cuda_link::option_setter!(flag force_module_api bool);
    cuda_link::option_setter!(flag eager bool);
    cuda_link::option_setter!(flag binary_is_preserved bool);
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
    let mut mode = cuda_driver_sys::sys::CUmoduleLoadingMode::CU_MODULE_EAGER_LOADING;
    // SAFETY: an out-pointer.
    let call = unsafe { driver_call!(driver, cuModuleGetLoadingMode(&mut mode)) }?;
    check(driver, call, About::NOTHING)?;
    Ok(
        if mode == cuda_driver_sys::sys::CUmoduleLoadingMode::CU_MODULE_LAZY_LOADING {
            LoadingMode::Lazy
        } else {
            LoadingMode::Eager
        },
    )
}

/// Loaded device code, usable from every context (or, after a fallback to
/// the module API, from the context current at load time).
pub struct Library {
    loaded: Arc<Loaded>,
    kernels: RwLock<HashMap<Box<str>, Kernel, foldhash::fast::RandomState>>,
    /// The code's NVRTC name expressions and their lowered names.
    name_expressions: Vec<(String, String)>,
}

impl Library {
    /// Loads a cubin, PTX or fatbin with `cuLibraryLoadData`.
    ///
    /// # What the driver trusts
    /// `cuLibraryLoadData` takes no size. Only an [`ObjectCode`]'s
    /// [`ValidatedImage`](cuda_link::ValidatedImage) reaches it, so the
    /// driver finds every structure it follows inside the image: the ELF
    /// header, the section and program header tables, every section's and
    /// segment's range, the name, symbol and string tables, every
    /// relocation's symbol and offset, every note, CUDA's section and
    /// symbol indices, and the same inside every fatbin entry are checked
    /// first (the full list: [`ValidatedImage`](cuda_link::ValidatedImage)).
    ///
    /// What lies inside those bounds is the driver's to interpret: SASS,
    /// the `.nv.info` attributes, relocation types, section types and
    /// flags. The GPU fuzz campaign (`docs/reliability.md`) found that the
    /// 580 driver can still crash on such in-bounds corruption, which no
    /// check of ours can rule out without reimplementing the loader. Images
    /// from nvcc, NVRTC, ptxas or nvJitLink are safe to load; bytes from an
    /// untrusted source belong in a separate process.
    ///
    /// # Errors
    /// - [`ModuleError::NotLoadable`] for LTO-IR, a library or a host
    ///   object: link it into a cubin first;
    /// - [`ModuleError::DriverUnavailable`] where no CUDA driver is
    ///   installed (also on a machine without a GPU);
    /// - [`ModuleError::Call`] where the driver refuses the code (PTX that
    ///   does not compile, a cubin for another architecture), carrying the
    ///   JIT error log; or, after a fallback to the module API, where no
    ///   context is current.
    ///
    /// ```no_run
    /// use cuda_module::{Library, cuda_link::ObjectCode};
    ///
    /// let code = ObjectCode::from_path("saxpy.cubin")?; // read and validated
    /// let library = Library::load(&code)?;
    /// let saxpy = library.kernel("saxpy")?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
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
        let mut library = Self::load_image(code.image(), code.name(), options)?;
        library.name_expressions = code.name_expressions().to_vec();
        Ok(library)
    }

    /// Loads validated bytes: the type is the proof.
    fn load_image(
        image: &cuda_link::ValidatedImage,
        name: &str,
        options: LoadOptions,
    ) -> Result<Self, ModuleError> {
        let _phase = phase!("load");
        let driver = driver()?;
        let log = JitLog::new();
        let mut jit_keys = [
            cuda_driver_sys::sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
            cuda_driver_sys::sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
        ];
        let mut jit_values = [
            log.buffer.cast::<c_void>(),
            std::ptr::without_provenance_mut(log.len),
        ];
        let preserve = options.binary_is_preserved;
        let mut library_keys =
            [cuda_driver_sys::sys::CUlibraryOption::CU_LIBRARY_BINARY_IS_PRESERVED];
        let mut library_values = [std::ptr::without_provenance_mut::<c_void>(1)];
        let library_count = u32::from(preserve);
        let use_library = !options.force_module_api && driver.cuLibraryLoadData.is_some();

        let mut library: CUlibrary = std::ptr::null_mut();
        let mut module: CUmodule = std::ptr::null_mut();
        // cuModuleLoadDataEx loads into the current context, for it alone.
        let home = (!use_library).then(|| Home::current(driver)).transpose()?;
        let guard = log.lock();
        // SAFETY: `image`'s ELF tables and ranges lie inside it and its PTX
        // ends in a NUL, so the size-less calls find its structures in its
        // bytes (its contents are the driver's to interpret, see `load`); it
        // outlives the call, and the library when preserved, as the library
        // keeps it. The option arrays match their counts; out-pointers are
        // valid; the log buffer lives as long as the handle.
        let call = unsafe {
            if use_library {
                driver_call!(
                    driver,
                    cuLibraryLoadData(
                        &mut library,
                        image.as_bytes().as_ptr().cast(),
                        jit_keys.as_mut_ptr(),
                        jit_values.as_mut_ptr(),
                        jit_keys.len() as u32,
                        library_keys.as_mut_ptr(),
                        library_values.as_mut_ptr(),
                        library_count,
                    )
                )
            } else {
                driver_call!(
                    driver,
                    cuModuleLoadDataEx(
                        &mut module,
                        image.as_bytes().as_ptr().cast(),
                        jit_keys.len() as u32,
                        jit_keys.as_mut_ptr(),
                        jit_values.as_mut_ptr(),
                    )
                )
            }
        }?;
        check_with_log(driver, call, About::library(name), &guard)?;
        drop(guard);
        let handle = match home {
            Some(home) => Handle::Module(module, home),
            None => Handle::Library(library),
        };
        let image = preserve.then(|| image.shared());
        let loaded = Library {
            loaded: Arc::new(Loaded::new(handle, name, log, image)),
            kernels: RwLock::default(),
            name_expressions: Vec::new(),
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
        let call = unsafe { driver_call!(driver, cuCtxGetCurrent(&mut context)) }?;
        check(driver, call, About::library(self.name()))?;
        for name in self.kernels()? {
            let kernel = self.kernel(&name)?;
            if !context.is_null() {
                kernel.function_in_current()?;
            }
        }
        Ok(())
    }

    /// Whether this library fell back to the context-bound module API: its
    /// kernels then serve only the context current at load time, and
    /// [`ModuleError::ForeignContext`] answers for any other.
    pub fn is_module(&self) -> bool {
        matches!(self.loaded.handle, Handle::Module(..))
    }

    /// The library's name.
    pub fn name(&self) -> &str {
        &self.loaded.name
    }

    /// The kernel `name`; cached, so a second lookup makes no driver call.
    ///
    /// `name` is the kernel's symbol (`saxpy` for an `extern "C"` kernel,
    /// the mangled name of a C++ one), the name expression it was compiled
    /// with (`cuda-compile`: the lowered name NVRTC gave, kept with the
    /// code, [`ObjectCode::lowered_name`]), or a C++ kernel's demangled
    /// name (`scale<float>`).
    ///
    /// # Errors
    /// - [`ModuleError::KernelNotFound`] for a name the library lacks,
    ///   listing its kernels and the names closest to `name`;
    /// - [`ModuleError::AmbiguousKernel`] for a demangled name that several
    ///   kernels (overloads) share, listing them;
    /// - [`ModuleError::BadName`] for a name with a NUL;
    /// - [`ModuleError::Call`] where the driver fails the lookup, with the
    ///   JIT log where the lookup compiled code (lazy loading).
    ///
    /// ```no_run
    /// # fn run(library: cuda_module::Library) -> Result<(), cuda_module::ModuleError> {
    /// use cuda_module::ModuleError;
    ///
    /// let saxpy = library.kernel("saxpy")?;
    /// match library.kernel("saxpi").map(drop) {
    ///     Err(ModuleError::KernelNotFound { closest, .. }) => assert_eq!(closest, ["saxpy"]),
    ///     other => panic!("{other:?}"),
    /// }
    /// # let _ = saxpy; Ok(()) }
    /// ```
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
        let handle = match self.find(self.lowered(name))? {
            Some(handle) => handle,
            None => self.find_demangled(name)?,
        };
        let kernel = Kernel {
            name: name.into(),
            inner: Arc::new(KernelInner {
                handle,
                params: OnceLock::new(),
                first_context: OnceLock::new(),
                other_contexts: Mutex::default(),
                launched_in: OnceLock::new(),
                loaded: Arc::clone(&self.loaded),
                #[cfg(feature = "cudarc")]
                stream_contexts: Default::default(),
            }),
        };
        cache.insert(name.into(), kernel.clone());
        Ok(kernel)
    }

    /// The handle of the kernel of exactly this (mangled) name, or `None`.
    fn find(&self, name: &str) -> Result<Option<KernelHandle>, ModuleError> {
        let _phase = phase!("kernel");
        let driver = driver()?;
        let c = c_name(name)?;
        let about = About::symbol(self.name(), name);
        let log = self.loaded.log.lock();
        Ok(match self.loaded.handle {
            Handle::Library(library) => {
                let mut raw: CUkernel = std::ptr::null_mut();
                // SAFETY: a live library, a C string and an out-pointer.
                let call = unsafe {
                    driver_call!(driver, cuLibraryGetKernel(&mut raw, library, c.as_ptr()))
                }?;
                if call.result == CUresult::CUDA_ERROR_NOT_FOUND {
                    return Ok(None);
                }
                check_with_log(driver, call, about, &log)?;
                Some(KernelHandle::Kernel(raw))
            }
            Handle::Module(module, _) => {
                let mut raw: CUfunction = std::ptr::null_mut();
                // SAFETY: a live module, a C string and an out-pointer.
                let call = unsafe {
                    driver_call!(driver, cuModuleGetFunction(&mut raw, module, c.as_ptr()))
                }?;
                if call.result == CUresult::CUDA_ERROR_NOT_FOUND {
                    return Ok(None);
                }
                check_with_log(driver, call, about, &log)?;
                Some(KernelHandle::Function(raw))
            }
        })
    }

    /// The one kernel whose demangled name (`saxpy<float>`, see
    /// `cuda_link::demangle`) is `name`, as NVRTC name expressions name
    /// them; several are ambiguous, none is not found. The driver lists
    /// only a library's kernels, not a module's.
    fn find_demangled(&self, name: &str) -> Result<KernelHandle, ModuleError> {
        let kernels = self.kernels().unwrap_or_default();
        let candidates: Vec<&String> = kernels
            .iter()
            .filter(|k| cuda_link::demangle(k).as_deref() == Some(name))
            .collect();
        match candidates[..] {
            [mangled] => self
                .find(mangled)?
                .ok_or_else(|| self.not_found(name, &kernels)),
            [] => Err(self.not_found(name, &kernels)),
            _ => Err(ModuleError::AmbiguousKernel {
                kernel: name.to_owned(),
                library: self.name().to_owned(),
                candidates: candidates.into_iter().cloned().collect(),
            }),
        }
    }

    fn not_found(&self, name: &str, kernels: &[String]) -> ModuleError {
        // Near misses among both spellings of each kernel's name.
        let mut spellings = kernels.to_vec();
        spellings.extend(kernels.iter().filter_map(|k| cuda_link::demangle(k)));
        ModuleError::KernelNotFound {
            kernel: name.to_owned(),
            library: self.name().to_owned(),
            closest: closest_names(name, &spellings),
            kernels: kernels.to_vec(),
        }
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
        let call = unsafe { driver_call!(driver, cuLibraryGetKernelCount(&mut count, library)) }?;
        check(driver, call, About::library(self.name()))?;
        let mut raws: Vec<CUkernel> = vec![std::ptr::null_mut(); count as usize];
        // SAFETY: a buffer of `count` handles.
        let call = unsafe {
            driver_call!(
                driver,
                cuLibraryEnumerateKernels(raws.as_mut_ptr(), count, library)
            )
        }?;
        check(driver, call, About::library(self.name()))?;
        raws.into_iter()
            .map(|raw| {
                let mut text: *const std::ffi::c_char = std::ptr::null();
                // SAFETY: a kernel of this library and an out-pointer.
                let call = unsafe { driver_call!(driver, cuKernelGetName(&mut text, raw)) }?;
                check(driver, call, About::library(self.name()))?;
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
    /// on the host and every device (`cuLibraryGetManaged`), so no context.
    pub fn managed(&self, name: &str) -> Result<(CUdeviceptr, usize), ModuleError> {
        let Handle::Library(library) = self.loaded.handle else {
            // In a module, managed variables are ordinary globals.
            return self.global_in_current(name);
        };
        let driver = driver()?;
        let c = c_name(name)?;
        let (mut pointer, mut size) = (0, 0);
        // Lazy loading may load and compile the code here, writing the log.
        let log = self.loaded.log.lock();
        // SAFETY: a live library, a C string and out-pointers.
        let call = unsafe {
            driver_call!(
                driver,
                cuLibraryGetManaged(&mut pointer, &mut size, library, c.as_ptr())
            )
        }?;
        let about = About::symbol(self.name(), name);
        check_with_log(driver, call, about, &log)?;
        Ok((pointer, size))
    }

    /// The address and size of the `__device__` (or `__constant__`)
    /// variable `name` in `context`: each context has its own copy, at its
    /// own address (`cuLibraryGetGlobal`, with `context` current for the
    /// call; the thread's current context is left as it was). `name` is
    /// the symbol, or the name expression it was compiled with (`&ns::var`).
    ///
    /// After a fallback to the module API ([`Library::is_module`]) the
    /// variable exists only in the module's context; any other is
    /// [`ModuleError::ForeignContext`].
    ///
    /// # Errors
    /// A name the library does not define is [`ModuleError::Call`] with
    /// `CUDA_ERROR_NOT_FOUND`; a name with a NUL is
    /// [`ModuleError::BadName`].
    ///
    /// ```no_run
    /// # fn run(code: &cuda_module::cuda_link::ObjectCode) -> Result<(), cuda_module::ModuleError> {
    /// use cuda_module::{Context, Library};
    ///
    /// let context = Context::primary(0)?;
    /// let library = Library::load(code)?;
    /// let (bias, size) = library.global(&context, "bias")?;
    /// assert_eq!(size, 4);
    /// let _current = context.make_current()?;
    /// // SAFETY: `bias` is a 4-byte global of the current context; no kernel runs.
    /// unsafe { cuda_module::copy_to_device(bias, &[1.5f32]) }?;
    /// # Ok(()) }
    /// ```
    pub fn global(
        &self,
        context: &Context,
        name: &str,
    ) -> Result<(CUdeviceptr, usize), ModuleError> {
        if let Handle::Module(_, home) = &self.loaded.handle
            && !home.is(&context.inner)
        {
            return Err(ModuleError::ForeignContext {
                kernel: name.to_owned(),
                library: self.name().to_owned(),
            });
        }
        context.with_current(|| self.global_in_current(name))
    }

    /// The lowered name of `name` when the code was compiled with it as a
    /// name expression (`"saxpy<float>"`, `"&ns::var"`), else `name`.
    fn lowered<'a>(&'a self, name: &'a str) -> &'a str {
        self.name_expressions
            .iter()
            .find(|(expression, _)| expression == name)
            .map_or(name, |(_, lowered)| lowered.as_str())
    }

    /// [`Library::global`] in the calling thread's current context.
    fn global_in_current(&self, name: &str) -> Result<(CUdeviceptr, usize), ModuleError> {
        let driver = driver()?;
        let c = c_name(self.lowered(name))?;
        let (mut pointer, mut size) = (0, 0);
        // Lazy loading may load and compile the code here, writing the log.
        let log = self.loaded.log.lock();
        // SAFETY: a live handle, a C string and out-pointers.
        let call = unsafe {
            match self.loaded.handle {
                Handle::Library(library) => driver_call!(
                    driver,
                    cuLibraryGetGlobal(&mut pointer, &mut size, library, c.as_ptr())
                ),
                Handle::Module(module, _) => driver_call!(
                    driver,
                    cuModuleGetGlobal_v2(&mut pointer, &mut size, module, c.as_ptr())
                ),
            }
        }?;
        check_with_log(driver, call, About::symbol(self.name(), name), &log)?;
        Ok((pointer, size))
    }
}
