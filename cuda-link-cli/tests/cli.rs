//! The `cuda-link` command end to end, with the provisioned nvJitLink.

use std::process::Command;

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
    assert_eq!(json["kind"], "cubin");
    assert_eq!(json["contents"]["cubin"]["kernels"][0], "saxpy");
    assert_eq!(json["contents"]["cubin"]["arch"], "sm_90");

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
            .args(["link", "-arch=sm_90", "--cache-dir"])
            .arg(&cache_dir)
            .arg("-o")
            .arg(&output)
            .arg(&input)
            .output()
            .unwrap();
        assert!(run.status.success());
        let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
        assert_eq!(stderr.contains("from the cache"), round == 1, "{stderr}");
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
    let kernels: Vec<&str> = json["contents"]["cubin"]["kernels"]
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
