//! The pipeline of one build: every (file, unit) compiled, each group of
//! files made into a fatbin (a file alone straight from NVRTC, several
//! linked), the fatbins, PTX text and module written.

use std::path::{Path, PathBuf};

use cuda_compile::ProgramOptions;
use cuda_link::{LinkTarget, ObjectCode, ObjectKind};

use crate::built::Built;
use crate::bundle::SlotCode;
use crate::error::BuildError;
use crate::output::{module_name, write_if_changed};
use crate::session::{Compiled, Session, Unit};
use crate::{jobs, names};

/// The NVRTC stage's outcome: every (file, unit) of the files that
/// compiled, in order, with what it made.
struct DeviceCompiles {
    units: Vec<(PathBuf, Unit)>,
    compiled: Vec<Compiled>,
    processes: usize,
    remote: usize,
}

impl Session<'_> {
    /// The whole build: the NVRTC stage and the nvcc stage (every failing
    /// file of both reported together), then the fatbins, the module and
    /// the archive.
    pub(crate) fn run(mut self) -> Result<Built, BuildError> {
        let build = self.build;
        if build.cargo_metadata && !self.device_files.is_empty() {
            // nvcc gets every flag; NVRTC what the table lets through.
            for dropped in ProgramOptions::default().nvcc_options(&build.flags) {
                println!(
                    "cargo:warning=cuda-build: `{}` is left out of NVRTC's options: {}",
                    dropped.option, dropped.why
                );
            }
        }
        let mut errors = Vec::new();
        let device = self.compile_device_files(&mut errors);
        let host_files: Vec<&Path> = self.host_files.iter().map(PathBuf::as_path).collect();
        let host = match host_files.is_empty() {
            true => None,
            false => match self.build_host_files(&host_files) {
                Ok(library) => Some(library),
                Err(BuildError::Files { errors: each }) => {
                    errors.extend(each);
                    None
                }
                Err(error) => {
                    errors.push(error);
                    None
                }
            },
        };
        if errors.len() == 1 {
            return Err(errors.remove(0));
        }
        if !errors.is_empty() {
            return Err(BuildError::Files { errors });
        }
        let files = &self.device_files;
        // Groups of files linked together: all, or each alone; a fatbin
        // each, of a cubin per arch and the PTX.
        let groups: Vec<Vec<&Path>> = match build.per_file {
            true => files.iter().map(|f| vec![f.as_path()]).collect(),
            false if files.is_empty() => Vec::new(),
            false => vec![files.iter().map(PathBuf::as_path).collect()],
        };
        let targets = self.targets();
        let linked: Vec<(ObjectCode, Option<ObjectCode>)> = jobs::run_all(&groups, |files| {
            let slots: Vec<(LinkTarget, SlotCode)> = targets
                .iter()
                .map(|&target| (target, device.slot_code(files, target)))
                .collect();
            let name = match build.per_file {
                true => files[0].display().to_string(),
                false => self.name.to_owned(),
            };
            self.fatbin(&name, &slots)
        })
        .into_iter()
        .collect::<Result<_, _>>()?;

        let mut fatbins = Vec::new();
        let mut ptx_files = Vec::new();
        let mut kernels = Vec::new();
        let mut modules = Vec::new();
        let mut empty = Vec::new();
        for (files, (fatbin, ptx)) in groups.iter().zip(&linked) {
            let stem = match build.per_file {
                true => module_name(files[0]),
                false => self.name.to_owned(),
            };
            let (path, listed) = self.write_fatbin(&stem, fatbin)?;
            // Each file that defines kernels must yield one, not only the
            // group: a file whose template kernels nothing NVRTC sees
            // instantiates is lost among its neighbours' kernels.
            empty.extend(
                files
                    .iter()
                    .filter(|file| listed.is_empty() || !yields_a_kernel(file, &listed))
                    .map(|f| f.to_path_buf()),
            );
            let doc = self.module_doc(files);
            // Next to the generated file: `include_bytes!` in it resolves
            // relative to it, whatever the path's spelling.
            let relative = format!("{}/{stem}.fatbin", self.name);
            let ptx_relative = match ptx {
                Some(ptx) => {
                    ptx_files.push(self.write_ptx(&stem, ptx)?);
                    Some(format!("{}/{stem}.ptx", self.name))
                }
                None => None,
            };
            modules.push(names::module(
                &stem,
                &doc,
                Some(&relative),
                ptx_relative.as_deref(),
                &listed,
            ));
            kernels.extend(listed);
            fatbins.push(path);
        }
        if !empty.is_empty() {
            return Err(BuildError::NoKernels { files: empty });
        }
        if groups.is_empty() {
            let doc = format!(
                "No kernels in a fatbin: every file has host code, compiled by nvcc into lib{}.a.",
                self.name
            );
            let ptx = build.write_ptx.then_some("");
            modules.push(names::module(self.name, &doc, None, ptx, &[]));
        }
        let text = match build.per_file {
            true => format!(
                "#[doc = {:?}]\npub mod {} {{\n{}}}\n",
                format!("Kernels of {} files, a module per file.", files.len()),
                self.name,
                modules.concat()
            ),
            false => modules.concat(),
        };
        let module_path = self.out_dir.join(format!("{}.rs", self.name));
        write_if_changed(&module_path, &text)?;

        let mut dependencies = self.dependencies(|file| {
            let index = device.units.iter().position(|(f, _)| f == file)?;
            device.compiled[index].dependencies.as_ref()
        });
        if let Some(host) = &host {
            for path in self.host_files.iter().chain(&host.dependencies) {
                if !dependencies.contains(path) {
                    dependencies.push(path.clone());
                }
            }
        }
        build.print_dependencies(&dependencies);
        if build.cargo_metadata {
            for line in host.iter().flat_map(|h| &h.link) {
                println!("{line}");
            }
        }
        let cached = device.compiled.iter().filter(|c| c.from_cache).count();
        self.cache.flush();
        let built = Built {
            module: module_path,
            fatbins,
            ptx_files,
            archive: host.as_ref().map(|h| h.archive.clone()),
            link: host.as_ref().map(|h| h.link.clone()).unwrap_or_default(),
            nvcc_compiled: host.as_ref().map_or(0, |h| h.compiled),
            nvcc_cached: host.as_ref().map_or(0, |h| h.cached),
            kernels,
            archs: self.archs.clone(),
            ptx: self.ptx,
            compiled: device.compiled.len() - cached,
            cached,
            remote: device.remote.min(cached),
            processes: device.processes,
            dependencies,
            unchanged: false,
            cache: self.cache.stats(),
        };
        self.report_cache(&built);
        Ok(built)
    }

    /// Every (file, unit) of the device files through NVRTC; a failing
    /// file is left out, its first error in `errors`.
    fn compile_device_files(&mut self, errors: &mut Vec<BuildError>) -> DeviceCompiles {
        let units = self.units();
        let (processes, fresh, remote_in_children) = self.compile_in_processes(&units);
        let remote_before = self.cache.stats().remote_hits;
        let indices: Vec<usize> = (0..units.len()).collect();
        let results: Vec<Result<Compiled, BuildError>> = jobs::run_all(&indices, |&index| {
            let (file, unit) = &units[index];
            let mut compiled = self.compile(file, *unit)?;
            compiled.from_cache &= !fresh.contains(&index);
            Ok(compiled)
        });
        let remote = remote_in_children
            + usize::try_from(self.cache.stats().remote_hits - remote_before).unwrap_or(0);
        let mut failed: Vec<PathBuf> = Vec::new();
        for ((file, _), result) in units.iter().zip(&results) {
            if result.is_ok() {
                continue;
            }
            if failed.contains(file) {
                continue;
            }
            failed.push(file.clone());
        }
        let mut kept = DeviceCompiles {
            units: Vec::new(),
            compiled: Vec::new(),
            processes,
            remote,
        };
        // Each failing file's first error.
        let mut reported: Vec<PathBuf> = Vec::new();
        for (unit, result) in units.into_iter().zip(results) {
            match result {
                Ok(compiled) if !failed.contains(&unit.0) => {
                    kept.units.push(unit);
                    kept.compiled.push(compiled);
                }
                Ok(_) => {}
                Err(error) if !reported.contains(&unit.0) => {
                    reported.push(unit.0);
                    errors.push(error);
                }
                Err(_) => {}
            }
        }
        self.device_files.retain(|file| !failed.contains(file));
        kept
    }
}

impl DeviceCompiles {
    /// What makes `target`'s slot of a group's fatbin: a file's own code
    /// for it when the file is alone and NVRTC made that code, else the
    /// group's LTO-IR for the target's arch, to link.
    fn slot_code(&self, files: &[&Path], target: LinkTarget) -> SlotCode {
        let compiled = |file: &Path, wanted: &dyn Fn(Unit) -> bool| {
            let index = self
                .units
                .iter()
                .position(|(f, u)| f == file && wanted(*u))?;
            Some(&self.compiled[index])
        };
        let made = match target {
            LinkTarget::Cubin(_) => ObjectKind::Cubin,
            LinkTarget::Ptx(_) => ObjectKind::Ptx,
        };
        if let [file] = files
            && let Some(compiled) = compiled(file, &|unit| unit.makes(target))
        {
            let code = match (target, &compiled.ptx) {
                (LinkTarget::Ptx(_), Some(ptx)) => ptx,
                _ => &compiled.code,
            };
            if code.kind() == made {
                return SlotCode::Compiled(code.clone());
            }
        }
        // LTO-IR, from NVRTC, or nvcc's (in a fatbin) where it stood in.
        let inputs = files.iter().filter_map(|file| {
            compiled(file, &|unit| unit == Unit::Ltoir(target.arch()))
                .or_else(|| compiled(file, &|unit| unit.makes(target)))
                .map(|compiled| compiled.code.clone())
        });
        SlotCode::Linked(inputs.collect())
    }
}

/// Whether `file`, whose kernels the build's `listed` (mangled) holds
/// among others, defines none or yields one of those it defines (by its
/// unqualified name: `scale` of `void ns::scale<float>(float*)`).
fn yields_a_kernel(file: &Path, listed: &[String]) -> bool {
    let Ok(text) = std::fs::read_to_string(file) else {
        return true;
    };
    let defined = cuda_compile::source::global_functions(&text);
    if defined.is_empty() {
        return true;
    }
    listed.iter().any(|kernel| {
        let shown = cuda_link::demangle(kernel).unwrap_or_else(|| kernel.clone());
        defined
            .iter()
            .any(|name| names::unqualified(&shown) == name)
    })
}
