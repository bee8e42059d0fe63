//! PTX text: header directives and kernel names, without a full parser.

use std::hash::BuildHasher;
use std::io::Read;

use crate::error::{ParseResult, Reason};
use crate::names::NameList;

mod tokens;

pub(crate) use tokens::StreamError;
use tokens::{StreamTokens, Tokens};

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

    /// The ISA `ptx` states in its `.version`, its first directive; `None`
    /// when it states none or is not PTX text.
    pub fn stated_by(ptx: &[u8]) -> Option<Self> {
        let mut tokens = Tokens::new(text(ptx).ok()?);
        if tokens.next()? != ".version" {
            return None;
        }
        tokens.next()?.parse().ok()
    }

    /// The first ISA of a CUDA major release, which every driver of that
    /// release JIT-compiles: 12 → 8.0, 13 → 9.0 (the ISA's major is the
    /// release's minus four since CUDA 11).
    pub fn first_of_cuda(cuda_major: u32) -> Option<Self> {
        let major = u16::try_from(cuda_major.checked_sub(4)?).ok()?;
        (cuda_major >= 11).then_some(PtxIsa::new(major, 0))
    }

    /// The first CUDA release whose driver JIT-compiles this ISA
    /// (`(13, 0)` for 9.0, `(12, 8)` for 8.7): PTX ISAs 7.x to 9.x follow
    /// CUDA 11 to 13 release by release, but for 8.5, which both 12.5 and
    /// 12.6 write. `None` for an ISA older than CUDA 11's.
    pub fn first_cuda(self) -> Option<(u32, u32)> {
        let minor = u32::from(self.minor);
        match self.major {
            7 => Some((11, minor)),
            8 if minor <= 5 => Some((12, minor)),
            8 => Some((12, minor + 1)),
            major if major >= 9 => Some((u32::from(major) + 4, minor)),
            _ => None,
        }
    }

    /// `"driver 580 (CUDA 13.0)"`: the oldest driver that JIT-compiles
    /// this ISA, by its branch where known and its CUDA release.
    pub fn oldest_driver(self) -> String {
        let Some((major, minor)) = self.first_cuda() else {
            return "a driver older than CUDA 11's".to_owned();
        };
        let branch = match (major, minor) {
            (11, 0) => Some(450),
            (11, 1) => Some(455),
            (11, 2) => Some(460),
            (11, 3) => Some(465),
            (11, 4) => Some(470),
            (11, 5) => Some(495),
            (11, 6) => Some(510),
            (11, 7) => Some(515),
            (11, 8) => Some(520),
            (12, 0) => Some(525),
            (12, 1) => Some(530),
            (12, 2) => Some(535),
            (12, 3) => Some(545),
            (12, 4) => Some(550),
            (12, 5) => Some(555),
            (12, 6) => Some(560),
            (12, 8) => Some(570),
            (12, 9) => Some(575),
            (13, 0) => Some(580),
            _ => None,
        };
        match branch {
            Some(branch) => format!("driver {branch} (CUDA {major}.{minor})"),
            None => format!("CUDA {major}.{minor}'s driver"),
        }
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
    // Every `.entry` bounds the kernels (a definition takes at least 16
    // bytes), so the list and the dedup table are allocated once: rehashing
    // as the set grew was 6 % of the time for 40,000 kernels.
    let entries = memchr::memmem::find_iter(text.as_bytes(), ".entry").count();
    let mut tokens = Tokens::capped(text);
    let info = parse(&mut tokens, Some((entries, entries.min(text.len() / 16))));
    match tokens.too_long {
        true => Err(tokens::word_too_long()),
        false => info,
    }
}

/// [`inspect`] of the text `reader` gives, read a chunk at a time: what
/// it holds is a chunk, the current token and the lists it returns. The
/// outer error is the reader's (decoding, or a size other than declared),
/// after which the text does not matter; the inner result is
/// [`inspect`]'s of the whole text.
pub(crate) fn inspect_reader(reader: impl Read) -> Result<ParseResult<PtxInfo>, std::io::Error> {
    let mut tokens = StreamTokens::new(reader);
    let info = parse(&mut tokens, None);
    match tokens.finish() {
        Some(StreamError::Read(error)) => Err(error),
        Some(StreamError::Text(reason)) => Ok(Err(reason)),
        None => Ok(info),
    }
}

/// The header directives and kernel names of `tokens`. `entries`, when
/// known, is the count of `.entry` in the text and a bound on the kernels,
/// to allocate once.
fn parse<T: AsRef<str>>(
    tokens: impl Iterator<Item = T>,
    entries: Option<(usize, usize)>,
) -> ParseResult<PtxInfo> {
    let mut tokens = tokens.peekable();
    let (mut version, mut target, mut address_size) = (None, None, None);
    // The dedup table holds indices into the list, about half the memory
    // of a set of names, to stay in cache. foldhash: SipHash's cost
    // dominated, and foldhash's per-process seed still keeps hostile
    // names from colliding.
    let (count, bound) = entries.unwrap_or((usize::MAX, 0));
    let mut kernels: Vec<String> = Vec::with_capacity(bound);
    let hasher = foldhash::fast::RandomState::default();
    let mut seen = hashbrown::HashTable::<usize>::with_capacity(if count < 2 { 0 } else { bound });
    let mut strong_symbols = NameList::new();
    let mut functions = Vec::new();
    // An entry's name and whether it is `.visible`, until its `{` (a
    // definition) or `;` (a declaration).
    let mut pending: Option<(T, usize, bool)> = None;
    // Whether the previous token was `.visible`.
    let mut visible = false;
    while let Some(token) = tokens.next() {
        if let Some((name, depth, exported)) = pending.as_mut() {
            match token.as_ref() {
                "(" => *depth += 1,
                ")" => *depth = depth.saturating_sub(1),
                "{" if *depth == 0 => {
                    // With one `.entry` there is nothing to deduplicate,
                    // and no set to allocate (PTX fatbin entries often
                    // hold one kernel).
                    let name = name.as_ref();
                    let first = count < 2 || {
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
            if !matches!(token.as_ref(), ".entry" | ".func") {
                continue;
            }
            pending = None;
        }
        let after_visible = std::mem::replace(&mut visible, token.as_ref() == ".visible");
        match token.as_ref() {
            ".version" if version.is_none() => {
                version = Some(tokens.next().map(|v| v.as_ref().to_owned()))
            }
            ".target" if target.is_none() => {
                let mut list = Vec::new();
                while let Some(item) = tokens.next() {
                    list.push(item.as_ref().to_owned());
                    if tokens.next_if(|t| t.as_ref() == ",").is_none() {
                        break;
                    }
                }
                target = Some(list);
            }
            ".address_size" if address_size.is_none() => {
                address_size = Some(tokens.next().and_then(|v| v.as_ref().parse().ok()))
            }
            ".entry" => {
                pending = tokens
                    .next_if(|name| is_identifier(name.as_ref()))
                    .map(|name| (name, 0, after_visible));
            }
            ".func" => {
                if let Some(name) = defined_function(&mut tokens) {
                    functions.push(name.as_ref().to_owned());
                    if after_visible {
                        strong_symbols.push(name.as_ref());
                    }
                }
            }
            ".global" | ".const" if after_visible => {
                if let Some(name) = visible_variable(&mut tokens) {
                    strong_symbols.push(name.as_ref());
                }
            }
            _ => {}
        }
    }
    let version = version
        .flatten()
        .filter(|v| v.contains('.') && v.bytes().all(|b| b.is_ascii_digit() || b == b'.'))
        .ok_or(Reason::PtxMissingDirective(".version"))?;
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

type Peek<I> = std::iter::Peekable<I>;

/// After `.func`: the name, if a body `{` follows its signature.
fn defined_function<T: AsRef<str>>(tokens: &mut Peek<impl Iterator<Item = T>>) -> Option<T> {
    if tokens.next_if(|t| t.as_ref() == "(").is_some() {
        skip_group(tokens);
    }
    let name = tokens.next_if(|name| is_identifier(name.as_ref()))?;
    let mut depth = 0usize;
    for token in tokens.by_ref() {
        match token.as_ref() {
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
fn visible_variable<T: AsRef<str>>(tokens: &mut Peek<impl Iterator<Item = T>>) -> Option<T> {
    let mut name = None;
    while let Some(token) = tokens.next() {
        match token.as_ref() {
            ";" | "=" | "[" => return name,
            "(" => skip_group(tokens),
            t if is_identifier(t) => name = Some(token),
            _ => {}
        }
    }
    None
}

/// Skips to the `)` that closes an already-consumed `(`.
fn skip_group<T: AsRef<str>>(tokens: &mut Peek<impl Iterator<Item = T>>) {
    let mut depth = 1usize;
    for token in tokens.by_ref() {
        match token.as_ref() {
            "(" => depth += 1,
            ")" if depth == 1 => return,
            ")" => depth -= 1,
            _ => {}
        }
    }
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

    #[test]
    fn each_isa_names_the_first_release_that_jits_it() {
        let release = |major, minor| PtxIsa::new(major, minor).first_cuda();
        assert_eq!(release(7, 8), Some((11, 8)));
        assert_eq!(release(8, 5), Some((12, 5)));
        assert_eq!(release(8, 7), Some((12, 8)));
        assert_eq!(release(9, 0), Some((13, 0)));
        assert_eq!(release(9, 5), Some((13, 5)));
        assert_eq!(release(6, 4), None);
        assert_eq!(PtxIsa::new(9, 0).oldest_driver(), "driver 580 (CUDA 13.0)");
        assert_eq!(PtxIsa::new(9, 5).oldest_driver(), "CUDA 13.5's driver");
        // Each release's own floor is the first ISA it JIT-compiles.
        for major in 11..=13 {
            let floor = PtxIsa::first_of_cuda(major).unwrap();
            assert_eq!(floor.first_cuda(), Some((major, 0)));
        }
    }

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

    /// Gives `data` in reads of the sizes listed, round and round.
    struct Dribble<'a> {
        data: &'a [u8],
        sizes: Vec<usize>,
        turn: usize,
    }

    impl std::io::Read for Dribble<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let size = self.sizes[self.turn % self.sizes.len()];
            self.turn += 1;
            let n = size.min(buf.len()).min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    fn streamed(data: &[u8], sizes: Vec<usize>) -> ParseResult<PtxInfo> {
        let turn = 0;
        inspect_reader(Dribble { data, sizes, turn }).unwrap()
    }

    #[test]
    fn a_stream_reads_as_memory_does() {
        let mut big = String::from("\u{feff}.version 8.0 .target sm_90\n");
        for i in 0..20_000 {
            big.push_str(&format!(
                "/* {i} */ .visible .entry k{}() {{ ret; }} // \"x\n",
                i % 5000
            ));
        }
        big.push_str("\0\0\0");
        let expected = inspect(big.as_bytes());
        assert_eq!(expected.as_ref().unwrap().kernels.len(), 5000);
        for sizes in [vec![1], vec![3, 7], vec![1 << 16], vec![65_535, 2]] {
            assert_eq!(streamed(big.as_bytes(), sizes), expected);
        }
    }

    #[test]
    fn words_over_the_cap_are_refused_in_both() {
        let mut ptx = b".version 8.0 .target sm_90 .entry ".to_vec();
        ptx.extend(std::iter::repeat_n(b'k', tokens::MAX_WORD + 1));
        ptx.extend_from_slice(b"() {}");
        assert_eq!(inspect(&ptx), Err(tokens::word_too_long()));
        assert_eq!(streamed(&ptx, vec![4096]), Err(tokens::word_too_long()));
        // Text that is not UTF-8 later still says so first, as in memory.
        ptx.push(0xFF);
        assert_eq!(inspect(&ptx), Err(Reason::PtxNotText(ptx.len() - 1)));
        assert_eq!(
            streamed(&ptx, vec![4096]),
            Err(Reason::PtxNotText(ptx.len() - 1))
        );
    }

    #[test]
    fn a_failing_reader_is_the_outer_error() {
        struct Failing;
        impl std::io::Read for Failing {
            fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
                Err(std::io::Error::other("corrupt"))
            }
        }
        assert!(inspect_reader(Failing).is_err());
    }

    /// The tokens `inspect` reads from text in memory, or its failure.
    fn tokens_in_memory(data: &[u8]) -> ParseResult<Vec<String>> {
        let mut tokens = Tokens::capped(text(data)?);
        let list = tokens.by_ref().map(str::to_owned).collect();
        match tokens.too_long {
            true => Err(tokens::word_too_long()),
            false => Ok(list),
        }
    }

    /// The tokens `inspect_reader` reads, or its failure.
    fn tokens_streamed(data: &[u8], sizes: Vec<usize>) -> ParseResult<Vec<String>> {
        let mut tokens = StreamTokens::new(Dribble {
            data,
            sizes,
            turn: 0,
        });
        let list = tokens.by_ref().collect();
        match tokens.finish() {
            Some(StreamError::Text(reason)) => Err(reason),
            Some(StreamError::Read(error)) => panic!("{error}"),
            None => Ok(list),
        }
    }

    proptest::proptest! {
        /// Text built from the pieces that change the tokenizer's state,
        /// read in any chunks: the same tokens and the same result as in
        /// memory.
        #[test]
        fn any_text_in_any_chunks_reads_as_memory_does(
            pieces in proptest::collection::vec(0usize..PIECES.len(), 0..80),
            sizes in proptest::collection::vec(1usize..9, 1..5),
        ) {
            let data: Vec<u8> = pieces.iter().flat_map(|&i| PIECES[i].iter().copied()).collect();
            proptest::prop_assert_eq!(tokens_streamed(&data, sizes.clone()), tokens_in_memory(&data));
            proptest::prop_assert_eq!(streamed(&data, sizes), inspect(&data));
        }

        /// Any bytes at all.
        #[test]
        fn any_bytes_read_as_memory_does(
            data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300),
            sizes in proptest::collection::vec(1usize..9, 1..5),
        ) {
            proptest::prop_assert_eq!(tokens_streamed(&data, sizes.clone()), tokens_in_memory(&data));
            proptest::prop_assert_eq!(streamed(&data, sizes), inspect(&data));
        }
    }

    const PIECES: &[&[u8]] = &[
        b".version 8.0",
        b".target sm_90",
        b", sm_80",
        b".address_size 64",
        b".entry",
        b".func",
        b".visible",
        b".global",
        b".const",
        b" k1",
        b" _Z3fooPf",
        b"(",
        b")",
        b"{",
        b"}",
        b";",
        b"=",
        b"[",
        b" ",
        b"\n",
        b"/",
        b"*",
        b"//",
        b"/*",
        b"*/",
        b"\"",
        b"\\",
        b"\0",
        b"\xEF\xBB\xBF",
        b"\xC3\xA9",
        b"\xE2\x82",
        b"\xAC",
        b"\xFF",
        b".param .u64 p",
        b"ret;",
        b"$x",
        b"%r1",
    ];
}
