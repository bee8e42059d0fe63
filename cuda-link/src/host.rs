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
    for &name in FATBIN_SECTIONS {
        let Some(section) = file.section_by_name(name) else {
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

/// Validates a host object for nvJitLink: the whole ELF structure, and
/// every embedded fatbin with its entries.
pub(crate) fn validate_object(data: &[u8]) -> ParseResult<()> {
    crate::elf::validate(data, "host object")?;
    for embedded in parse_object(data)?.fatbins {
        let place = format!("{} fatbin at {:#x}", embedded.section, embedded.offset);
        fatbin::validate_entries(&embedded.fatbin).map_err(|r| Reason::inside(place, r))?;
    }
    Ok(())
}

/// Validates every member as a host object (members without device code
/// are allowed, as nvJitLink skips them) and requires at least one with
/// device code, as nvJitLink does.
pub(crate) fn validate_archive(data: &[u8]) -> ParseResult<()> {
    let mut device_code = false;
    for member in members(data)? {
        let inside = |reason| Reason::inside(format!("member {}", member.name), reason);
        match validate_object(member.data) {
            Ok(()) => device_code = true,
            Err(Reason::NoDeviceCode) => {}
            Err(reason) => return Err(inside(reason)),
        }
    }
    if device_code {
        Ok(())
    } else {
        Err(Reason::ArchiveWithoutDeviceCode)
    }
}
