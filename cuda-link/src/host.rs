//! Host objects (ELF with embedded fatbins) and `ar` archives of them.

use object::read::archive::ArchiveFile;
use object::{Object, ObjectSection};

use crate::error::{ParseResult, Reason};
use crate::fatbin::{self, Fatbin};

/// Sections that hold device code in host objects: whole-program code,
/// relocatable-device-code, and the Mach-O spelling.
pub const FATBIN_SECTIONS: &[&str] = &[".nv_fatbin", "__nv_relfatbin", "__nv_fatbin"];

/// A fatbin found inside a host object.
#[derive(Debug, Clone)]
pub struct EmbeddedFatbin<'a> {
    /// The section it sits in.
    pub section: &'static str,
    /// Its offset in the section.
    pub offset: u64,
    /// The parsed fatbin.
    pub fatbin: Fatbin<'a>,
}

/// A parsed host object: its machine and embedded fatbins.
#[derive(Debug, Clone)]
pub struct HostObject<'a> {
    /// The host architecture, e.g. `"X86_64"`.
    pub machine: String,
    /// Every fatbin of every device-code section.
    pub fatbins: Vec<EmbeddedFatbin<'a>>,
}

/// Whether `data` starts with an archive magic (regular or thin).
pub fn is_archive(data: &[u8]) -> bool {
    data.starts_with(b"!<arch>\n") || data.starts_with(b"!<thin>\n")
}

/// Parses a host object and the fatbins in it.
pub fn parse_object(data: &[u8]) -> ParseResult<HostObject<'_>> {
    let file = object::File::parse(data).map_err(|e| Reason::Malformed {
        what: "host object",
        detail: e.to_string(),
    })?;
    let mut fatbins = Vec::new();
    // Every section of a device-code name, not only the first: nvJitLink
    // reads them all.
    for section in file.sections() {
        let Some(&name) = FATBIN_SECTIONS
            .iter()
            .find(|&&name| section.name_bytes() == Ok(name.as_bytes()))
        else {
            continue;
        };
        let bytes = section.data().map_err(|e| Reason::Malformed {
            what: "host object section",
            detail: format!("{name}: {e}"),
        })?;
        for (offset, fatbin) in fatbin::parse_all(bytes)? {
            fatbins.push(EmbeddedFatbin {
                section: name,
                offset,
                fatbin,
            });
        }
    }
    if fatbins.is_empty() {
        return Err(Reason::NoDeviceCode);
    }
    Ok(HostObject {
        machine: format!("{:?}", file.architecture()),
        fatbins,
    })
}

/// One member of an archive.
#[derive(Debug, Clone)]
pub struct Member<'a> {
    /// The member's name.
    pub name: String,
    /// Its bytes.
    pub data: &'a [u8],
}

/// The members of an archive, symbol and name tables excluded.
pub fn members(data: &[u8]) -> ParseResult<Vec<Member<'_>>> {
    if data.starts_with(b"!<thin>\n") {
        return Err(Reason::ThinArchive);
    }
    let malformed = |e: object::Error| Reason::Malformed {
        what: "archive",
        detail: e.to_string(),
    };
    let archive = ArchiveFile::parse(data).map_err(malformed)?;
    if archive.is_thin() {
        return Err(Reason::ThinArchive);
    }
    let mut members = Vec::new();
    for member in archive.members() {
        let member = member.map_err(malformed)?;
        members.push(Member {
            name: String::from_utf8_lossy(member.name()).into_owned(),
            data: member.data(data).map_err(malformed)?,
        });
    }
    Ok(members)
}

/// Every offset in the archive's symbol table is the start of a member, as
/// nvJitLink follows them to find the member that defines a symbol.
pub(crate) fn check_symbol_table(data: &[u8]) -> ParseResult<()> {
    let malformed = |e: object::Error| Reason::Malformed {
        what: "archive symbol table",
        detail: e.to_string(),
    };
    let archive = ArchiveFile::parse(data).map_err(malformed)?;
    let Some(symbols) = archive.symbols().map_err(malformed)? else {
        return Ok(());
    };
    // A member is known by where its data starts: a header forged inside
    // another member's bytes would name data no validation saw.
    let mut starts = Vec::new();
    for member in archive.members() {
        starts.push(member.map_err(malformed)?.file_range().0);
    }
    starts.sort_unstable();
    for symbol in symbols {
        let symbol = symbol.map_err(malformed)?;
        let offset = symbol.offset();
        let starts_member = archive
            .member(offset)
            .is_ok_and(|member| starts.binary_search(&member.file_range().0).is_ok());
        if !starts_member {
            return Err(Reason::BadArchiveSymbol {
                symbol: String::from_utf8_lossy(symbol.name()).into_owned(),
                offset: offset.0,
            });
        }
    }
    Ok(())
}
