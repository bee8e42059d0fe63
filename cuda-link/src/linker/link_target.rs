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
    /// `arch=compute_80,code=[sm_80,compute_80]` (or `code=sm_80`); see
    /// [`Gencode::parse`].
    ///
    /// ```
    /// use cuda_link::{Arch, LinkTarget};
    ///
    /// let targets = LinkTarget::parse_gencode("arch=compute_80,code=[sm_80,compute_80]")?;
    /// assert_eq!(targets, [LinkTarget::Cubin(Arch::sm(80)), LinkTarget::Ptx(Arch::sm(80))]);
    /// # Ok::<(), cuda_link::GencodeError>(())
    /// ```
    ///
    /// # Errors
    /// As [`Gencode::parse`]'s, and an `lto_XX` code, which is no slot.
    pub fn parse_gencode(value: &str) -> Result<Vec<LinkTarget>, GencodeError> {
        let gencode = Gencode::parse(value)?;
        match gencode.ltoir.first() {
            None => Ok(gencode.targets),
            Some(arch) => Err(GencodeError {
                value: value.to_owned(),
                reason: format!(
                    "code={}: a link's slots are cubins and PTX; LTO-IR is one output of its own \
                     (`--ltoir -arch {}`)",
                    arch.lto(),
                    arch
                ),
            }),
        }
    }
}

/// One nvcc `-gencode` value: the virtual arch its code is compiled for
/// (`arch=`) and the slots made of it (`code=`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Gencode {
    /// `arch=compute_XX`: what `__CUDA_ARCH__` is when compiling.
    pub virtual_arch: Arch,
    /// `code=`: a cubin per `sm_XX`, PTX per `compute_XX`.
    pub targets: Vec<LinkTarget>,
    /// `code=lto_XX`: LTO-IR for that arch, which a compile makes (nvcc's
    /// `-gencode arch=compute_90,code=lto_90`) and no link does.
    pub ltoir: Vec<Arch>,
}

/// A `-gencode` value that cannot be read, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("-gencode {value}: {reason}")]
pub struct GencodeError {
    /// The value as given.
    pub value: String,
    /// What is wrong with it.
    pub reason: String,
}

impl Gencode {
    /// Reads `arch=compute_80,code=[sm_80,compute_80]`, with the code list
    /// bare, in brackets or quoted as Makefiles write it
    /// (`code=\"sm_80,compute_80\"`).
    ///
    /// # Errors
    /// No `arch=` or `code=`; an `arch=` that is not a virtual arch
    /// (`compute_XX`), as nvcc says; a code that is not `sm_XX`,
    /// `compute_XX` or `lto_XX`; a code older than its arch, or an
    /// `lto_XX` of another arch than its `arch=`, which nvcc refuses
    /// too.
    pub fn parse(value: &str) -> Result<Self, GencodeError> {
        let fail = |reason: String| GencodeError {
            value: value.to_owned(),
            reason,
        };
        let expected = || fail("expected arch=compute_XX,code=[sm_XX,compute_XX]".to_owned());
        let (arch_part, code_part) = value.split_once("code=").ok_or_else(expected)?;
        let arch_text = arch_part
            .trim()
            .trim_end_matches(',')
            .strip_prefix("arch=")
            .ok_or_else(expected)?
            .trim();
        let virtual_arch = match arch_text.parse::<ArchCode>() {
            Ok(code) if code.kind == CodeKind::Compute => code.arch,
            _ => {
                return Err(fail(format!(
                    "arch= takes a virtual arch, compute_XX, not `{arch_text}`"
                )));
            }
        };
        let list = code_part
            .trim()
            .trim_matches(|c| matches!(c, '"' | '\'' | '\\' | '[' | ']'));
        let mut ltoir = Vec::new();
        let mut targets = Vec::new();
        for code in list.split(',') {
            let code = code.trim();
            if let Ok(parsed) = code.parse::<ArchCode>()
                && parsed.kind == CodeKind::Lto
            {
                if parsed.arch != virtual_arch {
                    return Err(fail(format!(
                        "code={code}: LTO-IR is of its arch= alone (arch={})",
                        parsed.arch.compute()
                    )));
                }
                ltoir.push(parsed.arch);
                continue;
            }
            targets.push(code);
        }
        let targets = targets
            .into_iter()
            .map(|code| {
                let target: LinkTarget = code.parse().map_err(|_| {
                    fail(format!("code={code}: expected sm_XX, compute_XX or lto_XX"))
                })?;
                if !virtual_arch.ir_compatible_with(&target.arch()) {
                    return Err(fail(format!(
                        "code={code} cannot run code compiled for arch={arch_text}"
                    )));
                }
                Ok(target)
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Gencode {
            virtual_arch,
            targets,
            ltoir,
        })
    }

    /// The slots compiled for an arch other than their own
    /// (`arch=compute_80,code=sm_86`: `__CUDA_ARCH__` 800, run on sm_86).
    pub fn assembled_for_another_arch(&self) -> impl Iterator<Item = LinkTarget> + '_ {
        self.targets
            .iter()
            .copied()
            .filter(|target| target.arch() != self.virtual_arch)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gencode_spellings_and_refusals() {
        let both = [
            LinkTarget::Cubin(Arch::sm(80)),
            LinkTarget::Ptx(Arch::sm(80)),
        ];
        for spelt in [
            "arch=compute_80,code=[sm_80,compute_80]",
            "arch=compute_80,code=sm_80,compute_80",
            "arch=compute_80,code=\"sm_80,compute_80\"",
            "arch=compute_80,code=\\\"sm_80,compute_80\\\"",
        ] {
            assert_eq!(LinkTarget::parse_gencode(spelt).unwrap(), both, "{spelt}");
        }
        let lto = Gencode::parse("arch=compute_90,code=[lto_90,sm_90]").unwrap();
        assert_eq!(
            (lto.ltoir, lto.targets),
            (vec![Arch::sm(90)], vec![LinkTarget::Cubin(Arch::sm(90))])
        );
        let later = Gencode::parse("arch=compute_80,code=[sm_86,compute_80]").unwrap();
        assert_eq!(later.virtual_arch, Arch::sm(80));
        assert_eq!(
            later.assembled_for_another_arch().collect::<Vec<_>>(),
            [LinkTarget::Cubin(Arch::sm(86))]
        );
        for (refused, why) in [
            ("code=sm_90", "expected arch="),
            ("arch=sm_90,code=sm_90", "virtual arch"),
            ("arch=compute_90,code=sm_80", "cannot run"),
            ("arch=compute_90,code=lto_80", "its arch= alone"),
            (
                "arch=compute_90,code=foo",
                "expected sm_XX, compute_XX or lto_XX",
            ),
            ("arch=compute_90", "expected arch="),
        ] {
            let error = Gencode::parse(refused).unwrap_err();
            assert!(error.to_string().contains(why), "{refused}: {error}");
        }
    }
}
