//! `cuda-link compile` against nvcc itself (the 13.0 wheel, on the CPU):
//! the same command lines, nvcc's device-step spellings, run through both;
//! exit status, output kind, arches, slots and kernel names compared.
//! Where the two differ by design, the difference is listed here and in
//! the README, and checked to be that difference.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use cuda_link::ObjectCode;
use cuda_link::inspect::{Contents, Payload};

/// What a compile made, as far as the comparison reads it.
#[derive(Debug, PartialEq, Eq)]
enum Made {
    Failed,
    Cubin {
        arch: String,
        relocatable: bool,
        kernels: BTreeSet<String>,
    },
    Ptx {
        target: String,
        kernels: BTreeSet<String>,
    },
    Ltoir {
        arch: String,
    },
    /// Each slot: `(kind, arch, kernels where readable)`.
    Fatbin(BTreeSet<(String, String, Vec<String>)>),
}

fn made(path: &Path, succeeded: bool) -> Made {
    if !succeeded {
        return Made::Failed;
    }
    let code = ObjectCode::from_path(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let info = code.inspect().unwrap();
    let kernels = |list: &[String]| list.iter().cloned().collect::<BTreeSet<_>>();
    match &info.contents {
        Contents::Cubin(cubin) => Made::Cubin {
            arch: cubin.arch.to_string(),
            relocatable: format!("{:?}", cubin.elf_type).contains("Relocatable"),
            kernels: kernels(&cubin.kernels),
        },
        Contents::Ptx(ptx) => Made::Ptx {
            target: ptx.target.join(","),
            kernels: kernels(&ptx.kernels),
        },
        Contents::Ltoir(header) => Made::Ltoir {
            arch: header.arch.to_string(),
        },
        _ => Made::Fatbin(
            info.fatbin_entries()
                .map(|entry| {
                    let mut names = match &entry.payload {
                        Payload::Cubin(cubin) => cubin.kernels.clone(),
                        Payload::Ptx(ptx) => ptx.kernels.clone(),
                        _ => Vec::new(),
                    };
                    names.sort();
                    (entry.kind.name().to_owned(), entry.arch.to_string(), names)
                })
                .collect(),
        ),
    }
}

const KERNELS_CU: &str = "#include \"op.h\"\n\
    #ifdef A\n#if A != 1 || B != 2\n#error -DA=1,B=2 is two macros\n#endif\n#endif\n\
    template <typename T> __global__ void axpy(T *y, const T *x, int n) {\n\
      int i = threadIdx.x; if (i < n) y[i] = SCALE * x[i] + y[i]; }\n\
    template __global__ void axpy<float>(float *, const float *, int);\n\
    extern \"C\" __global__ void fill(float *y) { y[threadIdx.x] = SCALE; }\n";

/// A launcher: host code nvcc compiles and `cuda-link compile` sends to
/// nvcc (by design).
const LAUNCH_CU: &str = "__global__ void k(float *y) { y[0] = 1.0f; }\n\
    extern \"C\" void launch(float *y) { k<<<1, 1>>>(y); }\n";

/// The command lines, each with its output file.
const MATRIX: &[(&str, &str)] = &[
    ("-arch=sm_90 -cubin -Iinc -o out.cubin k.cu", "out.cubin"),
    (
        "--gpu-architecture=sm_90 -cubin -Iinc -o out.cubin k.cu",
        "out.cubin",
    ),
    ("-arch sm_80 -ptx -Iinc -o out.ptx k.cu", "out.ptx"),
    ("-arch=compute_90 -ptx -Iinc -o out.ptx k.cu", "out.ptx"),
    (
        "-arch=compute_90 -fatbin -Iinc -o out.fatbin k.cu",
        "out.fatbin",
    ),
    (
        "-gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=[sm_90,compute_90] \
         -fatbin -Iinc -o out.fatbin k.cu",
        "out.fatbin",
    ),
    (
        "--generate-code arch=compute_90,code=sm_90 -cubin -Iinc -o out.cubin k.cu",
        "out.cubin",
    ),
    (
        "-gencode arch=compute_90,code=lto_90 -fatbin -Iinc -o out.fatbin k.cu",
        "out.fatbin",
    ),
    (
        "-dc -arch=sm_90 -cubin -Iinc -o out.cubin k.cu",
        "out.cubin",
    ),
    (
        "-rdc=true -arch=sm_90 -cubin -Iinc -o out.cubin k.cu",
        "out.cubin",
    ),
    (
        "-arch=sm_90 -cubin -I inc -DUNUSED=1 -lineinfo -o out.cubin k.cu",
        "out.cubin",
    ),
    (
        "-arch=sm_90 -cubin -Iinc -O3 -Xcompiler -fPIC --expt-relaxed-constexpr -o out.cubin k.cu",
        "out.cubin",
    ),
    (
        "-arch=sm_90 -cubin -Iinc -maxrregcount=32 -o out.cubin k.cu",
        "out.cubin",
    ),
    (
        "-arch=sm_90 -cubin -Iinc -use_fast_math -o out.cubin k.cu",
        "out.cubin",
    ),
    (
        "-arch=sm_90 -cubin -Iinc -MD -MF out.d -o out.cubin k.cu",
        "out.cubin",
    ),
    ("-arch=sm_9 -cubin -Iinc -o out.cubin k.cu", "out.cubin"),
    (
        "-gencode arch=sm_90,code=sm_90 -cubin -Iinc -o out.cubin k.cu",
        "out.cubin",
    ),
    (
        "-gencode arch=compute_90,code=sm_80 -fatbin -Iinc -o out.fatbin k.cu",
        "out.fatbin",
    ),
    ("-arch=sm_90 -cubin -o out.cubin k.cu", "out.cubin"),
    ("-arch=sm_90 -cubin -o out.cubin launch.cu", "out.cubin"),
];

/// The lines where the two differ by design, and how: nvcc compiles the
/// device half of a file with host code; `cuda-link compile` (NVRTC)
/// refuses it, naming the launcher, for nvcc or cuda-build to compile.
const BY_DESIGN: &[&str] = &["-arch=sm_90 -cubin -o out.cubin launch.cu"];

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("inc")).unwrap();
    std::fs::create_dir(dir.path().join("empty")).unwrap();
    std::fs::write(dir.path().join("inc/op.h"), "#define SCALE 3\n").unwrap();
    std::fs::write(dir.path().join("k.cu"), KERNELS_CU).unwrap();
    std::fs::write(dir.path().join("launch.cu"), LAUNCH_CU).unwrap();
    dir
}

fn run(program: &Path, first: &[&str], line: &str, dir: &Path, nvrtc: &Path) -> bool {
    Command::new(program)
        .current_dir(dir)
        .args(first)
        .args(line.split_whitespace())
        .env("CUDA_LINK_NVRTC_PATH", nvrtc)
        .output()
        .unwrap()
        .status
        .success()
}

#[test]
fn compile_agrees_with_nvcc_on_its_command_lines() {
    let (Some(nvcc), Some(nvrtc)) = (
        cuda_link_tests::redist("CUDA_LINK_NVCC"),
        cuda_link_tests::redist("CUDA_LINK_NVRTC13_PATH"),
    ) else {
        return;
    };
    let ours = PathBuf::from(env!("CARGO_BIN_EXE_cuda-link"));
    let mut agreed = 0;
    let mut built = 0;
    let mut differed = Vec::new();
    for (line, output) in MATRIX {
        let (theirs_dir, ours_dir) = (project(), project());
        let nvcc_ok = run(&nvcc, &[], line, theirs_dir.path(), &nvrtc);
        let ours_ok = run(&ours, &["compile"], line, ours_dir.path(), &nvrtc);
        let theirs = made(&theirs_dir.path().join(output), nvcc_ok);
        let mine = made(&ours_dir.path().join(output), ours_ok);
        if BY_DESIGN.contains(line) {
            assert!(
                matches!((&theirs, &mine), (Made::Cubin { .. }, Made::Failed)),
                "{line}: the listed difference changed: nvcc {theirs:?}, ours {mine:?}"
            );
            continue;
        }
        if line.contains("-MD") && nvcc_ok && ours_ok {
            // Both depfiles name the header.
            for dir in [&theirs_dir, &ours_dir] {
                let rule = std::fs::read_to_string(dir.path().join("out.d")).unwrap();
                assert!(rule.contains("inc/op.h"), "{line}: {rule}");
            }
        }
        built += usize::from(theirs != Made::Failed);
        match theirs == mine {
            true => agreed += 1,
            false => differed.push(format!("{line}\n  nvcc: {theirs:?}\n  ours: {mine:?}")),
        }
    }
    let compared = MATRIX.len() - BY_DESIGN.len();
    eprintln!(
        "cuda-link compile agrees with nvcc 13.0 on {agreed} of {compared} command lines \
         ({built} of them build)"
    );
    assert!(differed.is_empty(), "{}", differed.join("\n"));
    // The refusals are a few lines of the matrix, not all of it.
    assert_eq!(built, compared - 4, "lines that build");
}
