//! Make rules of what a compile reads, as nvcc's `-M`, `-MD`, `-MF`,
//! `-MT` and `-MP` write them.

use std::path::{Path, PathBuf};

use crate::Failure;
use crate::say;

/// How the rules are written: nvcc's `-MT` and `-MP`.
#[derive(Clone, Copy, Default)]
pub(crate) struct RuleStyle<'a> {
    /// The rule's target as given (`-MT`), instead of the output's name.
    pub(crate) target: Option<&'a str>,
    /// A rule without prerequisites for each header (`-MP`), so that make
    /// does not stop when a header is deleted.
    pub(crate) phony_headers: bool,
}

/// `target: source headers...` for `output`, in make's syntax; `files`
/// is the source, then the headers it reads.
pub(crate) fn make_rule(style: RuleStyle, output: &Path, files: &[PathBuf]) -> String {
    let mut text = match style.target {
        Some(target) => format!("{target}:"),
        None => format!("{}:", make_escape(output)),
    };
    for file in files {
        text.push_str(" \\\n  ");
        text.push_str(&make_escape(file));
    }
    text.push('\n');
    if style.phony_headers {
        for header in files.iter().skip(1) {
            text.push_str(&format!("\n{}:\n", make_escape(header)));
        }
    }
    text
}

/// `-M`: the rule into `file` (`--MF`'s, else `-o`'s, as nvcc's `-M -o`),
/// else on standard output.
pub(crate) fn emit_rule(file: Option<&Path>, rule: &str) -> Result<(), Failure> {
    match file {
        Some(file) => crate::output::write(file, rule.as_bytes()),
        None => {
            let _ = say::out(rule.trim_end());
            Ok(())
        }
    }
}

/// `-MD`'s file for `output`: `--MF`'s, else `output.d` beside it.
pub(crate) fn depfile_of(output: &Path, named: Option<&Path>) -> PathBuf {
    named.map_or_else(
        || {
            let mut name = output.as_os_str().to_owned();
            name.push(".d");
            PathBuf::from(name)
        },
        Path::to_path_buf,
    )
}

/// A path as make reads it: spaces and `#` escaped, `$` doubled.
pub(crate) fn make_escape(path: &Path) -> String {
    let mut escaped = String::new();
    for c in path.display().to_string().chars() {
        match c {
            ' ' => escaped.push_str("\\ "),
            '#' => escaped.push_str("\\#"),
            '$' => escaped.push_str("$$"),
            c => escaped.push(c),
        }
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_phony_headers_and_escapes() {
        let files = [PathBuf::from("k.cu"), PathBuf::from("my dir/a$b#.cuh")];
        let plain = make_rule(RuleStyle::default(), Path::new("k.cubin"), &files);
        assert_eq!(plain, "k.cubin: \\\n  k.cu \\\n  my\\ dir/a$$b\\#.cuh\n");
        let style = RuleStyle {
            target: Some("obj/k.o"),
            phony_headers: true,
        };
        assert_eq!(
            make_rule(style, Path::new("k.cubin"), &files),
            "obj/k.o: \\\n  k.cu \\\n  my\\ dir/a$$b\\#.cuh\n\nmy\\ dir/a$$b\\#.cuh:\n"
        );
        assert_eq!(
            depfile_of(Path::new("k.cubin"), None),
            Path::new("k.cubin.d")
        );
        assert_eq!(
            depfile_of(Path::new("k.cubin"), Some(Path::new("x.d"))),
            Path::new("x.d")
        );
    }
}
