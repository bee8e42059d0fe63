//! Provisioning NVIDIA's redistributable wheels into `target/cuda-redist`.
//!
//! Every wheel is pinned, so a clean machine gets the same libraries the
//! tests were written against. Each wheel gets its own `--target` folder:
//! the CUDA 12 and 13 wheels both ship an `nvidia/` namespace and must not
//! overwrite each other.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{Result, run};

/// One pinned wheel and the file that proves it is installed.
pub struct Wheel {
    /// Folder name under `target/cuda-redist`.
    pub dir: &'static str,
    /// pip requirements, separated by spaces.
    pub requirement: &'static str,
    /// A file inside the install, relative to its folder.
    pub marker: &'static str,
}

/// The wheels the tests need.
pub const WHEELS: &[Wheel] = &[
    Wheel {
        dir: "nvjitlink12",
        requirement: "nvidia-nvjitlink-cu12==12.9.86",
        marker: "nvidia/nvjitlink/lib/libnvJitLink.so.12",
    },
    Wheel {
        dir: "nvjitlink13",
        requirement: "nvidia-nvjitlink==13.5.37",
        marker: "nvidia/cu13/lib/libnvJitLink.so.13",
    },
    Wheel {
        dir: "nvrtc12",
        requirement: "nvidia-cuda-nvrtc-cu12==12.9.86",
        marker: "nvidia/cuda_nvrtc/lib/libnvrtc.so.12",
    },
    Wheel {
        dir: "nvrtc13",
        requirement: "nvidia-cuda-nvrtc==13.5.37",
        marker: "nvidia/cu13/lib/libnvrtc.so.13",
    },
    Wheel {
        dir: "runtime12",
        requirement: "nvidia-cuda-runtime-cu12==12.9.79",
        marker: "nvidia/cuda_runtime/lib/libcudadevrt.a",
    },
    // 13.0's libnvrtc.so.13 has no RPATH: its builtins load only because
    // nvrtc-sys opens them first.
    Wheel {
        dir: "nvrtc130",
        requirement: "nvidia-cuda-nvrtc==13.0.88",
        marker: "nvidia/cu13/lib/libnvrtc.so.13",
    },
    Wheel {
        dir: "cccl12",
        requirement: "nvidia-cuda-cccl-cu12==12.9.27",
        marker: "nvidia/cuda_cccl/include/cuda/std/cstdint",
    },
    Wheel {
        dir: "runtime13",
        requirement: "nvidia-cuda-runtime==13.0.96",
        marker: "nvidia/cu13/include/cuda.h",
    },
    Wheel {
        dir: "nvfatbin12",
        requirement: "nvidia-nvfatbin-cu12==12.9.82",
        marker: "nvidia/nvfatbin/lib/libnvfatbin.so.12",
    },
    Wheel {
        dir: "nvfatbin13",
        requirement: "nvidia-nvfatbin==13.5.37",
        marker: "nvidia/cu13/lib/libnvfatbin.so.13",
    },
    Wheel {
        dir: "cuobjdump13",
        requirement: "nvidia-cuda-cuobjdump==13.5.37",
        marker: "nvidia/cu13/bin/cuobjdump",
    },
    Wheel {
        dir: "nvcc12",
        requirement: "nvidia-cuda-nvcc-cu12==12.9.86",
        marker: "nvidia/cuda_nvcc/bin/ptxas",
    },
];

/// nvcc 13.0 with what it needs to run on a CPU machine with the host gcc
/// (cicc, the CRT headers, the runtime and CCCL), for the test corpus. One
/// folder, one pip call: nvcc finds its parts relative to itself, and pip
/// does not merge a second install into an existing `--target`. 13.0
/// matches the H200's toolkit, so its LTO-IR links there too.
pub const NVCC: Wheel = Wheel {
    dir: "nvcc13",
    requirement: "nvidia-cuda-nvcc==13.0.88 nvidia-nvvm==13.0.88 nvidia-cuda-crt==13.0.88 \
                  nvidia-cuda-runtime==13.0.96 nvidia-cuda-cccl==13.0.85",
    marker: "nvidia/cu13/bin/nvcc",
};

/// A big shipped library for `bench-cold`'s inspection figures (167 MB),
/// installed only by that command.
pub const BIG_LIBRARY: Wheel = Wheel {
    dir: "curand12",
    requirement: "nvidia-curand-cu12==10.3.10.19",
    marker: "nvidia/curand/lib/libcurand.so.10",
};

/// Where the wheels live.
pub fn root(workspace: &Path) -> PathBuf {
    workspace.join("target/cuda-redist")
}

fn file(workspace: &Path, dir: &str, marker: &str) -> PathBuf {
    root(workspace).join(dir).join(marker)
}

/// Installs every missing wheel of `wheels` (by folder name), or of all
/// the test wheels when `wheels` is empty.
pub fn ensure(workspace: &Path, wheels: &[&str]) -> Result<()> {
    for wheel in WHEELS
        .iter()
        .filter(|w| wheels.is_empty() || wheels.contains(&w.dir))
    {
        install(workspace, wheel)?;
    }
    Ok(())
}

/// Installs one wheel unless its marker file is there; returns the marker.
pub fn install(workspace: &Path, wheel: &Wheel) -> Result<PathBuf> {
    let marker = file(workspace, wheel.dir, wheel.marker);
    if marker.is_file() {
        return Ok(marker);
    }
    eprintln!(
        "xtask: installing {} into target/cuda-redist/{}",
        wheel.requirement, wheel.dir
    );
    let target = root(workspace).join(wheel.dir);
    run(Command::new(python())
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--disable-pip-version-check",
            "--root-user-action=ignore",
        ])
        .arg("--target")
        .arg(&target)
        .args(wheel.requirement.split_whitespace()))?;
    if !marker.is_file() {
        return Err(format!(
            "{} installed but {} is missing",
            wheel.requirement,
            marker.display()
        )
        .into());
    }
    Ok(marker)
}

fn python() -> String {
    std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_owned())
}

/// The environment that points the tests at the provisioned libraries.
pub fn test_env(workspace: &Path) -> Vec<(&'static str, PathBuf)> {
    let at = |dir, marker| file(workspace, dir, marker);
    vec![
        (
            "CUDA_LINK_NVJITLINK12_PATH",
            at("nvjitlink12", "nvidia/nvjitlink/lib/libnvJitLink.so.12"),
        ),
        (
            "CUDA_LINK_NVJITLINK13_PATH",
            at("nvjitlink13", "nvidia/cu13/lib/libnvJitLink.so.13"),
        ),
        (
            "CUDA_LINK_NVRTC_PATH",
            at("nvrtc12", "nvidia/cuda_nvrtc/lib/libnvrtc.so.12"),
        ),
        (
            "CUDA_LINK_NVRTC12_PATH",
            at("nvrtc12", "nvidia/cuda_nvrtc/lib/libnvrtc.so.12"),
        ),
        (
            "CUDA_LINK_NVRTC13_PATH",
            at("nvrtc13", "nvidia/cu13/lib/libnvrtc.so.13"),
        ),
        (
            "CUDA_LINK_NVRTC130_PATH",
            at("nvrtc130", "nvidia/cu13/lib/libnvrtc.so.13"),
        ),
        (
            "CUDA_LINK_NVFATBIN_PATH",
            at("nvfatbin12", "nvidia/nvfatbin/lib/libnvfatbin.so.12"),
        ),
        (
            "CUDA_LINK_NVFATBIN12_PATH",
            at("nvfatbin12", "nvidia/nvfatbin/lib/libnvfatbin.so.12"),
        ),
        (
            "CUDA_LINK_NVFATBIN13_PATH",
            at("nvfatbin13", "nvidia/cu13/lib/libnvfatbin.so.13"),
        ),
        (
            "CUDA_LINK_NVVM12_PATH",
            at("nvcc12", "nvidia/cuda_nvcc/nvvm/lib64/libnvvm.so"),
        ),
        (
            "CUDA_LINK_NVVM13_PATH",
            at(NVCC.dir, "nvidia/cu13/lib/libnvvm.so.4"),
        ),
        (
            "CUDA_LINK_PTXAS",
            at("nvcc12", "nvidia/cuda_nvcc/bin/ptxas"),
        ),
        (
            "CUDA_LINK_CUDADEVRT",
            at("runtime12", "nvidia/cuda_runtime/lib/libcudadevrt.a"),
        ),
        // The library's own default: the newest major.
        (
            "CUDA_LINK_NVJITLINK_PATH",
            at("nvjitlink13", "nvidia/cu13/lib/libnvJitLink.so.13"),
        ),
        (
            "CUDA_LINK_NVVM_PATH",
            at(NVCC.dir, "nvidia/cu13/lib/libnvvm.so.4"),
        ),
        ("CUDA_LINK_CUOBJDUMP", cuobjdump(workspace)),
        // nvcc 13, for cuda-build's opt-in nvcc fallback.
        ("CUDA_LINK_NVCC", at(NVCC.dir, NVCC.marker)),
        // NVRTC 12's headers: the runtime's and CCCL's wheels, found there
        // as a user's site-packages would hold them.
        ("CUDA_LINK_SITE_PACKAGES", site_packages(workspace)),
        ("CUDA_LINK_REQUIRE_REDIST", PathBuf::from("1")),
    ]
}

/// The folders the tests put on cuda-dylib's site-packages list
/// (`CUDA_LINK_SITE_PACKAGES`, joined as `PATH` is): each wheel folder
/// whose headers NVRTC 12 needs.
pub fn site_packages(workspace: &Path) -> PathBuf {
    let dirs = ["runtime12", "cccl12"].map(|dir| root(workspace).join(dir));
    std::env::join_paths(dirs).map_or_else(|_| PathBuf::new(), PathBuf::from)
}

/// The provisioned `cuobjdump`, the ground truth for inspection.
pub fn cuobjdump(workspace: &Path) -> PathBuf {
    file(workspace, "cuobjdump13", "nvidia/cu13/bin/cuobjdump")
}

/// Header folders, for bindgen.
pub fn nvjitlink_include(workspace: &Path) -> PathBuf {
    root(workspace).join("nvjitlink13/nvidia/cu13/include")
}

/// The folder holding the pinned `nvFatbin.h` (13.5).
pub fn nvfatbin_include(workspace: &Path) -> PathBuf {
    root(workspace).join("nvfatbin13/nvidia/cu13/include")
}

/// The folder holding the pinned `nvvm.h` (13.0, of `nvidia-nvvm`).
pub fn nvvm_include(workspace: &Path) -> PathBuf {
    root(workspace).join(NVCC.dir).join("nvidia/cu13/include")
}

/// The folder holding the pinned `nvrtc.h` (13.5).
pub fn nvrtc_include(workspace: &Path) -> PathBuf {
    root(workspace).join("nvrtc13/nvidia/cu13/include")
}

/// The folder holding `cuda.h` 12.9.
pub fn cuda12_include(workspace: &Path) -> PathBuf {
    root(workspace).join("runtime12/nvidia/cuda_runtime/include")
}

/// The folder holding `cuda.h` 13.0.
pub fn cuda13_include(workspace: &Path) -> PathBuf {
    root(workspace).join("runtime13/nvidia/cu13/include")
}
