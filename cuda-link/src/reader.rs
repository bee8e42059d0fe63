//! Bounds-checked little-endian reads: every out-of-range read is a
//! typed [`Reason::Truncated`], never a panic.

use crate::error::{ParseResult, Reason};

/// A bounds-checked slice, `data[offset..offset + len]`.
pub(crate) fn slice<'a>(
    data: &'a [u8],
    offset: u64,
    len: u64,
    what: &'static str,
) -> ParseResult<&'a [u8]> {
    let truncated = || Reason::Truncated {
        what,
        offset,
        needed: len,
        available: (data.len() as u64).saturating_sub(offset),
    };
    let start = usize::try_from(offset).map_err(|_| truncated())?;
    let len_usize = usize::try_from(len).map_err(|_| truncated())?;
    let end = start.checked_add(len_usize).ok_or_else(truncated)?;
    data.get(start..end).ok_or_else(truncated)
}

/// `N` bytes at `offset`.
fn array<const N: usize>(data: &[u8], offset: u64, what: &'static str) -> ParseResult<[u8; N]> {
    slice(data, offset, N as u64, what).map(|bytes| {
        let mut out = [0; N];
        out.copy_from_slice(bytes); // `slice` returned exactly N bytes.
        out
    })
}

pub(crate) fn read_u16(data: &[u8], offset: u64, what: &'static str) -> ParseResult<u16> {
    array(data, offset, what).map(u16::from_le_bytes)
}

pub(crate) fn read_u32(data: &[u8], offset: u64, what: &'static str) -> ParseResult<u32> {
    array(data, offset, what).map(u32::from_le_bytes)
}
