//! The NVRTC stage: every (file, arch) to LTO-IR, spread over child
//! processes into the compile cache first where that can be done, then
//! compiled here from it; nvcc stands in where the fallback is on.

use std::collections::HashSet;
use std::path::Path;

use cuda_compile::{CompileError, HostCode, Program, ProgramOptions, Target};
use cuda_link::Arch;

use crate::error::BuildError;
use crate::session::{Compiled, Session};
use crate::{nvcc, processes};

impl Session<'_> {
    /// Compiles every (file, arch) into the compile cache in child
    /// processes as well as this one, when that can be done (see
    /// `processes`), arch by arch so that each process reuses its
    /// precompiled headers. Returns how many processes compiled, and the
    /// pairs they compiled rather than found cached.
    pub(crate) fn compile_in_processes<'p>(
        &'p self,
        archs: &[Arch],
    ) -> (usize, HashSet<(&'p Path, Arch)>, usize) {
        const FRESH: u8 = 1;
        const REMOTE: u8 = 2;
        let Some(compiler) = &self.compiler else {
            return (1, HashSet::new(), 0);
        };
        if !self.cache.is_writable() {
            return (1, HashSet::new(), 0);
        }
        let by_arch: Vec<(&Path, Arch)> = archs
            .iter()
            .flat_map(|&arch| {
                self.device_files
                    .iter()
                    .map(move |file| (file.as_path(), arch))
            })
            .collect();
        // Each process compiles one file at a time, so the remote hits
        // counted around a compile are its own.
        let into_cache = |&(file, arch): &(&Path, Arch)| {
            let remote_before = self.cache.stats().remote_hits;
            let compiled = Program::from_path(file).ok().and_then(|program| {
                compiler
                    .compile(&program, Target::Ltoir, &self.options(arch))
                    .ok()
            });
            match compiled {
                Some(compiled) if !compiled.from_cache => FRESH,
                Some(_) if self.cache.stats().remote_hits > remote_before => REMOTE,
                _ => 0,
            }
        };
        // A child's remote writes finish before it exits.
        let flush = || self.cache.flush();
        // NVIDIA's header folders (NVRTC 13.3+ installs its bundled ones)
        // are set up once, before the fork, rather than by every child.
        let set_up_headers = || {
            if let (Some(file), Some(&arch)) = (self.device_files.first(), archs.first())
                && let Ok(program) = Program::from_path(file)
            {
                let _ = compiler.dependencies(&program, &self.options(arch));
            }
        };
        // A child's precompiled headers, in its folder of the PCH folder
        // (named by its id), are removed however it ended.
        let pch_root = compiler
            .precompiled_headers_dir()
            .and_then(|dir| dir.parent().map(Path::to_path_buf));
        let remove_pch = |pid: u32| {
            if let Some(root) = &pch_root {
                let _ = std::fs::remove_dir_all(root.join(pid.to_string()));
            }
        };
        match processes::spread(&by_arch, into_cache, set_up_headers, flush, remove_pch) {
            Some(spread) => {
                let marked = |wanted: u8| {
                    spread
                        .marked
                        .iter()
                        .filter(move |(_, mark)| *mark == wanted)
                        .filter_map(|(index, _)| by_arch.get(*index).copied())
                };
                let remote = marked(REMOTE).count();
                (spread.processes, marked(FRESH).collect(), remote)
            }
            None => (1, HashSet::new(), 0),
        }
    }

    /// The program options of one compile.
    pub(crate) fn options(&self, arch: Arch) -> ProgramOptions {
        let mut options = self
            .build
            .options
            .clone()
            .arch(arch)
            .relocatable_device_code(true);
        options.include_path.extend(
            self.build
                .includes
                .iter()
                .map(|dir| dir.display().to_string()),
        );
        options
            .define_macro
            .extend(self.build.defines.iter().cloned());
        options
            .undefine_macro
            .extend(self.build.undefines.iter().cloned());
        // nvcc's spellings too; what they drop was said once per build.
        let _ = options.nvcc_options(&self.build.flags);
        options
    }

    /// `file` for `arch` to LTO-IR: NVRTC, else (opted in) nvcc.
    pub(crate) fn compile(&self, file: &Path, arch: Arch) -> Result<Compiled, BuildError> {
        let Some(compiler) = &self.compiler else {
            return self.with_nvcc(file, arch);
        };
        let program = Program::from_path(file).map_err(|error| BuildError::Compile {
            file: file.to_path_buf(),
            arch: arch.to_string(),
            error: Box::new(error),
        })?;
        match compiler.compile(&program, Target::Ltoir, &self.options(arch)) {
            Ok(compiled) => {
                if self.build.cargo_metadata && self.build.warnings {
                    let mut warned = self.warned.lock().unwrap_or_else(|p| p.into_inner());
                    for warning in &compiled.warnings {
                        // NVRTC's lines start with the file's name.
                        if warned.insert(warning.to_string()) {
                            println!("cargo:warning={warning}");
                        }
                    }
                }
                Ok(Compiled {
                    code: compiled.code,
                    from_cache: compiled.from_cache,
                    dependencies: Some(compiled.dependencies),
                })
            }
            Err(CompileError::Compilation { .. })
                if self.build.nvcc_fallback && self.nvcc.is_some() =>
            {
                self.with_nvcc(file, arch)
            }
            Err(error @ CompileError::Compilation { .. }) => {
                let options = self.options(arch);
                // The definition of the first launcher, where the scan
                // finds one, else what NVRTC's log points at.
                let host = HostCode::scan(compiler, &program, &options)
                    .or_else(|| HostCode::find(compiler, &program, &options, &error));
                Err(match host {
                    Some(host) => BuildError::HostCode {
                        file: host.file,
                        line: host.line,
                        construct: host.construct,
                        error: Box::new(error),
                    },
                    // CUB's umbrella header brings its host-side dispatch.
                    None if includes_whole_cub(program.source()) => BuildError::WholeCub {
                        file: file.to_path_buf(),
                        error: Box::new(error),
                    },
                    None => BuildError::Compile {
                        file: file.to_path_buf(),
                        arch: arch.to_string(),
                        error: Box::new(error),
                    },
                })
            }
            Err(error) => Err(BuildError::Compile {
                file: file.to_path_buf(),
                arch: arch.to_string(),
                error: Box::new(error),
            }),
        }
    }

    pub(crate) fn with_nvcc(&self, file: &Path, arch: Arch) -> Result<Compiled, BuildError> {
        let nvcc = self.nvcc.as_deref().ok_or_else(|| BuildError::Nvcc {
            file: file.to_path_buf(),
            detail: "nvcc was not found (NVCC, CUDA_HOME/bin, PATH)".into(),
        })?;
        let code = nvcc::compile_ltoir(
            nvcc,
            file,
            arch,
            &self.build.includes,
            &self.build.defines,
            &self.build.undefines,
            &self.out_dir,
        )?;
        Ok(Compiled {
            code,
            from_cache: false,
            dependencies: None,
        })
    }
}

/// Whether `source` includes `<cub/cub.cuh>` (outside a comment).
fn includes_whole_cub(source: &str) -> bool {
    source.lines().any(|line| {
        let line = line.trim_start();
        line.starts_with('#') && line.contains("include") && line.contains("cub/cub.cuh")
    })
}
