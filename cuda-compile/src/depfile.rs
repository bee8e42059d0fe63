//! Make-style dependency files as nvcc and host compilers write them
//! (`-MD -MF`): `target: dep dep \` lines, `\ ` for a space in a name,
//! `$$` for `$`. The reverse of [`Dependencies::to_depfile`](crate::Dependencies).

/// A dependency file that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a dependency file: {0}")]
pub struct DepfileError(&'static str);

/// The prerequisites of every rule in `text`, in order, each once (the
/// targets are left out). Linear in the text's length, for any bytes.
///
/// # Errors
/// [`DepfileError`] when a rule has no `:` or the text ends inside an
/// escape.
pub fn parse_depfile(text: &str) -> Result<Vec<String>, DepfileError> {
    let mut found: Vec<String> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    // Whether the current rule's `:` has been read.
    let mut after_colon = false;
    let mut word = String::new();
    let mut chars = text.chars().peekable();
    let starts_with_colon = text.trim_start().starts_with(':');
    let mut end_word = |word: &mut String, after_colon: bool, found: &mut Vec<String>| {
        if after_colon && !word.is_empty() && seen.insert(word.clone()) {
            found.push(std::mem::take(word));
        }
        word.clear();
    };
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                // A continuation line.
                Some('\n') => end_word(&mut word, after_colon, &mut found),
                Some('\r') if chars.peek() == Some(&'\n') => {
                    chars.next();
                    end_word(&mut word, after_colon, &mut found);
                }
                Some(' ') => word.push(' '),
                Some('#') => word.push('#'),
                // A backslash in a name (Windows paths) stays.
                Some(other) => {
                    word.push('\\');
                    word.push(other);
                }
                None => return Err(DepfileError("it ends in a backslash")),
            },
            '$' if chars.peek() == Some(&'$') => {
                chars.next();
                word.push('$');
            }
            ' ' | '\t' => end_word(&mut word, after_colon, &mut found),
            '\n' | '\r' => {
                end_word(&mut word, after_colon, &mut found);
                after_colon = false;
            }
            // `target:` (a `:` inside a name, as in `C:\`, is kept: it is
            // not followed by a space or the line's end).
            ':' if !after_colon
                && matches!(chars.peek(), None | Some(' ' | '\t' | '\n' | '\r')) =>
            {
                if word.is_empty() && found.is_empty() && starts_with_colon {
                    return Err(DepfileError("a rule has no target"));
                }
                word.clear();
                after_colon = true;
            }
            c => word.push(c),
        }
    }
    end_word(&mut word, after_colon, &mut found);
    if found.is_empty() && !text.trim().is_empty() && !text.contains(':') {
        return Err(DepfileError("no rule has a `:`"));
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn nvcc_dependency_files_parse() {
        let text = "moe.o : moe.cu \\\n    /usr/include/stdc-predef.h \\\n    \
                    /opt/cuda/bin/..//include/cuda_runtime.h \\\n    my\\ dir/a$$b.h\n\n\
                    other.o: moe.cu\n";
        assert_eq!(
            parse_depfile(text).unwrap(),
            [
                "moe.cu",
                "/usr/include/stdc-predef.h",
                "/opt/cuda/bin/..//include/cuda_runtime.h",
                "my dir/a$b.h"
            ]
        );
        assert!(parse_depfile("just words\n").is_err());
        assert!(parse_depfile("a.o: b.h \\").is_err());
        assert_eq!(parse_depfile("").unwrap(), Vec::<String>::new());
        // Was quadratic: a leading-colon check for every `:`.
        let hostile = format!("{}a\n{}", " ".repeat(100_000), ":\n".repeat(100_000));
        let _ = parse_depfile(&hostile);
    }

    proptest! {
        /// Any text gives `Ok` or `Err`; names written escaped come back.
        #[test]
        fn any_text_parses_or_is_refused(text in ".{0,400}") {
            let _ = parse_depfile(&text);
        }

        #[test]
        fn written_names_come_back(names in proptest::collection::vec("[a-z/ $#._-]{1,12}", 1..8)) {
            let names: Vec<String> = names.into_iter().filter(|n| !n.trim().is_empty() && !n.ends_with(' ') && !n.starts_with(' ')).collect();
            let escaped: Vec<String> = names.iter().map(|n| n.replace('$', "$$").replace(' ', "\\ ").replace('#', "\\#")).collect();
            let text = format!("out.o: {}\n", escaped.join(" \\\n  "));
            let mut unique = Vec::new();
            for name in &names {
                if !unique.contains(name) {
                    unique.push(name.clone());
                }
            }
            prop_assert_eq!(parse_depfile(&text).unwrap(), unique);
        }
    }
}
