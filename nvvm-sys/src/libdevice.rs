//! libdevice, the bitcode of the `__nv_*` math functions that NVVM IR
//! links, found beside the libNVVM that compiles it.

use std::path::{Path, PathBuf};

/// `libdevice.10.bc` of the libNVVM at `library`, if there is one: in its
/// release's `nvvm/libdevice` folder. 12.x's nvcc wheel and the toolkits
/// keep libNVVM in `nvvm/lib64`, 13.x's `nvidia-nvvm` wheel in the
/// release's `lib` folder, beside an `nvvm/libdevice`.
pub fn libdevice_beside(library: &Path) -> Option<PathBuf> {
    let folder = library.parent()?;
    let candidates = [
        // nvvm/lib64/libnvvm.so → nvvm/libdevice
        folder.parent().map(|nvvm| nvvm.join("libdevice")),
        // cu13/lib/libnvvm.so.4 → cu13/nvvm/libdevice
        folder
            .parent()
            .map(|release| release.join("nvvm/libdevice")),
    ];
    candidates
        .into_iter()
        .flatten()
        .map(|dir| dir.join("libdevice.10.bc"))
        .find(|file| file.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn found_in_both_layouts_and_not_elsewhere() {
        let root = tempfile::tempdir().unwrap();
        let layouts = [
            (
                "nvidia/cuda_nvcc/nvvm/lib64/libnvvm.so",
                "nvidia/cuda_nvcc/nvvm/libdevice",
            ),
            ("nvidia/cu13/lib/libnvvm.so.4", "nvidia/cu13/nvvm/libdevice"),
        ];
        for (library, libdevice) in layouts {
            let library = root.path().join(library);
            assert_eq!(libdevice_beside(&library), None);
            let folder = root.path().join(libdevice);
            std::fs::create_dir_all(&folder).unwrap();
            std::fs::write(folder.join("libdevice.10.bc"), b"BC").unwrap();
            assert_eq!(
                libdevice_beside(&library),
                Some(folder.join("libdevice.10.bc"))
            );
        }
    }
}
