//! CUDA C++ cut into preprocessing tokens, as translation phases 1 to 3
//! cut it: a byte-order mark dropped, lines continued by `\` joined,
//! comments, string, character and raw string literals (with their
//! prefixes, only where a prefix starts a token), numbers with their
//! digit separators, and header names in `#include` and
//! `__has_include`. Every other reader of source text in the workspace
//! reads these tokens ([`crate::source`]).
//!
//! Each token keeps its bytes as written, splices included, and its
//! offset and line in the text, so that a reader can blank, copy or point
//! at it. One pass, linear in the text's length, on any bytes.

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TokenKind {
    /// An identifier or keyword (`__global__`, `include`).
    Identifier,
    /// A preprocessing number (`1'000`, `0x1p-3f`, `2.5e+3`).
    Number,
    /// A string literal with its prefix and suffix (`u8"x"`, `"s"_sv`);
    /// one without its closing quote ends at its line's end.
    String,
    /// A character literal (`'"'`, `L'x'`); likewise.
    Character,
    /// A raw string literal (`R"d(...)d"`, `u8R"(...)"`); one without
    /// its closing delimiter runs to the end of the text.
    RawString,
    /// A header name: `<cuda/std/cstdint>` or `"k.h"` in an `#include`
    /// (and `include_next`, `import`, `embed`) or `__has_include(...)`.
    HeaderName,
    /// A `/* */` or `//` comment.
    Comment,
    /// Anything else: one byte (`{`, `#`), or `%:` (`#` as a digraph).
    Punctuator,
}

/// One preprocessing token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token<'a> {
    /// What it is.
    pub kind: TokenKind,
    /// Its bytes as written, line splices included.
    pub text: &'a str,
    /// Where it starts in the text, in bytes.
    pub offset: usize,
    /// The line it starts on, from 1.
    pub line: usize,
    /// Whether it is the first token of its line after splicing, comments
    /// not counted: where a `#` starts a directive.
    pub starts_line: bool,
}

impl<'a> Token<'a> {
    /// The token's text with its line splices removed: what the compiler
    /// reads (`inc\<newline>lude` is `include`). Borrowed when it has none.
    pub fn spliced(&self) -> std::borrow::Cow<'a, str> {
        if !self.text.contains('\\') || self.kind == TokenKind::RawString {
            return std::borrow::Cow::Borrowed(self.text);
        }
        let mut out = String::with_capacity(self.text.len());
        let bytes = self.text.as_bytes();
        let mut at = 0;
        while at < bytes.len() {
            match splice_len(bytes, at) {
                0 => {
                    // Whole characters: a splice is ASCII, so `at` stays on
                    // a character boundary.
                    let next = next_boundary(self.text, at);
                    out.push_str(&self.text[at..next]);
                    at = next;
                }
                len => at += len,
            }
        }
        std::borrow::Cow::Owned(out)
    }

    /// Whether this is the punctuator that starts a directive (`#`, `%:`)
    /// at the start of its line.
    pub fn is_directive_start(&self) -> bool {
        self.starts_line && self.kind == TokenKind::Punctuator && matches!(self.text, "#" | "%:")
    }
}

/// The byte after the character at `at`.
fn next_boundary(text: &str, at: usize) -> usize {
    let mut next = at + 1;
    while !text.is_char_boundary(next) {
        next += 1;
    }
    next
}

/// The length of a line splice (`\` and a newline, `\r\n` too) at `at`,
/// or 0.
fn splice_len(bytes: &[u8], at: usize) -> usize {
    match (bytes.get(at), bytes.get(at + 1), bytes.get(at + 2)) {
        (Some(b'\\'), Some(b'\n'), _) => 2,
        (Some(b'\\'), Some(b'\r'), Some(b'\n')) => 3,
        _ => 0,
    }
}

/// A `\` with only spaces or tabs before its line's end, at `at`: gcc
/// splices it (and C++23 does), NVRTC does not. Its length to the
/// newline, or 0.
fn spaced_splice_len(bytes: &[u8], at: usize) -> usize {
    if bytes.get(at) != Some(&b'\\') {
        return 0;
    }
    let mut end = at + 1;
    while matches!(bytes.get(end), Some(b' ' | b'\t' | b'\x0b' | b'\x0c')) {
        end += 1;
    }
    match (end > at + 1, bytes.get(end), bytes.get(end + 1)) {
        (true, Some(b'\n'), _) | (true, Some(b'\r'), Some(b'\n')) => end - at,
        _ => 0,
    }
}

fn is_identifier_start(byte: u8) -> bool {
    byte.is_ascii_alphabetic() || byte == b'_' || byte == b'$' || byte >= 0x80
}

fn is_identifier_continue(byte: u8) -> bool {
    is_identifier_start(byte) || byte.is_ascii_digit()
}

/// The tokens of `text`, in order: see the module's doc.
pub fn tokens(text: &str) -> Tokens<'_> {
    let start = match text.starts_with('\u{feff}') {
        true => '\u{feff}'.len_utf8(),
        false => 0,
    };
    Tokens {
        text,
        bytes: text.as_bytes(),
        at: start,
        counted: (0, 1),
        starts_line: true,
        in_directive: false,
        header: HeaderState::None,
        spaced_splice: None,
        bad_raw_string: None,
    }
}

/// Whether the next token may be a header name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HeaderState {
    None,
    /// `#` began this line's directive.
    Hash,
    /// `# include` (and kin): the next token is a header name if it can be.
    Include,
    /// `__has_include`: a `(` then a header name.
    HasInclude,
    /// `__has_include(`.
    HasIncludeParen,
}

/// The iterator [`tokens`] returns.
#[derive(Debug, Clone)]
pub struct Tokens<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
    /// Lines are counted up to a place: `(offset, line there)`.
    counted: (usize, usize),
    starts_line: bool,
    /// Whether a directive began on this line: a raw string in it ends
    /// with the line, as gcc reads it.
    in_directive: bool,
    header: HeaderState,
    /// Where the first `\` before spaces and a line's end is.
    spaced_splice: Option<usize>,
    /// Where the first raw string with an invalid delimiter starts: an
    /// error that compilers recover from each their own way.
    bad_raw_string: Option<usize>,
}

impl<'a> Tokens<'a> {
    /// The first line, if any, that ends in a `\` followed by spaces:
    /// gcc (nvcc's preprocessor) joins it to the next, NVRTC does not, so
    /// what follows it may be read two ways. Known once the tokens up to
    /// it are read.
    pub fn spaced_splice(&self) -> Option<usize> {
        Some(self.line_at(self.spaced_splice?))
    }

    /// The first line, if any, with a raw string whose delimiter is
    /// invalid (too long, or holding a space, a newline, `\`, `)` or `"`),
    /// or one in a directive that the line's end cuts: errors gcc and
    /// NVRTC each recover from their own way, after which they may read
    /// the lines after it differently. Here an invalid one's `R` is an
    /// identifier and its quote starts a plain string; a cut one ends
    /// with its line.
    pub fn bad_raw_string(&self) -> Option<usize> {
        Some(self.line_at(self.bad_raw_string?))
    }

    fn line_at(&self, at: usize) -> usize {
        1 + memchr::memchr_iter(b'\n', &self.bytes[..at]).count()
    }

    /// The line `at` is on, counting on from the last place counted: the
    /// tokens come in order, so the whole text is counted once.
    fn line_of(&mut self, at: usize) -> usize {
        let (from, line) = self.counted;
        let line = line + memchr::memchr_iter(b'\n', &self.bytes[from..at]).count();
        self.counted = (at, line);
        line
    }

    /// `at` past any line splices.
    fn skip_splices(&mut self, mut at: usize) -> usize {
        loop {
            match splice_len(self.bytes, at) {
                0 => {
                    if self.spaced_splice.is_none() && spaced_splice_len(self.bytes, at) > 0 {
                        self.spaced_splice = Some(at);
                    }
                    return at;
                }
                len => at += len,
            }
        }
    }

    /// The byte at `at` after splices, and where the one after it starts.
    fn peek(&mut self, at: usize) -> Option<(u8, usize)> {
        let at = self.skip_splices(at);
        self.bytes.get(at).map(|&byte| (byte, at + 1))
    }

    /// The byte at `at` after splices, without counting lines: a look
    /// ahead that may be read again.
    fn look(&self, mut at: usize) -> Option<u8> {
        loop {
            match splice_len(self.bytes, at) {
                0 => return self.bytes.get(at).copied(),
                len => at += len,
            }
        }
    }

    /// Consumes identifier bytes from `at`; where they end.
    fn identifier_end(&mut self, mut at: usize) -> usize {
        while let Some((byte, next)) = self.peek(at) {
            if !is_identifier_continue(byte) {
                break;
            }
            at = next;
        }
        at
    }

    /// A quoted literal or header name from its opening `quote` at `at`:
    /// to the closing quote (escapes honoured, unless a header name) or
    /// the line's end.
    fn quoted_end(&mut self, at: usize, quote: u8, escapes: bool) -> usize {
        let mut at = at + 1;
        while let Some((byte, next)) = self.peek(at) {
            match byte {
                b'\n' => return at,
                b'\\' if escapes => {
                    at = match self.peek(next) {
                        Some((b'\n', _)) | None => next,
                        Some((_, after)) => after,
                    };
                }
                _ if byte == quote => return next,
                _ => at = next,
            }
        }
        self.bytes.len()
    }

    /// A raw string's end from its opening `"` at `quote`, if a valid
    /// delimiter follows it: between the quotes the splices are undone,
    /// so the bytes are read as written.
    fn raw_string_end(&mut self, quote: usize) -> Option<usize> {
        let open = quote + 1;
        let valid = |b: &u8| b.is_ascii_graphic() && !matches!(b, b'\\' | b')' | b'"');
        let paren = self.bytes[open..]
            .iter()
            .take(17)
            .position(|&b| b == b'(')
            .map(|n| open + n)
            .filter(|&paren| self.bytes[open..paren].iter().all(valid));
        let Some(paren) = paren else {
            self.bad_raw_string.get_or_insert(quote);
            return None;
        };
        let delimiter = &self.bytes[open..paren];
        let mut close = Vec::with_capacity(delimiter.len() + 2);
        close.push(b')');
        close.extend_from_slice(delimiter);
        close.push(b'"');
        // In a directive, the line's end ends it, closed or not.
        let limit = match self.in_directive {
            true => {
                memchr::memchr(b'\n', &self.bytes[paren..]).map_or(self.bytes.len(), |n| paren + n)
            }
            false => self.bytes.len(),
        };
        let end = memchr::memmem::find(&self.bytes[paren + 1..limit], &close)
            .map(|e| paren + 1 + e + close.len());
        if end.is_none() && limit < self.bytes.len() {
            self.bad_raw_string.get_or_insert(quote);
        }
        Some(end.unwrap_or(limit))
    }

    /// A literal's user-defined suffix (`"s"_sv`, `12_km`): part of the
    /// literal's token, so it starts no literal of its own.
    fn suffix_end(&mut self, at: usize) -> usize {
        match self.peek(at) {
            Some((byte, _)) if is_identifier_start(byte) => self.identifier_end(at),
            _ => at,
        }
    }

    /// A preprocessing number from `at`.
    fn number_end(&mut self, mut at: usize) -> usize {
        while let Some((byte, next)) = self.peek(at) {
            match byte {
                b'e' | b'E' | b'p' | b'P' => {
                    at = match self.peek(next) {
                        Some((b'+' | b'-', after)) => after,
                        _ => next,
                    };
                }
                // A digit separator: `'` before a digit or letter.
                b'\'' => match self.look(next) {
                    Some(after) if is_identifier_continue(after) => at = next,
                    _ => break,
                },
                _ if is_identifier_continue(byte) || byte == b'.' => at = next,
                _ => break,
            }
        }
        at
    }

    /// Comment bytes from the `/` at `at` whose next byte (`/` or `*`) is
    /// at `second`.
    fn comment_end(&mut self, second: usize, block: bool) -> usize {
        let mut at = second + 1;
        if !block {
            while let Some((byte, next)) = self.peek(at) {
                if byte == b'\n' {
                    return at;
                }
                at = next;
            }
            return self.bytes.len();
        }
        let mut star = false;
        while let Some((byte, next)) = self.peek(at) {
            if byte == b'/' && star {
                return next;
            }
            star = byte == b'*';
            at = next;
        }
        self.bytes.len()
    }

    /// The kind and end of the token at `at`, whose first byte (after
    /// splices) is `byte` and whose second starts at `next`.
    fn token_at(&mut self, at: usize, byte: u8, next: usize) -> (TokenKind, usize) {
        let header = matches!(
            self.header,
            HeaderState::Include | HeaderState::HasIncludeParen
        );
        match byte {
            b'<' | b'"' if header => {
                let quote = if byte == b'<' { b'>' } else { b'"' };
                let end = self.quoted_end(at, quote, false);
                let closed = end > at + 1 && self.bytes.get(end - 1) == Some(&quote);
                match closed {
                    true => (TokenKind::HeaderName, end),
                    // `#include <a` is no header name: a `<` alone.
                    false if byte == b'<' => (TokenKind::Punctuator, next),
                    false => (TokenKind::String, end),
                }
            }
            b'/' if matches!(self.look(next), Some(b'/' | b'*')) => {
                let second = self.skip_splices(next);
                let block = self.bytes[second] == b'*';
                (TokenKind::Comment, self.comment_end(second, block))
            }
            b'"' => {
                let end = self.quoted_end(at, b'"', true);
                (TokenKind::String, self.suffix_end(end))
            }
            b'\'' => {
                let end = self.quoted_end(at, b'\'', true);
                (TokenKind::Character, self.suffix_end(end))
            }
            b'0'..=b'9' => (TokenKind::Number, self.number_end(next)),
            b'.' if self.look(next).is_some_and(|b| b.is_ascii_digit()) => {
                (TokenKind::Number, self.number_end(next))
            }
            b'%' if self.look(next) == Some(b':') => {
                let colon = self.skip_splices(next);
                (TokenKind::Punctuator, colon + 1)
            }
            _ if is_identifier_start(byte) => {
                let end = self.identifier_end(next);
                self.literal_after_prefix(at, end)
                    .unwrap_or((TokenKind::Identifier, end))
            }
            _ => (TokenKind::Punctuator, next),
        }
    }

    /// A literal whose encoding prefix is the identifier `at..end`
    /// (`u8`, `L`, `R`, `u8R`, ...), when a quote follows it.
    fn literal_after_prefix(&mut self, at: usize, end: usize) -> Option<(TokenKind, usize)> {
        let quote = self.skip_splices(end);
        let opening = *self.bytes.get(quote)?;
        if !matches!(opening, b'"' | b'\'') {
            return None;
        }
        let prefix = Token {
            kind: TokenKind::Identifier,
            text: &self.text[at..end],
            offset: at,
            line: 0,
            starts_line: false,
        };
        let prefix = prefix.spliced();
        let raw = matches!(&*prefix, "R" | "u8R" | "uR" | "UR" | "LR");
        let plain = matches!(&*prefix, "u8" | "u" | "U" | "L");
        match (raw, plain, opening) {
            (true, _, b'"') => {
                let end = self.raw_string_end(quote)?;
                Some((TokenKind::RawString, self.suffix_end(end)))
            }
            (_, true, b'"') => {
                let end = self.quoted_end(quote, b'"', true);
                Some((TokenKind::String, self.suffix_end(end)))
            }
            (_, true, b'\'') => {
                let end = self.quoted_end(quote, b'\'', true);
                Some((TokenKind::Character, self.suffix_end(end)))
            }
            _ => None,
        }
    }

    /// What a header name may follow, after `token`.
    fn next_header_state(&self, token: &Token<'_>) -> HeaderState {
        if token.kind == TokenKind::Comment {
            return self.header;
        }
        if token.is_directive_start() {
            return HeaderState::Hash;
        }
        let word = || token.spliced();
        match (self.header, token.kind) {
            (HeaderState::Hash, TokenKind::Identifier)
                if !token.starts_line
                    && matches!(&*word(), "include" | "include_next" | "import" | "embed") =>
            {
                HeaderState::Include
            }
            (HeaderState::HasInclude, TokenKind::Punctuator) if token.text == "(" => {
                HeaderState::HasIncludeParen
            }
            (_, TokenKind::Identifier)
                if matches!(
                    &*word(),
                    "__has_include" | "__has_include_next" | "__has_embed"
                ) =>
            {
                HeaderState::HasInclude
            }
            _ => HeaderState::None,
        }
    }
}

impl<'a> Iterator for Tokens<'a> {
    type Item = Token<'a>;

    fn next(&mut self) -> Option<Token<'a>> {
        loop {
            let at = self.skip_splices(self.at);
            let &byte = self.bytes.get(at)?;
            match byte {
                b'\n' => {
                    self.starts_line = true;
                    self.in_directive = false;
                    self.header = HeaderState::None;
                    self.at = at + 1;
                }
                b' ' | b'\t' | b'\r' | b'\x0b' | b'\x0c' => self.at = at + 1,
                _ => {
                    let line = self.line_of(at);
                    let (kind, end) = self.token_at(at, byte, at + 1);
                    // Every end is at an ASCII byte or the text's end.
                    let end = end.clamp(at + 1, self.bytes.len());
                    let token = Token {
                        kind,
                        text: &self.text[at..end],
                        offset: at,
                        line,
                        starts_line: self.starts_line && kind != TokenKind::Comment,
                    };
                    if kind != TokenKind::Comment {
                        self.starts_line = false;
                    }
                    self.in_directive |= token.is_directive_start();
                    self.header = self.next_header_state(&token);
                    self.at = end;
                    return Some(token);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<(TokenKind, &str)> {
        tokens(text).map(|t| (t.kind, t.text)).collect()
    }

    #[test]
    fn literals_comments_and_numbers() {
        use TokenKind::*;
        assert_eq!(
            kinds("a = \"/*\"; // x\nb = '\\''; /* y */ 1'000;"),
            [
                (Identifier, "a"),
                (Punctuator, "="),
                (String, "\"/*\""),
                (Punctuator, ";"),
                (Comment, "// x"),
                (Identifier, "b"),
                (Punctuator, "="),
                (Character, "'\\''"),
                (Punctuator, ";"),
                (Comment, "/* y */"),
                (Number, "1'000"),
                (Punctuator, ";"),
            ]
        );
        assert_eq!(
            kinds("0x1p-3f 1e+5 .5"),
            [(Number, "0x1p-3f"), (Number, "1e+5"), (Number, ".5")]
        );
    }

    /// A raw string's prefix counts only where it starts a token: an
    /// identifier ending in `R` before a string is an identifier, then a
    /// string.
    #[test]
    fn raw_strings_only_where_their_prefix_starts_a_token() {
        use TokenKind::*;
        assert_eq!(
            kinds("FOOR\"(\" S(x)\"/*\""),
            [
                (Identifier, "FOOR"),
                (String, "\"(\""),
                (Identifier, "S"),
                (Punctuator, "("),
                (Identifier, "x"),
                (Punctuator, ")"),
                (String, "\"/*\""),
            ]
        );
        for prefix in ["R", "u8R", "uR", "UR", "LR"] {
            let text = format!("{prefix}\"x(a \" */ )\" b)x\" c");
            let found = kinds(&text);
            assert_eq!(found[0].0, RawString, "{text}");
            assert_eq!(found[1], (Identifier, "c"), "{text}");
        }
        // A suffix belongs to its literal: `"a"R` then a plain string.
        assert_eq!(
            kinds("\"a\"R\"(b)\""),
            [(String, "\"a\"R"), (String, "\"(b)\"")]
        );
    }

    #[test]
    fn splices_join_lines_but_not_inside_raw_strings() {
        let found: Vec<_> = tokens("#inc\\\nlude <a.h>\nR\"(x\\\n)\" y")
            .map(|t| (t.kind, t.spliced().into_owned(), t.line))
            .collect();
        assert_eq!(
            found,
            [
                (TokenKind::Punctuator, "#".to_owned(), 1),
                (TokenKind::Identifier, "include".to_owned(), 1),
                (TokenKind::HeaderName, "<a.h>".to_owned(), 2),
                (TokenKind::RawString, "R\"(x\\\n)\"".to_owned(), 3),
                (TokenKind::Identifier, "y".to_owned(), 4),
            ]
        );
        // A `//` comment goes on over a splice.
        assert_eq!(
            kinds("// a \\\n#include <b.h>\nc")
                .iter()
                .map(|t| t.0)
                .collect::<Vec<_>>(),
            [TokenKind::Comment, TokenKind::Identifier]
        );
    }

    #[test]
    fn header_names_and_line_starts() {
        let found: Vec<_> = tokens("/* c */ # /* d */ include <a//b.h>\nint x; #include \"n.h\"\n")
            .filter(|t| t.kind != TokenKind::Comment)
            .map(|t| (t.kind, t.text, t.starts_line))
            .collect();
        assert_eq!(found[0], (TokenKind::Punctuator, "#", true));
        assert_eq!(found[2], (TokenKind::HeaderName, "<a//b.h>", false));
        // After code on its line, `#` starts nothing: `"n.h"` is a string.
        assert!(found.contains(&(TokenKind::String, "\"n.h\"", false)));
        let has: Vec<_> = tokens("#if __has_include(<x//y.h>)")
            .map(|t| t.kind)
            .collect();
        assert!(has.contains(&TokenKind::HeaderName));
    }

    #[test]
    fn a_backslash_before_spaces_is_noted() {
        let mut found = tokens("// c \\  \n#include <a.h>\n");
        assert_eq!(found.by_ref().count(), 4);
        assert_eq!(found.spaced_splice(), Some(1));
        let mut none = tokens("// c \\\n#include <a.h>\n");
        let _ = none.by_ref().count();
        assert_eq!(none.spaced_splice(), None);
    }

    /// Unterminated literals end at their line; an unterminated comment
    /// or raw string at the end; non-ASCII bytes sit inside tokens.
    #[test]
    fn unterminated_and_non_ascii() {
        use TokenKind::*;
        assert_eq!(
            kinds("don't\n#x"),
            [
                (Identifier, "don"),
                (Character, "'t"),
                (Punctuator, "#"),
                (Identifier, "x")
            ]
        );
        assert_eq!(kinds("/* é"), [(Comment, "/* é")]);
        assert_eq!(kinds("R\"(é"), [(RawString, "R\"(é")]);
        assert_eq!(
            kinds("é_x+1"),
            [(Identifier, "é_x"), (Punctuator, "+"), (Number, "1")]
        );
        assert_eq!(kinds("\u{feff}a"), [(Identifier, "a")]);
    }
}

#[cfg(test)]
mod properties {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// On any text, the tokens come in order without overlapping, each
        /// on its own line as counted from the text, and what lies between
        /// them is whitespace and splices.
        #[test]
        fn tokens_tile_any_text(
            text in "([a-zR8uLU_é0-9'\"/*#<>(){}; .\\\\\n\t]|u8R\"|R\"x\\(|\\)x\"|\\\\\n){0,200}"
        ) {
            let mut end = 0;
            for token in tokens(&text) {
                prop_assert!(token.offset >= end);
                let gap = &text[end..token.offset];
                prop_assert!(
                    gap.trim_start_matches('\u{feff}')
                        .replace("\\\n", "")
                        .replace("\\\r\n", "")
                        .chars()
                        .all(char::is_whitespace),
                    "{:?}", gap
                );
                prop_assert!(!token.text.is_empty());
                prop_assert_eq!(token.line, 1 + text[..token.offset].matches('\n').count());
                end = token.offset + token.text.len();
            }
        }
    }
}
