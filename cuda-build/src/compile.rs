//! [`Build::compile`]: a no-op rebuild answered from the stamp, docs.rs
//! answered without CUDA, else a [`Session`] run.

use std::path::{Path, PathBuf};

use crate::build::Build;
use crate::built::Built;
use crate::error::BuildError;
use crate::output::{module_name, output_error, write_if_changed};
use crate::session::Session;
use crate::{env, jobs, names, nvcc, stamp};

impl Build {
    /// Compiles, links and writes `OUT_DIR/cuda-build/{name}.rs` (a module
    /// `name`) and the fatbins under `OUT_DIR/cuda-build/{name}/`, for
    /// [`include_kernels!("name")`](crate::include_kernels). When nothing
    /// it read or wrote last time has changed, it returns that build
    /// ([`Built::unchanged`]) without loading NVIDIA's libraries.
    ///
    /// Under docs.rs (`DOCS_RS` set), where there is no CUDA, nothing is
    /// compiled: `FATBIN` is empty, and only the `extern "C"` kernels a
    /// scan of the files finds have constants.
    ///
    /// # Errors
    /// A [`BuildError`] naming the file, the arch and the remedy: host code
    /// NVRTC cannot compile (with its line), a compile or link error with
    /// NVIDIA's log, a missing NVRTC or nvJitLink (naming the pip packages
    /// and variables), an unknown arch.
    pub fn compile(&self, name: &str) -> Result<Built, BuildError> {
        jobs::init();
        if !names::is_module_name(name) {
            return Err(BuildError::BadName(name.to_owned()));
        }
        if self.files.is_empty() {
            return Err(BuildError::NoFiles);
        }
        if self.per_file {
            let mut modules: std::collections::HashMap<String, &PathBuf> = Default::default();
            for file in &self.files {
                if let Some(first) = modules.insert(module_name(file), file)
                    && first != file
                {
                    return Err(BuildError::DuplicateModule {
                        module: module_name(file),
                        first: first.clone(),
                        second: file.clone(),
                    });
                }
            }
        }
        let out_dir = match &self.out_dir {
            Some(dir) => dir.clone(),
            None => PathBuf::from(env::var_os("OUT_DIR").ok_or(BuildError::NoOutDir)?),
        }
        .join("cuda-build");
        std::fs::create_dir_all(&out_dir).map_err(|e| output_error(&out_dir, e))?;
        let variables = env::watched();
        if self.cargo_metadata {
            for var in &variables {
                println!("cargo:rerun-if-env-changed={var}");
            }
        }
        if env::var_os("DOCS_RS").is_some() {
            return self.write_empty(name, &out_dir);
        }
        let stamp_path = out_dir.join(format!("{name}.stamp"));
        let context = self.stamp_context(name, &variables);
        if let Some(context) = &context
            && let Some(mut built) = stamp::check(&stamp_path, context)
        {
            built.unchanged = true;
            self.print_dependencies(&built.dependencies);
            if self.cargo_metadata {
                for line in &built.link {
                    println!("{line}");
                }
            }
            return Ok(built);
        }
        let started = std::time::SystemTime::now();
        // An older stamp must not outlive this build's outputs.
        let _ = std::fs::remove_file(&stamp_path);
        let built = Session::new(self, name, out_dir)?.run()?;
        if let Some(context) = &context {
            // Best effort: without a stamp the next build only takes longer.
            let _ = stamp::write(&stamp_path, context, &built, started);
        }
        Ok(built)
    }

    /// What a no-op rebuild must find unchanged besides the files: these
    /// settings, the variables, the build script, every NVIDIA library
    /// file the search may load and NVIDIA's header folders. `None` when
    /// the search would end at the system loader, whose choice cannot be
    /// seen without loading.
    fn stamp_context(&self, name: &str, variables: &[&'static str]) -> Option<String> {
        let env = cuda_dylib::SearchEnv::from_process();
        let mut libraries = vec![std::env::current_exe().ok()?];
        for spec in [&nvrtc_sys::SPEC, &nvjitlink_sys::SPEC] {
            let found: Vec<PathBuf> = cuda_dylib::candidates(spec, &env)
                .into_iter()
                .map(|candidate| candidate.path)
                .filter(|path| path.is_absolute() && path.is_file())
                .collect();
            if found.is_empty() {
                return None;
            }
            libraries.extend(found);
        }
        // nvcc compiles host-code files, and the fallback's.
        libraries.extend(nvcc::find());
        let headers = cuda_dylib::existing_dirs(
            &["include", "include/cccl"],
            &[
                "nvidia/cuda_runtime/include",
                "nvidia/cuda_cccl/include",
                "nvidia/cu13/include",
            ],
            &env,
        );
        let settings = format!("{name} {} {self:?}", env!("CARGO_PKG_VERSION"));
        Some(stamp::context(&settings, variables, &libraries, &headers))
    }

    /// docs.rs: the modules, with nothing compiled: an empty `FATBIN`,
    /// and the constants of the `extern "C"` kernels a scan of the files
    /// finds (a C++ kernel's mangled name needs a compile).
    fn write_empty(&self, name: &str, out_dir: &Path) -> Result<Built, BuildError> {
        let doc = "Kernels: built without CUDA (docs.rs); the extern \"C\" ones are listed.";
        // `PTX` is there, empty, as `FATBIN` is: the crate's code compiles.
        let ptx = self.write_ptx.then_some("");
        let scanned = |files: &[PathBuf]| -> Vec<String> {
            files
                .iter()
                .filter_map(|file| std::fs::read_to_string(file).ok())
                .flat_map(|text| cuda_compile::source::extern_c_kernels(&text))
                .collect()
        };
        let text = match self.per_file {
            false => names::module(name, doc, None, ptx, &scanned(&self.files)),
            true => {
                let modules: String = self
                    .files
                    .iter()
                    .map(|file| {
                        let kernels = scanned(std::slice::from_ref(file));
                        names::module(&module_name(file), doc, None, ptx, &kernels)
                    })
                    .collect();
                format!("#[doc = {doc:?}]\npub mod {name} {{\n{modules}}}\n")
            }
        };
        let module_path = out_dir.join(format!("{name}.rs"));
        write_if_changed(&module_path, &text)?;
        Ok(Built {
            kernels: scanned(&self.files),
            ..Built::empty(module_path)
        })
    }
}
