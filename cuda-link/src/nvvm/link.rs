//! NVVM IR inputs of a link: each compiled by libNVVM to LTO-IR for the
//! link's arch, with libdevice when it calls it, then linked with the
//! other inputs as LTO-IR.

use std::sync::Arc;

use bytes::Bytes;
use nvvm_sys::Nvvm;

use super::{LibdeviceNeed, NvvmFailure, NvvmRequest};
use crate::arch::Arch;
use crate::kind::ObjectKind;
use crate::linker::{LinkError, Linker};
use crate::object_code::ObjectCode;

impl Linker {
    /// Compiles NVVM IR inputs with this libNVVM (by default, the one
    /// [`Nvvm::global`] finds).
    pub fn with_nvvm(mut self, library: Arc<Nvvm>) -> Self {
        self.nvvm = Some(library);
        self
    }

    /// The libNVVM NVVM IR inputs are compiled with, loaded on first use;
    /// `input` names the input that needs it.
    fn nvvm(&self, input: &str) -> Result<Arc<Nvvm>, LinkError> {
        match &self.nvvm {
            Some(library) => Ok(Arc::clone(library)),
            None => Nvvm::global()
                .map(Arc::clone)
                .map_err(|error| LinkError::NvvmUnavailable {
                    input: input.to_owned(),
                    error,
                }),
        }
    }

    /// What the cache key adds for NVVM IR inputs: libNVVM's version and
    /// file, and libdevice's (they decide the LTO-IR the link reads).
    #[cfg(feature = "cache")]
    pub(crate) fn nvvm_identity(&self) -> Option<String> {
        let first = self
            .inputs()
            .iter()
            .find(|input| input.kind() == ObjectKind::NvvmIr)?;
        let identity = match self.nvvm(first.name()) {
            Ok(lib) => {
                let symbol = lib.nvvmVersion.map(|f| f as *const std::ffi::c_void);
                let portable = self.cache().is_some_and(|cache| cache.portable_keys());
                let file = crate::cache::library_identity(symbol, lib.path(), portable)
                    .unwrap_or_else(|why| format!("{} ({why})", crate::cache::UNIDENTIFIED));
                let libdevice =
                    libdevice_found(&lib).map_or_else(|| "none".to_owned(), |(_, digest)| digest);
                format!(
                    "libNVVM {} | {file} | libdevice {libdevice} | {}",
                    lib.version_string(),
                    super::PREPARATION
                )
            }
            Err(error) => format!("{} ({error})", crate::cache::UNIDENTIFIED),
        };
        Some(identity)
    }

    /// The inputs with the NVVM IR ones compiled to LTO-IR for `arch`,
    /// together, in the order they were added, as numba compiles a
    /// kernel's modules: compiled alone, a module would lose the
    /// `linkonce` definitions that only the others call. The LTO-IR takes
    /// the first NVVM IR input's place. `None` when there is none.
    pub(crate) fn lowered_nvvm_inputs(
        &self,
        arch: Arch,
    ) -> Result<Option<Vec<ObjectCode>>, LinkError> {
        let (ir, others): (Vec<&ObjectCode>, Vec<&ObjectCode>) = self
            .inputs()
            .iter()
            .partition(|input| input.kind() == ObjectKind::NvvmIr);
        let Some(first) = ir.first() else {
            return Ok(None);
        };
        let names = ir
            .iter()
            .map(|input| input.name())
            .collect::<Vec<_>>()
            .join(", ");
        let lib = self.nvvm(&names)?;
        // What bitcode leaves unresolved, nvJitLink names.
        let libdevice = match LibdeviceNeed::of_all(ir.iter().copied()) {
            LibdeviceNeed::Required => Some(libdevice_for(&lib, &names)?),
            LibdeviceNeed::IfFound => libdevice_found(&lib).map(|(bytes, _)| bytes),
            LibdeviceNeed::NotNeeded => None,
        };
        let modules: Vec<ObjectCode> = ir.iter().map(|input| (*input).clone()).collect();
        let options = vec![format!("-arch={}", arch.compute()), "-gen-lto".to_owned()];
        let request = NvvmRequest {
            modules: &modules,
            libdevice: libdevice.as_deref(),
            options: &options,
            // The link resolves what the other inputs define; nvJitLink
            // names what none does.
            resolved_later: &[],
            check_unresolved: false,
            isolation: self.options().isolation,
        };
        let output =
            super::compile(&lib, &request).map_err(|failure: NvvmFailure| LinkError::Nvvm {
                input: names.clone(),
                arch,
                failure,
            })?;
        let name = match ir.len() {
            1 => format!("{} ({})", first.name(), arch.lto()),
            _ => format!("[{names}] ({})", arch.lto()),
        };
        let lowered = ObjectCode::from_ltoir(output.code, name)?;
        let mut inputs = Vec::with_capacity(others.len() + 1);
        let mut placed = false;
        for input in self.inputs() {
            match input.kind() {
                ObjectKind::NvvmIr if !placed => {
                    inputs.push(lowered.clone());
                    placed = true;
                }
                ObjectKind::NvvmIr => {}
                _ => inputs.push(input.clone()),
            }
        }
        Ok(Some(inputs))
    }
}

/// libdevice beside `lib`, which `input` needs.
fn libdevice_for(lib: &Nvvm, input: &str) -> Result<Bytes, LinkError> {
    libdevice_found(lib)
        .map(|(bytes, _)| bytes)
        .ok_or_else(|| LinkError::NoLibdevice {
            input: input.to_owned(),
            library: lib.path().display().to_string(),
        })
}

/// The libdevice beside `lib` and its digest, when there is one that
/// reads (read again only when its file changes): what the key names and
/// what a link adds are the same file.
fn libdevice_found(lib: &Nvvm) -> Option<(Bytes, String)> {
    nvvm_sys::libdevice_beside(lib.path()).and_then(|path| super::read_libdevice(&path).ok())
}
