//! [`BuildError`]: why a build of kernels failed, naming the file, the
//! arch and what to do.

use std::path::PathBuf;

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
    /// NVRTC could not be loaded: the message names the pip packages and
    /// the variables to set.
    #[error("compiling CUDA kernels needs NVRTC")]
    NoNvrtc(#[source] Box<cuda_compile::CompileError>),
    /// A file that holds host code NVRTC cannot compile.
    #[error(
        "{}:{line}: {construct} is host code, and NVRTC compiles device code only: \
         launch the kernels from Rust (cuda-module or cudarc) and keep them as they are, \
         guard the host code with `#ifndef __CUDACC_RTC__` ... `#endif`, or opt in to \
         Build::nvcc_fallback where nvcc is installed",
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
    /// A file did not compile for an arch (the cause names the file, with
    /// NVRTC's log).
    #[error("compiling for {arch}")]
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
    /// nvcc, asked for as a fallback, failed or was not found.
    #[error("nvcc fallback for {}: {detail}", file.display())]
    Nvcc {
        /// The file.
        file: PathBuf,
        /// What happened.
        detail: String,
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
