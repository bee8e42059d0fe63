//! [`Built`]: what a build wrote, from a build or from the stamp of the
//! last one.

use std::path::PathBuf;

use cuda_link::{Arch, CacheStats};

/// What a build wrote and how it went.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Built {
    /// The generated module, for [`include_kernels!`](crate::include_kernels).
    pub module: PathBuf,
    /// The fatbins: one, or one per file.
    pub fatbins: Vec<PathBuf>,
    /// The PTX text of each fatbin, next to it, with
    /// [`Build::write_ptx`](crate::Build::write_ptx); else empty.
    pub ptx_files: Vec<PathBuf>,
    /// `lib{name}.a`: the host-code files compiled by nvcc, when there
    /// are any.
    pub archive: Option<PathBuf>,
    /// The cargo link lines printed for the archive and cudart.
    pub link: Vec<String>,
    /// Host-code files compiled by nvcc, and those of them the cache
    /// served.
    pub nvcc_compiled: usize,
    /// Host-code objects the cache served.
    pub nvcc_cached: usize,
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
    /// Of those, the ones the shared store served (`remote` feature).
    pub remote: usize,
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
    /// What the cache did in this process: local and remote hits,
    /// misses, remote errors, bytes moved.
    pub cache: CacheStats,
}

impl Built {
    /// A build of `module` that wrote nothing else and compiled nothing.
    pub(crate) fn empty(module: PathBuf) -> Self {
        Built {
            module,
            fatbins: Vec::new(),
            ptx_files: Vec::new(),
            archive: None,
            link: Vec::new(),
            nvcc_compiled: 0,
            nvcc_cached: 0,
            kernels: Vec::new(),
            archs: Vec::new(),
            ptx: None,
            compiled: 0,
            cached: 0,
            remote: 0,
            processes: 0,
            dependencies: Vec::new(),
            unchanged: false,
            cache: Default::default(),
        }
    }

    /// One line on the build, as cuda-build prints it: what was compiled
    /// and where the rest came from, and the shared store's traffic.
    pub fn summary(&self) -> String {
        if self.unchanged {
            return "nothing changed since the last build".to_owned();
        }
        let c = &self.cache;
        let mut line = format!(
            "{} compiles: {} by NVRTC, {} from the local cache, {} from the shared store, in {} \
             process{}",
            self.compiled + self.cached,
            self.compiled,
            self.cached - self.remote.min(self.cached),
            self.remote,
            self.processes,
            if self.processes == 1 { "" } else { "es" },
        );
        if self.nvcc_compiled + self.nvcc_cached > 0 {
            line.push_str(&format!(
                "; {} host-code files: {} by nvcc, {} from the cache",
                self.nvcc_compiled + self.nvcc_cached,
                self.nvcc_compiled,
                self.nvcc_cached
            ));
        }
        if c.remote_hits + c.remote_misses + c.remote_errors + c.remote_bytes_written > 0
            || self.remote > 0
        {
            line.push_str(&format!(
                "; shared store: {} errors, {} entries refused, {} bytes read, {} written",
                c.remote_errors, c.remote_refused, c.remote_bytes_read, c.remote_bytes_written
            ));
        }
        line
    }
}
