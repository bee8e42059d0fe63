//! The fatbin's byte layout: the file header and the fixed part of each
//! entry header as `#[repr(C)]` structs of little-endian fields, read with
//! `zerocopy`, and the framing of fatbins back to back in a section, which
//! slices and files share through [`Source`].

use zerocopy::little_endian::{U16, U32, U64};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use super::{
    Compression, Entry, EntryKind, FLAG_ARCH_SPECIFIC, FLAG_FAMILY, FLAG_LZ4, FLAG_ZSTD, Fatbin,
};
use crate::arch::{Arch, ArchVariant};
use crate::error::{ParseResult, Reason};
use crate::reader::slice;

/// `0xBA55ED50`, little-endian at offset 0.
pub const MAGIC: u32 = 0xBA55_ED50;
pub(crate) const ENTRY_VERSION: u16 = 0x0101;

/// The header in front of a fatbin's entries: read by the parser, written
/// by the writer.
#[derive(Debug, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub(crate) struct FileHeader {
    magic: U32,
    version: U16,
    header_size: U16,
    /// Bytes of entries after this header.
    body_size: U64,
}

const HEADER_SIZE: u64 = size_of::<FileHeader>() as u64;

/// The fixed part of an entry header; options and identifier follow it,
/// inside `header_size`. Read by the parser, written by the writer.
#[derive(Debug, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub(crate) struct EntryHeader {
    kind: U16,
    version: U16,
    header_size: U32,
    payload_size: U64,
    compressed_size: U32,
    options_offset: U32,
    minor: U16,
    major: U16,
    sm: U32,
    identifier_offset: U32,
    identifier_len: U32,
    flags: U64,
    reserved: U64,
    uncompressed_size: U64,
}

const ENTRY_FIXED_SIZE: u64 = size_of::<EntryHeader>() as u64;

#[cfg(feature = "fatbin")]
impl EntryHeader {
    /// The fixed header of an entry as the writer lays it out.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        kind: super::EntryKind,
        header_size: u32,
        payload_size: u64,
        compressed_size: u32,
        options_offset: u32,
        (major, minor): (u16, u16),
        sm: u32,
        (identifier_offset, identifier_len): (u32, u32),
        flags: u64,
        reserved: u64,
        uncompressed_size: u64,
    ) -> Self {
        EntryHeader {
            kind: U16::new(kind.raw()),
            version: U16::new(ENTRY_VERSION),
            header_size: U32::new(header_size),
            payload_size: U64::new(payload_size),
            compressed_size: U32::new(compressed_size),
            options_offset: U32::new(options_offset),
            minor: U16::new(minor),
            major: U16::new(major),
            sm: U32::new(sm),
            identifier_offset: U32::new(identifier_offset),
            identifier_len: U32::new(identifier_len),
            flags: U64::new(flags),
            reserved: U64::new(reserved),
            uncompressed_size: U64::new(uncompressed_size),
        }
    }
}
// The layouts as measured (docs/fatbin-format.md): no padding.
const _: () = assert!(HEADER_SIZE == 16 && ENTRY_FIXED_SIZE == 64);

/// Reads a `T` at `offset` of `data`, or names what is missing.
fn read<'a, T: FromBytes + KnownLayout + Immutable + Unaligned>(
    data: &'a [u8],
    offset: u64,
    what: &'static str,
) -> ParseResult<&'a T> {
    let bytes = slice(data, offset, size_of::<T>() as u64, what)?;
    // `slice` returned exactly `size_of::<T>()` bytes, and `T` is unaligned.
    T::ref_from_bytes(bytes).map_err(|_| Reason::Malformed {
        what,
        detail: "header does not fit".into(),
    })
}

/// Whether `data` starts with the fatbin magic.
pub fn has_magic(data: &[u8]) -> bool {
    data.get(..4) == Some(&MAGIC.to_le_bytes())
}

impl FileHeader {
    /// A version-1 header before `body_size` bytes of entries.
    #[cfg(feature = "fatbin")]
    pub(crate) fn new(body_size: u64) -> Self {
        FileHeader {
            magic: U32::new(MAGIC),
            version: U16::new(1),
            header_size: U16::new(HEADER_SIZE as u16),
            body_size: U64::new(body_size),
        }
    }

    /// Bytes the fatbin occupies, header included, after checking the
    /// magic, version and header size.
    fn total_size(&self) -> ParseResult<u64> {
        let malformed = |detail: String| Reason::Malformed {
            what: "fatbin header",
            detail,
        };
        let (magic, version, header_size) =
            (self.magic.get(), self.version.get(), self.header_size.get());
        if magic != MAGIC {
            return Err(malformed(format!(
                "magic {magic:#010x}, expected {MAGIC:#010x}"
            )));
        }
        if version != 1 || u64::from(header_size) != HEADER_SIZE {
            return Err(malformed(format!(
                "version {version}, header size {header_size}; expected 1 and {HEADER_SIZE}"
            )));
        }
        HEADER_SIZE
            .checked_add(self.body_size.get())
            .ok_or_else(|| malformed("body size overflows".into()))
    }
}

/// Parses the fatbin at the start of `data`. Trailing bytes are ignored.
pub fn parse(data: &[u8]) -> ParseResult<Fatbin<'_>> {
    let header: &FileHeader = read(data, 0, "fatbin header")?;
    let total_size = header.total_size()?;
    let body = slice(data, HEADER_SIZE, total_size - HEADER_SIZE, "fatbin body")?;
    Ok(Fatbin { body, total_size })
}

pub(crate) fn parse_entry(body: &[u8], start: u64, index: usize) -> ParseResult<(Entry<'_>, u64)> {
    const WHAT: &str = "fatbin entry header";
    let fixed: &EntryHeader = read(body, start, WHAT)?;
    let kind = fixed.kind.get();
    let entry_version = fixed.version.get();
    let header_size = u64::from(fixed.header_size.get());
    let size = fixed.payload_size.get();
    let compressed_size = fixed.compressed_size.get();
    let options_offset = u64::from(fixed.options_offset.get());
    let (minor, major) = (fixed.minor.get(), fixed.major.get());
    let sm = fixed.sm.get();
    let ident_offset = u64::from(fixed.identifier_offset.get());
    let ident_len = u64::from(fixed.identifier_len.get());
    let flags = fixed.flags.get();
    let uncompressed_size = fixed.uncompressed_size.get();

    let malformed = |detail: String| Reason::Malformed { what: WHAT, detail };
    if entry_version != ENTRY_VERSION {
        return Err(malformed(format!(
            "entry {index}: version {entry_version:#x}, expected 0x101"
        )));
    }
    if header_size < ENTRY_FIXED_SIZE {
        return Err(malformed(format!(
            "entry {index}: header size {header_size} < 64"
        )));
    }
    let header = slice(body, start, header_size, WHAT)?;
    let payload_start = start + header_size;
    let payload = slice(body, payload_start, size, "fatbin entry payload")?;

    let compression = match (flags & FLAG_LZ4 != 0, flags & FLAG_ZSTD != 0) {
        (false, false) => Compression::None,
        (true, false) => Compression::Lz4,
        (false, true) => Compression::Zstd,
        (true, true) => {
            return Err(malformed(format!(
                "entry {index}: both LZ4 and zstd flags set"
            )));
        }
    };
    if compression != Compression::None && u64::from(compressed_size) > size {
        return Err(malformed(format!(
            "entry {index}: compressed size {compressed_size} exceeds stored size {size}"
        )));
    }

    let identifier = match ident_offset {
        0 => None,
        off => Some(entry_identifier(header, off, ident_len, index)?),
    };
    let options_raw = match options_offset {
        0 if reads_options(kind) => {
            return Err(Reason::BadEntryOptions {
                index,
                detail: "descriptor missing (offset 0): the driver would read one from the \
                         entry's first bytes and take options from 16 MiB past the entry"
                    .into(),
            });
        }
        0 => None,
        off => entry_options(header, off, kind == 2, index)?,
    };
    let options = options_raw
        .and_then(|bytes| std::str::from_utf8(bytes).ok())
        .filter(|text| text.bytes().all(|b| b.is_ascii_graphic() || b == b' '));
    let variant = if flags & FLAG_ARCH_SPECIFIC != 0 {
        ArchVariant::Specific
    } else if flags & FLAG_FAMILY != 0 {
        ArchVariant::Family
    } else {
        ArchVariant::Base
    };
    let entry = Entry {
        index,
        kind: EntryKind::from_raw(kind),
        arch: Arch { sm, variant },
        flags,
        compression,
        version: (major, minor),
        identifier,
        options,
        options_raw,
        reserved: fixed.reserved.get(),
        payload,
        compressed_size,
        uncompressed_size,
    };
    let next = payload_start
        .checked_add(size)
        .ok_or_else(|| malformed(format!("entry {index}: size overflows")))?;
    Ok((entry, next))
}

/// Whether the driver reads an entry of `kind`'s options descriptor
/// whatever its offset: PTX, relocatable PTX and LTO-IR. NVIDIA's writers
/// (nvcc, nvFatbin 12 and 13) give every such entry one, empty or not;
/// cubins have one only for sm_100+ compatibility records.
fn reads_options(kind: u16) -> bool {
    matches!(kind, 1 | 8 | 0x40)
}

/// The identifier: `len` bytes at `offset` inside the header, followed by
/// the NUL that ends it where it is read as a C string.
fn entry_identifier(header: &[u8], offset: u64, len: u64, index: usize) -> ParseResult<&[u8]> {
    const WHAT: &str = "fatbin entry identifier";
    let bytes = slice(header, offset, len, WHAT)?;
    if !ends_in_header(header, bytes, offset + len) {
        return Err(Reason::Malformed {
            what: WHAT,
            detail: format!("entry {index}: not NUL-terminated inside the header"),
        });
    }
    Ok(bytes)
}

/// Whether `bytes`, read from `header` up to `end`, hold the NUL that ends
/// them as a C string, or the byte at `end` is one: a reader that goes on
/// to the NUL stays inside the header.
fn ends_in_header(header: &[u8], bytes: &[u8], end: u64) -> bool {
    bytes.contains(&0) || slice(header, end, 1, "fatbin entry header") == Ok(&[0][..])
}

/// The options slot: a `{u32 offset, u32 len}` descriptor at `slot`, and
/// the bytes it names, all inside the entry's header. The driver and
/// nvJitLink read the text as a C string, so it must end in a NUL inside
/// the header; on sm_100+ cubins the slot carries a binary compatibility
/// blob instead, read by its length.
fn entry_options(
    header: &[u8],
    slot: u64,
    cubin: bool,
    index: usize,
) -> ParseResult<Option<&[u8]>> {
    let bad = |detail: String| Reason::BadEntryOptions { index, detail };
    let size = header.len();
    let descriptor = slot
        .checked_add(8)
        .and_then(|end| header.get(usize::try_from(slot).ok()?..usize::try_from(end).ok()?))
        .ok_or_else(|| {
            bad(format!(
                "descriptor at {slot:#x} lies outside the {size}-byte header"
            ))
        })?;
    let text_offset = u64::from(u32::from_le_bytes(
        descriptor[..4].try_into().unwrap_or_default(),
    ));
    let text_len = u64::from(u32::from_le_bytes(
        descriptor[4..].try_into().unwrap_or_default(),
    ));
    let outside = || {
        bad(format!(
            "[{text_offset:#x}, +{text_len:#x}) lie outside the {size}-byte header"
        ))
    };
    let bytes =
        slice(header, text_offset, text_len, "fatbin entry options").map_err(|_| outside())?;
    if !cubin && !ends_in_header(header, bytes, text_offset + text_len) {
        return Err(bad("are not NUL-terminated inside the header".into()));
    }
    Ok(Some(bytes))
}

/// Where the fatbins of a section are read from: the bytes in memory, or
/// a file read a piece at a time ([`inspect_path`](crate::inspect_path)).
pub(crate) trait Source {
    /// The section's size.
    fn size(&self) -> u64;

    /// Fills `buffer` from `offset`; fewer bytes than asked is a
    /// [`Reason::Truncated`].
    fn read_exact_at(&self, offset: u64, buffer: &mut [u8], what: &'static str) -> ParseResult<()>;

    /// Whether the `len` bytes at `offset` are all zero: trailing padding.
    fn all_zero(&self, offset: u64, len: u64) -> ParseResult<bool> {
        const CHUNK: u64 = 1 << 16;
        let mut chunk = vec![0; CHUNK.min(len) as usize];
        let mut at = 0;
        while at < len {
            let part = &mut chunk[..(len - at).min(CHUNK) as usize];
            self.read_exact_at(offset + at, part, "fatbin section")?;
            if part.iter().any(|&b| b != 0) {
                return Ok(false);
            }
            at += CHUNK;
        }
        Ok(true)
    }
}

impl Source for [u8] {
    fn size(&self) -> u64 {
        self.len() as u64
    }

    fn read_exact_at(&self, offset: u64, buffer: &mut [u8], what: &'static str) -> ParseResult<()> {
        buffer.copy_from_slice(slice(self, offset, buffer.len() as u64, what)?);
        Ok(())
    }

    fn all_zero(&self, offset: u64, len: u64) -> ParseResult<bool> {
        Ok(slice(self, offset, len, "fatbin section")?
            .iter()
            .all(|&b| b == 0))
    }
}

/// The `(offset, size)` of each fatbin in a section: back to back at
/// 8-byte alignment, followed by zero padding. Each fits in the section;
/// a section without one is an error.
pub(crate) fn section_fatbins(section: &(impl Source + ?Sized)) -> ParseResult<Vec<(u64, u64)>> {
    let size = section.size();
    let mut found = Vec::new();
    let mut offset = 0u64;
    while offset < size {
        let left = size - offset;
        let mut raw = [0u8; HEADER_SIZE as usize];
        let head = &mut raw[..left.min(HEADER_SIZE) as usize];
        section.read_exact_at(offset, head, "fatbin header")?;
        if head.iter().all(|&b| b == 0) && section.all_zero(offset, left)? {
            break;
        }
        let header: &FileHeader = read(&raw[..head_len(left)], 0, "fatbin header")?;
        let total = header.total_size()?;
        if total > left {
            return Err(Reason::Truncated {
                what: "fatbin body",
                offset,
                needed: total,
                available: left,
            });
        }
        found.push((offset, total));
        offset = (offset + total).next_multiple_of(8);
    }
    if found.is_empty() {
        return Err(Reason::Malformed {
            what: "fatbin section",
            detail: "section is empty".into(),
        });
    }
    Ok(found)
}

/// How much of a header fits in what is left of a section.
fn head_len(left: u64) -> usize {
    left.min(HEADER_SIZE) as usize
}

/// Parses every fatbin in a section: back to back at 8-byte alignment,
/// followed by zero padding.
pub fn parse_all(section: &[u8]) -> ParseResult<Vec<(u64, Fatbin<'_>)>> {
    section_fatbins(section)?
        .into_iter()
        .map(|(offset, total)| {
            let bytes = slice(section, offset, total, "fatbin body")?;
            Ok((offset, parse(bytes)?))
        })
        .collect()
}
