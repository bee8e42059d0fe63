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
        format!("compute_{}{}", self.sm, self.suffix())
    }

    /// The LTO-IR target's name, `lto_90a` (nvcc's `code=lto_XX`).
    pub fn lto(&self) -> String {
        format!("lto_{}{}", self.sm, self.suffix())
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
        write!(f, "sm_{}{}", self.sm, self.suffix())
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for Arch {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// A string that is not `sm_NN[a|f]`, `compute_NN[a|f]` or `lto_NN[a|f]`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid architecture `{0}`: expected sm_NN, sm_NNa or sm_NNf")]
pub struct ParseArchError(pub String);

impl FromStr for Arch {
    type Err = ParseArchError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let err = || ParseArchError(text.to_owned());
        let rest = ["sm_", "compute_", "lto_"]
            .iter()
            .find_map(|prefix| text.strip_prefix(prefix))
            .unwrap_or(text);
        let (digits, variant) = match rest.as_bytes().last() {
            Some(b'a') => (&rest[..rest.len() - 1], ArchVariant::Specific),
            Some(b'f') => (&rest[..rest.len() - 1], ArchVariant::Family),
            _ => (rest, ArchVariant::Base),
        };
        if digits.is_empty() || digits.len() > 4 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(err());
        }
        let sm = digits.parse().map_err(|_| err())?;
        Ok(Arch { sm, variant })
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
        for bad in ["", "sm_", "sm_9x", "sm_a", "gfx90a", "sm_123456"] {
            assert!(bad.parse::<Arch>().is_err(), "{bad}");
        }
    }
}
