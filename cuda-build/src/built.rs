//! [`Built`]: what a build wrote, from a build or from the stamp of the
//! last one.

use std::path::PathBuf;

use cuda_link::Arch;

/// What a build wrote and how it went.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Built {
    /// The generated module, for [`include_kernels!`](crate::include_kernels).
    pub module: PathBuf,
    /// The fatbins: one, or one per file.
    pub fatbins: Vec<PathBuf>,
    /// The kernels' (mangled) names, of every fatbin.
    pub kernels: Vec<String>,
    /// The cubin archs.
    pub archs: Vec<Arch>,
    /// The PTX slot's arch, if any.
    pub ptx: Option<Arch>,
    /// (file, arch) compiles NVRTC ran.
    pub compiled: usize,
    /// (file, arch) compiles served by the cache.
    pub cached: usize,
    /// The processes that compiled or looked up the compiles: more than
    /// one where they were spread over child processes (NVRTC compiles
    /// one file at a time per process), else 1; 0 when the stamp showed
    /// nothing changed, or nothing was built (docs.rs).
    pub processes: usize,
    /// The files and folders named in `cargo:rerun-if-changed`.
    pub dependencies: Vec<PathBuf>,
    /// Whether nothing the last build read or wrote had changed, so its
    /// outputs stand and no NVIDIA library was loaded.
    pub unchanged: bool,
}
