//! The fatbin container: a 16-byte header, then entries of PTX, cubin or
//! LTO-IR, each possibly LZ4- or zstd-compressed.
//!
//! Layout and flags are those of `docs/fatbin-format.md`, measured on
//! real NVIDIA output. Parsing is zero-copy and bounds-checked: hostile bytes
//! give an error, never a panic.

pub(crate) mod layout;
mod stream;

use std::borrow::Cow;

use crate::arch::Arch;
use crate::error::{ParseResult, Reason};

use layout::parse_entry;
#[cfg(test)]
use layout::{ENTRY_VERSION, MAGIC};
pub(crate) use layout::{Source, section_fatbins};
pub use layout::{has_magic, parse, parse_all};

pub(crate) const FLAG_64BIT: u64 = 0x1;
pub(crate) const FLAG_DEBUG: u64 = 0x2;
pub(crate) const FLAG_LZ4: u64 = 0x2000;
pub(crate) const FLAG_ZSTD: u64 = 0x8000;
pub(crate) const FLAG_OPAQUE_LTOIR: u64 = 0x10000;
pub(crate) const FLAG_ARCH_SPECIFIC: u64 = 0x10_0000;
pub(crate) const FLAG_FAMILY: u64 = 0x20_0000;

/// Decompression never allocates more than this, whatever a header claims.
pub const MAX_DECOMPRESSED_SIZE: u64 = 1 << 30;
/// The largest expansion accepted for a compressed entry. LZ4 blocks
/// cannot exceed about 255; real zstd PTX and cubins stay far below this.
pub const MAX_COMPRESSION_RATIO: u64 = 1024;
/// The most bytes one object's entries may decompress to, all together:
/// validation decodes every entry, so this bounds its time.
pub const MAX_DECOMPRESSED_TOTAL: u64 = 2 << 30;

/// What an entry holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum EntryKind {
    /// PTX text (kind 1).
    Ptx,
    /// A cubin ELF (kind 2).
    Cubin,
    /// LTO-IR (kind 8).
    Ltoir,
    /// Relocatable PTX from `nvFatbinAddReloc` (kind 0x40).
    RelocatablePtx,
    /// A kind this parser does not know.
    Unknown(u16),
}

impl EntryKind {
    /// The kind's number in the entry header.
    #[cfg(feature = "fatbin")]
    pub(crate) fn raw(self) -> u16 {
        match self {
            EntryKind::Ptx => 1,
            EntryKind::Cubin => 2,
            EntryKind::Ltoir => 8,
            EntryKind::RelocatablePtx => 0x40,
            EntryKind::Unknown(raw) => raw,
        }
    }

    fn from_raw(raw: u16) -> Self {
        match raw {
            1 => EntryKind::Ptx,
            2 => EntryKind::Cubin,
            8 => EntryKind::Ltoir,
            0x40 => EntryKind::RelocatablePtx,
            other => EntryKind::Unknown(other),
        }
    }

    /// A short lowercase name.
    pub fn name(&self) -> String {
        match self {
            EntryKind::Ptx => "ptx".into(),
            EntryKind::Cubin => "cubin".into(),
            EntryKind::Ltoir => "ltoir".into(),
            EntryKind::RelocatablePtx => "reloc-ptx".into(),
            EntryKind::Unknown(raw) => format!("unknown({raw:#x})"),
        }
    }
}

/// How an entry's payload is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Compression {
    /// Stored as is.
    None,
    /// A raw LZ4 block (flag 0x2000).
    Lz4,
    /// A zstd frame (flag 0x8000).
    Zstd,
}

impl Compression {
    /// A short lowercase name.
    pub fn name(&self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Lz4 => "lz4",
            Compression::Zstd => "zstd",
        }
    }
}

/// One fatbin (a section may hold several back to back), its entries read
/// on demand: validating or inspecting a fatbin of many entries holds one
/// at a time.
#[derive(Debug, Clone, Copy)]
pub struct Fatbin<'a> {
    /// The entries' bytes, after the header.
    body: &'a [u8],
    /// Bytes the fatbin occupies, header included.
    pub total_size: u64,
}

impl<'a> Fatbin<'a> {
    /// Every entry, in order; an entry whose header does not fit ends the
    /// iteration with its error.
    pub fn entries(&self) -> Entries<'a> {
        Entries {
            body: self.body,
            offset: 0,
            index: 0,
        }
    }
}

/// The entries of a [`Fatbin`], parsed one at a time.
#[derive(Debug, Clone)]
pub struct Entries<'a> {
    body: &'a [u8],
    offset: u64,
    index: usize,
}

impl<'a> Iterator for Entries<'a> {
    type Item = ParseResult<Entry<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.offset >= self.body.len() as u64 {
            return None;
        }
        let parsed = parse_entry(self.body, self.offset, self.index);
        // After an error there is no next header to find.
        self.offset = match &parsed {
            Ok((_, next)) => *next,
            Err(_) => u64::MAX,
        };
        self.index += 1;
        Some(parsed.map(|(entry, _)| entry))
    }
}

/// One entry of a fatbin, borrowing its payload.
#[derive(Debug, Clone)]
pub struct Entry<'a> {
    /// Position in the fatbin.
    pub index: usize,
    /// What it holds.
    pub kind: EntryKind,
    /// The SM number and `a` / `f` variant.
    pub arch: Arch,
    /// The raw flags word.
    pub flags: u64,
    /// How the payload is stored.
    pub compression: Compression,
    /// Version of the payload: PTX ISA, ELF ABI or LTO-IR format.
    pub version: (u16, u16),
    /// The identifier's bytes, if any (see [`Entry::identifier`]).
    pub(crate) identifier: Option<&'a [u8]>,
    /// Compile options recorded with the entry, if textual.
    pub options: Option<&'a str>,
    /// The options slot's bytes as stored: the text, or sm_100+ cubins'
    /// binary compatibility blob.
    pub options_raw: Option<&'a [u8]>,
    /// The header word at 0x30: 0, or compressed LTO-IR's opaque key.
    pub reserved: u64,
    /// Payload bytes as stored (padded, possibly compressed).
    pub payload: &'a [u8],
    /// Exact compressed length; 0 when not compressed.
    pub compressed_size: u32,
    /// Size after decompression; 0 when not compressed.
    pub uncompressed_size: u64,
}

impl<'a> Entry<'a> {
    /// The identifier string (usually the source file), if any.
    pub fn identifier(&self) -> Option<String> {
        self.identifier.map(|bytes| {
            String::from_utf8_lossy(bytes)
                .trim_end_matches('\0')
                .to_owned()
        })
    }

    /// Whether the payload is compressed LTO-IR, which NVIDIA encodes as well
    /// as compresses: it can be listed and linked, not decoded.
    pub fn is_opaque(&self) -> bool {
        self.flags & FLAG_OPAQUE_LTOIR != 0
    }

    /// Whether the entry is for 64-bit hosts.
    pub fn is_64bit(&self) -> bool {
        self.flags & FLAG_64BIT != 0
    }

    /// Whether the entry was built with `-g`.
    pub fn is_debug(&self) -> bool {
        self.flags & FLAG_DEBUG != 0
    }

    /// The payload, decompressed if needed, with PTX's NUL padding
    /// removed. Plain payloads are borrowed.
    ///
    /// The output is capped at the declared uncompressed size (and at
    /// [`MAX_DECOMPRESSED_SIZE`]); a payload that decodes to another size is
    /// an error.
    pub fn decompress(&self) -> ParseResult<Cow<'a, [u8]>> {
        let ptx = matches!(self.kind, EntryKind::Ptx | EntryKind::RelocatablePtx);
        Ok(match self.decompress_exact()? {
            Cow::Borrowed(bytes) if ptx => Cow::Borrowed(trim_ptx_padding(bytes)),
            Cow::Owned(mut bytes) if ptx => {
                bytes.truncate(trim_ptx_padding(&bytes).len());
                Cow::Owned(bytes)
            }
            whole => whole,
        })
    }

    /// Refuses, before decoding, a payload that claims to expand more than
    /// [`MAX_COMPRESSION_RATIO`] times: a bomb costs nothing to refuse.
    fn check_ratio(&self) -> ParseResult<()> {
        let (stored, expanded) = (u64::from(self.compressed_size), self.uncompressed_size);
        if expanded > stored.saturating_mul(MAX_COMPRESSION_RATIO) {
            return Err(Reason::DecompressionBudget {
                index: self.index,
                detail: format!(
                    "{stored} compressed bytes claim to expand to {expanded}, \
                     more than {MAX_COMPRESSION_RATIO} times"
                ),
            });
        }
        Ok(())
    }

    /// The payload as the driver sees it: decompressed, padding kept.
    pub(crate) fn decompress_exact(&self) -> ParseResult<Cow<'a, [u8]>> {
        let Some(input) = self.compressed_input()? else {
            return Ok(Cow::Borrowed(self.payload));
        };
        let expected = self.uncompressed_size;
        let err = |detail: String| self.decompress_error(detail);
        let output = match self.compression {
            Compression::Lz4 => lz4_flex::block::decompress(input, expected as usize)
                .map_err(|e| err(e.to_string()))?,
            Compression::Zstd => decompress_zstd(input, expected).map_err(err)?,
            Compression::None => unreachable!("handled by compressed_input"),
        };
        if output.len() as u64 != expected {
            return Err(err(format!(
                "decoded {} bytes, header says {expected}",
                output.len()
            )));
        }
        Ok(Cow::Owned(output))
    }

    /// The compressed bytes, after every check that needs no decoding
    /// (declared size, ratio, bounds, zstd's declared content size); `None`
    /// for a payload stored plain.
    fn compressed_input(&self) -> ParseResult<Option<&'a [u8]>> {
        if self.is_opaque() {
            return Err(Reason::Malformed {
                what: "fatbin entry",
                detail: format!(
                    "entry {} is encoded LTO-IR, which cannot be decoded",
                    self.index
                ),
            });
        }
        let expected = self.uncompressed_size;
        let err = |detail: String| self.decompress_error(detail);
        if self.compression == Compression::None {
            return Ok(None);
        }
        if expected > MAX_DECOMPRESSED_SIZE {
            return Err(err(format!(
                "declared size {expected} exceeds the {MAX_DECOMPRESSED_SIZE}-byte cap"
            )));
        }
        self.check_ratio()?;
        let input = self
            .payload
            .get(..self.compressed_size as usize)
            .ok_or_else(|| err("compressed size exceeds the payload".into()))?;
        if self.compression == Compression::Zstd {
            check_zstd_content_size(input, expected).map_err(err)?;
        }
        Ok(Some(input))
    }

    /// A decoding failure of this entry.
    pub(crate) fn decompress_error(&self, detail: String) -> Reason {
        Reason::Decompress {
            index: self.index,
            codec: self.compression.name(),
            detail,
        }
    }
}

/// PTX in fatbins is NUL-terminated and zero-padded to 8 bytes.
pub(crate) fn trim_ptx_padding(text: &[u8]) -> &[u8] {
    let end = text.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    &text[..end]
}

/// The frame must declare its content size, and it must be the entry's:
/// the 580 driver crashed JIT-compiling PTX from a frame without one
/// (`docs/gpu-results.md`), and nvcc and nvFatbin always write it.
fn check_zstd_content_size(input: &[u8], expected: u64) -> Result<(), String> {
    let missing = || "the zstd frame does not declare its content size".to_owned();
    let descriptor = *input.get(4).ok_or_else(missing)?;
    let single_segment = descriptor & 0x20 != 0;
    let flag = descriptor >> 6;
    let dictionary = [0usize, 1, 2, 4][usize::from(descriptor & 0x3)];
    let field = 5 + usize::from(!single_segment) + dictionary;
    let read = |len: usize| -> Option<u64> {
        let bytes = input.get(field..field + len)?;
        let mut value = [0u8; 8];
        value[..len].copy_from_slice(bytes);
        Some(u64::from_le_bytes(value))
    };
    let declared = match (flag, single_segment) {
        (0, false) => return Err(missing()),
        (0, true) => read(1),
        (1, _) => read(2).map(|v| v + 256),
        (2, _) => read(4),
        _ => read(8),
    }
    .ok_or_else(missing)?;
    if declared != expected {
        return Err(format!(
            "the zstd frame declares {declared} bytes, the entry header {expected}"
        ));
    }
    Ok(())
}

fn decompress_zstd(input: &[u8], expected: u64) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let decoder = ruzstd::decoding::StreamingDecoder::new(input).map_err(|e| e.to_string())?;
    let mut output = Vec::with_capacity(expected.min(MAX_DECOMPRESSED_SIZE) as usize);
    // One byte more than expected, to notice a payload that decodes too long.
    decoder
        .take(expected + 1)
        .read_to_end(&mut output)
        .map_err(|e| e.to_string())?;
    Ok(output)
}

/// What one object's validation may still read; see
/// [`MAX_DECOMPRESSED_TOTAL`]. Plain payloads count too: sections of a host
/// object may all point at one range, and each is read again.
#[derive(Debug)]
pub(crate) struct Budget {
    left: u64,
}

impl Budget {
    /// The budget of one object, however many fatbins it holds.
    pub(crate) fn per_object() -> Self {
        Budget {
            left: MAX_DECOMPRESSED_TOTAL,
        }
    }

    /// Takes the declared cost of every entry of `fatbin` from its headers
    /// alone, decoding nothing: a budget that a whole object (or archive)
    /// overruns is refused before any entry is decompressed. Entries whose
    /// header does not read stop the sum there; the full pass says why.
    pub(crate) fn take_declared(&mut self, fatbin: &Fatbin<'_>) -> ParseResult<()> {
        for entry in fatbin.entries() {
            let Ok(entry) = entry else { break };
            if !matches!(entry.kind, EntryKind::Unknown(_)) {
                self.take(&entry)?;
            }
        }
        Ok(())
    }

    /// Takes what reading `entry` costs, before it is read: its
    /// decompressed size (after the ratio check), or its stored size when
    /// plain. An entry over the remaining total is refused unread. Opaque
    /// LTO-IR is never decoded and costs nothing.
    pub(crate) fn take(&mut self, entry: &Entry<'_>) -> ParseResult<()> {
        let cost = match entry.compression {
            _ if entry.is_opaque() => return Ok(()),
            Compression::None => entry.payload.len() as u64,
            Compression::Lz4 | Compression::Zstd => {
                entry.check_ratio()?;
                entry.uncompressed_size
            }
        };
        self.left = self
            .left
            .checked_sub(cost)
            .ok_or_else(|| Reason::DecompressionBudget {
                index: entry.index,
                detail: format!(
                    "the object's entries hold more than {MAX_DECOMPRESSED_TOTAL} bytes to read"
                ),
            })?;
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Builds a fatbin of uncompressed entries, for tests: cubins without
    /// options, other kinds with an empty options descriptor, as nvFatbin
    /// writes them.
    pub(crate) fn build(entries: &[(u16, u32, u64, &[u8])]) -> Vec<u8> {
        let mut body = Vec::new();
        for &(kind, sm, flags, payload) in entries {
            let padded = payload.len().next_multiple_of(8);
            let options = kind != 2;
            body.extend_from_slice(&kind.to_le_bytes());
            body.extend_from_slice(&ENTRY_VERSION.to_le_bytes());
            body.extend_from_slice(&(if options { 80u32 } else { 64 }).to_le_bytes());
            body.extend_from_slice(&(padded as u64).to_le_bytes());
            body.extend_from_slice(&[0; 4]); // compressed size
            body.extend_from_slice(&(if options { 64u32 } else { 0 }).to_le_bytes());
            body.extend_from_slice(&0u16.to_le_bytes());
            body.extend_from_slice(&8u16.to_le_bytes());
            body.extend_from_slice(&sm.to_le_bytes());
            body.extend_from_slice(&[0; 8]); // identifier
            body.extend_from_slice(&flags.to_le_bytes());
            body.extend_from_slice(&[0; 16]);
            if options {
                // {offset 72, length 0}, then the empty text's NUL, padded.
                body.extend_from_slice(&72u32.to_le_bytes());
                body.extend_from_slice(&[0; 12]);
            }
            body.extend_from_slice(payload);
            body.resize(body.len() + padded - payload.len(), 0);
        }
        let mut out = Vec::new();
        out.extend_from_slice(&MAGIC.to_le_bytes());
        out.extend_from_slice(&1u16.to_le_bytes());
        out.extend_from_slice(&16u16.to_le_bytes());
        out.extend_from_slice(&(body.len() as u64).to_le_bytes());
        out.extend_from_slice(&body);
        out
    }

    fn entries<'a>(fatbin: &Fatbin<'a>) -> Vec<Entry<'a>> {
        fatbin.entries().collect::<ParseResult<_>>().unwrap()
    }

    #[test]
    fn parses_entries_and_flags() {
        let ptx = b".version 8.0\n.target sm_90a\n.address_size 64\n";
        let data = build(&[(1, 90, 0x10_0011, ptx), (2, 100, 0x20_0011, b"\x7fELF")]);
        let fatbin = parse(&data).unwrap();
        let entries = entries(&fatbin);
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].kind, EntryKind::Ptx);
        assert_eq!(entries[0].arch.to_string(), "sm_90a");
        assert_eq!(entries[1].arch.to_string(), "sm_100f");
        assert_eq!(&*entries[0].decompress().unwrap(), &ptx[..]);
        assert_eq!(fatbin.total_size, data.len() as u64);
    }

    #[test]
    fn truncation_is_an_error_at_every_length() {
        let data = build(&[(1, 90, 0x11, b".version 8.0\n.target sm_90\n")]);
        for len in 0..data.len() {
            let truncated = &data[..len];
            let validated = crate::read::validate(crate::ObjectKind::Fatbin, truncated);
            assert!(validated.is_err(), "len {len}");
            // The header check or the entry's fails, never both pass.
            let parsed =
                parse(truncated).map(|fatbin| fatbin.entries().collect::<ParseResult<Vec<_>>>());
            assert!(!matches!(parsed, Ok(Ok(_))), "len {len}");
        }
    }

    #[test]
    fn several_fatbins_back_to_back() {
        let mut section = build(&[(1, 80, 0x11, b"a")]);
        section.extend(build(&[(1, 90, 0x11, b"b"), (1, 90, 0x11, b"c")]));
        section.extend([0; 16]);
        let all = parse_all(&section).unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!(entries(&all[1].1).len(), 2);
    }

    /// Plain payloads count against the budget too: sections that all
    /// point at one range are read again each time.
    #[test]
    fn plain_payloads_count_against_the_budget() {
        let data = build(&[(2, 90, 0x11, &[7u8; 64])]);
        let fatbin = parse(&data).unwrap();
        let entry = entries(&fatbin).remove(0);
        let mut budget = Budget { left: 100 };
        budget.take(&entry).unwrap();
        assert!(matches!(
            budget.take(&entry),
            Err(Reason::DecompressionBudget { .. })
        ));
    }

    /// A zstd frame without a content size (ruzstd's own) is refused;
    /// with it, accepted.
    #[test]
    fn zstd_frames_must_declare_their_content_size() {
        let text = b".version 8.0\n.target sm_90\n.address_size 64\n\0";
        let frame = ruzstd::encoding::compress_to_vec(
            &text[..],
            ruzstd::encoding::CompressionLevel::Fastest,
        );
        assert!(check_zstd_content_size(&frame, text.len() as u64).is_err());
        let mut declared = frame[..4].to_vec();
        declared.push(0x20 | (frame[4] & 0x4));
        declared.push(text.len() as u8);
        declared.extend_from_slice(&frame[6..]);
        check_zstd_content_size(&declared, text.len() as u64).unwrap();
        assert!(check_zstd_content_size(&declared, 7).is_err());
    }

    /// A PTX, relocatable PTX or LTO-IR entry without an options
    /// descriptor is refused: the driver would read one from the entry's
    /// first bytes (kind and version make offset 0x01010001, 16 MiB past
    /// the entry). A cubin needs none.
    #[test]
    fn entries_the_driver_reads_options_of_need_a_descriptor() {
        let ptx = b".version 8.0\n.target sm_90\n.address_size 64\n";
        for kind in [1u16, 8, 0x40] {
            let mut data = build(&[(kind, 90, 0x11, ptx)]);
            assert!(entries(&parse(&data).unwrap())[0].options_raw == Some(&[][..]));
            // Options offset 0, as this crate's writer wrote PTX before.
            data[16 + 0x14..16 + 0x18].copy_from_slice(&0u32.to_le_bytes());
            let refused = parse(&data).unwrap().entries().next().unwrap();
            assert!(
                matches!(refused, Err(Reason::BadEntryOptions { index: 0, .. })),
                "kind {kind}: {refused:?}"
            );
        }
        let cubin = build(&[(2, 90, 0x11, b"\x7fELF")]);
        assert_eq!(entries(&parse(&cubin).unwrap())[0].options_raw, None);
    }

    /// An identifier is read as a C string: it must end inside the header.
    #[test]
    fn identifiers_end_inside_the_header() {
        let mut data = build(&[(2, 90, 0x11, b"\x7fELF")]);
        // Identifier at 0x38 (the last 8 bytes of the fixed header), 8
        // bytes long: nothing follows it inside the 64-byte header.
        data[16 + 0x20..16 + 0x28].copy_from_slice(&[0x38, 0, 0, 0, 8, 0, 0, 0]);
        data[16 + 0x38..16 + 0x40].copy_from_slice(b"kernelsX");
        let refused = parse(&data).unwrap().entries().next().unwrap();
        assert!(
            matches!(refused, Err(Reason::Malformed { .. })),
            "{refused:?}"
        );
        data[16 + 0x3f] = 0;
        let entry = &entries(&parse(&data).unwrap())[0];
        assert_eq!(entry.identifier().as_deref(), Some("kernels"));
    }

    #[test]
    fn lz4_entries_decompress() {
        let plain = b".version 8.0\n.target sm_90\n.address_size 64\n".repeat(20);
        let packed = lz4_flex::block::compress(&plain);
        let mut data = build(&[(1, 90, 0x2011, &packed)]);
        // Patch the compressed and uncompressed sizes into the entry header.
        data[16 + 0x10..16 + 0x14].copy_from_slice(&(packed.len() as u32).to_le_bytes());
        data[16 + 0x38..16 + 0x40].copy_from_slice(&(plain.len() as u64).to_le_bytes());
        let entry = &entries(&parse(&data).unwrap())[0];
        assert_eq!(entry.compression, Compression::Lz4);
        assert_eq!(&*entry.decompress().unwrap(), &plain[..]);

        // A lying uncompressed size is an error, not a panic or a short read.
        data[16 + 0x38..16 + 0x40].copy_from_slice(&(plain.len() as u64 + 5).to_le_bytes());
        assert!(entries(&parse(&data).unwrap())[0].decompress().is_err());
    }
}
