//! The no-op rebuild: what the last successful build read and wrote, by
//! path, size and modification time, with the settings and environment
//! it ran under. When cargo reruns the build script and none of it
//! changed, the build is done without loading NVRTC or nvJitLink.

use std::path::{Path, PathBuf};

use cuda_link::Arch;

use crate::Built;

const HEADER: &str = "cuda-build stamp 1";

/// `path`'s identity: size and modification time of a file, of every
/// file under a folder (recursively), or that it is missing.
fn identity(path: &Path, out: &mut String) {
    let mut stack = vec![path.to_path_buf()];
    while let Some(path) = stack.pop() {
        match std::fs::metadata(&path) {
            Ok(meta) if meta.is_dir() => {
                let mut entries: Vec<PathBuf> = std::fs::read_dir(&path)
                    .map(|dir| dir.flatten().map(|e| e.path()).collect())
                    .unwrap_or_default();
                entries.sort();
                out.push_str(&format!("dir {} {}\n", path.display(), entries.len()));
                stack.extend(entries.into_iter().rev());
            }
            Ok(meta) => {
                let modified = meta
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_nanos());
                out.push_str(&format!(
                    "file {} {} {modified}\n",
                    path.display(),
                    meta.len()
                ));
            }
            Err(_) => out.push_str(&format!("missing {}\n", path.display())),
        }
    }
}

/// Everything a build depends on besides its files: its settings, the
/// variables it reads, and the NVIDIA libraries the search would load.
pub(crate) fn context(settings: &str, variables: &[&str], libraries: &[PathBuf]) -> String {
    let mut out = format!("{HEADER}\n{settings}\n");
    if let Ok(cwd) = std::env::current_dir() {
        out.push_str(&format!("cwd {}\n", cwd.display()));
    }
    for var in variables {
        let value = std::env::var_os(var).unwrap_or_default();
        out.push_str(&format!("env {var}={}\n", value.to_string_lossy()));
    }
    for library in libraries {
        identity(library, &mut out);
    }
    out
}

/// The stamp of a finished build: its context, then the identity of what
/// it read and wrote, then what it returns.
pub(crate) fn write(path: &Path, context: &str, built: &Built) -> std::io::Result<()> {
    let mut text = String::from(context);
    text.push_str(&inputs(built));
    text.push_str("---\n");
    text.push_str(&format!("module {}\n", built.module.display()));
    for fatbin in &built.fatbins {
        text.push_str(&format!("fatbin {}\n", fatbin.display()));
    }
    for kernel in &built.kernels {
        text.push_str(&format!("kernel {kernel}\n"));
    }
    for arch in &built.archs {
        text.push_str(&format!("arch {arch}\n"));
    }
    if let Some(ptx) = built.ptx {
        text.push_str(&format!("ptx {ptx}\n"));
    }
    for dependency in &built.dependencies {
        text.push_str(&format!("dependency {}\n", dependency.display()));
    }
    std::fs::write(path, text)
}

/// What a build read and wrote, as identities.
fn inputs(built: &Built) -> String {
    let mut out = String::new();
    for path in built
        .dependencies
        .iter()
        .chain(&built.fatbins)
        .chain([&built.module])
    {
        identity(path, &mut out);
    }
    out
}

/// The last build's result, when its stamp at `path` holds `context` and
/// nothing it read or wrote has changed since.
pub(crate) fn check(path: &Path, context: &str) -> Option<Built> {
    let text = std::fs::read_to_string(path).ok()?;
    let (before, result) = text.split_once("---\n")?;
    let recorded_inputs = before.strip_prefix(context)?;
    let mut built = Built {
        module: PathBuf::new(),
        fatbins: Vec::new(),
        kernels: Vec::new(),
        archs: Vec::new(),
        ptx: None,
        compiled: 0,
        cached: 0,
        dependencies: Vec::new(),
        unchanged: true,
    };
    for line in result.lines() {
        let (kind, value) = line.split_once(' ')?;
        match kind {
            "module" => built.module = PathBuf::from(value),
            "fatbin" => built.fatbins.push(PathBuf::from(value)),
            "kernel" => built.kernels.push(value.to_owned()),
            "arch" => built.archs.push(value.parse::<Arch>().ok()?),
            "ptx" => built.ptx = Some(value.parse::<Arch>().ok()?),
            "dependency" => built.dependencies.push(PathBuf::from(value)),
            _ => return None,
        }
    }
    (inputs(&built) == recorded_inputs).then_some(built)
}
