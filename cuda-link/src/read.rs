//! The one pass over an input: validation and inspection together.
//!
//! Constructing an [`ObjectCode`](crate::ObjectCode) checks every structure
//! a C library follows, and for containers (fatbins, host objects,
//! archives) the same pass builds the inspection tree, which inspection and
//! the linker's facts then read: a fatbin entry is decompressed and its
//! cubin validated once. A bare cubin or PTX text is only validated, and
//! its tree is built on first use: their validation costs a third of
//! reading them, which a program that only loads would pay for nothing,
//! and the tree is no cheaper to build in the same pass.

use crate::error::{ParseResult, Reason};
use crate::fatbin::{self, Budget, Compression, Entry, EntryKind, Fatbin};
use crate::inspect::{
    ArchiveInfo, Contents, EmbeddedInfo, EntryInfo, FatbinInfo, MemberInfo, ObjectInfo, Payload,
};
use crate::kind::ObjectKind;
use crate::{cubin, host, ltoir, nvvm_ir, ptx};

/// What a failure inside a fatbin entry does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Refuse the input: the bytes are going to C code.
    Validate,
    /// List the entry with its error: inspection of a file that no C
    /// library will read ([`inspect_path`](crate::inspect_path)).
    List,
}

/// Validates `data` as `kind` and, for containers and LTO-IR, reads what
/// it holds.
pub(crate) fn validate(kind: ObjectKind, data: &[u8]) -> ParseResult<Option<Contents>> {
    Ok(Some(match kind {
        ObjectKind::Ptx => {
            ptx::validate(data)?;
            return Ok(None);
        }
        ObjectKind::Cubin => {
            cubin::validate(data)?;
            return Ok(None);
        }
        ObjectKind::Ltoir => Contents::Ltoir(ltoir::inspect(data)?),
        ObjectKind::NvvmIr => Contents::NvvmIr(nvvm_ir::inspect(data)?),
        ObjectKind::Fatbin => {
            let fatbin = fatbin::parse(data)?;
            Budget::per_object().take_declared(&fatbin)?;
            Contents::Fatbin(fatbin_info(
                &fatbin,
                &mut Budget::per_object(),
                Mode::Validate,
            )?)
        }
        ObjectKind::Object => Contents::Object(object_info(
            data,
            &mut Budget::per_object(),
            Mode::Validate,
        )?),
        ObjectKind::Archive => Contents::Archive(archive_info(data)?),
    }))
}

/// What an already validated input holds: a bare PTX text's or cubin's
/// tree, or the tree of an image validated in another process.
pub(crate) fn contents(kind: ObjectKind, data: &[u8]) -> ParseResult<Contents> {
    match kind {
        ObjectKind::Ptx => Ok(Contents::Ptx(ptx::inspect(data)?)),
        ObjectKind::Cubin => Ok(Contents::Cubin(cubin::inspect(data)?)),
        _ => validate(kind, data)?.ok_or(Reason::Unrecognized),
    }
}

/// A host object's structure and its fatbins, within `budget`.
pub(crate) fn object_info(data: &[u8], budget: &mut Budget, mode: Mode) -> ParseResult<ObjectInfo> {
    if mode == Mode::Validate {
        crate::elf::validate(data, "host object")?;
    }
    let object = host::parse_object(data)?;
    if mode == Mode::Validate {
        // The whole object's declared cost, before anything is decoded.
        let mut declared = Budget::per_object();
        for embedded in &object.fatbins {
            declared.take_declared(&embedded.fatbin)?;
        }
    }
    let mut fatbins = Vec::with_capacity(object.fatbins.len());
    for embedded in &object.fatbins {
        let place = || format!("{} fatbin at {:#x}", embedded.section, embedded.offset);
        fatbins.push(EmbeddedInfo {
            section: embedded.section.to_owned(),
            offset: embedded.offset,
            fatbin: fatbin_info(&embedded.fatbin, budget, mode)
                .map_err(|r| Reason::inside(place(), r))?,
        });
    }
    Ok(ObjectInfo {
        machine: object.machine,
        fatbins,
    })
}

/// Every member as a host object (members without device code are listed,
/// as nvJitLink skips them), at least one with device code, as nvJitLink
/// requires, and a symbol table that names members only.
fn archive_info(data: &[u8]) -> ParseResult<ArchiveInfo> {
    host::check_symbol_table(data)?;
    // The whole archive's declared cost, before any member is decoded.
    let mut declared = Budget::per_object();
    for member in host::members(data)? {
        if let Ok(object) = host::parse_object(member.data) {
            for embedded in &object.fatbins {
                declared
                    .take_declared(&embedded.fatbin)
                    .map_err(|r| Reason::inside(format!("member {}", member.name), r))?;
            }
        }
    }
    let mut budget = Budget::per_object();
    let mut members = Vec::new();
    for member in host::members(data)? {
        let object = match object_info(member.data, &mut budget, Mode::Validate) {
            Ok(object) => Ok(object),
            Err(Reason::NoDeviceCode) => Err(Reason::NoDeviceCode.to_string()),
            Err(reason) => return Err(Reason::inside(format!("member {}", member.name), reason)),
        };
        members.push(MemberInfo {
            size: member.data.len(),
            name: member.name,
            object,
        });
    }
    if members.iter().all(|member| member.object.is_err()) {
        return Err(Reason::ArchiveWithoutDeviceCode);
    }
    Ok(ArchiveInfo { members })
}

/// The entries, each checked and decoded before the next is read: known
/// kinds only, each cubin (decompressed if need be) a valid cubin, each
/// PTX text non-empty and NUL-terminated (the C libraries read it up to
/// one), all within `budget`.
pub(crate) fn fatbin_info(
    fatbin: &Fatbin<'_>,
    budget: &mut Budget,
    mode: Mode,
) -> ParseResult<FatbinInfo> {
    // Counted first (headers only) so that the list, a few hundred bytes
    // an entry, is allocated once; capped, as 64 bytes of header claim
    // several hundred of list.
    let mut entries = Vec::with_capacity(fatbin.entries().count().min(4096));
    for entry in fatbin.entries() {
        let entry = entry?;
        let payload = match payload(&entry, budget) {
            Ok(payload) => payload,
            Err(Reason::UnknownEntryKind { .. }) if mode == Mode::List => Payload::Unknown,
            Err(reason) if mode == Mode::List => Payload::Error(reason.to_string()),
            Err(reason) => return Err(reason),
        };
        entries.push(entry_info(&entry, payload));
    }
    Ok(FatbinInfo { entries })
}

/// The entry's payload, decompressed once and decoded. A structural fault
/// is an error; PTX or LTO-IR that does not read as such (C code reads it
/// by its size, or up to its NUL) is listed as [`Payload::Error`].
fn payload(entry: &Entry<'_>, budget: &mut Budget) -> ParseResult<Payload> {
    if let EntryKind::Unknown(kind) = entry.kind {
        // Nobody knows what reads an unknown kind, or how.
        return Err(Reason::UnknownEntryKind {
            index: entry.index,
            kind,
        });
    }
    if entry.is_opaque() {
        // Only LTO-IR is encoded; the flag on anything else would skip the
        // checks a cubin or PTX text needs.
        if entry.kind != EntryKind::Ltoir {
            return Err(Reason::EncodedNonLtoir {
                index: entry.index,
                kind: entry.kind.name(),
            });
        }
        return Ok(Payload::Opaque);
    }
    budget.take(entry)?;
    let is_ptx = matches!(entry.kind, EntryKind::Ptx | EntryKind::RelocatablePtx);
    if is_ptx && entry.compression != Compression::None && entry.uncompressed_size > STREAM_ABOVE {
        return streamed_ptx(entry);
    }
    decoded(entry)
}

/// [`payload`] of an entry decoded into memory first.
fn decoded(entry: &Entry<'_>) -> ParseResult<Payload> {
    let bytes = entry.decompress_exact()?;
    Ok(match entry.kind {
        EntryKind::Cubin => Payload::Cubin(cubin::read(&bytes).map_err(inside(entry))?),
        EntryKind::Ptx | EntryKind::RelocatablePtx => {
            check_ptx_text(bytes.first().copied(), bytes.contains(&0)).map_err(inside(entry))?;
            listed(ptx::inspect(fatbin::trim_ptx_padding(&bytes)).map(Payload::Ptx))
        }
        EntryKind::Ltoir => listed(ltoir::inspect(&bytes).map(Payload::Ltoir)),
        EntryKind::Unknown(_) => Payload::Unknown,
    })
}

/// Compressed PTX that decodes to more than this is inspected as it is
/// decoded, never held whole: a 1 MiB bomb cannot cost its gigabyte.
/// Below it, decoding into memory first is faster.
const STREAM_ABOVE: u64 = 64 << 20;

/// [`payload`] of a PTX entry, inspected as it is decoded: the same
/// checks, in the same order (decoding, then the NUL, then the text).
fn streamed_ptx(entry: &Entry<'_>) -> ParseResult<Payload> {
    let mut text = NulWatch {
        reader: entry.reader()?,
        first: None,
        has_nul: false,
    };
    let info = ptx::inspect_reader(&mut text).map_err(|e| entry.decompress_error(e.to_string()))?;
    check_ptx_text(text.first, text.has_nul).map_err(inside(entry))?;
    Ok(listed(info.map(Payload::Ptx)))
}

/// A reader that notes its first byte and whether a NUL went through.
struct NulWatch<R> {
    reader: R,
    first: Option<u8>,
    has_nul: bool,
}

impl<R: std::io::Read> std::io::Read for NulWatch<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let read = self.reader.read(buf)?;
        let bytes = &buf[..read];
        self.first = self.first.or(bytes.first().copied());
        self.has_nul |= memchr::memchr(0, bytes).is_some();
        Ok(read)
    }
}

fn inside(entry: &Entry<'_>) -> impl Fn(Reason) -> Reason {
    let index = entry.index;
    move |reason| Reason::inside(format!("fatbin entry {index}"), reason)
}

fn listed(result: ParseResult<Payload>) -> Payload {
    result.unwrap_or_else(|reason| Payload::Error(reason.to_string()))
}

/// PTX as the C libraries read it, from its first byte and whether it
/// holds a NUL: text up to the first NUL, which must exist and must not
/// come first.
fn check_ptx_text(first: Option<u8>, has_nul: bool) -> ParseResult<()> {
    let malformed = |detail: &str| Reason::Malformed {
        what: "fatbin entry",
        detail: detail.to_owned(),
    };
    match first {
        None | Some(0) => Err(malformed("PTX text is empty")),
        _ if !has_nul => Err(malformed("PTX text is not NUL-terminated")),
        _ => Ok(()),
    }
}

fn entry_info(entry: &Entry<'_>, payload: Payload) -> EntryInfo {
    EntryInfo {
        index: entry.index,
        kind: entry.kind,
        arch: entry.arch,
        flags: entry.flags,
        compression: entry.compression,
        stored_size: entry.payload.len() as u64,
        uncompressed_size: match entry.compression {
            Compression::None => entry.payload.len() as u64,
            _ => entry.uncompressed_size,
        },
        version: format!("{}.{}", entry.version.0, entry.version.1),
        identifier: entry.identifier(),
        options: entry.options.map(str::to_owned),
        payload,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn entry(kind: EntryKind, compression: Compression, stored: &[u8], size: u64) -> Entry<'_> {
        Entry {
            index: 0,
            kind,
            arch: crate::Arch::sm(90),
            flags: 0,
            compression,
            version: (0x101, 0),
            options: None,
            options_raw: None,
            identifier: None,
            reserved: 0,
            payload: stored,
            compressed_size: stored.len() as u32,
            uncompressed_size: size,
        }
    }

    proptest! {
        /// A compressed PTX entry inspected as it is decoded gives what
        /// decoding it first gives, refusal for refusal, with any text, a
        /// wrong declared size, and damaged compressed bytes.
        #[test]
        fn streamed_ptx_reads_as_decoded_ptx(
            text in proptest::collection::vec(prop_oneof![
                Just(b".version 8.0 ".to_vec()), Just(b".target sm_90 ".to_vec()),
                Just(b".entry k() { ret; } ".to_vec()), Just(b"/* c */".to_vec()),
                Just(b"\0".to_vec()), Just(b"\xFF".to_vec()), Just(b"\"".to_vec()),
                proptest::collection::vec(any::<u8>(), 0..8),
            ], 0..20),
            zstd in any::<bool>(),
            size_change in -2i64..3,
            flip in proptest::option::of((any::<usize>(), any::<u8>())),
        ) {
            let text = text.concat();
            let (codec, mut stored) = match zstd {
                true => (Compression::Zstd, ruzstd::encoding::compress_to_vec(
                    &text[..], ruzstd::encoding::CompressionLevel::Fastest)),
                false => (Compression::Lz4, lz4_flex::block::compress(&text)),
            };
            if let Some((at, byte)) = flip.filter(|_| !stored.is_empty()) {
                let at = at % stored.len();
                stored[at] = byte;
            }
            let size = (text.len() as i64 + size_change).max(0) as u64;
            let entry = entry(EntryKind::Ptx, codec, &stored, size);
            let streamed = format!("{:?}", streamed_ptx(&entry));
            let decoded = format!("{:?}", decoded(&entry));
            // The messages of a failed decoding differ between decoders;
            // that it failed, and where, may not.
            let decoding_failed = |s: &str| s.starts_with("Err(Decompress");
            if decoding_failed(&decoded) || decoding_failed(&streamed) {
                prop_assert!(decoding_failed(&decoded) && decoding_failed(&streamed),
                    "decoded {decoded}, streamed {streamed}");
            } else {
                prop_assert_eq!(streamed, decoded);
            }
        }
    }
}
