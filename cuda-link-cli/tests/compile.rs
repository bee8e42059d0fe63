//! `cuda-link compile`, and `link` of `.cu` inputs, with the provisioned
//! NVRTC: nvcc's spellings, one output per arch or one fatbin, depfiles,
//! and the errors of a wrong command line.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use cuda_link::ObjectCode;
use cuda_link::inspect::{EntryKind, Payload};

fn cuda_link() -> Command {
    Command::new(env!("CARGO_BIN_EXE_cuda-link"))
}

fn have_nvrtc() -> bool {
    cuda_link_tests::redist("CUDA_LINK_NVRTC_PATH").is_some()
}

/// A kernel file as real ones are written: a header found through `-I`, a
/// macro from `-D`, a constexpr helper without `__device__` (nvcc's
/// `--expt-relaxed-constexpr` habit), a template, and a kernel whose name
/// says which `__CUDA_ARCH__` compiled it.
const KERNEL_CU: &str = r#"#include "op.h"
constexpr float twice(float x) { return 2 * x; }
template <typename T>
__global__ void axpy(T *y, const T *x, int n) {
    int i = threadIdx.x;
    if (i < n) y[i] = op(twice(x[i]), y[i]);
}
template __global__ void axpy<float>(float *, const float *, int);
#if __CUDA_ARCH__ >= 900
extern "C" __global__ void built_for_90(float *y) { y[0] = SCALE; }
#else
extern "C" __global__ void built_for_80(float *y) { y[0] = SCALE; }
#endif
"#;
const OP_H: &str = "#pragma once\n\
    template <typename T> __device__ T op(T a, T b) { return a * SCALE + b; }\n";

/// A folder with `k.cu` and `inc/op.h`.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("inc")).unwrap();
    std::fs::write(dir.path().join("inc/op.h"), OP_H).unwrap();
    std::fs::write(dir.path().join("k.cu"), KERNEL_CU).unwrap();
    dir
}

/// Runs `cuda-link` in `dir` with nvcc's flags for the project.
fn run_in(dir: &Path, args: &[&str]) -> Output {
    cuda_link()
        .current_dir(dir)
        .args(args)
        .args(["-Iinc", "-D", "SCALE=3", "-expt-relaxed-constexpr", "k.cu"])
        .output()
        .unwrap()
}

fn succeeded(run: &Output) -> String {
    let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    assert!(run.status.success(), "{stderr}");
    stderr
}

/// Runs `cuda-link` in `dir` with `args`, expecting exit `code`: its
/// stderr.
fn exits_with(dir: &Path, args: &[&str], code: i32) -> String {
    let run = cuda_link().current_dir(dir).args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    assert_eq!(run.status.code(), Some(code), "{args:?}: {stderr}");
    stderr
}

fn kernels(code: &ObjectCode) -> Vec<String> {
    let mut kernels: Vec<String> = code
        .inspect()
        .unwrap()
        .kernels()
        .into_iter()
        .map(str::to_owned)
        .collect();
    kernels.sort();
    kernels
}

/// One arch, nvcc's spellings (its host-side options left out, each
/// said): a cubin named after the input, its kernels compiled for that
/// arch, and each name expression's lowered name on standard output.
#[test]
fn one_arch_writes_a_cubin_with_the_name_expressions() {
    if !have_nvrtc() {
        return;
    }
    let dir = project();
    // nvcc's host-side options, as Makefiles pass them: left out, said.
    let run = run_in(
        dir.path(),
        &[
            "compile",
            "-arch=sm_90",
            "-O3",
            "-Xcompiler",
            "-fPIC",
            "--default-stream",
            "per-thread",
            "--name-expression",
            "axpy<float>",
        ],
    );
    let stderr = succeeded(&run);
    assert!(
        stderr.contains("`-Xcompiler -fPIC` is left out")
            && stderr.contains("`--default-stream per-thread` is left out"),
        "{stderr}"
    );
    assert_eq!(
        String::from_utf8_lossy(&run.stdout),
        "axpy<float>\t_Z4axpyIfEvPT_PKS0_i\n"
    );
    let cubin = ObjectCode::from_path(dir.path().join("k.cubin")).unwrap();
    assert_eq!(kernels(&cubin), ["_Z4axpyIfEvPT_PKS0_i", "built_for_90"]);
}

/// Several arches: one output per arch, each of the kind its spelling
/// names and compiled for it; `-o` with several outputs is a usage error
/// (exit 2) that says what to do.
#[test]
fn several_arches_write_one_output_each() {
    if !have_nvrtc() {
        return;
    }
    let dir = project();
    succeeded(&run_in(
        dir.path(),
        &["compile", "-arch", "sm_80,sm_90,compute_80"],
    ));
    let sm80 = ObjectCode::from_path(dir.path().join("k.sm_80.cubin")).unwrap();
    let sm90 = ObjectCode::from_path(dir.path().join("k.sm_90.cubin")).unwrap();
    let ptx = ObjectCode::from_path(dir.path().join("k.compute_80.ptx")).unwrap();
    assert!(kernels(&sm80).contains(&"built_for_80".to_owned()));
    assert!(kernels(&sm90).contains(&"built_for_90".to_owned()));
    assert!(kernels(&ptx).contains(&"built_for_80".to_owned()));

    let run = run_in(
        dir.path(),
        &["compile", "-arch", "sm_80,sm_90", "-o", "x.cubin"],
    );
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--fatbin"), "{stderr}");
}

/// `--fatbin`: one fatbin, a slot per arch, each compiled for its arch;
/// `-MD` writes a make rule naming the source and the header it read.
#[test]
fn fatbin_and_depfile() {
    if !have_nvrtc() {
        return;
    }
    let dir = project();
    succeeded(&run_in(
        dir.path(),
        &[
            "compile",
            "-arch",
            "sm_80,sm_90",
            "-fatbin",
            "-o",
            "k.fatbin",
            "-MD",
        ],
    ));
    let fatbin = ObjectCode::from_path(dir.path().join("k.fatbin")).unwrap();
    let info = fatbin.inspect().unwrap();
    let slots: Vec<(EntryKind, String)> = info
        .fatbin_entries()
        .map(|e| (e.kind, e.arch.to_string()))
        .collect();
    assert_eq!(
        slots,
        [
            (EntryKind::Cubin, "sm_80".into()),
            (EntryKind::Cubin, "sm_90".into())
        ]
    );
    let rule = std::fs::read_to_string(dir.path().join("k.fatbin.d")).unwrap();
    assert!(rule.starts_with("k.fatbin:"), "{rule}");
    assert!(rule.contains("k.cu") && rule.contains("inc/op.h"), "{rule}");

    let run = run_in(dir.path(), &["compile", "-arch", "sm_90", "-M"]);
    let rule = String::from_utf8_lossy(&run.stdout);
    assert!(
        rule.starts_with("k.cubin:") && rule.contains("inc/op.h"),
        "{rule}"
    );
    // As nvcc's: `-M -o` and `-M --MF` write the rule there, its target
    // still the object; `--MF` alone is a usage error; `$` is doubled.
    for flags in [["-o", "deps.d"], ["--MF", "deps.d"]] {
        let _ = std::fs::remove_file(dir.path().join("deps.d"));
        let run = run_in(
            dir.path(),
            &[&["compile", "-arch", "sm_90", "-M"][..], &flags].concat(),
        );
        assert!(run.stdout.is_empty());
        let rule = std::fs::read_to_string(dir.path().join("deps.d")).unwrap();
        assert!(rule.starts_with("k.cubin:"), "{flags:?}: {rule}");
    }
    let run = run_in(dir.path(), &["compile", "-arch", "sm_90", "--MF", "x.d"]);
    assert_eq!(run.status.code(), Some(2));
    succeeded(&run_in(
        dir.path(),
        &["compile", "-arch", "sm_90", "-MD", "-o", "o$1.cubin"],
    ));
    let rule = std::fs::read_to_string(dir.path().join("o$1.cubin.d")).unwrap();
    assert!(rule.starts_with("o$$1.cubin:"), "{rule}");
    // `-MT` names the target and `-MP` adds a rule for each header, as
    // Makefiles' `-MMD -MP -MT $@` use them; without -MD or -M each is a
    // usage error.
    succeeded(&run_in(
        dir.path(),
        &[
            "compile", "-arch", "sm_90", "-MMD", "-MP", "-MT", "obj/k.o", "-o", "k.cubin",
        ],
    ));
    let rule = std::fs::read_to_string(dir.path().join("k.cubin.d")).unwrap();
    assert!(rule.starts_with("obj/k.o:"), "{rule}");
    assert!(
        rule.lines().any(|line| line.ends_with("inc/op.h:")),
        "{rule}"
    );
    assert!(!rule.lines().any(|line| line.ends_with("k.cu:")), "{rule}");
    for flags in [&["-MP"][..], &["-MT", "obj/k.o"]] {
        let run = run_in(
            dir.path(),
            &[&["compile", "-arch", "sm_90"][..], flags].concat(),
        );
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{flags:?}: {stderr}");
        assert!(stderr.contains("-MD or -M"), "{flags:?}: {stderr}");
    }
}

/// `link` takes the same flags for `.cu` inputs and compiles each for
/// every arch of the link: the sm_80 cubin holds the kernel built for 80,
/// the sm_90 one the kernel built for 90.
#[test]
fn link_compiles_sources_for_each_arch() {
    if !have_nvrtc() {
        return;
    }
    let dir = project();
    succeeded(&run_in(
        dir.path(),
        &["link", "-arch", "sm_80,sm_90", "-o", "linked.fatbin"],
    ));
    let fatbin = ObjectCode::from_path(dir.path().join("linked.fatbin")).unwrap();
    let info = fatbin.inspect().unwrap();
    let entries: Vec<_> = info.fatbin_entries().collect();
    assert_eq!(entries.len(), 2);
    for (entry, kernel) in entries.iter().zip(["built_for_80", "built_for_90"]) {
        let Payload::Cubin(cubin) = &entry.payload else {
            panic!("{}: not a cubin", entry.arch);
        };
        assert!(cubin.kernels.contains(&kernel.to_owned()), "{}", entry.arch);
    }
}

/// An option NVRTC does not know, passed raw, is named (exit 1); a
/// missing NVRTC is exit 3, as `--help` says.
#[test]
fn unknown_raw_options_and_a_missing_nvrtc() {
    if !have_nvrtc() {
        return;
    }
    let dir = project();
    let run = run_in(
        dir.path(),
        &["compile", "-arch", "sm_90", "-Xnvrtc", "--bogus"],
    );
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("does not know the option `--bogus`"),
        "{stderr}"
    );

    let run = cuda_link()
        .current_dir(dir.path())
        .env(
            "CUDA_LINK_NVRTC_PATH",
            dir.path().join("no-such-libnvrtc.so"),
        )
        .args(["compile", "-arch", "sm_90", "k.cu"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(3), "{stderr}");
}

/// A file whose launcher lives in an included header gets the host-code
/// verdict at the header's own line; so does one whose first failure is
/// a host-only header.
#[test]
fn host_code_is_named_where_it_is() {
    if !have_nvrtc() {
        return;
    }
    let dir = project();
    std::fs::write(
        dir.path().join("inc/launch.cuh"),
        "#pragma once\n__global__ void fill(float *y) { y[0] = 1; }\n\
         void run(float *y) { fill<<<1, 1>>>(y); }\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("launcher.cu"),
        "#include \"launch.cuh\"\n__global__ void other(float *y) { y[0] = 2; }\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("streams.cu"),
        "#include <cstdint>\n#include <iostream>\n__global__ void k(float *y) {}\n",
    )
    .unwrap();
    for (file, expected) in [
        (
            "launcher.cu",
            "inc/launch.cuh:3: a host function (`void run(float *y)`) with a `<<<...>>>` \
             kernel launch is host code",
        ),
        (
            "streams.cu",
            "streams.cu:2: `#include <iostream>` is host code",
        ),
    ] {
        let run = cuda_link()
            .current_dir(dir.path())
            .args(["compile", "-arch", "sm_90", "-Iinc", file])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains(expected), "{file}: {stderr}");
        assert!(
            stderr.contains("compile it with nvcc, or let cuda-build route it to nvcc"),
            "{stderr}"
        );
    }
}

/// `compile --help` lists every nvcc-shaped flag, and says why the ones
/// NVRTC has no use for are accepted.
#[test]
fn help_lists_every_flag() {
    let run = cuda_link().args(["compile", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{help}");
    for flag in [
        "--arch",
        "--gencode",
        "-I, --include-path",
        "--isystem",
        "-D, --define-macro",
        "-U, --undefine-macro",
        "--include",
        "--std",
        "--expt-relaxed-constexpr",
        "--expt-extended-lambda",
        "--use_fast_math",
        "--rdc",
        "--dc",
        "--lineinfo",
        "-G, --device-debug",
        "-O",
        "--ptx",
        "--cubin",
        "--ltoir",
        "--fatbin",
        "--name-expression",
        "-M",
        "--MD",
        "--MF",
        "--Xnvrtc",
    ] {
        assert!(help.contains(flag), "{flag} missing from:\n{help}");
    }
    assert!(help.contains("unrecognized option"), "{help}");
    assert!(help.contains("refuses `__device__` lambdas"), "{help}");
    assert!(help.contains("host compiler's level"), "{help}");
}

/// Two runners with folders of their own and one Redis: the second
/// compile is the first one's output, taken from the store, and `cache
/// stats` counts it; a server that is gone is a warning, not a failure.
#[test]
fn a_shared_store_serves_another_runner() {
    if !have_nvrtc() {
        return;
    }
    let Some(mut redis) = cuda_link_tests::redis::RedisServer::start() else {
        return;
    };
    let dir = project();
    let runner = |cache: &str, url: &str| {
        let cache = dir.path().join(cache);
        cuda_link()
            .current_dir(dir.path())
            .args([
                "compile",
                "-arch",
                "sm_90",
                "-o",
                "k.cubin",
                "-v",
                "--cache-url",
                url,
            ])
            .arg("--cache-dir")
            .arg(&cache)
            .env(
                "CUDA_LINK_CACHE_SIGNING_KEY",
                "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
            )
            .args(["-Iinc", "-D", "SCALE=3", "-expt-relaxed-constexpr", "k.cu"])
            .output()
            .unwrap()
    };
    let first = succeeded(&runner("a", &redis.url()));
    assert!(first.contains("cache miss, stored in"), "{first}");
    let built = std::fs::read(dir.path().join("k.cubin")).unwrap();
    let second = succeeded(&runner("b", &redis.url()));
    assert!(
        second.contains(&format!("cache hit in {}", redis.url())),
        "{second}"
    );
    assert_eq!(std::fs::read(dir.path().join("k.cubin")).unwrap(), built);

    let stats = cuda_link()
        .args(["cache", "stats", "--cache-dir"])
        .arg(dir.path().join("b"))
        .output()
        .unwrap();
    let stats = String::from_utf8_lossy(&stats.stdout);
    assert!(stats.contains("1 remote hits"), "{stats}");

    redis.stop();
    let down = succeeded(&runner("c", &redis.url()));
    assert!(
        down.contains("warning: the shared cache") && down.contains("went on without it"),
        "{down}"
    );
    let compiled = ObjectCode::from_path(dir.path().join("k.cubin")).unwrap();
    assert!(kernels(&compiled).contains(&"built_for_90".to_owned()));
}

/// A missing input is said before anything is compiled or written.
#[test]
fn a_missing_input_writes_nothing() {
    if !have_nvrtc() {
        return;
    }
    let dir = project();
    let run = cuda_link()
        .current_dir(dir.path())
        .args(["compile", "-arch", "sm_90", "-Iinc", "-D", "SCALE=3"])
        .args(["-expt-relaxed-constexpr", "k.cu", "missing.cu"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("missing.cu"), "{stderr}");
    assert!(!dir.path().join("k.cubin").exists());
}

/// Never stale, through the CLI and its persistent cache, each run a new
/// process: an include folder given as a raw NVRTC option
/// (`-Xnvrtc --include-path=D`), an include after `FOOR"("`, a header
/// changed and changed back during a compile, and `-lineinfo` in two
/// checkouts sharing one cache.
mod never_stale {
    use super::*;

    /// `cuda-link compile` of `k.cu` in `dir` to PTX with `args` and the
    /// cache in `cache`: the value of `__device__ int value`, and whether
    /// the cache served it.
    fn compile(dir: &Path, cache: &Path, args: &[&str]) -> Option<(i64, bool)> {
        let run = cuda_link()
            .current_dir(dir)
            .args(["compile", "-arch", "sm_90", "--ptx", "-o", "k.ptx", "-v"])
            .arg("--cache-dir")
            .arg(cache)
            .args(args)
            .arg("k.cu")
            .output()
            .unwrap();
        if !run.status.success() {
            return None;
        }
        let stderr = String::from_utf8_lossy(&run.stderr);
        let ptx = std::fs::read_to_string(dir.join("k.ptx")).unwrap();
        let value = ptx
            .split(" value = ")
            .nth(1)?
            .split(';')
            .next()?
            .trim()
            .parse()
            .ok()?;
        Some((value, stderr.contains("cache hit")))
    }

    #[test]
    fn a_raw_include_folder_reaches_the_scan() {
        if !have_nvrtc() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache");
        std::fs::create_dir(dir.path().join("inc")).unwrap();
        std::fs::write(dir.path().join("inc/v.h"), "#define V 1\n").unwrap();
        std::fs::write(
            dir.path().join("k.cu"),
            "#include \"v.h\"\n__device__ int value = V;\n",
        )
        .unwrap();
        let args = ["-Xnvrtc", "--include-path=inc"];
        assert_eq!(compile(dir.path(), &cache, &args), Some((1, false)));
        assert_eq!(compile(dir.path(), &cache, &args), Some((1, true)));
        std::fs::write(dir.path().join("inc/v.h"), "#define V 2\n").unwrap();
        assert_eq!(compile(dir.path(), &cache, &args), Some((2, false)));
    }

    #[test]
    fn an_identifier_ending_in_r_hides_no_include() {
        if !have_nvrtc() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache");
        std::fs::write(dir.path().join("hidden.h"), "#define V 1\n").unwrap();
        let source = "#define FOOR \"a\"\n#define S(x) x\n\
                      __device__ const char *a = FOOR\"(\";\n\
                      __device__ const char *b = S(\"\")\"/*\";\n\
                      #include \"hidden.h\"\n// */\n__device__ int value = V;\n";
        std::fs::write(dir.path().join("k.cu"), source).unwrap();
        assert_eq!(compile(dir.path(), &cache, &[]), Some((1, false)));
        std::fs::write(dir.path().join("hidden.h"), "#define V 2\n").unwrap();
        assert_eq!(compile(dir.path(), &cache, &[]), Some((2, false)));
    }

    /// Twenty rounds of `v.h` written B then A while a compile runs; a
    /// compile after each, served from the cache, must be A's.
    #[test]
    fn a_change_undone_during_a_compile_is_never_stored() {
        if !have_nvrtc() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache");
        let header = dir.path().join("v.h");
        std::fs::write(&header, "#define V 1\n").unwrap();
        let source =
            |round: u64| format!("// {round}\n#include \"v.h\"\n__device__ int value = V;\n");
        std::fs::write(dir.path().join("k.cu"), source(999)).unwrap();
        let started = std::time::Instant::now();
        compile(dir.path(), &cache, &[]).unwrap();
        let span = started.elapsed().as_micros() as u64;
        let mut stale = 0;
        for round in 0..20u64 {
            std::fs::write(dir.path().join("k.cu"), source(round)).unwrap();
            let toggler = {
                let header = header.clone();
                let at = span * ((round * 7) % 20) / 20;
                std::thread::spawn(move || {
                    std::thread::sleep(std::time::Duration::from_micros(at));
                    std::fs::write(&header, "#define V 2\n").unwrap();
                    std::thread::sleep(std::time::Duration::from_micros(span / 10));
                    std::fs::write(&header, "#define V 1\n").unwrap();
                })
            };
            let _ = compile(dir.path(), &cache, &[]);
            toggler.join().unwrap();
            if let Some((value, true)) = compile(dir.path(), &cache, &[]) {
                stale += usize::from(value != 1);
            }
        }
        assert_eq!(stale, 0, "stale compiles of 20 rounds");
    }

    /// `-lineinfo` PTX names the file it was compiled from where it is.
    #[test]
    fn line_info_names_this_checkout() {
        if !have_nvrtc() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache");
        for checkout in ["one", "two"] {
            let root = dir.path().join(checkout);
            std::fs::create_dir(&root).unwrap();
            std::fs::write(
                root.join("k.cu"),
                "__device__ int value = 1;\n__global__ void k(int *p) { *p = value; }\n",
            )
            .unwrap();
            compile(&root, &cache, &["-lineinfo"]).unwrap();
            let ptx = std::fs::read_to_string(root.join("k.ptx")).unwrap();
            let file = ptx
                .lines()
                .find(|l| l.contains(".file"))
                .unwrap_or_default();
            assert!(
                file.contains(&root.display().to_string()),
                "{checkout}: {file}"
            );
        }
    }
}

/// Every real host-code file the repo holds (the fifteen candle's own
/// build compiles with nvcc, as its `HOST_FILES` lists them, and
/// `moe_align.cu`, whose `extern "C"` launcher upstream does not build) is
/// told host code by `compile`, before NVRTC runs, whatever the flags say:
/// none, nvcc's `--expt-relaxed-constexpr` (which becomes
/// `-default-device`), or `-default-device` itself. Each message names a
/// line of the file and says what to do.
#[test]
fn every_real_host_code_file_is_told_host_code_whatever_its_flags() {
    if !have_nvrtc() {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../peers/candle/candle-kernels");
    let build = std::fs::read_to_string(root.join("build.rs")).unwrap();
    let listed = build.split("const HOST_FILES").nth(1).unwrap();
    let listed = &listed[..listed.find("];").unwrap()];
    let mut files: Vec<PathBuf> = listed
        .split('"')
        .filter(|part| part.ends_with(".cu"))
        .map(|file| root.join(file))
        .collect();
    files.push(root.join("src/moe/moe_align.cu"));
    assert_eq!(files.len(), 16, "{files:?}");
    let flag_sets: [&[&str]; 3] = [
        &[],
        &["--expt-relaxed-constexpr"],
        &["-Xnvrtc", "-default-device"],
    ];
    for file in &files {
        for flags in flag_sets {
            let path = file.display().to_string();
            let args = [
                &["compile", "-arch", "sm_80", "-o", "/dev/null", "-I.."][..],
                flags,
                &[&path],
            ];
            let stderr = exits_with(file.parent().unwrap(), &args.concat(), 1);
            assert!(
                stderr.contains("is host code")
                    && stderr.contains("compile it with nvcc, or let cuda-build route it to nvcc"),
                "{path}, {flags:?}: {stderr}"
            );
        }
    }
}

/// No silent empty output from `compile`: a file of `extern "C"` host
/// stubs (stand-ins for old GPUs) is host code, said before NVRTC runs,
/// whatever the flags; a file whose only kernel is a template nothing
/// NVRTC sees instantiates is an error naming the kernel.
#[test]
fn stubs_and_uninstantiated_templates_are_errors_not_empty_outputs() {
    if !have_nvrtc() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("stubs.cu"),
        "#include <cassert>\n\
         extern \"C\" void launch_gemm(const float *a, float *c, int n) { assert(false); }\n\
         extern \"C\" void launch_scale(float *y, int n) { assert(false); }\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("template.cu"),
        "template <typename T> __global__ void scale(T *y, T a) { y[0] *= a; }\n\
         #ifndef __CUDACC_RTC__\n\
         void launch(float *y) { scale<float><<<1, 1>>>(y, 2.0f); }\n\
         #endif\n",
    )
    .unwrap();
    for flags in [&[][..], &["--expt-relaxed-constexpr"]] {
        let args = [
            &["compile", "-arch", "sm_90", "-o", "stubs.cubin"][..],
            flags,
            &["stubs.cu"],
        ];
        let stderr = exits_with(dir.path(), &args.concat(), 1);
        assert!(
            stderr.contains("stubs.cu:2: a host function (`extern \"C\" void launch_gemm"),
            "{stderr}"
        );
    }
    let args = [
        "compile",
        "-arch",
        "sm_90",
        "-o",
        "template.cubin",
        "template.cu",
    ];
    let stderr = exits_with(dir.path(), &args, 1);
    assert!(
        stderr.contains("`scale`") && stderr.contains("no kernel"),
        "{stderr}"
    );
    assert!(!dir.path().join("template.cubin").exists());
}

/// PTX the CLI writes is lowered to the first ISA of nvJitLink's CUDA
/// release (13.x: 9.0, which CUDA 13.0's driver JIT-compiles), as
/// cuda-build lowers its own: `compile --ptx`, `link --ptx` and a fatbin's
/// PTX slot; `--ptx-isa` chooses another, `as-linked` keeps the
/// compiler's. `inspect` says which driver JIT-compiles each.
#[test]
fn ptx_written_is_floored_to_the_release_s_first_isa() {
    if !have_nvrtc() || std::env::var_os("CUDA_LINK_NVRTC13_PATH").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("k.cu"),
        "extern \"C\" __global__ void k(float *y) { y[0] = 1.0f; }\n",
    )
    .unwrap();
    let version = |file: &str| {
        let text = std::fs::read_to_string(dir.path().join(file)).unwrap();
        text.lines()
            .find_map(|l| l.strip_prefix(".version "))
            .unwrap()
            .trim()
            .to_owned()
    };
    let run = |args: &[&str]| {
        let run = cuda_link()
            .current_dir(dir.path())
            .env(
                "CUDA_LINK_NVRTC_PATH",
                std::env::var_os("CUDA_LINK_NVRTC13_PATH").unwrap(),
            )
            .args(args)
            .output()
            .unwrap();
        succeeded(&run);
        String::from_utf8_lossy(&run.stdout).into_owned()
    };
    run(&[
        "compile",
        "-arch",
        "compute_90",
        "--ptx",
        "-o",
        "c.ptx",
        "k.cu",
    ]);
    assert_eq!(version("c.ptx"), "9.0");
    run(&[
        "compile",
        "-arch",
        "compute_90",
        "--ptx",
        "--ptx-isa",
        "as-linked",
        "-o",
        "raw.ptx",
        "k.cu",
    ]);
    assert!(
        version("raw.ptx").as_str() > "9.0",
        "{}",
        version("raw.ptx")
    );
    run(&["link", "-arch", "sm_90", "--ptx", "-o", "l.ptx", "k.cu"]);
    assert_eq!(version("l.ptx"), "9.0");
    run(&[
        "link",
        "-arch",
        "sm_90",
        "--ptx",
        "--ptx-isa",
        "9.1",
        "-o",
        "l91.ptx",
        "k.cu",
    ]);
    assert_eq!(version("l91.ptx"), "9.1");
    run(&[
        "link",
        "-arch",
        "sm_90,compute_90",
        "-o",
        "k.fatbin",
        "k.cu",
    ]);
    let inspected = run(&["inspect", "k.fatbin"]);
    assert!(
        inspected.contains("(PTX 9.0; JIT from driver 580 (CUDA 13.0) on)"),
        "{inspected}"
    );
}

/// A device header of one of NVIDIA's libraries whose wheel is not
/// installed (`curand_kernel.h`): NVRTC's "cannot open source file" comes
/// with the wheel to install.
#[test]
fn a_missing_nvidia_header_names_its_wheel() {
    if !have_nvrtc() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("rng.cu"),
        "#include <curand_kernel.h>\n__global__ void k(float *y) { y[0] = 1.0f; }\n",
    )
    .unwrap();
    let stderr = exits_with(
        dir.path(),
        &["compile", "-arch", "sm_90", "-o", "rng.cubin", "rng.cu"],
        1,
    );
    assert!(stderr.contains("pip install nvidia-curand"), "{stderr}");
}

/// nvcc's device-link spellings on `link`: `-dlink` (what `link` does),
/// `-lcudadevrt` found in a `-L` folder, and a `-gencode` whose code is
/// `lto_XX`, which names no slot a link makes, refused by name.
#[test]
fn nvcc_device_link_spellings() {
    let (true, Some(devrt)) = (have_nvrtc(), cuda_link_tests::redist("CUDA_LINK_CUDADEVRT")) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("k.cu"),
        "extern \"C\" __global__ void k(float *y) { y[0] = 1.0f; }\n",
    )
    .unwrap();
    let folder = devrt.parent().unwrap().display().to_string();
    let linked = cuda_link()
        .current_dir(dir.path())
        .args([
            "link",
            "-dlink",
            "-arch=sm_90",
            "-lcudadevrt",
            "-L",
            &folder,
        ])
        .args(["-o", "k.cubin", "k.cu"])
        .output()
        .unwrap();
    succeeded(&linked);
    let code = ObjectCode::from_path(dir.path().join("k.cubin")).unwrap();
    assert!(kernels(&code).contains(&"k".to_owned()));
    for (args, said) in [
        (&["-lnothere"][..], "no libnothere.a"),
        (
            &["-gencode", "arch=compute_90,code=lto_90"],
            "--ltoir -arch sm_90",
        ),
    ] {
        let line = [&["link", "-arch=sm_90", "-o", "x.cubin", "k.cu"][..], args].concat();
        let stderr = exits_with(dir.path(), &line, 2);
        assert!(stderr.contains(said), "{args:?}: {stderr}");
    }
}
