//! The cubins NVIDIA ships in its library wheels, extracted by
//! `cuobjdump -xelf all` into `target/library-corpus/<wheel>/`, for the
//! tests that every one is accepted and inspected as cuobjdump reads it
//! (`tests/tests/it/library_corpus.rs`).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::Result;
use crate::redist::{self, Wheel};

/// The wheels: curand of CUDA 12.9 (sm_50 to sm_121, sm_100+ cubins with
/// `.nv.merc.*` sections), and curand and nvJPEG of CUDA 13 (sm_75 to
/// sm_121, sm_107 and sm_110 included).
const WHEELS: &[Wheel] = &[
    redist::BIG_LIBRARY,
    Wheel {
        dir: "curand13",
        requirement: "nvidia-curand==10.4.4.72",
        marker: "nvidia/cu13/lib/libcurand.so.10",
    },
    Wheel {
        dir: "nvjpeg13",
        requirement: "nvidia-nvjpeg==13.2.3.58",
        marker: "nvidia/cu13/lib/libnvjpeg.so.13",
    },
];

/// Where the extracted cubins live: a folder per wheel, holding the
/// library itself as `library` (a link) and its cubins.
pub fn root(workspace: &Path) -> PathBuf {
    workspace.join("target/library-corpus")
}

/// Installs the wheels and extracts their cubins, unless a stamp says
/// that this exact set is already there.
pub fn ensure(workspace: &Path) -> Result<()> {
    let cuobjdump = redist::cuobjdump(workspace);
    for wheel in WHEELS {
        let library = redist::install(workspace, wheel)?;
        let dir = root(workspace).join(wheel.dir);
        let stamp = dir.join("stamp");
        if std::fs::read_to_string(&stamp).ok().as_deref() == Some(wheel.requirement) {
            continue;
        }
        eprintln!("xtask: extracting the cubins of {}", wheel.requirement);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)?;
        let output = Command::new(&cuobjdump)
            .current_dir(&dir)
            .args(["-xelf", "all"])
            .arg(&library)
            .output()?;
        if !output.status.success() {
            return Err(format!(
                "cuobjdump -xelf all {}: {}",
                library.display(),
                String::from_utf8_lossy(&output.stderr)
            )
            .into());
        }
        std::os::unix::fs::symlink(&library, dir.join("library"))?;
        std::fs::write(&stamp, wheel.requirement)?;
    }
    Ok(())
}
