//! PTX tokens: identifiers and directives, and single punctuation
//! characters; whitespace, comments and string literals are skipped.
//! [`Tokens`] reads text in memory; [`StreamTokens`] reads the same tokens
//! from a reader in chunks, holding a chunk and the current token, so a
//! decompressed gigabyte is never held whole.

use std::io::Read;

use crate::error::Reason;

/// The longest word token either reader accepts: far above any real
/// identifier (a heavily templated mangled name is a few KiB), and the
/// bound on what a streamed read holds besides its chunk.
pub(crate) const MAX_WORD: usize = 1 << 20;

/// The refusal of a word token over [`MAX_WORD`].
pub(crate) fn word_too_long() -> Reason {
    Reason::Malformed {
        what: "PTX text",
        detail: format!("a token is longer than {MAX_WORD} bytes"),
    }
}

/// Tokens of text in memory.
pub(crate) struct Tokens<'a> {
    source: &'a str,
    at: usize,
    max_word: usize,
    /// Set when a word over `max_word` ended the tokens.
    pub(crate) too_long: bool,
}

impl<'a> Tokens<'a> {
    /// Every token, however long.
    pub(crate) fn new(source: &'a str) -> Self {
        Tokens {
            source,
            at: 0,
            max_word: usize::MAX,
            too_long: false,
        }
    }

    /// Tokens up to the first word over [`MAX_WORD`], where they end with
    /// `too_long` set.
    pub(crate) fn capped(source: &'a str) -> Self {
        Tokens {
            max_word: MAX_WORD,
            ..Tokens::new(source)
        }
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
                self.at += memchr::memchr(b'\n', rest).unwrap_or(rest.len());
            } else if rest.starts_with(b"/*") {
                let end = memchr::memmem::find(&rest[2..], b"*/");
                self.at = end.map_or(bytes.len(), |end| self.at + 2 + end + 2);
            } else if b == b'"' {
                let mut i = self.at + 1;
                while i < bytes.len() && bytes[i] != b'"' && bytes[i] != b'\n' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                self.at = (i + 1).min(bytes.len());
            } else if is_word_byte(b) {
                let start = self.at;
                let len = rest
                    .iter()
                    .position(|&c| !is_word_byte(c))
                    .unwrap_or(rest.len());
                if len > self.max_word {
                    self.too_long = true;
                    self.at = bytes.len();
                    return None;
                }
                self.at += len;
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

pub(crate) fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$' | b'%' | b'.')
}

/// Where the stream's tokenizer is between two bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Plain,
    /// After a `/` whose next byte is not read yet.
    Slash,
    LineComment,
    /// Inside `/* */`; `star` when the last byte was `*`.
    BlockComment {
        star: bool,
    },
    /// Inside `"..."`; `escaped` when the last byte was an unescaped `\`.
    String {
        escaped: bool,
    },
    Word,
}

/// How a streamed read ended early.
#[derive(Debug)]
pub(crate) enum StreamError {
    /// The reader failed: a decoding error, or a size other than declared.
    Read(std::io::Error),
    /// The text failed as [`text`](super::text) or [`MAX_WORD`] would fail it.
    Text(Reason),
}

/// What one read from the reader holds at most.
const CHUNK: usize = 64 << 10;

/// The tokens [`Tokens::capped`] gives on the output of
/// [`text`](super::text), read from `reader` a chunk at a time: trailing
/// NULs dropped, a leading BOM skipped, UTF-8 checked as it arrives. A
/// failure ends the tokens; [`finish`](Self::finish) returns it.
pub(crate) struct StreamTokens<R> {
    reader: R,
    /// What one read fills.
    raw: Box<[u8]>,
    /// Checked UTF-8 not yet tokenized, from `at`.
    chunk: Vec<u8>,
    at: usize,
    /// A UTF-8 sequence cut by the end of the last read.
    partial: Vec<u8>,
    /// Bytes of text taken into `chunk` so far (after the BOM).
    taken: usize,
    /// Whether the start was looked at for a BOM.
    started: bool,
    state: State,
    word: String,
    /// NULs seen in plain text: tokens if text follows, padding if not.
    nuls: u64,
    eof: bool,
    error: Option<StreamError>,
}

impl<R: Read> StreamTokens<R> {
    pub(crate) fn new(reader: R) -> Self {
        StreamTokens {
            reader,
            raw: vec![0; CHUNK].into_boxed_slice(),
            chunk: Vec::with_capacity(CHUNK + 4),
            at: 0,
            partial: Vec::new(),
            taken: 0,
            started: false,
            state: State::Plain,
            word: String::new(),
            nuls: 0,
            eof: false,
            error: None,
        }
    }

    /// Reads the rest of the input, still checking it is text unless a
    /// failure of the text came first, and returns the first failure: the
    /// reader's before the text's, as decoding comes before reading text.
    pub(crate) fn finish(mut self) -> Option<StreamError> {
        while !self.eof && self.error_is_not_read() {
            self.chunk.clear();
            self.at = 0;
            if self.checks_text() {
                self.fill();
            } else {
                self.read_raw();
            }
        }
        self.error
    }

    /// Sets the error unless one of higher rank is set: the reader's, then
    /// a text that is not UTF-8, then a word too long.
    fn fail(&mut self, error: StreamError) {
        let rank = |e: &StreamError| match e {
            StreamError::Read(_) => 0,
            StreamError::Text(Reason::PtxNotText(_)) => 1,
            StreamError::Text(_) => 2,
        };
        if self
            .error
            .as_ref()
            .is_none_or(|old| rank(&error) < rank(old))
        {
            self.error = Some(error);
        }
    }

    /// Whether what is read is still checked as UTF-8: until the reader
    /// fails or the text is found not to be UTF-8.
    fn checks_text(&self) -> bool {
        !matches!(
            self.error,
            Some(StreamError::Read(_) | StreamError::Text(Reason::PtxNotText(_)))
        )
    }

    /// Appends raw bytes to `chunk`, unchecked; `eof` at the end.
    fn read_raw(&mut self) {
        let read = loop {
            match self.reader.read(&mut self.raw[..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.fail(StreamError::Read(e));
                    break 0;
                }
            }
        };
        self.chunk.extend_from_slice(&self.raw[..read]);
        self.eof |= read == 0 && self.error_is_not_read();
    }

    fn error_is_not_read(&self) -> bool {
        !matches!(self.error, Some(StreamError::Read(_)))
    }

    /// Replaces the consumed part of `chunk` with the next checked text,
    /// ending on a character boundary; false when there is none (the end,
    /// or a failure).
    fn fill(&mut self) -> bool {
        self.chunk.drain(..self.at);
        self.at = 0;
        while self.chunk.is_empty() && !self.eof && self.checks_text() {
            self.chunk.append(&mut self.partial);
            self.read_raw();
            if !self.started {
                if self.chunk.len() < 3 && !self.eof {
                    // Too short to tell a BOM: read on before deciding.
                    self.partial = std::mem::take(&mut self.chunk);
                    continue;
                }
                self.started = true;
                if self.chunk.starts_with(b"\xEF\xBB\xBF") {
                    self.chunk.drain(..3);
                }
            }
            match std::str::from_utf8(&self.chunk) {
                Ok(_) => {}
                Err(e) if e.error_len().is_none() && !self.eof => {
                    // Cut inside a sequence: its start waits for the next read.
                    self.partial = self.chunk.split_off(e.valid_up_to());
                }
                Err(e) => {
                    let at = self.taken + e.valid_up_to();
                    self.fail(StreamError::Text(Reason::PtxNotText(at)));
                    self.chunk.clear();
                }
            }
            self.taken += self.chunk.len();
        }
        self.at < self.chunk.len() && self.error.is_none()
    }

    /// The next byte, reading on when the chunk is used up.
    fn peek(&mut self) -> Option<u8> {
        if self.at == self.chunk.len() && !self.fill() {
            return None;
        }
        Some(self.chunk[self.at])
    }

    /// The word taken so far, ended.
    fn end_word(&mut self) -> String {
        self.state = State::Plain;
        std::mem::take(&mut self.word)
    }

    /// One `\0` token of those held, when text follows them.
    fn held_nul(&mut self) -> Option<String> {
        self.nuls -= 1;
        Some("\0".to_owned())
    }
}

impl<R: Read> Iterator for StreamTokens<R> {
    type Item = String;

    fn next(&mut self) -> Option<String> {
        if self.error.is_some() {
            return None;
        }
        loop {
            let Some(b) = self.peek() else {
                // The end (or a failure): a word ends, a `/` is a token,
                // NULs are padding.
                return match self.state {
                    State::Word if self.error.is_none() => Some(self.end_word()),
                    State::Slash if self.error.is_none() => {
                        self.state = State::Plain;
                        Some("/".to_owned())
                    }
                    _ => None,
                };
            };
            match self.state {
                State::Plain if b == 0 => {
                    self.nuls += 1;
                    self.at += 1;
                }
                State::Plain if self.nuls > 0 => return self.held_nul(),
                State::Plain if b.is_ascii_whitespace() => self.at += 1,
                State::Plain if b == b'/' => {
                    self.state = State::Slash;
                    self.at += 1;
                }
                State::Plain if b == b'"' => {
                    self.state = State::String { escaped: false };
                    self.at += 1;
                }
                State::Plain if is_word_byte(b) => self.state = State::Word,
                State::Plain => {
                    // One character: the chunk ends on a character boundary.
                    let rest = &self.chunk[self.at..];
                    let len = match b {
                        0xF0.. => 4,
                        0xE0.. => 3,
                        0xC0.. => 2,
                        _ => 1,
                    }
                    .min(rest.len());
                    self.at += len;
                    return Some(String::from_utf8_lossy(&rest[..len]).into_owned());
                }
                State::Slash => match b {
                    b'/' => {
                        self.state = State::LineComment;
                        self.at += 1;
                    }
                    b'*' => {
                        self.state = State::BlockComment { star: false };
                        self.at += 1;
                    }
                    _ => {
                        self.state = State::Plain;
                        return Some("/".to_owned());
                    }
                },
                State::LineComment => {
                    // Up to the newline, which plain text then skips.
                    let rest = &self.chunk[self.at..];
                    match memchr::memchr(b'\n', rest) {
                        Some(i) => {
                            self.at += i;
                            self.state = State::Plain;
                        }
                        None => self.at = self.chunk.len(),
                    }
                }
                State::BlockComment { star } => {
                    if star && b == b'/' {
                        self.state = State::Plain;
                        self.at += 1;
                        continue;
                    }
                    let rest = &self.chunk[self.at..];
                    if b == b'*' {
                        self.state = State::BlockComment { star: true };
                        self.at += 1;
                    } else {
                        // Up to the next `*`.
                        let skip = memchr::memchr(b'*', rest).unwrap_or(rest.len());
                        self.at += skip;
                        self.state = State::BlockComment { star: false };
                    }
                }
                State::String { escaped: false } if !matches!(b, b'\\' | b'"' | b'\n') => {
                    // Up to the next byte that escapes or ends the string.
                    let rest = &self.chunk[self.at..];
                    self.at += memchr::memchr3(b'\\', b'"', b'\n', rest).unwrap_or(rest.len());
                }
                State::String { escaped } => {
                    self.at += 1;
                    self.state = match b {
                        _ if escaped => State::String { escaped: false },
                        b'\\' => State::String { escaped: true },
                        b'"' | b'\n' => State::Plain,
                        _ => State::String { escaped: false },
                    };
                }
                State::Word => {
                    let rest = &self.chunk[self.at..];
                    let len = rest
                        .iter()
                        .position(|&c| !is_word_byte(c))
                        .unwrap_or(rest.len());
                    if self.word.len() + len > MAX_WORD {
                        self.fail(StreamError::Text(word_too_long()));
                        return None;
                    }
                    // Word bytes are ASCII.
                    self.word
                        .push_str(std::str::from_utf8(&rest[..len]).unwrap_or_default());
                    self.at += len;
                    if self.at < self.chunk.len() {
                        return Some(self.end_word());
                    }
                }
            }
        }
    }
}
