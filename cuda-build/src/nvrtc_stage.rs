//! The NVRTC stage: every (file, unit) compiled, to LTO-IR for a group's
//! link or straight to a slot's code for a file alone in its group,
//! spread over child processes into the compile cache first where that
//! can be done, then compiled here from it; nvcc stands in where the
//! fallback is on.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use cuda_compile::{CompileError, Compiler, HostCode, Program, ProgramOptions, Target, Warning};
use cuda_link::{ObjectCode, PtxIsa};

use crate::error::BuildError;
use crate::session::{Compiled, Session, Unit};
use crate::{nvcc, processes};

impl Session<'_> {
    /// Compiles every (file, unit) into the compile cache in child
    /// processes as well as this one, when that can be done (see
    /// `processes`), the largest files first, each process taking the next
    /// unit as it finishes one. Returns how many processes compiled, the
    /// indices of the units they compiled rather than found cached, and
    /// how many came from the shared store.
    pub(crate) fn compile_in_processes(
        &self,
        units: &[(PathBuf, Unit)],
    ) -> (usize, HashSet<usize>, usize) {
        const FRESH: u8 = 1;
        const REMOTE: u8 = 2;
        let Some(compiler) = &self.compiler else {
            return (1, HashSet::new(), 0);
        };
        if !self.cache.is_writable() {
            return (1, HashSet::new(), 0);
        }
        // The longest compiles start first, so that none starts last.
        let mut order: Vec<usize> = (0..units.len()).collect();
        // One stat per unit, not one per comparison.
        order.sort_by_cached_key(|&index| std::cmp::Reverse(source_size(&units[index].0)));
        // Each process compiles one file at a time, so the remote hits
        // counted around a compile are its own.
        let into_cache = |&index: &usize| {
            let (file, unit) = &units[index];
            let remote_before = self.cache.stats().remote_hits;
            let compiled = Program::from_path(file).ok().and_then(|program| {
                compile_unit(compiler, &program, *unit, &self.options(*unit)).ok()
            });
            match compiled {
                Some((compiled, _)) if !compiled.from_cache => FRESH,
                Some(_) if self.cache.stats().remote_hits > remote_before => REMOTE,
                _ => 0,
            }
        };
        // A child's remote writes finish before it exits.
        let flush = || self.cache.flush();
        // NVIDIA's header folders (NVRTC 13.3+ installs its bundled ones)
        // are set up once, before the fork, rather than by every child.
        let set_up_headers = || {
            if let Some((file, unit)) = units.first()
                && let Ok(program) = Program::from_path(file)
            {
                let _ = compiler.dependencies(&program, &self.options(*unit));
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
        match processes::spread(&order, into_cache, set_up_headers, flush, remove_pch) {
            Some(spread) => {
                let marked = |wanted: u8| {
                    spread
                        .marked
                        .iter()
                        .filter(move |(_, mark)| *mark == wanted)
                        .filter_map(|(at, _)| order.get(*at).copied())
                };
                let remote = marked(REMOTE).count();
                (spread.processes, marked(FRESH).collect(), remote)
            }
            None => (1, HashSet::new(), 0),
        }
    }

    /// The program options of one compile: LTO-IR is relocatable, to be
    /// linked; a slot's code is whole-program, as nvcc compiles a file.
    /// NVRTC optimises a slot's code in parallel (`--split-compile`),
    /// unless the options set it.
    pub(crate) fn options(&self, unit: Unit) -> ProgramOptions {
        let mut options = self
            .build
            .options
            .clone()
            .arch(unit.arch())
            .relocatable_device_code(matches!(unit, Unit::Ltoir(_)));
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
        if options.split_compile.is_none() && unit.target() != Target::Ltoir {
            options.split_compile = Some(crate::session::SPLIT_THREADS);
        }
        options
    }

    /// `file` to `unit`: NVRTC, else (opted in) nvcc's LTO-IR, which the
    /// group's link then makes each slot's code of.
    pub(crate) fn compile(&self, file: &Path, unit: Unit) -> Result<Compiled, BuildError> {
        let Some(compiler) = &self.compiler else {
            return self.with_nvcc(file, unit);
        };
        let program = Program::from_path(file).map_err(|error| BuildError::Compile {
            file: file.to_path_buf(),
            arch: unit.name(),
            error: Box::new(error),
        })?;
        match compile_unit(compiler, &program, unit, &self.options(unit)) {
            Ok((compiled, ptx)) => {
                if self.build.cargo_metadata && self.build.warnings {
                    let mut warned = self.warned.lock().unwrap_or_else(|p| p.into_inner());
                    // PTX newer than this machine's driver takes is lowered
                    // to the slot's ISA before it is bundled: said only
                    // where that ISA is newer than the driver's too.
                    let lowered = |warning: &Warning| match (warning, self.ptx_isa) {
                        (Warning::PtxNewerThanDriver { driver_isa, .. }, Some((isa, _))) => {
                            driver_isa
                                .parse::<PtxIsa>()
                                .is_ok_and(|driver| isa <= driver)
                        }
                        _ => false,
                    };
                    for warning in compiled.warnings.iter().filter(|w| !lowered(w)) {
                        // NVRTC's lines start with the file's name.
                        if warned.insert(warning.to_string()) {
                            println!("cargo:warning={warning}");
                        }
                    }
                }
                Ok(Compiled {
                    code: compiled.code,
                    ptx,
                    from_cache: compiled.from_cache,
                    dependencies: Some(compiled.dependencies),
                })
            }
            Err(CompileError::Compilation { .. })
                if self.build.nvcc_fallback && self.nvcc.is_some() =>
            {
                self.with_nvcc(file, unit)
            }
            Err(error @ CompileError::Compilation { .. }) => {
                let options = self.options(unit);
                // The definition of the first launcher, where the scan
                // finds one, else what NVRTC's log points at.
                let host = HostCode::scan(compiler, &program, &options)
                    .or_else(|| HostCode::find(compiler, &program, &options, &error));
                // CUB's umbrella header brings its host-side dispatch, which
                // no NVRTC compiles: such a file of kernels is nvcc's, where
                // nvcc is found.
                if host.is_none() && includes_whole_cub(program.source()) && self.nvcc.is_some() {
                    return self.with_nvcc(file, unit);
                }
                Err(match host {
                    Some(host) => BuildError::HostCode {
                        file: host.file,
                        line: host.line,
                        construct: host.construct,
                        error: Box::new(error),
                    },
                    // The same, and no nvcc.
                    None if includes_whole_cub(program.source()) => BuildError::WholeCub {
                        file: file.to_path_buf(),
                        error: Box::new(error),
                    },
                    None => BuildError::Compile {
                        file: file.to_path_buf(),
                        arch: unit.name(),
                        error: Box::new(error),
                    },
                })
            }
            Err(error) => Err(BuildError::Compile {
                file: file.to_path_buf(),
                arch: unit.name(),
                error: Box::new(error),
            }),
        }
    }

    /// `file`'s LTO-IR for `unit`'s arch from nvcc, in a fatbin.
    pub(crate) fn with_nvcc(&self, file: &Path, unit: Unit) -> Result<Compiled, BuildError> {
        let nvcc = self.nvcc.as_deref().ok_or_else(|| BuildError::Nvcc {
            file: file.to_path_buf(),
            detail: "nvcc was not found (NVCC, CUDA_HOME/bin, PATH)".into(),
        })?;
        // A file per unit: a cubin's and the PTX's of one arch run at once.
        let tag = match unit {
            Unit::Ltoir(_) => String::new(),
            Unit::Slot(_) | Unit::CubinAndPtx(_) => format!(".{}", unit.name().replace(' ', "_")),
        };
        let stem = file.file_stem().unwrap_or_default().to_string_lossy();
        let arch = unit.arch();
        let output = self.out_dir.join(format!("{stem}.nvcc.{arch}{tag}.fatbin"));
        let code = nvcc::compile_ltoir(
            nvcc,
            file,
            arch,
            &self.build.includes,
            &self.build.defines,
            &self.build.undefines,
            &output,
        )?;
        Ok(Compiled {
            code,
            ptx: None,
            from_cache: false,
            dependencies: None,
        })
    }
}

/// Whether `source` includes `<cub/cub.cuh>`, as the one reader of CUDA
/// source reads its includes.
fn includes_whole_cub(source: &str) -> bool {
    let includes = cuda_compile::source::includes(source);
    includes.is_ok_and(|found| found.iter().any(|include| include.name == "cub/cub.cuh"))
}

/// One unit's compile: its output, and a cubin's PTX for
/// [`Unit::CubinAndPtx`].
fn compile_unit(
    compiler: &Compiler,
    program: &Program,
    unit: Unit,
    options: &ProgramOptions,
) -> Result<(cuda_compile::Compiled, Option<ObjectCode>), CompileError> {
    match unit {
        Unit::CubinAndPtx(_) => compiler
            .compile_cubin_and_ptx(program, options)
            .map(|(compiled, ptx)| (compiled, Some(ptx))),
        _ => compiler
            .compile(program, unit.target(), options)
            .map(|compiled| (compiled, None)),
    }
}

/// A file's size in bytes, 0 when it cannot be read: what orders the
/// compiles, largest first.
fn source_size(file: &Path) -> u64 {
    std::fs::metadata(file).map_or(0, |metadata| metadata.len())
}
