//! The pipeline of one build: every (file, arch) compiled, each group of
//! files linked into a fatbin, the fatbins, PTX text and module written.

use std::path::{Path, PathBuf};

use cuda_link::{Arch, LinkTarget, ObjectCode};

use crate::built::Built;
use crate::error::BuildError;
use crate::output::{module_name, write_if_changed};
use crate::session::{Compiled, Session};
use crate::{jobs, names};

impl Session<'_> {
    pub(crate) fn run(self) -> Result<Built, BuildError> {
        let build = self.build;
        let mut compile_archs = self.archs.clone();
        compile_archs.extend(self.ptx);
        compile_archs.sort_by_key(|arch| (arch.sm, arch.suffix()));
        compile_archs.dedup();
        let pairs: Vec<(&Path, Arch)> = build
            .files
            .iter()
            .flat_map(|file| {
                compile_archs
                    .iter()
                    .map(move |&arch| (file.as_path(), arch))
            })
            .collect();
        let (processes, fresh, remote_in_children) = self.compile_in_processes(&compile_archs);
        let remote_before = self.cache.stats().remote_hits;
        let compiled: Vec<Compiled> = jobs::run_all(&pairs, |&(file, arch)| {
            let mut compiled = self.compile(file, arch)?;
            compiled.from_cache &= !fresh.contains(&(file, arch));
            Ok(compiled)
        })
        .into_iter()
        .collect::<Result<_, BuildError>>()?;
        let remote = remote_in_children
            + usize::try_from(self.cache.stats().remote_hits - remote_before).unwrap_or(0);
        let for_pair = |file: &Path, arch: Arch| {
            let index = pairs
                .iter()
                .position(|&(f, a)| f == file && a == arch)
                .expect("every pair was compiled");
            &compiled[index].code
        };

        // Groups of files linked together: all, or each alone; a fatbin
        // each, of a cubin per arch and the PTX.
        let groups: Vec<Vec<&Path>> = match build.per_file {
            true => build.files.iter().map(|f| vec![f.as_path()]).collect(),
            false => vec![build.files.iter().map(PathBuf::as_path).collect()],
        };
        let mut targets: Vec<LinkTarget> =
            self.archs.iter().map(|&a| LinkTarget::Cubin(a)).collect();
        targets.extend(self.ptx.map(LinkTarget::Ptx));
        let linked: Vec<(ObjectCode, Option<ObjectCode>)> = jobs::run_all(&groups, |files| {
            let per_target = targets
                .iter()
                .map(|&target| {
                    let inputs = files
                        .iter()
                        .map(|file| for_pair(file, target.arch()).clone());
                    (target, inputs.collect())
                })
                .collect();
            let name = match build.per_file {
                true => files[0].display().to_string(),
                false => self.name.to_owned(),
            };
            self.link_fatbin(&name, per_target)
        })
        .into_iter()
        .collect::<Result<_, _>>()?;

        let mut fatbins = Vec::new();
        let mut ptx_files = Vec::new();
        let mut kernels = Vec::new();
        let mut modules = Vec::new();
        for (files, (fatbin, ptx)) in groups.iter().zip(&linked) {
            let stem = match build.per_file {
                true => module_name(files[0]),
                false => self.name.to_owned(),
            };
            let (path, listed) = self.write_fatbin(&stem, fatbin)?;
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
        let text = match build.per_file {
            true => format!(
                "#[doc = {:?}]\npub mod {} {{\n{}}}\n",
                format!("Kernels of {} files, a module per file.", build.files.len()),
                self.name,
                modules.concat()
            ),
            false => modules.concat(),
        };
        let module_path = self.out_dir.join(format!("{}.rs", self.name));
        write_if_changed(&module_path, &text)?;

        let first_arch = compile_archs.first().copied();
        let dependencies = self.dependencies(|file| {
            let index = pairs
                .iter()
                .position(|&(f, a)| f == file && Some(a) == first_arch)?;
            compiled[index].dependencies.as_ref()
        });
        build.print_dependencies(&dependencies);
        let cached = compiled.iter().filter(|c| c.from_cache).count();
        self.cache.flush();
        let built = Built {
            module: module_path,
            fatbins,
            ptx_files,
            kernels,
            archs: self.archs.clone(),
            ptx: self.ptx,
            compiled: compiled.len() - cached,
            cached,
            remote: remote.min(cached),
            processes,
            dependencies,
            unchanged: false,
            cache: self.cache.stats(),
        };
        self.report_cache(&built);
        Ok(built)
    }
}
