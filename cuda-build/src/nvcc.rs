//! The opt-in fallback: a file NVRTC cannot compile, compiled to LTO-IR
//! by nvcc where it is installed (its host code is nvcc's to drop).

use std::path::{Path, PathBuf};
use std::process::Command;

use cuda_link::{Arch, ObjectCode};

use crate::error::BuildError;

/// nvcc: `NVCC`, else `CUDA_HOME` / `CUDA_PATH`'s `bin/nvcc`, else the
/// first `nvcc` on `PATH`.
pub(crate) fn find() -> Option<PathBuf> {
    if let Some(nvcc) = crate::env::var_os("NVCC").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(nvcc));
    }
    let homes = ["CUDA_HOME", "CUDA_PATH"]
        .into_iter()
        .filter_map(crate::env::var_os)
        .map(|home| PathBuf::from(home).join("bin"));
    let path = crate::env::var_os("PATH");
    let on_path = path.iter().flat_map(std::env::split_paths);
    homes
        .chain(on_path)
        .map(|dir| dir.join("nvcc"))
        .find(|nvcc| nvcc.is_file())
}

/// `file` compiled by `nvcc` to LTO-IR for `arch`, in a fatbin:
/// `nvcc -fatbin -rdc=true -gencode arch=compute_XX,code=lto_XX`.
pub(crate) fn compile(
    nvcc: &Path,
    file: &Path,
    arch: Arch,
    includes: &[PathBuf],
    defines: &[String],
    undefines: &[String],
    out_dir: &Path,
) -> Result<ObjectCode, BuildError> {
    let fail = |detail: String| BuildError::Nvcc {
        file: file.to_path_buf(),
        detail,
    };
    let stem = file.file_stem().unwrap_or_default().to_string_lossy();
    let output = out_dir.join(format!("{stem}.nvcc.{arch}.fatbin"));
    let mut command = Command::new(nvcc);
    command
        .arg("-fatbin")
        .arg("-rdc=true")
        .arg(format!(
            "-gencode=arch={},code={}",
            arch.compute(),
            arch.lto()
        ))
        .arg("-o")
        .arg(&output);
    for include in includes {
        command.arg(format!("-I{}", include.display()));
    }
    for define in defines {
        command.arg(format!("-D{define}"));
    }
    for undefine in undefines {
        command.arg(format!("-U{undefine}"));
    }
    command.arg(file);
    let run = command
        .output()
        .map_err(|e| fail(format!("{}: {e}", nvcc.display())))?;
    if !run.status.success() {
        return Err(fail(format!(
            "{} exited with {}: {}",
            nvcc.display(),
            run.status,
            String::from_utf8_lossy(&run.stderr).trim()
        )));
    }
    let code = ObjectCode::from_path(&output).map_err(|e| fail(e.to_string()))?;
    Ok(code.renamed(format!("{} (nvcc, {arch})", file.display())))
}
