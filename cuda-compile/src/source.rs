//! The one reader of CUDA C++ source: what the include scan, the
//! host-code verdict, cuda-build's whole-CUB check and its kernel names
//! read of a file, all from [`tokens`], so that no two of them can read
//! one file two ways.

use std::borrow::Cow;

pub use crate::lex::{Token, TokenKind, Tokens, tokens};

/// One `#include` (or `#include_next`, or `__has_include` test, whose
/// answer is what the include's lookup finds) of a text.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Include {
    /// The header's name as written between the brackets or quotes.
    pub name: String,
    /// `"name"`: looked for beside the including file first.
    pub quoted: bool,
    /// The line, from 1.
    pub line: usize,
}

/// Every include of `text`, in order, or what the scan cannot follow:
/// an `#include` of a macro, `#import`, `#embed`, `__has_embed`, a
/// `__has_include` of a macro, a directive spelt with a trigraph, the
/// macros that change with the clock (`__TIME__`, `__DATE__`,
/// `__TIMESTAMP__`), and a `\` followed by spaces at a line's end, which
/// nvcc's preprocessor (gcc) joins to the next line and NVRTC does not.
/// An include inside `#if 0` counts: the scan is conservative.
///
/// ```
/// let text = "/* c */ #include <a.h>\n#if __has_include(\"b.h\")\n#endif\n";
/// let found = cuda_compile::source::includes(text).unwrap();
/// assert_eq!(found.iter().map(|i| i.name.as_str()).collect::<Vec<_>>(), ["a.h", "b.h"]);
/// assert!(cuda_compile::source::includes("#include HEADER\n").is_err());
/// ```
///
/// # Errors
/// What cannot be followed, and its line.
pub fn includes(text: &str) -> Result<Vec<Include>, String> {
    let mut found = Vec::new();
    let mut tokens = tokens(text);
    let mut significant = tokens
        .by_ref()
        .filter(|t| t.kind != TokenKind::Comment)
        .peekable();
    let mut previous: Option<Token<'_>> = None;
    while let Some(token) = significant.next() {
        let at = |what: &str| {
            format!(
                "line {}: {what} is something the scan cannot follow",
                token.line
            )
        };
        match token.kind {
            TokenKind::Identifier => match &*token.spliced() {
                word @ ("__has_embed" | "__TIME__" | "__DATE__" | "__TIMESTAMP__") => {
                    return Err(at(&format!("`{word}`")));
                }
                "__has_include" | "__has_include_next" => {
                    // `defined(__has_include)`, `#ifdef __has_include`: no
                    // lookup.
                    let Some(open) = significant.next() else {
                        break;
                    };
                    if open.text != "(" || open.starts_line {
                        previous = Some(open);
                        continue;
                    }
                    let name = significant.next();
                    let close = significant.next();
                    match (name, close) {
                        (Some(name), Some(close))
                            if name.kind == TokenKind::HeaderName && close.text == ")" =>
                        {
                            found.push(include(&name));
                        }
                        _ => return Err(at("a `__has_include` of something other than a name")),
                    }
                }
                _ => {}
            },
            TokenKind::Punctuator
                if token.starts_line && text[token.offset..].starts_with("??=") =>
            {
                return Err(at("a directive spelt with a trigraph"));
            }
            _ => {}
        }
        if previous.is_some_and(|p| p.is_directive_start())
            && token.kind == TokenKind::Identifier
            && !token.starts_line
        {
            match &*token.spliced() {
                "include" | "include_next" => match significant.next() {
                    Some(name) if name.kind == TokenKind::HeaderName && !name.starts_line => {
                        // gcc lexes what follows without escapes, NVRTC
                        // with them: the lines after may be read two ways.
                        if significant.peek().is_some_and(|next| !next.starts_line) {
                            return Err(at("a token after an `#include`'s name"));
                        }
                        found.push(include(&name));
                    }
                    other => {
                        let shown = other.map_or(Cow::Borrowed(""), |t| t.spliced());
                        return Err(at(&format!("`#include {shown}`")));
                    }
                },
                directive @ ("import" | "embed") => return Err(at(&format!("`#{directive}`"))),
                _ => {}
            }
        }
        previous = Some(token);
    }
    drop(significant);
    if let Some(line) = tokens.bad_raw_string() {
        return Err(format!(
            "line {line}: a raw string with an invalid delimiter, which compilers recover from \
             each their own way; something the scan cannot follow"
        ));
    }
    if let Some(line) = tokens.spaced_splice() {
        return Err(format!(
            "line {line}: a `\\` followed by spaces ends the line, which nvcc's preprocessor \
             joins to the next and NVRTC does not; something the scan cannot follow"
        ));
    }
    Ok(found)
}

/// [`includes`] for NVIDIA's headers: what cannot be followed is skipped
/// (their folders are keyed whole).
pub(crate) fn includes_lenient(text: &str) -> Vec<Include> {
    tokens(text)
        .filter(|t| t.kind == TokenKind::HeaderName)
        .map(|t| include(&t))
        .collect()
}

fn include(name: &Token<'_>) -> Include {
    let text = name.spliced();
    let quoted = text.starts_with('"');
    let inner = text
        .get(1..text.len().saturating_sub(1))
        .unwrap_or_default();
    Include {
        name: inner.to_owned(),
        quoted,
        line: name.line,
    }
}

/// Whether `text` uses a name that expands to a file's path (`__FILE__`,
/// `__builtin_FILE`, `std::source_location`, `assert`): what is compiled
/// from it then names where the file is.
pub(crate) fn names_a_file(text: &str) -> bool {
    tokens(text).any(|token| {
        token.kind == TokenKind::Identifier
            && matches!(
                &*token.spliced(),
                "__FILE__" | "__builtin_FILE" | "source_location" | "assert"
            )
    })
}

/// `text` with every comment and the inside of every literal blanked to
/// spaces, line breaks kept: every byte keeps its offset and line, and
/// what is left is code (a `{` counted, a `<<<` launch found) or a
/// directive. The literal `"C"` is kept, for `extern "C"`.
pub(crate) fn blanked(text: &str) -> String {
    let mut out = text.as_bytes().to_vec();
    let blank = |out: &mut [u8]| {
        for byte in out.iter_mut().filter(|b| !matches!(b, b'\n' | b'\r')) {
            *byte = b' ';
        }
    };
    for token in tokens(text) {
        let range = token.offset..token.offset + token.text.len();
        match token.kind {
            TokenKind::Comment => blank(&mut out[range]),
            TokenKind::String | TokenKind::Character | TokenKind::RawString => {
                if token.text == "\"C\"" {
                    continue;
                }
                let bytes = token.text.as_bytes();
                let Some(open) = bytes.iter().position(|b| matches!(b, b'"' | b'\'')) else {
                    continue;
                };
                let close = bytes
                    .iter()
                    .rposition(|&b| b == bytes[open])
                    .filter(|&close| close > open)
                    .unwrap_or(bytes.len());
                blank(&mut out[token.offset + open + 1..token.offset + close]);
            }
            _ => {}
        }
    }
    // Only ASCII bytes were written, over whole characters.
    String::from_utf8(out).unwrap_or_default()
}

/// The names of the `extern "C"` kernels `text` defines or declares
/// (`__global__` functions with C linkage, in an `extern "C"` declaration
/// or block), outside directives: what a build lists without compiling,
/// on docs.rs. A kernel inside `#if 0` is listed too.
///
/// ```
/// let text = "extern \"C\" __global__ void __launch_bounds__(256) saxpy(float a) {}\n\
///             extern \"C\" { __global__ void scale(float *y) {} }\n\
///             template <typename T> __global__ void add(T *y) {}\n";
/// assert_eq!(cuda_compile::source::extern_c_kernels(text), ["saxpy", "scale"]);
/// ```
pub fn extern_c_kernels(text: &str) -> Vec<String> {
    let code: Vec<Token<'_>> = code_tokens(text).collect();
    let mut found = Vec::new();
    // Per open brace: whether it is an `extern "C" {` block; and how many
    // of those are open.
    let mut blocks: Vec<bool> = Vec::new();
    let mut c_blocks = 0usize;
    // Whether the current declaration has said `extern "C"` so far.
    let mut c_linkage = false;
    for (at, token) in code.iter().enumerate() {
        let after_extern_c =
            at >= 2 && code[at - 2].text == "extern" && code[at - 1].text == "\"C\"";
        match token.text {
            "{" => {
                blocks.push(after_extern_c);
                c_blocks += usize::from(after_extern_c);
                c_linkage = false;
            }
            "}" => {
                c_blocks -= usize::from(blocks.pop() == Some(true));
                c_linkage = false;
            }
            ";" => c_linkage = false,
            "\"C\"" if at >= 1 && code[at - 1].text == "extern" => c_linkage = true,
            "__global__" if c_blocks > 0 || c_linkage => {
                found.extend(kernel_name(&code[at + 1..]));
            }
            _ => {}
        }
    }
    found
}

/// The names of the `__global__` functions `text` defines or declares,
/// whatever their linkage, outside directives (a kernel a macro makes is
/// not seen), each once: `scale` for `template <typename T> __global__
/// void scale(T *y)`. What a compile of the file may make kernels of.
///
/// ```
/// let text = "template <typename T> __global__ void scale(T *y) {}\n\
///             extern \"C\" __global__ void __launch_bounds__(64) add(int *p) {}\n";
/// assert_eq!(cuda_compile::source::global_functions(text), ["scale", "add"]);
/// ```
pub fn global_functions(text: &str) -> Vec<String> {
    let code: Vec<Token<'_>> = code_tokens(text).collect();
    let mut found: Vec<String> = Vec::new();
    for (at, token) in code.iter().enumerate() {
        if token.text == "__global__"
            && let Some(name) = kernel_name(&code[at + 1..])
            && !found.contains(&name)
        {
            found.push(name);
        }
    }
    found
}

/// How far past `__global__` its name is looked for, in tokens.
const NAME_WITHIN: usize = 512;

/// The tokens of `text` outside comments and directives.
fn code_tokens(text: &str) -> impl Iterator<Item = Token<'_>> {
    let mut in_directive = false;
    tokens(text).filter(move |token| {
        if token.starts_line {
            in_directive = token.is_directive_start();
        }
        token.kind != TokenKind::Comment && !in_directive
    })
}

/// The name a `__global__` declares: the identifier before its
/// parameter list, past attributes (`__launch_bounds__(256)`), within the
/// next [`NAME_WITHIN`] tokens (a return type and attributes take a few;
/// the bound keeps a text of `__global__`s and no names linear).
fn kernel_name(after: &[Token<'_>]) -> Option<String> {
    let after = &after[..after.len().min(NAME_WITHIN)];
    const ATTRIBUTES: [&str; 6] = [
        "__launch_bounds__",
        "__attribute__",
        "__declspec",
        "alignas",
        "__align__",
        "__maxnreg__",
    ];
    let mut at = 0;
    while let Some(token) = after.get(at) {
        if matches!(token.text, ";" | "{" | "}") {
            return None;
        }
        if token.text == "(" {
            let name = after.get(at.checked_sub(1)?)?;
            if name.kind != TokenKind::Identifier {
                return None;
            }
            if !ATTRIBUTES.contains(&name.text) {
                return Some(name.spliced().into_owned());
            }
            // Past the attribute's balanced parentheses.
            let mut depth = 0usize;
            while let Some(inner) = after.get(at) {
                match inner.text {
                    "(" => depth += 1,
                    ")" => depth = depth.saturating_sub(1),
                    _ => {}
                }
                at += 1;
                if depth == 0 {
                    break;
                }
            }
            continue;
        }
        at += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> Vec<(String, bool)> {
        includes(text)
            .unwrap()
            .into_iter()
            .map(|i| (i.name, i.quoted))
            .collect()
    }

    #[test]
    fn includes_are_found_in_every_spelling() {
        let text = "\u{feff}#include <a.h>\n  #  include \"b.h\"\n// #include <c.h>\n\
                    x = include;\n#include_next <d.h>\n%:include <e.h>\n";
        assert_eq!(
            names(text),
            [
                ("a.h".to_owned(), false),
                ("b.h".to_owned(), true),
                ("d.h".to_owned(), false),
                ("e.h".to_owned(), false)
            ]
        );
        let probed =
            "#if defined(__has_include) && __has_include( <a.h> )\n#include \"b.h\"\n#endif\n";
        assert_eq!(
            names(probed),
            [("a.h".to_owned(), false), ("b.h".to_owned(), true)]
        );
        assert_eq!(names("#\\\ninclude <a.h>\n"), [("a.h".to_owned(), false)]);
        for spelled in ["#/**/include <a.h>\n", "/* c */ #include <a.h>\n"] {
            assert_eq!(names(spelled), [("a.h".to_owned(), false)]);
        }
        for hidden in [
            "#include HEADER\n",
            "??=include <a.h>\n",
            "#if __has_include(HEADER)\n#endif\n",
            "#embed \"data.bin\"\n",
            "const char *when = __TIME__;\n",
            "// a \\ \n#include <a.h>\n",
            "R\"*/\"x\n#include \"a.h\"\n",
            "#include \"h.h\" \"a\\\"/*\"\n#include \"x.h\"\n",
        ] {
            assert!(includes(hidden).is_err(), "{hidden:?}");
        }
    }

    /// The cases that once served stale compiles: an identifier ending in
    /// `R` before a string, a comment opened after code, literals that
    /// hold comment openers.
    #[test]
    fn what_hid_an_include_hides_none() {
        let text = "#define S(x) x\nint FOOR = 0;\nconst char *a = FOOR\"(\";\n\
                    const char *b = S(x)\"/*\";\n#include \"hidden.h\"\n// */\n";
        assert_eq!(names(text), [("hidden.h".to_owned(), true)]);
        assert_eq!(
            names("const char *s = \"/*\";\n#include \"s.h\"\n// */\n"),
            [("s.h".to_owned(), true)]
        );
        assert_eq!(
            names("auto r = R\"x(/* )\" */)x\";\n#include \"r.h\"\n"),
            [("r.h".to_owned(), true)]
        );
        assert_eq!(
            names("int n = 1'000; char c = '\"';\n#include \"c.h\"\n"),
            [("c.h".to_owned(), true)]
        );
        // An include inside a raw string is text, and one after code on
        // its line is no directive.
        assert!(names("auto r = R\"(\n#include \"no.h\"\n)\";\n").is_empty());
        assert!(names("int a; /* x\n */ #include \"n.h\"\n").is_empty());
        assert!(names("/* open\n#include \"hidden.h\"\n").is_empty());
    }

    #[test]
    fn blanked_keeps_offsets_lines_and_c_linkage() {
        let text = "extern \"C\" void f() { g(\"{<<<\"); } // }\nchar c = '{'; /* é\n */ int x;\n";
        let blank = blanked(text);
        assert_eq!(blank.len(), text.len());
        assert_eq!(blank.lines().count(), text.lines().count());
        assert!(blank.starts_with("extern \"C\" void f() { g(\"    \"); }     \n"));
        assert!(!blank.contains('{') || blank.matches('{').count() == 1);
        assert!(blank.ends_with(" int x;\n"));
    }

    /// Hostile text stays linear: `__global__`s with no names, no
    /// terminators, one long declaration.
    #[test]
    fn hostile_text_reads_in_linear_time() {
        let text = "extern \"C\" ".to_owned() + &"__global__ void ".repeat(20_000);
        let started = std::time::Instant::now();
        assert!(extern_c_kernels(&text).is_empty());
        assert!(global_functions(&text).is_empty());
        let _ = includes(&text);
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn extern_c_kernels_are_found_by_their_tokens() {
        let source = "extern \"C\" __global__ void saxpy(float a) {}\n\
                      extern \"C\"\n__global__ void\nblock_sum (const float *x) {}\n\
                      template <typename T> __global__ void scale(T *y) {}\n\
                      #define K extern \"C\" __global__ void macro_made(int *p)\n\
                      // extern \"C\" __global__ void commented(int *p)\n";
        assert_eq!(extern_c_kernels(source), ["saxpy", "block_sum"]);
        // A non-ASCII comment just before `__global__` (a slice of the text
        // 64 bytes back once split a character).
        let source = format!(
            "extern \"C\" /*{}*/ __global__ void k() {{}}\n",
            "é".repeat(40)
        );
        assert_eq!(extern_c_kernels(&source), ["k"]);
    }
}
