//! nvcc: where it is, what it is (its identity in cache keys), the host
//! compiler and archiver beside it, and the opt-in fallback that compiles
//! a device-only file NVRTC refuses to LTO-IR.

use std::path::{Path, PathBuf};
use std::process::Command;

use cuda_link::{Arch, ObjectCode};

use crate::error::BuildError;

/// The pip wheels' nvcc folders (13.x, 12.x), under a site-packages folder.
const WHEEL_BINS: &[&str] = &["nvidia/cu13/bin", "nvidia/cuda_nvcc/bin"];

/// nvcc: `NVCC`, `CUDA_LINK_NVCC`, `CUDA_HOME` / `CUDA_PATH`'s `bin/nvcc`,
/// the pip wheels' (found by their folders, as NVRTC is), the default
/// toolkit's, then the first `nvcc` on `PATH`.
pub(crate) fn find() -> Option<PathBuf> {
    let named = crate::env::var_os("NVCC")
        .filter(|v| !v.is_empty())
        .or_else(|| crate::env::var_os("CUDA_LINK_NVCC").filter(|v| !v.is_empty()));
    if let Some(nvcc) = named {
        return Some(PathBuf::from(nvcc));
    }
    let env = cuda_dylib::SearchEnv::from_process();
    let installed = cuda_dylib::existing_dirs(&["bin"], WHEEL_BINS, &env);
    let path = crate::env::var_os("PATH");
    let on_path = path.iter().flat_map(std::env::split_paths);
    installed
        .into_iter()
        .chain(on_path)
        .map(|dir| dir.join("nvcc"))
        .find(|nvcc| nvcc.is_file())
}

/// nvcc and the host tools it runs with, resolved once per build.
#[derive(Debug, Clone)]
pub(crate) struct Toolchain {
    pub(crate) nvcc: PathBuf,
    /// nvcc's root (`bin/..`): its headers and libraries.
    pub(crate) root: PathBuf,
    /// `-ccbin`: `CXX`, else what `cc` would use; `None` leaves nvcc's own
    /// choice.
    pub(crate) host_compiler: Option<PathBuf>,
    pub(crate) archiver: PathBuf,
    /// nvcc's and the host compiler's identity: their `--version` and the
    /// SHA-256 of their files.
    pub(crate) identity: String,
    /// The folders nvcc's preprocessor searches of its own: nvcc's
    /// `include` and `include/cccl`, then the host compiler's.
    pub(crate) include_dirs: Vec<PathBuf>,
}

impl Toolchain {
    /// The toolchain around `nvcc`.
    pub(crate) fn new(nvcc: PathBuf) -> Result<Self, String> {
        let nvcc = nvcc
            .canonicalize()
            .map_err(|e| format!("{}: {e}", nvcc.display()))?;
        let root = nvcc
            .parent()
            .and_then(Path::parent)
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let host_compiler = host_compiler();
        let archiver = crate::env::var_os("AR")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| {
                cc_build()
                    .try_get_archiver()
                    .ok()
                    .map(|ar| PathBuf::from(ar.get_program()))
            })
            .unwrap_or_else(|| PathBuf::from("ar"));
        let mut identity = identity_of(&nvcc)?;
        identity.push_str(&companions(&root));
        match &host_compiler {
            Some(cxx) => identity.push_str(&identity_of(cxx)?),
            None => identity.push_str("host compiler: nvcc's default\n"),
        }
        let mut include_dirs: Vec<PathBuf> = ["include", "include/cccl"]
            .iter()
            .map(|dir| root.join(dir))
            .chain(target_include_dirs(&root))
            .filter(|dir| dir.is_dir())
            .collect();
        let cxx = host_compiler
            .clone()
            .unwrap_or_else(|| PathBuf::from("g++"));
        include_dirs.extend(host_compiler_dirs(&cxx));
        Ok(Toolchain {
            nvcc,
            root,
            host_compiler,
            archiver,
            identity,
            include_dirs,
        })
    }
}

/// A toolkit's `targets/*/include` and `targets/*/include/cccl`.
fn target_include_dirs(root: &Path) -> Vec<PathBuf> {
    let Ok(targets) = std::fs::read_dir(root.join("targets")) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = targets
        .filter_map(Result::ok)
        .flat_map(|target| {
            [
                target.path().join("include"),
                target.path().join("include/cccl"),
            ]
        })
        .collect();
    dirs.sort();
    dirs
}

/// The folders the host compiler's preprocessor searches of its own
/// (`c++ -E -v`: its C++ library's, its own, `/usr/local/include`,
/// `/usr/include`), in order; none when it cannot say.
fn host_compiler_dirs(cxx: &Path) -> Vec<PathBuf> {
    let output = Command::new(cxx)
        .args(["-x", "c++", "-E", "-v", "-"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .output();
    let Ok(output) = output else {
        return Vec::new();
    };
    let text = String::from_utf8_lossy(&output.stderr);
    let Some((_, listed)) = text.split_once("#include <...> search starts here:") else {
        return Vec::new();
    };
    listed
        .lines()
        .take_while(|line| !line.starts_with("End of search list"))
        .map(str::trim)
        .filter(|line| !line.is_empty())
        // macOS marks framework folders.
        .map(|line| line.trim_end_matches(" (framework directory)"))
        .map(|dir| {
            Path::new(dir)
                .canonicalize()
                .unwrap_or_else(|_| PathBuf::from(dir))
        })
        .collect()
}

/// `cc` as a build script's `cc::Build::new().cpp(true)` sees it, saying
/// nothing to cargo.
fn cc_build() -> cc::Build {
    let mut build = cc::Build::new();
    build
        .cpp(true)
        .cargo_metadata(false)
        .emit_rerun_if_env_changed(false);
    build
}

/// The tools nvcc runs, beside it: `nvcc.profile`'s text, and the size of
/// each of the others (cicc and libdevice come from another wheel than
/// nvcc; hashing their hundred megabytes on every build would cost more
/// than it adds, and any real change of them changes their size).
fn companions(root: &Path) -> String {
    let mut text = std::fs::read_to_string(root.join("bin/nvcc.profile")).unwrap_or_default();
    for tool in [
        "bin/cudafe++",
        "bin/ptxas",
        "bin/fatbinary",
        "bin/nvlink",
        "nvvm/bin/cicc",
    ] {
        let size = std::fs::metadata(root.join(tool)).map_or(0, |m| m.len());
        text.push_str(&format!("\n{tool} {size}"));
    }
    if let Ok(entries) = std::fs::read_dir(root.join("nvvm/libdevice")) {
        let mut sizes: Vec<String> = entries
            .filter_map(Result::ok)
            .map(|e| {
                format!(
                    "{:?} {}",
                    e.file_name(),
                    e.metadata().map_or(0, |m| m.len())
                )
            })
            .collect();
        sizes.sort();
        text.push_str(&sizes.join("\n"));
    }
    text
}

/// `CXX` (its compiler, past a launcher such as `ccache g++`), else the
/// C++ compiler `cc` picks for the target, resolved on `PATH`.
fn host_compiler() -> Option<PathBuf> {
    let from_cxx = crate::env::var("CXX").and_then(|cxx| {
        cxx.split_whitespace()
            .find(|word| !matches!(*word, "ccache" | "sccache" | "distcc" | "icecc"))
            .map(PathBuf::from)
    });
    let chosen = from_cxx.or_else(|| {
        cc_build()
            .try_get_compiler()
            .ok()
            .map(|t| t.path().to_path_buf())
    })?;
    if chosen.components().count() > 1 {
        return Some(chosen);
    }
    let path = crate::env::var_os("PATH");
    path.iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join(&chosen))
        .find(|candidate| candidate.is_file())
        .or(Some(chosen))
}

/// A tool's `--version` and its file's SHA-256.
fn identity_of(tool: &Path) -> Result<String, String> {
    let version = Command::new(tool)
        .arg("--version")
        .output()
        .map_err(|e| format!("{}: {e}", tool.display()))?;
    let resolved = tool.canonicalize().unwrap_or_else(|_| tool.to_path_buf());
    let bytes = std::fs::read(&resolved).map_err(|e| format!("{}: {e}", resolved.display()))?;
    let mut key = cuda_link::CacheKey::builder("tool");
    key.field(&bytes);
    Ok(format!(
        "{} {}\n{}\n",
        tool.display(),
        key.finish().to_hex(),
        String::from_utf8_lossy(&version.stdout).trim()
    ))
}

/// `file` compiled by `nvcc` to LTO-IR for `arch`, in a fatbin written to
/// `output` (each compile of a build its own file):
/// `nvcc -fatbin -rdc=true -gencode arch=compute_XX,code=lto_XX`.
pub(crate) fn compile_ltoir(
    nvcc: &Path,
    file: &Path,
    arch: Arch,
    includes: &[PathBuf],
    defines: &[String],
    undefines: &[String],
    output: &Path,
) -> Result<ObjectCode, BuildError> {
    let fail = |detail: String| BuildError::Nvcc {
        file: file.to_path_buf(),
        detail,
    };
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
        .arg(output);
    command.args(preprocessor_args(includes, defines, undefines));
    command.arg(file);
    run(&mut command).map_err(fail)?;
    let code = ObjectCode::from_path(output).map_err(|e| fail(e.to_string()))?;
    Ok(code.renamed(format!("{} (nvcc, {arch})", file.display())))
}

/// `-I`, `-D`, `-U` as nvcc takes them.
pub(crate) fn preprocessor_args(
    includes: &[PathBuf],
    defines: &[String],
    undefines: &[String],
) -> Vec<String> {
    let includes = includes.iter().map(|i| format!("-I{}", i.display()));
    let defines = defines.iter().map(|d| format!("-D{d}"));
    let undefines = undefines.iter().map(|u| format!("-U{u}"));
    includes.chain(defines).chain(undefines).collect()
}

/// Runs `command`; its stderr when it fails.
pub(crate) fn run(command: &mut Command) -> Result<(), String> {
    let program = command.get_program().to_string_lossy().into_owned();
    let output = command.output().map_err(|e| format!("{program}: {e}"))?;
    if output.status.success() {
        return Ok(());
    }
    Err(format!(
        "{program} exited with {}: {}",
        output.status,
        String::from_utf8_lossy(&output.stderr).trim()
    ))
}
