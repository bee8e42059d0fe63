//! Cubins: CUDA ELF files (`e_machine` = EM_CUDA), both ABI v7 and v8.

use object::LittleEndian;
use std::collections::BTreeMap;

use object::elf;
use object::read::elf::{FileHeader, SectionHeader, Sym};

use crate::arch::{Arch, ArchVariant};
use crate::error::{ParseResult, Reason};
use crate::names::NameList;

/// `e_machine` of CUDA ELF files.
pub const EM_CUDA: u16 = 190;
const STO_CUDA_ENTRY: u8 = 0x10;
const STT_CUDA_OBJECT: elf::SymbolType = elf::SymbolType(13);
const EF_CUDA_ACCELERATORS_V7: u32 = 0x800;
const EF_CUDA_ACCELERATORS_V8: u32 = 0x8;
const NV_COMPAT_ARCH_SPECIFIC: u8 = 9;
const EIATTR_REGCOUNT: u8 = 0x2f;
const EIFMT_SVAL: u8 = 0x04;

type Header = elf::FileHeader64<LittleEndian>;

/// Relocatable (linkable) or executable (loadable only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum ElfType {
    /// ET_REL: from `ptxas -c`, `nvcc -rdc`; a link input.
    Relocatable,
    /// ET_EXEC: a finished cubin; loadable, not linkable.
    Executable,
}

/// What a cubin holds.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct CubinInfo {
    /// The SM it runs on.
    pub arch: Arch,
    /// EI_ABIVERSION: 7 (up to CUDA 12 below sm_100) or 8.
    pub abi_version: u8,
    /// Relocatable or executable.
    pub elf_type: ElfType,
    /// Kernel entry points (`STO_CUDA_ENTRY`).
    pub kernels: Vec<String>,
    /// Other defined functions.
    pub device_functions: Vec<String>,
    /// Defined variables.
    pub globals: Vec<String>,
    /// Defined functions and variables of global (not weak, not local)
    /// binding: what two inputs of one link must not both define.
    pub strong_symbols: NameList,
    /// Registers per thread of each function, from `.nv.info`'s
    /// `EIATTR_REGCOUNT` records.
    pub registers: BTreeMap<String, u32>,
}

/// Whether `data` is an ELF file whose machine is EM_CUDA.
pub fn is_cubin(data: &[u8]) -> bool {
    data.starts_with(b"\x7fELF") && elf_machine(data) == Some(EM_CUDA)
}

/// `e_machine` of an ELF file of either class, if the header is there.
pub fn elf_machine(data: &[u8]) -> Option<u16> {
    let bytes: [u8; 2] = data.get(0x12..0x14)?.try_into().ok()?;
    Some(match data.get(5) {
        Some(2) => u16::from_be_bytes(bytes),
        _ => u16::from_le_bytes(bytes),
    })
}

fn parse_header(data: &[u8]) -> ParseResult<&Header> {
    let malformed = |e: object::Error| Reason::Malformed {
        what: "cubin ELF",
        detail: e.to_string(),
    };
    if let Some(machine) = elf_machine(data).filter(|&m| m != EM_CUDA) {
        return Err(Reason::NotEmCuda { machine });
    }
    let header = Header::parse(data).map_err(malformed)?;
    let ident = header.e_ident();
    let abi = (ident.os_abi.0, ident.abi_version);
    if !matches!(abi, (0x33, 7) | (0x41, 8)) {
        return Err(Reason::UnsupportedCubinAbi {
            os_abi: abi.0,
            abi_version: abi.1,
        });
    }
    Ok(header)
}

/// Validates the ELF header and returns its type.
pub fn elf_type(data: &[u8]) -> ParseResult<ElfType> {
    let header = parse_header(data)?;
    match header.e_type(LittleEndian) {
        elf::ET_REL => Ok(ElfType::Relocatable),
        elf::ET_EXEC => Ok(ElfType::Executable),
        other => Err(Reason::Malformed {
            what: "cubin ELF",
            detail: format!("e_type {other} is neither ET_REL nor ET_EXEC"),
        }),
    }
}

/// Validates everything a loader or a linker trusts: the CUDA header, the
/// whole ELF structure (see [`crate::elf`]), and the symbol indices in
/// CUDA's own sections (see [`crate::cuda_sections`]). Returns the ELF type.
pub(crate) fn validate(data: &[u8]) -> ParseResult<ElfType> {
    let elf_type = elf_type(data)?;
    crate::elf::validate(data, "cubin ELF")?;
    crate::cuda_sections::validate(data)?;
    Ok(elf_type)
}

/// Validates (see [`validate`]) and reads arch, type and symbols: what
/// construction of an object does, in one call.
pub(crate) fn read(data: &[u8]) -> ParseResult<CubinInfo> {
    validate(data)?;
    inspect(data)
}

/// The bytes of section `name` of a validated cubin, if it has one.
#[cfg(feature = "fatbin")]
pub(crate) fn section(data: &[u8], name: &[u8]) -> Option<Vec<u8>> {
    let header = parse_header(data).ok()?;
    let sections = header.sections(LittleEndian, data).ok()?;
    let (_, section) = sections.section_by_name(LittleEndian, name)?;
    section.data(LittleEndian, data).ok().map(<[u8]>::to_vec)
}

/// Reads arch, type and symbols.
pub fn inspect(data: &[u8]) -> ParseResult<CubinInfo> {
    let elf_type = elf_type(data)?;
    let header = parse_header(data)?;
    let endian = LittleEndian;
    let malformed = |e: object::Error| Reason::Malformed {
        what: "cubin ELF",
        detail: e.to_string(),
    };
    let sections = header.sections(endian, data).map_err(malformed)?;
    let abi_version = header.e_ident().abi_version;
    let flags = header.e_flags(endian).0;

    let section_data = |name: &[u8]| -> Option<&[u8]> {
        let (_, section) = sections.section_by_name(endian, name)?;
        section.data(endian, data).ok()
    };
    let (sm, specific) = if abi_version == 7 {
        (flags & 0xff, flags & EF_CUDA_ACCELERATORS_V7 != 0)
    } else {
        let compat_specific = section_data(b".nv.compat").is_some_and(compat_says_arch_specific);
        (
            (flags >> 8) & 0xff,
            flags & EF_CUDA_ACCELERATORS_V8 != 0 || compat_specific,
        )
    };
    // Only the toolkit note tells 'f' apart from the base arch.
    let note_variant = section_data(b".note.nv.tkinfo").and_then(arch_variant_in_note);
    let variant = match (specific, note_variant) {
        (true, _) => ArchVariant::Specific,
        (false, Some(variant)) => variant,
        (false, None) => ArchVariant::Base,
    };

    let mut info = CubinInfo {
        arch: Arch { sm, variant },
        abi_version,
        elf_type,
        kernels: Vec::new(),
        device_functions: Vec::new(),
        globals: Vec::new(),
        strong_symbols: NameList::new(),
        registers: BTreeMap::new(),
    };
    // Only SHT_SYMTAB: sm_100+ cubins carry a second "Mercury" table.
    let symbols = sections
        .symbols(endian, data, elf::SHT_SYMTAB)
        .map_err(malformed)?;
    for symbol in symbols.iter() {
        if symbol.st_shndx(endian) == elf::SHN_UNDEF {
            continue;
        }
        let Ok(name) = symbols.symbol_name(endian, symbol) else {
            continue;
        };
        let name = String::from_utf8_lossy(name).into_owned();
        let data_or_code = matches!(
            symbol.st_type(),
            elf::STT_FUNC | elf::STT_OBJECT | STT_CUDA_OBJECT
        );
        if data_or_code && symbol.st_bind() == elf::STB_GLOBAL {
            info.strong_symbols.push(&name);
        }
        match symbol.st_type() {
            elf::STT_FUNC if symbol.st_other().0 & STO_CUDA_ENTRY != 0 => info.kernels.push(name),
            elf::STT_FUNC => info.device_functions.push(name),
            elf::STT_OBJECT | STT_CUDA_OBJECT => info.globals.push(name),
            _ => {}
        }
    }
    if let Some(nv_info) = section_data(b".nv.info") {
        // Collected, then built in one go: a BTreeMap sorts a list and
        // builds bulk, where 40,000 inserts were a quarter of inspecting.
        info.registers = register_counts(nv_info)
            .into_iter()
            .filter_map(|(symbol_index, count)| {
                let symbol = symbols
                    .symbol(object::SymbolIndex(symbol_index as usize))
                    .ok()?;
                let name = symbols.symbol_name(endian, symbol).ok()?;
                Some((String::from_utf8_lossy(name).into_owned(), count))
            })
            .collect();
    }
    Ok(info)
}

/// `(symbol index, registers)` of each `EIATTR_REGCOUNT` record. Records are
/// `format, attribute, u16` and, for `EIFMT_SVAL`, that many more bytes.
fn register_counts(nv_info: &[u8]) -> Vec<(u32, u32)> {
    let mut counts = Vec::new();
    let mut at = 0usize;
    while let Some(&[format, attribute, lo, hi]) = nv_info.get(at..at + 4) {
        let value_len = if format == EIFMT_SVAL {
            usize::from(u16::from_le_bytes([lo, hi]))
        } else {
            0
        };
        let Some(value) = nv_info.get(at + 4..at + 4 + value_len) else {
            break;
        };
        if format == EIFMT_SVAL && attribute == EIATTR_REGCOUNT && value.len() == 8 {
            let word =
                |i: usize| u32::from_le_bytes([value[i], value[i + 1], value[i + 2], value[i + 3]]);
            counts.push((word(0), word(4)));
        }
        at += 4 + value_len;
    }
    counts
}

/// `.nv.compat` holds 4-byte records `02 attr value 00`; attr 9 = 1 marks an
/// arch-specific (`a`) target in CUDA 13 output.
fn compat_says_arch_specific(compat: &[u8]) -> bool {
    compat
        .chunks_exact(4)
        .take_while(|record| record[0] == 0x02)
        .any(|record| record[1] == NV_COMPAT_ARCH_SPECIFIC && record[2] == 1)
}

/// The `-arch sm_NNx` recorded in `.note.nv.tkinfo`, as a variant.
fn arch_variant_in_note(note: &[u8]) -> Option<ArchVariant> {
    let at = note.windows(9).position(|w| w == b"-arch sm_")?;
    let token: Vec<u8> = note[at + 6..]
        .iter()
        .copied()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
        .collect();
    let arch: Arch = std::str::from_utf8(&token).ok()?.parse().ok()?;
    Some(arch.variant)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compat_records() {
        assert!(compat_says_arch_specific(&[2, 2, 1, 0, 2, 9, 1, 0]));
        assert!(!compat_says_arch_specific(&[2, 2, 1, 0, 2, 9, 0, 0]));
        assert!(!compat_says_arch_specific(&[2, 2]));
    }

    #[test]
    fn note_arch() {
        let note = b"....ptxas\0-arch sm_100f -O3\0";
        assert_eq!(arch_variant_in_note(note), Some(ArchVariant::Family));
        assert_eq!(
            arch_variant_in_note(b"-arch sm_90\0"),
            Some(ArchVariant::Base)
        );
        assert_eq!(arch_variant_in_note(b"nothing"), None);
    }

    #[test]
    fn non_cuda_elf_is_refused() {
        let mut elf = vec![0u8; 64];
        elf[..4].copy_from_slice(b"\x7fELF");
        elf[4] = 2;
        elf[5] = 1;
        elf[0x12] = 62;
        assert_eq!(elf_type(&elf), Err(Reason::NotEmCuda { machine: 62 }));
    }
}
