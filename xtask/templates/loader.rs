//! Finding, opening and checking {{display}}: [`{{loader}}`] and its
//! [`LoadError`].

use std::path::{Path, PathBuf};

#[cfg(feature = "discover")]
use cuda_dylib::{SearchEnv, Source};
use libloading::Library;

use crate::bindings::{{fns}};
use crate::call::SymbolUnavailable;
use crate::result::{{error}};
use crate::sys::{{result}};

/// The library's name in errors.
pub(crate) const DISPLAY_NAME: &str = "{{display}}";

/// Where and under which names {{display}} is searched for.
#[cfg(feature = "discover")]
pub const SPEC: cuda_dylib::LibrarySpec = cuda_dylib::LibrarySpec {
    display_name: DISPLAY_NAME,
    override_var: "{{override_var}}",
    file_names: &[{{file_names}}],
    wheel_dirs: &[{{wheel_dirs}}],
    toolkit_dirs: &[{{toolkit_dirs}}],
    how_to_get: "Install it with `pip install {{pip13}}` (CUDA 13) or \
                 `pip install {{pip12}}` (CUDA 12), point CUDA_HOME at a CUDA \
                 toolkit, or set {{override_var}} to the library file.",
};

/// The majors `{{version_fn}}` reports whose ABI matches these bindings.
pub const SUPPORTED_MAJORS: std::ops::RangeInclusive<u32> = {{supported_majors}};

/// {{core_doc}}
const CORE_SYMBOLS: &[&std::ffi::CStr] = &[{{core_symbols}}];

/// Why {{display}} could not be loaded.
#[derive(Clone, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// No candidate could be opened; lists every place tried.
    #[cfg(feature = "discover")]
    #[error(transparent)]
    NotFound(#[from] cuda_dylib::NotFound),
    /// The file given to [`{{loader}}::open`] could not be opened.
    #[error("cannot open {path}: {reason}")]
    Open {
        /// The file.
        path: PathBuf,
        /// The dynamic loader's message.
        reason: String,
    },
    /// The library opened but lacks an entry point every version has.
    #[error("{path} is not a usable {{display}}: {missing}")]
    MissingSymbol {
        /// The file that was opened.
        path: PathBuf,
        /// The missing symbol.
        missing: SymbolUnavailable,
    },
    /// `{{version_fn}}` failed.
    #[error("{{version_fn}} failed in {path} with {error}")]
    Version {
        /// The file that was opened.
        path: PathBuf,
        /// What it returned.
        error: {{error}},
    },
    /// A major release whose ABI these bindings were not made for.
    #[error("{path} is {{display}} {major}.{minor}; supported majors are {{supported_text}}")]
    UnsupportedMajor {
        /// The file that was opened.
        path: PathBuf,
        /// Its major version.
        major: u32,
        /// Its minor version.
        minor: u32,
    },
}

/// An opened {{display}}: the function table plus where it came from.
///
/// Dereferences to [`{{fns}}`]. The library stays loaded while this
/// value lives; it is `Send + Sync` because {{independent}} and the
/// table is immutable.
pub struct {{loader}} {
    fns: {{fns}},
    path: PathBuf,
    #[cfg(feature = "discover")]
    source: Option<Source>,
    version: (u32, u32),
    _library: Library,
}

impl std::fmt::Debug for {{loader}} {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("{{loader}}")
            .field("path", &self.path)
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

impl std::ops::Deref for {{loader}} {
    type Target = {{fns}};
    fn deref(&self) -> &{{fns}} {
        &self.fns
    }
}

#[cfg(feature = "discover")]
impl {{loader}} {
    /// Searches the documented places and loads the first {{display}} found.
    ///
    /// Safe, unlike [`open`](Self::open): it opens only files named like
    /// {{display}} in NVIDIA's own install places, and the places that the
    /// process environment names (`{{override_var}}`, `CUDA_HOME`,
    /// ...), which carry the same trust as `LD_LIBRARY_PATH`.
    pub fn load() -> Result<Self, LoadError> {
        // SAFETY: as above; NVIDIA's initialisers have no preconditions.
        unsafe { Self::load_with(&SearchEnv::from_process()) }
    }

    /// Like [`load`](Self::load) with an explicit search environment.
    ///
    /// # Safety
    /// Every place `env` leads to must hold {{display}} or nothing: see
    /// [`cuda_dylib::open`].
    pub unsafe fn load_with(env: &SearchEnv) -> Result<Self, LoadError> {
        // SAFETY: the caller vouches for `env`.
        let opened = unsafe { cuda_dylib::open(&SPEC, env) }?;
        // SAFETY: found under {{display}}'s names in {{display}}'s places.
        let mut lib = unsafe { Self::from_library(opened.library, opened.path) }?;
        lib.source = Some(opened.source);
        Ok(lib)
    }

    /// The process-wide instance, loaded on first use and shared.
    pub fn global() -> Result<&'static std::sync::Arc<Self>, LoadError> {
        use std::sync::{Arc, OnceLock};
        static GLOBAL: OnceLock<Result<Arc<{{loader}}>, LoadError>> = OnceLock::new();
        GLOBAL
            .get_or_init(|| Self::load().map(Arc::new))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Which search step found the library; `None` when it was opened by
    /// path or handed in.
    pub fn source(&self) -> Option<Source> {
        self.source
    }
}

impl {{loader}} {
    /// Loads exactly this file.
    ///
    /// # Safety
    /// `path` must be a {{display}} library, or a library whose initialisers
    /// are sound to run and which exports none of {{display}}'s symbols (it
    /// then fails the symbol check): loading runs its initialisers, and every
    /// later call trusts its exports to have {{display}}'s signatures.{{open_doc}}
    pub unsafe fn open(path: impl AsRef<Path>) -> Result<Self, LoadError> {
        let path = path.as_ref();
        // SAFETY: the caller vouches for `path`.
        let library = unsafe { open_resident(path) }.map_err(|e| LoadError::Open {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
        // SAFETY: as above.
        unsafe { Self::from_library(library, path.to_path_buf()) }
    }

    /// Takes a library the caller opened, e.g. with its own search; `path`
    /// is what [`path`](Self::path) reports. It must still pass the same
    /// symbol and version checks as [`open`](Self::open).
    ///
    /// # Safety
    /// As for [`open`](Self::open): `library` must be {{display}}, or export
    /// none of its symbols.
    pub unsafe fn from_library(library: Library, path: PathBuf) -> Result<Self, LoadError> {
        let symbol = |name: &std::ffi::CStr| -> *mut std::ffi::c_void {
            // SAFETY: the address is taken as an untyped pointer; the table
            // gives it {{display}}'s type, which the caller vouched for.
            unsafe { library.get::<*mut std::ffi::c_void>(name.to_bytes_with_nul()) }
                .map_or(std::ptr::null_mut(), |s| *s)
        };
        // SAFETY: each name is resolved in {{display}} itself (the caller's
        // promise), whose header the table's signatures were generated from;
        // the table is stored next to `library`, which keeps them valid.
        let fns = unsafe { {{fns}}::load(symbol) };
        if let Some(name) = CORE_SYMBOLS.iter().find(|name| symbol(name).is_null()) {
            let missing = SymbolUnavailable {
                library: DISPLAY_NAME,
                symbol: name.to_str().unwrap_or("?"),
            };
            return Err(LoadError::MissingSymbol { path, missing });
        }
        let (mut major, mut minor): ({{version_int}}, {{version_int}}) = (0, 0);
        // SAFETY: two valid out-pointers; the symbol was checked above.
        let result = unsafe { fns.{{version_fn}}(&mut major, &mut minor) };
        match result {
            Ok({{result}}::{{success}}) => {}
            Ok(result) => {
                let error = {{error}} { result };
                return Err(LoadError::Version { path, error });
            }
            Err(missing) => return Err(LoadError::MissingSymbol { path, missing }),
        }
{{version_to_u32}}
        if !SUPPORTED_MAJORS.contains(&major) {
            return Err(LoadError::UnsupportedMajor { path, major, minor });
        }
{{after_open}}
        Ok({{loader}} {
            fns,
            path,
            #[cfg(feature = "discover")]
            source: None,
            version: (major, minor),
            _library: library,
        })
    }

    /// `(major, minor)` as reported by `{{version_fn}}`.
    pub fn version(&self) -> (u32, u32) {
        self.version
    }

    /// The version as `"13.5"`.
    pub fn version_string(&self) -> String {
        format!("{}.{}", self.version.0, self.version.1)
    }

    /// The file that was loaded (a bare name when the system loader chose).
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Opens a library that stays loaded until the process exits
/// (`RTLD_NODELETE`): the driver starts worker threads, and unmapping its
/// code under one crashes the process. nvJitLink, NVRTC and nvFatbin start
/// none (strace shows no `clone`); they stay resident too, so that no
/// pointer into any NVIDIA library ever dangles.
///
/// # Safety
/// As for `libloading::Library::new`: loading runs the file's
/// initialisers.
pub(crate) unsafe fn open_resident(path: &Path) -> Result<Library, libloading::Error> {
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

/// The message and its causes on one line, `a: b`: what `main` prints when
/// it returns this error.
impl std::fmt::Debug for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{self}")?;
        let mut source = std::error::Error::source(self);
        while let Some(cause) = source {
            write!(f, ": {cause}")?;
            source = cause.source();
        }
        Ok(())
    }
}
