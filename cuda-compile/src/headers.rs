//! Where a program's headers come from, and the closure of what it
//! includes: NVRTC cannot list the headers it read (it rejects `-M`), so
//! the compile cache's key is built from our own conservative scan.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use cuda_link::{CacheKey, KeyBuilder};
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

/// The places an `#include` may resolve to.
pub(crate) struct SearchPath<'a> {
    /// Keys the same on every machine: NVIDIA's headers by their path in
    /// their folder and their content, not by where this machine keeps
    /// them or their inode and time.
    pub portable: bool,
    /// Headers given in memory, ours and the program's: `(name, contents)`.
    pub memory: &'a [(&'a str, &'a str)],
    /// The source's own folder, unless `--no-source-include`.
    pub source_dir: Option<PathBuf>,
    /// `--include-path` folders, as given.
    pub user: Vec<PathBuf>,
    /// NVIDIA's folders: their files are identified by path, inode, size
    /// and modification time, not hashed.
    pub system: Vec<PathBuf>,
    /// Paths under it are named relative to it in keys.
    pub base: Option<PathBuf>,
}

/// `text` with every absolute path under `base` written `$BASE/...`,
/// so that keys do not depend on where a checkout is.
pub(crate) fn under_base(text: &str, base: Option<&Path>) -> String {
    match base.map(|b| b.display().to_string()) {
        Some(base) if !base.is_empty() && base != "/" => text.replace(&base, "$BASE"),
        _ => text.to_owned(),
    }
}

/// What a program may read besides its source, found by one scan of its
/// includes: what the compile key is made of and what a build watches.
#[derive(Debug, Default)]
pub(crate) struct Closure {
    /// The key's fields, in the scan's order.
    fields: Vec<Vec<u8>>,
    /// Headers found in the program's folders, and the field holding the
    /// bytes read of each.
    pub files: Vec<PathBuf>,
    file_fields: Vec<usize>,
    /// Every path in the program's folders an `#include` was looked for
    /// at, found or not: where a new header would shadow another.
    pub candidates: Vec<PathBuf>,
    /// Of those, the ones where nothing was.
    absent: Vec<PathBuf>,
    /// What the scan cannot follow (`#include MACRO`), if anything: such
    /// a compile is not cached, and its folders are watched whole.
    pub unresolved: Option<String>,
    /// Every path the scan looked at, in any folder, found or not: what
    /// its result depends on besides the folders' identities.
    pub looked_at: Vec<PathBuf>,
    /// The headers of NVIDIA's it read.
    pub nvidia_files: Vec<PathBuf>,
    /// NVIDIA's folders keyed by their own identity (not with portable
    /// keys): a change of any entry in one changes the key.
    pub identified_folders: Vec<PathBuf>,
    /// The hash of the fields, which the key holds.
    digest: Option<CacheKey>,
    /// `candidates`, each once.
    unique_candidates: Arc<[PathBuf]>,
}

impl Closure {
    fn field(&mut self, bytes: impl Into<Vec<u8>>) {
        self.fields.push(bytes.into());
    }

    /// Hashes the fields once: a remembered closure serves many keys.
    fn seal(&mut self) {
        let mut digest = CacheKey::builder("include closure");
        digest.count(self.fields.len());
        for field in &self.fields {
            digest.field(field);
        }
        self.digest = Some(digest.finish());
        let unique = crate::dependencies::deduplicated(self.candidates.clone());
        self.unique_candidates = unique.into();
    }

    /// Every candidate path, each once.
    pub fn unique_candidates(&self) -> Arc<[PathBuf]> {
        Arc::clone(&self.unique_candidates)
    }

    /// Adds the closure to a compile's key.
    pub fn key_into(&self, key: &mut KeyBuilder) {
        match &self.digest {
            Some(digest) => key.field(digest.as_bytes()),
            None => key.field(b"unsealed closure"),
        };
    }

    /// Whether `other` looked at the same paths and found the same files:
    /// what the two depend on is the same.
    pub fn looks_at_the_same(&self, other: &Closure) -> bool {
        self.looked_at == other.looked_at
            && self.files == other.files
            && self.nvidia_files == other.nvidia_files
            && self.identified_folders == other.identified_folders
    }

    /// About how many bytes the closure holds, for the memo's bound.
    pub fn size(&self) -> usize {
        let paths = self
            .files
            .iter()
            .chain(&self.candidates)
            .chain(&self.absent)
            .chain(&self.looked_at)
            .chain(&self.nvidia_files);
        let paths: usize = paths.map(|path| path.as_os_str().len() + 24).sum();
        paths
            + self
                .fields
                .iter()
                .map(|field| field.len() + 24)
                .sum::<usize>()
    }

    /// Whether the program's own files are as the scan read them: every
    /// header it read holds the same bytes, and no header has appeared
    /// where it found none. A compile whose headers changed while NVRTC
    /// read them may be of neither version, and is not stored.
    pub fn unchanged(&self) -> bool {
        let same = self
            .files
            .iter()
            .zip(&self.file_fields)
            .all(|(path, &field)| std::fs::read(path).ok().as_deref() == Some(&self.fields[field]));
        same && self.absent.iter().all(|path| !path.is_file())
    }
}

/// One place an `#include` resolves to, or could: a header appearing at
/// an absent candidate changes what the program reads.
enum Found<'a> {
    Memory(&'a str, &'a str),
    File(PathBuf),
    System(PathBuf),
    Absent(PathBuf),
}

/// One `#include` to follow.
struct Step<'a> {
    name: &'a str,
    quoted: bool,
    includer_dir: Option<&'a Path>,
}

/// What a scanned text includes.
enum Pending {
    /// Text to scan, with the folder quoted includes start from.
    Text(String, Option<PathBuf>),
    /// A system header's includes, parsed once per process.
    Parsed(Includes, Option<PathBuf>),
}

/// The includes of one header: `(name, quoted)`, in order.
type Includes = Arc<Vec<(String, bool)>>;

/// The includes of each NVIDIA header read so far, and the hash of its
/// content, by path and modification: CCCL's closures run to hundreds of
/// files, read once per process.
fn system_includes(path: &Path, stamp: &str) -> (Includes, String) {
    type Parsed = HashMap<String, (Includes, String)>;
    static PARSED: OnceLock<Mutex<Parsed>> = OnceLock::new();
    let key = format!("{}\0{stamp}", path.display());
    let parsed = PARSED.get_or_init(Mutex::default);
    if let Some((includes, content)) = parsed.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
        return (Arc::clone(includes), content.clone());
    }
    let bytes = std::fs::read(path);
    let content = match &bytes {
        Ok(bytes) => {
            let mut hash = cuda_link::CacheKey::builder("NVIDIA header");
            hash.field(bytes);
            hash.finish().to_hex()
        }
        Err(e) => format!("unreadable: {e}"),
    };
    // A macro include of NVIDIA's names NVIDIA's own headers: what the
    // scan can read of the file is kept, the rest left to the folder's
    // identity.
    let text = bytes.map(|b| String::from_utf8_lossy(&b).into_owned());
    let includes = Arc::new(text.map(|t| includes_lenient(&t)).unwrap_or_default());
    parsed
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(key, (Arc::clone(&includes), content.clone()));
    (includes, content)
}

impl SearchPath<'_> {
    /// `path` in NVIDIA's folder `n` as `<n>/relative`, the same on every
    /// machine.
    fn in_system(&self, path: &Path) -> String {
        self.system
            .iter()
            .enumerate()
            .find_map(|(n, dir)| {
                let relative = path.strip_prefix(dir).ok()?;
                Some(format!("<{n}>/{}", relative.display()))
            })
            .unwrap_or_else(|| path.display().to_string())
    }

    /// The program's folders: the include path's, then the source's.
    pub fn folders(&self) -> Vec<PathBuf> {
        self.user
            .iter()
            .cloned()
            .chain(self.source_dir.clone())
            .collect()
    }

    /// Every place `name` may resolve to, not only the first: NVRTC's
    /// order between the includer's folder, the source's folder, the
    /// in-memory headers and the include path is not documented, and
    /// `#include_next` reads a later one. Following them all can only
    /// cost a miss.
    fn resolve_all(
        &self,
        name: &str,
        quoted: bool,
        includer_dir: Option<&Path>,
        closure: &mut Closure,
    ) -> Vec<Found<'_>> {
        let mut found = Vec::new();
        let mut file = |dir: &Path, found: &mut Vec<Found<'_>>| {
            let path = dir.join(name);
            closure.looked_at.push(path.clone());
            if self.system.iter().any(|system| path.starts_with(system)) {
                // Next to one of NVIDIA's headers: one of NVIDIA's.
                if path.is_file() {
                    found.push(Found::System(path));
                }
                return;
            }
            closure.candidates.push(path.clone());
            found.push(match path.is_file() {
                true => Found::File(path),
                false => {
                    closure.absent.push(path.clone());
                    Found::Absent(path)
                }
            });
        };
        if quoted && let Some(dir) = includer_dir {
            file(dir, &mut found);
        }
        if let Some(dir) = &self.source_dir {
            file(dir, &mut found);
        }
        if let Some(&(name, text)) = self.memory.iter().find(|(n, _)| *n == name) {
            found.push(Found::Memory(name, text));
        }
        for dir in &self.user {
            file(dir, &mut found);
        }
        for dir in &self.system {
            let path = dir.join(name);
            closure.looked_at.push(path.clone());
            if path.is_file() {
                found.push(Found::System(path));
            }
        }
        found
    }

    /// [`closure`](Self::closure), remembered while nothing it looked at
    /// changes ([`crate::remembered`]).
    pub fn remembered_closure(&self, source: &str, pre_include: &[String]) -> Arc<Closure> {
        let Ok(cwd) = std::env::current_dir() else {
            return Arc::new(self.closure(source, pre_include));
        };
        // Everything `closure` reads besides the files.
        let mut key = CacheKey::builder("include closure memo");
        key.field(cwd.as_os_str().as_encoded_bytes())
            .field(&[u8::from(self.portable)])
            .field(source.as_bytes())
            .count(pre_include.len());
        pre_include
            .iter()
            .for_each(|name| _ = key.field(name.as_bytes()));
        key.count(self.memory.len());
        for &(name, text) in self.memory {
            key.field(name.as_bytes());
            // Ours are the same text all the process long.
            match crate::builtin::is_builtin(text) {
                true => key.field(b"builtin"),
                false => key.field(text.as_bytes()),
            };
        }
        let folders = [&self.source_dir, &self.base]
            .into_iter()
            .map(|dir| dir.as_deref())
            .chain(
                self.user
                    .iter()
                    .chain(&self.system)
                    .map(|dir| Some(dir.as_path())),
            );
        key.count(self.user.len()).count(self.system.len());
        for folder in folders {
            match folder {
                Some(dir) => key.field(dir.as_os_str().as_encoded_bytes()),
                None => key.field(b"\0none"),
            };
        }
        crate::remembered::remembered(key.finish(), &cwd, || self.closure(source, pre_include))
    }

    /// Everything the program may read besides its source:
    /// each header reached by an `#include` (the bytes of ours and the
    /// program's; NVIDIA's by path, inode, size and modification time,
    /// followed through what they include), and each place in the
    /// program's folders where an `#include` was looked for and nothing
    /// is (so that a header appearing there changes the key): a `stat`
    /// per candidate, no folder listed. A program that includes nothing adds
    /// nothing. Directives are read as the preprocessor reads them, after
    /// comments (`/* c */ #include "x.h"` is one). The scan is
    /// conservative: an `#include` inside `#if 0` is followed too, and
    /// every place a name may resolve to is, which only costs a miss. `Err` names
    /// what the scan cannot follow (`#include MACRO`, `__has_include` of a
    /// macro, `__TIME__`): such a compile is not cached.
    pub fn closure(&self, source: &str, pre_include: &[String]) -> Closure {
        let mut closure = Closure::default();
        if let Err(why) = self.follow_all(source, pre_include, &mut closure) {
            closure.unresolved = Some(why);
        }
        closure.seal();
        closure
    }

    fn follow_all(
        &self,
        source: &str,
        pre_include: &[String],
        closure: &mut Closure,
    ) -> Result<(), String> {
        let source_includes = Arc::new(includes(source)?);
        // A program that includes nothing reads nothing but its source
        // (and NVRTC's own builtins, which its identity names): its key
        // is a hash, with no folder listed.
        if source_includes.is_empty() && pre_include.is_empty() {
            return Ok(());
        }
        // Every place an `#include` of the program or of NVIDIA's headers
        // is looked for at is keyed, found or absent: a header can only
        // change what NVRTC reads by appearing at one of them, so nothing
        // else of the program's folders is looked at (a cache, or another
        // tool's files, beside the source changes no key).
        let mut queue = vec![Pending::Parsed(source_includes, self.source_dir.clone())];
        let mut seen = HashSet::new();
        let cwd = std::env::current_dir().ok();
        for name in pre_include {
            let step = Step {
                name,
                quoted: true,
                includer_dir: cwd.as_deref(),
            };
            self.follow(step, closure, &mut queue, &mut seen)?;
        }
        while let Some(pending) = queue.pop() {
            let (names, dir) = match pending {
                Pending::Text(text, dir) => (Arc::new(includes(&text)?), dir),
                Pending::Parsed(names, dir) => (names, dir),
            };
            for (name, quoted) in names.iter() {
                let step = Step {
                    name,
                    quoted: *quoted,
                    includer_dir: dir.as_deref(),
                };
                self.follow(step, closure, &mut queue, &mut seen)?;
            }
        }
        // A folder's identity is this machine's: portable keys rely on
        // NVRTC's (its content) and the headers' contents instead.
        for dir in self.system.iter().filter(|_| !self.portable) {
            closure.field(b"system folder".as_slice());
            closure.field(file_identity(dir));
            closure.identified_folders.push(dir.clone());
        }
        Ok(())
    }

    fn follow(
        &self,
        step: Step<'_>,
        closure: &mut Closure,
        queue: &mut Vec<Pending>,
        seen: &mut HashSet<String>,
    ) -> Result<(), String> {
        let Step {
            name,
            quoted,
            includer_dir,
        } = step;
        let found = self.resolve_all(name, quoted, includer_dir, closure);
        if found.iter().all(|place| matches!(place, Found::Absent(_))) {
            let label = under_base(
                &format!("missing:{name}:{quoted}:{includer_dir:?}"),
                self.base.as_deref(),
            );
            if seen.insert(label.clone()) {
                closure.field(label);
            }
            return Ok(());
        }
        for place in found {
            let base = self.base.as_deref();
            let label = match &place {
                Found::Memory(name, _) => format!("memory:{name}"),
                Found::File(path) => under_base(&format!("file:{}", path.display()), base),
                Found::System(path) if self.portable => format!("system:{}", self.in_system(path)),
                Found::System(path) => format!("system:{}", path.display()),
                Found::Absent(path) => under_base(&format!("absent:{}", path.display()), base),
            };
            if !seen.insert(label.clone()) {
                continue;
            }
            closure.field(label);
            match place {
                Found::Memory(_, text) => queue.push(Pending::Text(text.to_owned(), None)),
                Found::File(path) => {
                    let bytes =
                        std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
                    let text = String::from_utf8_lossy(&bytes).into_owned();
                    closure.file_fields.push(closure.fields.len());
                    closure.field(bytes);
                    queue.push(Pending::Text(text, path.parent().map(Path::to_path_buf)));
                    closure.files.push(path);
                }
                Found::System(path) => {
                    closure.nvidia_files.push(path.clone());
                    let stamp = file_identity(&path);
                    let (names, content) = system_includes(&path, &stamp);
                    closure.field(match self.portable {
                        true => content,
                        false => stamp,
                    });
                    queue.push(Pending::Parsed(names, path.parent().map(Path::to_path_buf)));
                }
                Found::Absent(_) => {}
            }
        }
        Ok(())
    }
}

/// Whether `folders` (recursively) hold few enough files for a build
/// script to name them to cargo, which scans them on every build: about
/// 4,096, not counting the compile cache's folder and folders tagged
/// `CACHEDIR.TAG` (cargo's `target/`).
pub(crate) fn watchable(folders: &[PathBuf], cache_dir: Option<&Path>) -> bool {
    const MAX_ENTRIES: usize = 4096;
    let cache = cache_dir.and_then(|dir| dir.canonicalize().ok());
    let mut stack: Vec<PathBuf> = folders
        .iter()
        .map(|dir| match dir.as_os_str().is_empty() {
            true => PathBuf::from("."),
            false => dir.clone(),
        })
        .collect();
    // Files counted, as the cache key once listed them.
    let mut files = 0usize;
    while let Some(dir) = stack.pop() {
        let Ok(listing) = std::fs::read_dir(&dir) else {
            files += 1;
            continue;
        };
        for entry in listing.flatten() {
            if files > MAX_ENTRIES {
                return false;
            }
            let path = entry.path();
            match entry.file_type() {
                Ok(kind)
                    if kind.is_dir()
                        && (cache.is_some() && path.canonicalize().ok() == cache
                            || path.join("CACHEDIR.TAG").is_file()) => {}
                Ok(kind) if kind.is_dir() => stack.push(path),
                _ => files += 1,
            }
        }
    }
    true
}

/// Every `#include "name"` / `#include <name>` of `text`, in order, with
/// whether it is quoted. `Err` for what the scan cannot follow: an include
/// through a macro, a directive spelt with a digraph, trigraph or comment,
/// a `__has_include` of a macro, `#embed`, `#import`, and the macros that
/// change with the clock (`__TIME__`, `__DATE__`, `__TIMESTAMP__`). A
/// `__has_include` of a name counts as an include of it: the answer is
/// what the include's lookup finds.
fn includes(text: &str) -> Result<Vec<(String, bool)>, String> {
    let directives = crate::lex::directive_text(text);
    let mut found = has_include_targets(&directives)?;
    for word in ["__has_embed", "__TIME__", "__DATE__", "__TIMESTAMP__"] {
        if memchr::memmem::find(text.as_bytes(), word.as_bytes()).is_some() {
            return Err(format!("`{word}` is something the scan cannot follow"));
        }
    }
    for line in directives.lines() {
        let line = line.trim_start();
        let directive = if let Some(rest) = line.strip_prefix('#') {
            rest
        } else if let Some(rest) = line.strip_prefix("%:").or_else(|| line.strip_prefix("??=")) {
            if ["include", "embed", "import"]
                .iter()
                .any(|w| rest.contains(w))
            {
                return Err(format!("`{line}` is spelt as the scan cannot follow"));
            }
            continue;
        } else {
            continue;
        };
        let directive = directive.trim_start();
        let Some(rest) = directive
            .strip_prefix("include_next")
            .or_else(|| directive.strip_prefix("include"))
        else {
            if directive.starts_with("/*")
                || directive.starts_with("embed")
                || directive.starts_with("import")
            {
                return Err(format!(
                    "`#{directive}` is something the scan cannot follow"
                ));
            }
            continue;
        };
        let target = rest.trim();
        let (close, quoted) = match target.chars().next() {
            Some('"') => ('"', true),
            Some('<') => ('>', false),
            _ => {
                return Err(format!(
                    "`#include {target}` names no file the scan can follow"
                ));
            }
        };
        let Some(end) = target[1..].find(close) else {
            return Err(format!("`#include {target}` is not closed"));
        };
        found.push((target[1..1 + end].to_owned(), quoted));
    }
    Ok(found)
}

/// The header names of every `__has_include(...)` (and `_next`) in
/// `text`: a literal `<name>` or `"name"`, or an error for anything the
/// scan cannot resolve (a macro).
fn has_include_targets(text: &str) -> Result<Vec<(String, bool)>, String> {
    const WORD: &str = "__has_include";
    let mut found = Vec::new();
    for (at, _) in text.match_indices(WORD) {
        let rest = &text[at + WORD.len()..];
        let rest = rest.strip_prefix("_next").unwrap_or(rest).trim_start();
        let unfollowable = || {
            let shown: String = rest.chars().take(40).collect();
            format!("`{WORD}{shown}` names no file the scan can follow")
        };
        // `defined(__has_include)`, `#ifdef __has_include`: no lookup.
        let Some(argument) = rest.strip_prefix('(') else {
            continue;
        };
        let argument = argument.trim_start();
        let (close, quoted) = match argument.chars().next() {
            Some('"') => ('"', true),
            Some('<') => ('>', false),
            _ => return Err(unfollowable()),
        };
        let end = argument[1..].find(close).ok_or_else(unfollowable)?;
        let name = &argument[1..1 + end];
        if name.contains('\n') || !argument[2 + end..].trim_start().starts_with(')') {
            return Err(unfollowable());
        }
        found.push((name.to_owned(), quoted));
    }
    Ok(found)
}

/// [`includes`] for NVIDIA's headers: what cannot be followed is skipped.
fn includes_lenient(text: &str) -> Vec<(String, bool)> {
    crate::lex::directive_text(text)
        .lines()
        .filter_map(|line| {
            let directive = line.trim_start().strip_prefix('#')?.trim_start();
            let rest = directive
                .strip_prefix("include_next")
                .or_else(|| directive.strip_prefix("include"))?
                .trim();
            let (close, quoted) = match rest.chars().next()? {
                '"' => ('"', true),
                '<' => ('>', false),
                _ => return None,
            };
            let end = rest[1..].find(close)?;
            Some((rest[1..1 + end].to_owned(), quoted))
        })
        .collect()
}

/// A file's or folder's identity: its path, device, inode, size and
/// modification time (a folder's changes when a file in it is replaced,
/// as pip and package managers do).
fn file_identity(dir: &Path) -> String {
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
    fn paths_under_the_base_are_relative() {
        let base = Path::new("/home/me/crate");
        assert_eq!(
            under_base("--include-path=/home/me/crate/kernels", Some(base)),
            "--include-path=$BASE/kernels"
        );
        assert_eq!(
            under_base("/usr/include/x.h", Some(base)),
            "/usr/include/x.h"
        );
        assert_eq!(under_base("/a/b", Some(Path::new("/"))), "/a/b");
        assert_eq!(under_base("/a/b", None), "/a/b");
    }

    #[test]
    fn includes_are_found_in_every_spelling() {
        // A commented-out include is not followed.
        let text = "\u{feff}#include <a.h>\n  #  include \"b.h\"\n// #include <c.h>\nx = include;\n#include_next <d.h>\n";
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
        // `__has_include` of a name is that name's lookup; a mere test of
        // the feature looks nothing up.
        let probed =
            "#if defined(__has_include) && __has_include( <a.h> )\n#include \"b.h\"\n#endif\n";
        assert_eq!(
            includes(probed).unwrap(),
            [("a.h".to_owned(), false), ("b.h".to_owned(), true)]
        );
        assert!(includes("#\\\ninclude <a.h>\n").unwrap() == [("a.h".to_owned(), false)]);
        // Comments go before directives are read, as in translation phase 3.
        for spelled in ["#/**/include <a.h>\n", "/* c */ #include <a.h>\n"] {
            assert_eq!(includes(spelled).unwrap(), [("a.h".to_owned(), false)]);
        }
        for hidden in [
            "%:include <a.h>\n",
            "??=include <a.h>\n",
            "#if __has_include(HEADER)\n#endif\n",
            "#embed \"data.bin\"\n",
            "const char *when = __TIME__;\n",
        ] {
            assert!(includes(hidden).is_err(), "{hidden:?}");
        }
    }
}

#[cfg(test)]
mod portable_tests {
    use super::*;

    /// NVIDIA's folder at another place on another machine, same files:
    /// the same key fields with portable keys, others without; and a
    /// header whose content differs changes them.
    #[test]
    fn portable_keys_name_nvidias_headers_by_place_in_folder_and_content() {
        let folder = |text: &str| {
            let dir = tempfile::tempdir().unwrap();
            std::fs::create_dir(dir.path().join("cuda")).unwrap();
            std::fs::write(dir.path().join("cuda/std.h"), text).unwrap();
            dir
        };
        let fields = |dir: &Path, portable: bool| {
            let search = SearchPath {
                portable,
                memory: &[],
                source_dir: None,
                user: Vec::new(),
                system: vec![dir.to_path_buf()],
                base: None,
            };
            search.closure("#include <cuda/std.h>\n", &[]).fields
        };
        let (here, there) = (folder("#define X 1\n"), folder("#define X 1\n"));
        assert_eq!(fields(here.path(), true), fields(there.path(), true));
        assert_ne!(fields(here.path(), false), fields(there.path(), false));
        let changed = folder("#define X 2\n");
        assert_ne!(fields(here.path(), true), fields(changed.path(), true));
    }
}
