//! SM architectures with their `a` / `f` variants.

use std::fmt;
use std::str::FromStr;

/// Which variant of an SM number a binary targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum ArchVariant {
    /// Plain `sm_90`: runs on that SM and newer ones.
    #[default]
    Base,
    /// `sm_90a`: arch-specific features, runs only on that SM.
    Specific,
    /// `sm_100f`: family-specific features.
    Family,
}

/// An SM architecture such as `sm_90`, `sm_90a` or `sm_100f`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Arch {
    /// The SM number: 90 for `sm_90`.
    pub sm: u32,
    /// The `a` / `f` suffix.
    pub variant: ArchVariant,
}

impl Arch {
    /// A plain architecture, `sm_<sm>`.
    pub const fn sm(sm: u32) -> Self {
        Arch {
            sm,
            variant: ArchVariant::Base,
        }
    }

    /// Whether IR (PTX or LTO-IR) built for `self` compiles for `target`:
    /// plain IR for any newer SM, family IR within its family (same major),
    /// arch-specific IR only for its own SM.
    pub fn ir_compatible_with(&self, target: &Arch) -> bool {
        match self.variant {
            ArchVariant::Base => self.sm <= target.sm,
            ArchVariant::Family => self.sm / 10 == target.sm / 10 && self.sm <= target.sm,
            ArchVariant::Specific => self == target,
        }
    }

    /// The virtual arch's name, `compute_90a`: PTX's target, and nvcc's
    /// `arch=` and `code=compute_XX`.
    ///
    /// ```
    /// use cuda_link::Arch;
    /// let arch: Arch = "sm_90a".parse()?;
    /// assert_eq!((arch.compute(), arch.lto()), ("compute_90a".into(), "lto_90a".into()));
    /// # Ok::<(), cuda_link::ParseArchError>(())
    /// ```
    pub fn compute(&self) -> String {
        ArchCode::new(CodeKind::Compute, *self).to_string()
    }

    /// The LTO-IR target's name, `lto_90a` (nvcc's `code=lto_XX`).
    pub fn lto(&self) -> String {
        ArchCode::new(CodeKind::Lto, *self).to_string()
    }

    /// The suffix letter, if any.
    pub fn suffix(&self) -> &'static str {
        match self.variant {
            ArchVariant::Base => "",
            ArchVariant::Specific => "a",
            ArchVariant::Family => "f",
        }
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        ArchCode::new(CodeKind::Sm, *self).fmt(f)
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for Arch {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// What an arch's spelling asks for, as nvcc's `code=` reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CodeKind {
    /// `sm_90`: a cubin (machine code for that SM).
    Sm,
    /// `compute_90`: PTX for that virtual arch.
    Compute,
    /// `lto_90`: LTO-IR for that virtual arch.
    Lto,
}

/// An arch as it is spelt: `sm_90a`, `compute_90`, `lto_100f`, bare `90`
/// (an `sm_`), or nvidia-smi's `9.0`. The one parser and printer of arch
/// text: [`Arch`]'s `FromStr` is this one's, without the kind.
///
/// ```
/// use cuda_link::{Arch, ArchCode, CodeKind};
/// let code: ArchCode = "compute_90a".parse()?;
/// assert_eq!((code.kind, code.arch), (CodeKind::Compute, "sm_90a".parse()?));
/// assert_eq!(code.to_string(), "compute_90a");
/// assert_eq!("8.6".parse::<ArchCode>()?.to_string(), "sm_86");
/// # Ok::<(), cuda_link::ParseArchError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ArchCode {
    /// What the spelling asks for.
    pub kind: CodeKind,
    /// The SM and its variant.
    pub arch: Arch,
}

impl ArchCode {
    /// `arch` as `kind`.
    pub const fn new(kind: CodeKind, arch: Arch) -> Self {
        ArchCode { kind, arch }
    }
}

impl fmt::Display for ArchCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let prefix = match self.kind {
            CodeKind::Sm => "sm",
            CodeKind::Compute => "compute",
            CodeKind::Lto => "lto",
        };
        write!(f, "{prefix}_{}{}", self.arch.sm, self.arch.suffix())
    }
}

/// A string that is not `sm_NN[a|f]`, `compute_NN[a|f]`, `lto_NN[a|f]`,
/// `NN` or `N.N`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid architecture `{0}`: expected sm_NN, compute_NN or lto_NN (with an `a` or `f` \
     suffix), NN, or N.N"
)]
pub struct ParseArchError(pub String);

impl FromStr for ArchCode {
    type Err = ParseArchError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let err = || ParseArchError(text.to_owned());
        let trimmed = text.trim();
        let (kind, rest) = [
            ("sm_", CodeKind::Sm),
            ("compute_", CodeKind::Compute),
            ("lto_", CodeKind::Lto),
        ]
        .iter()
        .find_map(|(prefix, kind)| trimmed.strip_prefix(prefix).map(|rest| (*kind, rest)))
        .unwrap_or((CodeKind::Sm, trimmed));
        let (number, variant) = match rest.as_bytes().last() {
            Some(b'a') => (&rest[..rest.len() - 1], ArchVariant::Specific),
            Some(b'f') => (&rest[..rest.len() - 1], ArchVariant::Family),
            _ => (rest, ArchVariant::Base),
        };
        // nvidia-smi's `8.6`, bare only: one digit after the point.
        let digits = match number.split_once('.') {
            Some((major, minor))
                if rest.len() == trimmed.len() && !major.is_empty() && minor.len() == 1 =>
            {
                format!("{major}{minor}")
            }
            Some(_) => return Err(err()),
            None => number.to_owned(),
        };
        if digits.is_empty() || digits.len() > 4 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(err());
        }
        let sm = digits.parse().map_err(|_| err())?;
        Ok(ArchCode::new(kind, Arch { sm, variant }))
    }
}

/// Any spelling [`ArchCode`] takes; the kind is dropped.
impl FromStr for Arch {
    type Err = ParseArchError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        text.parse::<ArchCode>().map(|code| code.arch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints() {
        for text in ["sm_90", "sm_90a", "sm_100f", "sm_121"] {
            assert_eq!(text.parse::<Arch>().unwrap().to_string(), text);
        }
        assert_eq!("compute_80".parse::<Arch>().unwrap(), Arch::sm(80));
        assert_eq!("90".parse::<Arch>().unwrap(), Arch::sm(90));
        for (text, same) in [(" 86 ", "sm_86"), ("8.6", "sm_86"), ("10.0a", "sm_100a")] {
            assert_eq!(text.parse::<Arch>().unwrap().to_string(), same, "{text}");
        }
        for bad in [
            "",
            "sm_",
            "sm_9x",
            "sm_a",
            "gfx90a",
            "sm_123456",
            "8.",
            ".6",
            "8.6.1",
            "sm_8.6",
            "compute_",
            "lto_9.0",
        ] {
            assert!(bad.parse::<Arch>().is_err(), "{bad}");
        }
    }

    /// Every spelling prints back as it was written, kind included.
    #[test]
    fn codes_parse_and_print_every_spelling() {
        for text in ["sm_90", "compute_90a", "lto_100f", "compute_121", "lto_75"] {
            assert_eq!(text.parse::<ArchCode>().unwrap().to_string(), text);
        }
        let code: ArchCode = "lto_90a".parse().unwrap();
        assert_eq!(code.kind, CodeKind::Lto);
        assert_eq!(code.arch.lto(), "lto_90a");
        assert_eq!(code.arch.compute(), "compute_90a");
    }
}
