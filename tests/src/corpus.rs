//! The nvcc corpus that `cargo xtask test` builds from `tests/corpus/*.cu`
//! (see `xtask/src/corpus.rs` for each file's nvcc command line).

use std::path::PathBuf;
use std::process::Command;

/// The corpus folder, or `None` to skip (see [`crate::redist`]).
pub fn dir() -> Option<PathBuf> {
    crate::redist("CUDA_LINK_CORPUS")
}

/// The bytes of one corpus file; panics when it is missing.
pub fn read(dir: &std::path::Path, name: &str) -> Vec<u8> {
    std::fs::read(dir.join(name)).unwrap_or_else(|e| panic!("corpus file {name}: {e}"))
}

/// What nvcc printed on stderr while building `output`.
pub fn build_log(dir: &std::path::Path, output: &str) -> String {
    let logs = dir
        .parent()
        .expect("corpus files live in a folder")
        .join("logs");
    std::fs::read_to_string(logs.join(format!("{output}.log")))
        .unwrap_or_else(|e| panic!("build log of {output}: {e}"))
}

/// Kernels of `use_device_functions.cu`, each calling one function of
/// `device_functions.cu`.
pub const CALLER_KERNELS: [&str; 3] = ["call_add_cabi", "call_mul_cpp", "call_hadd_fp16"];

/// The container forms every relocatable corpus source is built in:
/// `(file name of stem, uses LTO)`.
pub fn containers(stem: &str) -> Vec<(String, bool)> {
    vec![
        (format!("{stem}.cubin"), false),
        (format!("{stem}.ptx"), false),
        (format!("{stem}.o"), false),
        (format!("lib{stem}.a"), false),
        (format!("{stem}.fatbin"), false),
        (format!("{stem}.ltoir"), true),
        (format!("{stem}_lto.o"), true),
        (format!("lib{stem}_lto.a"), true),
        (format!("{stem}_lto.fatbin"), true),
        (format!("{stem}_sass_lto.fatbin"), true),
    ]
}

/// What `cuobjdump` reports of a file: ELF and PTX entries by arch, LTO-IR
/// arches, and the kernels (`ENTRY` symbols) of its cubins.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Listing {
    /// Arch of each ELF entry, sorted.
    pub elf: Vec<String>,
    /// Arch of each PTX entry, sorted.
    pub ptx: Vec<String>,
    /// Arches of the LTO-IR entries, sorted and deduplicated.
    pub ltoir: Vec<String>,
    /// Kernel names of the cubins, sorted and deduplicated.
    pub kernels: Vec<String>,
}

/// Runs the provisioned `cuobjdump` on `path`; `None` to skip.
pub fn cuobjdump(path: &std::path::Path) -> Option<Listing> {
    crate::redist("CUDA_LINK_CUOBJDUMP")?;
    let run = |args: &[&str]| run_cuobjdump(path, args).unwrap_or_default();
    let (elf, ptx) = elf_and_ptx(&run(&["-lelf", "-lptx"]));
    let mut listing = Listing {
        elf,
        ptx,
        ..Listing::default()
    };
    // `Fatbin nvvm code:` headers are followed by `arch = sm_90`.
    let all = run(&["-all", "-res-usage"]);
    let mut lines = all.lines();
    while let Some(line) = lines.next() {
        if line.starts_with("Fatbin nvvm code") {
            let arch = lines.find_map(|l| l.strip_prefix("arch = "));
            listing.ltoir.extend(arch.map(str::to_owned));
        }
    }
    listing.kernels = kernels(&run(&["-symbols"]));
    listing.ltoir.sort();
    listing.ltoir.dedup();
    Some(listing)
}

/// The kernels `cuobjdump -symbols` lists for `path`, sorted and
/// deduplicated; `None` to skip.
pub fn cuobjdump_kernels(path: &std::path::Path) -> Option<Vec<String>> {
    Some(kernels(&run_cuobjdump(path, &["-symbols"])?))
}

/// The arches of the ELF entries `cuobjdump -lelf` lists for `path`,
/// sorted; `None` to skip.
pub fn cuobjdump_elf_arches(path: &std::path::Path) -> Option<Vec<String>> {
    Some(elf_and_ptx(&run_cuobjdump(path, &["-lelf"])?).0)
}

fn run_cuobjdump(path: &std::path::Path, args: &[&str]) -> Option<String> {
    let tool = crate::redist("CUDA_LINK_CUOBJDUMP")?;
    let output = Command::new(&tool)
        .args(args)
        .arg(path)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", tool.display()));
    Some(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// `ELF file    1: name.1.sm_90.cubin` and `PTX file    1: name.1.sm_90.ptx`
/// lines: the arches of each, sorted.
fn elf_and_ptx(listing: &str) -> (Vec<String>, Vec<String>) {
    let (mut elf, mut ptx) = (Vec::new(), Vec::new());
    for line in listing.lines() {
        let file = line.rsplit(": ").next().unwrap_or_default();
        let arch = file.rsplit('.').nth(1).unwrap_or_default().to_owned();
        if line.starts_with("ELF file") {
            elf.push(arch);
        } else if line.starts_with("PTX file") {
            ptx.push(arch);
        }
    }
    elf.sort();
    ptx.sort();
    (elf, ptx)
}

/// `FUNC  GLOBAL  DEFAULT  ENTRY  name` lines; undefined ones carry a `U`.
fn kernels(symbols: &str) -> Vec<String> {
    let mut kernels: Vec<String> = symbols
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let entry = fields.first() == Some(&"FUNC")
                && fields.contains(&"ENTRY")
                && !fields.contains(&"U");
            entry
                .then(|| fields.last().map(|s| (*s).to_owned()))
                .flatten()
        })
        .collect();
    kernels.sort();
    kernels.dedup();
    kernels
}

/// What `cuobjdump -xelf all` and `-xptx all` extract from `path`: each
/// file's `arch.cubin` or `arch.ptx` and its bytes, sorted; `None` to skip.
/// Panics when cuobjdump fails, as it does on a header it cannot read.
pub fn cuobjdump_extract(path: &std::path::Path) -> Option<Vec<(String, Vec<u8>)>> {
    let tool = crate::redist("CUDA_LINK_CUOBJDUMP")?;
    let dir = tempfile::tempdir().expect("temporary folder");
    let input = std::fs::canonicalize(path).expect("the file exists");
    for args in [["-xelf", "all"], ["-xptx", "all"]] {
        let output = Command::new(&tool)
            .current_dir(dir.path())
            .args(args)
            .arg(&input)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", tool.display()));
        let said = String::from_utf8_lossy(&output.stderr);
        assert!(
            !said.contains("fatal"),
            "cuobjdump {args:?} {}: {said}",
            path.display()
        );
    }
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir.path())
        .expect("the temporary folder")
        .map(|entry| {
            let path = entry.expect("a folder entry").path();
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            // `name.N.sm_90.cubin`: keep `sm_90.cubin`.
            let parts: Vec<&str> = name.rsplitn(3, '.').collect();
            let slot = format!("{}.{}", parts.get(1).unwrap_or(&""), parts[0]);
            (slot, std::fs::read(&path).expect("an extracted file"))
        })
        .collect();
    files.sort();
    Some(files)
}
