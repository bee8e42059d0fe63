//! LTO-IR: NVVM IR for link-time optimisation. Only its header is readable;
//! the body is opaque by design.

use crate::arch::{Arch, ArchVariant};
use crate::error::{ParseResult, Reason};
use crate::reader::{read_u16, read_u32};

/// `0x7F4E43ED`, little-endian at offset 0.
pub const MAGIC: u32 = 0x7F4E_43ED;
const ARCH_OFFSET: u64 = 0x1a;
const ARCH_SPECIFIC_MARK: [u8; 4] = [0x20, 0x00, 0x01, 0x00];

/// What an LTO-IR header says.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct LtoirInfo {
    /// The target; `f` leaves no mark in the header and reads as the base.
    pub arch: Arch,
    /// The NVVM generation (7 up to sm_90, 20 from sm_100 in CUDA 12.9).
    pub nvvm_generation: u16,
}

/// Whether `data` starts with the LTO-IR magic.
pub fn has_magic(data: &[u8]) -> bool {
    data.get(..4) == Some(&MAGIC.to_le_bytes())
}

/// Whether `data` is plain LLVM bitcode (raw or wrapped), which nvJitLink
/// refuses as LTO-IR.
pub fn is_llvm_bitcode(data: &[u8]) -> bool {
    data.starts_with(b"BC\xC0\xDE") || data.starts_with(b"\xDE\xC0\x17\x0B")
}

/// Reads the header.
pub fn inspect(data: &[u8]) -> ParseResult<LtoirInfo> {
    if is_llvm_bitcode(data) {
        return Err(Reason::LlvmBitcode);
    }
    let magic = read_u32(data, 0, "LTO-IR header")?;
    if magic != MAGIC {
        return Err(Reason::Malformed {
            what: "LTO-IR header",
            detail: format!("magic {magic:#010x}, expected {MAGIC:#010x}"),
        });
    }
    let nvvm_generation = read_u16(data, 0x0a, "LTO-IR header")?;
    let sm_times_ten = read_u16(data, ARCH_OFFSET, "LTO-IR header")?;
    if sm_times_ten == 0 || sm_times_ten % 10 != 0 {
        return Err(Reason::Malformed {
            what: "LTO-IR header",
            detail: format!("architecture field {sm_times_ten} is not SM x 10"),
        });
    }
    let specific = data.get(0x20..0x24) == Some(&ARCH_SPECIFIC_MARK[..]);
    Ok(LtoirInfo {
        arch: Arch {
            sm: u32::from(sm_times_ten / 10),
            variant: if specific {
                ArchVariant::Specific
            } else {
                ArchVariant::Base
            },
        },
        nvvm_generation,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_of_real_output() {
        // The first 0x24 bytes of NVRTC 12.9 `-dlto -arch=sm_90` output.
        let mut data =
            hex("ed434e7f0140025d0302070018000100280000002c000000010084030200020063000000");
        data.resize(64, 0);
        let info = inspect(&data).unwrap();
        assert_eq!(info.arch, Arch::sm(90));
        assert_eq!(info.nvvm_generation, 7);
    }

    #[test]
    fn bitcode_is_refused() {
        assert_eq!(inspect(b"BC\xC0\xDE\x35\x14"), Err(Reason::LlvmBitcode));
        assert!(matches!(
            inspect(&MAGIC.to_le_bytes()),
            Err(Reason::Truncated { .. })
        ));
    }

    fn hex(text: &str) -> Vec<u8> {
        (0..text.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
            .collect()
    }
}
