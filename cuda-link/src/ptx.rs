//! PTX text: header directives and kernel names, without a full parser.

use serde::Serialize;

use crate::error::{ParseResult, Reason};

/// What a PTX module declares.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PtxInfo {
    /// `.version`, e.g. `"8.8"`.
    pub version: String,
    /// The `.target` list, e.g. `["sm_90a"]` or `["sm_20", "texmode_independent"]`.
    pub target: Vec<String>,
    /// `.address_size`, when given.
    pub address_size: Option<u32>,
    /// Kernels defined (not only declared), deduplicated, in order.
    pub kernels: Vec<String>,
}

/// Removes `//` and `/* */` comments, keeping string literals intact.
/// Comments become a space, so tokens on either side stay apart.
pub fn strip_comments(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut copied_from = 0;
    while i < bytes.len() {
        match (bytes[i], bytes.get(i + 1)) {
            (b'"', _) => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' && bytes[i] != b'\n' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i = (i + 1).min(bytes.len());
            }
            (b'/', Some(b'/')) => {
                out.push_str(&text[copied_from..i]);
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                out.push(' ');
                copied_from = i;
            }
            (b'/', Some(b'*')) => {
                out.push_str(&text[copied_from..i]);
                i = text[i + 2..]
                    .find("*/")
                    .map_or(bytes.len(), |end| i + 2 + end + 2);
                out.push(' ');
                copied_from = i;
            }
            _ => i += 1,
        }
    }
    out.push_str(&text[copied_from.min(text.len())..]);
    out
}

/// Decodes PTX bytes: trailing NULs and a BOM removed, UTF-8 required.
pub fn text(data: &[u8]) -> ParseResult<&str> {
    let end = data.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    let data = &data[..end];
    let data = data.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(data);
    std::str::from_utf8(data).map_err(|e| Reason::PtxNotText(e.valid_up_to()))
}

/// Whether the first directive, after whitespace and comments, is `.version`.
pub fn looks_like_ptx(data: &[u8]) -> bool {
    // Only the head matters; cut at a char boundary-agnostic byte limit.
    let head = &data[..data.len().min(4096)];
    let head = match std::str::from_utf8(head) {
        Ok(text) => text,
        Err(e) => match std::str::from_utf8(&head[..e.valid_up_to()]) {
            Ok(text) => text,
            Err(_) => return false,
        },
    };
    let head = head.strip_prefix('\u{feff}').unwrap_or(head);
    strip_comments(head).split_whitespace().next() == Some(".version")
}

/// Checks the text and the header directives without scanning the body.
pub fn validate(data: &[u8]) -> ParseResult<()> {
    let text = text(data)?;
    let head_len = (0..=text.len().min(8192))
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    let head = strip_comments(&text[..head_len]);
    let mut tokens = head.split_whitespace();
    if tokens.next() != Some(".version") {
        return Err(Reason::PtxMissingDirective(".version"));
    }
    if !tokens.any(|t| t == ".target") {
        return Err(Reason::PtxMissingDirective(".target"));
    }
    Ok(())
}

/// Reads the header directives and kernel names.
pub fn inspect(data: &[u8]) -> ParseResult<PtxInfo> {
    let source = strip_comments(text(data)?);
    let tokens = tokenize(&source);

    let after = |directive: &str| tokens.iter().position(|t| *t == directive).map(|i| i + 1);
    let version = after(".version")
        .and_then(|i| tokens.get(i))
        .filter(|v| v.contains('.') && v.bytes().all(|b| b.is_ascii_digit() || b == b'.'))
        .ok_or(Reason::PtxMissingDirective(".version"))?
        .to_string();
    let target_at = after(".target").ok_or(Reason::PtxMissingDirective(".target"))?;
    let mut target = Vec::new();
    let mut i = target_at;
    while let Some(token) = tokens.get(i) {
        if *token != "," {
            target.push(token.to_string());
        }
        if tokens.get(i + 1) != Some(&",") && *token != "," {
            break;
        }
        i += 1;
    }
    if target.is_empty() {
        return Err(Reason::PtxMissingDirective(".target"));
    }
    let address_size = after(".address_size")
        .and_then(|i| tokens.get(i))
        .and_then(|v| v.parse().ok());

    let mut kernels: Vec<String> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (i, token) in tokens.iter().enumerate() {
        if *token != ".entry" {
            continue;
        }
        let Some(name) = tokens.get(i + 1).filter(|n| is_identifier(n)) else {
            continue;
        };
        if is_definition(&tokens[i + 2..]) && seen.insert(*name) {
            kernels.push(name.to_string());
        }
    }
    Ok(PtxInfo {
        version,
        target,
        address_size,
        kernels,
    })
}

/// Splits into identifiers/directives and single punctuation characters.
fn tokenize(source: &str) -> Vec<&str> {
    let mut tokens = Vec::new();
    let bytes = source.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii_whitespace() {
            i += 1;
        } else if is_word_byte(b) {
            let start = i;
            while i < bytes.len() && is_word_byte(bytes[i]) {
                i += 1;
            }
            tokens.push(&source[start..i]);
        } else {
            let len = source[i..].chars().next().map_or(1, char::len_utf8);
            tokens.push(&source[i..i + len]);
            i += len;
        }
    }
    tokens
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

/// After an entry's name: skips the parameter list and performance
/// directives; a `{` means a definition, a `;` a declaration.
fn is_definition(rest: &[&str]) -> bool {
    let mut depth = 0usize;
    for token in rest {
        match *token {
            "(" => depth += 1,
            ")" => depth = depth.saturating_sub(1),
            "{" if depth == 0 => return true,
            ";" if depth == 0 => return false,
            // The next entry ends the search, so scans never overlap and
            // inspection stays linear even with unbalanced parentheses.
            ".entry" | ".func" => return false,
            _ => {}
        }
    }
    false
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
    fn detection_skips_comments() {
        assert!(looks_like_ptx(b"\xEF\xBB\xBF/* c */ // x\n  .version 8.0"));
        assert!(!looks_like_ptx(b".target sm_90 .version 8.0"));
        assert!(!looks_like_ptx(b"/* unterminated"));
    }
}
