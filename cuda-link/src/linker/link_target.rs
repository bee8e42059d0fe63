//! [`LinkTarget`]: one slot of a multi-arch link, and its nvcc spellings.

use std::fmt;
use std::str::FromStr;

use crate::arch::{Arch, ArchCode, CodeKind, ParseArchError};

/// One slot of a multi-arch link: a cubin for an SM (`sm_90`), or PTX for
/// the GPUs that come later (`compute_90`, nvcc's `code=compute_90`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LinkTarget {
    /// A cubin for this SM.
    Cubin(Arch),
    /// PTX for this virtual arch; needs LTO-IR inputs, as nvJitLink emits
    /// PTX only under LTO.
    Ptx(Arch),
}

impl LinkTarget {
    /// The target's arch.
    pub fn arch(self) -> Arch {
        match self {
            LinkTarget::Cubin(arch) | LinkTarget::Ptx(arch) => arch,
        }
    }

    /// Every target of one nvcc `-gencode` value,
    /// `arch=compute_80,code=[sm_80,compute_80]` (or `code=sm_80`).
    ///
    /// ```
    /// use cuda_link::{Arch, LinkTarget};
    ///
    /// let targets = LinkTarget::parse_gencode("arch=compute_80,code=[sm_80,compute_80]")?;
    /// assert_eq!(targets, [LinkTarget::Cubin(Arch::sm(80)), LinkTarget::Ptx(Arch::sm(80))]);
    /// # Ok::<(), cuda_link::ParseArchError>(())
    /// ```
    pub fn parse_gencode(value: &str) -> Result<Vec<LinkTarget>, ParseArchError> {
        let bad = || ParseArchError(value.to_owned());
        let code = value
            .split_once("code=")
            .map(|(_, code)| code)
            .ok_or_else(bad)?;
        let code = code.trim_start_matches('[').trim_end_matches(']');
        code.split(',').map(str::parse).collect()
    }
}

/// `sm_90` is a cubin slot, `compute_90` a PTX slot (`90` alone: a
/// cubin); `lto_90` is no link output.
impl FromStr for LinkTarget {
    type Err = ParseArchError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let code: ArchCode = text.parse()?;
        match code.kind {
            CodeKind::Sm => Ok(LinkTarget::Cubin(code.arch)),
            CodeKind::Compute => Ok(LinkTarget::Ptx(code.arch)),
            CodeKind::Lto => Err(ParseArchError(text.to_owned())),
        }
    }
}

impl fmt::Display for LinkTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LinkTarget::Cubin(arch) => write!(f, "{arch}"),
            LinkTarget::Ptx(arch) => f.write_str(&arch.compute()),
        }
    }
}
