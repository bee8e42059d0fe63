//! The cubins of NVIDIA's own library wheels (curand 12.9 and 13, nvJPEG
//! 13), extracted by `cuobjdump -xelf all` when `cargo xtask test`
//! provisions them (`xtask/src/library_corpus.rs`): every one accepted and
//! inspected as cuobjdump reads it, and each library whole listed as
//! cuobjdump lists it. What NVIDIA ships must never be refused.

use std::path::PathBuf;

use cuda_link::ObjectCode;
use cuda_link::inspect::EntryKind;
use cuda_link_tests::corpus;

/// A folder per wheel, each with its cubins and `library`.
fn wheels() -> Option<Vec<PathBuf>> {
    let root = cuda_link_tests::redist("CUDA_LINK_LIBRARY_CORPUS")?;
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e} (run `cargo xtask test`)", root.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_dir())
        .collect();
    dirs.sort();
    Some(dirs)
}

fn cubins(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "cubin"))
        .collect();
    files.sort();
    files
}

/// Every cubin is accepted, and its inspection names the arch of its
/// file name and the kernels cuobjdump lists. sm_100 and newer cubins
/// carry `.nv.merc.symtab`, whose `sh_info` (one past its last local
/// symbol) may equal its symbol count; 20 of curand 12.9's were refused
/// for that.
#[test]
fn every_library_cubin_is_accepted_and_read_as_cuobjdump_reads_it() {
    let Some(wheels) = wheels() else { return };
    let (mut checked, mut mercury, mut failures) = (0, 0, Vec::new());
    for dir in &wheels {
        for path in cubins(dir) {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let bytes = std::fs::read(&path).unwrap();
            mercury += usize::from(memchr_in(&bytes, b".nv.merc.symtab"));
            let code = match ObjectCode::from_cubin(bytes, name.as_str()) {
                Ok(code) => code,
                Err(error) => {
                    failures.push(format!("{name}: {error}"));
                    continue;
                }
            };
            let info = code.inspect().unwrap();
            // `libcurand.so.17.sm_90.cubin`
            let arch = name.rsplit('.').nth(1).unwrap_or_default();
            let ours: Vec<String> = info.arches().iter().map(ToString::to_string).collect();
            if ours != [arch] {
                failures.push(format!("{name}: arch {ours:?}"));
            }
            let mut kernels: Vec<String> = info.kernels().into_iter().map(str::to_owned).collect();
            kernels.sort();
            kernels.dedup();
            if let Some(theirs) = corpus::cuobjdump_kernels(&path)
                && kernels != theirs
            {
                failures.push(format!("{name}: kernels {kernels:?}, cuobjdump {theirs:?}"));
            }
            checked += 1;
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(checked >= 300, "{checked} cubins");
    assert!(mercury >= 50, "{mercury} cubins with .nv.merc.symtab");
}

fn memchr_in(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Each library, read whole from its file: its cubin entries' arches are
/// cuobjdump's.
#[test]
fn every_library_lists_its_cubins_as_cuobjdump_does() {
    let Some(wheels) = wheels() else { return };
    for dir in &wheels {
        let library = dir.join("library");
        let info = cuda_link::inspect_path(&library)
            .unwrap_or_else(|e| panic!("{}: {e}", library.display()));
        let mut ours: Vec<String> = info
            .fatbin_entries()
            .filter(|e| e.kind == EntryKind::Cubin)
            .map(|e| e.arch.to_string())
            .collect();
        ours.sort();
        let Some(theirs) = corpus::cuobjdump_elf_arches(&library) else {
            return;
        };
        assert_eq!(ours, theirs, "{}", library.display());
        assert!(
            ours.len() >= 100,
            "{}: {} cubins",
            library.display(),
            ours.len()
        );
    }
}
