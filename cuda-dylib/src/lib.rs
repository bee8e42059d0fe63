#![doc = include_str!("../README.md")]

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The `libloading` this crate opens with: an [`Opened`] holds a
/// `libloading::Library`, a shared library (not a CUDA `CUlibrary`).
pub use libloading;
use libloading::Library;

/// What to look for: one library, under the names and folders it ships with.
#[derive(Debug, Clone, Copy)]
pub struct LibrarySpec {
    /// Human name used in errors, e.g. `"nvJitLink"`.
    pub display_name: &'static str,
    /// Environment variable holding an explicit file or folder.
    pub override_var: &'static str,
    /// File names in order of preference, e.g. newest major first.
    pub file_names: &'static [&'static str],
    /// Folders, relative to a Python site-packages folder, where NVIDIA's
    /// wheels put the library.
    pub wheel_dirs: &'static [&'static str],
    /// Folders, relative to a CUDA toolkit root, that may hold the library.
    pub toolkit_dirs: &'static [&'static str],
    /// How a user gets the library, for the error when it is not found:
    /// the packages to install and the variables to set.
    pub how_to_get: &'static str,
}

/// Where a candidate came from, in search order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Source {
    /// The spec's override variable.
    Override,
    /// `CUDA_HOME` or `CUDA_PATH`.
    CudaHome,
    /// A Python site-packages folder holding NVIDIA wheels.
    PythonWheel,
    /// `/usr/local/cuda`.
    DefaultToolkit,
    /// The platform's dynamic loader, given a bare file name.
    SystemLoader,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Source::Override => "override variable",
            Source::CudaHome => "CUDA_HOME/CUDA_PATH",
            Source::PythonWheel => "Python wheel",
            Source::DefaultToolkit => "/usr/local/cuda",
            Source::SystemLoader => "system loader",
        })
    }
}

/// The inputs of a search, taken from the process or made up by a test.
#[derive(Debug, Clone, Default)]
pub struct SearchEnv {
    /// Value of the spec's override variable, if it is set. Filled in by
    /// [`SearchEnv::from_process`] only for the spec passed to [`open`].
    pub overrides: Vec<(String, PathBuf)>,
    /// Toolkit roots from `CUDA_HOME` and `CUDA_PATH`, in that order.
    pub cuda_homes: Vec<PathBuf>,
    /// Python site-packages folders, in search order.
    pub site_packages: Vec<PathBuf>,
    /// Whether to add, after `site_packages`, those of this process's
    /// Python installations (found by looking at folders only), computed only when
    /// the earlier steps found nothing.
    pub find_python: bool,
    /// The default toolkit root, normally `/usr/local/cuda`.
    pub default_toolkit: Option<PathBuf>,
    /// Whether to end with the system loader.
    pub system_loader: bool,
}

/// The environment variables a search reads besides each library's
/// override (`LibrarySpec::override_var`): what a build script names in
/// `cargo:rerun-if-env-changed`.
pub const SEARCH_VARIABLES: &[&str] = &[
    "CUDA_HOME",
    "CUDA_PATH",
    "CUDA_LINK_SITE_PACKAGES",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "PATH",
    "HOME",
    "PYENV_VERSION",
];

impl SearchEnv {
    /// Reads the environment of this process. Nothing is run and no
    /// folder is listed here: Python's folders are looked for only when a
    /// search reaches that step.
    pub fn from_process() -> Self {
        let overrides = std::env::vars_os()
            .filter_map(|(key, value)| {
                let key = key.into_string().ok()?;
                (key.starts_with("CUDA_LINK_") && key.ends_with("_PATH") && !value.is_empty())
                    .then(|| (key, PathBuf::from(value)))
            })
            .collect();
        let cuda_homes = ["CUDA_HOME", "CUDA_PATH"]
            .iter()
            .filter_map(std::env::var_os)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .collect();
        // Extra site-packages folders, joined as PATH is: a virtual
        // environment that is not the first `python3` on PATH.
        let site_packages = std::env::var_os("CUDA_LINK_SITE_PACKAGES")
            .map(|dirs| std::env::split_paths(&dirs).collect())
            .unwrap_or_default();
        SearchEnv {
            overrides,
            cuda_homes,
            site_packages,
            find_python: true,
            default_toolkit: Some(PathBuf::from("/usr/local/cuda")),
            system_loader: true,
        }
    }

    fn override_for(&self, var: &str) -> Option<&Path> {
        self.overrides
            .iter()
            .find(|(key, _)| key == var)
            .map(|(_, path)| path.as_path())
    }

    /// `site_packages`, then, with `find_python`, the process's own.
    fn all_site_packages(&self) -> Vec<PathBuf> {
        let mut dirs = self.site_packages.clone();
        if self.find_python {
            static FOUND: OnceLock<Vec<PathBuf>> = OnceLock::new();
            dirs.extend(FOUND.get_or_init(python_site_packages).iter().cloned());
        }
        dedup_keep_order(dirs)
    }
}

/// The site-packages folders of this process's Python installations, found
/// by looking at folders only: running `python3` would cost a process start
/// on every first load and execute whatever `python3` comes first on `PATH`.
///
/// Prefixes, in order: `VIRTUAL_ENV`, `CONDA_PREFIX`; for the first
/// `python3` on `PATH`, its own prefix, the prefix its symlinks resolve to,
/// the `home` of a `pyvenv.cfg` beside it and, for a pyenv shim, the
/// selected pyenv version. Under each, `lib/python3.*/site-packages`,
/// `lib/python3*/dist-packages` and `local/lib/python3.*/dist-packages`;
/// last, the user site `~/.local/lib/python3.*/site-packages`.
fn python_site_packages() -> Vec<PathBuf> {
    let env = |var: &str| std::env::var_os(var).filter(|v| !v.is_empty());
    let mut prefixes: Vec<PathBuf> = ["VIRTUAL_ENV", "CONDA_PREFIX"]
        .iter()
        .filter_map(|var| env(var).map(PathBuf::from))
        .collect();
    if let Some(python) = env("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join("python3"))
            .find(|candidate| candidate.is_file())
    }) {
        prefixes.extend(python_prefixes(&python));
    }
    let mut dirs = Vec::new();
    for prefix in &prefixes {
        dirs.extend(prefix_site_packages(prefix));
    }
    if let Some(home) = env("HOME") {
        dirs.extend(versioned_dirs(
            &Path::new(&home).join(".local/lib"),
            "site-packages",
        ));
    }
    dedup_keep_order(dirs)
}

/// Where the Python at `python` (a `bin/python3`) keeps its packages.
fn python_prefixes(python: &Path) -> Vec<PathBuf> {
    let prefix_of = |bin_file: &Path| bin_file.parent()?.parent().map(Path::to_path_buf);
    let mut prefixes: Vec<PathBuf> = prefix_of(python).into_iter().collect();
    if let Some(real) = std::fs::canonicalize(python)
        .ok()
        .and_then(|p| prefix_of(&p))
    {
        prefixes.push(real);
    }
    for prefix in prefixes.clone() {
        // A venv's pyvenv.cfg names the base installation's bin folder.
        let config = std::fs::read_to_string(prefix.join("pyvenv.cfg")).unwrap_or_default();
        let home = config.lines().find_map(|line| {
            let (key, value) = line.split_once('=')?;
            (key.trim() == "home").then(|| PathBuf::from(value.trim()))
        });
        prefixes.extend(
            home.as_deref()
                .and_then(Path::parent)
                .map(Path::to_path_buf),
        );
        // A pyenv shim: $PYENV_ROOT/shims/python3 runs the selected version.
        if python.parent().and_then(Path::file_name) == Some("shims".as_ref()) {
            let version = std::env::var("PYENV_VERSION").ok().or_else(|| {
                let file = std::fs::read_to_string(prefix.join("version")).ok()?;
                file.lines().next().map(|line| line.trim().to_owned())
            });
            if let Some(version) = version.filter(|v| !v.is_empty() && v != "system") {
                prefixes.push(prefix.join("versions").join(version));
            }
        }
    }
    prefixes
}

/// The package folders under a Python prefix (a venv, conda environment or
/// installation): `lib/python3.*/site-packages`, `lib/python3*/dist-packages`
/// and `local/lib/python3.*/dist-packages`, those that exist.
fn prefix_site_packages(prefix: &Path) -> Vec<PathBuf> {
    let mut dirs = versioned_dirs(&prefix.join("lib"), "site-packages");
    dirs.extend(versioned_dirs(&prefix.join("lib"), "dist-packages"));
    dirs.extend(versioned_dirs(&prefix.join("local/lib"), "dist-packages"));
    dirs
}

/// `lib/python3*/leaf` folders that exist, sorted.
fn versioned_dirs(lib: &Path, leaf: &str) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(lib) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with("python3"))
        .map(|e| e.path().join(leaf))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

fn dedup_keep_order(paths: Vec<PathBuf>) -> Vec<PathBuf> {
    let mut seen = std::collections::HashSet::new();
    paths
        .into_iter()
        .filter(|p| seen.insert(p.clone()))
        .collect()
}

/// One place the search looks, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// A full path, or a bare file name for the system loader.
    pub path: PathBuf,
    /// The search step this candidate belongs to.
    pub source: Source,
}

/// Every place to try for `spec`, in order. Folders that do not hold the file
/// are kept, so that an error can name them; [`open`] skips them cheaply.
pub fn candidates(spec: &LibrarySpec, env: &SearchEnv) -> Vec<Candidate> {
    let mut out = before_python(spec, env);
    if env.override_for(spec.override_var).is_none() {
        out.extend(in_python(spec, env));
        out.extend(after_python(spec, env));
    }
    out
}

/// Folders that exist, in the search's order: `toolkit_dirs` under
/// `CUDA_HOME` / `CUDA_PATH`, `wheel_dirs` under each site-packages folder,
/// then `toolkit_dirs` under the default toolkit. For header folders, e.g.
/// `include` of a toolkit and `nvidia/cuda_runtime/include` of a wheel:
/// NVRTC 12 needs the CUDA and CCCL headers on its include path.
pub fn existing_dirs(toolkit_dirs: &[&str], wheel_dirs: &[&str], env: &SearchEnv) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for home in &env.cuda_homes {
        dirs.extend(toolkit_dirs.iter().map(|sub| home.join(sub)));
    }
    if !wheel_dirs.is_empty() {
        for site in env.all_site_packages() {
            dirs.extend(wheel_dirs.iter().map(|sub| site.join(sub)));
        }
    }
    if let Some(root) = &env.default_toolkit {
        dirs.extend(toolkit_dirs.iter().map(|sub| root.join(sub)));
    }
    dirs.retain(|dir| dir.is_dir());
    dedup_keep_order(dirs)
}

fn in_dir(spec: &LibrarySpec, dir: &Path, source: Source, out: &mut Vec<Candidate>) {
    for name in spec.file_names {
        out.push(Candidate {
            path: dir.join(name),
            source,
        });
    }
}

/// The override (which, when set, is the whole search), then the toolkit
/// roots of `CUDA_HOME` and `CUDA_PATH`.
fn before_python(spec: &LibrarySpec, env: &SearchEnv) -> Vec<Candidate> {
    let mut out = Vec::new();
    if let Some(path) = env.override_for(spec.override_var) {
        if path.is_dir() {
            in_dir(spec, path, Source::Override, &mut out);
        } else {
            out.push(Candidate {
                path: path.to_path_buf(),
                source: Source::Override,
            });
        }
        // An explicit choice is final: falling back would hide a typo.
        return out;
    }
    for home in &env.cuda_homes {
        for sub in spec.toolkit_dirs {
            in_dir(spec, &home.join(sub), Source::CudaHome, &mut out);
        }
    }
    out
}

/// The wheel folders under every site-packages folder. A spec without
/// wheel folders (the driver's) looks for no Python installation at all.
fn in_python(spec: &LibrarySpec, env: &SearchEnv) -> Vec<Candidate> {
    let mut out = Vec::new();
    if spec.wheel_dirs.is_empty() {
        return out;
    }
    for site in env.all_site_packages() {
        for sub in spec.wheel_dirs {
            in_dir(spec, &site.join(sub), Source::PythonWheel, &mut out);
        }
    }
    out
}

fn after_python(spec: &LibrarySpec, env: &SearchEnv) -> Vec<Candidate> {
    let mut out = Vec::new();
    if let Some(root) = &env.default_toolkit {
        for sub in spec.toolkit_dirs {
            in_dir(spec, &root.join(sub), Source::DefaultToolkit, &mut out);
        }
    }
    if env.system_loader {
        for name in spec.file_names {
            out.push(Candidate {
                path: PathBuf::from(name),
                source: Source::SystemLoader,
            });
        }
    }
    out
}

/// A library that was found and opened.
#[derive(Debug)]
pub struct Opened {
    /// The open handle; symbols stay valid while it lives.
    pub library: Library,
    /// The file that was opened (a bare name when the system loader chose).
    pub path: PathBuf,
    /// The search step that found it.
    pub source: Source,
}

/// One failed attempt of a search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    /// What was tried.
    pub path: PathBuf,
    /// The search step.
    pub source: Source,
    /// Why it failed: "not found" or the loader's message.
    pub reason: String,
}

/// A library could not be opened anywhere. Its message lists the first
/// few places tried and counts the rest; the alternate form (`{:#}`)
/// lists every one.
#[derive(Clone, thiserror::Error)]
pub struct NotFound {
    /// The library's display name.
    pub library: &'static str,
    /// What to install or set: [`LibrarySpec::how_to_get`].
    pub how_to_get: &'static str,
    /// Every place tried, in order.
    pub attempts: Vec<Attempt>,
}

/// The message, readable where `main` returns the error and Rust prints
/// it with `{:?}`.
impl fmt::Debug for NotFound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for NotFound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        /// Attempts shown unless all are asked for: the variables and the
        /// first folders, which are what a user sets.
        const SHOWN: usize = 4;
        write!(f, "{} not found. {}\nTried:", self.library, self.how_to_get)?;
        if self.attempts.is_empty() {
            return f.write_str(" nothing (empty search)");
        }
        let shown = if f.alternate() {
            self.attempts.len()
        } else {
            SHOWN
        };
        for a in self.attempts.iter().take(shown) {
            write!(f, "\n  {} [{}]: {}", a.path.display(), a.source, a.reason)?;
        }
        match self.attempts.len().saturating_sub(shown) {
            0 => Ok(()),
            rest => write!(f, "\n  ... and {rest} more places (`--verbose` lists them)"),
        }
    }
}

/// Searches for `spec` and opens the first candidate that loads.
///
/// # Safety
/// Opening a library runs its initialisers and later calls trust its
/// symbols. Every candidate that `spec` and `env` lead to (see
/// [`candidates`]) must be the library `spec` describes, or a file whose
/// initialisers are sound to run: the same trust the dynamic loader gives
/// `LD_LIBRARY_PATH`.
pub unsafe fn open(spec: &LibrarySpec, env: &SearchEnv) -> Result<Opened, NotFound> {
    let mut attempts = Vec::new();
    // SAFETY: the caller vouches for every candidate.
    if let Some(opened) = unsafe { first_that_opens(before_python(spec, env), &mut attempts) } {
        return Ok(opened);
    }
    if env.override_for(spec.override_var).is_none() {
        // Python's folders are looked for only now that the steps before
        // found nothing.
        let steps = [in_python(spec, env), after_python(spec, env)];
        for candidates in steps {
            // SAFETY: as above.
            if let Some(opened) = unsafe { first_that_opens(candidates, &mut attempts) } {
                return Ok(opened);
            }
        }
    }
    Err(NotFound {
        library: spec.display_name,
        how_to_get: spec.how_to_get,
        attempts,
    })
}

/// Opens the first candidate that loads, recording every failure.
///
/// # Safety
/// As for [`open`].
unsafe fn first_that_opens(
    candidates: Vec<Candidate>,
    attempts: &mut Vec<Attempt>,
) -> Option<Opened> {
    for candidate in candidates {
        let bare = candidate.source == Source::SystemLoader;
        if !bare && !candidate.path.is_file() {
            attempts.push(Attempt {
                path: candidate.path,
                source: candidate.source,
                reason: "not found".to_owned(),
            });
            continue;
        }
        // SAFETY: the caller vouches for every candidate.
        match unsafe { open_file(candidate.path.as_os_str()) } {
            Ok(library) => {
                return Some(Opened {
                    library,
                    path: candidate.path,
                    source: candidate.source,
                });
            }
            Err(err) => attempts.push(Attempt {
                path: candidate.path,
                source: candidate.source,
                reason: err.to_string(),
            }),
        }
    }
    None
}

/// Opens one file, or a bare name through the system loader.
///
/// # Safety
/// Loading runs the library's initialisers, which may do anything: `path`
/// must name a library whose initialisers are sound to run (NVIDIA's have
/// no preconditions). This is `libloading::Library::new`'s contract, and
/// the reason ash's `Entry::load_from` is `unsafe` too.
pub unsafe fn open_file(path: &std::ffi::OsStr) -> Result<Library, libloading::Error> {
    // The driver starts worker threads, and unmapping its code under one
    // crashes the process; nvJitLink and NVRTC start none, and stay
    // resident too, so no pointer into an NVIDIA library dangles.
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

    const SPEC: LibrarySpec = LibrarySpec {
        display_name: "fake",
        override_var: "CUDA_LINK_FAKE_PATH",
        file_names: &["libfake.so.13", "libfake.so.12"],
        wheel_dirs: &["nvidia/cu13/lib", "nvidia/fake/lib"],
        toolkit_dirs: &["lib64"],
        how_to_get: "Install fake.",
    };

    fn touch(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, b"not a library").unwrap();
    }

    #[test]
    fn order_follows_the_documented_steps() {
        let root = tempfile::tempdir().unwrap();
        let env = SearchEnv {
            overrides: vec![],
            cuda_homes: vec![root.path().join("home")],
            site_packages: vec![root.path().join("site")],
            find_python: false,
            default_toolkit: Some(root.path().join("usr-local-cuda")),
            system_loader: true,
        };
        let sources: Vec<Source> = candidates(&SPEC, &env).iter().map(|c| c.source).collect();
        let mut sorted = sources.clone();
        sorted.sort();
        assert_eq!(sources, sorted, "steps must come in order");
        let found = candidates(&SPEC, &env);
        assert_eq!(found[0].path, root.path().join("home/lib64/libfake.so.13"));
        assert_eq!(found[1].path, root.path().join("home/lib64/libfake.so.12"));
        assert_eq!(
            found[2].path,
            root.path().join("site/nvidia/cu13/lib/libfake.so.13")
        );
        assert_eq!(found.last().unwrap().path, PathBuf::from("libfake.so.12"));
        assert_eq!(found.last().unwrap().source, Source::SystemLoader);
    }

    #[test]
    fn override_is_final_and_accepts_a_folder() {
        let root = tempfile::tempdir().unwrap();
        let env = SearchEnv {
            overrides: vec![("CUDA_LINK_FAKE_PATH".into(), root.path().to_path_buf())],
            cuda_homes: vec![root.path().join("home")],
            system_loader: true,
            ..SearchEnv::default()
        };
        let found = candidates(&SPEC, &env);
        assert!(found.iter().all(|c| c.source == Source::Override));
        assert_eq!(found[0].path, root.path().join("libfake.so.13"));
    }

    #[test]
    fn the_first_existing_file_in_order_is_tried_first() {
        let root = tempfile::tempdir().unwrap();
        // Both a wheel and the default toolkit hold a file; the wheel wins.
        touch(&root.path().join("site/nvidia/fake/lib/libfake.so.12"));
        touch(&root.path().join("usr-local-cuda/lib64/libfake.so.13"));
        let env = SearchEnv {
            site_packages: vec![root.path().join("site")],
            default_toolkit: Some(root.path().join("usr-local-cuda")),
            ..SearchEnv::default()
        };
        // SAFETY: the only files are text, which the loader refuses.
        let err = unsafe { open(&SPEC, &env) }.unwrap_err();
        let loaded_tries: Vec<&Attempt> = err
            .attempts
            .iter()
            .filter(|a| a.reason != "not found")
            .collect();
        assert_eq!(loaded_tries.len(), 2, "{err}");
        assert_eq!(loaded_tries[0].source, Source::PythonWheel);
        assert_eq!(loaded_tries[1].source, Source::DefaultToolkit);
    }

    #[test]
    fn missing_library_error_names_every_path() {
        let root = tempfile::tempdir().unwrap();
        let env = SearchEnv {
            cuda_homes: vec![root.path().join("home")],
            site_packages: vec![root.path().join("site")],
            system_loader: true,
            ..SearchEnv::default()
        };
        // SAFETY: nothing exists at any candidate but the system loader's
        // bare names, which are not real libraries.
        let err = unsafe { open(&SPEC, &env) }.unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with("fake not found. Install fake.\nTried:"),
            "{text}"
        );
        // `main() -> Result<(), Box<dyn Error>>` prints it with `{:?}`.
        assert_eq!(format!("{err:?}"), text);
        // The first four and a count; `{:#}` lists every place.
        let all = format!("{err:#}");
        let tried = candidates(&SPEC, &env);
        assert!(tried.len() > 4);
        for (index, candidate) in tried.iter().enumerate() {
            let path = candidate.path.display().to_string();
            assert!(all.contains(&path), "{all}");
            // (A bare name of the system loader is part of every path.)
            if candidate.path.is_absolute() {
                assert_eq!(text.contains(&path), index < 4, "{path}: {text}");
            }
        }
        assert!(
            text.ends_with(&format!(
                "... and {} more places (`--verbose` lists them)",
                tried.len() - 4
            )),
            "{text}"
        );
        assert_eq!(err.attempts.len(), tried.len());
    }

    #[test]
    fn prefix_site_packages_finds_python_versions() {
        let root = tempfile::tempdir().unwrap();
        let dirs = [
            "lib/python3.12/site-packages",
            "lib/python3/dist-packages",
            "local/lib/python3.11/dist-packages",
        ];
        for dir in dirs {
            std::fs::create_dir_all(root.path().join(dir)).unwrap();
        }
        std::fs::create_dir_all(root.path().join("lib/other")).unwrap();
        assert_eq!(
            prefix_site_packages(root.path()),
            dirs.map(|dir| root.path().join(dir))
        );
    }

    /// A venv's `pyvenv.cfg` leads to its base installation; a pyenv shim
    /// to the selected version; a symlink to where it points. Nothing runs.
    #[test]
    fn python_prefixes_are_found_by_looking_at_folders() {
        let root = tempfile::tempdir().unwrap();
        let base = root.path().join("base");
        touch(&base.join("bin/python3.12"));
        let venv = root.path().join("venv");
        std::fs::create_dir_all(venv.join("bin")).unwrap();
        std::os::unix::fs::symlink(base.join("bin/python3.12"), venv.join("bin/python3")).unwrap();
        std::fs::write(
            venv.join("pyvenv.cfg"),
            format!("home = {}\nversion = 3.12.1\n", base.join("bin").display()),
        )
        .unwrap();
        let found = python_prefixes(&venv.join("bin/python3"));
        assert_eq!(found[0], venv);
        assert!(found.contains(&base.canonicalize().unwrap()), "{found:?}");
        assert!(found.contains(&base), "{found:?}");

        let pyenv = root.path().join("pyenv");
        touch(&pyenv.join("shims/python3"));
        std::fs::write(pyenv.join("version"), "3.11.7\n").unwrap();
        let found = python_prefixes(&pyenv.join("shims/python3"));
        assert!(found.contains(&pyenv.join("versions/3.11.7")), "{found:?}");
    }

    /// With the override set, Python's folders are not even listed.
    #[test]
    fn an_override_skips_python() {
        let env = SearchEnv {
            overrides: vec![("CUDA_LINK_FAKE_PATH".into(), "/nowhere/libfake.so".into())],
            find_python: true,
            system_loader: true,
            ..SearchEnv::default()
        };
        let found = candidates(&SPEC, &env);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].source, Source::Override);
    }
}
