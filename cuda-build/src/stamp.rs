//! The no-op rebuild: what the last successful build read and wrote, by
//! path, size and modification time, with the settings, environment and
//! files it ran under. When cargo reruns the build script and none of it
//! changed, the build is done without loading NVRTC or nvJitLink.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use cuda_link::Arch;

use crate::built::Built;

const HEADER: &str = "cuda-build stamp 2";

/// When `meta`'s file was last modified, in nanoseconds.
fn modified(meta: &std::fs::Metadata) -> u128 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos())
}

/// Every file at or under `paths`, with its metadata; a missing path as
/// `None`.
fn walk(paths: &[PathBuf], mut each: impl FnMut(&Path, Option<&std::fs::Metadata>)) {
    let mut stack: Vec<PathBuf> = paths.iter().rev().cloned().collect();
    while let Some(path) = stack.pop() {
        match std::fs::metadata(&path) {
            Ok(meta) if meta.is_dir() => {
                let mut entries: Vec<PathBuf> = std::fs::read_dir(&path)
                    .map(|dir| dir.flatten().map(|e| e.path()).collect())
                    .unwrap_or_default();
                entries.sort();
                each(&path, Some(&meta));
                stack.extend(entries.into_iter().rev());
            }
            Ok(meta) => each(&path, Some(&meta)),
            Err(_) => each(&path, None),
        }
    }
}

/// The identity of `paths`: each file's size and modification time, each
/// folder's entry count, recursively, and what is missing.
fn identity(paths: &[PathBuf]) -> String {
    let mut out = String::new();
    walk(paths, |path, meta| {
        out.push_str(&match meta {
            Some(meta) if meta.is_dir() => format!("dir {}\n", path.display()),
            Some(meta) => format!(
                "file {} {} {}\n",
                path.display(),
                meta.len(),
                modified(meta)
            ),
            None => format!("missing {}\n", path.display()),
        });
    });
    out
}

/// The variables whose values a stamp never holds: the shared cache's
/// store and credentials, which decide where outputs are kept, not what
/// they are.
const SECRETS: &[&str] = &[
    "CUDA_LINK_CACHE_URL",
    "CUDA_LINK_CACHE_KEY",
    "CUDA_LINK_CACHE_SIGNING_KEY",
    "CUDA_LINK_CACHE_PASSWORD",
];

/// Everything a build depends on besides its inputs: its settings, the
/// variables it reads, the files it runs (the build script itself, which
/// is rebuilt when this crate or a dependency changes, and the NVIDIA
/// libraries the search may load) and the top of each NVIDIA header
/// folder.
pub(crate) fn context(
    settings: &str,
    variables: &[&'static str],
    files: &[PathBuf],
    folders: &[PathBuf],
) -> String {
    let mut out = format!("{HEADER}\n{settings}\n");
    if let Ok(cwd) = std::env::current_dir() {
        out.push_str(&format!("cwd {}\n", cwd.display()));
    }
    for var in variables {
        let value = crate::env::var_os(var).unwrap_or_default();
        out.push_str(&recorded(var, &value));
    }
    out.push_str(&identity(files));
    for folder in folders {
        let stamp = std::fs::metadata(folder).map_or(0, |meta| modified(&meta));
        out.push_str(&format!("folder {} {stamp}\n", folder.display()));
    }
    out
}

/// A variable's line in the stamp. The stamp stays in `target/`, which
/// CI caches and uploads: of a secret (the shared cache's keys, its URL
/// and password) nothing is kept, not even a hash a dictionary could be
/// run against. The outputs do not depend on them, so a change of one
/// need not rebuild.
fn recorded(var: &str, value: &std::ffi::OsStr) -> String {
    let shown = match SECRETS.contains(&var) {
        true => "(not recorded)".into(),
        false => value.to_string_lossy().into_owned(),
    };
    format!("env {var}={shown}\n")
}

/// Whether a file the build read was modified after `since`, or too close
/// to it to tell on a filesystem with coarse times: the outputs may then
/// come from its older text.
fn modified_since(built: &Built, since: SystemTime) -> bool {
    let since = since
        .checked_sub(Duration::from_secs(2))
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    let mut changed = false;
    // A path still missing now is recorded as missing: one that appears
    // later changes the stamp.
    walk(&built.dependencies, |_, meta| match meta {
        None => {}
        Some(meta) if meta.is_dir() || modified(meta) < since => {}
        Some(_) => changed = true,
    });
    changed
}

/// Writes the stamp of a build that started at `started`: its context,
/// the identity of what it read and wrote, then what it returns. A build
/// whose inputs changed while it ran, or just before, writes none.
pub(crate) fn write(
    path: &Path,
    context: &str,
    built: &Built,
    started: SystemTime,
) -> std::io::Result<()> {
    if modified_since(built, started) {
        return Ok(());
    }
    let mut text = String::from(context);
    text.push_str(&inputs(built));
    text.push_str("---\n");
    text.push_str(&format!("module {}\n", built.module.display()));
    for fatbin in &built.fatbins {
        text.push_str(&format!("fatbin {}\n", fatbin.display()));
    }
    for ptx in &built.ptx_files {
        text.push_str(&format!("ptxfile {}\n", ptx.display()));
    }
    if let Some(archive) = &built.archive {
        text.push_str(&format!("archive {}\n", archive.display()));
    }
    for line in &built.link {
        text.push_str(&format!("link {line}\n"));
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
    let mut paths = built.dependencies.clone();
    paths.extend(built.fatbins.iter().cloned());
    paths.extend(built.ptx_files.iter().cloned());
    paths.extend(built.archive.iter().cloned());
    paths.push(built.module.clone());
    identity(&paths)
}

/// The last build's result, when its stamp at `path` holds `context` and
/// nothing it read or wrote has changed since.
pub(crate) fn check(path: &Path, context: &str) -> Option<Built> {
    let text = std::fs::read_to_string(path).ok()?;
    let (before, result) = text.split_once("---\n")?;
    let recorded_inputs = before.strip_prefix(context)?;
    let mut built = Built {
        unchanged: true,
        ..Built::empty(PathBuf::new())
    };
    for line in result.lines() {
        let (kind, value) = line.split_once(' ')?;
        match kind {
            "module" => built.module = PathBuf::from(value),
            "fatbin" => built.fatbins.push(PathBuf::from(value)),
            "ptxfile" => built.ptx_files.push(PathBuf::from(value)),
            "archive" => built.archive = Some(PathBuf::from(value)),
            "link" => built.link.push(value.to_owned()),
            "kernel" => built.kernels.push(value.to_owned()),
            "arch" => built.archs.push(value.parse::<Arch>().ok()?),
            "ptx" => built.ptx = Some(value.parse::<Arch>().ok()?),
            "dependency" => built.dependencies.push(PathBuf::from(value)),
            _ => return None,
        }
    }
    (inputs(&built) == recorded_inputs).then_some(built)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_secret_nor_its_hash_is_recorded() {
        for var in SECRETS {
            let line = recorded(var, "redis://user:hunter2@cache:6379/0".as_ref());
            assert_eq!(line, format!("env {var}=(not recorded)\n"));
        }
        assert_eq!(
            recorded("NVCC", "/usr/bin/nvcc".as_ref()),
            "env NVCC=/usr/bin/nvcc\n"
        );
    }
}
