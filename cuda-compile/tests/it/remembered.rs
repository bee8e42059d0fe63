//! Include closures remembered in memory (Linux, inotify): a repeated
//! compile skips the include scan, and never serves a closure that a
//! change made stale, whatever the change, nor one a fork's child saw.

use cuda_compile::{Compiler, Program, ProgramOptions, Target};

use crate::compile::{compilers, sm90};

/// A kernel storing `A + B`: `A` from `src/nested.h` through
/// `src/local.h`, `B` from `<inc.h>` on the include path `first` (a
/// symbolic link to the empty `first_a`), then `inc` (one to `inc_a`).
struct Project {
    root: tempfile::TempDir,
}

impl Project {
    fn new() -> Self {
        let project = Project {
            root: tempfile::tempdir().unwrap(),
        };
        project.write("src/kernel.cu", KERNEL);
        project.write("src/local.h", "#include \"nested.h\"\n");
        project.write("src/nested.h", "#define A 1000\n");
        project.write("inc_a/inc.h", "#define B 20000\n");
        project.write("inc_b/inc.h", "#define B 30000\n");
        project.write("first_b/inc.h", "#define B 80000\n");
        std::fs::create_dir_all(project.at("first_a")).unwrap();
        std::os::unix::fs::symlink("first_a", project.at("first")).unwrap();
        std::os::unix::fs::symlink("inc_a", project.at("inc")).unwrap();
        project
    }

    fn at(&self, file: &str) -> std::path::PathBuf {
        self.root.path().join(file)
    }

    fn write(&self, file: &str, text: &str) {
        let path = self.at(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn program(&self) -> Program {
        Program::from_path(self.at("src/kernel.cu")).unwrap()
    }

    fn options(&self) -> ProgramOptions {
        let dirs = [self.at("first"), self.at("inc")];
        sm90().include_path(dirs.map(|d| d.display().to_string()))
    }

    /// The value the compiled kernel stores, read from its PTX.
    fn value(&self, compiler: &Compiler) -> u32 {
        let compiled = compiler
            .compile(&self.program(), Target::Ptx, &self.options())
            .unwrap_or_else(|e| panic!("{e:?}"));
        let ptx = String::from_utf8_lossy(compiled.code.as_bytes()).into_owned();
        let stored = ptx
            .lines()
            .find_map(|line| line.trim().strip_prefix("mov.u32"))
            .and_then(|mov| mov.rsplit(", ").next())
            .and_then(|value| value.trim_end_matches(';').parse().ok());
        stored.unwrap_or_else(|| panic!("no constant in\n{ptx}"))
    }

    /// Three compiles after a change, each giving `expected`: the first
    /// scans, the second watches and scans, the third is served.
    fn expect(&self, compiler: &Compiler, change: &str, expected: u32) {
        for round in 0..3 {
            assert_eq!(self.value(compiler), expected, "{change}, compile {round}");
        }
    }
}

const KERNEL: &str = r#"#include "local.h"
#include <inc.h>
extern "C" __global__ void k(unsigned *out) { *out = A + B; }
"#;

fn compiler() -> Option<Compiler> {
    compilers().into_iter().next().map(|(_, compiler)| compiler)
}

/// Each change to what the program reads, made right after a compile
/// served the closure from memory, is seen by the next compile: a header
/// rewritten in place at the same size, a header appearing earlier on
/// the include path and going again, a symbolic link on the path
/// retargeted (to a folder with a header where none was, too), the
/// source's folder swapped for another.
#[cfg(target_os = "linux")]
#[test]
fn a_remembered_closure_sees_every_change() {
    let Some(compiler) = compiler() else {
        return;
    };
    let project = Project::new();
    let served = cuda_compile::remembered_closures_served();
    project.expect(&compiler, "cold", 21000);
    assert!(
        cuda_compile::remembered_closures_served() > served,
        "the third compile's closure came from memory"
    );
    project.write("src/nested.h", "#define A 4000\n");
    project.expect(&compiler, "a header rewritten at the same size", 24000);
    project.write("first/inc.h", "#define B 50000\n");
    project.expect(&compiler, "a header shadowing another", 54000);
    std::fs::remove_file(project.at("first/inc.h")).unwrap();
    project.expect(&compiler, "the shadowing header gone", 24000);
    std::fs::remove_file(project.at("inc")).unwrap();
    std::os::unix::fs::symlink("inc_b", project.at("inc")).unwrap();
    project.expect(&compiler, "the include folder's link retargeted", 34000);
    std::fs::rename(project.at("src"), project.at("src_old")).unwrap();
    project.write("src/kernel.cu", KERNEL);
    project.write("src/local.h", "#define A 6000\n");
    project.expect(&compiler, "the source's folder swapped", 36000);
    std::fs::remove_file(project.at("first")).unwrap();
    std::os::unix::fs::symlink("first_b", project.at("first")).unwrap();
    project.expect(&compiler, "an earlier folder's link retargeted", 86000);
}

/// A fork's child that compiles and sees an edit must not take the
/// parent's notice of it: the parent, compiling next, sees the edit too.
#[cfg(target_os = "linux")]
#[test]
fn a_forks_child_leaves_the_parents_notices() {
    const CHILD: &str = "CUDA_COMPILE_TEST_FORK";
    // Forks only in a process of its own, which runs this test alone.
    if std::env::var_os(CHILD).is_none() {
        let child = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "remembered::a_forks_child_leaves_the_parents_notices",
            ])
            .args(["--test-threads", "1"])
            .env(CHILD, "1")
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&child.stdout);
        assert!(
            child.status.success() && said.contains("1 passed"),
            "{said}{}",
            String::from_utf8_lossy(&child.stderr)
        );
        return;
    }
    let Some(compiler) = compiler() else {
        return;
    };
    let project = Project::new();
    project.expect(&compiler, "cold", 21000);
    // SAFETY: this process runs this one test; a thread of libtest's may
    // wait for it, holding no lock the child takes. The child only writes
    // a file and reads the program's dependencies (no NVRTC call: the
    // memo's lock is held across forks by its atfork handlers, malloc's by
    // glibc's), then leaves with `_exit`.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        project.write("src/nested.h", "#define A 7000\n");
        let seen = compiler.dependencies(&project.program(), &project.options());
        let code = i32::from(seen.is_err());
        // SAFETY: ends the child without running the parent's destructors.
        unsafe { libc::_exit(code) };
    }
    let mut status = 0;
    // SAFETY: waits for the child just forked.
    let waited = unsafe { libc::waitpid(pid, &mut status, 0) };
    assert_eq!(waited, pid);
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
    project.expect(&compiler, "an edit a fork's child saw", 27000);
}
