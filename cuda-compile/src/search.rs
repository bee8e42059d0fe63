//! The scan of a program's includes: every place each `#include` may
//! resolve to, followed through what it reaches, into a [`Closure`].
//! NVRTC cannot list the headers it read (it rejects `-M`), and nvcc's
//! depfile names only what it found, not where it looked; so both
//! compilers' cache keys are built from this conservative scan.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use cuda_link::CacheKey;

use crate::closure::{Closure, Stamp, read_stamped};

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
    /// NVIDIA's folders (and, for nvcc, the host compiler's): their files
    /// are identified by path, inode, size and modification and change
    /// times, not hashed, unless keys are portable.
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

/// One place an `#include` resolves to, or could: a header appearing at
/// an absent candidate changes what the program reads.
enum Found<'a> {
    Memory(&'a str, &'a str),
    File(PathBuf),
    System(PathBuf),
    Absent(PathBuf),
    /// Nothing in one of NVIDIA's folders: a header of the same name
    /// appearing in an earlier one would shadow the one found.
    AbsentSystem(PathBuf),
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
                found.push(match path.is_file() {
                    true => Found::System(path),
                    false => Found::AbsentSystem(path),
                });
                return;
            }
            closure.candidates.push(path.clone());
            found.push(match path.is_file() {
                true => Found::File(path),
                false => Found::Absent(path),
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
            found.push(match path.is_file() {
                true => Found::System(path),
                false => Found::AbsentSystem(path),
            });
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
    /// program's; NVIDIA's by path, inode, size and modification and
    /// change times,
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
        closure.names_files = crate::source::names_a_file(source);
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
            closure.field(match Stamp::of(dir) {
                Ok(stamp) => stamp.describe(dir),
                Err(e) => format!("{} {e}", dir.display()),
            });
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
        let nothing =
            |place: &Found<'_>| matches!(place, Found::Absent(_) | Found::AbsentSystem(_));
        if found.iter().all(nothing) {
            for place in &found {
                if let Found::Absent(path) | Found::AbsentSystem(path) = place {
                    closure.absent(path.clone());
                }
            }
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
                Found::AbsentSystem(path) if self.portable => {
                    format!("absent system:{}", self.in_system(path))
                }
                Found::AbsentSystem(path) => format!("absent system:{}", path.display()),
            };
            if !seen.insert(label.clone()) {
                continue;
            }
            closure.field(label);
            match place {
                Found::Memory(_, text) => queue.push(Pending::Text(text.to_owned(), None)),
                Found::File(path) => {
                    let read =
                        read_stamped(&path).map_err(|e| format!("{}: {e}", path.display()))?;
                    let text = String::from_utf8_lossy(&read.bytes).into_owned();
                    queue.push(Pending::Text(text, path.parent().map(Path::to_path_buf)));
                    closure.own_file(path, read);
                }
                Found::System(path) => {
                    closure.nvidia_files.push(path.clone());
                    let stamp = Stamp::of(&path).map_err(|e| format!("{}: {e}", path.display()))?;
                    let identity = stamp.describe(&path);
                    let (names, content) = system_includes(&path, &identity);
                    closure.field(match self.portable {
                        true => content,
                        false => identity,
                    });
                    queue.push(Pending::Parsed(names, path.parent().map(Path::to_path_buf)));
                    closure.stamped(path, stamp, true);
                }
                Found::Absent(path) | Found::AbsentSystem(path) => closure.absent(path),
            }
        }
        Ok(())
    }
}

/// Every `#include` of `text` as `(name, quoted)`, in order: the one
/// reader's ([`crate::source::includes`]).
fn includes(text: &str) -> Result<Vec<(String, bool)>, String> {
    Ok(crate::source::includes(text)?
        .into_iter()
        .map(|include| (include.name, include.quoted))
        .collect())
}

/// [`includes`] for NVIDIA's headers: what cannot be followed is skipped.
fn includes_lenient(text: &str) -> Vec<(String, bool)> {
    crate::source::includes_lenient(text)
        .into_iter()
        .map(|include| (include.name, include.quoted))
        .collect()
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

    /// One of NVIDIA's headers rewritten in place to its old size, its
    /// modification time set back (as `cp -p` or `tar x` leave it): the
    /// machine's key fields change all the same.
    #[test]
    fn a_toolchain_header_rewritten_with_its_old_time_changes_the_key() {
        let dir = tempfile::tempdir().unwrap();
        let header = dir.path().join("cuda_fp16.h");
        std::fs::write(&header, "#define X 1\n").unwrap();
        let fields = || {
            let search = SearchPath {
                portable: false,
                memory: &[],
                source_dir: None,
                user: Vec::new(),
                system: vec![dir.path().to_path_buf()],
                base: None,
            };
            search.closure("#include <cuda_fp16.h>\n", &[]).fields
        };
        let before = fields();
        let modified = std::fs::metadata(&header).unwrap().modified().unwrap();
        // Past the tick of the first write: the rewrite gets a later one.
        std::thread::sleep(std::time::Duration::from_millis(25));
        std::fs::write(&header, "#define X 2\n").unwrap();
        std::fs::File::options()
            .write(true)
            .open(&header)
            .unwrap()
            .set_modified(modified)
            .unwrap();
        assert_eq!(
            std::fs::metadata(&header).unwrap().modified().unwrap(),
            modified
        );
        assert_ne!(before, fields());
    }
}
