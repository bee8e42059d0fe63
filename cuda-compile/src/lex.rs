//! Translation phases 1 to 3 as far as finding directives needs them: a
//! byte-order mark dropped, continued lines joined, and every comment
//! replaced by one space, with string, character and raw string literals
//! honoured. A directive then starts a line of the result, however the
//! source spelt the comments around it (`/* c */ #include "x.h"`).

/// `text` as the preprocessor reads its directives.
pub(crate) fn directive_text(text: &str) -> String {
    let joined = text
        .trim_start_matches('\u{feff}')
        .replace("\\\r\n", "")
        .replace("\\\n", "");
    strip_comments(&joined)
}

/// Every `/* */` and `//` comment replaced by one space; literals kept.
fn strip_comments(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let rest = &bytes[at..];
        if rest.starts_with(b"/*") {
            let end =
                memchr::memmem::find(&rest[2..], b"*/").map_or(bytes.len(), |e| at + 2 + e + 2);
            out.push(b' ');
            at = end;
        } else if rest.starts_with(b"//") {
            out.push(b' ');
            at += memchr::memchr(b'\n', rest).unwrap_or(rest.len());
        } else if let Some(len) = raw_string(rest) {
            out.extend_from_slice(&rest[..len]);
            at += len;
        } else if rest[0] == b'"' || rest[0] == b'\'' {
            let len = quoted(rest);
            out.extend_from_slice(&rest[..len]);
            at += len;
        } else {
            out.push(rest[0]);
            at += 1;
        }
    }
    // Only whole ASCII sequences were dropped or replaced by a space.
    String::from_utf8(out).unwrap_or_default()
}

/// The length of a string or character literal at the start of `text`:
/// up to its closing quote, or the end of its line when it has none.
fn quoted(text: &[u8]) -> usize {
    let quote = text[0];
    let mut at = 1;
    while at < text.len() && text[at] != quote && text[at] != b'\n' {
        at += if text[at] == b'\\' { 2 } else { 1 };
    }
    (at + 1).min(text.len())
}

/// The length of a raw string literal (`R"delim(...)delim"`, with an
/// optional `u8`, `u`, `U` or `L` prefix) at the start of `text`, if one
/// starts there.
fn raw_string(text: &[u8]) -> Option<usize> {
    let prefix = [&b"u8R\""[..], b"uR\"", b"UR\"", b"LR\"", b"R\""]
        .into_iter()
        .find(|p| text.starts_with(p))?;
    let open = prefix.len();
    let paren = open + text[open..].iter().take(17).position(|&b| b == b'(')?;
    let delimiter = &text[open..paren];
    if delimiter
        .iter()
        .any(|b| b.is_ascii_whitespace() || matches!(b, b'\\' | b')' | b'"'))
    {
        return None;
    }
    let mut close = Vec::with_capacity(delimiter.len() + 2);
    close.push(b')');
    close.extend_from_slice(delimiter);
    close.push(b'"');
    let end = memchr::memmem::find(&text[paren + 1..], &close)
        .map_or(text.len(), |e| paren + 1 + e + close.len());
    Some(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn directives(text: &str) -> Vec<String> {
        directive_text(text)
            .lines()
            .map(str::trim_start)
            .filter(|line| line.starts_with('#'))
            .map(str::to_owned)
            .collect()
    }

    /// The comment cases that once served stale compiles, and the
    /// literals that must not start one.
    #[test]
    fn comments_before_a_directive_leave_it_a_directive() {
        assert_eq!(
            directives("/* c */ #include \"x.h\"\n"),
            ["#include \"x.h\""]
        );
        assert_eq!(
            directives("/* a\n b */ #include \"y.h\"\nint z;\n"),
            ["#include \"y.h\""]
        );
        // After code on the line the comment started, it is no directive.
        assert!(directives("int a; /* x\n */ #include \"n.h\"\n").is_empty());
        assert!(directives("// #include \"no.h\"\n").is_empty());
        assert!(directives("// a comment \\\n#include \"joined.h\"\n").is_empty());
        assert_eq!(
            directives("const char *s = \"/*\";\n#include \"s.h\"\n// */\n"),
            ["#include \"s.h\""]
        );
        assert_eq!(
            directives("char c = '\"';\n#include \"c.h\"\n"),
            ["#include \"c.h\""]
        );
        assert_eq!(
            directives("auto r = R\"x(/* )\" */)x\";\n#include \"r.h\"\n"),
            ["#include \"r.h\""]
        );
        assert_eq!(
            directives("# /* c */ include <v.h>\n"),
            ["#   include <v.h>"]
        );
        assert_eq!(
            directives("\u{feff}#inc\\\nlude <b.h>\n"),
            ["#include <b.h>"]
        );
        // An unterminated comment runs to the end.
        assert!(directives("/* open\n#include \"hidden.h\"\n").is_empty());
    }
}
