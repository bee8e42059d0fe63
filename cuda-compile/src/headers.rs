//! Where a program's headers come from, and the closure of what it
//! includes: NVRTC cannot list the headers it read (it rejects `-M`), so
//! the compile cache's key is built from our own conservative scan.

use std::path::{Path, PathBuf};

use cuda_link::KeyBuilder;
use nvrtc_sys::Nvrtc;

use crate::CompileError;

/// NVIDIA's header folders for the loaded NVRTC: the bundled headers it
/// installed (13.3+), or the toolkit's and the wheels' (`CUDA_HOME`,
/// `nvidia/cuda_runtime`, `nvidia/cuda_cccl`; `nvidia/cu13` for 13.x).
/// Their files are NVIDIA's and versioned with them, so the cache key holds
/// each folder's identity rather than every file's bytes.
pub(crate) fn system_dirs(
    nvrtc: &Nvrtc,
    bundled_root: Option<&Path>,
) -> Result<Vec<PathBuf>, CompileError> {
    let (major, minor) = nvrtc.version();
    if let Some(root) = bundled_root.filter(|_| (major, minor) >= (13, 3)) {
        let dir = install_bundled(nvrtc, root)?;
        return Ok(vec![dir.join("cccl"), dir]);
    }
    let env = cuda_dylib::SearchEnv::from_process();
    Ok(match major {
        12 => cuda_dylib::existing_dirs(
            &["include"],
            &["nvidia/cuda_runtime/include", "nvidia/cuda_cccl/include"],
            &env,
        ),
        _ => cuda_dylib::existing_dirs(
            &["include/cccl", "include"],
            &["nvidia/cu13/include/cccl", "nvidia/cu13/include"],
            &env,
        ),
    })
}

/// `nvrtcInstallBundledHeaders` into `root/nvrtc-headers-<version>`, once:
/// NVRTC skips an install whose version marker matches, and serialises
/// concurrent installs with a file lock.
fn install_bundled(nvrtc: &Nvrtc, root: &Path) -> Result<PathBuf, CompileError> {
    let dir = root.join(format!("nvrtc-headers-{}", nvrtc.version_string()));
    let io = |detail: String| CompileError::Io {
        path: dir.display().to_string(),
        detail,
    };
    if dir.join(".nvrtc_headers_version").is_file() {
        return Ok(dir);
    }
    std::fs::create_dir_all(root).map_err(|e| io(e.to_string()))?;
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
    Ok(dir)
}

/// The places an `#include` may resolve to, in NVRTC's order.
pub(crate) struct SearchPath<'a> {
    /// Headers given in memory, ours and the program's: `(name, contents)`.
    pub memory: &'a [(String, String)],
    /// The source's own folder (for quoted includes), unless
    /// `--no-source-include`.
    pub source_dir: Option<PathBuf>,
    /// `--include-path` folders, as given.
    pub user: Vec<PathBuf>,
    /// NVIDIA's folders: identified, not read.
    pub system: Vec<PathBuf>,
}

/// One `#include` found by the scan.
enum Found<'a> {
    Memory(&'a str, &'a str),
    File(PathBuf),
    System(PathBuf),
    Missing,
}

impl SearchPath<'_> {
    fn resolve(&self, name: &str, quoted: bool, includer_dir: Option<&Path>) -> Found<'_> {
        if quoted
            && let Some(dir) = includer_dir
            && dir.join(name).is_file()
        {
            return Found::File(dir.join(name));
        }
        if let Some((name, text)) = self.memory.iter().find(|(n, _)| n == name) {
            return Found::Memory(name, text);
        }
        for dir in &self.user {
            if dir.join(name).is_file() {
                return Found::File(dir.join(name));
            }
        }
        for dir in &self.system {
            if dir.join(name).is_file() {
                return Found::System(dir.clone());
            }
        }
        Found::Missing
    }

    /// Adds to `key` everything the program may read besides its source:
    /// each header reached by an `#include` (its bytes, for ours and the
    /// program's), the identity of each NVIDIA folder, and each include
    /// that resolves nowhere (so that its appearing changes the key). The
    /// scan is conservative: an `#include` inside `#if 0` or a comment is
    /// followed too, which only costs a miss. `Err` names an include the
    /// scan cannot follow (`#include MACRO`): such a compile is not cached.
    pub fn closure(
        &self,
        source: &str,
        pre_include: &[String],
        key: &mut KeyBuilder,
    ) -> Result<(), String> {
        let mut queue: Vec<(String, Option<PathBuf>)> =
            vec![(source.to_owned(), self.source_dir.clone())];
        let mut seen = std::collections::HashSet::new();
        for name in pre_include {
            self.follow(name, false, None, key, &mut queue, &mut seen)?;
        }
        while let Some((text, dir)) = queue.pop() {
            for (name, quoted) in includes(&text)? {
                self.follow(&name, quoted, dir.as_deref(), key, &mut queue, &mut seen)?;
            }
        }
        for dir in &self.system {
            key.field(b"system folder")
                .field(folder_identity(dir).as_bytes());
        }
        Ok(())
    }

    fn follow(
        &self,
        name: &str,
        quoted: bool,
        includer_dir: Option<&Path>,
        key: &mut KeyBuilder,
        queue: &mut Vec<(String, Option<PathBuf>)>,
        seen: &mut std::collections::HashSet<String>,
    ) -> Result<(), String> {
        let found = self.resolve(name, quoted, includer_dir);
        let label = match &found {
            Found::Memory(name, _) => format!("memory:{name}"),
            Found::File(path) => format!("file:{}", path.display()),
            Found::System(dir) => format!("system:{}:{name}", dir.display()),
            Found::Missing => format!("missing:{name}:{quoted}:{includer_dir:?}"),
        };
        if !seen.insert(label.clone()) {
            return Ok(());
        }
        key.field(label.as_bytes());
        match found {
            Found::Memory(_, text) => queue.push((text.to_owned(), None)),
            Found::File(path) => {
                let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
                key.field(&bytes);
                let text = String::from_utf8_lossy(&bytes).into_owned();
                queue.push((text, path.parent().map(Path::to_path_buf)));
            }
            Found::System(_) | Found::Missing => {}
        }
        Ok(())
    }
}

/// Every `#include "name"` / `#include <name>` of `text`, in order, with
/// whether it is quoted. `Err` for one the scan cannot follow.
fn includes(text: &str) -> Result<Vec<(String, bool)>, String> {
    let mut found = Vec::new();
    for position in memchr::memmem::find_iter(text.as_bytes(), b"include") {
        let before = &text[..position];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let directive = before[line_start..].trim();
        if !(directive == "#"
            || directive
                .strip_prefix('#')
                .is_some_and(|d| d.trim().is_empty()))
        {
            continue;
        }
        let rest = &text[position + "include".len()..];
        let rest = rest.strip_prefix("_next").unwrap_or(rest);
        let line = rest.lines().next().unwrap_or("").trim();
        let (close, quoted) = match line.chars().next() {
            Some('"') => ('"', true),
            Some('<') => ('>', false),
            _ => {
                return Err(format!(
                    "`#include {line}` names no file the scan can follow"
                ));
            }
        };
        let Some(end) = line[1..].find(close) else {
            return Err(format!("`#include {line}` is not closed"));
        };
        found.push((line[1..1 + end].to_owned(), quoted));
    }
    Ok(found)
}

/// A folder's identity: its path, device, inode and modification time
/// (which changes when a file in it is replaced, as pip and package
/// managers do).
fn folder_identity(dir: &Path) -> String {
    let metadata = std::fs::metadata(dir);
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match metadata {
            Ok(m) => format!(
                "{} {} {} {}.{}",
                dir.display(),
                m.dev(),
                m.ino(),
                m.mtime(),
                m.mtime_nsec()
            ),
            Err(e) => format!("{} {e}", dir.display()),
        }
    }
    #[cfg(not(unix))]
    {
        format!(
            "{} {:?}",
            dir.display(),
            metadata.and_then(|m| m.modified()).ok()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn includes_are_found_in_every_spelling() {
        // A line comment is not followed; a block comment is (conservative).
        let text = "#include <a.h>\n  #  include \"b.h\"\n// #include <c.h>\nx = include;\n#include_next <d.h>\n";
        let found = includes(text).unwrap();
        assert_eq!(
            found,
            [
                ("a.h".to_owned(), false),
                ("b.h".to_owned(), true),
                ("d.h".to_owned(), false)
            ]
        );
        assert!(includes("#include HEADER\n").is_err());
    }
}
