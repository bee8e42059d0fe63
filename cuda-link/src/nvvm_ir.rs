//! NVVM IR: the LLVM IR libNVVM compiles (numba-cuda's output, cuda.core's
//! `code_type="nvvm"`), as text (`.ll`) or bitcode (`.bc`). Text is read
//! line by line for what a caller checks before handing it to libNVVM:
//! the target, the `nvvmir.version`, the kernels of `nvvm.annotations`,
//! and which functions it defines and only declares. Bitcode is checked
//! for its framing only: its records are libNVVM's to read.

use std::collections::HashMap;

use crate::error::{ParseResult, Reason};
use crate::names::NameList;

/// Raw bitcode's magic, `BC\xC0\xDE`.
const BITCODE_MAGIC: &[u8; 4] = b"BC\xC0\xDE";
/// The bitcode wrapper's magic, `0x0B17C0DE` little-endian.
const WRAPPER_MAGIC: &[u8; 4] = b"\xDE\xC0\x17\x0B";
/// How much of a text detection reads for a `target` line.
const DETECT_HEAD: usize = 64 << 10;

/// How an NVVM IR module is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum NvvmIrForm {
    /// LLVM assembly text (`.ll`).
    Text,
    /// LLVM bitcode (`.bc`), raw or in the bitcode wrapper.
    Bitcode,
}

/// What an NVVM IR module says of itself. Of bitcode only the form is
/// read: its names and metadata are left to libNVVM.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct NvvmIrInfo {
    /// Text or bitcode.
    pub form: NvvmIrForm,
    /// `target triple`, e.g. `"nvptx64-nvidia-cuda"`.
    pub triple: Option<String>,
    /// `target datalayout`.
    pub datalayout: Option<String>,
    /// `!nvvmir.version`'s first two numbers, `(2, 0)`.
    pub ir_version: Option<(u32, u32)>,
    /// Kernels: functions `nvvm.annotations` marks `"kernel"`, and those
    /// defined with the `ptx_kernel` calling convention, in order.
    pub kernels: Vec<String>,
    /// Functions defined here, in order.
    pub defined: NameList,
    /// Of those, the definitions LLVM's linker keeps only when a module
    /// added before this one uses them (`linkonce`, `linkonce_odr`,
    /// `available_externally`).
    pub discardable: NameList,
    /// Functions declared and not defined here, in order; LLVM's
    /// intrinsics (`llvm.*`) left out.
    pub declared: NameList,
    /// Globals named inside function bodies and initializers, each once:
    /// a `linkonce` definition one of them names may be kept by its own
    /// module's code.
    pub referenced: NameList,
    /// Whether it writes pointers as LLVM 15's opaque `ptr`, which the
    /// LLVM 7 front end of libNVVM (compute_90 and older) cannot parse.
    pub opaque_pointers: bool,
}

/// Whether `data` starts as LLVM bitcode, raw or wrapped.
pub fn is_bitcode(data: &[u8]) -> bool {
    data.starts_with(BITCODE_MAGIC) || data.starts_with(WRAPPER_MAGIC)
}

/// Whether `data` reads as LLVM assembly for a GPU: a `target triple` or
/// `target datalayout` line, or a `!nvvmir.version`, in the first 64 KiB
/// of UTF-8.
pub fn looks_like_text(data: &[u8]) -> bool {
    let head = &data[..data.len().min(DETECT_HEAD)];
    let text = match std::str::from_utf8(head) {
        Ok(text) => text,
        Err(e) => std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or_default(),
    };
    text.lines().any(|line| {
        let line = line.trim_start();
        line.starts_with("target triple") || line.starts_with("target datalayout")
    }) || text.contains("!nvvmir.version")
}

/// Checks and reads an NVVM IR module, in time and memory linear in its
/// size.
pub fn inspect(data: &[u8]) -> ParseResult<NvvmIrInfo> {
    if is_bitcode(data) {
        check_bitcode(data)?;
        return Ok(NvvmIrInfo::empty(NvvmIrForm::Bitcode));
    }
    let end = data.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    let text = std::str::from_utf8(&data[..end]).map_err(|e| Reason::Malformed {
        what: "NVVM IR text",
        detail: format!("not UTF-8 at byte {}", e.valid_up_to()),
    })?;
    if text.trim().is_empty() {
        return Err(Reason::Empty);
    }
    if text.contains('\0') {
        return Err(Reason::Malformed {
            what: "NVVM IR text",
            detail: "a NUL byte inside the text (libNVVM would read up to it)".into(),
        });
    }
    Ok(read_text(text))
}

/// Bitcode is a stream of 32-bit words; the wrapper's header (magic,
/// version, offset, size, CPU type) must place the bitcode inside.
fn check_bitcode(data: &[u8]) -> ParseResult<()> {
    let malformed = |detail: String| Reason::Malformed {
        what: "LLVM bitcode",
        detail,
    };
    if data.starts_with(WRAPPER_MAGIC) {
        let word = |at: usize| {
            data.get(at..at + 4)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as u64)
        };
        let (Some(offset), Some(size)) = (word(8), word(12)) else {
            return Err(Reason::Truncated {
                what: "bitcode wrapper header",
                offset: 0,
                needed: 20,
                available: data.len() as u64,
            });
        };
        if offset + size > data.len() as u64 || offset < 20 {
            return Err(malformed(format!(
                "the wrapper places {size} bytes at offset {offset} of {}",
                data.len()
            )));
        }
        let inner = &data[offset as usize..(offset + size) as usize];
        if !inner.starts_with(BITCODE_MAGIC) {
            return Err(malformed("the wrapper holds no bitcode magic".into()));
        }
        return check_bitcode(inner);
    }
    if !data.len().is_multiple_of(4) || data.len() < 8 {
        return Err(malformed(format!(
            "{} bytes is not a whole number of 32-bit words past the magic",
            data.len()
        )));
    }
    Ok(())
}

impl NvvmIrInfo {
    fn empty(form: NvvmIrForm) -> Self {
        NvvmIrInfo {
            form,
            triple: None,
            datalayout: None,
            ir_version: None,
            kernels: Vec::new(),
            defined: NameList::new(),
            discardable: NameList::new(),
            declared: NameList::new(),
            referenced: NameList::new(),
            opaque_pointers: false,
        }
    }
}

/// One pass over the lines; metadata nodes are looked up at the end.
fn read_text(text: &str) -> NvvmIrInfo {
    let mut info = NvvmIrInfo::empty(NvvmIrForm::Text);
    let mut nodes: HashMap<&str, &str> = HashMap::new();
    let mut annotations: Vec<&str> = Vec::new();
    let mut version_node = None;
    let mut kernels_by_convention = Vec::new();
    let mut referenced = std::collections::HashSet::new();
    for line in text.lines() {
        let line = line.trim_start();
        if !info.opaque_pointers && !line.starts_with(';') && has_ptr_type(line) {
            info.opaque_pointers = true;
        }
        if let Some(rest) = line.strip_prefix("target ") {
            let rest = rest.trim_start();
            if let Some(value) = assigned_string(rest, "triple") {
                info.triple = Some(value.to_owned());
            } else if let Some(value) = assigned_string(rest, "datalayout") {
                info.datalayout = Some(value.to_owned());
            }
        } else if let Some(rest) = line.strip_prefix("define ") {
            if let Some((words, name)) = function_name(rest) {
                info.defined.push(&name);
                let mut words = words.split_ascii_whitespace();
                if words
                    .clone()
                    .any(|w| matches!(w, "linkonce" | "linkonce_odr" | "available_externally"))
                {
                    info.discardable.push(&name);
                }
                if words.any(|w| w == "ptx_kernel") {
                    kernels_by_convention.push(name);
                }
            }
        } else if let Some(rest) = line.strip_prefix("declare ") {
            if let Some((_, name)) = function_name(rest)
                && !name.starts_with("llvm.")
            {
                info.declared.push(&name);
            }
        } else if let Some(rest) = line.strip_prefix('@')
            && let Some((name, definition)) = rest.split_once('=')
            && definition
                .trim_start()
                .split_ascii_whitespace()
                .any(|w| w == "alias")
        {
            // `@a = alias void (), void ()* @f`: `a` is defined.
            if let Some(name) = global_name(name.trim_end()) {
                info.defined.push(&name);
            }
            references(definition, &mut referenced, &mut info.referenced);
        } else if let Some(rest) = line.strip_prefix('!') {
            let Some((lhs, rhs)) = rest.split_once('=') else {
                continue;
            };
            match lhs.trim() {
                "nvvm.annotations" => annotations.extend(node_refs(rhs)),
                "nvvmir.version" => version_node = node_refs(rhs).next(),
                id if id.bytes().all(|b| b.is_ascii_digit()) && !id.is_empty() => {
                    nodes.insert(id, rhs);
                }
                _ => {}
            }
        } else if !line.starts_with(';') && !line.starts_with("attributes") {
            // A body's line, or a global's initializer.
            let from = match line.strip_prefix('@') {
                Some(rest) => rest.find('=').map_or(line.len(), |at| at + 2),
                None => 0,
            };
            references(
                &line[from.min(line.len())..],
                &mut referenced,
                &mut info.referenced,
            );
        }
    }
    // A name both declared and defined (a declaration before a
    // definition in one module) is defined.
    let defined: std::collections::HashSet<&str> = info.defined.iter().collect();
    info.declared = info
        .declared
        .iter()
        .filter(|name| !defined.contains(name))
        .collect();
    info.ir_version = version_node
        .and_then(|id| nodes.get(id))
        .and_then(|node| version_numbers(node));
    let mut seen = std::collections::HashSet::new();
    // Each node once: a list that names one node a million times reads it
    // once.
    let mut ids = std::collections::HashSet::new();
    annotations.retain(|id| ids.insert(*id));
    let annotated = annotations
        .into_iter()
        .filter_map(|id| annotated_kernel(nodes.get(id)?));
    for name in annotated.chain(kernels_by_convention) {
        if seen.insert(name.clone()) {
            info.kernels.push(name);
        }
    }
    info
}

/// Whether `line` has the word `ptr` outside a quoted string and not as a
/// name (`%ptr`, `@ptr`): the opaque pointer type.
fn has_ptr_type(line: &str) -> bool {
    let bytes = line.as_bytes();
    let mut quoted = false;
    for (at, &byte) in bytes.iter().enumerate() {
        if byte == b'"' {
            quoted = !quoted;
        }
        if quoted || !bytes[at..].starts_with(b"ptr") {
            continue;
        }
        let word = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'$' | b'-');
        let before = at.checked_sub(1).map(|i| bytes[i]);
        let after = bytes.get(at + 3).copied();
        if !before.is_some_and(|b| word(b) || b == b'%' || b == b'@' || b == b'!')
            && !after.is_some_and(word)
        {
            return true;
        }
    }
    false
}

/// Adds each `@name` in `text` that is not yet in `seen` to `names`.
fn references<'a>(
    text: &'a str,
    seen: &mut std::collections::HashSet<&'a str>,
    names: &mut NameList,
) {
    let mut rest = text;
    while let Some(at) = rest.find('@') {
        rest = &rest[at + 1..];
        let end = match rest.strip_prefix('"') {
            Some(quoted) => quoted.find('"').map_or(rest.len(), |end| end + 2),
            None => rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '$' | '.' | '_' | '-')))
                .unwrap_or(rest.len()),
        };
        let raw = &rest[..end];
        if !raw.is_empty()
            && seen.insert(raw)
            && let Some(name) = global_name(raw)
        {
            names.push(&name);
        }
        rest = &rest[end..];
    }
}

/// `"X"` of `key = "X"`.
fn assigned_string<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let value = text.strip_prefix(key)?.trim_start().strip_prefix('=')?;
    let value = value.trim_start().strip_prefix('"')?;
    value.split_once('"').map(|(value, _)| value)
}

/// The words before the `@`, and the function's name, of a `define` or
/// `declare` line.
fn function_name(rest: &str) -> Option<(&str, String)> {
    let at = rest.find('@')?;
    Some((&rest[..at], global_name(&rest[at + 1..])?))
}

/// The name at the start of `text` (after its `@`): quoted, with `\XX`
/// escapes decoded, or bare.
fn global_name(text: &str) -> Option<String> {
    if let Some(quoted) = text.strip_prefix('"') {
        let (raw, _) = quoted.split_once('"')?;
        return Some(unescape(raw));
    }
    let end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '$' | '.' | '_' | '-')))
        .unwrap_or(text.len());
    (end > 0).then(|| text[..end].to_owned())
}

/// LLVM's `\XX` hex escapes of a quoted name; anything else as written.
fn unescape(raw: &str) -> String {
    if !raw.contains('\\') {
        return raw.to_owned();
    }
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'\\', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The node ids of `!{ !4, !5 }`.
fn node_refs(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| c == ',' || c == '{' || c == '}' || c.is_whitespace())
        .filter_map(|part| part.strip_prefix('!'))
        .filter(|id| !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()))
}

/// `(2, 0)` of `!{i32 2, i32 0}` (or `!{i32 2, i32 0, i32 3, i32 1}`).
fn version_numbers(node: &str) -> Option<(u32, u32)> {
    let mut numbers = node
        .split(',')
        .filter_map(|part| {
            part.trim()
                .trim_matches(['!', '{', '}', ' '])
                .strip_prefix("i32 ")
        })
        .map(|n| n.trim().trim_end_matches('}').trim().parse::<u32>());
    Some((numbers.next()?.ok()?, numbers.next()?.ok()?))
}

/// The function a `!{ <type> @name, !"kernel", i32 1 }` node marks.
fn annotated_kernel(node: &str) -> Option<String> {
    kernel_annotation(node).map(|(name, _)| name)
}

/// The function a `!{ <type> @name, !"kernel", i32 1 }` node marks, with
/// the node's first element (`<type> @name`), which names the function
/// as a constant of its type.
pub(crate) fn kernel_annotation(node: &str) -> Option<(String, &str)> {
    let (before, after) = node.split_once("!\"kernel\"")?;
    let flag = after.trim_start().strip_prefix(',')?.trim_start();
    let value = flag.strip_prefix("i32")?.trim_start();
    if !value.starts_with('1') || value[1..].starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let at = before.rfind('@')?;
    let name = global_name(&before[at + 1..])?;
    let element = before
        .split_once("!{")
        .map_or(before, |(_, element)| element);
    Some((name, element.trim().trim_end_matches(',').trim_end()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NUMBA: &str = "; ModuleID = \"k\"\n\
        target triple = \"nvptx64-nvidia-cuda\"\n\
        target datalayout = \"e-p:64:64:64-i64:64:64\"\n\
        define void @\"_Z1kPd\"(double* %\"out\") {\n  ret void\n}\n\
        define linkonce_odr i32 @\"helper\"(double* %\".ret\") {\n  ret i32 0\n}\n\
        declare double @\"__nv_sin\"(double %\".1\")\n\
        declare i32 @\"llvm.nvvm.read.ptx.sreg.tid.x\"()\n\
        declare i32 @\"helper\"(double* %\".ret\")\n\
        !nvvmir.version = !{ !0 }\n\
        !nvvm.annotations = !{ !1 }\n\
        !0 = !{ i32 2, i32 0, i32 3, i32 1 }\n\
        !1 = !{ void (double*)* @\"_Z1kPd\", !\"kernel\", i32 1 }\n";

    #[test]
    fn numba_text_is_read() {
        assert!(looks_like_text(NUMBA.as_bytes()));
        let info = inspect(NUMBA.as_bytes()).unwrap();
        assert_eq!(info.form, NvvmIrForm::Text);
        assert_eq!(info.triple.as_deref(), Some("nvptx64-nvidia-cuda"));
        assert_eq!(info.ir_version, Some((2, 0)));
        assert_eq!(info.kernels, ["_Z1kPd"]);
        assert_eq!(
            info.defined.iter().collect::<Vec<_>>(),
            ["_Z1kPd", "helper"]
        );
        assert_eq!(info.discardable.iter().collect::<Vec<_>>(), ["helper"]);
        assert_eq!(info.declared.iter().collect::<Vec<_>>(), ["__nv_sin"]);
        assert!(info.referenced.is_empty());
        let calls = "define void @a() {\n  call void @b()\n  ret void\n}\n\
                     @g = global void ()* @\"h.1\"\n@x = alias void (), void ()* @a\n";
        let info = inspect(calls.as_bytes()).unwrap();
        assert_eq!(
            info.referenced.iter().collect::<Vec<_>>(),
            ["b", "h.1", "a"]
        );
        assert_eq!(info.defined.iter().collect::<Vec<_>>(), ["a", "x"]);
    }

    #[test]
    fn opaque_pointer_kernels_and_escapes() {
        let ir = "target triple = \"nvptx64-nvidia-cuda\"\n\
                  define ptx_kernel void @k(ptr %p) {\n ret void\n}\n\
                  define void @\"a\\2Eb\"() {\n ret void\n}\n\
                  !nvvm.annotations = !{!2}\n!2 = !{ptr @\"a\\2Eb\", !\"kernel\", i32 1}\n";
        let info = inspect(ir.as_bytes()).unwrap();
        assert_eq!(info.kernels, ["a.b", "k"]);
        assert_eq!(info.ir_version, None);
        assert!(info.opaque_pointers);
        assert!(!inspect(NUMBA.as_bytes()).unwrap().opaque_pointers);
        assert!(!has_ptr_type("%ptr = load i8*, i8** %\"ptr x\""));
        // Multi-byte characters outside quotes.
        assert!(inspect("target triple = \"nvptx64\"\n  ret void ; café é\n".as_bytes()).is_ok());
        assert!(inspect("é".as_bytes()).is_ok());
    }

    #[test]
    fn a_kernel_flag_of_zero_is_no_kernel() {
        let ir = "target triple = \"nvptx64\"\n!nvvm.annotations = !{!0}\n\
                  !0 = !{void ()* @f, !\"kernel\", i32 10}\n";
        assert!(inspect(ir.as_bytes()).unwrap().kernels.is_empty());
    }

    #[test]
    fn bitcode_framing() {
        assert!(is_bitcode(b"BC\xC0\xDE\x35\x14\x00\x00"));
        assert_eq!(
            inspect(b"BC\xC0\xDE\x35\x14\x00\x00").unwrap().form,
            NvvmIrForm::Bitcode
        );
        assert!(inspect(b"BC\xC0\xDE\x35").is_err());
        let mut wrapped = b"\xDE\xC0\x17\x0B\0\0\0\0".to_vec();
        wrapped.extend_from_slice(&20u32.to_le_bytes());
        wrapped.extend_from_slice(&8u32.to_le_bytes());
        wrapped.extend_from_slice(&[0; 4]);
        wrapped.extend_from_slice(b"BC\xC0\xDE\0\0\0\0");
        assert!(inspect(&wrapped).is_ok());
        wrapped[12] = 9;
        assert!(inspect(&wrapped).is_err());
    }

    #[test]
    fn text_that_is_not_ir() {
        assert!(!looks_like_text(b".version 8.0\n.target sm_90\n"));
        assert!(inspect(b"  \n").is_err());
        assert!(inspect(b"target triple = \"x\"\n\0define").is_err());
    }
}
