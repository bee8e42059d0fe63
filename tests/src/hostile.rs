//! Hostile images made from a real cubin: each one lies about where its
//! structures are, in the ways that made size-less C APIs read past the
//! buffer. The CPU tests check that none becomes an `ObjectCode`; the GPU
//! tests check that `Library::load` and `Library::from_file` refuse them.

use crate::{ar_archive, host_object};

/// One hostile image.
#[derive(Debug, Clone)]
pub struct Hostile {
    /// What is wrong with it, e.g. `"e_shoff past the end"`.
    pub name: String,
    /// The bytes.
    pub bytes: Vec<u8>,
}

// ELF64 header fields and section header layout.
const E_PHOFF: usize = 0x20;
const E_SHOFF: usize = 0x28;
const E_PHENTSIZE: usize = 0x36;
const E_PHNUM: usize = 0x38;
const E_SHNUM: usize = 0x3c;
const E_SHSTRNDX: usize = 0x3e;
const SH_SIZE: usize = 64;
const SH_NAME: usize = 0x00;
const SH_OFFSET: usize = 0x18;
const SH_SIZE_FIELD: usize = 0x20;
const SH_LINK: usize = 0x28;

fn u16_at(bytes: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([bytes[at], bytes[at + 1]])
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    let mut word = [0; 8];
    word.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(word)
}

fn patched(cubin: &[u8], at: usize, value: &[u8]) -> Vec<u8> {
    let mut bytes = cubin.to_vec();
    bytes[at..at + value.len()].copy_from_slice(value);
    bytes
}

/// The offset of section header `index` of a valid ELF64 image.
fn section_header(cubin: &[u8], index: usize) -> usize {
    u64_at(cubin, E_SHOFF) as usize + index * SH_SIZE
}

/// The first section (after the null one) that occupies file bytes.
fn first_progbits(cubin: &[u8]) -> usize {
    let count = usize::from(u16_at(cubin, E_SHNUM));
    (1..count)
        .find(|&i| {
            let header = section_header(cubin, i);
            let kind = u32::from_le_bytes(cubin[header + 4..header + 8].try_into().unwrap());
            kind != 8 && u64_at(cubin, header + SH_SIZE_FIELD) > 0
        })
        .expect("a cubin has sections with bytes")
}

/// Every hostile variant of a valid ELF64 cubin, bare.
pub fn cubins(cubin: &[u8]) -> Vec<Hostile> {
    let len = cubin.len() as u64;
    let mut out = Vec::new();
    let mut add = |name: &str, bytes: Vec<u8>| {
        out.push(Hostile {
            name: name.to_owned(),
            bytes,
        })
    };
    // The 64-byte "cubin" of the report: a bare header whose tables lie
    // beyond its end.
    add("the ELF header alone", cubin[..64].to_vec());
    for cut in [65, 128, cubin.len() / 2, cubin.len() - 64, cubin.len() - 1] {
        add(&format!("truncated to {cut} bytes"), cubin[..cut].to_vec());
    }
    add(
        "e_shoff past the end",
        patched(cubin, E_SHOFF, &(len - 16).to_le_bytes()),
    );
    add(
        "e_shoff overflowing",
        patched(cubin, E_SHOFF, &u64::MAX.to_le_bytes()),
    );
    add(
        "e_shnum past the end",
        patched(cubin, E_SHNUM, &(u16_at(cubin, E_SHNUM) + 40).to_le_bytes()),
    );
    // Relocatable cubins have no program headers: declare one.
    let with_segments = |offset: u64, count: u16| {
        let mut bytes = patched(cubin, E_PHOFF, &offset.to_le_bytes());
        bytes[E_PHENTSIZE..E_PHENTSIZE + 2].copy_from_slice(&56u16.to_le_bytes());
        bytes[E_PHNUM..E_PHNUM + 2].copy_from_slice(&count.to_le_bytes());
        bytes
    };
    add("e_phoff past the end", with_segments(len - 8, 1));
    add("e_phnum past the end", with_segments(64, 1000));
    add(
        "e_shstrndx out of range",
        patched(
            cubin,
            E_SHSTRNDX,
            &(u16_at(cubin, E_SHNUM) + 3).to_le_bytes(),
        ),
    );
    let section = section_header(cubin, first_progbits(cubin));
    add(
        "a section offset past the end",
        patched(cubin, section + SH_OFFSET, &(len + 4096).to_le_bytes()),
    );
    add(
        "a section size past the end",
        patched(cubin, section + SH_SIZE_FIELD, &len.to_le_bytes()),
    );
    add(
        "a section range overflowing",
        patched(
            cubin,
            section + SH_SIZE_FIELD,
            &(u64::MAX - 8).to_le_bytes(),
        ),
    );
    add(
        "a section name past the name table",
        patched(cubin, section + SH_NAME, &u32::MAX.to_le_bytes()),
    );
    add(
        "a section link out of range",
        patched(cubin, section + SH_LINK, &60_000u32.to_le_bytes()),
    );
    out
}

/// The hostile cubins, each also wrapped the ways nvcc wraps cubins: in a
/// fatbin, in a host object's `.nv_fatbin` and in an archive; plus
/// containers that lie themselves.
pub fn images(cubin: &[u8]) -> Vec<Hostile> {
    let mut out = Vec::new();
    for bare in cubins(cubin) {
        // Unpadded: zero padding could make good a cut in the last bytes.
        let fatbin = raw_fatbin_unpadded(2, 90, &bare.bytes);
        let object = host_object(&fatbin, ".nv_fatbin");
        out.push(Hostile {
            name: format!("fatbin holding a cubin with {}", bare.name),
            bytes: fatbin,
        });
        out.push(Hostile {
            name: format!("archive holding a cubin with {}", bare.name),
            bytes: ar_archive("k.o", &object),
        });
        out.push(Hostile {
            name: format!("object holding a cubin with {}", bare.name),
            bytes: object,
        });
        out.push(bare);
    }
    let fatbin = raw_fatbin(&[(2, 90, cubin)]);
    let mut lying_size = fatbin.clone();
    let claimed = u64_at(&fatbin, 8) + 4096;
    lying_size[8..16].copy_from_slice(&claimed.to_le_bytes());
    out.push(Hostile {
        name: "fatbin whose size runs past the end".into(),
        bytes: lying_size.clone(),
    });
    out.push(Hostile {
        name: "object whose .nv_fatbin runs past its section".into(),
        bytes: host_object(&lying_size, ".nv_fatbin"),
    });
    let mut lying_entry = fatbin.clone();
    let entry_size = u64_at(&fatbin, 16 + 8) + 4096;
    lying_entry[16 + 8..16 + 16].copy_from_slice(&entry_size.to_le_bytes());
    out.push(Hostile {
        name: "fatbin whose entry runs past the end".into(),
        bytes: lying_entry,
    });
    out.push(Hostile {
        name: "fatbin whose PTX has no NUL".into(),
        bytes: raw_fatbin_unpadded(1, 90, b".version 8.0\n.target sm_90\n.address_size 64\n"),
    });
    out
}

/// A fatbin of uncompressed entries `(kind, sm, payload)`, each payload
/// zero-padded to 8 bytes (PTX with at least one NUL), as nvFatbin lays
/// them out.
pub fn raw_fatbin(entries: &[(u16, u32, &[u8])]) -> Vec<u8> {
    let mut body = Vec::new();
    for &(kind, sm, payload) in entries {
        let is_ptx = matches!(kind, 1 | 0x40);
        let padded = (payload.len() + usize::from(is_ptx)).next_multiple_of(8);
        body.extend(entry_header(kind, sm, padded as u64));
        body.extend_from_slice(payload);
        body.resize(body.len() + padded - payload.len(), 0);
    }
    wrap_body(body)
}

/// One entry whose stored size is the payload's exact length, no padding.
fn raw_fatbin_unpadded(kind: u16, sm: u32, payload: &[u8]) -> Vec<u8> {
    let mut body = entry_header(kind, sm, payload.len() as u64);
    body.extend_from_slice(payload);
    wrap_body(body)
}

/// An entry's header: the fixed part, then for the kinds whose options the
/// driver reads (PTX, LTO-IR, relocatable PTX) an empty options
/// descriptor, as nvFatbin writes it.
fn entry_header(kind: u16, sm: u32, size: u64) -> Vec<u8> {
    let mut header = fixed_header(kind, sm, size);
    if matches!(kind, 1 | 8 | 0x40) {
        header[4..8].copy_from_slice(&80u32.to_le_bytes());
        header[0x14..0x18].copy_from_slice(&64u32.to_le_bytes());
        // {offset 72, length 0}, the empty text's NUL, padding.
        header.extend_from_slice(&72u32.to_le_bytes());
        header.extend_from_slice(&[0; 12]);
    }
    header
}

/// The 64-byte fixed part of an entry header, options offset 0.
fn fixed_header(kind: u16, sm: u32, size: u64) -> Vec<u8> {
    let mut header = Vec::with_capacity(64);
    header.extend_from_slice(&kind.to_le_bytes());
    header.extend_from_slice(&0x0101u16.to_le_bytes());
    header.extend_from_slice(&64u32.to_le_bytes());
    header.extend_from_slice(&size.to_le_bytes());
    header.extend_from_slice(&[0; 8]); // compressed size, options offset
    header.extend_from_slice(&0u16.to_le_bytes()); // minor
    header.extend_from_slice(&8u16.to_le_bytes()); // major
    header.extend_from_slice(&sm.to_le_bytes());
    header.extend_from_slice(&[0; 8]); // identifier
    header.extend_from_slice(&0x11u64.to_le_bytes()); // 64-bit, host Linux
    header.extend_from_slice(&[0; 16]);
    header
}

fn wrap_body(body: Vec<u8>) -> Vec<u8> {
    let mut out = 0xBA55_ED50u32.to_le_bytes().to_vec();
    out.extend_from_slice(&1u16.to_le_bytes());
    out.extend_from_slice(&16u16.to_le_bytes());
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend(body);
    out
}

/// Which part of a valid ELF64 image holds byte `offset`: `"ELF header"`,
/// `"section headers"`, a section's name, or `"between sections"`.
pub fn part_at(elf: &[u8], offset: usize) -> String {
    if offset < 64 {
        return "ELF header".into();
    }
    let table = u64_at(elf, E_SHOFF) as usize;
    let count = usize::from(u16_at(elf, E_SHNUM));
    if (table..table + count * SH_SIZE).contains(&offset) {
        return "section headers".into();
    }
    let names = section_header(elf, usize::from(u16_at(elf, E_SHSTRNDX)));
    let names = u64_at(elf, names + SH_OFFSET) as usize;
    (1..count)
        .map(|i| section_header(elf, i))
        .find(|&header| {
            let start = u64_at(elf, header + SH_OFFSET) as usize;
            let size = u64_at(elf, header + SH_SIZE_FIELD) as usize;
            let kind = u32::from_le_bytes(elf[header + 4..header + 8].try_into().unwrap());
            kind != 8 && (start..start + size).contains(&offset)
        })
        .map_or_else(
            || "between sections".into(),
            |header| {
                let name = names
                    + u32::from_le_bytes(elf[header..header + 4].try_into().unwrap()) as usize;
                let end = elf[name..].iter().position(|&b| b == 0).unwrap_or(0);
                String::from_utf8_lossy(&elf[name..name + end]).into_owned()
            },
        )
}

/// The section header of the first section whose name starts with
/// `prefix`, in a valid ELF64 image.
pub fn section_named(elf: &[u8], prefix: &str) -> Option<usize> {
    let count = usize::from(u16_at(elf, E_SHNUM));
    let names = section_header(elf, usize::from(u16_at(elf, E_SHSTRNDX)));
    let names = u64_at(elf, names + SH_OFFSET) as usize;
    (1..count).map(|i| section_header(elf, i)).find(|&header| {
        let name = names + u32::from_le_bytes(elf[header..header + 4].try_into().unwrap()) as usize;
        elf[name..].starts_with(prefix.as_bytes())
    })
}

const SH_INFO: usize = 0x2c;
const SH_ADDRALIGN: usize = 0x30;
const E_SHNUM_FIELD: usize = E_SHNUM;

/// One image of each class of structural lie that a C library trusts,
/// named for the test that refuses it. Built from a real relocatable cubin.
pub fn classes(cubin: &[u8]) -> Vec<Hostile> {
    let mut out = Vec::new();
    let mut add = |name: &str, bytes: Vec<u8>| {
        out.push(Hostile {
            name: name.to_owned(),
            bytes,
        })
    };
    let shnum = u16_at(cubin, E_SHNUM_FIELD);
    let ptx = b".version 8.0\n.target sm_90\n.address_size 64\n";

    // The encoded-LTO-IR flag (0x10000) on a cubin and on PTX text.
    for (name, kind, payload) in [
        ("encoded-LTO-IR flag on a cubin", 2, cubin),
        ("encoded-LTO-IR flag on PTX", 1, &ptx[..]),
    ] {
        let mut fatbin = raw_fatbin(&[(kind, 90, payload)]);
        fatbin[16 + 0x28..16 + 0x30].copy_from_slice(&0x1_0011u64.to_le_bytes());
        add(name, fatbin);
    }
    add(
        "options slot outside the header",
        fatbin_with_options(1, ptx, (0x7fff_0000, 64), b""),
    );
    add(
        "options not NUL-terminated",
        fatbin_with_options(1, ptx, (72, 8), b"-O3-O3-O"),
    );
    add(
        "empty options with no NUL inside the header",
        fatbin_with_options(1, ptx, (72, 0), b""),
    );
    // Options offset 0, as this project's writer once wrote PTX: the
    // driver reads "options" 16 MiB past the entry.
    for (name, kind) in [
        ("PTX entry without an options descriptor", 1),
        ("LTO-IR entry without an options descriptor", 8),
        ("relocatable PTX entry without an options descriptor", 0x40),
    ] {
        let padded = (ptx.len() + 1).next_multiple_of(8);
        let mut body = fixed_header(kind, 90, padded as u64);
        body.extend_from_slice(ptx);
        body.resize(64 + padded, 0);
        add(name, wrap_body(body));
    }
    let mut unterminated = raw_fatbin(&[(2, 90, cubin)]);
    // Identifier: the fixed header's last 8 bytes, with no NUL after them.
    unterminated[16 + 0x20..16 + 0x28].copy_from_slice(&[0x38, 0, 0, 0, 8, 0, 0, 0]);
    unterminated[16 + 0x38..16 + 0x40].copy_from_slice(b"kernelsX");
    add("identifier not NUL-terminated", unterminated);
    let mut far_tables = cubin[..64].to_vec();
    far_tables[E_SHOFF..E_SHOFF + 8].copy_from_slice(&(1u64 << 40).to_le_bytes());
    add(
        "unknown entry kind carrying a cubin",
        raw_fatbin(&[(0x10, 90, &far_tables)]),
    );
    let mut header_alone = cubin[..64].to_vec();
    header_alone[E_SHOFF..E_SHOFF + 8].copy_from_slice(&0u64.to_le_bytes());
    add("the ELF header alone with e_shoff 0", header_alone);
    add(
        "e_shoff 0 in a full cubin",
        patched(cubin, E_SHOFF, &0u64.to_le_bytes()),
    );
    let mut phoff_zero = patched(cubin, E_PHNUM, &1u16.to_le_bytes());
    phoff_zero[E_PHENTSIZE..E_PHENTSIZE + 2].copy_from_slice(&56u16.to_le_bytes());
    phoff_zero[E_PHOFF..E_PHOFF + 8].copy_from_slice(&0u64.to_le_bytes());
    add("e_phoff 0 with a program header", phoff_zero);
    add(
        "e_phnum PN_XNUM",
        patched(cubin, E_PHNUM, &0xffffu16.to_le_bytes()),
    );
    add(
        "e_shstrndx SHN_XINDEX",
        patched(cubin, E_SHSTRNDX, &0xffffu16.to_le_bytes()),
    );
    add("e_shnum 0 with a section table", {
        let mut bytes = patched(cubin, E_SHNUM, &0u16.to_le_bytes());
        // Extended numbering keeps the count in section 0's sh_size.
        let null = section_header(cubin, 0);
        bytes[null + SH_SIZE_FIELD..null + SH_SIZE_FIELD + 8]
            .copy_from_slice(&u64::from(shnum).to_le_bytes());
        bytes
    });
    let symtab = section_named(cubin, ".symtab").expect("a cubin has .symtab");
    let symbols = u64_at(cubin, symtab + SH_OFFSET) as usize;
    // Symbol 1's st_shndx (symbol 0 is the null symbol).
    add(
        "a symbol's st_shndx SHN_XINDEX",
        patched(cubin, symbols + 24 + 6, &0xffffu16.to_le_bytes()),
    );
    add(
        "a symbol in a reserved section index",
        patched(cubin, symbols + 24 + 6, &0xff0cu16.to_le_bytes()),
    );
    for table in [".shstrtab", ".strtab"] {
        let header = section_named(cubin, table).expect("a cubin has both string tables");
        let end =
            (u64_at(cubin, header + SH_OFFSET) + u64_at(cubin, header + SH_SIZE_FIELD)) as usize;
        add(
            &format!("{table} without its last NUL"),
            patched(cubin, end - 1, b"A"),
        );
    }
    let text = section_named(cubin, ".text.").expect("a kernel has .text");
    add(
        "sh_info of .text.<kernel> past the symbols",
        patched(cubin, text + SH_INFO, &0x00ff_fff0u32.to_le_bytes()),
    );
    let kernel_info = section_named(cubin, ".nv.info.").expect("a kernel has .nv.info");
    add(
        "sh_info of .nv.info.<kernel> past the sections",
        patched(cubin, kernel_info + SH_INFO, &0x00ff_fff0u32.to_le_bytes()),
    );
    // Still a section index, but of the symbol table, not of code.
    let symtab_index = (0..usize::from(shnum))
        .find(|&i| section_header(cubin, i) == section_named(cubin, ".symtab").unwrap())
        .unwrap() as u32;
    add(
        "sh_info of .nv.info.<kernel> naming a table",
        patched(cubin, kernel_info + SH_INFO, &symtab_index.to_le_bytes()),
    );
    let nv_info = section_named(cubin, ".nv.info").expect("a cubin has .nv.info");
    let records = u64_at(cubin, nv_info + SH_OFFSET) as usize;
    let size = u64_at(cubin, nv_info + SH_SIZE_FIELD) as usize;
    let regcount = (records..records + size)
        .step_by(4)
        .find(|&at| cubin[at] == 4 && cubin[at + 1] == 0x2f)
        .expect("ptxas writes EIATTR_REGCOUNT");
    add(
        ".nv.info record naming a symbol past the symbols",
        patched(cubin, regcount + 4, &0x7fff_ffffu32.to_le_bytes()),
    );
    add(
        ".nv.info record running past its section",
        patched(
            cubin,
            nv_info + SH_SIZE_FIELD,
            &(size as u64 - 2).to_le_bytes(),
        ),
    );
    if let Some(callgraph) = section_named(cubin, ".nv.callgraph") {
        let size = u64_at(cubin, callgraph + SH_SIZE_FIELD);
        add(
            ".nv.callgraph of a partial edge",
            patched(cubin, callgraph + SH_SIZE_FIELD, &(size - 4).to_le_bytes()),
        );
    }
    add(
        "sh_addralign 2^62",
        patched(cubin, text + SH_ADDRALIGN, &(1u64 << 62).to_le_bytes()),
    );
    add(
        "sh_addralign 3",
        patched(cubin, text + SH_ADDRALIGN, &3u64.to_le_bytes()),
    );
    // Relocatable cubins have relocations; executable ones may not.
    let relocations = (1..usize::from(shnum))
        .map(|i| section_header(cubin, i))
        .find(|&h| u32::from_le_bytes(cubin[h + 4..h + 8].try_into().unwrap()) == 4);
    if let Some(relocations) = relocations {
        let first = u64_at(cubin, relocations + SH_OFFSET) as usize;
        add(
            "a relocation of a type CUDA does not define",
            patched(cubin, first + 8, &0xd5u32.to_le_bytes()),
        );
    }
    add(
        "a section type neither ELF's nor CUDA's",
        patched(cubin, text + 4, &0x00fd_0001u32.to_le_bytes()),
    );
    if let Some(note) = section_named(cubin, ".note.nv.tkinfo") {
        // Note header (12 bytes), "NVIDIA Corp\0" (12), then the version
        // and the string offsets: the tool name's is the second word.
        let desc = u64_at(cubin, note + SH_OFFSET) as usize + 24;
        add(
            "a toolkit note whose string offset lies past its strings",
            patched(cubin, desc + 8, &0x7fffu32.to_le_bytes()),
        );
    }
    add("zstd PTX bomb of 1 GiB", zstd_bomb_fatbin(1 << 30));
    add("PTX entry of zeros", raw_fatbin(&[(1, 90, &[0u8; 64])]));
    add(
        "object whose second .nv_fatbin is hostile",
        host_object_sections(&[
            (&raw_fatbin(&[(2, 90, cubin)]), ".nv_fatbin"),
            (&raw_fatbin(&[(2, 90, &cubin[..64])]), ".nv_fatbin"),
        ]),
    );
    let object = host_object(&raw_fatbin(&[(2, 90, cubin)]), ".nv_fatbin");
    add(
        "archive symbol past the end",
        ar_archive_with_symbol("k.o", &object, "saxpy", u32::MAX - 7),
    );
    out
}

/// A fatbin of one entry whose options descriptor (at header offset 64)
/// is `descriptor`, followed in the header by `text`.
pub fn fatbin_with_options(
    kind: u16,
    payload: &[u8],
    descriptor: (u32, u32),
    text: &[u8],
) -> Vec<u8> {
    let padded = (payload.len() + 1).next_multiple_of(8);
    let header_size = 72 + text.len().next_multiple_of(8);
    let mut body = fixed_header(kind, 90, padded as u64);
    body[4..8].copy_from_slice(&(header_size as u32).to_le_bytes());
    body[0x14..0x18].copy_from_slice(&64u32.to_le_bytes());
    body.extend_from_slice(&descriptor.0.to_le_bytes());
    body.extend_from_slice(&descriptor.1.to_le_bytes());
    body.extend_from_slice(text);
    body.resize(header_size, 0);
    body.extend_from_slice(payload);
    body.resize(header_size + padded, 0);
    wrap_body(body)
}

/// A fatbin of one zstd PTX entry that really decodes to `size` zero
/// bytes: a frame of RLE blocks, 4 bytes for every 128 KiB.
pub fn zstd_bomb_fatbin(size: u64) -> Vec<u8> {
    const BLOCK: u64 = 128 << 10;
    let mut frame = 0xFD2F_B528u32.to_le_bytes().to_vec();
    frame.push(0xE0); // single segment, 8-byte content size
    frame.extend_from_slice(&size.to_le_bytes());
    let blocks = size.div_ceil(BLOCK);
    for block in 0..blocks {
        let len = BLOCK.min(size - block * BLOCK);
        let last = u64::from(block + 1 == blocks);
        let header = last | (1 << 1) | (len << 3); // RLE
        frame.extend_from_slice(&header.to_le_bytes()[..3]);
        frame.push(0);
    }
    compressed_ptx_fatbin(&frame, 0x8000, size)
}

/// A fatbin of one LZ4 PTX entry that really decodes to about `size`
/// bytes of valid PTX: a kernel `k`, then a comment of `x` that one match
/// repeats (a byte of stream for every 255 of text).
pub fn lz4_ptx_bomb_fatbin(size: u64) -> Vec<u8> {
    let head = b".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() { ret; }\n//x";
    let tail = b"\n\0";
    let repeat = size as usize - head.len() - tail.len();
    let length = |mut n: usize, out: &mut Vec<u8>| {
        while n >= 255 {
            out.push(255);
            n -= 255;
        }
        out.push(n as u8);
    };
    // One sequence of the head's literals and a match of `x` (offset 1),
    // then the tail's literals, which end the block.
    let mut block = vec![0xFF];
    length(head.len() - 15, &mut block);
    block.extend_from_slice(head);
    block.extend_from_slice(&1u16.to_le_bytes());
    length(repeat - 4 - 15, &mut block);
    block.push((tail.len() as u8) << 4);
    block.extend_from_slice(tail);
    compressed_ptx_fatbin(&block, 0x2000, size)
}

/// A fatbin of one sm_90 PTX entry holding `stream`, compressed with the
/// codec of `codec_flag` (LZ4 0x2000, zstd 0x8000), declaring `size`.
fn compressed_ptx_fatbin(stream: &[u8], codec_flag: u64, size: u64) -> Vec<u8> {
    let stored = stream.len().next_multiple_of(8);
    let mut body = entry_header(1, 90, stored as u64);
    let header_size = body.len();
    body[0x10..0x14].copy_from_slice(&(stream.len() as u32).to_le_bytes());
    body[0x28..0x30].copy_from_slice(&(0x11u64 | codec_flag).to_le_bytes());
    body[0x38..0x40].copy_from_slice(&size.to_le_bytes());
    body.extend_from_slice(stream);
    body.resize(header_size + stored, 0);
    wrap_body(body)
}

/// A fatbin of `entries` zstd PTX entries, each claiming to decode to
/// `claimed` bytes from `claimed / 1024` stored bytes (the most expansion
/// the budget takes per entry), which are zeros and no zstd frame.
pub fn claiming_fatbin(entries: usize, claimed: u64) -> Vec<u8> {
    let stored = (claimed / 1024).next_multiple_of(8);
    let mut body = Vec::new();
    for _ in 0..entries {
        let mut entry = entry_header(1, 90, stored);
        entry[0x10..0x14].copy_from_slice(&(stored as u32).to_le_bytes());
        entry[0x28..0x30].copy_from_slice(&(0x11u64 | 0x8000).to_le_bytes());
        entry[0x38..0x40].copy_from_slice(&claimed.to_le_bytes());
        body.extend_from_slice(&entry);
        body.resize(body.len() + stored as usize, 0);
    }
    wrap_body(body)
}

/// A host object with several device-code sections, in order.
pub fn host_object_sections(sections: &[(&[u8], &str)]) -> Vec<u8> {
    use object::write::{Object, StandardSection};
    use object::{Architecture, BinaryFormat, Endianness, SectionKind};
    let mut obj = Object::new(BinaryFormat::Elf, Architecture::X86_64, Endianness::Little);
    let text = obj.section_id(StandardSection::Text);
    obj.append_section_data(text, &[0xc3], 1);
    for (fatbin, name) in sections {
        let id = obj.add_section(
            Vec::new(),
            name.as_bytes().to_vec(),
            SectionKind::ReadOnlyData,
        );
        obj.append_section_data(id, fatbin, 8);
    }
    obj.write().expect("writing an in-memory ELF cannot fail")
}

/// A GNU archive of one member with a symbol table naming `symbol` at
/// `offset`.
pub fn ar_archive_with_symbol(
    member_name: &str,
    member: &[u8],
    symbol: &str,
    offset: u32,
) -> Vec<u8> {
    let mut table = 1u32.to_be_bytes().to_vec();
    table.extend_from_slice(&offset.to_be_bytes());
    table.extend_from_slice(symbol.as_bytes());
    table.push(0);
    if table.len() % 2 == 1 {
        table.push(0);
    }
    let mut archive = b"!<arch>\n".to_vec();
    archive.extend_from_slice(
        format!(
            "{:<16}{:<12}{:<6}{:<6}{:<8}{:<10}`\n",
            "/",
            0,
            0,
            0,
            0,
            table.len()
        )
        .as_bytes(),
    );
    archive.extend_from_slice(&table);
    archive.extend_from_slice(&ar_archive(member_name, member)[8..]);
    archive
}
