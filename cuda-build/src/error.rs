//! [`BuildError`]: why a build of kernels failed, naming the file, the
//! arch and what to do.

use std::path::PathBuf;

/// What a missing nvcc's error says to do.
pub(crate) const INSTALL: &str = "install the CUDA toolkit, or `pip install nvidia-cuda-nvcc \
     nvidia-nvvm nvidia-cuda-crt nvidia-cuda-runtime`, or set NVCC to nvcc's path";

/// Why [`Build::compile`](crate::Build::compile) failed.
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// A build name that is not a Rust identifier.
    #[error("{0:?} is not a Rust identifier: the name becomes a module")]
    BadName(String),
    /// Two files whose stems make one module name ([`Build::per_file`](crate::Build::per_file)).
    #[error("{} and {} would both be module `{module}`: rename one, or build them apart", first.display(), second.display())]
    DuplicateModule {
        /// The module name.
        module: String,
        /// The first file.
        first: PathBuf,
        /// The second file.
        second: PathBuf,
    },
    /// [`Build::route`](crate::Build::route) names a file the build does
    /// not have.
    #[error("Build::route names {}, which is not one of the build's files", .0.display())]
    UnknownRoute(PathBuf),
    /// No `.cu` file was given.
    #[error("no CUDA files: call Build::file or Build::files")]
    NoFiles,
    /// `OUT_DIR` is unset: not run by cargo, and no `out_dir` given.
    #[error("OUT_DIR is unset: run from a build script, or set Build::out_dir")]
    NoOutDir,
    /// An arch that does not parse, from `archs` or `CUDA_COMPUTE_CAP`.
    #[error(
        "{from}: {value:?} is not an arch: sm_90, compute_90, 90 or 9.0 (`a` variants from sm_90, `f` from sm_100)"
    )]
    BadArch {
        /// `Build::archs` or `CUDA_COMPUTE_CAP`.
        from: &'static str,
        /// The value.
        value: String,
    },
    /// A build that needs a PTX slot has none: no cubin arch, or PTX text
    /// asked for with [`Build::write_ptx`](crate::Build::write_ptx).
    #[error("{0}, but there is no PTX slot: name one with Build::ptx(Some(\"compute_90\"))")]
    NoPtxSlot(&'static str),
    /// An arch the loaded NVRTC cannot compile for.
    #[error("sm_{sm} is not an arch NVRTC {nvrtc} compiles for (it takes {supported})")]
    UnsupportedArch {
        /// The arch.
        sm: u32,
        /// NVRTC's version.
        nvrtc: String,
        /// What it takes.
        supported: String,
    },
    /// A flag of [`Build::flag`](crate::Build::flag) (or of
    /// `NVCC_PREPEND_FLAGS` / `NVCC_APPEND_FLAGS`) that cannot be read:
    /// a missing value, a folder or file named so that the cache's scan
    /// and the compiler could read it differently.
    #[error("Build::flag: {0}")]
    Flag(#[source] cuda_compile::FlagError),
    /// NVRTC could not be loaded: the message names the pip packages and
    /// the variables to set.
    #[error("compiling CUDA kernels needs NVRTC")]
    NoNvrtc(#[source] Box<cuda_compile::CompileError>),
    /// A file that holds host code NVRTC cannot compile.
    #[error(
        "{}:{line}: {construct} is host code, and NVRTC compiles device code only: \
         let nvcc compile the file into lib{{name}}.a (Build::route(file, Route::Nvcc)), \
         guard the host code with `#ifndef __CUDACC_RTC__` ... `#endif`, or launch the \
         kernels from Rust (cuda-module or cudarc)",
        file.display()
    )]
    HostCode {
        /// The file the host code is in: the compiled file, or a header of
        /// its own that it includes.
        file: PathBuf,
        /// The line, from 1.
        line: usize,
        /// What was found: "a `<<<...>>>` launch", "`cudaMalloc`", ...
        construct: String,
        /// NVRTC's error.
        #[source]
        error: Box<cuda_compile::CompileError>,
    },
    /// A file that failed under NVRTC and includes `<cub/cub.cuh>`, which
    /// brings CUB's host-side dispatch (CCCL 12's fails on its host
    /// functions, CCCL 13's refuses NVRTC outright), where no nvcc is
    /// found to compile it instead.
    #[error(
        "{}: `#include <cub/cub.cuh>` brings CUB's host-side dispatch, which NVRTC cannot \
         compile, and nvcc, which would, was not found ({}): include the block- or \
         warp-level headers the kernels use (`<cub/block/block_reduce.cuh>`, \
         `<cub/warp/warp_reduce.cuh>`, ...)",
        file.display(),
        INSTALL
    )]
    WholeCub {
        /// The file.
        file: PathBuf,
        /// NVRTC's error, with its log.
        #[source]
        error: Box<cuda_compile::CompileError>,
    },
    /// A file did not compile for an arch (the cause has NVRTC's log).
    #[error("compiling {} for {arch}", file.display())]
    Compile {
        /// The file.
        file: PathBuf,
        /// The arch.
        arch: String,
        /// NVRTC's error, with its log.
        #[source]
        error: Box<cuda_compile::CompileError>,
    },
    /// The per-arch link failed (nvJitLink missing, an undefined symbol);
    /// the cause names the arch.
    #[error("linking the kernels of {name}")]
    Link {
        /// The build's name.
        name: String,
        /// The linker's error, naming the target.
        #[source]
        error: Box<cuda_link::LinkError>,
    },
    /// nvcc failed on a file (its first error), or was not found for the
    /// fallback.
    #[error("nvcc on {}: {detail}", file.display())]
    Nvcc {
        /// The file.
        file: PathBuf,
        /// What happened.
        detail: String,
    },
    /// Files that need nvcc (host code), where nvcc or its host compiler
    /// is missing.
    #[error(
        "{} need{} nvcc (host code NVRTC cannot compile): {detail}",
        files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>().join(", "),
        if files.len() == 1 { "s" } else { "" }
    )]
    NvccMissing {
        /// The files.
        files: Vec<PathBuf>,
        /// What is missing and how to install it.
        detail: String,
    },
    /// Files compiled to no kernel at all.
    #[error(
        "{} yield{} no kernel: a template kernel instantiated only by host code that NVRTC \
         does not see (a launcher behind `#ifndef __CUDACC_RTC__`) is never compiled; \
         instantiate it explicitly (`template __global__ void scale<float>(float *, int);`) \
         or let nvcc build the launchers (Build::route)",
        files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>().join(", "),
        if files.len() == 1 { "s" } else { "" }
    )]
    NoKernels {
        /// The files.
        files: Vec<PathBuf>,
    },
    /// Several files failed: each with its first error.
    #[error(
        "{} files failed:\n{}",
        errors.len(),
        errors.iter().map(|e| format!("- {}", cuda_link::Report(e))).collect::<Vec<_>>().join("\n")
    )]
    Files {
        /// Each failing file's first error.
        errors: Vec<BuildError>,
    },
    /// The fatbin could not be written or read back.
    #[error("{name}: {detail}")]
    Output {
        /// The file or build name.
        name: String,
        /// What failed.
        detail: String,
    },
}

/// The message and its causes, for a build script's `{:?}` (`main`
/// returning `Result` prints it).
impl std::fmt::Debug for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&cuda_link::Report(self), f)
    }
}
