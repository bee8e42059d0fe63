//! The compile cache: a hit for the same compile, and a miss for every
//! change of what NVRTC would read, header files included.

use std::sync::Arc;

use cuda_compile::{Compiler, Program, ProgramOptions, Target};
use cuda_link::{Arch, LinkCache};

use crate::compile::{compilers, sm90};

/// A project on disk: a kernel, a local header including a nested one, an
/// include folder, and an earlier include folder, empty at first.
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
        project.write("src/nested.h", "#define A 1\n");
        project.write("inc/inc.h", "#define B 2\n");
        std::fs::create_dir_all(project.root.path().join("first")).unwrap();
        project
    }

    fn write(&self, file: &str, text: &str) {
        let path = self.root.path().join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn path(&self, file: &str) -> String {
        self.root.path().join(file).display().to_string()
    }

    fn program(&self) -> Program {
        Program::from_path(self.path("src/kernel.cu"))
            .unwrap()
            .header("mem.h", "#define C 3\n")
            .name_expression("scaled<int>")
    }

    fn options(&self) -> ProgramOptions {
        sm90().include_path([self.path("first"), self.path("inc")])
    }
}

const KERNEL: &str = r#"#include "local.h"
#include <inc.h>
#include <mem.h>
template <typename T> __global__ void scaled(T *out) { *out = (T)(A + B + C); }
"#;

/// Compiles and says whether it was a hit, checking that the name
/// expression survived either way.
fn compile(compiler: &Compiler, program: &Program, options: &ProgramOptions) -> bool {
    let compiled = compiler
        .compile(program, Target::Cubin, options)
        .unwrap_or_else(|e| panic!("{e:?}"));
    let lowered = compiled
        .code
        .lowered_name("scaled<int>")
        .expect("lowered name kept");
    assert!(lowered.starts_with("_Z6scaledIiEvPT_"), "{lowered}");
    assert!(
        compiled
            .code
            .inspect()
            .unwrap()
            .kernels()
            .contains(&lowered),
        "the lowered name is the cubin's kernel"
    );
    compiled.from_cache
}

/// Every change of what the compile reads misses; the unchanged compile
/// hits. Each row of the matrix: the change, then a compile (must miss),
/// then the same compile (must hit). Zero stale hits.
#[test]
fn the_cache_is_never_stale() {
    let cache_dir = tempfile::tempdir().unwrap();
    for (major, compiler) in compilers() {
        let cache = Arc::new(LinkCache::new(cache_dir.path()));
        let compiler = compiler.with_cache(Arc::clone(&cache));
        let project = Project::new();
        let base = project.options();
        assert!(
            !compile(&compiler, &project.program(), &base),
            "NVRTC {major}: cold"
        );
        assert!(
            compile(&compiler, &project.program(), &base),
            "NVRTC {major}: warm"
        );

        type Change<'a> = Box<dyn Fn(&Project) -> (Program, ProgramOptions) + 'a>;
        let same = |p: &Project| (p.program(), p.options());
        let matrix: Vec<(&str, Change)> = vec![
            (
                "source edited",
                Box::new(|p: &Project| {
                    p.write("src/kernel.cu", &KERNEL.replace("A + B", "A * B"));
                    same(p)
                }),
            ),
            (
                "option added",
                Box::new(|p: &Project| (p.program(), p.options().define_macro(["UNUSED=1"]))),
            ),
            (
                "raw option added",
                Box::new(|p: &Project| (p.program(), p.options().extra_options(["--dopt=on"]))),
            ),
            (
                "options reordered",
                Box::new(|p: &Project| {
                    let reordered = sm90().include_path([p.path("inc"), p.path("first")]);
                    (p.program(), reordered.define_macro(["UNUSED=1"]))
                }),
            ),
            (
                "nested header edited",
                Box::new(|p: &Project| {
                    p.write("src/nested.h", "#define A 10\n");
                    same(p)
                }),
            ),
            (
                "include-path header edited",
                Box::new(|p: &Project| {
                    p.write("inc/inc.h", "#define B 20\n");
                    same(p)
                }),
            ),
            (
                "header shadowed earlier on the path",
                Box::new(|p: &Project| {
                    p.write("first/inc.h", "#define B 200\n");
                    same(p)
                }),
            ),
            (
                "in-memory header changed",
                Box::new(|p: &Project| {
                    (p.program().header("mem.h", "#define C 30\n"), p.options())
                }),
            ),
            (
                "name expression added",
                Box::new(|p: &Project| (p.program().name_expression("scaled<float>"), p.options())),
            ),
            (
                "arch changed",
                Box::new(|p: &Project| (p.program(), p.options().arch(Arch::sm(80)))),
            ),
            (
                "a missing header appears",
                Box::new(|p: &Project| {
                    p.write(
                        "src/kernel.cu",
                        &format!("#if 0\n#include \"later.h\"\n#endif\n{KERNEL}"),
                    );
                    let first = same(p);
                    assert!(
                        !compile(&compiler, &first.0, &first.1),
                        "with later.h missing"
                    );
                    p.write("src/later.h", "#define LATER 1\n");
                    same(p)
                }),
            ),
        ];
        // A header whose `#include` follows a comment on its line, or the
        // end of a multi-line comment: a directive all the same.
        let compiler_ref = &compiler;
        let after_comment = |spelling: &'static str, header: &'static str| -> Change {
            Box::new(move |p: &Project| {
                p.write(header, "#define D 1\n");
                let include = format!("{spelling}#include \"{}\"\n", &header[4..]);
                p.write("src/kernel.cu", &format!("{include}{KERNEL}"));
                let first = same(p);
                compile(compiler_ref, &first.0, &first.1);
                p.write(header, "#define D 2\n");
                same(p)
            })
        };
        let mut matrix = matrix;
        matrix.push((
            "header after a comment edited",
            after_comment("/* c */ ", "src/commented.h"),
        ));
        matrix.push((
            "header after a multi-line comment edited",
            after_comment("/* a\n b */ ", "src/multiline.h"),
        ));
        let mut stale = Vec::new();
        for (change, apply) in &matrix {
            let (program, options) = apply(&project);
            if compile(&compiler, &program, &options) {
                stale.push(*change);
            }
            assert!(
                compile(&compiler, &program, &options),
                "NVRTC {major}, {change}: the repeat must hit"
            );
        }
        assert!(
            stale.is_empty(),
            "NVRTC {major}: stale hits after {stale:?}"
        );
        eprintln!(
            "NVRTC {major}: {} changes, 0 stale hits; {:?}",
            matrix.len(),
            cache.stats()
        );
    }
}

/// A compile the scan cannot follow, or that writes files, is compiled
/// every time.
#[test]
fn unfollowable_compiles_are_not_cached() {
    let cache_dir = tempfile::tempdir().unwrap();
    for (major, compiler) in compilers() {
        let compiler = compiler.with_cache(Arc::new(LinkCache::new(cache_dir.path())));
        let source = "#define HEADER <mem.h>\n#include HEADER\n__global__ void k() {}\n";
        let program = Program::new(source, "macro.cu").header("mem.h", "");
        for _ in 0..2 {
            let compiled = compiler.compile(&program, Target::Ptx, &sm90()).unwrap();
            assert!(!compiled.from_cache, "NVRTC {major}: #include MACRO");
        }
        let plain = Program::new("__global__ void k() {}\n", "plain.cu");
        let timed = sm90().time("-");
        for _ in 0..2 {
            let compiled = compiler.compile(&plain, Target::Ptx, &timed).unwrap();
            assert!(!compiled.from_cache, "NVRTC {major}: --time");
        }
    }
}

/// A header NVIDIA's own headers include, shadowed by a file that appears
/// in the program's include path: the scan follows NVIDIA's headers, so
/// the compile misses (and here fails on the shadow) instead of serving
/// the old output.
#[test]
fn a_header_shadowing_nvidias_is_seen() {
    let cache_dir = tempfile::tempdir().unwrap();
    for (major, compiler) in compilers() {
        let compiler = compiler.with_cache(Arc::new(LinkCache::new(cache_dir.path())));
        let project = Project::new();
        let program = Program::new(
            "#include <cuda_fp16.h>\n__global__ void k(__half *x) { x[0] = __float2half(1.0f); }\n",
            "fp16.cu",
        );
        let options = sm90().include_path([project.path("first")]);
        let first = compiler.compile(&program, Target::Cubin, &options).unwrap();
        assert!(!first.from_cache);
        let again = compiler.compile(&program, Target::Cubin, &options).unwrap();
        assert!(again.from_cache, "NVRTC {major}: warm");
        project.write("first/nv/target", "#error the shadow was read\n");
        match compiler.compile(&program, Target::Cubin, &options) {
            Ok(compiled) => assert!(!compiled.from_cache, "NVRTC {major}: stale hit"),
            Err(error) => assert!(
                format!("{error}").contains("shadow"),
                "NVRTC {major}: {error}"
            ),
        }
    }
}

/// A cache kept inside a folder the scan lists (the source's own, as a
/// project that keeps its cache under its root does) hits on the second
/// compile: its stores are not the program's files. So does one beside a
/// `target/` that cargo tagged as a cache.
#[test]
fn a_cache_inside_the_scanned_folder_hits() {
    for (major, compiler) in compilers() {
        let project = Project::new();
        let cache = Arc::new(LinkCache::new(project.path(&format!("src/.cache-{major}"))));
        let compiler = compiler.with_cache(cache);
        project.write(
            "src/target/CACHEDIR.TAG",
            "Signature: 8a477f597d28d172789f06886806bc55\n",
        );
        let (program, options) = (project.program(), project.options());
        assert!(
            !compile(&compiler, &program, &options),
            "NVRTC {major}: cold"
        );
        project.write("src/target/debug/build-output.txt", "changes every build\n");
        for round in 0..2 {
            assert!(
                compile(&compiler, &program, &options),
                "NVRTC {major}: warm compile {round} missed"
            );
        }
        // Another tool's files beside the source, untagged (cuda.core's
        // program cache in the working folder, on the H200), are no
        // place an `#include` looks: still a hit.
        project.write("src/other-tool-cache/entries/ab/cd", "an entry\n");
        project.write("src/notes.txt", "unrelated\n");
        assert!(
            compile(&compiler, &program, &options),
            "NVRTC {major}: a file no include can reach made a miss"
        );
    }
}

/// Another user's cache folder holding "bundled headers" (here made by
/// root, owned by uid 4242): never read. NVRTC 13.3+'s headers go into a
/// folder of the cache's only when it is this user's and writable by no
/// one else, else into a private temporary folder; without a cache too.
/// Runs where the tests may `chown` (CI runs as root).
#[test]
fn another_users_bundled_headers_are_never_read() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let source =
        "#include <cuda_fp16.h>\n__global__ void k(__half *x) { x[0] = __float2half(1.0f); }\n";
    let program = Program::new(source, "fp16.cu");
    for (major, compiler) in compilers() {
        if compiler.nvrtc().version() < (13, 3) {
            continue;
        }
        // A first compile installs the real headers into a cache of ours.
        let ours = tempfile::tempdir().unwrap();
        let compiler = compiler.with_cache(Arc::new(LinkCache::new(ours.path())));
        compiler.compile(&program, Target::Ptx, &sm90()).unwrap();
        let installed = std::fs::read_dir(ours.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("nvrtc-headers-")
            })
            .expect("the bundled headers in the cache's folder");
        let meta = std::fs::metadata(&installed).unwrap();
        assert_eq!(meta.mode() & 0o022, 0, "{:o}", meta.mode());
        // The same folder, planted in a cache folder another user owns.
        let theirs = tempfile::tempdir().unwrap();
        let planted = theirs.path().join(installed.file_name().unwrap());
        let copied = std::process::Command::new("cp")
            .arg("-r")
            .arg(&installed)
            .arg(&planted)
            .status()
            .unwrap();
        assert!(copied.success());
        std::fs::write(planted.join("cuda_fp16.h"), "#error planted by uid 4242\n").unwrap();
        let chowned = std::process::Command::new("chown")
            .args(["-R", "4242:4242"])
            .arg(theirs.path())
            .status()
            .is_ok_and(|s| s.success());
        if !chowned {
            cuda_link_tests::skip("chown needs root");
            return;
        }
        std::fs::set_permissions(theirs.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let fresh = || {
            let found = compilers().into_iter().find(|(m, _)| *m == major);
            found.unwrap().1
        };
        let victim = fresh().with_cache(Arc::new(LinkCache::new(theirs.path())));
        let compiled = victim.compile(&program, Target::Ptx, &sm90());
        assert!(compiled.is_ok(), "NVRTC {major}: {compiled:?}");
        let uncached = fresh().compile(&program, Target::Ptx, &sm90());
        assert!(uncached.is_ok(), "NVRTC {major}: {uncached:?}");
    }
}

/// A program that includes nothing is keyed by its text and options
/// alone: a file appearing beside it changes nothing, and the repeat is
/// a hit without any folder listed.
#[test]
fn a_program_without_includes_is_keyed_by_its_text() {
    let cache_dir = tempfile::tempdir().unwrap();
    for (major, compiler) in compilers() {
        let compiler = compiler.with_cache(Arc::new(LinkCache::new(cache_dir.path())));
        let project = Project::new();
        project.write(
            "src/alone.cu",
            "__global__ void alone(int *x) { *x = 1; }\n",
        );
        let program = Program::from_path(project.path("src/alone.cu")).unwrap();
        let first = compiler.compile(&program, Target::Ptx, &sm90()).unwrap();
        project.write("src/new.h", "#define NEW 1\n");
        let again = compiler.compile(&program, Target::Ptx, &sm90()).unwrap();
        assert!(!first.from_cache, "NVRTC {major}: cold");
        assert!(again.from_cache, "NVRTC {major}: a new file beside it");
        let deps = compiler.dependencies(&program, &sm90()).unwrap();
        assert_eq!(
            deps,
            [std::path::PathBuf::from(project.path("src/alone.cu"))]
        );
    }
}

/// A build script names the program's folders to cargo when they are
/// small, never a path that does not exist: cargo reruns a script that
/// names one on every build (`first/inc.h` is looked for and absent).
#[test]
fn dependencies_name_small_folders_not_absent_paths() {
    for (major, compiler) in compilers() {
        let project = Project::new();
        let deps = compiler
            .dependencies(&project.program(), &project.options())
            .unwrap();
        assert!(
            deps.iter().all(|path| path.exists()),
            "NVRTC {major}: {deps:?}"
        );
        for folder in ["src", "first", "inc"] {
            let folder = std::path::PathBuf::from(project.path(folder));
            assert!(
                deps.contains(&folder),
                "NVRTC {major}: {folder:?} in {deps:?}"
            );
        }
    }
}

/// The scan against NVRTC itself: a project of headers, included in every
/// spelling the scan must read as the preprocessor does (after a comment,
/// after a multi-line comment, continued over lines, with spaces after
/// `#`, from the include path, commented out, inside `#if 0`), edited at
/// random: moved between the source's folder and the include path (one
/// then shadows the other), changed, unshadowed, respelt. After each edit a
/// cached compile must give what a fresh compile gives; a hit that differs
/// is a stale result. Seeded, so a failure names its seed.
#[test]
fn the_scan_agrees_with_nvrtc_under_random_edits() {
    const HEADERS: usize = 4;
    const ROUNDS: usize = 40;
    let spellings: [fn(&str) -> String; 8] = [
        |h| format!("#include \"{h}\"\n"),
        |h| format!("/* c */ #include \"{h}\"\n"),
        |h| format!("/* a\n b */ #include \"{h}\"\n"),
        |h| format!("#inc\\\nlude \"{h}\"\n"),
        |h| format!("#  include <{h}>\n"),
        |h| format!("// #include \"{h}\"\n"),
        |h| format!("#if 0\n#include \"{h}\"\n#endif\n"),
        |h| {
            format!(
                "__device__ const char *s_{} = \"/*\"; // */\n#include \"{h}\"\n",
                &h[..2]
            )
        },
    ];
    for (major, compiler) in compilers() {
        let seed = 0x5eed_0000 + u64::from(major);
        let mut rng = cuda_link_tests::Rng(seed);
        let cache_dir = tempfile::tempdir().unwrap();
        let cached = compiler.with_cache(Arc::new(LinkCache::new(cache_dir.path())));
        let fresh = crate::compile::compilers()
            .into_iter()
            .find(|(m, _)| *m == major)
            .unwrap()
            .1;
        let project = tempfile::tempdir().unwrap();
        let (src, inc) = (project.path().join("src"), project.path().join("inc"));
        std::fs::create_dir_all(&src).unwrap();
        std::fs::create_dir_all(&inc).unwrap();
        let mut spelled = vec![0usize; HEADERS];
        let write_source = |spelled: &[usize]| {
            let mut text = String::new();
            for (i, &s) in spelled.iter().enumerate() {
                text.push_str(&spellings[s](&format!("h{i}.h")));
            }
            text.push_str("__global__ void k(int *o) {\n  int s = 0;\n");
            for i in 0..HEADERS {
                text.push_str(&format!(
                    "#ifdef V{i}\n  s += V{i} * {};\n#endif\n",
                    1 << (4 * i)
                ));
            }
            text.push_str("  o[0] = s;\n}\n");
            std::fs::write(src.join("kernel.cu"), text).unwrap();
        };
        write_source(&spelled);
        for i in 0..HEADERS {
            std::fs::write(inc.join(format!("h{i}.h")), format!("#define V{i} 1\n")).unwrap();
        }
        let options = sm90().include_path([inc.display().to_string()]);
        let (mut hits, mut compiled, mut edits) = (0, 0, Vec::new());
        for round in 0..ROUNDS {
            let header = rng.below(HEADERS);
            let name = format!("h{header}.h");
            let edit = match rng.below(5) {
                0 => {
                    let value = rng.below(15);
                    let dir = if rng.below(2) == 0 { &src } else { &inc };
                    std::fs::write(dir.join(&name), format!("#define V{header} {value}\n"))
                        .unwrap();
                    format!(
                        "{name}={value} in {}",
                        dir.file_name().unwrap().to_string_lossy()
                    )
                }
                1 => {
                    // The include path's copy stays: the shadow goes.
                    let _ = std::fs::remove_file(src.join(&name));
                    format!("{name} removed from src")
                }
                2 => {
                    spelled[header] = rng.below(spellings.len());
                    write_source(&spelled);
                    format!("{name} spelt {}", spelled[header])
                }
                _ => "nothing".to_owned(),
            };
            edits.push(edit);
            let program = Program::from_path(src.join("kernel.cu")).unwrap();
            let theirs = fresh.compile(&program, Target::Ptx, &options);
            let ours = cached.compile(&program, Target::Ptx, &options);
            match (ours, theirs) {
                (Ok(ours), Ok(theirs)) => {
                    hits += usize::from(ours.from_cache);
                    compiled += 1;
                    assert!(
                        ours.code.as_bytes() == theirs.code.as_bytes(),
                        "NVRTC {major}, seed {seed:#x}, round {round}: stale (hit: {}) after {edits:?}",
                        ours.from_cache
                    );
                }
                (Err(_), Err(_)) => {}
                (ours, theirs) => panic!(
                    "NVRTC {major}, seed {seed:#x}, round {round}: cached {:?} but fresh {:?}",
                    ours.map(|c| c.from_cache),
                    theirs.map(|c| c.from_cache)
                ),
            }
        }
        assert!(
            hits >= 5 && compiled >= ROUNDS / 2,
            "NVRTC {major}: {compiled} compiles, {hits} hits in {ROUNDS} rounds"
        );
    }
}

/// NVIDIA's headers from the wheels are keyed by the files a program
/// reaches: an edit deep in CCCL (a pip upgrade replaces files one by
/// one, the top folder's time unchanged) misses. Checked with NVRTC 12 in
/// a child process whose site-packages list points at a copy of the
/// runtime's and CCCL's wheels, which it may edit.
#[test]
fn an_edit_deep_in_nvidias_headers_misses() {
    const COPY: &str = "CUDA_COMPILE_TEST_HEADER_COPY";
    if let Some(root) = std::env::var_os(COPY) {
        return deep_edit_child(std::path::Path::new(&root));
    }
    let Some(site) = cuda_link_tests::redist("CUDA_LINK_SITE_PACKAGES") else {
        return;
    };
    let copy = tempfile::tempdir().unwrap();
    let mut copies = Vec::new();
    for (index, wheel) in std::env::split_paths(&site).enumerate() {
        let to = copy.path().join(format!("wheel{index}"));
        let status = std::process::Command::new("cp")
            .arg("-r")
            .arg(&wheel)
            .arg(&to)
            .status()
            .unwrap();
        assert!(status.success());
        copies.push(to);
    }
    let child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "cache::an_edit_deep_in_nvidias_headers_misses"])
        .env(
            "CUDA_LINK_SITE_PACKAGES",
            std::env::join_paths(&copies).unwrap(),
        )
        .env(COPY, copy.path())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&child.stdout);
    assert!(
        child.status.success() && said.contains("1 passed"),
        "{said}{}",
        String::from_utf8_lossy(&child.stderr)
    );
}

fn deep_edit_child(root: &std::path::Path) {
    let Some((_, compiler)) = compilers().into_iter().find(|(major, _)| *major == 12) else {
        return;
    };
    let compiler = compiler.with_cache(Arc::new(LinkCache::new(root.join("cache"))));
    let src = root.join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(
        src.join("k.cu"),
        "#include <cuda/std/cstdint>\n__global__ void k(cuda::std::int32_t *x) { *x = 1; }\n",
    )
    .unwrap();
    let program = Program::from_path(src.join("k.cu")).unwrap();
    let compile = || compiler.compile(&program, Target::Ptx, &sm90()).unwrap();
    assert!(!compile().from_cache);
    assert!(compile().from_cache, "warm");
    let header = std::fs::read_dir(root)
        .unwrap()
        .map(|e| {
            e.unwrap()
                .path()
                .join("nvidia/cuda_cccl/include/cuda/std/cstdint")
        })
        .find(|p| p.is_file())
        .expect("CCCL's cuda/std/cstdint in the copy");
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&header)
        .unwrap();
    std::io::Write::write_all(&mut file, b"\n// a newer CCCL\n").unwrap();
    drop(file);
    assert!(
        !compile().from_cache,
        "an edit inside CCCL was served stale"
    );
}

/// A cubin with its PTX is one entry, whose PTX is the PTX a
/// `compute_XX` compile gives.
#[test]
fn a_cubin_keeps_its_ptx() {
    let cache_dir = tempfile::tempdir().unwrap();
    let project = Project::new();
    let program = project.program();
    for (major, compiler) in compilers() {
        let compiler = compiler.with_cache(Arc::new(LinkCache::new(cache_dir.path())));
        let (cubin, ptx) = compiler
            .compile_cubin_and_ptx(&program, &project.options())
            .unwrap();
        assert!(!cubin.from_cache, "NVRTC {major}: cold");
        let alone = compiler
            .compile(&program, Target::Ptx, &project.options())
            .unwrap();
        assert_eq!(ptx.as_bytes(), alone.code.as_bytes(), "NVRTC {major}");
        let plain = compiler
            .compile(&program, Target::Cubin, &project.options())
            .unwrap();
        assert!(!plain.from_cache, "NVRTC {major}: an entry of its own");
        assert_eq!(
            plain.code.as_bytes(),
            cubin.code.as_bytes(),
            "NVRTC {major}"
        );
        let (again, ptx_again) = compiler
            .compile_cubin_and_ptx(&program, &project.options())
            .unwrap();
        assert!(again.from_cache, "NVRTC {major}: warm");
        assert_eq!(ptx_again.as_bytes(), ptx.as_bytes(), "NVRTC {major}");
        assert_eq!(
            again.code.as_bytes(),
            cubin.code.as_bytes(),
            "NVRTC {major}"
        );
    }
}
