//! Multi-architecture linking: one link per target, on all cores, bundled
//! into one fatbin.

use std::sync::{Arc, Mutex};

use super::link_target::LinkTarget;
use super::{LinkError, Linker, OutputKind, Resolved};
use crate::executor::Executor;
use crate::fatbin_writer::FatbinBuilder;
use crate::object_code::ObjectCode;

impl Linker {
    /// Links the inputs once per target of
    /// [`LinkerOptions::targets`](crate::LinkerOptions::targets), each on a
    /// thread of its own (or as the [executor](Self::with_executor) runs
    /// them) and each through the link cache, and bundles the results into
    /// one fatbin, compressed as
    /// [`fatbin_compression`](crate::LinkerOptions::fatbin_compression)
    /// says: a cubin per `sm_XX`, PTX per `compute_XX`.
    ///
    /// # Errors
    /// [`LinkError::NoTargets`] without targets; [`LinkError::ForTarget`]
    /// naming the target whose link failed, with its error; an
    /// [`UnsupportedOption`](LinkError::UnsupportedOption) on the driver
    /// backend, whose links run in the calling thread's context.
    ///
    /// ```no_run
    /// use cuda_link::{Arch, LinkTarget, Linker, LinkerOptions, ObjectCode};
    ///
    /// let options = LinkerOptions::default().targets([
    ///     LinkTarget::Cubin(Arch::sm(80)),
    ///     LinkTarget::Cubin(Arch::sm(90)),
    ///     LinkTarget::Cubin(Arch::sm(100)),
    /// ]);
    /// let mut linker = Linker::new(options)?;
    /// linker.add(&ObjectCode::from_path("kernels.ltoir")?)?;
    /// linker.link_fatbin()?.write_to("kernels.fatbin")?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn link_fatbin(&mut self) -> Result<ObjectCode, LinkError> {
        let targets = self.options.targets.clone();
        let linked =
            self.link_targets(targets.into_iter().map(|target| (target, None)).collect())?;
        self.bundle(&linked)
    }

    /// As [`link_fatbin`](Self::link_fatbin), each target linking inputs of
    /// its own instead of the added ones: source compiled once per arch,
    /// so that each slot's `__CUDA_ARCH__` is its own. Every input is
    /// checked as [`add`](Self::add) checks it.
    ///
    /// # Errors
    /// As `link_fatbin`; [`LinkError::NoTargets`] for an empty list.
    pub fn link_fatbin_each(
        &mut self,
        per_target: Vec<(LinkTarget, Vec<ObjectCode>)>,
    ) -> Result<ObjectCode, LinkError> {
        let linked = self.link_each(per_target)?;
        self.bundle(&linked)
    }

    /// As [`link_fatbin_each`](Self::link_fatbin_each), but the outputs
    /// themselves, a cubin or PTX per target in order, for a caller that
    /// needs one of them as well as the fatbin ([`bundle`](Self::bundle)
    /// makes it): PTX text for loaders that take nothing else.
    ///
    /// # Errors
    /// As `link_fatbin_each`, less the fatbin's own.
    pub fn link_each(
        &mut self,
        per_target: Vec<(LinkTarget, Vec<ObjectCode>)>,
    ) -> Result<Vec<(LinkTarget, ObjectCode)>, LinkError> {
        let mut checked = Vec::with_capacity(per_target.len());
        for (target, inputs) in per_target {
            let mut definitions = super::inputs::Definitions::default();
            for input in &inputs {
                Self::admit(self.backend(), &mut definitions, input).map_err(|error| {
                    LinkError::ForTarget {
                        target: target.to_string(),
                        source: Box::new(error),
                    }
                })?;
            }
            checked.push((target, Some(inputs)));
        }
        self.link_targets(checked)
    }

    /// The fatbin of `linked` outputs, one slot per target, named and
    /// compressed as this linker's options say.
    ///
    /// # Errors
    /// [`LinkError::NoTargets`] for none; [`LinkError::Fatbin`] where an
    /// output does not fit its slot.
    pub fn bundle(&self, linked: &[(LinkTarget, ObjectCode)]) -> Result<ObjectCode, LinkError> {
        let name = self
            .options
            .name
            .clone()
            .unwrap_or_else(|| "linked.fatbin".to_owned());
        Self::bundle_outputs(linked, name, self.options.fatbin_compression)
    }

    /// The fatbin of per-target outputs made anywhere (a link's, or
    /// NVRTC's cubins and PTX), one slot per target, as
    /// [`bundle`](Self::bundle) writes it; no linker needed.
    ///
    /// # Errors
    /// [`LinkError::NoTargets`] for none; [`LinkError::Fatbin`] where an
    /// output does not fit its slot.
    pub fn bundle_outputs(
        linked: &[(LinkTarget, ObjectCode)],
        name: impl Into<String>,
        compression: Option<crate::inspect::Compression>,
    ) -> Result<ObjectCode, LinkError> {
        if linked.is_empty() {
            return Err(LinkError::NoTargets);
        }
        let mut builder = FatbinBuilder::new();
        if let Some(compression) = compression {
            builder = builder.compression(compression);
        }
        for (target, output) in linked {
            builder =
                builder
                    .add(output, Some(target.arch()))
                    .map_err(|error| LinkError::ForTarget {
                        target: target.to_string(),
                        source: Box::new(LinkError::Fatbin(error)),
                    })?;
        }
        builder.build(name).map_err(LinkError::Fatbin)
    }

    /// One link per target, on the executor, of the target's inputs or
    /// (`None`) the added ones.
    fn link_targets(
        &mut self,
        targets: Vec<(LinkTarget, Option<Vec<ObjectCode>>)>,
    ) -> Result<Vec<(LinkTarget, ObjectCode)>, LinkError> {
        if targets.is_empty() {
            return Err(LinkError::NoTargets);
        }
        if matches!(self.backend, Resolved::Driver(_)) {
            return Err(LinkError::UnsupportedOption {
                option: "targets",
                backend: "driver",
            });
        }
        let slots: Vec<LinkTarget> = targets.iter().map(|(target, _)| *target).collect();
        let linkers: Vec<Mutex<Linker>> = targets
            .into_iter()
            .map(|(target, inputs)| {
                let mut linker = self.for_target(target);
                if let Some(inputs) = inputs {
                    linker.inputs = inputs;
                }
                Mutex::new(linker)
            })
            .collect();
        let results = crate::executor::map(&*self.executor, slots.len(), |index| {
            let target = slots[index];
            let output = match target {
                LinkTarget::Cubin(_) => OutputKind::Cubin,
                LinkTarget::Ptx(_) => OutputKind::Ptx,
            };
            let mut linker = linkers[index].lock().unwrap_or_else(|p| p.into_inner());
            linker.link(output)
        });
        slots
            .into_iter()
            .zip(results)
            .map(|(target, linked)| {
                let linked = linked.ok_or(LinkError::NotRun).and_then(|l| l);
                linked
                    .map(|output| (target, output))
                    .map_err(|error| LinkError::ForTarget {
                        target: target.to_string(),
                        source: Box::new(error),
                    })
            })
            .collect()
    }

    /// Runs the per-target links of [`link_fatbin`](Self::link_fatbin),
    /// [`link_fatbin_each`](Self::link_fatbin_each) and
    /// [`link_each`](Self::link_each) on `executor` instead
    /// of a thread each: cuda-build's runs them under cargo's jobserver.
    pub fn with_executor(mut self, executor: Arc<dyn Executor>) -> Self {
        self.executor = executor;
        self
    }

    /// A linker for one target: the same backend, inputs and cache, the
    /// target's arch, no targets.
    fn for_target(&self, target: LinkTarget) -> Linker {
        let mut options = self.options.clone();
        options.arch = Some(target.arch());
        options.targets.clear();
        options.name = Some(format!("{target} link"));
        let mut linker =
            Linker::from_parts(options, self.backend.clone()).expect("from_parts does not fail");
        linker.inputs = self.inputs.clone();
        #[cfg(feature = "cache")]
        {
            linker.cache = self.cache.clone();
        }
        // The libNVVM this linker was given, not the process's: its LTO-IR
        // is what this nvJitLink reads.
        #[cfg(feature = "nvvm")]
        {
            linker.nvvm = self.nvvm.clone();
        }
        linker
    }
}
