//! CUDA's own uses of ELF fields in a cubin, which NVIDIA's readers index
//! with unchecked: the symbol index in the `sh_info` of per-kernel
//! sections, the records of `.nv.info*` and the edges of `.nv.callgraph`.
//!
//! Runs after [`crate::elf::validate`], so every section's range, the
//! section-name table and the symbol tables are known to be sound.

use object::LittleEndian;
use object::elf;
use object::read::elf::{FileHeader, SectionHeader};

use crate::error::{ParseResult, Reason};

type Header = elf::FileHeader64<LittleEndian>;

/// `.nv.info` record formats: no value, byte, half-word (the value sits in
/// the record's last two bytes), and sized (that many bytes follow).
const EIFMT_NVAL: u8 = 1;
const EIFMT_HVAL: u8 = 3;
const EIFMT_SVAL: u8 = 4;
/// Attributes whose value starts with a function's symbol index.
const EIATTR_PARAM_CBANK: u8 = 0x0a;
const EIATTR_FRAME_SIZE: u8 = 0x11;
const EIATTR_MIN_STACK_SIZE: u8 = 0x12;
const EIATTR_MAX_STACK_SIZE: u8 = 0x23;
const EIATTR_REGCOUNT: u8 = 0x2f;
/// An attribute whose value is a list of symbol indices.
const EIATTR_EXTERNS: u8 = 0x0f;
/// `.nv.callgraph` marks (-1 .. -4) that stand where a callee would.
const CALLGRAPH_MARKS: u32 = 0xffff_fff0;
/// CUDA relocation types seen in nvcc 12 and 13 output reach 0x4b; nvJitLink
/// indexes a table with the type, and 0xd5 crashed it. Host objects keep
/// their own types (AArch64's start at 257), so this is for cubins only.
const MAX_CUDA_RELOCATION_TYPE: u32 = 0x7f;
/// `.text.<kernel>` keeps the register count in `sh_info`'s top byte.
const TEXT_SYMBOL_MASK: u32 = 0x00ff_ffff;
/// `.nv.merc.symtab`, the symbol table of sm_100+ cubins' Mercury
/// sections: ELF symbols, `sh_info` one past the last local, as in any
/// symbol table. The `.nv.merc.*` and `.nv.capmerc.*` sections name it
/// in `sh_link`, and their symbol indices are its.
const SHT_CUDA_MERC_SYMTAB: u32 = 0x7000_0085;

/// Checks every CUDA section of a structurally valid cubin.
pub(crate) fn validate(data: &[u8]) -> ParseResult<()> {
    let endian = LittleEndian;
    let malformed = |e: object::Error| Reason::Malformed {
        what: "cubin ELF",
        detail: e.to_string(),
    };
    let header = Header::parse(data).map_err(malformed)?;
    let sections = header.sections(endian, data).map_err(malformed)?;
    let count = |s: &elf::SectionHeader64<LittleEndian>| {
        s.sh_size(endian) / size_of::<elf::Sym64<LittleEndian>>() as u64
    };
    let main_count = sections
        .iter()
        .find(|s| s.sh_type(endian) == elf::SHT_SYMTAB)
        .map_or(0, count);
    check_special_section_indices(&sections, data)?;
    for (index, section) in sections.iter().enumerate() {
        // The symbol table this section's symbol indices are of: the one
        // its `sh_link` names when that is a symbol table, else `.symtab`.
        let symbol_count = sections
            .section(object::SectionIndex(section.sh_link(endian) as usize))
            .ok()
            .filter(|t| {
                t.sh_type(endian) == elf::SHT_SYMTAB || t.sh_type(endian).0 == SHT_CUDA_MERC_SYMTAB
            })
            .map_or(main_count, count);
        if section.sh_type(endian).0 == SHT_CUDA_MERC_SYMTAB {
            crate::elf::check_symbol_table(data, &sections, index, "cubin ELF")?;
            continue;
        }
        let name = sections.section_name(endian, section).unwrap_or_default();
        let shown = || format!("section {index} ({})", String::from_utf8_lossy(name));
        let kind = section.sh_type(endian).0;
        // ELF's own types, and CUDA's in the processor range; a type in
        // neither (one byte of a PROGBITS changed) crashed nvJitLink 13.
        if !(kind <= elf::SHT_SYMTAB_SHNDX.0 || (0x7000_0000..=0x7fff_ffff).contains(&kind)) {
            return Err(Reason::UnknownSectionType {
                section: index,
                kind,
            });
        }
        let relocation_size = match section.sh_type(endian) {
            elf::SHT_REL => Some(16),
            elf::SHT_RELA => Some(24),
            _ => None,
        };
        if let (Some(size), Ok(bytes)) = (relocation_size, section.data(endian, data)) {
            check_relocation_types(bytes, size, &shown)?;
        }
        if section.sh_type(endian) == elf::SHT_NOTE {
            check_toolkit_notes(section, data, &shown)?;
            continue;
        }
        let text = name.starts_with(b".text.");
        if !(text || name.starts_with(b".nv.")) {
            continue;
        }
        let info_link = section.sh_flags(endian).0 & elf::SHF_INFO_LINK.0 != 0;
        let plain = !matches!(
            section.sh_type(endian),
            elf::SHT_REL | elf::SHT_RELA | elf::SHT_SYMTAB | elf::SHT_DYNSYM | elf::SHT_STRTAB
        ) && !info_link;
        if info_link && !text {
            // `.nv.info.<k>` and `.nv.constant0.<k>` name the section of
            // their function (code, data, or a Mercury section of CUDA's own
            // type), never a table, a note or the null section; the index
            // was checked to be a section.
            let target = section.sh_info(endian);
            let names_a_table = sections
                .section(object::SectionIndex(target as usize))
                .map_or(true, |t| is_table(t.sh_type(endian)));
            if target == 0 || names_a_table {
                return Err(Reason::BadSectionLink {
                    section: index,
                    field: "sh_info",
                    target,
                });
            }
        }
        if plain {
            let info = section.sh_info(endian);
            let symbol = u64::from(if text { info & TEXT_SYMBOL_MASK } else { info });
            if symbol >= symbol_count.max(1) {
                return Err(Reason::BadSymbolIndex {
                    place: format!("{} sh_info", shown()),
                    index: symbol,
                    count: symbol_count,
                });
            }
        }
        let Ok(bytes) = section.data(endian, data) else {
            continue; // SHT_NOBITS
        };
        if name.starts_with(b".nv.info") {
            check_nv_info(bytes, &shown, symbol_count)?;
        } else if name == b".nv.callgraph" {
            check_callgraph(bytes, &shown, symbol_count)?;
        }
    }
    Ok(())
}

/// A symbol's section index in the reserved range (0xff00 and up) is
/// `SHN_ABS` or `SHN_COMMON` in CUDA output; the driver indexes its
/// sections with any other (0xff0c crashed the 580 driver). Indices below
/// the range were checked against the section count by [`crate::elf`].
fn check_special_section_indices(
    sections: &object::read::elf::SectionTable<'_, Header>,
    data: &[u8],
) -> ParseResult<()> {
    let endian = LittleEndian;
    let Ok(symbols) = sections.symbols(endian, data, elf::SHT_SYMTAB) else {
        return Ok(());
    };
    for (index, symbol) in symbols.iter().enumerate() {
        let shndx = object::read::elf::Sym::st_shndx(symbol, endian).0;
        if shndx >= elf::SHN_LORESERVE && shndx != elf::SHN_ABS.0 && shndx != elf::SHN_COMMON.0 {
            return Err(Reason::Malformed {
                what: "cubin ELF",
                detail: format!("symbol {index}: reserved section index {shndx:#x}"),
            });
        }
    }
    Ok(())
}

/// ELF's own table types, which no CUDA section points at with `sh_info`.
fn is_table(kind: elf::SectionType) -> bool {
    matches!(
        kind,
        elf::SHT_NULL
            | elf::SHT_SYMTAB
            | elf::SHT_STRTAB
            | elf::SHT_RELA
            | elf::SHT_HASH
            | elf::SHT_DYNAMIC
            | elf::SHT_NOTE
            | elf::SHT_REL
            | elf::SHT_DYNSYM
            | elf::SHT_GROUP
            | elf::SHT_SYMTAB_SHNDX
    )
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

fn check_index(place: impl FnOnce() -> String, index: u32, count: u64) -> ParseResult<()> {
    if u64::from(index) < count {
        Ok(())
    } else {
        Err(Reason::BadSymbolIndex {
            place: place(),
            index: index.into(),
            count,
        })
    }
}

/// Records `format, attribute, u16` (plus that many bytes for `EIFMT_SVAL`)
/// that tile the section exactly, with every symbol index in range.
fn check_nv_info(bytes: &[u8], shown: &dyn Fn() -> String, symbol_count: u64) -> ParseResult<()> {
    let bad = |detail: String| Reason::BadCudaRecords {
        section: shown(),
        detail,
    };
    let mut at = 0usize;
    let mut record = 0usize;
    while at < bytes.len() {
        let Some(&[format, attribute, lo, hi]) = bytes.get(at..at + 4) else {
            return Err(bad(format!("record {record} at {at:#x} is cut short")));
        };
        let value_len = match format {
            EIFMT_NVAL..=EIFMT_HVAL => 0,
            EIFMT_SVAL => usize::from(u16::from_le_bytes([lo, hi])),
            other => return Err(bad(format!("record {record}: unknown format {other}"))),
        };
        let value = bytes.get(at + 4..at + 4 + value_len).ok_or_else(|| {
            bad(format!(
                "record {record}'s {value_len}-byte value runs past the end"
            ))
        })?;
        let place = || format!("{} record {record}", shown());
        if format == EIFMT_SVAL {
            match attribute {
                EIATTR_PARAM_CBANK
                | EIATTR_FRAME_SIZE
                | EIATTR_MIN_STACK_SIZE
                | EIATTR_MAX_STACK_SIZE
                | EIATTR_REGCOUNT => {
                    if value.len() < 4 {
                        return Err(bad(format!("record {record} has no symbol index")));
                    }
                    check_index(place, u32_at(value, 0), symbol_count)?;
                }
                EIATTR_EXTERNS => {
                    if value.len() % 4 != 0 {
                        return Err(bad(format!("record {record}: a partial symbol index")));
                    }
                    for at in (0..value.len()).step_by(4) {
                        check_index(place, u32_at(value, at), symbol_count)?;
                    }
                }
                _ => {}
            }
        }
        at += 4 + value_len;
        record += 1;
    }
    Ok(())
}

/// Every relocation's type (the low half of `r_info`, at offset 8 of an
/// entry of `entry_size` bytes; whole entries were checked) is one CUDA has.
fn check_relocation_types(
    bytes: &[u8],
    entry_size: usize,
    shown: &dyn Fn() -> String,
) -> ParseResult<()> {
    for (position, entry) in bytes.chunks_exact(entry_size).enumerate() {
        let kind = u32_at(entry, 8);
        if kind > MAX_CUDA_RELOCATION_TYPE {
            return Err(Reason::BadCudaRecords {
                section: shown(),
                detail: format!(
                    "relocation {position} has type {kind:#x}, which CUDA does not define"
                ),
            });
        }
    }
    Ok(())
}

/// NVIDIA's toolkit note (`.note.nv.tkinfo`, type 0x7d0): a version and
/// five `u32` offsets (object file, tool, version, branch, options) into
/// the C strings after them. The driver reads the strings at those
/// offsets, so each offset lies inside them and the last ends in a NUL;
/// one changed byte of an offset crashed the 580 driver. Note layouts were
/// checked by [`crate::elf`].
fn check_toolkit_notes(
    section: &object::elf::SectionHeader64<LittleEndian>,
    data: &[u8],
    shown: &dyn Fn() -> String,
) -> ParseResult<()> {
    const NT_CUDA_TOOLKIT_INFO: u32 = 0x7d0;
    const HEADER: usize = 24;
    let bad = |detail: String| Reason::BadCudaRecords {
        section: shown(),
        detail,
    };
    let Ok(Some(mut notes)) = section.notes(LittleEndian, data) else {
        return Ok(());
    };
    while let Ok(Some(note)) = notes.next() {
        if note.name() != b"NVIDIA Corp" || note.n_type(LittleEndian).0 != NT_CUDA_TOOLKIT_INFO {
            continue;
        }
        let desc = note.desc();
        let strings = desc
            .get(HEADER..)
            .filter(|strings| strings.last() == Some(&0))
            .ok_or_else(|| bad("toolkit note without NUL-terminated strings".into()))?;
        for field in 1..HEADER / 4 {
            let offset = u32_at(desc, field * 4) as usize;
            if offset >= strings.len() {
                return Err(bad(format!(
                    "toolkit note string {field} at {offset:#x} lies past the {} bytes of strings",
                    strings.len()
                )));
            }
        }
    }
    Ok(())
}

/// Pairs of `u32` symbol indices (caller, callee); a callee may be a mark.
fn check_callgraph(bytes: &[u8], shown: &dyn Fn() -> String, symbol_count: u64) -> ParseResult<()> {
    if !bytes.len().is_multiple_of(8) {
        return Err(Reason::BadCudaRecords {
            section: shown(),
            detail: format!("size {} is not a whole number of 8-byte edges", bytes.len()),
        });
    }
    for (edge, pair) in bytes.chunks_exact(8).enumerate() {
        for index in [u32_at(pair, 0), u32_at(pair, 4)] {
            if index < CALLGRAPH_MARKS {
                check_index(|| format!("{} edge {edge}", shown()), index, symbol_count)?;
            }
        }
    }
    Ok(())
}
