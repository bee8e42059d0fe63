//! `Build` on real files with the pinned NVRTC and nvJitLink: what it
//! writes, what it recompiles after an edit, and how it fails.

// Tests read their own switches; the ban is for the library's reads.
#![allow(clippy::disallowed_methods)]

use std::path::Path;

use cuda_build::{Build, BuildError};
use cuda_link::ObjectCode;
use cuda_link::inspect::EntryKind;

const COMMON_H: &str = "#pragma once\n#include <stdint.h>\n#define SCALE 2.0f\n";
const ADD_CU: &str = "#include \"common.h\"\n#include <cmath>\n\
    extern \"C\" __global__ void add(float *y, const float *x, int64_t n) {\n\
      int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;\n\
      if (i < n) y[i] = fabsf(x[i]) * SCALE + y[i];\n}\n";
const SCALE_H: &str = "#pragma once\n__device__ inline float twice(float v) { return 2 * v; }\n";
const SCALE_CU: &str = "#include \"scale.h\"\n\
    template <typename T> __global__ void scale(T *y, int n) {\n\
      int i = threadIdx.x; if (i < n) y[i] = twice(y[i]);\n}\n\
    template __global__ void scale<float>(float *, int);\n";

fn have_libraries() -> bool {
    cuda_link_tests::redist("CUDA_LINK_NVRTC_PATH").is_some()
        && cuda_link_tests::redist("CUDA_LINK_NVJITLINK_PATH").is_some()
}

fn project(dir: &Path) -> Build {
    let kernels = dir.join("kernels");
    std::fs::create_dir_all(kernels.join("include")).unwrap();
    std::fs::write(kernels.join("common.h"), COMMON_H).unwrap();
    std::fs::write(kernels.join("include/scale.h"), SCALE_H).unwrap();
    std::fs::write(kernels.join("add.cu"), ADD_CU).unwrap();
    std::fs::write(kernels.join("scale.cu"), SCALE_CU).unwrap();
    // Written a minute ago: a build leaves no stamp (for its no-op rebuild)
    // while an input is too recent to tell from an edit during the build.
    let past = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    for file in ["common.h", "include/scale.h", "add.cu", "scale.cu"] {
        let file = std::fs::File::options()
            .append(true)
            .open(kernels.join(file))
            .unwrap();
        file.set_modified(past).unwrap();
    }
    Build::new()
        .files([kernels.join("add.cu"), kernels.join("scale.cu")])
        .include(kernels.join("include"))
        .archs(["sm_80", "9.0"])
        .out_dir(dir.join("out"))
        .cache_dir(dir.join("cache"))
        .cargo_metadata(false)
        .clone()
}

/// One fatbin with a cubin per arch and PTX for the lowest, holding both
/// files' kernels; the module names them; the rerun list holds each file
/// and its headers.
#[test]
fn builds_one_fatbin_for_every_arch() {
    if !have_libraries() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let built = project(dir.path()).compile("kernels").unwrap();
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
    let mut kernels = built.kernels.clone();
    kernels.sort();
    assert_eq!(kernels, ["_Z5scaleIfEvPT_i", "add"]);
    let module = std::fs::read_to_string(&built.module).unwrap();
    assert!(module.contains("pub mod kernels {"), "{module}");
    assert!(
        module.contains("pub const ADD: &str = \"add\";"),
        "{module}"
    );
    assert!(
        module.contains("pub const SCALE_FLOAT: &str = \"_Z5scaleIfEvPT_i\";"),
        "{module}"
    );
    assert_eq!((built.compiled, built.cached), (4, 0));
    let kernels_dir = dir.path().join("kernels");
    for needed in ["add.cu", "scale.cu", "common.h", "include/scale.h"] {
        assert!(
            built.dependencies.iter().any(|p| p.ends_with(needed)),
            "{needed} in {:?}",
            built.dependencies
        );
    }
    assert!(
        built
            .dependencies
            .iter()
            .all(|p| p.starts_with(&kernels_dir))
    );
}

/// Editing a header recompiles only the files that include it, for each
/// arch; a rebuild with nothing changed compiles nothing.
#[test]
fn an_edited_header_recompiles_only_its_files() {
    if !have_libraries() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let build = project(dir.path());
    let first = build.compile("kernels").unwrap();
    assert_eq!((first.compiled, first.cached), (4, 0));
    let again = build.compile("kernels").unwrap();
    assert!(again.unchanged, "nothing changed: the last build stands");
    assert_eq!(again.kernels, first.kernels);
    std::fs::write(
        dir.path().join("kernels/include/scale.h"),
        SCALE_H.replace("2 * v", "3 * v"),
    )
    .unwrap();
    let edited = build.compile("kernels").unwrap();
    assert!(!edited.unchanged);
    assert_eq!(
        (edited.compiled, edited.cached),
        (2, 2),
        "scale.cu for two arches"
    );
    // Another output folder, the same files: every compile is a cache hit.
    let elsewhere = build
        .clone()
        .out_dir(dir.path().join("other"))
        .compile("kernels")
        .unwrap();
    assert_eq!((elsewhere.compiled, elsewhere.cached), (0, 4));
}

/// Per file: a module and a fatbin each.
#[test]
fn per_file_builds_a_module_per_file() {
    if !have_libraries() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let built = project(dir.path())
        .per_file(true)
        .ptx(None)
        .compile("kernels")
        .unwrap();
    assert_eq!(built.fatbins.len(), 2);
    let module = std::fs::read_to_string(&built.module).unwrap();
    assert!(
        module.contains("pub mod add {") && module.contains("pub mod scale {"),
        "{module}"
    );
    let scale = ObjectCode::from_path(&built.fatbins[1]).unwrap();
    assert_eq!(scale.inspect().unwrap().kernels(), ["_Z5scaleIfEvPT_i"]);
}

/// PTX alone, as text (candle's loader takes nothing else): a `.ptx` per
/// file, the same PTX the fatbin holds, at the ISA every driver of the
/// release takes, and `PTX` in each module; asking for text without a PTX
/// slot is a typed error.
#[test]
fn ptx_text_for_loaders_that_take_ptx() {
    if !have_libraries() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let built = project(dir.path())
        .per_file(true)
        .archs(Vec::<&str>::new())
        .ptx(Some("compute_90"))
        .write_ptx(true)
        .compile("kernels")
        .unwrap();
    assert_eq!((built.archs.len(), built.ptx_files.len()), (0, 2));
    let add = std::fs::read_to_string(&built.ptx_files[0]).unwrap();
    assert!(add.ends_with('\n') && !add.contains('\0'), "{add}");
    assert!(
        add.contains(".target sm_90") && add.contains(".entry add("),
        "{add}"
    );
    // NVRTC's own PTX, at its ISA or lowered to the release's first.
    let major = nvjitlink_sys::NvJitLink::global().unwrap().version().0;
    let first = cuda_link::PtxIsa::first_of_cuda(major).unwrap();
    let stated: cuda_link::PtxIsa = add
        .lines()
        .find_map(|line| line.strip_prefix(".version "))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(stated <= first, "{add}");
    let fatbin = ObjectCode::from_path(&built.fatbins[0]).unwrap();
    let info = fatbin.inspect().unwrap();
    let entries: Vec<_> = info.fatbin_entries().collect();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].kind, EntryKind::Ptx);
    assert_eq!(entries[0].version, stated.to_string());
    let module = std::fs::read_to_string(&built.module).unwrap();
    assert!(
        module.contains("pub const PTX: &str = include_str!(\"kernels/add.ptx\");"),
        "{module}"
    );

    let no_slot = project(dir.path())
        .write_ptx(true)
        .ptx(None)
        .compile("kernels");
    assert!(
        matches!(no_slot, Err(BuildError::NoPtxSlot(_))),
        "{no_slot:?}"
    );
    let nothing = project(dir.path())
        .archs(Vec::<&str>::new())
        .ptx(None)
        .compile("kernels");
    assert!(
        matches!(nothing, Err(BuildError::NoPtxSlot(_))),
        "{nothing:?}"
    );
}

/// `host.cu`, a kernel and a host function (line 2) launching it, and
/// a build of it for sm_90.
fn host_code_build(dir: &Path) -> (std::path::PathBuf, Build) {
    let host = dir.join("host.cu");
    std::fs::write(
        &host,
        "__global__ void k(float *y) { y[0] = 1; }\nvoid run(float *y) {\n  k<<<1, 1>>>(y);\n}\n",
    )
    .unwrap();
    let build = Build::new()
        .file(&host)
        .archs(["sm_90"])
        .out_dir(dir.join("out"))
        .cache_dir(dir.join("cache"))
        .cargo_metadata(false)
        .clone();
    (host, build)
}

/// Host code is a typed error naming the construct and its line; a
/// device error is a compile error naming the file and arch.
#[test]
fn host_code_and_bad_code_say_where() {
    if !have_libraries() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (host, mut build) = host_code_build(dir.path());
    // nvcc would take it (tests/host_code.rs): NVRTC is made to.
    build.route(&host, cuda_build::Route::Nvrtc);
    match build.compile("kernels") {
        Err(BuildError::HostCode {
            line, construct, ..
        }) => {
            // NVRTC reports the host function on its first line.
            assert_eq!(line, 2);
            assert!(
                construct.contains("host function") && construct.contains("run"),
                "{construct}"
            );
        }
        other => panic!("{other:?}"),
    }
    std::fs::write(&host, "__global__ void k() { undeclared(); }\n").unwrap();
    match build.compile("kernels") {
        Err(error @ BuildError::Compile { .. }) => {
            // The one line of `Display` names the file, the chain its log.
            assert!(
                error
                    .to_string()
                    .ends_with("host.cu for sm_90 and compute_90")
            );
            let text = format!("{error:?}");
            assert!(
                text.contains("host.cu for sm_90 and compute_90: "),
                "{text}"
            );
            assert_eq!(
                text.matches("host.cu does not compile").count(),
                1,
                "{text}"
            );
            assert!(text.contains("undeclared"), "{text}");
        }
        other => panic!("{other:?}"),
    }
    for bad in ["sm_9x", "sm_86a", "sm_90f"] {
        assert!(
            matches!(
                build.clone().archs([bad]).compile("kernels"),
                Err(BuildError::BadArch { .. })
            ),
            "{bad}"
        );
    }
    assert!(matches!(
        build.clone().archs(["sm_12"]).compile("kernels"),
        Err(BuildError::UnsupportedArch { sm: 12, .. })
    ));
    assert!(matches!(
        build.compile("my kernels"),
        Err(BuildError::BadName(_))
    ));
}

/// A file alone in its fatbin goes straight from NVRTC to each slot, with
/// no link after it: the build needs no nvJitLink (where the PTX keeps
/// the ISA NVRTC wrote: lowering it is checked by ptxas, in nvJitLink),
/// the cubin and the PTX of one arch come from one compile, and the PTX
/// slot is NVRTC's text.
#[test]
fn a_file_alone_needs_no_link() {
    if !have_libraries() {
        return;
    }
    in_child(
        "no_link_child",
        &[(
            "CUDA_LINK_NVJITLINK_PATH",
            "/nonexistent/libnvJitLink.so.13",
        )],
    );
}

#[test]
fn no_link_child() {
    if !is_child() {
        return;
    }
    assert!(nvjitlink_sys::NvJitLink::global().is_err());
    let dir = tempfile::tempdir().unwrap();
    let built = project(dir.path())
        .per_file(true)
        .ptx(Some("compute_80"))
        .ptx_isa(None)
        .write_ptx(true)
        .compile("kernels")
        .unwrap();
    // Two files, each: sm_80 with the compute_80 PTX, then sm_90.
    assert_eq!((built.compiled, built.cached), (4, 0));
    for (fatbin, kernel) in built.fatbins.iter().zip(["add", "_Z5scaleIfEvPT_i"]) {
        let fatbin = ObjectCode::from_path(fatbin).unwrap();
        let info = fatbin.inspect().unwrap();
        let mut slots: Vec<_> = info
            .fatbin_entries()
            .map(|entry| format!("{:?} {}", entry.kind, entry.arch))
            .collect();
        slots.sort();
        assert_eq!(slots, ["Cubin sm_80", "Cubin sm_90", "Ptx sm_80"]);
        assert_eq!(info.kernels(), [kernel]);
    }
    let add = std::fs::read_to_string(&built.ptx_files[0]).unwrap();
    assert!(
        add.contains(".target sm_80") && add.contains(".entry add("),
        "{add}"
    );
    // Files linked together need nvJitLink, and say so; so does a file
    // alone compiled relocatable (NVRTC's cubin would be unlinked).
    let linked = project(dir.path()).compile("linked");
    assert!(matches!(linked, Err(BuildError::Link { .. })), "{linked:?}");
    let relocatable = project(dir.path())
        .per_file(true)
        .flag("-rdc=true")
        .compile("relocatable");
    assert!(
        matches!(relocatable, Err(BuildError::Link { .. })),
        "{relocatable:?}"
    );
}

/// Runs this test binary again for one test, with `env` set: the tests
/// that need a variable of their own, without `set_var` in a threaded
/// process.
fn in_child(test: &str, env: &[(&str, &str)]) {
    let run = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env("CUDA_BUILD_TEST_CHILD", "1")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{test}: {text}{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(text.contains("1 passed"), "{test} did not run: {text}");
}

fn is_child() -> bool {
    std::env::var_os("CUDA_BUILD_TEST_CHILD").is_some()
}

/// Under docs.rs no library is needed: the module has an empty `FATBIN`.
#[test]
fn docs_rs_builds_need_no_cuda() {
    in_child(
        "docs_rs_child",
        &[
            ("DOCS_RS", "1"),
            ("CUDA_LINK_NVRTC_PATH", "/nonexistent/libnvrtc.so"),
        ],
    );
}

#[test]
fn docs_rs_child() {
    if !is_child() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let built = project(dir.path()).compile("kernels").unwrap();
    assert!(built.fatbins.is_empty());
    // The extern "C" kernel is found by text; scale<float> needs a compile.
    assert_eq!(built.kernels, ["add"]);
    let module = std::fs::read_to_string(&built.module).unwrap();
    assert!(
        module.contains("pub static FATBIN: &[u8] = &[];"),
        "{module}"
    );
    assert!(
        module.contains("pub const ADD: &str = \"add\";"),
        "{module}"
    );
    let per_file = project(dir.path())
        .per_file(true)
        .write_ptx(true)
        .compile("kernels")
        .unwrap();
    let module = std::fs::read_to_string(&per_file.module).unwrap();
    assert!(
        module.contains("pub mod add {") && module.contains("pub mod scale {"),
        "{module}"
    );
    // `PTX` is there for the crate's code, empty.
    assert!(module.contains("pub const PTX: &str = \"\";"), "{module}");
}

/// With the nvcc fallback, a device-only file NVRTC cannot compile (it
/// includes a host-only header) is compiled by nvcc (`NVCC`) to LTO-IR,
/// and its kernel is in the fatbin.
#[test]
fn nvcc_compiles_host_code_when_asked() {
    if !have_libraries() {
        return;
    }
    let Some(nvcc) = cuda_link_tests::redist("CUDA_LINK_NVCC") else {
        return;
    };
    in_child("nvcc_child", &[("NVCC", nvcc.to_str().unwrap())]);
}

#[test]
fn nvcc_child() {
    if !is_child() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (host, mut build) = host_code_build(dir.path());
    std::fs::write(
        &host,
        "#include <vector>\n__global__ void k(float *y) { y[0] = 1; }\n",
    )
    .unwrap();
    let built = build.nvcc_fallback(true).compile("kernels").unwrap();
    assert_eq!(built.kernels, ["_Z1kPf"]);
    assert_eq!(built.archive, None);
}

/// Without archs or `CUDA_COMPUTE_CAP`: every arch NVRTC compiles for that
/// nvJitLink links, a cubin each.
#[test]
fn by_default_every_linkable_arch() {
    if !have_libraries() || std::env::var_os("CUDA_COMPUTE_CAP").is_some() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("k.cu");
    std::fs::write(
        &file,
        "extern \"C\" __global__ void k(int *p) { *p = 1; }\n",
    )
    .unwrap();
    let built = Build::new()
        .file(&file)
        .out_dir(dir.path().join("out"))
        .cache_dir(dir.path().join("cache"))
        .cargo_metadata(false)
        .compile("kernels")
        .unwrap();
    let nvrtc = cuda_compile::Compiler::new()
        .unwrap()
        .supported_archs()
        .unwrap();
    let nvjitlink = nvjitlink_sys::NvJitLink::global().unwrap();
    let expected: Vec<_> = nvrtc
        .into_iter()
        .filter(|arch| nvjitlink.links_arch(arch.sm, true))
        .collect();
    if nvjitlink.version().0 >= 13 {
        let dropped = |arch: &cuda_link::Arch| arch.sm < 75 || arch.sm == 101;
        assert!(!expected.iter().any(dropped), "{expected:?}");
    }
    assert_eq!(built.archs, expected);
    let fatbin = ObjectCode::from_path(&built.fatbins[0]).unwrap();
    let cubins = fatbin
        .inspect()
        .unwrap()
        .fatbin_entries()
        .filter(|e| e.kind == EntryKind::Cubin)
        .count();
    assert_eq!(cubins, expected.len());
}

/// The PTX slot states the first PTX ISA of the loaded nvJitLink's
/// release (13.x: 9.0), which every driver of that release JIT-compiles;
/// `ptx_isa(None)` keeps nvJitLink's own; an ISA too old for the arch is
/// a link error (sm_80 needs 7.0), and one that is not major.minor is
/// refused by name.
#[test]
fn ptx_states_the_isa_every_driver_of_the_release_takes() {
    if !have_libraries() {
        return;
    }
    let ptx_version = |mut build: Build, dir: &Path| {
        let built = build.out_dir(dir).compile("kernels").unwrap();
        let fatbin = ObjectCode::from_path(&built.fatbins[0]).unwrap();
        let info = fatbin.inspect().unwrap();
        let ptx = info.fatbin_entries().find(|e| e.kind == EntryKind::Ptx);
        ptx.expect("a PTX entry").version.clone()
    };
    let dir = tempfile::tempdir().unwrap();
    let major = nvjitlink_sys::NvJitLink::global().unwrap().version().0;
    let first = cuda_link::PtxIsa::first_of_cuda(major).unwrap().to_string();
    assert_eq!(
        ptx_version(project(dir.path()), &dir.path().join("a")),
        first
    );
    let native = ptx_version(
        project(dir.path()).ptx_isa(None).clone(),
        &dir.path().join("b"),
    );
    assert_ne!(native, first, "nvJitLink {major} writes its own ISA");
    let too_low = project(dir.path())
        .ptx_isa(Some("6.0"))
        .out_dir(dir.path().join("c"))
        .compile("kernels")
        .unwrap_err();
    assert!(
        matches!(&too_low, BuildError::Link { error, .. }
            if matches!(&**error, cuda_link::LinkError::ForTarget { target, source }
                if target.starts_with("compute_")
                    && matches!(**source, cuda_link::LinkError::PtxIsaTooLow { .. }))),
        "{too_low}"
    );
    let bad = project(dir.path())
        .ptx_isa(Some("nine"))
        .out_dir(dir.path().join("d"))
        .compile("kernels")
        .unwrap_err();
    assert!(
        matches!(
            bad,
            BuildError::BadArch {
                from: "Build::ptx_isa",
                ..
            }
        ),
        "{bad}"
    );
}

/// An include folder too big for the scan to list (a project root with
/// its `target/`): the no-op rebuild still sees a new header that shadows
/// the one a file included, as the stamp watches every place the header
/// was looked for.
#[test]
fn a_shadowing_header_in_a_big_folder_is_seen() {
    if !have_libraries() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let kernels = dir.path().join("kernels");
    let build = project(dir.path());
    let filler = kernels.join("include/filler");
    std::fs::create_dir_all(&filler).unwrap();
    for n in 0..4200 {
        std::fs::write(filler.join(format!("f{n}.txt")), "").unwrap();
    }
    let first = build.compile("kernels").unwrap();
    assert!(!first.unchanged);
    let again = build.compile("kernels").unwrap();
    assert!(again.unchanged, "nothing changed");
    // scale.cu's quoted "scale.h" is looked for in its own folder before
    // the include path.
    std::fs::write(kernels.join("scale.h"), SCALE_H.replace("2 * v", "3 * v")).unwrap();
    let shadowed = build.compile("kernels").unwrap();
    assert!(!shadowed.unchanged, "the shadowing header was not seen");
    assert_eq!((shadowed.compiled, shadowed.cached), (2, 2));
}
