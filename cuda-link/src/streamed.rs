//! Inspecting a file without holding it in memory.
//!
//! A host object or shared library (a math library of NVIDIA's wheels is
//! 167 MB) is read one fatbin at a time with positioned reads, so memory
//! stays near the largest fatbin rather than the file. The file is not
//! mapped: a file that shrinks while it is read is a typed error here, where
//! a mapping would take the process down with SIGBUS.

use std::fs::File;
use std::path::Path;

use object::{Object, ObjectSection};

use crate::error::{ObjectError, ParseResult, Reason};
use crate::inspect::{Contents, EmbeddedInfo, Inspection, ObjectInfo};
use crate::kind::ObjectKind;
use crate::object_code::ObjectCode;
use crate::read::{self, Mode};
use crate::{fatbin, host};

/// Inspects the file at `path`, as [`ObjectCode::from_path`] followed by
/// [`ObjectCode::inspect`] would, but reads a host object's fatbins one at
/// a time instead of the whole file. Other kinds are read whole.
///
/// For a host object this validates less than [`ObjectCode`]: its ELF
/// structure is not checked, and an entry that fails its checks is listed
/// with its error instead of refusing the file. The listing never reaches C
/// code; use [`ObjectCode`] for bytes that will.
pub fn inspect_path(path: impl AsRef<Path>) -> Result<Inspection, ObjectError> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let fail = |reason| ObjectError::new(&name, reason);
    let io = |e: std::io::Error| fail(Reason::io(&e));
    let file = File::open(path).map_err(io)?;
    let size = file.metadata().map_err(io)?.len();
    let mut head = [0u8; 64];
    let head_len = read_up_to(&file, 0, &mut head).map_err(io)?;
    if ObjectKind::detect(&head[..head_len]) != Ok(ObjectKind::Object) {
        return ObjectCode::from_path(path)?.inspect();
    }
    // The cache reads the ELF headers through one handle; fatbins are read
    // through another with positioned reads, outside the cache.
    let cache = object::ReadCache::new(file.try_clone().map_err(io)?);
    let contents = object_info(&cache, &file, size).map_err(fail)?;
    Ok(Inspection {
        name: name.clone(),
        kind: ObjectKind::Object,
        size: usize::try_from(size).unwrap_or(usize::MAX),
        contents: Contents::Object(contents),
    })
}

/// Reads into `buffer` from `offset` until it is full or the file ends.
fn read_up_to(file: &File, offset: u64, buffer: &mut [u8]) -> std::io::Result<usize> {
    use std::os::unix::fs::FileExt;
    let mut filled = 0;
    while filled < buffer.len() {
        match file.read_at(&mut buffer[filled..], offset + filled as u64)? {
            0 => break,
            read => filled += read,
        }
    }
    Ok(filled)
}

/// A section of a file, read a piece at a time.
struct FileSection<'a> {
    file: &'a File,
    start: u64,
    len: u64,
}

impl fatbin::Source for FileSection<'_> {
    fn size(&self) -> u64 {
        self.len
    }

    fn read_exact_at(&self, offset: u64, buffer: &mut [u8], what: &'static str) -> ParseResult<()> {
        let read =
            read_up_to(self.file, self.start + offset, buffer).map_err(|e| Reason::io(&e))?;
        if read < buffer.len() {
            return Err(Reason::Truncated {
                what,
                offset,
                needed: buffer.len() as u64,
                available: read as u64,
            });
        }
        Ok(())
    }
}

fn object_info(cache: &object::ReadCache<File>, file: &File, size: u64) -> ParseResult<ObjectInfo> {
    let parsed = object::File::parse(cache).map_err(|e| Reason::Malformed {
        what: "host object",
        detail: e.to_string(),
    })?;
    let mut fatbins = Vec::new();
    // One buffer for every fatbin: fresh big allocations cost a page fault
    // per page.
    let mut buffer = Vec::new();
    // One budget for the file, as for an object in memory.
    let mut budget = fatbin::Budget::per_object();
    for section in parsed.sections() {
        // A name that cannot be read (a file cut short under us) is an
        // error, not a section to skip: skipping would say "no device code".
        let name = section.name_bytes().map_err(|e| Reason::Malformed {
            what: "host object section",
            detail: e.to_string(),
        })?;
        let Some(&section_name) = host::FATBIN_SECTIONS
            .iter()
            .find(|&&fatbin| name == fatbin.as_bytes())
        else {
            continue;
        };
        let Some((start, len)) = section.file_range() else {
            continue;
        };
        if start.checked_add(len).is_none_or(|end| end > size) {
            return Err(Reason::Truncated {
                what: "host object section",
                offset: start,
                needed: len,
                available: size.saturating_sub(start),
            });
        }
        let source = FileSection { file, start, len };
        for (offset, total) in fatbin::section_fatbins(&source)? {
            // A sparse file can claim any size; the buffer is allocated.
            if total > fatbin::MAX_DECOMPRESSED_TOTAL {
                return Err(Reason::DecompressionBudget {
                    index: 0,
                    detail: format!(
                        "a fatbin of {total} bytes at {offset:#x} of {section_name}, \
                         over {} bytes",
                        fatbin::MAX_DECOMPRESSED_TOTAL
                    ),
                });
            }
            buffer.resize(usize::try_from(total).unwrap_or(usize::MAX), 0);
            use fatbin::Source as _;
            source.read_exact_at(offset, &mut buffer, "fatbin body")?;
            let fatbin = fatbin::parse(&buffer)?;
            fatbins.push(EmbeddedInfo {
                section: section_name.to_owned(),
                offset,
                fatbin: read::fatbin_info(&fatbin, &mut budget, Mode::List)?,
            });
        }
    }
    if fatbins.is_empty() {
        return Err(Reason::NoDeviceCode);
    }
    Ok(ObjectInfo {
        machine: format!("{:?}", parsed.architecture()),
        fatbins,
    })
}
