//! Structural validation of ELF images, before C code that trusts the
//! offsets inside them sees the bytes.
//!
//! `cuLibraryLoadData` and `cuModuleLoadData*` take no size, and nvJitLink
//! follows the header's offsets without checking them against the size it
//! was given. So every cubin and every host object we hand over must have
//! its header tables, every section's range and every table index inside
//! the buffer. The checks are linear in the number of sections and symbols.

use object::LittleEndian;
use object::elf;
use object::pod::Pod;
use object::read::elf::{FileHeader, ProgramHeader, SectionHeader, Sym};

use crate::error::{ParseResult, Reason};
use crate::reader::slice;

type Header = elf::FileHeader64<LittleEndian>;
type Section = elf::SectionHeader64<LittleEndian>;
type Symbol = elf::Sym64<LittleEndian>;
type Rel = elf::Rel64<LittleEndian>;
type Rela = elf::Rela64<LittleEndian>;

const EHDR_SIZE: u16 = 64;
/// The largest `sh_addralign` accepted. NVIDIA's libraries divide by the
/// alignment as a 32-bit number, so 2^32 and above act as zero; no CUDA
/// or host toolchain aligns a section to more than a page or two.
pub(crate) const MAX_ALIGNMENT: u64 = 1 << 20;
/// `e_phnum` that says the count is in section 0 (`PN_XNUM`).
const PN_XNUM: u16 = 0xffff;

/// Checks an ELF64 little-endian image: header, section and program header
/// tables, every section's and segment's file range, the section-name table
/// and every symbol table's names and section indices. `what` names the
/// image in errors ("cubin ELF", "host object").
pub(crate) fn validate(data: &[u8], what: &'static str) -> ParseResult<()> {
    let malformed = |detail: String| Reason::Malformed { what, detail };
    let object_error = |e: object::Error| malformed(e.to_string());
    if data.get(4) != Some(&elf::ELFCLASS64.0) || data.get(5) != Some(&elf::ELFDATA2LSB.0) {
        return Err(malformed("not a 64-bit little-endian ELF".into()));
    }
    let header = Header::parse(data).map_err(object_error)?;
    let endian = LittleEndian;
    let ehsize = header.e_ehsize(endian);
    if ehsize != EHDR_SIZE {
        return Err(malformed(format!("e_ehsize {ehsize}, expected 64")));
    }
    check_table_fields(header)?;
    // Both table readers check entry size, count and range against `data`.
    let segments = header.program_headers(endian, data).map_err(object_error)?;
    for (index, segment) in segments.iter().enumerate() {
        if segment.p_type(endian) == elf::PT_NULL {
            continue;
        }
        let (offset, size) = (segment.p_offset(endian), segment.p_filesz(endian));
        slice(data, offset, size, what).map_err(|_| {
            malformed(format!(
                "segment {index} [{offset:#x}, +{size:#x}) lies outside the {}-byte image",
                data.len()
            ))
        })?;
    }
    let sections = header.section_headers(endian, data).map_err(object_error)?;
    if sections.is_empty() {
        // Device code lives in sections: an image without any is a lie
        // that some readers take as empty and others read past.
        return Err(malformed("no section header table".into()));
    }
    check_null_section(&sections[0], what)?;
    for (index, section) in sections.iter().enumerate() {
        check_section_range(data, index, section, what)?;
        let align = section.sh_addralign(endian);
        if align > MAX_ALIGNMENT || (align != 0 && !align.is_power_of_two()) {
            return Err(Reason::BadAlignment {
                section: index,
                align,
                max: MAX_ALIGNMENT,
            });
        }
        match section.sh_type(endian) {
            elf::SHT_STRTAB => check_string_table(data, index, section)?,
            elf::SHT_SYMTAB_SHNDX => {
                return Err(Reason::ExtendedNumbering {
                    field: "SHT_SYMTAB_SHNDX section",
                });
            }
            _ => {}
        }
        let link = section.sh_link(endian);
        if link as usize >= sections.len() {
            return Err(Reason::BadSectionLink {
                section: index,
                field: "sh_link",
                target: link,
            });
        }
        let info = section.sh_info(endian);
        let info_is_index = matches!(section.sh_type(endian), elf::SHT_REL | elf::SHT_RELA)
            || section.sh_flags(endian).0 & elf::SHF_INFO_LINK.0 != 0;
        if info_is_index && info as usize >= sections.len() {
            return Err(Reason::BadSectionLink {
                section: index,
                field: "sh_info",
                target: info,
            });
        }
    }
    // In a relocatable file relocation offsets count from their section's
    // start; in an executable or shared one they are addresses.
    let relocatable = header.e_type(endian) == elf::ET_REL;
    let names_index = header.shstrndx(endian, data).map_err(object_error)? as usize;
    let names = string_table(data, sections, names_index, what)?;
    for (index, section) in sections.iter().enumerate() {
        let name = section.sh_name(endian) as usize;
        if name != 0 && name >= names.len() {
            return Err(malformed(format!(
                "section {index}: name offset {name} is past the {}-byte section-name table",
                names.len()
            )));
        }
    }
    for (index, section) in sections.iter().enumerate() {
        match section.sh_type(endian) {
            elf::SHT_SYMTAB | elf::SHT_DYNSYM => check_symbols(data, sections, index, what)?,
            elf::SHT_REL => check_relocations::<Rel>(data, sections, index, relocatable, what)?,
            elf::SHT_RELA => check_relocations::<Rela>(data, sections, index, relocatable, what)?,
            elf::SHT_NOTE => check_notes(data, section, index, what)?,
            _ => {}
        }
    }
    Ok(())
}

/// The header's table fields: no table at offset 0 with entries, and no
/// extended numbering, which keeps the real counts in section 0 where
/// `object` and NVIDIA's readers disagree about them.
fn check_table_fields(header: &Header) -> ParseResult<()> {
    let endian = LittleEndian;
    let (phoff, phnum) = (header.e_phoff(endian), header.e_phnum(endian));
    let (shoff, shnum) = (header.e_shoff(endian), header.e_shnum(endian));
    if phnum == PN_XNUM {
        return Err(Reason::ExtendedNumbering {
            field: "e_phnum = PN_XNUM",
        });
    }
    if header.e_shstrndx(endian) == elf::SHN_XINDEX {
        return Err(Reason::ExtendedNumbering {
            field: "e_shstrndx = SHN_XINDEX",
        });
    }
    if shnum == 0 && shoff != 0 {
        return Err(Reason::ExtendedNumbering {
            field: "e_shnum = 0 with a section header table",
        });
    }
    if phoff == 0 && phnum != 0 {
        return Err(Reason::TableAtOffsetZero {
            table: "program header",
            count: phnum.into(),
        });
    }
    if shoff == 0 && shnum != 0 {
        return Err(Reason::TableAtOffsetZero {
            table: "section header",
            count: shnum.into(),
        });
    }
    Ok(())
}

/// Section 0 is all zero; extended numbering would keep counts in it.
fn check_null_section(section: &Section, what: &'static str) -> ParseResult<()> {
    let endian = LittleEndian;
    let fields = [
        u64::from(section.sh_type(endian).0),
        section.sh_size(endian),
        u64::from(section.sh_link(endian)),
        u64::from(section.sh_info(endian)),
    ];
    if fields == [0; 4] {
        Ok(())
    } else {
        Err(Reason::Malformed {
            what,
            detail: "section 0 is not the null section".into(),
        })
    }
}

/// A string table is read as C strings: its last byte must end the last one.
fn check_string_table(data: &[u8], index: usize, section: &Section) -> ParseResult<()> {
    // The range was checked just before.
    let bytes = section.data(LittleEndian, data).unwrap_or_default();
    if bytes.last() == Some(&0) {
        Ok(())
    } else {
        Err(Reason::UnterminatedStringTable { section: index })
    }
}

fn check_section_range(
    data: &[u8],
    index: usize,
    section: &Section,
    what: &'static str,
) -> ParseResult<()> {
    let Some((offset, size)) = section.file_range(LittleEndian) else {
        return Ok(()); // SHT_NOBITS occupies no file bytes.
    };
    slice(data, offset, size, what)
        .map(drop)
        .map_err(|_| Reason::Malformed {
            what,
            detail: format!(
                "section {index} [{offset:#x}, +{size:#x}) lies outside the {}-byte image",
                data.len()
            ),
        })
}

/// The bytes of string table `index`, which must be an `SHT_STRTAB`.
fn string_table<'a>(
    data: &'a [u8],
    sections: &[Section],
    index: usize,
    what: &'static str,
) -> ParseResult<&'a [u8]> {
    let endian = LittleEndian;
    match sections.get(index) {
        Some(section) if section.sh_type(endian) == elf::SHT_STRTAB => {
            let (offset, size) = section.file_range(endian).unwrap_or((0, 0));
            slice(data, offset, size, what)
        }
        _ => Err(Reason::Malformed {
            what,
            detail: format!("string table index {index} does not name an SHT_STRTAB section"),
        }),
    }
}

/// A table's `sh_entsize` must be the size of its entries, `T`.
fn check_entry_size<T>(table: &Section, shown: &str, what: &'static str) -> ParseResult<()> {
    let entry_size = table.sh_entsize(LittleEndian);
    let expected = size_of::<T>();
    if entry_size == expected as u64 {
        return Ok(());
    }
    Err(Reason::Malformed {
        what,
        detail: format!("{shown}: entry size {entry_size}, expected {expected}"),
    })
}

/// A symbol table of a CUDA type (`.nv.merc.symtab`), checked as ELF's.
pub(crate) fn check_symbol_table(
    data: &[u8],
    sections: &object::read::elf::SectionTable<'_, elf::FileHeader64<LittleEndian>>,
    index: usize,
    what: &'static str,
) -> ParseResult<()> {
    check_symbols(data, sections.iter().as_slice(), index, what)
}

/// A symbol table: entry size, its string table, and each symbol's name
/// offset and section index.
fn check_symbols(
    data: &[u8],
    sections: &[Section],
    index: usize,
    what: &'static str,
) -> ParseResult<()> {
    let endian = LittleEndian;
    let malformed = |detail: String| Reason::Malformed { what, detail };
    let table = &sections[index];
    check_entry_size::<Symbol>(table, &format!("symbol table {index}"), what)?;
    let strings = string_table(data, sections, table.sh_link(endian) as usize, what)?;
    let symbols: &[Symbol] = entries(data, table, index, what)?;
    // sh_info: one past the last local symbol.
    let first_global = u64::from(table.sh_info(endian));
    if first_global > symbols.len() as u64 {
        return Err(Reason::BadSymbolIndex {
            place: format!("symbol table {index} sh_info"),
            index: first_global,
            count: symbols.len() as u64,
        });
    }
    for (position, symbol) in symbols.iter().enumerate() {
        let name = symbol.st_name(endian) as usize;
        if name != 0 && name >= strings.len() {
            return Err(malformed(format!(
                "symbol {position} of table {index}: name offset {name} is past its string table"
            )));
        }
        let shndx = symbol.st_shndx(endian).0;
        if shndx == elf::SHN_XINDEX.0 {
            return Err(Reason::ExtendedNumbering {
                field: "a symbol's st_shndx = SHN_XINDEX",
            });
        }
        if shndx < elf::SHN_LORESERVE && usize::from(shndx) >= sections.len() {
            return Err(malformed(format!(
                "symbol {position} of table {index}: section index {shndx} does not exist"
            )));
        }
    }
    Ok(())
}

/// Section `index`'s bytes as a whole number of fixed-size entries.
fn entries<'a, T: Pod>(
    data: &'a [u8],
    section: &Section,
    index: usize,
    what: &'static str,
) -> ParseResult<&'a [T]> {
    let malformed = |detail: String| Reason::Malformed { what, detail };
    let bytes = section
        .data(LittleEndian, data)
        .map_err(|e| malformed(e.to_string()))?;
    object::pod::slice_from_all_bytes(bytes).map_err(|()| {
        malformed(format!(
            "section {index}: size {} is not a whole number of {}-byte entries",
            bytes.len(),
            size_of::<T>()
        ))
    })
}

/// `r_offset` and the symbol index of a relocation entry.
trait Relocation: Pod {
    fn offset_and_symbol(&self) -> (u64, u64);
}

impl Relocation for Rel {
    fn offset_and_symbol(&self) -> (u64, u64) {
        let info = self.r_info.get(LittleEndian);
        (self.r_offset.get(LittleEndian), info >> 32)
    }
}

impl Relocation for Rela {
    fn offset_and_symbol(&self) -> (u64, u64) {
        let info = self.r_info.get(LittleEndian);
        (self.r_offset.get(LittleEndian), info >> 32)
    }
}

/// A relocation section: whole entries, each naming a symbol of its linked
/// table and an offset inside the section it applies to.
fn check_relocations<R: Relocation>(
    data: &[u8],
    sections: &[Section],
    index: usize,
    relocatable: bool,
    what: &'static str,
) -> ParseResult<()> {
    let endian = LittleEndian;
    let malformed = |detail: String| Reason::Malformed { what, detail };
    let table = &sections[index];
    check_entry_size::<R>(table, &format!("relocation section {index}"), what)?;
    let relocations: &[R] = entries(data, table, index, what)?;
    // sh_link and sh_info were checked to be section indices.
    let symbols = &sections[table.sh_link(endian) as usize];
    let symbol_count = match symbols.sh_type(endian) {
        elf::SHT_SYMTAB | elf::SHT_DYNSYM => symbols.sh_size(endian) / size_of::<Symbol>() as u64,
        _ => 1, // No table: only the null symbol.
    };
    let target = table.sh_info(endian) as usize;
    let target_range = (target != 0).then(|| {
        let section = &sections[target];
        let start = if relocatable {
            0
        } else {
            section.sh_addr(endian)
        };
        start..start.saturating_add(section.sh_size(endian))
    });
    for (position, entry) in relocations.iter().enumerate() {
        let (offset, symbol) = entry.offset_and_symbol();
        if symbol >= symbol_count {
            return Err(malformed(format!(
                "relocation {position} of section {index}: symbol {symbol} does not exist"
            )));
        }
        if target_range
            .as_ref()
            .is_some_and(|range| !range.contains(&offset))
        {
            return Err(malformed(format!(
                "relocation {position} of section {index}: offset {offset:#x} is past section {target}"
            )));
        }
    }
    Ok(())
}

/// A note section: every note's name and descriptor inside the section.
fn check_notes(
    data: &[u8],
    section: &Section,
    index: usize,
    what: &'static str,
) -> ParseResult<()> {
    let malformed = |e: object::Error| Reason::Malformed {
        what,
        detail: format!("note section {index}: {e}"),
    };
    let Some(mut notes) = section.notes(LittleEndian, data).map_err(malformed)? else {
        return Ok(());
    };
    while notes.next().map_err(malformed)?.is_some() {}
    Ok(())
}
