//! Bundling and output: each group's slots, as NVRTC made them or as
//! nvJitLink links them, into one fatbin, written beside the generated
//! module, with its PTX text on request.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cuda_link::inspect::Compression;
use cuda_link::{
    Arch, Backend, LinkCache, LinkError, LinkTarget, Linker, LinkerOptions, ObjectCode, PtxIsa,
};

use crate::error::BuildError;
use crate::jobs;
use crate::session::Session;

/// One slot of a group's fatbin: its code as NVRTC made it, or the
/// LTO-IR nvJitLink links into it.
pub(crate) enum SlotCode {
    Compiled(ObjectCode),
    Linked(Vec<ObjectCode>),
}

impl Session<'_> {
    /// One group's fatbin: each slot's code, as NVRTC made it or linked
    /// through the linker's multi-arch pipeline (its links under the
    /// jobserver and through the link cache), with the PTX slot's ISA
    /// lowered as [`Build::ptx_isa`] says; returns the PTX slot's code too
    /// when [`Build::write_ptx`] asks for the text.
    ///
    /// [`Build::ptx_isa`]: crate::Build::ptx_isa
    /// [`Build::write_ptx`]: crate::Build::write_ptx
    pub(crate) fn fatbin(
        &self,
        name: &str,
        slots: &[(LinkTarget, SlotCode)],
    ) -> Result<(ObjectCode, Option<ObjectCode>), BuildError> {
        let fail = |error: Box<LinkError>| BuildError::Link {
            name: name.to_owned(),
            error,
        };
        let error = match self.slot_codes(name, slots, self.ptx_isa.map(|(isa, _)| isa)) {
            Ok(codes) => return self.bundle(name, codes).map_err(fail),
            Err(error) => *error,
        };
        let codes = match error {
            // The default ISA is best effort: else the one it was written
            // with, said once.
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
                    self.slot_codes(name, slots, None).map_err(fail)?
                }
                // NVRTC's PTX, which only nvJitLink's ptxas could check at
                // the lower ISA.
                LinkError::NvJitLinkUnavailable(error)
                    if matches!(self.ptx_isa, Some((_, false))) =>
                {
                    if self.build.cargo_metadata {
                        println!(
                            "cargo:warning={name}: the PTX for {target} keeps the PTX ISA NVRTC \
                             wrote, which older drivers may not JIT: lowering it needs nvJitLink \
                             to check it ({error})"
                        );
                    }
                    self.slot_codes(name, slots, None).map_err(fail)?
                }
                source => {
                    return Err(fail(Box::new(LinkError::ForTarget {
                        target,
                        source: Box::new(source),
                    })));
                }
            },
            error => return Err(fail(Box::new(error))),
        };
        self.bundle(name, codes).map_err(fail)
    }

    /// Each slot's code, in the slots' order: the linked ones linked, the
    /// PTX lowered to `ptx_isa`.
    fn slot_codes(
        &self,
        name: &str,
        slots: &[(LinkTarget, SlotCode)],
        ptx_isa: Option<PtxIsa>,
    ) -> Result<Vec<(LinkTarget, ObjectCode)>, Box<LinkError>> {
        let to_link: Vec<(LinkTarget, Vec<ObjectCode>)> = slots
            .iter()
            .filter_map(|(target, code)| match code {
                SlotCode::Linked(inputs) => Some((*target, inputs.clone())),
                SlotCode::Compiled(_) => None,
            })
            .collect();
        let mut linked = match to_link.is_empty() {
            true => Vec::new(),
            false => {
                // nvJitLink only: a build script never falls back to a driver.
                let mut options = LinkerOptions::default()
                    .backend(Backend::NvJitLink)
                    .targets(to_link.iter().map(|(target, _)| *target))
                    .name(format!("{name}.fatbin"));
                options.ptx_isa = ptx_isa;
                Linker::new(options)?
                    .with_cache(Arc::clone(&self.cache))
                    .with_executor(Arc::new(jobs::Jobserver))
                    .link_each(to_link)?
            }
        };
        let mut codes = Vec::with_capacity(slots.len());
        for (target, code) in slots {
            let code = match code {
                SlotCode::Linked(_) => {
                    let at = linked.iter().position(|(t, _)| t == target);
                    let Some(at) = at else {
                        return Err(Box::new(LinkError::NotRun));
                    };
                    linked.swap_remove(at).1
                }
                SlotCode::Compiled(code) => match (target, ptx_isa) {
                    (LinkTarget::Ptx(arch), Some(isa)) => lowered(code, *arch, isa, &self.cache)
                        .map_err(|source| LinkError::ForTarget {
                            target: target.to_string(),
                            source,
                        })?,
                    _ => code.clone(),
                },
            };
            codes.push((*target, code));
        }
        Ok(codes)
    }

    /// The fatbin of one group's slot codes, named and compressed as the
    /// build says.
    fn bundle(
        &self,
        name: &str,
        codes: Vec<(LinkTarget, ObjectCode)>,
    ) -> Result<(ObjectCode, Option<ObjectCode>), Box<LinkError>> {
        let compression = self.build.compress.then_some(Compression::Lz4);
        let fatbin = Linker::bundle_outputs(&codes, format!("{name}.fatbin"), compression)?;
        let ptx = self.build.write_ptx.then(|| {
            codes
                .into_iter()
                .find(|(target, _)| matches!(target, LinkTarget::Ptx(_)))
                .map(|(_, ptx)| ptx)
        });
        Ok((fatbin, ptx.flatten()))
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

/// NVRTC's PTX for `arch`, lowered to `isa` and checked by ptxas where it
/// states a newer ISA; nvJitLink is loaded only then.
fn lowered(
    ptx: &ObjectCode,
    arch: Arch,
    isa: PtxIsa,
    cache: &Arc<LinkCache>,
) -> Result<ObjectCode, Box<LinkError>> {
    if PtxIsa::stated_by(ptx.as_bytes()).is_some_and(|stated| stated <= isa) {
        return Ok(ptx.clone());
    }
    let mut options = LinkerOptions::for_arch(arch).backend(Backend::NvJitLink);
    options.ptx_isa = Some(isa);
    Ok(Linker::new(options)?
        .with_cache(Arc::clone(cache))
        .lower_ptx_isa(ptx.clone())?)
}
