//! The second backend of [`FatbinBuilder`]: the same entries, written by
//! NVIDIA's nvFatbin.

use std::ffi::{CString, c_char};

use nvfatbin_sys::{NvFatbin, NvFatbinError, nvfatbin_call, sys::nvFatbinResult};

use super::{FatbinBuilder, FatbinError, NewEntry, Payload};
use crate::fatbin::{Compression, EntryKind};
use crate::object_code::ObjectCode;

/// Owns an nvFatbin handle; destroyed on every path.
struct Handle<'a> {
    lib: &'a NvFatbin,
    raw: nvfatbin_sys::sys::nvFatbinHandle,
}

impl Drop for Handle<'_> {
    fn drop(&mut self) {
        // SAFETY: a handle from nvFatbinCreate, destroyed once.
        let _ = unsafe { self.lib.nvFatbinDestroy(&mut self.raw) };
    }
}

impl FatbinBuilder {
    /// Writes the fatbin with nvFatbin instead of in Rust: the same
    /// entries, checked the same way, compressed as
    /// [`compression`](Self::compression) asks (`-compress-mode=speed`
    /// for LZ4, `size` for zstd, every entry: `-compress-all`).
    ///
    /// # Errors
    /// [`FatbinError::NvFatbin`] with the call and its result when
    /// nvFatbin refuses an entry; [`FatbinError::Entry`] for an entry
    /// copied encoded ([`from_fatbin`](Self::from_fatbin) of compressed
    /// LTO-IR), which nvFatbin cannot take back.
    pub fn build_with(
        &self,
        lib: &NvFatbin,
        name: impl Into<String>,
    ) -> Result<ObjectCode, FatbinError> {
        let mut options = vec!["-64", "-host=linux"];
        options.extend(match self.compression.unwrap_or(Compression::None) {
            Compression::None => ["-compress=false"].as_slice(),
            // nvFatbin 13's `default` mode is zstd; `speed` is LZ4 in 12 and 13.
            Compression::Lz4 => &["-compress-all", "-compress-mode=speed"],
            Compression::Zstd => &["-compress-all", "-compress-mode=size"],
        });
        let options: Vec<CString> = options
            .iter()
            .map(|o| CString::new(*o).unwrap_or_default())
            .collect();
        let mut pointers: Vec<*const c_char> = options.iter().map(|o| o.as_ptr()).collect();
        let mut raw = std::ptr::null_mut();
        // SAFETY: an out-pointer and `pointers.len()` C strings alive for
        // the call.
        let created = unsafe {
            nvfatbin_call!(
                lib,
                nvFatbinCreate(&mut raw, pointers.as_mut_ptr(), pointers.len())
            )
        }?;
        check(created)?;
        let handle = Handle { lib, raw };
        for (index, entry) in self.entries.iter().enumerate() {
            add(&handle, index, entry)?;
        }
        let mut size = 0usize;
        // SAFETY: a live handle and an out-pointer.
        check(unsafe { nvfatbin_call!(lib, nvFatbinSize(handle.raw, &mut size)) }?)?;
        let mut bytes = vec![0u8; size];
        // SAFETY: a buffer of the size nvFatbin reported.
        check(unsafe { nvfatbin_call!(lib, nvFatbinGet(handle.raw, bytes.as_mut_ptr().cast())) }?)?;
        drop(handle);
        Ok(ObjectCode::from_fatbin(bytes, name)?)
    }
}

fn check(call: nvfatbin_sys::Call) -> Result<(), FatbinError> {
    match call.result {
        nvFatbinResult::NVFATBIN_SUCCESS => Ok(()),
        result => Err(FatbinError::NvFatbin {
            call: call.symbol,
            error: NvFatbinError { result },
        }),
    }
}

/// Adds one entry: `AddCubin`, `AddPTX`, `AddLTOIR`, or `AddReloc` for a
/// host object.
fn add(handle: &Handle<'_>, index: usize, entry: &NewEntry) -> Result<(), FatbinError> {
    if let Payload::HostObject(object) = &entry.payload {
        // SAFETY: a live handle and a host object's image with its size;
        // its ELF structure and embedded fatbins were validated.
        let call = unsafe {
            nvfatbin_call!(
                handle.lib,
                nvFatbinAddReloc(handle.raw, object.as_ptr().cast(), object.len())
            )
        }?;
        return check(call);
    }
    let (Payload::Plain(bytes) | Payload::Compressed { plain: bytes, .. }) = &entry.payload else {
        return Err(FatbinError::Entry {
            index,
            reason: crate::Reason::Malformed {
                what: "fatbin entry",
                detail: "encoded LTO-IR cannot be given back to nvFatbin".into(),
            },
        });
    };
    let c = |text: &str| CString::new(text).unwrap_or_default();
    let arch = c(&format!("{}{}", entry.arch.sm, entry.arch.suffix()));
    let identifier = entry.identifier.as_deref().map(c);
    let ident = identifier.as_ref().map_or(std::ptr::null(), |i| i.as_ptr());
    let options = entry
        .options
        .as_ref()
        .filter(|_| entry.kind != EntryKind::Cubin)
        .map(|o| {
            CString::new(
                o.iter()
                    .copied()
                    .take_while(|&b| b != 0)
                    .collect::<Vec<u8>>(),
            )
            .unwrap_or_default()
        });
    let opts = options.as_ref().map_or(std::ptr::null(), |o| o.as_ptr());
    let lib = handle.lib;
    // SAFETY: a live handle; a buffer and its size, alive for the call
    // (PTX with its NUL); C strings or null.
    let call = unsafe {
        match entry.kind {
            EntryKind::Cubin => nvfatbin_call!(
                lib,
                nvFatbinAddCubin(
                    handle.raw,
                    bytes.as_ptr().cast(),
                    bytes.len(),
                    arch.as_ptr(),
                    ident
                )
            ),
            EntryKind::Ltoir => nvfatbin_call!(
                lib,
                nvFatbinAddLTOIR(
                    handle.raw,
                    bytes.as_ptr().cast(),
                    bytes.len(),
                    arch.as_ptr(),
                    ident,
                    opts
                )
            ),
            _ => nvfatbin_call!(
                lib,
                nvFatbinAddPTX(
                    handle.raw,
                    bytes.as_ptr().cast(),
                    bytes.len(),
                    arch.as_ptr(),
                    ident,
                    opts
                )
            ),
        }
    }?;
    check(call)
}
