//! The one reader of CUDA source against a real preprocessor: gcc's
//! (`g++ -M -MG`, nvcc's own preprocessor), which lists every `#include`
//! it acted on, found or not. On generated text built from every
//! lexical corner that once hid an include (comments, strings, raw strings
//! and their prefixes, digit separators, character literals, splices,
//! digraphs), the includes it finds are exactly gcc's; on the repo's real
//! kernel files (candle's, the nvcc corpus, the benches' CUB files) they
//! are all of gcc's, and more only where `#if` hides one.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use proptest::prelude::*;

/// The pieces generated programs are made of.
fn piece() -> impl Strategy<Value = String> {
    let header = "h[0-9]{1,2}";
    prop_oneof![
        header.prop_map(|h| format!("#include \"{h}.h\"\n")),
        header.prop_map(|h| format!("  #  include <{h}.h>\n")),
        header.prop_map(|h| format!("/* c */ #include \"{h}.h\"\n")),
        header.prop_map(|h| format!("#inc\\\nlude \"{h}.h\"\n")),
        header.prop_map(|h| format!("%:include <{h}.h>\n")),
        header.prop_map(|h| format!("# /* a\n b */ include \"{h}.h\"\n")),
        header.prop_map(|h| format!("#include_next <{h}.h>\n")),
        header.prop_map(|h| format!("#include <{h}//x.h>\n")),
        // What must hide an include, or must not.
        header.prop_map(|h| format!("/* #include \"{h}.h\"\n */")),
        header.prop_map(|h| format!("// #include \"{h}.h\" \\\n#include \"{h}.h\"\n")),
        header.prop_map(|h| format!("R\"d(\n#include \"{h}.h\"\n)d\"")),
        header.prop_map(|h| format!("u8R\"(\n#include \"{h}.h\" )\" )\"")),
        header.prop_map(|h| format!("int a; #include \"{h}.h\"\n")),
        Just("FOOR\"(\"".to_owned()),
        Just("S(x)\"/*\"".to_owned()),
        Just("\"*/\"".to_owned()),
        Just("\"a\\\"/*\"".to_owned()),
        Just("'\"'".to_owned()),
        Just("'\\''".to_owned()),
        Just("1'000".to_owned()),
        Just("0x1'f".to_owned()),
        Just("u8\"/*\"".to_owned()),
        Just("L'/'".to_owned()),
        Just("LR\"x(/*)x\"".to_owned()),
        Just("\"s\"_sv".to_owned()),
        Just("don't".to_owned()),
        Just("/*".to_owned()),
        Just("*/".to_owned()),
        Just("//".to_owned()),
        Just("\"".to_owned()),
        Just("'".to_owned()),
        Just("R".to_owned()),
        Just("\\\n".to_owned()),
        Just("\n".to_owned()),
        Just(" ".to_owned()),
        Just("é".to_owned()),
        Just("x = y;".to_owned()),
        Just("{".to_owned()),
        Just("#define Q \"/*\"\n".to_owned()),
    ]
}

fn program() -> impl Strategy<Value = String> {
    prop::collection::vec(piece(), 0..24).prop_map(|pieces| pieces.concat() + "\n")
}

/// The includes gcc's preprocessor acted on in each file, found or not:
/// `g++ -M -MG` over all of them at once.
fn gcc_includes(files: &[PathBuf], dir: &Path) -> Vec<BTreeSet<String>> {
    let output = Command::new("g++")
        .args([
            "-x",
            "c++",
            "-std=c++17",
            "-M",
            "-MG",
            "-nostdinc",
            "-I.",
            "-w",
        ])
        .args(files)
        .current_dir(dir)
        .output()
        .expect("g++, nvcc's preprocessor, runs");
    let text = String::from_utf8_lossy(&output.stdout).replace("\\\n", " ");
    let rules: Vec<&str> = text.lines().filter(|l| l.contains(':')).collect();
    assert_eq!(
        rules.len(),
        files.len(),
        "one rule per file: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    rules
        .iter()
        .map(|rule| {
            let (_, deps) = rule.split_once(':').unwrap_or_default();
            deps.split_whitespace()
                .skip(1)
                .filter(|dep| !dep.contains("stdc-predef"))
                .map(str::to_owned)
                .collect()
        })
        .collect()
}

fn ours(text: &str) -> Option<BTreeSet<String>> {
    let found = cuda_compile::source::includes(text).ok()?;
    Some(found.into_iter().map(|include| include.name).collect())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Where the reader follows a text, it finds exactly the includes gcc
    /// acted on: none hidden, none made up.
    #[test]
    fn the_includes_found_are_gcc_s(programs in prop::collection::vec(program(), 32)) {
        let dir = tempfile::tempdir().unwrap();
        let files: Vec<PathBuf> = programs
            .iter()
            .enumerate()
            .map(|(n, text)| {
                let file = PathBuf::from(format!("p{n}.cu"));
                std::fs::write(dir.path().join(&file), text).unwrap();
                file
            })
            .collect();
        let gcc = gcc_includes(&files, dir.path());
        for (text, gcc) in programs.iter().zip(gcc) {
            if let Some(ours) = ours(text) {
                prop_assert_eq!(ours, gcc, "{:?}", text);
            }
        }
    }
}

/// The repo's real kernel files: every include gcc acts on is found.
#[test]
fn real_files_miss_no_include() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for dir in [
        "peers/candle/candle-kernels/src",
        "peers/candle/candle-kernels/src/moe",
        "peers/candle/candle-kernels/src/mmq_gguf",
        "tests/corpus",
        "tests/data",
        "xtask/bench/kernels/cub",
        "build-example/kernels",
    ] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap().flatten() {
            let path = entry.path();
            if path
                .extension()
                .is_some_and(|e| e == "cu" || e == "cuh" || e == "h")
            {
                files.push(path);
            }
        }
    }
    assert!(files.len() > 40, "{} files", files.len());
    let dir = tempfile::tempdir().unwrap();
    let copies: Vec<PathBuf> = files
        .iter()
        .enumerate()
        .map(|(n, file)| {
            let copy = PathBuf::from(format!("f{n}.cu"));
            std::fs::copy(file, dir.path().join(&copy)).unwrap();
            copy
        })
        .collect();
    let gcc = gcc_includes(&copies, dir.path());
    for (file, gcc) in files.iter().zip(gcc) {
        let text = std::fs::read_to_string(file).unwrap();
        let ours = ours(&text).unwrap_or_else(|| panic!("{} is followed", file.display()));
        let missed: Vec<&String> = gcc.difference(&ours).collect();
        assert!(missed.is_empty(), "{}: {missed:?}", file.display());
    }
}
