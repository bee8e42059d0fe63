//! The `cuda-link` command end to end, with the provisioned nvJitLink.

use std::process::Command;

use cuda_link::inspect::EntryKind;
use cuda_link_tests::{fixtures, temp_file};

fn cuda_link() -> Command {
    Command::new(env!("CARGO_BIN_EXE_cuda-link"))
}

#[test]
fn link_then_inspect() {
    let Some(ptx) = fixtures::saxpy_ptx() else {
        return;
    };
    let (dir, input) = temp_file("saxpy.ptx", &ptx);
    let output = dir.path().join("saxpy.cubin");
    let run = cuda_link()
        .args(["link", "-arch", "sm_90", "--verbose", "-o"])
        .arg(&output)
        .arg(&input)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );

    let run = cuda_link()
        .arg("inspect")
        .arg(&output)
        .arg("--json")
        .output()
        .unwrap();
    assert!(run.status.success());
    let json: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(json[0]["kind"], "cubin");
    assert_eq!(json[0]["contents"]["cubin"]["kernels"][0], "saxpy");
    assert_eq!(json[0]["contents"]["cubin"]["arch"], "sm_90");

    let run = cuda_link().arg("inspect").arg(&output).output().unwrap();
    let text = String::from_utf8_lossy(&run.stdout);
    assert!(text.contains("kernels: saxpy"), "{text}");
}

#[test]
fn link_failure_exits_non_zero_with_the_log() {
    let Some(ptx) = fixtures::ptx(fixtures::EXTERN_USER_CU, "extern_user.cu") else {
        return;
    };
    let (dir, input) = temp_file("extern_user.ptx", &ptx);
    let run = cuda_link()
        .args(["link", "-arch=sm_90", "-o"])
        .arg(dir.path().join("out.cubin"))
        .arg(&input)
        .output()
        .unwrap();
    assert!(!run.status.success());
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("Undefined reference to 'missing_function'"),
        "{stderr}"
    );
    assert!(!dir.path().join("out.cubin").exists());
}

#[test]
fn bad_input_names_the_file() {
    let (_dir, input) = temp_file("garbage.bin", b"\0\0\0\0 not device code");
    let run = cuda_link().arg("inspect").arg(&input).output().unwrap();
    assert!(!run.status.success());
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("garbage.bin") && stderr.contains("unrecognized"),
        "{stderr}"
    );
}

#[test]
fn the_second_cached_link_is_a_hit() {
    let Some(ptx) = fixtures::saxpy_ptx() else {
        return;
    };
    let (dir, input) = temp_file("saxpy.ptx", &ptx);
    let cache_dir = dir.path().join("cache");
    let mut outputs = Vec::new();
    for round in 0..2 {
        let output = dir.path().join(format!("out{round}.cubin"));
        let run = cuda_link()
            .args(["link", "--verbose", "-arch=sm_90", "--cache-dir"])
            .arg(&cache_dir)
            .arg("-o")
            .arg(&output)
            .arg(&input)
            .output()
            .unwrap();
        assert!(run.status.success());
        let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
        assert_eq!(stderr.contains("cache hit in"), round == 1, "{stderr}");
        outputs.push(std::fs::read(output).unwrap());
    }
    assert_eq!(outputs[0], outputs[1]);
}

/// `--cache --verbose` says hit or miss, and `cache stats|dir|clear` see
/// the same directory.
#[test]
fn the_cache_reports_and_is_managed_from_the_command_line() {
    let Some(ptx) = fixtures::saxpy_ptx() else {
        return;
    };
    let (dir, input) = temp_file("saxpy.ptx", &ptx);
    let cache_dir = dir.path().join("cache");
    let output = dir.path().join("saxpy.cubin");
    let link = || {
        let run = cuda_link()
            .args(["link", "-arch", "sm_90", "--verbose", "--cache-dir"])
            .arg(&cache_dir)
            .arg("-o")
            .arg(&output)
            .arg(&input)
            .output()
            .unwrap();
        assert!(run.status.success());
        String::from_utf8_lossy(&run.stderr).into_owned()
    };
    assert!(link().contains("cache miss, stored in"));
    assert!(link().contains("cache hit in"));
    let cache = |action: &str| {
        let run = cuda_link()
            .args(["cache", action, "--cache-dir"])
            .arg(&cache_dir)
            .output()
            .unwrap();
        assert!(run.status.success());
        String::from_utf8_lossy(&run.stdout).trim().to_owned()
    };
    assert_eq!(cache("dir"), cache_dir.display().to_string());
    assert!(
        cache("stats").contains(": 1 entries,"),
        "{}",
        cache("stats")
    );
    assert!(cache("clear").ends_with("removed 1 entries"));
    assert!(cache("stats").contains(": 0 entries, 0 bytes"));
    assert!(link().contains("cache miss, stored in"));
}

/// `CUDA_LINK_CACHE_DIR` alone turns the persistent cache on for `link`
/// and `compile`, as for the libraries; `--no-cache` turns it off.
#[test]
fn the_cache_variable_alone_sets_the_cache_up() {
    let ptx = b".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() { ret; }\n";
    let (dir, input) = temp_file("k.ptx", ptx);
    let cache_dir = dir.path().join("from-env");
    let link = |extra: &[&str]| {
        let run = cuda_link()
            .env("CUDA_LINK_CACHE_DIR", &cache_dir)
            .env_remove("CUDA_LINK_CACHE_URL")
            .args(["link", "-arch", "sm_90", "--verbose", "-o"])
            .arg(dir.path().join("k.cubin"))
            .args(extra)
            .arg(&input)
            .output()
            .unwrap();
        assert!(run.status.success(), "{}", stderr_of(&run));
        stderr_of(&run)
    };
    assert!(link(&["--no-cache"]).contains("wrote"));
    assert!(!cache_dir.exists(), "--no-cache used the cache");
    assert!(link(&[]).contains("cache miss, stored in"));
    assert!(link(&[]).contains("cache hit in"));
}

/// `cache keygen` prints a key pair as the variables take it; a store
/// password on the command line is warned about (it shows in `ps`).
#[test]
fn keys_come_from_keygen_and_passwords_from_the_environment() {
    let run = cuda_link().args(["cache", "keygen"]).output().unwrap();
    assert!(run.status.success());
    let stdout = String::from_utf8_lossy(&run.stdout);
    for variable in [
        "CUDA_LINK_CACHE_SIGNING_KEY=",
        "CUDA_LINK_CACHE_VERIFY_KEY=",
    ] {
        let line = stdout.lines().find(|l| l.starts_with(variable)).unwrap();
        let hex = &line[variable.len()..];
        assert!(
            hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()),
            "{line}"
        );
    }
    let again = cuda_link().args(["cache", "keygen"]).output().unwrap();
    assert_ne!(run.stdout, again.stdout, "the same key twice");

    let ptx = b".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() { ret; }\n";
    let (dir, input) = temp_file("k.ptx", ptx);
    let run = cuda_link()
        .args([
            "link",
            "-arch",
            "sm_90",
            "--cache-url",
            "redis://user:hunter2@127.0.0.1:1/0",
        ])
        .arg("--cache-dir")
        .arg(dir.path().join("cache"))
        .arg("-o")
        .arg(dir.path().join("out.cubin"))
        .arg(&input)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("--cache-url carries a password")
            && stderr.contains("CUDA_LINK_CACHE_PASSWORD"),
        "{stderr}"
    );
    assert!(!stderr.contains("hunter2"), "{stderr}");
}

/// What is wrong with options or inputs is reported before the driver is
/// loaded, so a machine without one hears it too.
#[test]
fn driver_backend_checks_options_and_inputs_first() {
    let Some(ltoir) = fixtures::ltoir(fixtures::SAXPY_CU, "saxpy.cu", "sm_90") else {
        return;
    };
    let ptx = fixtures::saxpy_ptx().unwrap();
    let (dir, ltoir_path) = temp_file("saxpy.ltoir", &ltoir);
    let ptx_path = dir.path().join("saxpy.ptx");
    std::fs::write(&ptx_path, &ptx).unwrap();
    let link = |extra: &[&str], input: &std::path::Path| {
        let run = cuda_link()
            .args(["link", "-arch=sm_90", "--backend", "driver", "-o"])
            .arg(dir.path().join("out.cubin"))
            .args(extra)
            .arg(input)
            .output()
            .unwrap();
        assert!(!run.status.success());
        String::from_utf8_lossy(&run.stderr).into_owned()
    };
    let stderr = link(&[], &ltoir_path);
    assert!(
        stderr.contains("saxpy.ltoir: LTO-IR input requires the nvJitLink backend"),
        "{stderr}"
    );
    let stderr = link(&["--xptxas=-v"], &ptx_path);
    assert!(
        stderr.contains("option `ptxas_options` is not supported by the driver backend"),
        "{stderr}"
    );
}

/// `cuda-link inspect ... | head` closes the pipe early: no panic.
#[test]
fn inspect_into_a_closed_pipe_exits_quietly() {
    let Some(ptx) = fixtures::saxpy_ptx() else {
        return;
    };
    let (_dir, input) = temp_file("saxpy.ptx", &ptx);
    let mut child = cuda_link()
        .arg("inspect")
        .args(std::iter::repeat_n(&input, 200))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// `inspect --demangle` shows C++ kernels by the names `Library::kernel`
/// also finds them by.
#[test]
fn inspect_demangles_kernel_names() {
    let Some(dir) = cuda_link_tests::corpus::dir() else {
        return;
    };
    let file = dir.join("params.cubin");
    let plain = cuda_link().arg("inspect").arg(&file).output().unwrap();
    let plain = String::from_utf8_lossy(&plain.stdout);
    assert!(plain.contains("_Z10p_templateIfEvPT_S0_"), "{plain}");
    let run = cuda_link()
        .args(["inspect", "--demangle", "--json"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(run.status.success());
    let json: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    let kernels: Vec<&str> = json[0]["contents"]["cubin"]["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|k| k.as_str())
        .collect();
    assert!(kernels.contains(&"p_template<float>"), "{kernels:?}");
    assert!(kernels.contains(&"p_template<int>"), "{kernels:?}");
    assert!(kernels.contains(&"p_scalars"), "{kernels:?}");
}

/// Hostile inputs never take the command down: every `inspect` and every
/// isolated `link` of the structural classes and of the inputs that
/// crashed or hung nvJitLink in fuzzing ends by itself, with exit 0 or 1
/// and a message, never a signal and never a hang.
#[test]
fn hostile_inputs_end_with_an_exit_code_never_a_signal() {
    let Some(cubin) = fixtures::saxpy_relocatable_cubin() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for (at, image) in cuda_link_tests::hostile::classes(&cubin)
        .into_iter()
        .enumerate()
    {
        let path = dir.path().join(format!("class-{at}"));
        std::fs::write(&path, &image.bytes).unwrap();
        files.push(path);
    }
    let regressions = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/regressions");
    for entry in std::fs::read_dir(regressions).unwrap() {
        files.push(entry.unwrap().path());
    }
    let output = dir.path().join("out.cubin");
    for file in &files {
        for args in [
            vec!["inspect".to_owned()],
            ["link", "--timeout", "5", "-arch", "sm_90", "-o"]
                .map(str::to_owned)
                .into_iter()
                .chain([output.display().to_string()])
                .collect(),
        ] {
            let run = cuda_link().args(&args).arg(file).output().unwrap();
            let stderr = String::from_utf8_lossy(&run.stderr);
            match run.status.code() {
                Some(0) => {}
                Some(1) => assert!(stderr.starts_with("cuda-link: "), "{stderr}"),
                other => panic!(
                    "{args:?} {}: {other:?} {:?}\n{stderr}",
                    file.display(),
                    run.status
                ),
            }
        }
    }
}

/// `--in-process` opts out of the child process; `--timeout` goes with
/// the child only.
#[test]
fn in_process_and_timeout_do_not_mix() {
    let run = cuda_link()
        .args([
            "link",
            "--in-process",
            "--timeout",
            "3",
            "-arch",
            "sm_90",
            "-o",
            "x",
            "y",
        ])
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains("cannot be used with"));
}

fn run_ok(command: &mut Command) -> std::process::Output {
    let run = command.output().unwrap();
    assert!(
        run.status.success(),
        "{:?}: {}",
        run.status,
        String::from_utf8_lossy(&run.stderr)
    );
    run
}

fn stderr_of(run: &std::process::Output) -> String {
    String::from_utf8_lossy(&run.stderr).into_owned()
}

/// `--json` prints one array for any number of files, `--jsonl` a line
/// per file; every file is reported, and a bad one makes the exit code 1.
#[test]
fn inspect_reports_every_file_as_json_or_json_lines() {
    let Some(ptx) = fixtures::saxpy_ptx() else {
        return;
    };
    let (dir, good) = temp_file("saxpy.ptx", &ptx);
    let bad = dir.path().join("bad.bin");
    std::fs::write(&bad, b"not device code").unwrap();
    let run = run_ok(
        cuda_link()
            .args(["inspect", "--json"])
            .arg(&good)
            .arg(&good),
    );
    let json: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(json.as_array().unwrap().len(), 2);
    let run = run_ok(
        cuda_link()
            .args(["inspect", "--jsonl"])
            .arg(&good)
            .arg(&good),
    );
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&run.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[1]["kind"], "ptx");

    let run = cuda_link()
        .args(["inspect", "--json"])
        .args([&good, &bad, &good])
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(json.as_array().unwrap().len(), 3);
    assert!(json[1]["error"].as_str().unwrap().contains("unrecognized"));
    assert_eq!(json[2]["kind"], "ptx");
    let run = cuda_link()
        .arg("inspect")
        .args([&good, &bad, &good])
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&run.stdout)
            .matches("kernels: saxpy")
            .count(),
        2
    );
    assert!(stderr_of(&run).contains("bad.bin"), "{}", stderr_of(&run));
}

/// `inspect -` reads standard input.
#[test]
fn inspect_reads_standard_input() {
    use std::io::Write as _;
    let Some(ptx) = fixtures::saxpy_ptx() else {
        return;
    };
    let mut child = cuda_link()
        .args(["inspect", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&ptx).unwrap();
    let run = child.wait_with_output().unwrap();
    assert!(run.status.success());
    let text = String::from_utf8_lossy(&run.stdout);
    assert!(text.starts_with("<stdin>: ptx"), "{text}");
    assert!(text.contains("kernels: saxpy"), "{text}");
}

/// An empty file and a `.cu` file say what they are to `inspect`; `link`
/// refuses the empty file and compiles the source.
#[test]
fn input_errors_say_what_the_input_is() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.o");
    std::fs::write(&empty, b"").unwrap();
    let source = dir.path().join("kernel.cu");
    std::fs::write(&source, "__global__ void k() {}\n").unwrap();
    for (file, expected) in [(&empty, "empty file"), (&source, "CUDA C++ source")] {
        let run = cuda_link().arg("inspect").arg(file).output().unwrap();
        assert_eq!(run.status.code(), Some(1));
        assert!(stderr_of(&run).contains(expected), "{}", stderr_of(&run));
    }
    let source_hint = stderr_of(&cuda_link().arg("inspect").arg(&source).output().unwrap());
    assert!(source_hint.contains("nvcc"), "{source_hint}");
    assert!(
        source_hint.contains("cuda-link link FILE.cu"),
        "{source_hint}"
    );

    let link = |file: &std::path::Path| {
        cuda_link()
            .args(["link", "-arch", "sm_90", "-o"])
            .arg(dir.path().join("out.cubin"))
            .arg(file)
            .output()
            .unwrap()
    };
    let run = link(&empty);
    assert_eq!(run.status.code(), Some(1));
    assert!(
        stderr_of(&run).contains("empty file"),
        "{}",
        stderr_of(&run)
    );
    if cuda_link_tests::redist("CUDA_LINK_NVRTC_PATH").is_some() {
        let run = link(&source);
        assert!(run.status.success(), "{}", stderr_of(&run));
    }
}

/// A missing or misspelled arch speaks command-line, with exit code 2.
#[test]
fn arch_mistakes_get_command_line_help() {
    let Some(ptx) = fixtures::saxpy_ptx() else {
        return;
    };
    let (dir, input) = temp_file("saxpy.ptx", &ptx);
    let out = dir.path().join("out.cubin");
    let run = cuda_link()
        .args(["link", "-o"])
        .arg(&out)
        .arg(&input)
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(2), "{}", stderr_of(&run));
    assert!(
        stderr_of(&run).contains("pass -arch sm_XX"),
        "{}",
        stderr_of(&run)
    );
    assert!(
        !stderr_of(&run).contains("LinkerOptions"),
        "{}",
        stderr_of(&run)
    );
    for typed in ["sm90", "SM_90"] {
        let run = cuda_link()
            .args(["link", "-arch", typed, "-o"])
            .arg(&out)
            .arg(&input)
            .output()
            .unwrap();
        assert_eq!(run.status.code(), Some(2));
        let stderr = stderr_of(&run);
        assert!(stderr.contains("did you mean `sm_90`"), "{stderr}");
        assert!(stderr.contains("compute_90, lto_90"), "{stderr}");
    }
}

/// What inspection knows is said before a backend loads: here no backend
/// can load at all, and each mistake is still named.
#[test]
fn mistakes_are_caught_before_the_backend_loads() {
    let Some(ptx) = fixtures::saxpy_ptx() else {
        return;
    };
    let (dir, input) = temp_file("saxpy.ptx", &ptx);
    let out = dir.path().join("out.ptx");
    let no_backend = |command: &mut Command| -> String {
        let run = command
            .env("CUDA_LINK_NVJITLINK_PATH", "/nonexistent/libnvJitLink.so")
            .env("CUDA_LINK_LIBCUDA_PATH", "/nonexistent/libcuda.so")
            .output()
            .unwrap();
        assert!(!run.status.success());
        stderr_of(&run)
    };
    let stderr = no_backend(
        cuda_link()
            .args(["link", "-arch", "sm_80", "-o"])
            .arg(&out)
            .arg(&input),
    );
    assert!(
        stderr.contains("PTX for sm_90 cannot be linked for -arch sm_80"),
        "{stderr}"
    );
    if let Some(ltoir) = fixtures::saxpy_ltoir() {
        let (_ltoir_dir, ltoir) = temp_file("saxpy.ltoir", &ltoir);
        let stderr = no_backend(
            cuda_link()
                .args(["link", "-arch", "sm_80", "-o"])
                .arg(&out)
                .arg(&ltoir),
        );
        assert!(
            stderr.contains("LTO-IR for sm_90 cannot be linked for -arch sm_80"),
            "{stderr}"
        );
    }
    let stderr = no_backend(
        cuda_link()
            .args(["link", "--ptx", "-arch", "sm_90", "-o"])
            .arg(&out)
            .arg(&input),
    );
    assert!(stderr.contains("holds no LTO-IR"), "{stderr}");
    let stderr = no_backend(
        cuda_link()
            .args([
                "link",
                "-arch",
                "sm_90",
                "-o",
                "/nonexistent/folder/out.cubin",
            ])
            .arg(&input),
    );
    assert!(
        stderr.contains("cannot write /nonexistent/folder/out.cubin"),
        "{stderr}"
    );
    // And a missing backend has its own exit code.
    let run = cuda_link()
        .args(["link", "-arch", "sm_90", "-o"])
        .arg(dir.path().join("out.cubin"))
        .arg(&input)
        .env("CUDA_LINK_NVJITLINK_PATH", "/nonexistent/libnvJitLink.so")
        .env("CUDA_LINK_LIBCUDA_PATH", "/nonexistent/libcuda.so")
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(3), "{}", stderr_of(&run));
}

/// `-o` naming an input is refused and the input left alone.
#[test]
fn output_naming_an_input_is_refused() {
    let Some(ptx) = fixtures::saxpy_ptx() else {
        return;
    };
    let (_dir, input) = temp_file("saxpy.ptx", &ptx);
    let run = cuda_link()
        .args(["link", "-arch", "sm_90", "-o"])
        .arg(&input)
        .arg(&input)
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(2));
    assert!(
        stderr_of(&run).contains("is also an input"),
        "{}",
        stderr_of(&run)
    );
    assert_eq!(std::fs::read(&input).unwrap(), ptx);
}

/// A link that works prints nothing, as nvcc; `--verbose` tells, `--quiet`
/// is accepted, `--flag` values pass through untouched, and the cache
/// flags work.
#[test]
fn success_is_quiet_and_flags_pass_through() {
    let Some(ptx) = fixtures::saxpy_ptx() else {
        return;
    };
    let (dir, input) = temp_file("saxpy.ptx", &ptx);
    let out = dir.path().join("out.cubin");
    for extra in [
        &["--quiet"][..],
        &["--no-cache"],
        &["--no-nvjitlink-cache"],
        &["--flag", "-arch=sm_90"],
    ] {
        let run = run_ok(
            cuda_link()
                .args(["link", "-arch", "sm_90", "-o"])
                .arg(&out)
                .args(extra)
                .arg(&input),
        );
        assert_eq!(stderr_of(&run), "", "{extra:?}");
    }
    let run = run_ok(
        cuda_link()
            .args(["link", "--verbose", "-arch", "sm_90", "-o"])
            .arg(&out)
            .arg(&input),
    );
    assert!(stderr_of(&run).contains("wrote"), "{}", stderr_of(&run));
    let shown = run_ok(cuda_link().arg("inspect").arg(&out));
    assert!(String::from_utf8_lossy(&shown.stdout).contains("1 kernel,"));
}

/// A closed pipe on stderr (`2>&1 | head`) is no panic.
#[test]
fn link_into_a_closed_pipe_does_not_panic() {
    let Some(ptx) = fixtures::saxpy_ptx() else {
        return;
    };
    let (dir, input) = temp_file("saxpy.ptx", &ptx);
    let script = format!(
        "{} link --verbose --time -arch sm_90 -o {} {} 2>&1 | head -c 1 >/dev/null; echo \"${{PIPESTATUS[0]}}\"",
        env!("CARGO_BIN_EXE_cuda-link"),
        dir.path().join("out.cubin").display(),
        input.display()
    );
    let run = Command::new("bash").args(["-c", &script]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&run.stdout).trim(), "0");
}

/// `--ptx` output is text: no NUL at its end.
#[test]
fn ptx_output_has_no_trailing_nul() {
    let Some(ltoir) = fixtures::saxpy_ltoir() else {
        return;
    };
    let (dir, input) = temp_file("saxpy.ltoir", &ltoir);
    let out = dir.path().join("out.ptx");
    run_ok(
        cuda_link()
            .args(["link", "--ptx", "-arch", "sm_90", "-o"])
            .arg(&out)
            .arg(&input),
    );
    let text = std::fs::read(&out).unwrap();
    assert_ne!(text.last(), Some(&0));
    assert!(String::from_utf8_lossy(&text).contains(".entry saxpy"));
}

/// `inspect` of PTX lists its device functions as well as its kernels.
#[test]
fn inspect_lists_ptx_functions() {
    let ptx = ".version 8.0\n.target sm_90\n.address_size 64\n\
               .visible .func helper()\n{\n ret;\n}\n\
               .visible .entry k()\n{\n ret;\n}\n";
    let (_dir, path) = temp_file("funcs.ptx", ptx.as_bytes());
    let run = run_ok(cuda_link().arg("inspect").arg(&path));
    let text = String::from_utf8_lossy(&run.stdout);
    assert!(text.contains("kernels: k"), "{text}");
    assert!(text.contains("device functions: helper"), "{text}");
}

/// A link that runs past a second shows its step and elapsed time on a
/// terminal (here a pseudo-terminal from `script`), and nothing in a pipe.
#[test]
fn a_long_link_shows_progress_on_a_terminal_only() {
    if cuda_link_tests::redist("CUDA_LINK_NVJITLINK_PATH").is_none() {
        return;
    }
    // nvJitLink hangs on this input; the deadline ends the link at 2.5 s.
    let hang = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/regressions/hang-nvjitlink13-ltoir-48092bd5323bf6e1");
    let dir = tempfile::tempdir().unwrap();
    let command = format!(
        "{} link --timeout 2.5 -arch sm_90 -o {} {}",
        env!("CARGO_BIN_EXE_cuda-link"),
        dir.path().join("out.cubin").display(),
        hang.display()
    );
    let on_terminal = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&on_terminal.stdout);
    assert!(shown.contains("linking 1 input with nvJitLink"), "{shown}");
    assert!(shown.contains("deadline"), "{shown}");
    let piped = Command::new("bash")
        .args(["-c", &command])
        .output()
        .unwrap();
    let stderr = stderr_of(&piped);
    assert!(!stderr.contains("linking 1 input"), "{stderr}");
    assert!(stderr.contains("deadline"), "{stderr}");
}

/// `-arch sm_80,sm_90` links once per arch (isolated, on all cores) and
/// writes a fatbin with a cubin for each; no GPU, no CUDA install.
#[test]
fn multi_arch_link_writes_a_fatbin() {
    let Some(ltoir) = fixtures::ltoir(fixtures::SAXPY_CU, "saxpy.cu", "sm_80") else {
        return;
    };
    let (dir, input) = temp_file("saxpy.ltoir", &ltoir);
    let output = dir.path().join("saxpy.fatbin");
    let run = cuda_link()
        .args([
            "link",
            "-arch",
            "sm_80,sm_90",
            "-gencode",
            "arch=compute_80,code=compute_80",
        ])
        .arg("-o")
        .arg(&output)
        .arg(&input)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let run = cuda_link()
        .arg("inspect")
        .arg(&output)
        .arg("--json")
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(json[0]["kind"], "fatbin");
    let entries = json[0]["contents"]["fatbin"]["entries"].as_array().unwrap();
    let slots: Vec<String> = entries
        .iter()
        .map(|e| {
            format!(
                "{} {}",
                e["kind"].as_str().unwrap(),
                e["arch"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(slots, ["ptx sm_80", "cubin sm_80", "cubin sm_90"]);
}

/// `-arch compute_90` alone is PTX, as nvcc's: a fatbin's PTX slot, never
/// an sm_90 cubin; under a `.ptx` name it is refused, and `--ptx` gives
/// the PTX itself.
#[test]
fn a_compute_arch_alone_links_ptx() {
    let Some(ltoir) = fixtures::ltoir(fixtures::SAXPY_CU, "saxpy.cu", "sm_90") else {
        return;
    };
    let (dir, input) = temp_file("saxpy.ltoir", &ltoir);
    let link = |args: &[&str], output: &str| {
        cuda_link()
            .args(["link", "-arch", "compute_90"])
            .args(args)
            .arg("-o")
            .arg(dir.path().join(output))
            .arg(&input)
            .output()
            .unwrap()
    };
    let run = link(&[], "saxpy.fatbin");
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let fatbin = std::fs::read(dir.path().join("saxpy.fatbin")).unwrap();
    let code = cuda_link::ObjectCode::from_bytes(fatbin, "saxpy.fatbin").unwrap();
    let cuda_link::inspect::Contents::Fatbin(info) = code.inspect().unwrap().contents else {
        panic!("not a fatbin");
    };
    let slots: Vec<_> = info
        .entries
        .iter()
        .map(|e| format!("{:?} {}", e.kind, e.arch))
        .collect();
    assert_eq!(slots, ["Ptx sm_90"]);

    let run = link(&[], "saxpy.ptx");
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains("--ptx for PTX alone"));

    let run = link(&["--ptx"], "saxpy.ptx");
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let ptx = std::fs::read_to_string(dir.path().join("saxpy.ptx")).unwrap();
    assert!(ptx.contains(".entry saxpy"), "{ptx}");
}

/// `cuda-link fatbin` packs a cubin and PTX, the PTX put in a later slot,
/// zstd-compressed; a cubin named for another arch is refused, exit 1.
#[test]
fn fatbin_packs_files_and_refuses_a_wrong_slot() {
    let (Some(ptx), Some(cubin)) = (fixtures::saxpy_ptx(), fixtures::saxpy_relocatable_cubin())
    else {
        return;
    };
    let (dir, ptx_path) = temp_file("saxpy.ptx", &ptx);
    let cubin_path = dir.path().join("saxpy.cubin");
    std::fs::write(&cubin_path, &cubin).unwrap();
    let output = dir.path().join("packed.fatbin");
    let run = cuda_link()
        .args(["fatbin", "--compress", "zstd", "-o"])
        .arg(&output)
        .arg(&cubin_path)
        .arg(format!("{}:sm_100", ptx_path.display()))
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let run = cuda_link().arg("inspect").arg(&output).output().unwrap();
    let text = String::from_utf8_lossy(&run.stdout);
    assert!(text.contains("cubin      sm_90    zstd"), "{text}");
    assert!(text.contains("ptx        sm_100   zstd"), "{text}");

    let run = cuda_link()
        .args(["fatbin", "-o"])
        .arg(dir.path().join("wrong.fatbin"))
        .arg(format!("{}:sm_80", cubin_path.display()))
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("sm_90 cubin") && stderr.contains("sm_80"),
        "{stderr}"
    );
}

/// `--ptx-isa 9.0`, and by default: the fatbin's PTX states 9.0, which a
/// CUDA 13.0 driver JIT-compiles, where nvJitLink 13.5 wrote 9.5 (kept
/// with `as-linked`); a value that is not major.minor is a usage error
/// (exit 2).
#[test]
fn ptx_isa_lowers_the_ptx_slot() {
    if cuda_link_tests::redist("CUDA_LINK_NVRTC_PATH").is_none() {
        return;
    }
    let (dir, input) = temp_file("saxpy.cu", fixtures::SAXPY_CU.as_bytes());
    let ptx_version = |extra: &[&str], name: &str| {
        let output = dir.path().join(name);
        let run = cuda_link()
            .args(["link", "-arch", "sm_80,compute_80", "-o"])
            .arg(&output)
            .args(extra)
            .arg(&input)
            .output()
            .unwrap();
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        let fatbin = cuda_link::ObjectCode::from_path(&output).unwrap();
        let info = fatbin.inspect().unwrap();
        let ptx = info.fatbin_entries().find(|e| e.kind == EntryKind::Ptx);
        ptx.expect("a PTX entry").version.clone()
    };
    assert_eq!(ptx_version(&["--ptx-isa", "9.0"], "lowered.fatbin"), "9.0");
    assert_eq!(ptx_version(&[], "default.fatbin"), "9.0");
    assert_ne!(
        ptx_version(&["--ptx-isa", "as-linked"], "as-linked.fatbin"),
        "9.0"
    );
    let run = cuda_link()
        .args([
            "link",
            "-arch",
            "sm_80,compute_80",
            "--ptx-isa",
            "nine",
            "-o",
            "x.fatbin",
        ])
        .arg(&input)
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(2));
}

/// A multi-arch link to a `.cubin`, `.ptx` or `.ltoir` name is refused
/// (exit 2) with the remedy, before anything is linked; a `.cu` input
/// without an NVRTC to load exits 3, as `--help` says of a missing
/// library.
#[test]
fn multi_arch_to_a_single_output_name_and_a_missing_nvrtc() {
    let (dir, input) = temp_file("saxpy.cu", fixtures::SAXPY_CU.as_bytes());
    for name in ["x.cubin", "x.ptx", "x.ltoir"] {
        let run = cuda_link()
            .args(["link", "-arch", "sm_80,sm_90", "-o"])
            .arg(dir.path().join(name))
            .arg(&input)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{name}: {stderr}");
        assert!(stderr.contains(".fatbin"), "{name}: {stderr}");
    }
    let run = cuda_link()
        .env(
            "CUDA_LINK_NVRTC_PATH",
            dir.path().join("no-such-libnvrtc.so"),
        )
        .args(["link", "-arch", "sm_90", "-o"])
        .arg(dir.path().join("x.cubin"))
        .arg(&input)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(3), "{stderr}");
}

/// `-o` naming a pipe or a device is written through, as compilers do: a
/// rename would replace it with a plain file (as root, `/dev/null` itself),
/// and so is a path in `/proc` (standard output as `/proc/self/fd/1`). A
/// link at `-o` (one planted in a shared folder) is replaced, never
/// followed; a folder is refused before the link.
#[cfg(unix)]
#[test]
fn output_through_a_pipe_and_over_a_link() {
    use std::os::unix::fs::FileTypeExt as _;
    let Some(ptx) = fixtures::saxpy_ptx() else {
        return;
    };
    let (dir, input) = temp_file("saxpy.ptx", &ptx);
    let link_to = |output: &std::path::Path| {
        cuda_link()
            .args(["link", "-arch", "sm_90", "-o"])
            .arg(output)
            .arg(&input)
            .output()
            .unwrap()
    };
    let kernels = |bytes: Vec<u8>| -> Vec<String> {
        let code = cuda_link::ObjectCode::from_bytes(bytes, "out").unwrap();
        let inspection = code.inspect().unwrap();
        inspection.kernels().into_iter().map(String::from).collect()
    };

    let pipe = dir.path().join("pipe");
    let reader = cuda_link_tests::pipe_with_reader(&pipe);
    let run = link_to(&pipe);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    // Before the reader is joined: a renamed-over pipe is never opened.
    let kind = std::fs::symlink_metadata(&pipe).unwrap().file_type();
    assert!(kind.is_fifo(), "the pipe is still a pipe: {kind:?}");
    assert_eq!(kernels(reader.join().unwrap()), ["saxpy"]);

    let victim = dir.path().join("victim");
    std::fs::write(&victim, b"old").unwrap();
    let link = dir.path().join("link.cubin");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let run = link_to(&link);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(!std::fs::symlink_metadata(&link).unwrap().is_symlink());
    assert_eq!(kernels(std::fs::read(&link).unwrap()), ["saxpy"]);
    assert_eq!(std::fs::read(&victim).unwrap(), b"old");

    let run = link_to(std::path::Path::new("/proc/self/fd/1"));
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert_eq!(kernels(run.stdout), ["saxpy"]);

    let run = link_to(dir.path());
    assert_eq!(run.status.code(), Some(1));
    let said = String::from_utf8_lossy(&run.stderr);
    assert!(said.contains("it is a folder"), "{said}");
}

/// `-arch compute_90` makes PTX, which nvJitLink links from LTO-IR only:
/// PTX inputs are refused before the link, with the arch to pass.
#[test]
fn a_compute_arch_over_ptx_names_the_sm_arch() {
    let Some(ptx) = fixtures::saxpy_ptx() else {
        return;
    };
    let (dir, input) = temp_file("saxpy.ptx", &ptx);
    for arch in ["compute_90", "sm_90,compute_90"] {
        let run = cuda_link()
            .args(["link", "-arch", arch, "-o"])
            .arg(dir.path().join("out.fatbin"))
            .arg(&input)
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{arch}: {said}");
        assert!(said.contains("pass -arch sm_90"), "{arch}: {said}");
    }
}

/// A word that is not UTF-8 is refused by name, not a panic.
#[cfg(unix)]
#[test]
fn a_word_that_is_not_utf8_is_refused() {
    use std::os::unix::ffi::OsStrExt as _;
    let run = cuda_link()
        .args(["fatbin", "-o"])
        .arg(std::ffi::OsStr::from_bytes(b"x\xff.fatbin"))
        .arg("in.ptx")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{said}");
    assert!(said.contains("is not UTF-8"), "{said}");
}

/// `-gencode arch=compute_80,code=sm_86` is compiled by nvcc as compute_80
/// (`__CUDA_ARCH__` 800) and assembled for sm_86: not made here, so it is
/// refused rather than compiled as sm_86, with what to pass instead.
#[test]
fn compile_refuses_a_slot_of_another_arch_than_its_gencode() {
    let (dir, input) = temp_file(
        "k.cu",
        b"__global__ void k(int *p) { *p = __CUDA_ARCH__; }\n",
    );
    // `link` compiles a .cu input for each slot as `compile` does.
    for command in [&["compile"][..], &["link", "-o", "k.fatbin"][..]] {
        let run = cuda_link()
            .current_dir(dir.path())
            .args(command)
            .args(["-gencode", "arch=compute_80,code=sm_86"])
            .arg(&input)
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{command:?}: {said}");
        assert!(said.contains("arch=compute_86,code=sm_86"), "{said}");
    }
    assert!(!dir.path().join("k.cubin").exists());
    assert!(!dir.path().join("k.fatbin").exists());
}

/// nvcc's `-Xptxas -v` and `--time` print what they ask for (ptxas's
/// function properties, the timings) without `--verbose`.
#[test]
fn ptxas_verbose_and_time_print_the_info_log() {
    let Some(ltoir) = fixtures::saxpy_ltoir() else {
        return;
    };
    let (dir, input) = temp_file("saxpy.ltoir", &ltoir);
    for flags in [&["-Xptxas", "-v"][..], &["--time"][..]] {
        let run = cuda_link()
            .args(["link", "-arch", "sm_90", "--no-cache", "-o"])
            .arg(dir.path().join("out.cubin"))
            .args(flags)
            .arg(&input)
            .output()
            .unwrap();
        let stderr = stderr_of(&run);
        assert!(run.status.success(), "{stderr}");
        assert!(!stderr.trim().is_empty(), "{flags:?} printed nothing");
    }
}

/// `--kernels-used` with a name the output lacks (misspelt, or unmangled)
/// is warned of: nvJitLink removes every kernel but the ones it names.
#[test]
fn kernels_used_that_name_nothing_are_warned_of() {
    let Some(ltoir) = fixtures::saxpy_ltoir() else {
        return;
    };
    let (dir, input) = temp_file("saxpy.ltoir", &ltoir);
    for (name, warned) in [("nope", true), ("saxpy", false)] {
        let run = cuda_link()
            .args(["link", "-arch", "sm_90", "--kernels-used", name, "-o"])
            .arg(dir.path().join("out.cubin"))
            .arg(&input)
            .output()
            .unwrap();
        let stderr = stderr_of(&run);
        assert!(run.status.success(), "{stderr}");
        assert_eq!(
            stderr.contains("names no kernel"),
            warned,
            "{name}: {stderr}"
        );
    }
}
