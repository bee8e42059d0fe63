//! Never stale: the ways a compile was once served from the cache after
//! something it read had changed, each through the public API. An
//! include folder given as a raw option, an include hidden from the scan
//! by an identifier ending in `R`, a header changed and changed back
//! during a compile, and a line table naming another checkout's folder.

use std::path::Path;
use std::sync::Arc;

use cuda_compile::{Compiler, Program, ProgramOptions, Target};
use cuda_link::LinkCache;

use crate::compile::{compilers, sm90};

/// The value of `__device__ int value` in PTX.
fn value(ptx: &[u8]) -> Option<i64> {
    let text = String::from_utf8_lossy(ptx);
    let at = text.find(" value = ")?;
    let rest = &text[at + " value = ".len()..];
    rest.split(';').next()?.trim().parse().ok()
}

/// A compile's value and whether it came from the cache.
fn compile(compiler: &Compiler, program: &Program, options: &ProgramOptions) -> (i64, bool) {
    let compiled = compiler
        .compile(program, Target::Ptx, options)
        .unwrap_or_else(|e| panic!("{e}"));
    let found = value(compiled.code.as_bytes()).expect("the PTX holds `value`");
    (found, compiled.from_cache)
}

fn cached(compiler: Compiler, dir: &Path) -> Compiler {
    compiler.with_cache(Arc::new(LinkCache::new(dir)))
}

/// An include folder in each raw spelling reaches the scan: an edit of a
/// header found there misses, in memory and from disk.
#[test]
fn a_raw_include_folder_reaches_the_scan() {
    type Spelling = fn(&str) -> ProgramOptions;
    let spellings: [(&str, Spelling); 6] = [
        ("extra --include-path=D", |d| {
            sm90().extra_options([format!("--include-path={d}")])
        }),
        ("extra -I D", |d| sm90().extra_options(["-I", d])),
        ("extra -ID", |d| sm90().extra_options([format!("-I{d}")])),
        ("extra -isystem D", |d| {
            sm90().extra_options(["-isystem", d])
        }),
        ("nvcc -I D", |d| {
            let mut options = sm90();
            let _ = options.nvcc_options(["-I", d]);
            options
        }),
        ("nvcc -ID,E", |d| {
            let mut options = sm90();
            let _ = options.nvcc_options([format!("-I{d},/nonexistent")]);
            options
        }),
    ];
    for (major, _) in compilers() {
        for (spelled, options) in spellings {
            let dir = tempfile::tempdir().unwrap();
            let inc = dir.path().join("inc");
            std::fs::create_dir_all(&inc).unwrap();
            std::fs::write(inc.join("v.h"), "#define V 1\n").unwrap();
            let program = Program::new("#include \"v.h\"\n__device__ int value = V;\n", "k.cu");
            let options = options(&inc.display().to_string());
            let compiler = cached(nvrtc(major), &dir.path().join("cache"));
            assert_eq!(
                compile(&compiler, &program, &options),
                (1, false),
                "{spelled}"
            );
            std::fs::write(inc.join("v.h"), "#define V 2\n").unwrap();
            assert_eq!(
                compile(&compiler, &program, &options),
                (2, false),
                "NVRTC {major}, {spelled}: the edit is seen"
            );
            // From disk, in a compiler with an empty memory tier: the
            // key of the edited header is another.
            let fresh = cached(nvrtc(major), &dir.path().join("cache"));
            assert_eq!(compile(&fresh, &program, &options).0, 2, "{spelled}");
        }
    }
}

/// A new compiler on NVRTC `major`, without a cache.
fn nvrtc(major: u32) -> Compiler {
    compilers()
        .into_iter()
        .find(|(m, _)| *m == major)
        .map(|(_, c)| c)
        .expect("the same NVRTC")
}

/// `FOOR"("` is an identifier and a string, not a raw string whose end,
/// `)"`, a later `S("")"/*"` would hold, opening a comment that hid the
/// `#include` after it from the scan.
#[test]
fn an_identifier_ending_in_r_hides_no_include() {
    let source = "#define FOOR \"a\"\n#define S(x) x\n\
                  __device__ const char *a = FOOR\"(\";\n\
                  __device__ const char *b = S(\"\")\"/*\";\n\
                  #include \"hidden.h\"\n\
                  // */\n\
                  __device__ int value = V;\n";
    for (major, compiler) in compilers() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("k.cu");
        std::fs::write(&file, source).unwrap();
        std::fs::write(dir.path().join("hidden.h"), "#define V 1\n").unwrap();
        let compiler = cached(compiler, &dir.path().join("cache"));
        let program = Program::from_path(&file).unwrap();
        assert_eq!(compile(&compiler, &program, &sm90()), (1, false));
        std::fs::write(dir.path().join("hidden.h"), "#define V 2\n").unwrap();
        assert_eq!(
            compile(&compiler, &program, &sm90()),
            (2, false),
            "NVRTC {major}"
        );
    }
}

/// A header changed and changed back while NVRTC compiles (A, B, A):
/// what NVRTC read of B is never stored under A's key. Fifty rounds,
/// each a new program (its own key), a thread writing B then A at a
/// random point of the compile; after each, a compile with A on disk
/// that the cache serves must be A's.
#[test]
fn a_change_undone_during_a_compile_is_never_stored() {
    let Some((_, compiler)) = compilers().pop() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let header = dir.path().join("v.h");
    std::fs::write(&header, "#define V 1\n").unwrap();
    let compiler = cached(compiler, &dir.path().join("cache"));
    let options = sm90().include_path([dir.path().display().to_string()]);
    let program = |round: usize| {
        let source = format!("// round {round}\n#include \"v.h\"\n__device__ int value = V;\n");
        Program::new(source, "k.cu")
    };
    // How long a compile takes, once the headers are set up: the toggles
    // land across it.
    let _ = compile(&compiler, &program(usize::MAX), &options);
    let started = std::time::Instant::now();
    let _ = compile(&compiler, &program(usize::MAX - 1), &options);
    let span = started.elapsed().as_micros().max(1000) as u64;
    let (mut stale, mut read_b) = (0, 0);
    for round in 0..50u64 {
        let program = program(round as usize);
        let toggler = {
            let header = header.clone();
            // A spread of points over the compile, the same every run.
            let at = span * ((round * 37) % 50) / 50;
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_micros(at));
                std::fs::write(&header, "#define V 2\n").unwrap();
                std::thread::sleep(std::time::Duration::from_micros(span / 10));
                std::fs::write(&header, "#define V 1\n").unwrap();
            })
        };
        // A write caught half done (the file truncated) fails the compile.
        let during = compiler.compile(&program, Target::Ptx, &options);
        toggler.join().unwrap();
        let during = during.ok().and_then(|c| value(c.code.as_bytes()));
        read_b += usize::from(during == Some(2));
        let (after, from_cache) = compile(&compiler, &program, &options);
        if from_cache && after != 1 {
            stale += 1;
        }
    }
    eprintln!("A, B, A: B was read in {read_b} of 50 rounds, compiles of {span} us");
    assert_eq!(stale, 0, "stale of 50 rounds (B was read in {read_b})");
    // Every round that read B, and only those, is one the test proves
    // anything by: it must have happened.
    assert!(
        read_b > 0,
        "no round read B: the toggles missed every compile"
    );
}

/// Two checkouts of one crate at different paths, one cache, `-lineinfo`:
/// each output's line table names its own file, not the other
/// checkout's.
#[test]
fn line_info_names_this_checkout() {
    for (major, _) in compilers() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache");
        let mut named = Vec::new();
        for checkout in ["one", "two"] {
            let root = dir.path().join(checkout);
            std::fs::create_dir_all(root.join("kernels")).unwrap();
            let file = root.join("kernels/k.cu");
            std::fs::write(
                &file,
                "__device__ int value = 1;\n__global__ void k(int *p) { *p = value; }\n",
            )
            .unwrap();
            let compiler = cached(nvrtc(major), &cache).with_base_dir(&root);
            let program = Program::from_path(&file).unwrap();
            let options = sm90().lineinfo(true);
            let compiled = compiler.compile(&program, Target::Ptx, &options).unwrap();
            let ptx = String::from_utf8_lossy(compiled.code.as_bytes()).into_owned();
            let file_line = ptx
                .lines()
                .find(|line| line.trim_start().starts_with(".file"))
                .unwrap_or_default()
                .to_owned();
            named.push((root, file_line));
        }
        for (root, file_line) in &named {
            assert!(
                file_line.contains(&root.display().to_string()),
                "NVRTC {major}: {file_line} names {}",
                root.display()
            );
        }
    }
}
