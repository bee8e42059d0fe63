//! The isolated linker's workers across processes: a forked program never
//! gets its parent's worker, a worker ends with a killed caller, a dead
//! worker is never taken or signalled, each worker maps its own memory
//! alone, and an answer is bounded by the memory limit.
//!
//! Each scenario that forks, kills or changes a process-wide setting runs
//! in a test process of its own (an ignored test this file's tests start),
//! where no other test's thread can hold a lock at the fork.
#![allow(clippy::result_large_err)]

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cuda_link::{Arch, Isolation, LinkError, Linker, LinkerOptions, ObjectCode, OutputKind};
use nvjitlink_sys::NvJitLink;

/// Runs the ignored test `name` of this file in a process of its own.
fn in_own_process(name: &str) -> Command {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([
            "--exact",
            &format!("isolation::{name}"),
            "--include-ignored",
        ])
        .args(["--nocapture", "--test-threads=1"])
        .env("CUDA_LINK_ISOLATION_CHILD", "1");
    command
}

/// Runs the ignored test `name` in a process of its own: it must pass
/// and print `expected`.
fn passes_in_own_process(name: &str, expected: &str) {
    let output = in_own_process(name).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}{stderr}");
    assert!(stdout.contains(expected), "{stdout}");
}

fn assert_in_child() {
    assert!(
        std::env::var_os("CUDA_LINK_ISOLATION_CHILD").is_some(),
        "started by another test of isolation.rs"
    );
}

/// A program of one kernel named `name`.
fn program(name: &str) -> ObjectCode {
    let text = format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry {name}() {{ ret; }}\n"
    );
    ObjectCode::from_ptx(text.into_bytes(), format!("{name}.ptx")).unwrap()
}

/// Links `name`'s program with the default, isolated linker: whether the
/// output holds that kernel and no other.
fn links_own_kernel(name: &str) -> bool {
    let options = LinkerOptions::for_arch(Arch::sm(90));
    let mut linker = Linker::new(options).unwrap();
    linker.add(&program(name)).unwrap();
    let cubin = linker.link(OutputKind::Cubin).unwrap();
    cubin.inspect().unwrap().kernels() == [name]
}

/// `threads` threads of `side`, each linking `links` programs: how many
/// outputs held another program's kernels.
fn wrong_links(side: &str, round: usize, threads: usize, links: usize) -> usize {
    let workers: Vec<_> = (0..threads)
        .map(|thread| {
            let side = side.to_owned();
            std::thread::spawn(move || {
                (0..links)
                    .filter(|link| !links_own_kernel(&format!("{side}_{round}_{thread}_{link}")))
                    .count()
            })
        })
        .collect();
    workers.into_iter().map(|w| w.join().unwrap()).sum()
}

fn have_nvjitlink() -> bool {
    let found = cuda_link_tests::redist("CUDA_LINK_NVJITLINK_PATH").is_some();
    if !found {
        cuda_link_tests::skip("no nvJitLink: cargo xtask provision");
    }
    found
}

#[test]
fn a_forked_program_never_gets_its_parents_kernels() {
    if !have_nvjitlink() {
        return;
    }
    passes_in_own_process("forked_links_child", "10 rounds, 0 wrong");
}

/// Ten rounds: link (so the pool has workers), fork, then link distinct
/// programs in parent and child at once, four threads a side.
#[test]
#[ignore = "run by a_forked_program_never_gets_its_parents_kernels in a process of its own"]
fn forked_links_child() {
    assert_in_child();
    let mut wrong = 0;
    for round in 0..10 {
        assert!(links_own_kernel(&format!("warm_{round}")));
        // SAFETY: this process runs this test alone; the child only links
        // and leaves with `_exit`.
        match unsafe { libc::fork() } {
            -1 => panic!("fork: {}", std::io::Error::last_os_error()),
            0 => {
                let wrong = wrong_links("child", round, 4, 6);
                // SAFETY: ends the child without the harness's handlers.
                unsafe { libc::_exit(i32::try_from(wrong.min(100)).unwrap()) }
            }
            child => {
                wrong += wrong_links("parent", round, 4, 6);
                let mut status = 0;
                // SAFETY: our child and an out-pointer.
                assert_eq!(unsafe { libc::waitpid(child, &mut status, 0) }, child);
                assert!(
                    libc::WIFEXITED(status),
                    "round {round}: the child died: {status}"
                );
                wrong += usize::try_from(libc::WEXITSTATUS(status)).unwrap();
            }
        }
    }
    println!("10 rounds, {wrong} wrong");
}

/// The link workers whose parent is `pid`: its children that run this
/// test binary (a fork of it), not a compiler it ran.
fn workers_of(pid: u32) -> Vec<u32> {
    let exe = std::env::current_exe().unwrap();
    children_of(pid)
        .into_iter()
        .filter(|child| std::fs::read_link(format!("/proc/{child}/exe")).is_ok_and(|e| e == exe))
        .collect()
}

/// The processes whose parent is `pid`.
fn children_of(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // After the command's closing parenthesis: state, then ppid.
        let parent = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|ppid| ppid.parse::<u32>().ok());
        if parent == Some(pid) {
            found.push(child);
        }
    }
    found
}

/// Whether process `pid` is gone (or a zombie nobody reaped yet).
fn is_gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

/// The stub nvJitLink built with `defines`, in `dir`.
fn stub(dir: &Path, defines: &[&str]) -> std::path::PathBuf {
    cuda_link_tests::stub_nvjitlink(dir, "isolation", defines)
}

/// The stub at `path`, loaded: its workers are pooled by this value.
fn stub_lib(path: &Path) -> Arc<NvJitLink> {
    // SAFETY: our own stub, with nvJitLink's signatures.
    Arc::new(unsafe { NvJitLink::open(path) }.unwrap())
}

/// A linker on `lib`, isolated with `memory_limit`.
fn stub_linker(lib: &Arc<NvJitLink>, memory_limit: Option<u64>) -> Linker {
    let lib = Arc::clone(lib);
    let isolation = Isolation::Process {
        timeout: None,
        memory_limit,
    };
    let options = LinkerOptions::for_arch(Arch::sm(90)).isolation(isolation);
    Linker::with_nvjitlink(lib, options).unwrap()
}

/// SIGKILL of a caller whose link hangs: its worker is gone within 1 s.
#[test]
fn a_worker_ends_with_its_killed_caller() {
    let mut caller: Child = in_own_process("hanging_caller_child")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let worker = loop {
        // The link thread forks the worker from the spawning thread; give
        // it the time to reach nvJitLinkComplete.
        if let Some(&worker) = workers_of(caller.id()).first() {
            std::thread::sleep(Duration::from_millis(300));
            break worker;
        }
        assert!(started.elapsed() < Duration::from_secs(60), "no worker");
        std::thread::sleep(Duration::from_millis(10));
    };
    caller.kill().unwrap();
    caller.wait().unwrap();
    let killed = Instant::now();
    while !is_gone(worker) {
        if killed.elapsed() > Duration::from_secs(1) {
            // SAFETY: the stray worker of this test; ended, then said.
            unsafe { libc::kill(i32::try_from(worker).unwrap(), libc::SIGKILL) };
            panic!("worker {worker} outlived its caller");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Links forever: its worker hangs in nvJitLinkComplete, with no timeout.
#[test]
#[ignore = "run by a_worker_ends_with_its_killed_caller in a process of its own"]
fn hanging_caller_child() {
    assert_in_child();
    let dir = tempfile::tempdir().unwrap();
    let lib = stub_lib(&stub(dir.path(), &["STUB_COMPLETE_FAULT=3"]));
    let mut linker = stub_linker(&lib, None);
    linker.add(&program("hangs")).unwrap();
    let _ = linker.link(OutputKind::Cubin);
    panic!("the hanging link returned");
}

#[test]
fn a_dead_idle_worker_is_replaced_where_children_are_reaped_unasked() {
    passes_in_own_process("dead_worker_child", "replaced");
}

/// With SIGCHLD ignored (the kernel reaps children, and their pids may be
/// reused), an idle worker killed from outside is seen dead and replaced,
/// never handed a request.
#[test]
#[ignore = "run by a_dead_idle_worker_is_replaced_where_children_are_reaped_unasked in a process of its own"]
fn dead_worker_child() {
    assert_in_child();
    let dir = tempfile::tempdir().unwrap();
    let lib = stub_lib(&stub(dir.path(), &[]));
    // SAFETY: this process runs this test alone; ignoring SIGCHLD is what
    // the scenario is.
    unsafe { libc::signal(libc::SIGCHLD, libc::SIG_IGN) };
    assert!(worker_answered(&lib, "first"));
    let workers = workers_of(std::process::id());
    assert_eq!(workers.len(), 1, "{workers:?}");
    // SAFETY: our idle worker, alive (its pid cannot be reused yet).
    unsafe { libc::kill(i32::try_from(workers[0]).unwrap(), libc::SIGKILL) };
    let killed = Instant::now();
    while !is_gone(workers[0]) {
        assert!(killed.elapsed() < Duration::from_secs(10));
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(worker_answered(&lib, "second"));
    let replaced = workers_of(std::process::id());
    assert!(replaced.len() == 1 && replaced != workers, "{replaced:?}");
    println!("replaced");
}

#[test]
fn each_worker_maps_its_own_memory_alone() {
    passes_in_own_process("mappings_child", "3 workers, 1 mapping each");
}

/// Three workers at once (three libraries), then each one's mappings of
/// a worker's shared file.
#[test]
#[ignore = "run by each_worker_maps_its_own_memory_alone in a process of its own"]
fn mappings_child() {
    assert_in_child();
    let dirs: Vec<_> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
    for dir in &dirs {
        assert!(worker_answered(&stub_lib(&stub(dir.path(), &[])), "mapped"));
    }
    let workers = workers_of(std::process::id());
    assert_eq!(workers.len(), 3, "{workers:?}");
    for worker in &workers {
        let maps = std::fs::read_to_string(format!("/proc/{worker}/maps")).unwrap();
        let shared = maps
            .lines()
            .filter(|l| l.contains("cuda-link-worker"))
            .count();
        assert_eq!(shared, 1, "worker {worker}:\n{maps}");
    }
    println!("3 workers, 1 mapping each");
}

/// An answer larger than the memory limit is not copied in: a typed
/// error, never an allocation of its size.
#[test]
fn an_answer_over_the_memory_limit_is_refused() {
    let _serial = cuda_link_tests::serial();
    let dir = tempfile::tempdir().unwrap();
    let lib = stub_lib(&stub(dir.path(), &["STUB_INFO_LOG_BYTES=(96 << 20)"]));
    let mut linker = stub_linker(&lib, Some(32 << 20));
    linker.add(&program("talkative")).unwrap();
    let error = linker.link(OutputKind::Cubin).unwrap_err();
    assert!(
        matches!(&error, LinkError::MemoryLimit { limit, .. } if *limit == 32 << 20),
        "{error:?}"
    );
    // The same link with room for its answer is answered.
    let mut linker = stub_linker(&lib, Some(1 << 30));
    linker.add(&program("talkative")).unwrap();
    let answered = linker.link(OutputKind::Cubin);
    assert!(matches!(answered, Err(LinkError::Input(_))), "{answered:?}");
}

/// Links `name` on the stub `lib`, isolated: whether its worker answered
/// (the stub's 4-byte "cubin" is then refused as output, which is the
/// linker's check after the answer, not the worker's end).
fn worker_answered(lib: &Arc<NvJitLink>, name: &str) -> bool {
    let mut linker = stub_linker(lib, None);
    linker.add(&program(name)).unwrap();
    let outcome = linker.link(OutputKind::Cubin);
    matches!(outcome, Err(LinkError::Input(_)))
}

/// The in-memory tier: a repeated link with the default (isolated)
/// linker and no cache is served from this process's memory, bytes for
/// bytes; a forked child starts with it empty and links for itself.
#[test]
fn a_repeated_link_comes_from_memory_but_never_across_a_fork() {
    if !have_nvjitlink() {
        return;
    }
    passes_in_own_process(
        "memory_tier_child",
        "memory tier: parent 1 hit, child 0 hits",
    );
}

#[test]
#[ignore = "run by a_repeated_link_comes_from_memory_but_never_across_a_fork in a process of its own"]
fn memory_tier_child() {
    use cuda_link::MemoryCache;
    assert_in_child();
    let link = || {
        let mut linker = Linker::new(LinkerOptions::for_arch(Arch::sm(90))).unwrap();
        linker.add(&program("remembered")).unwrap();
        linker.link(OutputKind::Cubin).unwrap()
    };
    let first = link();
    let before = MemoryCache::stats();
    let again = link();
    let hits = MemoryCache::stats().hits - before.hits;
    assert_eq!(again.as_bytes(), first.as_bytes());
    // SAFETY: this process runs this test alone; the child only links
    // and leaves with `_exit`.
    match unsafe { libc::fork() } {
        -1 => panic!("fork: {}", std::io::Error::last_os_error()),
        0 => {
            let empty = MemoryCache::stats().entries == 0;
            let linked = link();
            let own = linked.inspect().unwrap().kernels() == ["remembered"];
            let code = match (empty, own, MemoryCache::stats().hits) {
                (true, true, 0) => 0,
                (false, ..) => 1,
                (_, false, _) => 2,
                _ => 3,
            };
            // SAFETY: ends the child without the harness's handlers.
            unsafe { libc::_exit(code) }
        }
        child => {
            let mut status = 0;
            // SAFETY: our child and an out-pointer.
            assert_eq!(unsafe { libc::waitpid(child, &mut status, 0) }, child);
            assert!(libc::WIFEXITED(status), "the child died: {status}");
            let code = libc::WEXITSTATUS(status);
            assert_eq!(code, 0, "1: inherited entries, 2: wrong kernels, 3: a hit");
            println!("memory tier: parent {hits} hit, child 0 hits");
        }
    }
}
