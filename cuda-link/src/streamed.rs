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
use crate::inspect::{Contents, EmbeddedInfo, Inspection, ObjectInfo, fatbin_info};
use crate::{ObjectCode, ObjectKind, fatbin, host};

/// Inspects the file at `path`, as [`ObjectCode::from_path`] followed by
/// [`ObjectCode::inspect`] would, but reads a host object's fatbins one at
/// a time instead of the whole file. Other kinds are read whole.
///
/// Inspection only reads, in pure Rust; it does not validate what a C
/// library would need (use [`ObjectCode`] for that).
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

/// Exactly `len` bytes at `offset`; a file that ends early, or shrank since
/// its size was read, is a [`Reason::Truncated`].
fn read_exact(file: &File, offset: u64, len: u64, what: &'static str) -> ParseResult<Vec<u8>> {
    let mut buffer = Vec::new();
    read_into(&mut buffer, file, offset, len, what)?;
    Ok(buffer)
}

/// [`read_exact`] into a reused buffer; returns the bytes read.
fn read_into<'a>(
    buffer: &'a mut Vec<u8>,
    file: &File,
    offset: u64,
    len: u64,
    what: &'static str,
) -> ParseResult<&'a [u8]> {
    let truncated = |available| Reason::Truncated {
        what,
        offset,
        needed: len,
        available,
    };
    let len = usize::try_from(len).map_err(|_| truncated(0))?;
    if buffer.len() < len {
        buffer.resize(len, 0);
    }
    let read = read_up_to(file, offset, &mut buffer[..len]).map_err(|e| Reason::io(&e))?;
    if read < len {
        return Err(truncated(read as u64));
    }
    Ok(&buffer[..len])
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
    for section in parsed.sections() {
        let Some(&section_name) = host::FATBIN_SECTIONS
            .iter()
            .find(|&&name| section.name_bytes() == Ok(name.as_bytes()))
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
        let mut at = 0u64;
        while at < len {
            let header = read_exact(file, start + at, (len - at).min(16), "fatbin header")?;
            if header.iter().all(|&b| b == 0) && rest_is_zero(file, start + at, len - at)? {
                break;
            }
            let total = crate::reader::read_u64(&header, 8, "fatbin header")?
                .checked_add(16)
                .ok_or(Reason::Malformed {
                    what: "fatbin header",
                    detail: "body size overflows".into(),
                })?;
            if total > len - at {
                return Err(Reason::Truncated {
                    what: "fatbin body",
                    offset: at,
                    needed: total,
                    available: len - at,
                });
            }
            let bytes = read_into(&mut buffer, file, start + at, total, "fatbin body")?;
            fatbins.push(EmbeddedInfo {
                section: section_name.to_owned(),
                offset: at,
                fatbin: fatbin_info(&fatbin::parse(bytes)?)?,
            });
            at = (at + total).next_multiple_of(8);
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

/// Whether the `len` bytes at `offset` are all zero: trailing padding.
fn rest_is_zero(file: &File, offset: u64, len: u64) -> ParseResult<bool> {
    const CHUNK: u64 = 1 << 16;
    let mut at = 0;
    while at < len {
        let chunk = read_exact(file, offset + at, (len - at).min(CHUNK), "fatbin section")?;
        if chunk.iter().any(|&b| b != 0) {
            return Ok(false);
        }
        at += CHUNK;
    }
    Ok(true)
}
