//! PTX text: header directives and kernel names, without a full parser.

use std::hash::BuildHasher;

use crate::error::{ParseResult, Reason};
use crate::names::NameList;

/// What a PTX module declares.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct PtxInfo {
    /// `.version`, e.g. `"8.8"`.
    pub version: String,
    /// The `.target` list, e.g. `["sm_90a"]` or `["sm_20", "texmode_independent"]`.
    pub target: Vec<String>,
    /// `.address_size`, when given.
    pub address_size: Option<u32>,
    /// Kernels defined (not only declared), deduplicated, in order.
    pub kernels: Vec<String>,
    /// Device functions (`.func`) defined here, of any linkage, in order.
    pub functions: Vec<String>,
    /// `.visible` functions and variables defined here (not `.extern`,
    /// `.weak` or `.common`), in order: what two inputs of one link must
    /// not both define. Read in the same pass as the kernels:
    /// `.visible .entry|.func [(return)] NAME (...) ... {` and
    /// `.visible .global|.const ... NAME [= ...|[N]];`.
    pub strong_symbols: NameList,
}

/// A PTX ISA version, as `.version` states it: `9.0`. A driver
/// JIT-compiles PTX up to the ISA of its CUDA release (580, CUDA 13.0:
/// 9.0), and every driver of a major release takes that major's first
/// ISA (12.x: 8.0, 13.x: 9.0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PtxIsa {
    /// `9` of `9.0`.
    pub major: u16,
    /// `0` of `9.0`.
    pub minor: u16,
}

impl PtxIsa {
    /// `major.minor`.
    pub const fn new(major: u16, minor: u16) -> Self {
        PtxIsa { major, minor }
    }

    /// The first ISA of a CUDA major release, which every driver of that
    /// release JIT-compiles: 12 → 8.0, 13 → 9.0 (the ISA's major is the
    /// release's minus four since CUDA 11).
    pub fn first_of_cuda(cuda_major: u32) -> Option<Self> {
        let major = u16::try_from(cuda_major.checked_sub(4)?).ok()?;
        (cuda_major >= 11).then_some(PtxIsa::new(major, 0))
    }
}

impl std::fmt::Display for PtxIsa {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// A PTX ISA that is not `major.minor`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a PTX ISA version (major.minor, as 9.0)")]
pub struct ParsePtxIsaError(pub String);

impl std::str::FromStr for PtxIsa {
    type Err = ParsePtxIsaError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let fail = || ParsePtxIsaError(text.to_owned());
        let (major, minor) = text.split_once('.').ok_or_else(fail)?;
        let number = |part: &str| match part.bytes().all(|b| b.is_ascii_digit()) {
            true => part.parse::<u16>().map_err(|_| fail()),
            false => Err(fail()),
        };
        Ok(PtxIsa::new(number(major)?, number(minor)?))
    }
}

/// `data` with its `.version` lowered to `isa`, and the ISA it stated, or
/// `None` when it states `isa` or an older one. Only the number changes;
/// whether the code fits the older ISA is for ptxas to say.
#[cfg(feature = "link")]
pub fn lower_isa(data: &[u8], isa: PtxIsa) -> ParseResult<Option<(PtxIsa, Vec<u8>)>> {
    let text = text(data)?;
    let mut tokens = Tokens::new(text);
    if tokens.next() != Some(".version") {
        return Err(Reason::PtxMissingDirective(".version"));
    }
    let number = tokens.next().unwrap_or_default();
    let stated: PtxIsa = number.parse().map_err(|_| Reason::Malformed {
        what: "PTX .version",
        detail: format!("{number:?} is not major.minor"),
    })?;
    if stated <= isa {
        return Ok(None);
    }
    // `number` lies inside `text`, which lies inside `data`.
    let start = number.as_ptr() as usize - data.as_ptr() as usize;
    let mut lowered = data[..start].to_vec();
    lowered.extend_from_slice(isa.to_string().as_bytes());
    lowered.extend_from_slice(&data[start + number.len()..]);
    Ok(Some((stated, lowered)))
}

/// Decodes PTX bytes: trailing NULs and a BOM removed, UTF-8 required.
pub fn text(data: &[u8]) -> ParseResult<&str> {
    let end = data.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    let data = &data[..end];
    let data = data.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(data);
    std::str::from_utf8(data).map_err(|e| Reason::PtxNotText(e.valid_up_to()))
}

/// Whether the first directive, after whitespace and comments of any
/// length (a licence header, say), is `.version`.
pub fn looks_like_ptx(data: &[u8]) -> bool {
    // Binary bytes after the head do not matter: read up to the first
    // byte that is not UTF-8.
    let text = match std::str::from_utf8(data) {
        Ok(text) => text,
        Err(e) => std::str::from_utf8(&data[..e.valid_up_to()]).unwrap_or_default(),
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    Tokens::new(text).next() == Some(".version")
}

/// Checks the text and the header directives: `.version` first, after any
/// comments, and a `.target` after it. Stops at the `.target`, so the body
/// is scanned only when there is none.
pub fn validate(data: &[u8]) -> ParseResult<()> {
    let mut tokens = Tokens::new(text(data)?);
    if tokens.next() != Some(".version") {
        return Err(Reason::PtxMissingDirective(".version"));
    }
    if !tokens.any(|t| t == ".target") {
        return Err(Reason::PtxMissingDirective(".target"));
    }
    Ok(())
}

/// Reads the header directives and kernel names in one pass over the
/// tokens, holding none of them: time and memory stay linear in the text.
pub fn inspect(data: &[u8]) -> ParseResult<PtxInfo> {
    let text = text(data)?;
    let mut tokens = Tokens::new(text).peekable();
    let (mut version, mut target, mut address_size) = (None, None, None);
    // Every `.entry` bounds the kernels (a definition takes at least 16
    // bytes), so the list and the dedup table are allocated once: rehashing
    // as the set grew was 6 % of the time for 40,000 kernels. The table
    // holds indices into the list, about half the memory of a set of
    // `&str`, to stay in cache. foldhash: SipHash's cost dominated, and
    // foldhash's per-process seed still keeps hostile names from colliding.
    let entries = memchr::memmem::find_iter(text.as_bytes(), ".entry").count();
    let bound = entries.min(text.len() / 16);
    let mut kernels: Vec<String> = Vec::with_capacity(bound);
    let hasher = foldhash::fast::RandomState::default();
    let mut seen =
        hashbrown::HashTable::<usize>::with_capacity(if entries < 2 { 0 } else { bound });
    let mut strong_symbols = NameList::new();
    let mut functions = Vec::new();
    // An entry's name and whether it is `.visible`, until its `{` (a
    // definition) or `;` (a declaration).
    let mut pending: Option<(&str, usize, bool)> = None;
    // Whether the previous token was `.visible`.
    let mut visible = false;
    while let Some(token) = tokens.next() {
        if let Some((name, depth, exported)) = pending.as_mut() {
            match token {
                "(" => *depth += 1,
                ")" => *depth = depth.saturating_sub(1),
                "{" if *depth == 0 => {
                    // With one `.entry` there is nothing to deduplicate,
                    // and no set to allocate (PTX fatbin entries often
                    // hold one kernel).
                    let name = *name;
                    let first = entries < 2 || {
                        let hash = hasher.hash_one(name);
                        let same = |&i: &usize| kernels[i] == name;
                        let rehash = |&i: &usize| hasher.hash_one(kernels[i].as_str());
                        match seen.entry(hash, same, rehash) {
                            hashbrown::hash_table::Entry::Occupied(_) => false,
                            hashbrown::hash_table::Entry::Vacant(slot) => {
                                slot.insert(kernels.len());
                                true
                            }
                        }
                    };
                    if first {
                        kernels.push(name.to_owned());
                        if *exported {
                            strong_symbols.push(name);
                        }
                    }
                    pending = None;
                }
                ";" if *depth == 0 => pending = None,
                _ => {}
            }
            if !matches!(token, ".entry" | ".func") {
                continue;
            }
            pending = None;
        }
        let after_visible = std::mem::replace(&mut visible, token == ".visible");
        match token {
            ".version" if version.is_none() => version = Some(tokens.next()),
            ".target" if target.is_none() => {
                let mut list = Vec::new();
                while let Some(item) = tokens.next() {
                    list.push(item.to_owned());
                    if tokens.next_if_eq(&",").is_none() {
                        break;
                    }
                }
                target = Some(list);
            }
            ".address_size" if address_size.is_none() => {
                address_size = Some(tokens.next().and_then(|v| v.parse().ok()))
            }
            ".entry" => {
                pending = tokens
                    .next_if(|name| is_identifier(name))
                    .map(|name| (name, 0, after_visible));
            }
            ".func" => {
                if let Some(name) = defined_function(&mut tokens) {
                    functions.push(name.to_owned());
                    if after_visible {
                        strong_symbols.push(name);
                    }
                }
            }
            ".global" | ".const" if after_visible => {
                strong_symbols.extend(visible_variable(&mut tokens));
            }
            _ => {}
        }
    }
    let version = version
        .flatten()
        .filter(|v| v.contains('.') && v.bytes().all(|b| b.is_ascii_digit() || b == b'.'))
        .ok_or(Reason::PtxMissingDirective(".version"))?
        .to_owned();
    let target = target
        .filter(|list| !list.is_empty())
        .ok_or(Reason::PtxMissingDirective(".target"))?;
    Ok(PtxInfo {
        version,
        target,
        address_size: address_size.flatten(),
        kernels,
        functions,
        strong_symbols,
    })
}

/// After `.func`: the name, if a body `{` follows its signature.
fn defined_function<'a>(tokens: &mut std::iter::Peekable<Tokens<'a>>) -> Option<&'a str> {
    if tokens.next_if_eq(&"(").is_some() {
        skip_group(tokens);
    }
    let name = tokens.next_if(|name| is_identifier(name))?;
    let mut depth = 0usize;
    for token in tokens.by_ref() {
        match token {
            "(" => depth += 1,
            ")" => depth = depth.saturating_sub(1),
            "{" if depth == 0 => return Some(name),
            ";" if depth == 0 => return None,
            _ => {}
        }
    }
    None
}

/// After `.visible .global`: the last identifier before `;`, `=` or `[`.
fn visible_variable<'a>(tokens: &mut std::iter::Peekable<Tokens<'a>>) -> Option<&'a str> {
    let mut name = None;
    while let Some(token) = tokens.next() {
        match token {
            ";" | "=" | "[" => return name,
            "(" => skip_group(tokens),
            _ if is_identifier(token) => name = Some(token),
            _ => {}
        }
    }
    None
}

/// Skips to the `)` that closes an already-consumed `(`.
fn skip_group(tokens: &mut std::iter::Peekable<Tokens<'_>>) {
    let mut depth = 1usize;
    for token in tokens.by_ref() {
        match token {
            "(" => depth += 1,
            ")" if depth == 1 => return,
            ")" => depth -= 1,
            _ => {}
        }
    }
}

/// The tokens of PTX text: identifiers and directives, and single
/// punctuation characters; whitespace, comments and string literals are
/// skipped.
struct Tokens<'a> {
    source: &'a str,
    at: usize,
}

impl<'a> Tokens<'a> {
    fn new(source: &'a str) -> Self {
        Tokens { source, at: 0 }
    }
}

impl<'a> Iterator for Tokens<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let bytes = self.source.as_bytes();
        loop {
            let b = *bytes.get(self.at)?;
            let rest = &bytes[self.at..];
            if b.is_ascii_whitespace() {
                self.at += 1;
            } else if rest.starts_with(b"//") {
                self.at += rest.iter().position(|&c| c == b'\n').unwrap_or(rest.len());
            } else if rest.starts_with(b"/*") {
                let end = self.source[self.at + 2..].find("*/");
                self.at = end.map_or(bytes.len(), |end| self.at + 2 + end + 2);
            } else if b == b'"' {
                let mut i = self.at + 1;
                while i < bytes.len() && bytes[i] != b'"' && bytes[i] != b'\n' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                self.at = (i + 1).min(bytes.len());
            } else if is_word_byte(b) {
                let start = self.at;
                while self.at < bytes.len() && is_word_byte(bytes[self.at]) {
                    self.at += 1;
                }
                return Some(&self.source[start..self.at]);
            } else {
                let start = self.at;
                let len = self.source[start..]
                    .chars()
                    .next()
                    .map_or(1, char::len_utf8);
                self.at += len;
                return Some(&self.source[start..self.at]);
            }
        }
    }
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$' | b'%' | b'.')
}

fn is_identifier(token: &str) -> bool {
    let mut bytes = token.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || matches!(b, b'_' | b'$' | b'%'))
        && bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$'))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "// Generated by NVRTC\n\
        //\n\
        .version 8.8\n\
        .target sm_90a // arch\n\
        .address_size 64\n\
        /* block\n comment .entry fake() {} */\n\
        .file 1 \"//not/a/comment.cu\"\n\
        .visible .entry declared(.param .u64 p) ;\n\
        // .globl saxpy\n\
        .visible .entry saxpy(\n .param .f32 a,\n .param .u64 x\n)\n.maxntid 256, 1, 1\n{\n ret;\n}\n\
        .visible .entry declared(.param .u64 p)\n{\n ret;\n}\n\
        .entry _Z6kernelPf$1()\n{\n ret;\n}\n";

    #[test]
    fn reads_header_and_kernels() {
        let info = inspect(SAMPLE.as_bytes()).unwrap();
        assert_eq!(info.version, "8.8");
        assert_eq!(info.target, vec!["sm_90a"]);
        assert_eq!(info.address_size, Some(64));
        assert_eq!(info.kernels, vec!["saxpy", "declared", "_Z6kernelPf$1"]);
    }

    #[test]
    fn kernels_defined_twice_are_listed_once_in_order() {
        let mut ptx = String::from(".version 8.0\n.target sm_90\n");
        for round in 0..2 {
            for i in (0..300).rev() {
                ptx.push_str(&format!(".visible .entry k{i}_{}() {{ ret; }}\n", i % 7));
            }
            ptx.push_str(&format!(".entry only_{round}() {{ ret; }}\n"));
        }
        let info = inspect(ptx.as_bytes()).unwrap();
        let mut expected: Vec<String> = (0..300).rev().map(|i| format!("k{i}_{}", i % 7)).collect();
        expected.push("only_0".into());
        expected.push("only_1".into());
        assert_eq!(info.kernels, expected);
        // A kernel defined twice in one text is one strong symbol.
        assert_eq!(info.strong_symbols.len(), 300);
    }

    #[test]
    fn strong_symbols_are_visible_definitions() {
        let ptx = ".version 9.0 .target sm_90 .address_size 64\n\
            .extern .func (.param .b32 r) declared_only(.param .b32 a);\n\
            .visible .func (.param .b32 func_retval0) add_cabi(.param .b32 a)\n{\n ret;\n}\n\
            .weak .func (.param .b32 r) _Z5twiceIiET_S0_(.param .b32 a)\n{\n ret;\n}\n\
            .visible .func noreturn_value()\n{\n ret;\n}\n\
            .visible .entry k(.param .u64 p)\n.maxntid 32, 1, 1\n{\n ret;\n}\n\
            .visible .entry only_declared(.param .u64 p);\n\
            .visible .global .align 4 .u32 device_counter;\n\
            .visible .global .attribute(.managed) .align 4 .u32 managed_value;\n\
            .visible .const .align 4 .b8 coeffs[16] = {0};\n\
            .extern .global .align 4 .u32 elsewhere;\n\
            .global .align 4 .u32 file_local;\n";
        let info = inspect(ptx.as_bytes()).unwrap();
        assert_eq!(
            info.strong_symbols.iter().collect::<Vec<_>>(),
            [
                "add_cabi",
                "noreturn_value",
                "k",
                "device_counter",
                "managed_value",
                "coeffs"
            ]
        );
        // Every defined function, weak ones too; declarations are not.
        assert_eq!(
            info.functions,
            ["add_cabi", "_Z5twiceIiET_S0_", "noreturn_value"]
        );
    }

    #[test]
    fn target_lists() {
        let info =
            inspect(b".version 7.0 .target sm_20, texmode_independent .entry k() {}\0\0").unwrap();
        assert_eq!(info.target, vec!["sm_20", "texmode_independent"]);
        assert_eq!(info.address_size, None);
        assert_eq!(info.kernels, vec!["k"]);
    }

    #[test]
    fn missing_directives_are_errors() {
        assert_eq!(
            inspect(b".target sm_90"),
            Err(Reason::PtxMissingDirective(".version"))
        );
        assert_eq!(
            inspect(b".version 8.0\n"),
            Err(Reason::PtxMissingDirective(".target"))
        );
        assert_eq!(
            inspect(b".version 8.0 .target sm_90 \xff"),
            Err(Reason::PtxNotText(27))
        );
    }

    #[test]
    #[cfg(feature = "link")]
    fn isa_lowering_changes_the_number_only() {
        let ptx = b"// c\n.version 9.5\n.target sm_80\n.address_size 64\n\0";
        let (stated, lowered) = lower_isa(ptx, PtxIsa::new(9, 0)).unwrap().unwrap();
        assert_eq!(stated, PtxIsa::new(9, 5));
        assert_eq!(
            lowered,
            b"// c\n.version 9.0\n.target sm_80\n.address_size 64\n\0"
        );
        assert_eq!(lower_isa(ptx, PtxIsa::new(9, 5)).unwrap(), None);
        assert_eq!(lower_isa(ptx, PtxIsa::new(10, 0)).unwrap(), None);
        let two_digits = lower_isa(b".version 8.10 .target sm_80", PtxIsa::new(8, 8));
        assert_eq!(
            two_digits.unwrap().unwrap().1,
            b".version 8.8 .target sm_80"
        );
        assert!(lower_isa(b".version x.y .target sm_80", PtxIsa::new(8, 0)).is_err());
        assert!(lower_isa(b".target sm_80", PtxIsa::new(8, 0)).is_err());
        assert_eq!("9.0".parse(), Ok(PtxIsa::new(9, 0)));
        for bad in ["9", "9.", ".0", "9.0.1", "+9.0", "a.b"] {
            assert!(bad.parse::<PtxIsa>().is_err(), "{bad}");
        }
        assert_eq!(PtxIsa::first_of_cuda(13), Some(PtxIsa::new(9, 0)));
        assert_eq!(PtxIsa::first_of_cuda(12), Some(PtxIsa::new(8, 0)));
    }

    #[test]
    fn detection_skips_comments() {
        assert!(looks_like_ptx(b"\xEF\xBB\xBF/* c */ // x\n  .version 8.0"));
        assert!(!looks_like_ptx(b".target sm_90 .version 8.0"));
        assert!(!looks_like_ptx(b"/* unterminated"));
    }
}
