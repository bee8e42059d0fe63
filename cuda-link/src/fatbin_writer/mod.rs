//! [`FatbinBuilder`]: fatbins written in pure Rust, entry headers laid out
//! by the same structs the parser reads (`fatbin::layout`); above the
//! data layer, which the parser sits in, payloads compressed as
//! nvcc's `-compress-mode` writes them (LZ4 blocks, zstd frames).

use bytes::Bytes;

#[cfg(feature = "nvfatbin")]
mod nvfatbin;

use crate::arch::{Arch, ArchVariant};
use crate::error::{ObjectError, ParseResult, Reason};
use crate::fatbin::layout::{EntryHeader, FileHeader};
use crate::fatbin::{
    Compression, Entry, EntryKind, FLAG_64BIT, FLAG_ARCH_SPECIFIC, FLAG_FAMILY, FLAG_LZ4, FLAG_ZSTD,
};
use crate::inspect::{Contents, ElfType};
use crate::kind::ObjectKind;
use crate::object_code::ObjectCode;

/// Host Linux, as nvFatbin and nvcc set by default.
const FLAG_HOST_LINUX: u64 = 0x10;
/// The options slot holds an sm_100+ cubin's compatibility records.
const FLAG_COMPAT_BLOB: u64 = 0x100_0000;

/// Why an input cannot go into a fatbin. Every check runs before anything
/// is written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FatbinError {
    /// A cubin added under an arch other than its own.
    #[error("{input} is a {cubin} cubin; it cannot fill the {slot} slot")]
    CubinArchMismatch {
        /// The input.
        input: String,
        /// The arch its ELF header says.
        cubin: Arch,
        /// The arch it was added as.
        slot: Arch,
    },
    /// LTO-IR added under an arch other than its own.
    #[error("{input} is LTO-IR for {ltoir}; it cannot fill the {slot} slot")]
    LtoirArchMismatch {
        /// The input.
        input: String,
        /// The arch in its header.
        ltoir: Arch,
        /// The arch it was added as.
        slot: Arch,
    },
    /// PTX whose `.target` is newer than the slot: a GPU of the slot's
    /// arch cannot JIT-compile it.
    #[error("{input} targets {target}, above its {slot} slot")]
    PtxTargetAboveSlot {
        /// The input.
        input: String,
        /// Its `.target`.
        target: String,
        /// The arch it was added as.
        slot: Arch,
    },
    /// An executable cubin where the builder was asked for relocatable
    /// code ([`FatbinBuilder::relocatable`]).
    #[error("{input} is an executable cubin; this fatbin takes relocatable code only")]
    ExecutableCubin {
        /// The input.
        input: String,
    },
    /// Two entries of one kind for one arch. (Two entries may share an
    /// identifier: nvFatbin writes that when its caller names them alike.)
    #[error("{input}: the fatbin already has {what}")]
    Duplicate {
        /// The input.
        input: String,
        /// `"a sm_90 cubin"`.
        what: String,
    },
    /// A fatbin added to a fatbin: add its entries instead.
    #[error("{input} is a fatbin; a fatbin cannot hold another (add its entries)")]
    NestedFatbin {
        /// The input.
        input: String,
    },
    /// A kind this writer does not take: an archive, or a host object
    /// written in Rust (nvFatbin's `nvFatbinAddReloc` takes its device
    /// code: `FatbinBuilder::build_with`, feature `nvfatbin`).
    #[error("{input} is a {kind}; the pure-Rust writer takes cubins, PTX and LTO-IR")]
    UnsupportedKind {
        /// The input.
        input: String,
        /// Its kind.
        kind: ObjectKind,
    },
    /// An input whose contents cannot be read.
    #[error(transparent)]
    Input(#[from] ObjectError),
    /// nvFatbin refused a call ([`FatbinBuilder::build_with`]).
    #[cfg(feature = "nvfatbin")]
    #[error("{call} failed with {error}")]
    NvFatbin {
        /// The C function.
        call: &'static str,
        /// What it returned.
        error: nvfatbin_sys::NvFatbinError,
    },
    /// nvFatbin is not available.
    #[cfg(feature = "nvfatbin")]
    #[error(transparent)]
    NvFatbinMissing(#[from] nvfatbin_sys::SymbolUnavailable),
    /// A fatbin entry to copy that cannot be decoded.
    #[error("fatbin entry {index}: {reason}")]
    Entry {
        /// The entry's index in its fatbin.
        index: usize,
        /// Why.
        reason: Reason,
    },
}

/// One entry as it will be written.
#[derive(Debug, Clone)]
pub(super) struct NewEntry {
    name: String,
    pub(super) kind: EntryKind,
    pub(super) arch: Arch,
    version: (u16, u16),
    /// The payload as the C libraries read it: for PTX, the text and its
    /// NUL.
    pub(super) payload: Payload,
    pub(super) identifier: Option<String>,
    pub(super) options: Option<Vec<u8>>,
    /// Flags beyond 64-bit, host, codec and arch variant: debug, the
    /// sm_100+ compatibility blob.
    extra_flags: u64,
    compression: Option<Compression>,
}

#[derive(Debug, Clone)]
pub(super) enum Payload {
    Plain(Bytes),
    /// A compressed entry copied from a fatbin: its plain bytes, for
    /// nvFatbin, and its stored bytes with their exact length, written
    /// back as they are.
    Compressed {
        plain: Bytes,
        stored: Bytes,
        compressed_size: u32,
    },
    /// A host object, for nvFatbin's `nvFatbinAddReloc`, which takes its
    /// relocatable device code.
    HostObject(#[cfg_attr(not(feature = "nvfatbin"), allow(dead_code))] Bytes),
    /// Encoded LTO-IR, copied as stored: `(bytes, compressed size,
    /// uncompressed size, key at 0x30, flags)`.
    Raw(Bytes, u32, u64, u64, u64),
}

/// Builds a fatbin: one entry per (kind, arch), checked before anything
/// is written, laid out as nvFatbin lays out its own.
///
/// ```
/// use cuda_link::{Arch, FatbinBuilder, ObjectCode};
/// use cuda_link::inspect::Compression;
///
/// let ptx = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k() { ret; }\n";
/// let code = ObjectCode::from_ptx(ptx.as_bytes().to_vec(), "k.ptx")?;
/// let fatbin = FatbinBuilder::new()
///     .compression(Compression::Zstd)
///     .add(&code, Some(Arch::sm(80)))?
///     .add(&code, Some(Arch::sm(90)))? // PTX for sm_80 runs on sm_90 too
///     .build("k.fatbin")?;
/// assert_eq!(fatbin.inspect()?.fatbin_entries().count(), 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct FatbinBuilder {
    pub(super) entries: Vec<NewEntry>,
    pub(super) compression: Option<Compression>,
    relocatable: bool,
}

impl FatbinBuilder {
    /// An empty builder: entries stored uncompressed.
    pub fn new() -> Self {
        Self::default()
    }

    /// How new entries are stored: `None`, `Lz4` (nvFatbin's
    /// `-compress-mode=speed`, and `default` before CUDA 13) or `Zstd`
    /// (`size`, `balance`, and `default` from CUDA 13). LTO-IR stays
    /// uncompressed: nvFatbin encodes compressed LTO-IR in a way no one
    /// documents. `build_with` (feature `nvfatbin`) passes the same choice
    /// to nvFatbin.
    pub fn compression(mut self, compression: Compression) -> Self {
        self.compression = Some(compression);
        self
    }

    /// Takes relocatable code only: an executable cubin is refused.
    pub fn relocatable(mut self, relocatable: bool) -> Self {
        self.relocatable = relocatable;
        self
    }

    /// Adds `code` for `arch`, or for its own arch when `None` (a cubin's
    /// or LTO-IR's, PTX's `.target`).
    ///
    /// A host object is taken for nvFatbin's `nvFatbinAddReloc`
    /// (`build_with`, feature `nvfatbin`): its relocatable device code
    /// becomes relocatable PTX entries. [`build`](Self::build) refuses it.
    ///
    /// # Errors
    /// A [`FatbinError`]: a cubin or LTO-IR of another arch than `arch`,
    /// PTX whose `.target` is above `arch`, an executable cubin into a
    /// relocatable fatbin, a second entry of one kind for one arch, a
    /// fatbin or an archive.
    pub fn add(mut self, code: &ObjectCode, arch: Option<Arch>) -> Result<Self, FatbinError> {
        let input = code.name().to_owned();
        let info = match code.kind() {
            ObjectKind::Fatbin => return Err(FatbinError::NestedFatbin { input }),
            ObjectKind::Object => {
                // Only nvFatbin can take it (`build_with`); `build` says so.
                self.entries.push(NewEntry {
                    name: input,
                    kind: EntryKind::RelocatablePtx,
                    arch: Arch::sm(0),
                    version: (0, 0),
                    payload: Payload::HostObject(code.image().shared()),
                    identifier: None,
                    options: None,
                    extra_flags: 0,
                    compression: None,
                });
                return Ok(self);
            }
            kind @ ObjectKind::Archive => {
                return Err(FatbinError::UnsupportedKind { input, kind });
            }
            _ => code.inspect()?,
        };
        let (kind, own, version) = match &info.contents {
            Contents::Cubin(cubin) => {
                if self.relocatable && cubin.elf_type == ElfType::Executable {
                    return Err(FatbinError::ExecutableCubin { input });
                }
                (
                    EntryKind::Cubin,
                    cubin.arch,
                    (1, u16::from(cubin.abi_version)),
                )
            }
            Contents::Ltoir(ltoir) => {
                let bytes = code.as_bytes();
                let version = (u16::from(bytes[4]), u16::from(bytes[5]));
                (EntryKind::Ltoir, ltoir.arch, version)
            }
            Contents::Ptx(ptx) => {
                let target = ptx.target.first().cloned().unwrap_or_default();
                let own: Arch = target
                    .parse()
                    .map_err(|_| FatbinError::PtxTargetAboveSlot {
                        input: input.clone(),
                        target: target.clone(),
                        slot: arch.unwrap_or(Arch::sm(0)),
                    })?;
                if let Some(slot) = arch
                    && own.sm > slot.sm
                {
                    return Err(FatbinError::PtxTargetAboveSlot {
                        input,
                        target,
                        slot,
                    });
                }
                (EntryKind::Ptx, own, ptx_version(&ptx.version))
            }
            _ => unreachable!("containers are refused above"),
        };
        let slot = arch.unwrap_or(own);
        match kind {
            EntryKind::Cubin if own != slot => {
                return Err(FatbinError::CubinArchMismatch {
                    input,
                    cubin: own,
                    slot,
                });
            }
            EntryKind::Ltoir if own.sm != slot.sm => {
                return Err(FatbinError::LtoirArchMismatch {
                    input,
                    ltoir: own,
                    slot,
                });
            }
            _ => {}
        }
        // sm_100+ cubins carry their `.nv.compat` records in the options
        // slot, behind a 0 byte and a flag, as nvcc and nvFatbin write them.
        let (options, extra_flags) = match kind {
            EntryKind::Cubin if own.sm >= 100 => {
                match crate::cubin::section(code.as_bytes(), b".nv.compat") {
                    Some(compat) if !compat.is_empty() => {
                        let mut blob = vec![0u8];
                        blob.extend_from_slice(&compat[..compat.len() - 1]);
                        (Some(blob), FLAG_COMPAT_BLOB)
                    }
                    _ => (None, 0),
                }
            }
            _ => (None, 0),
        };
        let payload = match kind {
            EntryKind::Ptx => {
                let mut text = code.as_bytes().to_vec();
                text.push(0);
                Bytes::from(text)
            }
            _ => Bytes::copy_from_slice(code.as_bytes()),
        };
        self.push(NewEntry {
            name: input,
            kind,
            arch: slot,
            version,
            payload: Payload::Plain(payload),
            identifier: None,
            options,
            extra_flags,
            compression: None,
        })?;
        Ok(self)
    }

    /// A builder holding a copy of every entry of `fatbin`: its kind, arch,
    /// version, identifier, options and flags, its payload copied as stored
    /// (compressed entries stay compressed as they were). What
    /// [`inspect`](ObjectCode::inspect) and `cuobjdump` list of the entries
    /// does not change; more entries can be added.
    ///
    /// # Errors
    /// [`FatbinError::UnsupportedKind`] when `fatbin` is not a fatbin;
    /// [`FatbinError::Entry`] for an entry that does not decompress.
    pub fn from_fatbin(fatbin: &ObjectCode) -> Result<Self, FatbinError> {
        if fatbin.kind() != ObjectKind::Fatbin {
            return Err(FatbinError::UnsupportedKind {
                input: fatbin.name().to_owned(),
                kind: fatbin.kind(),
            });
        }
        let fail = |reason| FatbinError::Entry { index: 0, reason };
        let parsed = crate::fatbin::parse(fatbin.as_bytes()).map_err(fail)?;
        let mut builder = FatbinBuilder::new();
        for entry in parsed.entries() {
            builder = builder.add_entry(&entry.map_err(fail)?)?;
        }
        Ok(builder)
    }

    fn add_entry(mut self, entry: &Entry<'_>) -> Result<Self, FatbinError> {
        let fail = |reason| FatbinError::Entry {
            index: entry.index,
            reason,
        };
        let known_flags =
            FLAG_64BIT | FLAG_HOST_LINUX | FLAG_LZ4 | FLAG_ZSTD | FLAG_ARCH_SPECIFIC | FLAG_FAMILY;
        let payload = if entry.is_opaque() {
            Payload::Raw(
                Bytes::copy_from_slice(entry.payload),
                entry.compressed_size,
                entry.uncompressed_size,
                entry.reserved,
                entry.flags,
            )
        } else {
            let plain = Bytes::copy_from_slice(&entry.decompress_exact().map_err(fail)?);
            match entry.compression {
                Compression::None => Payload::Plain(plain),
                _ => Payload::Compressed {
                    plain,
                    stored: Bytes::copy_from_slice(
                        &entry.payload[..entry.compressed_size as usize],
                    ),
                    compressed_size: entry.compressed_size,
                },
            }
        };
        self.push(NewEntry {
            name: format!("fatbin entry {}", entry.index),
            kind: entry.kind,
            arch: entry.arch,
            version: entry.version,
            payload,
            identifier: entry.identifier(),
            options: entry.options_raw.map(<[u8]>::to_vec),
            extra_flags: entry.flags & !known_flags,
            compression: Some(entry.compression),
        })?;
        Ok(self)
    }

    fn push(&mut self, entry: NewEntry) -> Result<(), FatbinError> {
        let same_slot = self
            .entries
            .iter()
            .any(|e| e.kind == entry.kind && e.arch == entry.arch);
        if same_slot {
            return Err(FatbinError::Duplicate {
                what: format!("a {} {}", entry.arch, entry.kind.name()),
                input: entry.name,
            });
        }
        self.entries.push(entry);
        Ok(())
    }

    /// The number of entries so far.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no entry was added.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Writes the fatbin, validated as any input is, as an [`ObjectCode`]
    /// named `name`.
    pub fn build(&self, name: impl Into<String>) -> Result<ObjectCode, FatbinError> {
        let mut body = Vec::new();
        if let Some(object) = self
            .entries
            .iter()
            .find(|e| matches!(e.payload, Payload::HostObject(_)))
        {
            return Err(FatbinError::UnsupportedKind {
                input: object.name.clone(),
                kind: ObjectKind::Object,
            });
        }
        for entry in &self.entries {
            let default = self.compression.unwrap_or(Compression::None);
            write_entry(&mut body, entry, default)
                .map_err(|reason| FatbinError::Entry { index: 0, reason })?;
        }
        let header = FileHeader::new(body.len() as u64);
        let mut out = Vec::with_capacity(16 + body.len());
        out.extend_from_slice(zerocopy::IntoBytes::as_bytes(&header));
        out.extend_from_slice(&body);
        Ok(ObjectCode::from_fatbin(out, name)?)
    }
}

/// `"8.8"` as `(8, 8)`.
fn ptx_version(version: &str) -> (u16, u16) {
    let (major, minor) = version.split_once('.').unwrap_or((version, "0"));
    (major.parse().unwrap_or(0), minor.parse().unwrap_or(0))
}

/// Zero bytes up to a multiple of 8.
fn pad(out: &mut Vec<u8>) {
    out.resize(out.len().next_multiple_of(8), 0);
}

fn write_entry(out: &mut Vec<u8>, entry: &NewEntry, default: Compression) -> ParseResult<()> {
    // The trailing area: identifier, options descriptor, options, each
    // padded to 8 (a NUL always follows the identifier and text options).
    let mut trailer = Vec::new();
    let ident = entry.identifier.as_ref().map(|ident| {
        trailer.extend_from_slice(ident.as_bytes());
        trailer.push(0);
        pad(&mut trailer);
        ident.len() as u32
    });
    // Every entry but a cubin has an options descriptor, empty when there
    // are no options, as nvFatbin writes it: given options offset 0, the
    // driver reads a descriptor from the entry's first bytes and takes
    // "options" from 16 MiB past the entry.
    let options = match (&entry.options, entry.kind) {
        (Some(options), _) => Some(options.as_slice()),
        (None, EntryKind::Cubin) => None,
        (None, _) => Some(&[][..]),
    };
    let options_offset = options.map(|options| {
        let descriptor = 64 + trailer.len() as u32;
        trailer.extend_from_slice(&(descriptor + 8).to_le_bytes());
        trailer.extend_from_slice(&(options.len() as u32).to_le_bytes());
        trailer.extend_from_slice(options);
        // A NUL after the text, and after an sm_100+ cubin's blob too.
        trailer.push(0);
        pad(&mut trailer);
        descriptor
    });
    let variant = match entry.arch.variant {
        ArchVariant::Base => 0,
        ArchVariant::Specific => FLAG_ARCH_SPECIFIC,
        ArchVariant::Family => FLAG_FAMILY,
    };
    let mut flags = FLAG_64BIT | FLAG_HOST_LINUX | variant | entry.extra_flags;
    let (stored, compressed_size, uncompressed_size, reserved) = match &entry.payload {
        Payload::HostObject(_) => unreachable!("refused before writing"),
        Payload::Raw(bytes, compressed, uncompressed, key, raw_flags) => {
            flags = *raw_flags;
            (bytes.to_vec(), *compressed, *uncompressed, *key)
        }
        Payload::Compressed {
            plain,
            stored,
            compressed_size,
        } => {
            flags |= match entry.compression {
                Some(Compression::Lz4) => FLAG_LZ4,
                _ => FLAG_ZSTD,
            };
            (stored.to_vec(), *compressed_size, plain.len() as u64, 0)
        }
        Payload::Plain(bytes) => {
            let mut plain = bytes.to_vec();
            let ptx = matches!(entry.kind, EntryKind::Ptx | EntryKind::RelocatablePtx);
            let codec = match entry.compression.unwrap_or(default) {
                // nvFatbin's compressed LTO-IR is encoded too: keep it plain.
                _ if entry.kind == EntryKind::Ltoir && entry.compression.is_none() => {
                    Compression::None
                }
                codec => codec,
            };
            let packed = match codec {
                Compression::None => None,
                Compression::Lz4 => {
                    flags |= FLAG_LZ4;
                    Some(lz4_flex::block::compress(&plain))
                }
                Compression::Zstd => {
                    flags |= FLAG_ZSTD;
                    let frame = ruzstd::encoding::compress_to_vec(
                        plain.as_slice(),
                        ruzstd::encoding::CompressionLevel::Fastest,
                    );
                    Some(as_nvcc_frame(frame, plain.len() as u64)?)
                }
            };
            // Stored plain, PTX is NUL-padded to 8 as nvFatbin stores it;
            // compressed, its text and NUL are compressed as they are.
            if packed.is_none() && ptx {
                pad(&mut plain);
            }
            match packed {
                Some(packed) => {
                    let size = u32::try_from(packed.len()).map_err(|_| Reason::Malformed {
                        what: "fatbin entry",
                        detail: "compressed payload over 4 GiB".into(),
                    })?;
                    (packed, size, plain.len() as u64, 0)
                }
                None => (plain, 0, 0, 0),
            }
        }
    };
    let mut payload = stored;
    pad(&mut payload);
    let header = EntryHeader::new(
        entry.kind,
        64 + trailer.len() as u32,
        payload.len() as u64,
        compressed_size,
        options_offset.unwrap_or(0),
        entry.version,
        entry.arch.sm,
        ident.map_or((0, 0), |len| (64, len)),
        flags,
        reserved,
        uncompressed_size,
    );
    out.extend_from_slice(zerocopy::IntoBytes::as_bytes(&header));
    out.extend_from_slice(&trailer);
    out.extend_from_slice(&payload);
    Ok(())
}

/// `frame` (a zstd frame ruzstd wrote, without a content size, with a
/// checksum) as nvcc and nvFatbin write theirs: a single-segment frame
/// that declares its content size, without a checksum. The blocks are
/// kept as they are: in a single segment the window is the whole content,
/// which any block's references fit in.
fn as_nvcc_frame(frame: Vec<u8>, size: u64) -> ParseResult<Vec<u8>> {
    let bad = |detail: &str| Reason::Malformed {
        what: "zstd frame",
        detail: detail.to_owned(),
    };
    let descriptor = *frame.get(4).ok_or_else(|| bad("shorter than its header"))?;
    let single_segment = descriptor & 0x20 != 0;
    let content_size_flag = descriptor >> 6;
    let dictionary_flag = descriptor & 0x3;
    if content_size_flag != 0 || dictionary_flag != 0 {
        return Ok(frame); // Already declares it, or is not ruzstd's.
    }
    // Magic, descriptor, and the window descriptor of a multi-segment frame.
    let blocks = 5 + usize::from(!single_segment);
    let blocks = frame
        .get(blocks..)
        .ok_or_else(|| bad("shorter than its header"))?;
    // The checksum, when there is one, is the frame's last 4 bytes.
    let blocks = match descriptor & 0x4 {
        0 => blocks,
        _ => blocks
            .len()
            .checked_sub(4)
            .map(|end| &blocks[..end])
            .ok_or_else(|| bad("shorter than its checksum"))?,
    };
    let (flag, field): (u8, Vec<u8>) = if size < 256 {
        (0, vec![size as u8])
    } else if size < 65_536 + 256 {
        (1, ((size - 256) as u16).to_le_bytes().to_vec())
    } else if size <= u64::from(u32::MAX) {
        (2, (size as u32).to_le_bytes().to_vec())
    } else {
        (3, size.to_le_bytes().to_vec())
    };
    let mut out = Vec::with_capacity(frame.len() + 8);
    out.extend_from_slice(&frame[..4]);
    out.push(flag << 6 | 0x20);
    out.extend_from_slice(&field);
    out.extend_from_slice(blocks);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two PTX entries named alike, for sm_80 and sm_90, as nvFatbin
    /// writes them when its caller gives both one identifier: copied, with
    /// their identifiers.
    #[test]
    fn entries_sharing_an_identifier_are_copied() {
        let mut ptx =
            b".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k() { ret; }\n\0"
                .to_vec();
        pad(&mut ptx);
        let mut body = Vec::new();
        for sm in [80, 90] {
            let header = EntryHeader::new(
                EntryKind::Ptx,
                88,
                ptx.len() as u64,
                0,
                72,
                (8, 0),
                sm,
                (64, 4),
                FLAG_64BIT | FLAG_HOST_LINUX,
                0,
                0,
            );
            body.extend_from_slice(zerocopy::IntoBytes::as_bytes(&header));
            body.extend_from_slice(b"same\0\0\0\0");
            body.extend_from_slice(&80u32.to_le_bytes());
            body.extend_from_slice(&[0; 12]);
            body.extend_from_slice(&ptx);
        }
        let mut fatbin =
            zerocopy::IntoBytes::as_bytes(&FileHeader::new(body.len() as u64)).to_vec();
        fatbin.extend_from_slice(&body);
        let code = ObjectCode::from_fatbin(fatbin, "same.fatbin").unwrap();
        let copy = FatbinBuilder::from_fatbin(&code)
            .and_then(|builder| builder.build("copy"))
            .unwrap();
        let info = copy.inspect().unwrap();
        let names: Vec<_> = info
            .fatbin_entries()
            .map(|e| e.identifier.clone())
            .collect();
        assert_eq!(names, [Some("same".to_owned()), Some("same".to_owned())]);
    }

    /// ruzstd's frames get the content size nvcc's have and lose their
    /// checksum, and still decode to the same bytes, for sizes on each side
    /// of each field width.
    #[test]
    fn zstd_frames_declare_their_content_size() {
        for size in [1usize, 255, 256, 1017, 65_791, 65_792, 300_000] {
            let data: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
            let frame = ruzstd::encoding::compress_to_vec(
                data.as_slice(),
                ruzstd::encoding::CompressionLevel::Fastest,
            );
            let frame = as_nvcc_frame(frame, size as u64).unwrap();
            assert_eq!(frame[4] & 0x24, 0x20, "single segment, no checksum, {size}");
            let mut decoded = Vec::new();
            let mut decoder = ruzstd::decoding::StreamingDecoder::new(frame.as_slice()).unwrap();
            std::io::Read::read_to_end(&mut decoder, &mut decoded).unwrap();
            assert_eq!(decoded, data, "{size}");
        }
    }
}
