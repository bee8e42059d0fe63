//! The nvcc corpus: `tests/corpus/*.cu` built with the pinned nvcc 13 the
//! way numba-cuda's and pynvjitlink's test-data Makefiles build theirs,
//! into every container kind, with and without LTO.
//!
//! The build lands in `target/corpus/files`, with the toolkit's
//! `libcudadevrt.a`; nvcc's stderr of each recipe goes to
//! `target/corpus/logs`. It is redone only when a source, a recipe, the
//! nvcc pin or this builder changes: `target/corpus/stamp` records them.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use crate::Result;
use crate::redist;

/// One nvcc invocation: `nvcc ARGS SOURCE -o OUTPUT`.
#[derive(Debug, Hash)]
struct Recipe {
    output: String,
    source: &'static str,
    args: Vec<&'static str>,
    /// nvcc must fail on it (the corpus's file with an error).
    fails: bool,
}

const SASS: &[&str] = &["-arch=sm_90"];
/// Two SASS arches plus PTX for the newer, as a shipped library carries.
const MULTI_ARCH: &[&str] = &[
    "-gencode",
    "arch=compute_80,code=sm_80",
    "-gencode",
    "arch=compute_90,code=[sm_90,compute_90]",
];
const SASS_ONLY: &[&str] = &[
    "-gencode",
    "arch=compute_80,code=sm_80",
    "-gencode",
    "arch=compute_90,code=sm_90",
];
const LTO_ONLY: &[&str] = &["-gencode", "arch=compute_90,code=lto_90"];
/// pynvjitlink's MULTI_GENCODE: SASS and LTO-IR for one arch.
const SASS_AND_LTO: &[&str] = &["-gencode", "arch=compute_90,code=[sm_90,lto_90]"];

/// Every relocatable container of `stem.cu`, named `stem.EXT`, plus LTO
/// forms named `stem_lto.EXT` when `lto` is set.
fn relocatable(recipes: &mut Vec<Recipe>, stem: &'static str, lto: bool) {
    let source = leak(format!("{stem}.cu"));
    let mut add = |output: String, mode: &[&'static str], arch: &[&'static str]| {
        let args = ["-rdc=true"].iter().chain(mode).chain(arch).copied();
        recipes.push(Recipe {
            output,
            source,
            args: args.collect(),
            fails: false,
        });
    };
    add(format!("{stem}.cubin"), &["-cubin"], SASS);
    add(format!("{stem}.ptx"), &["-ptx"], SASS);
    add(format!("{stem}.o"), &["-c"], SASS);
    add(format!("lib{stem}.a"), &["-lib"], SASS);
    add(format!("{stem}.fatbin"), &["-fatbin"], MULTI_ARCH);
    if lto {
        add(
            format!("{stem}.ltoir"),
            &["-ltoir", "-dlto"],
            &["-arch=sm_90"],
        );
        add(format!("{stem}_lto.o"), &["-c"], LTO_ONLY);
        add(format!("lib{stem}_lto.a"), &["-lib"], LTO_ONLY);
        add(format!("{stem}_lto.fatbin"), &["-fatbin"], LTO_ONLY);
        add(
            format!("{stem}_sass_lto.fatbin"),
            &["-fatbin"],
            SASS_AND_LTO,
        );
    }
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

fn recipes() -> Vec<Recipe> {
    let mut recipes = Vec::new();
    for stem in [
        "device_functions",
        "use_device_functions",
        "lto_scale",
        "lto_kernel",
    ] {
        relocatable(&mut recipes, stem, true);
    }
    for stem in [
        "duplicate_add",
        "undefined_extern",
        "device_launch",
        "variables",
    ] {
        relocatable(&mut recipes, stem, true);
    }
    for stem in ["weak_add", "weak_use", "params", "warn"] {
        relocatable(&mut recipes, stem, false);
    }
    let mut one = |output: &str, source, args: &[&'static str]| {
        recipes.push(Recipe {
            output: output.to_owned(),
            source,
            args: args.to_vec(),
            fails: false,
        });
    };
    // A fatbin without PTX, and one per compression mode nvcc offers.
    one(
        "device_functions_sass.fatbin",
        "device_functions.cu",
        &[&["-fatbin", "-rdc=true"], SASS_ONLY].concat(),
    );
    for mode in ["none", "size", "speed", "balance", "default"] {
        let args = [
            &[
                "-fatbin",
                "-rdc=true",
                leak(format!("-compress-mode={mode}")),
            ],
            MULTI_ARCH,
        ]
        .concat();
        one(
            &format!("use_device_functions_{mode}.fatbin"),
            "use_device_functions.cu",
            &args,
        );
    }
    // Whole-program builds: every cubin inside is executable (ET_EXEC).
    one(
        "standalone.cubin",
        "standalone.cu",
        &["-cubin", "-arch=sm_90"],
    );
    one(
        "standalone.fatbin",
        "standalone.cu",
        &[&["-fatbin"], SASS_ONLY].concat(),
    );
    one(
        "standalone_ptx.fatbin",
        "standalone.cu",
        &[&["-fatbin"], MULTI_ARCH].concat(),
    );
    one("standalone.o", "standalone.cu", &["-c", "-arch=sm_90"]);
    one("libstandalone.a", "standalone.cu", &["-lib", "-arch=sm_90"]);
    recipes.push(Recipe {
        output: "error.ptx".to_owned(),
        source: "error.cu",
        args: vec!["-ptx", "-arch=sm_90"],
        fails: true,
    });
    recipes
}

/// Where the corpus files are.
pub fn files(workspace: &Path) -> PathBuf {
    workspace.join("target/corpus/files")
}

/// Builds the corpus unless the stamp says it is current.
pub fn ensure(workspace: &Path) -> Result<()> {
    let nvcc = redist::install(workspace, &redist::NVCC)?;
    let sources = workspace.join("tests/corpus");
    let root = workspace.join("target/corpus");
    let recipes = recipes();
    let stamp = stamp(&sources, &recipes)?;
    let stamp_file = root.join("stamp");
    if std::fs::read_to_string(&stamp_file).ok().as_deref() == Some(stamp.as_str()) {
        return Ok(());
    }
    eprintln!(
        "xtask: building the nvcc corpus ({} recipes)",
        recipes.len()
    );
    let _ = std::fs::remove_dir_all(&root);
    let (files, logs) = (root.join("files"), root.join("logs"));
    std::fs::create_dir_all(&files)?;
    std::fs::create_dir_all(&logs)?;
    let queue = Mutex::new(recipes.iter());
    let failures = Mutex::new(Vec::new());
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let Some(recipe) = queue.lock().unwrap().next() else {
                        return;
                    };
                    if let Err(e) = build(&nvcc, &sources, &files, &logs, recipe) {
                        failures.lock().unwrap().push(e.to_string());
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    if !failures.is_empty() {
        return Err(failures.join("\n").into());
    }
    // The device runtime of the same toolkit, for the device-side launch.
    let devrt = nvcc
        .ancestors()
        .nth(2)
        .map(|cu13| cu13.join("lib/libcudadevrt.a"));
    if let Some(devrt) = devrt {
        std::fs::copy(devrt, files.join("libcudadevrt.a"))?;
    }
    std::fs::write(stamp_file, stamp)?;
    Ok(())
}

fn build(nvcc: &Path, sources: &Path, files: &Path, logs: &Path, recipe: &Recipe) -> Result<()> {
    let mut command = Command::new(nvcc);
    command
        .current_dir(sources)
        .args(&recipe.args)
        .arg(recipe.source)
        .arg("-o")
        .arg(files.join(&recipe.output));
    let output = command
        .output()
        .map_err(|e| format!("cannot start {command:?}: {e}"))?;
    std::fs::write(logs.join(format!("{}.log", recipe.output)), &output.stderr)?;
    match (output.status.success(), recipe.fails) {
        (true, false) | (false, true) => Ok(()),
        (false, false) => Err(format!(
            "{command:?} failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        )
        .into()),
        (true, true) => Err(format!("{command:?} should have failed").into()),
    }
}

/// A hash of every source, every recipe, the nvcc pin and this builder.
fn stamp(sources: &Path, recipes: &[Recipe]) -> Result<String> {
    let mut hasher = DefaultHasher::new();
    include_str!("corpus.rs").hash(&mut hasher);
    redist::NVCC.requirement.hash(&mut hasher);
    recipes.hash(&mut hasher);
    let mut names: Vec<PathBuf> = std::fs::read_dir(sources)?
        .map(|entry| entry.map(|e| e.path()))
        .collect::<std::io::Result<_>>()?;
    names.sort();
    for name in names {
        name.file_name().hash(&mut hasher);
        std::fs::read(&name)?.hash(&mut hasher);
    }
    Ok(format!("{:016x}\n", hasher.finish()))
}
