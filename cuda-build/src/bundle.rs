//! Bundling and output: each group's per-target links into one fatbin,
//! written beside the generated module, with its PTX text on request.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cuda_link::inspect::Compression;
use cuda_link::{Arch, Backend, LinkError, LinkTarget, Linker, LinkerOptions, ObjectCode};

use crate::error::BuildError;
use crate::jobs;
use crate::session::Session;

impl Session<'_> {
    /// Links one group's files into a fatbin through the linker's
    /// multi-arch pipeline, its per-target links under the jobserver and
    /// through the link cache; returns the PTX slot's output too when
    /// [`Build::write_ptx`] asks for the text.
    pub(crate) fn link_fatbin(
        &self,
        name: &str,
        per_target: Vec<(LinkTarget, Vec<ObjectCode>)>,
    ) -> Result<(ObjectCode, Option<ObjectCode>), BuildError> {
        let fail = |error: Box<LinkError>| BuildError::Link {
            name: name.to_owned(),
            error,
        };
        let link = |ptx_isa| -> Result<(ObjectCode, Option<ObjectCode>), Box<LinkError>> {
            // nvJitLink only: a build script never falls back to a driver.
            let mut options = LinkerOptions::default()
                .backend(Backend::NvJitLink)
                .targets(per_target.iter().map(|(target, _)| *target))
                .name(format!("{name}.fatbin"));
            options.ptx_isa = ptx_isa;
            if self.build.compress {
                options.fatbin_compression = Some(Compression::Lz4);
            }
            let mut linker = Linker::new(options)?
                .with_cache(Arc::clone(&self.cache))
                .with_executor(Arc::new(jobs::Jobserver));
            let linked = linker.link_each(per_target.clone())?;
            let ptx = self.build.write_ptx.then(|| {
                linked
                    .iter()
                    .find(|(target, _)| matches!(target, LinkTarget::Ptx(_)))
                    .map(|(_, ptx)| ptx.clone())
            });
            Ok((linker.bundle(&linked)?, ptx.flatten()))
        };
        let error = match link(self.ptx_isa.map(|(isa, _)| isa)) {
            Ok(linked) => return Ok(linked),
            Err(error) => *error,
        };
        match error {
            // The default ISA is best effort: else nvJitLink's, said once.
            LinkError::ForTarget { target, source } => match *source {
                LinkError::PtxIsaTooLow { isa, stated, log }
                    if self.ptx_isa == Some((isa, false)) =>
                {
                    if self.build.cargo_metadata {
                        println!(
                            "cargo:warning={name}: the PTX for {target} keeps PTX ISA {stated}, \
                             which older drivers cannot JIT: ptxas refuses it at {isa}: {log}"
                        );
                    }
                    link(None).map_err(fail)
                }
                source => Err(fail(Box::new(LinkError::ForTarget {
                    target,
                    source: Box::new(source),
                }))),
            },
            error => Err(fail(Box::new(error))),
        }
    }

    /// Writes one group's fatbin to `{stem}.fatbin` unless it holds that
    /// already; returns its path and its kernels.
    pub(crate) fn write_fatbin(
        &self,
        stem: &str,
        fatbin: &ObjectCode,
    ) -> Result<(PathBuf, Vec<String>), BuildError> {
        let path = self.out_dir.join(self.name).join(format!("{stem}.fatbin"));
        let fail = |detail: String| BuildError::Output {
            name: path.display().to_string(),
            detail,
        };
        let kernels = fatbin
            .inspect()
            .map_err(|e| fail(e.to_string()))?
            .kernels()
            .into_iter()
            .map(str::to_owned)
            .collect();
        if std::fs::read(&path).ok().as_deref() != Some(fatbin.as_bytes()) {
            std::fs::create_dir_all(self.out_dir.join(self.name))
                .and_then(|()| fatbin.write_to(&path))
                .map_err(|e| fail(e.to_string()))?;
        }
        Ok((path, kernels))
    }

    /// Writes one group's PTX text to `{stem}.ptx` unless it holds that
    /// already; returns its path.
    pub(crate) fn write_ptx(&self, stem: &str, ptx: &ObjectCode) -> Result<PathBuf, BuildError> {
        let path = self.out_dir.join(self.name).join(format!("{stem}.ptx"));
        let fail = |detail: String| BuildError::Output {
            name: path.display().to_string(),
            detail,
        };
        // `as_bytes` is the text without the NUL nvJitLink and the driver
        // need; UTF-8, for `include_str!`.
        let text = std::str::from_utf8(ptx.as_bytes()).map_err(|e| fail(e.to_string()))?;
        if std::fs::read(&path).ok().as_deref() != Some(text.as_bytes()) {
            std::fs::create_dir_all(self.out_dir.join(self.name))
                .and_then(|()| std::fs::write(&path, text))
                .map_err(|e| fail(e.to_string()))?;
        }
        Ok(path)
    }

    pub(crate) fn module_doc(&self, files: &[&Path]) -> String {
        let files: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
        let archs: Vec<String> = self.archs.iter().map(Arch::to_string).collect();
        let mut parts = Vec::new();
        if !archs.is_empty() {
            parts.push(format!("cubins for {}", archs.join(", ")));
        }
        if let Some(arch) = self.ptx {
            parts.push(format!("PTX for {}", arch.compute()));
        }
        format!(
            "Kernels of {}: {}. Built by cuda-build.",
            files.join(", "),
            parts.join(", ")
        )
    }
}
