//! Include closures remembered while nothing they looked at changes.
//!
//! A compile's key needs the scan of its includes, and the scan stats
//! every place each `#include` may resolve to: hundreds of paths for a
//! program that includes CCCL, about 8 ms a compile. A repeated compile in
//! one process should cost microseconds, so each closure is kept with
//! inotify watches on every directory its paths resolve through (and on
//! the program's own headers themselves), and served again until an event
//! names an entry it went through.
//!
//! - **Never stale.** A closure is served only when every watch it
//!   depends on existed before the scan that made it began: a change after
//!   that is an event, read before the next lookup. The first scan of a
//!   program only records its paths; the next one watches them first, so a
//!   program is served from memory from its third compile on.
//! - **Only where inotify sees every change**: local filesystems (ext4,
//!   XFS, Btrfs, tmpfs, overlayfs, F2FS, ZFS). On NFS or FUSE another
//!   machine's edit makes no event, so such closures are scanned each time.
//!   A mount or unmount anywhere (which inotify does not report) forgets
//!   everything: `/proc/self/mountinfo` is polled with the events.
//! - **Never across a fork.** The child's copy of the inotify descriptor
//!   shares the parent's queue, so a child (a new process id or fork
//!   epoch) drops what it inherited and starts its own.
//! - **Bounded**: 32 MiB of closures, oldest out first, and 2,048 watches.
//!
//! What inotify cannot see, and so neither can this: a write through
//! `mmap` (seen at `munmap`), an edit by another machine, a header of
//! NVIDIA's rewritten in place through a hard link in another folder (the
//! program's own headers are watched themselves; pip and the toolkits
//! replace files), a file appearing under another case in a case-folding
//! folder, and a thread changing the working directory and back while
//! another scans. Off Linux, nothing is remembered.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use cuda_link::CacheKey;

use crate::closure::Closure;

/// Closures served from memory in this process, for tests.
static SERVED: AtomicU64 = AtomicU64::new(0);

/// How many closures this process served from memory (its forks' not
/// counted after the fork).
pub fn served() -> u64 {
    SERVED.load(Ordering::Relaxed)
}

/// The closure `key` names, remembered while valid, else `scan`'s. `cwd`
/// is the working directory the key holds.
pub(crate) fn remembered(
    key: CacheKey,
    cwd: &std::path::Path,
    scan: impl FnOnce() -> Closure,
) -> Arc<Closure> {
    #[cfg(target_os = "linux")]
    return linux::remembered(key, cwd, scan);
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (key, cwd);
        Arc::new(scan())
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use std::collections::{HashMap, HashSet, VecDeque};
    use std::ffi::{OsStr, OsString};
    use std::mem::MaybeUninit;
    use std::os::unix::ffi::OsStrExt;
    use std::path::{Component, Path, PathBuf};
    use std::sync::atomic::Ordering;
    use std::sync::{Arc, Mutex, MutexGuard};

    use cuda_link::CacheKey;
    use rustix::event::{PollFd, PollFlags, Timespec};
    use rustix::fd::OwnedFd;
    use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};

    use crate::closure::Closure;

    const MAX_BYTES: usize = 32 << 20;
    const MAX_WATCHES: usize = 2048;
    const MAX_RESOLVED: usize = 16384;
    /// Events kept to check a scan against what changed while it ran.
    const MAX_LOGGED: usize = 1024;
    /// Symbolic links followed in one path, as the kernel's `ELOOP`.
    const MAX_LINKS: u32 = 40;

    /// Filesystems whose every change makes an inotify event
    /// (`linux/magic.h`): ext2/3/4, XFS, Btrfs, tmpfs, overlayfs, F2FS,
    /// ZFS, ramfs.
    const LOCAL_FILESYSTEMS: [u64; 8] = [
        0xEF53,
        0x5846_5342,
        0x9123_683E,
        0x0102_1994,
        0x794C_7630,
        0xF2F5_2010,
        0x2FC1_2FC1,
        0x8584_58F6,
    ];

    /// A named entry of a watched directory, or (`name` `None`) the whole
    /// watch: what a closure depends on, and what an event names (`wd` -1
    /// for an overflow, which may have lost any).
    #[derive(Debug, Clone, PartialEq, Eq, Hash)]
    struct Dep {
        wd: i32,
        name: Option<OsString>,
    }

    impl Dep {
        fn entry(wd: i32, name: &OsStr) -> Dep {
            Dep {
                wd,
                name: Some(name.to_owned()),
            }
        }

        fn any(wd: i32) -> Dep {
            Dep { wd, name: None }
        }
    }

    /// A closure was seen once (its paths not yet watched), or is watched.
    enum State {
        Seen,
        Watched(Vec<Dep>),
    }

    struct Remembered {
        closure: Arc<Closure>,
        state: State,
        bytes: usize,
    }

    /// Where a lexical directory path leads: its real path, if it is a
    /// directory, and the entries resolving it went through.
    struct Resolved {
        real: Option<PathBuf>,
        deps: Vec<Dep>,
    }

    /// Not watchable: a filesystem inotify does not cover, too many
    /// watches, or no inotify.
    struct Unwatchable;

    #[derive(Default)]
    struct Memo {
        /// The process that made it.
        owner: cuda_link::forks::Owner,
        inotify: Option<OwnedFd>,
        /// `/proc/self/mountinfo`, polled: a mount changes what paths name
        /// without an inotify event.
        mounts: Option<OwnedFd>,
        /// Whether inotify could not be had in this process.
        refused: bool,
        /// Counts watches made; each watch's count at its making.
        generation: u64,
        born: HashMap<i32, u64>,
        /// The watch of each real path watched.
        watched: HashMap<PathBuf, i32>,
        resolved: HashMap<PathBuf, Arc<Resolved>>,
        /// Every entry the resolutions went through.
        resolved_deps: HashSet<Dep>,
        entries: HashMap<CacheKey, Remembered>,
        order: VecDeque<CacheKey>,
        held: usize,
        /// The closures each watch's events may change: by entry name, or
        /// `None` for any event of the watch.
        dependents: HashMap<i32, HashMap<Option<OsString>, HashSet<CacheKey>>>,
        /// The events read so far, counted, and the latest of them: a scan
        /// that ran while one it depends on came is not trusted.
        events: u64,
        logged: VecDeque<(u64, Dep)>,
    }

    static MEMO: Mutex<Option<Memo>> = Mutex::new(None);

    cuda_link::hold_across_forks!(hold_across_forks, MEMO, Option<Memo>);

    /// The memo, made anew in a process that did not make it (a fork's
    /// child), with the events so far applied.
    fn memo() -> MutexGuard<'static, Option<Memo>> {
        hold_across_forks();
        let mut guard = MEMO.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let owner = cuda_link::forks::Owner::current();
        if guard.as_ref().is_none_or(|memo| memo.owner != owner) {
            // Dropping a parent's memo closes only this process's copy of
            // its descriptor; the parent's watches stay.
            *guard = Some(Memo {
                owner,
                ..Memo::default()
            });
        }
        if let Some(memo) = guard.as_mut() {
            memo.apply_events();
        }
        guard
    }

    pub(super) fn remembered(
        key: CacheKey,
        cwd: &Path,
        scan: impl FnOnce() -> Closure,
    ) -> Arc<Closure> {
        let (owner, started) = {
            let mut guard = memo();
            let Some(memo) = guard.as_mut() else {
                return Arc::new(scan());
            };
            let owner = memo.owner;
            match memo
                .entries
                .get(&key)
                .map(|e| (&e.state, Arc::clone(&e.closure)))
            {
                Some((State::Watched(_), closure)) => {
                    super::SERVED.fetch_add(1, Ordering::Relaxed);
                    return closure;
                }
                // Watched before this scan begins: a change during it is
                // an event.
                Some((State::Seen, previous)) => {
                    let watched = memo.dependencies(&previous, cwd).ok();
                    (
                        owner,
                        Some((memo.generation, memo.events, previous, watched)),
                    )
                }
                None => (owner, None),
            }
        };
        let closure = Arc::new(scan());
        // The key holds the working directory: a scan that may have run
        // in another is not remembered.
        let moved = std::env::current_dir().ok().as_deref() != Some(cwd);
        if closure.unresolved.is_some() || moved {
            return closure;
        }
        let mut guard = memo();
        let Some(memo) = guard.as_mut().filter(|memo| memo.owner == owner) else {
            return closure;
        };
        memo.forget(&key);
        let state = match started {
            None => State::Seen,
            Some((generation, events, previous, watched)) => match watched
                .filter(|_| closure.looks_at_the_same(&previous))
                .map_or_else(|| memo.dependencies(&closure, cwd), Ok)
            {
                Ok(deps)
                    if deps.iter().all(|dep| memo.born_by(dep, generation))
                        && !memo.changed_since(events, &deps) =>
                {
                    State::Watched(deps)
                }
                Ok(_) => State::Seen,
                Err(Unwatchable) => return closure,
            },
        };
        memo.remember(key, Arc::clone(&closure), state);
        closure
    }

    impl Memo {
        /// Whether an event read after the `since`-th may change a closure
        /// that depends on `deps`.
        fn changed_since(&self, since: u64, deps: &[Dep]) -> bool {
            if self.events == since {
                return false;
            }
            // Some of them are no longer logged.
            if self.logged.front().is_none_or(|(n, _)| *n > since + 1) {
                return true;
            }
            let named: HashSet<&Dep> = deps.iter().collect();
            let watches: HashSet<i32> = deps.iter().map(|dep| dep.wd).collect();
            self.logged
                .iter()
                .filter(|(n, _)| *n > since)
                .any(|(_, event)| match &event.name {
                    _ if event.wd == -1 => true,
                    None => watches.contains(&event.wd),
                    Some(_) => named.contains(event) || named.contains(&Dep::any(event.wd)),
                })
        }

        fn born_by(&self, dep: &Dep, generation: u64) -> bool {
            self.born
                .get(&dep.wd)
                .is_some_and(|&born| born <= generation)
        }

        fn remember(&mut self, key: CacheKey, closure: Arc<Closure>, state: State) {
            let bytes = closure.size();
            if bytes > MAX_BYTES {
                return;
            }
            if let State::Watched(deps) = &state {
                for dep in deps {
                    let names = self.dependents.entry(dep.wd).or_default();
                    names.entry(dep.name.clone()).or_default().insert(key);
                }
            }
            self.held += bytes;
            self.order.push_back(key);
            self.entries.insert(
                key,
                Remembered {
                    closure,
                    state,
                    bytes,
                },
            );
            while self.held > MAX_BYTES {
                let Some(oldest) = self.order.pop_front() else {
                    break;
                };
                self.forget(&oldest);
            }
        }

        fn forget(&mut self, key: &CacheKey) {
            let Some(gone) = self.entries.remove(key) else {
                return;
            };
            self.held -= gone.bytes;
            if let Some(at) = self.order.iter().position(|k| k == key) {
                self.order.remove(at);
            }
            if let State::Watched(deps) = gone.state {
                for Dep { wd, name } in deps {
                    let Some(names) = self.dependents.get_mut(&wd) else {
                        continue;
                    };
                    if let Some(keys) = names.get_mut(&name) {
                        keys.remove(key);
                        if keys.is_empty() {
                            names.remove(&name);
                        }
                    }
                    if names.is_empty() {
                        self.dependents.remove(&wd);
                    }
                }
            }
        }

        /// Reads the events so far and forgets what they may change.
        fn apply_events(&mut self) {
            let (Some(fd), Some(mounts)) = (&self.inotify, &self.mounts) else {
                return;
            };
            // One `poll` for both: most lookups find nothing to read.
            let mut ready = [
                PollFd::new(fd, PollFlags::IN),
                PollFd::new(mounts, PollFlags::PRI),
            ];
            let now = Timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            let (events_ready, mounts_changed) = match rustix::event::poll(&mut ready, Some(&now)) {
                Ok(_) => (
                    !ready[0].revents().is_empty(),
                    ready[1]
                        .revents()
                        .intersects(PollFlags::PRI | PollFlags::ERR),
                ),
                Err(_) => (true, true),
            };
            // A mount is logged as an overflow: a scan running across it
            // is not trusted either.
            let mut events = Vec::new();
            if mounts_changed {
                events.push((Dep::any(-1), ReadFlags::QUEUE_OVERFLOW));
            }
            let Some(fd) = self.inotify.as_ref().filter(|_| events_ready) else {
                self.log_and_apply(events);
                return;
            };
            let mut buffer = [MaybeUninit::<u8>::uninit(); 4096];
            let mut reader = inotify::Reader::new(fd, &mut buffer);
            // `WOULDBLOCK` when none are left; any other error is taken as
            // an overflow.
            loop {
                match reader.next() {
                    Ok(event) => {
                        let name = event.file_name().map(|n| OsStr::from_bytes(n.to_bytes()));
                        let dep = Dep {
                            wd: event.wd(),
                            name: name.map(OsStr::to_owned),
                        };
                        events.push((dep, event.events()));
                    }
                    Err(rustix::io::Errno::WOULDBLOCK) => break,
                    Err(_) => {
                        events.push((Dep::any(-1), ReadFlags::QUEUE_OVERFLOW));
                        break;
                    }
                }
            }
            self.log_and_apply(events);
        }

        /// Counts, logs and applies events read.
        fn log_and_apply(&mut self, events: Vec<(Dep, ReadFlags)>) {
            for (event, flags) in events {
                self.events += 1;
                self.apply(&event, flags);
                if self.logged.len() == MAX_LOGGED {
                    self.logged.pop_front();
                }
                self.logged.push_back((self.events, event));
            }
        }

        fn apply(&mut self, event: &Dep, flags: ReadFlags) {
            if flags.contains(ReadFlags::QUEUE_OVERFLOW) {
                self.forget_everything();
                return;
            }
            let Dep { wd, name } = event;
            let mut stale: Vec<CacheKey> = Vec::new();
            if let Some(names) = self.dependents.get(wd) {
                match name {
                    // An event of the watch itself: every dependent.
                    None => names.values().for_each(|keys| stale.extend(keys)),
                    Some(_) => {
                        for keys in [names.get(name), names.get(&None)].into_iter().flatten() {
                            stale.extend(keys);
                        }
                    }
                }
            }
            stale.iter().for_each(|key| self.forget(key));
            let moved = ReadFlags::CREATE
                | ReadFlags::DELETE
                | ReadFlags::MOVED_FROM
                | ReadFlags::MOVED_TO
                | ReadFlags::DELETE_SELF
                | ReadFlags::MOVE_SELF
                | ReadFlags::IGNORED
                | ReadFlags::UNMOUNT;
            if flags.intersects(moved) {
                // A path may now name another file or folder.
                self.watched.clear();
            }
            // Any change to an entry a resolution went through (a `chmod`
            // making a folder searchable too), or to a watch itself, may
            // change where a path leads.
            if name.is_none() || self.resolved_deps.contains(event) {
                self.forget_resolutions();
            }
            if flags.contains(ReadFlags::IGNORED) {
                self.born.remove(wd);
                self.dependents.remove(wd);
            }
        }

        /// Forgets every closure and where paths lead: a change that may
        /// touch any.
        fn forget_everything(&mut self) {
            let keys: Vec<CacheKey> = self.entries.keys().copied().collect();
            keys.iter().for_each(|key| self.forget(key));
            self.forget_resolutions();
        }

        /// Forgets where paths lead: an entry they went through changed.
        fn forget_resolutions(&mut self) {
            self.resolved.clear();
            self.resolved_deps.clear();
            self.watched.clear();
        }

        /// Watches what `closure`'s result depends on: every path it
        /// looked at (through each directory entry resolving it; those it
        /// found through their symbolic links too), the program's own
        /// headers themselves, and NVIDIA's folders keyed by identity; relative
        /// paths from `cwd`, the one the key holds.
        fn dependencies(&mut self, closure: &Closure, cwd: &Path) -> Result<Vec<Dep>, Unwatchable> {
            let mut deps = HashSet::new();
            let found: HashSet<&Path> = closure
                .files
                .iter()
                .chain(&closure.nvidia_files)
                .map(PathBuf::as_path)
                .collect();
            // Thousands of paths in tens of folders: each folder resolved
            // once, each absent name only named (most are absent).
            let mut by_folder: HashMap<&OsStr, Vec<&OsStr>> = HashMap::new();
            let mut one_by_one: Vec<&Path> = found.iter().copied().collect();
            for path in &closure.looked_at {
                let bytes = path.as_os_str().as_bytes();
                let split = bytes.iter().rposition(|&b| b == b'/');
                let (folder, name) = match split {
                    Some(at) => (&bytes[..at.max(1)], &bytes[at + 1..]),
                    None => (&b"."[..], bytes),
                };
                match name {
                    b"" | b"." | b".." => one_by_one.push(path),
                    _ if found.contains(path.as_path()) => {}
                    _ => by_folder
                        .entry(OsStr::from_bytes(folder))
                        .or_default()
                        .push(OsStr::from_bytes(name)),
                }
            }
            for (folder, names) in by_folder {
                let folder = self.resolve_dir(&cwd.join(folder), &mut 0)?;
                deps.extend(folder.deps.iter().cloned());
                if let Some(real) = &folder.real {
                    let wd = self.watch(real)?;
                    deps.extend(names.into_iter().map(|name| Dep::entry(wd, name)));
                }
            }
            // A found file may be a link, whose target's edits its entry
            // does not see.
            for path in one_by_one {
                let absolute = cwd.join(path);
                let (Some(parent), Some(last)) =
                    (absolute.parent(), absolute.components().next_back())
                else {
                    continue;
                };
                let parent = self.resolve_dir(parent, &mut 0)?;
                deps.extend(self.step(&parent, last, &mut 0)?.deps);
            }
            for file in &closure.files {
                let wd = self.watch(&cwd.join(file))?;
                deps.insert(Dep::any(wd));
            }
            for folder in &closure.identified_folders {
                let wd = self.watch(&cwd.join(folder))?;
                deps.insert(Dep::any(wd));
            }
            Ok(deps.into_iter().collect())
        }

        /// Where the absolute lexical path `dir` leads, through which
        /// entries.
        fn resolve_dir(
            &mut self,
            dir: &Path,
            links: &mut u32,
        ) -> Result<Arc<Resolved>, Unwatchable> {
            if let Some(known) = self.resolved.get(dir) {
                return Ok(Arc::clone(known));
            }
            let resolved = match (dir.parent(), dir.components().next_back()) {
                (Some(parent), Some(last)) => {
                    let parent = self.resolve_dir(parent, links)?;
                    self.step(&parent, last, links)?
                }
                _ => Resolved {
                    real: Some(PathBuf::from("/")),
                    deps: Vec::new(),
                },
            };
            let resolved = Arc::new(resolved);
            if self.resolved.len() >= MAX_RESOLVED {
                self.forget_resolutions();
            }
            self.resolved_deps.extend(resolved.deps.iter().cloned());
            self.resolved
                .insert(dir.to_path_buf(), Arc::clone(&resolved));
            Ok(resolved)
        }

        /// One component further from `parent`: the entry it reads, and
        /// where it leads (a symbolic link followed).
        fn step(
            &mut self,
            parent: &Resolved,
            component: Component<'_>,
            links: &mut u32,
        ) -> Result<Resolved, Unwatchable> {
            let mut deps = parent.deps.clone();
            let Some(real) = &parent.real else {
                return Ok(Resolved { real: None, deps });
            };
            let real = match component {
                Component::CurDir | Component::RootDir | Component::Prefix(_) => Some(real.clone()),
                Component::ParentDir => Some(real.parent().unwrap_or(real).to_path_buf()),
                Component::Normal(name) => {
                    let wd = self.watch(real)?;
                    deps.push(Dep::entry(wd, name));
                    let next = real.join(name);
                    match std::fs::symlink_metadata(&next) {
                        // Past the kernel's limit: what a path gives then
                        // depends on where it began, so none is kept.
                        Ok(m) if m.file_type().is_symlink() && *links >= MAX_LINKS => {
                            return Err(Unwatchable);
                        }
                        Ok(m) if m.file_type().is_symlink() => {
                            *links += 1;
                            let target = std::fs::read_link(&next).map_err(|_| Unwatchable)?;
                            let through = self.resolve_dir(&real.join(target), links)?;
                            deps.extend(through.deps.iter().cloned());
                            through.real.clone()
                        }
                        Ok(m) if m.is_dir() => Some(next),
                        // A file, or a loop: its entry is watched.
                        Ok(_) => None,
                        // Absent: its entry is watched. Any other error (a
                        // folder not searchable) may pass: not kept.
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                        Err(e)
                            if e.raw_os_error()
                                == Some(rustix::io::Errno::NOTDIR.raw_os_error()) =>
                        {
                            None
                        }
                        Err(_) => return Err(Unwatchable),
                    }
                }
            };
            Ok(Resolved { real, deps })
        }

        /// The watch of a directory (its entries' events too) or of a file.
        fn watch(&mut self, real: &Path) -> Result<i32, Unwatchable> {
            if let Some(&wd) = self.watched.get(real) {
                return Ok(wd);
            }
            if self.watched.len() >= 4 * MAX_WATCHES {
                self.watched.clear();
            }
            if self.refused || self.born.len() >= MAX_WATCHES {
                return Err(Unwatchable);
            }
            let local = rustix::fs::statfs(real)
                .is_ok_and(|fs| LOCAL_FILESYSTEMS.contains(&(fs.f_type as u64)));
            if !local {
                return Err(Unwatchable);
            }
            if self.inotify.is_none() {
                let read_only = rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC;
                let mounts =
                    rustix::fs::open("/proc/self/mountinfo", read_only, rustix::fs::Mode::empty());
                let inotify = inotify::init(CreateFlags::CLOEXEC | CreateFlags::NONBLOCK);
                match (inotify, mounts) {
                    (Ok(fd), Ok(mounts)) => {
                        self.inotify = Some(fd);
                        self.mounts = Some(mounts);
                    }
                    _ => {
                        self.refused = true;
                        return Err(Unwatchable);
                    }
                }
            }
            let fd = self.inotify.as_ref().ok_or(Unwatchable)?;
            // One mask for every watch, added to what the inode's watch
            // had: a folder and a file at one path in turn share a watch.
            let flags = WatchFlags::MODIFY
                | WatchFlags::ATTRIB
                | WatchFlags::CLOSE_WRITE
                | WatchFlags::DELETE_SELF
                | WatchFlags::MOVE_SELF
                | WatchFlags::CREATE
                | WatchFlags::DELETE
                | WatchFlags::MOVED_FROM
                | WatchFlags::MOVED_TO
                | WatchFlags::MASK_ADD;
            let wd = inotify::add_watch(fd, real, flags).map_err(|_| Unwatchable)?;
            if !self.born.contains_key(&wd) {
                self.generation += 1;
                self.born.insert(wd, self.generation);
            }
            self.watched.insert(real.to_path_buf(), wd);
            Ok(wd)
        }
    }
}
