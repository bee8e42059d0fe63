//! A build spread over child processes (NVRTC compiles one file at a time
//! per process). A build forks only from a process with one thread, which
//! libtest's harness is not: this test has its own `main`.

use std::path::Path;

use cuda_build::{Build, BuildError};
use cuda_link::ObjectCode;
use cuda_link::inspect::{EntryKind, Payload};

const ADD_CU: &str = "#include <cuda_fp16.h>\n\
    extern \"C\" __global__ void add(float *y, const __half *x, int n) {\n\
      int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
      if (i < n) y[i] += __half2float(x[i]);\n}\n";
const SCALE_CU: &str = "#include <cuda_fp16.h>\n\
    template <typename T> __global__ void scale(T *y, int n) {\n\
      int i = threadIdx.x; if (i < n) y[i] = y[i] * 2;\n}\n\
    template __global__ void scale<float>(float *, int);\n";
/// Compiles for sm_80 and stops for sm_90: the second process's share.
const SM90_FAILS_CU: &str = "#if __CUDA_ARCH__ >= 900\n#error refused for sm_90\n#endif\n\
    extern \"C\" __global__ void only_old() {}\n";

fn main() {
    if cuda_link_tests::redist("CUDA_LINK_NVRTC_PATH").is_none()
        || cuda_link_tests::redist("CUDA_LINK_NVJITLINK_PATH").is_none()
    {
        return;
    }
    // SAFETY: `main`, before this process starts any thread; no other
    // code reads the environment concurrently. Two jobs, from NUM_JOBS
    // rather than whatever jobserver ran this test.
    unsafe {
        for var in ["CARGO_MAKEFLAGS", "MAKEFLAGS", "MFLAGS"] {
            std::env::remove_var(var);
        }
        std::env::set_var("NUM_JOBS", "2");
    }
    let dir = tempfile::tempdir().unwrap();
    two_processes_build_what_one_does(dir.path());
    a_file_failing_in_a_child_fails_the_build(dir.path());
    println!("test result: ok. 2 passed (processes)");
}

fn build(dir: &Path, out: &str, files: &[(&str, &str)]) -> Build {
    let kernels = dir.join("kernels");
    std::fs::create_dir_all(&kernels).unwrap();
    let mut paths = Vec::new();
    for (name, text) in files {
        std::fs::write(kernels.join(name), text).unwrap();
        paths.push(kernels.join(name));
    }
    Build::new()
        .files(paths)
        .archs(["sm_80", "sm_90"])
        .out_dir(dir.join(out))
        .cache_dir(dir.join("cache"))
        .cargo_metadata(false)
        .clone()
}

/// Two processes, an arch each: every compile counted once as compiled,
/// the fatbin holds both files' kernels for each arch, and the child's
/// precompiled headers are gone.
fn two_processes_build_what_one_does(dir: &Path) {
    let files = [("add.cu", ADD_CU), ("scale.cu", SCALE_CU)];
    let built = build(dir, "out", &files).compile("kernels").unwrap();
    assert_eq!(
        (built.processes, built.compiled, built.cached),
        (2, 4, 0),
        "processes, compiled, cached"
    );
    let mut kernels = built.kernels.clone();
    kernels.sort();
    assert_eq!(kernels, ["_Z5scaleIfEvPT_i", "add"]);
    let fatbin = ObjectCode::from_path(&built.fatbins[0]).unwrap();
    let info = fatbin.inspect().unwrap();
    let slots: Vec<(EntryKind, String)> = info
        .fatbin_entries()
        .map(|e| (e.kind, e.arch.to_string()))
        .collect();
    assert_eq!(
        slots,
        [
            (EntryKind::Cubin, "sm_80".into()),
            (EntryKind::Cubin, "sm_90".into()),
            (EntryKind::Ptx, "sm_80".into()),
        ]
    );
    for entry in info.fatbin_entries() {
        let kernels = match &entry.payload {
            Payload::Cubin(cubin) => cubin.kernels.len(),
            Payload::Ptx(ptx) => ptx.kernels.len(),
            other => panic!("{other:?}"),
        };
        assert_eq!(kernels, 2, "{} {}", entry.arch, entry.index);
    }
    let pch = dir.join("out/cuda-build/kernels.pch");
    let own = std::process::id().to_string();
    for entry in std::fs::read_dir(&pch).unwrap() {
        let name = entry.unwrap().file_name();
        assert_eq!(name.to_string_lossy(), own, "a child's PCH folder was left");
    }

    // Another target folder, the same cache: every compile a hit.
    let again = build(dir, "out2", &files).compile("kernels").unwrap();
    assert_eq!((again.compiled, again.cached), (0, 4));
}

/// The child's compile fails, stores nothing, and this process's own
/// compile gives the typed error, naming the arch.
fn a_file_failing_in_a_child_fails_the_build(dir: &Path) {
    let files = [("add.cu", ADD_CU), ("old.cu", SM90_FAILS_CU)];
    match build(dir, "out3", &files).compile("kernels") {
        Err(error @ BuildError::Compile { .. }) => {
            let text = format!("{error:?}");
            assert!(text.contains("old.cu for sm_90"), "{text}");
            assert!(text.contains("refused for sm_90"), "{text}");
        }
        other => panic!("{other:?}"),
    }
}
