//! The macros of a file as the host-code verdict reads them: which ones
//! expand to host code (a launcher, a launch, a runtime call), which ones
//! stand for `__global__` or `__device__`, and which names are macros at
//! all, as `#define` and `#undef` leave them at each line.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// What a macro expands to, as far as the verdict goes. The construct is
/// shared along a chain of macros, not copied.
#[derive(Clone)]
pub(crate) enum Expansion {
    /// A host function (its `#define` line, the construct).
    HostFunction(usize, Rc<str>),
    /// A launch or a host runtime call (the construct).
    HostConstruct(Rc<str>),
}

/// One `#define`, its continuation lines joined.
pub(crate) struct Define<'a> {
    pub(crate) name: &'a str,
    /// `NAME(...)`: expanded only where a `(` follows the name.
    pub(crate) function_like: bool,
    /// The replacement text, a line per line of the directive, without
    /// the `\`s, so that what it holds keeps its line numbers.
    pub(crate) body: String,
}

/// The `#define` on lines `first..=last` (indexes into `raw`), if those
/// lines are one.
pub(crate) fn parse_define<'a>(raw: &[&'a str], first: usize, last: usize) -> Option<Define<'a>> {
    let rest = directive(raw.get(first)?)?.strip_prefix("define")?;
    if !rest.starts_with([' ', '\t']) {
        return None;
    }
    let (name, mut after) = leading_name(rest.trim_start())?;
    let function_like = after.starts_with('(');
    if function_like {
        after = after.find(')').map_or("", |close| &after[close + 1..]);
    }
    let mut body = String::new();
    for line in std::iter::once(after).chain(raw.get(first + 1..=last)?.iter().copied()) {
        let line = line.trim_end();
        body.push_str(line.strip_suffix('\\').unwrap_or(line));
        body.push('\n');
    }
    Some(Define {
        name,
        function_like,
        body,
    })
}

/// The name of an `#undef` line.
pub(crate) fn undefined_name(line: &str) -> Option<&str> {
    let rest = directive(line)?.strip_prefix("undef")?;
    leading_name(rest.trim_start()).map(|(name, _)| name)
}

/// Whether a directive line only chooses lines (`#if`, `#else`, ...): it
/// may stand inside a signature.
pub(crate) fn is_conditional(line: &str) -> bool {
    directive(line).is_some_and(|rest| {
        let word = rest
            .split(|c: char| !c.is_ascii_alphabetic())
            .next()
            .unwrap_or_default();
        matches!(
            word,
            "if" | "ifdef" | "ifndef" | "elif" | "elifdef" | "elifndef" | "else" | "endif"
        )
    })
}

/// The text after a directive line's `#`.
fn directive(line: &str) -> Option<&str> {
    Some(line.trim_start().strip_prefix('#')?.trim_start())
}

/// An identifier at the start of `text`, and what follows it.
fn leading_name(text: &str) -> Option<(&str, &str)> {
    let end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    let (name, after) = text.split_at(end);
    name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        .then_some((name, after))
}

/// The macros defined so far.
#[derive(Default)]
pub(crate) struct Macros<'a> {
    /// Those that expand to host code, and whether they are function-like.
    host: HashMap<&'a str, (Expansion, bool)>,
    /// Those whose body names `__global__` or `__device__`.
    device: HashSet<&'a str>,
    /// Every name defined.
    all: HashSet<&'a str>,
}

impl<'a> Macros<'a> {
    /// Records `define`, which expands to `expansion` (host code) or not,
    /// in place of an earlier definition of its name.
    pub(crate) fn define(&mut self, define: &Define<'a>, expansion: Option<Expansion>) {
        self.undefine(define.name);
        self.all.insert(define.name);
        let annotates_device =
            uses(&define.body).any(|(word, _)| word == "__global__" || word == "__device__");
        if annotates_device {
            self.device.insert(define.name);
        }
        if let Some(expansion) = expansion {
            self.host
                .insert(define.name, (expansion, define.function_like));
        }
    }

    /// Forgets `name` (`#undef`).
    pub(crate) fn undefine(&mut self, name: &str) {
        self.host.remove(name);
        self.device.remove(name);
        self.all.remove(name);
    }

    /// What `word` expands to where it is used, `called` when a `(`
    /// follows it: host code, or `None`.
    pub(crate) fn expansion(&self, word: &str, called: bool) -> Option<&Expansion> {
        let (expansion, function_like) = self.host.get(word)?;
        (called || !function_like).then_some(expansion)
    }

    /// Whether `word` is `__global__`, `__device__` or a macro that
    /// stands for one.
    pub(crate) fn is_device(&self, word: &str) -> bool {
        word == "__global__" || word == "__device__" || self.device.contains(word)
    }

    /// Whether `word` is a macro: what it stands for is not read here.
    pub(crate) fn is_macro(&self, word: &str) -> bool {
        self.all.contains(word)
    }
}

/// The identifiers of `text`, in order, each with whether a `(` follows
/// it (a function-like macro's use); numbers' suffixes are not
/// identifiers.
pub(crate) fn uses(text: &str) -> impl Iterator<Item = (&str, bool)> {
    let bytes = text.as_bytes();
    let is_word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut at = 0;
    std::iter::from_fn(move || {
        while at < bytes.len() {
            let start = at;
            if !is_word(bytes[at]) {
                at += 1;
                continue;
            }
            while at < bytes.len() && is_word(bytes[at]) {
                at += 1;
            }
            if bytes[start].is_ascii_digit() {
                continue;
            }
            let called = text[at..].trim_start().starts_with('(');
            return Some((&text[start..at], called));
        }
        None
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defines_undefines_and_uses() {
        let raw = [
            "#define LAUNCH(k, n) \\",
            "  k<<<1, n>>>()",
            "# undef LAUNCH",
            "#if X",
        ];
        let define = parse_define(&raw, 0, 1).unwrap();
        assert_eq!((define.name, define.function_like), ("LAUNCH", true));
        assert_eq!(define.body, " \n  k<<<1, n>>>()\n");
        assert_eq!(undefined_name(raw[2]), Some("LAUNCH"));
        assert!(is_conditional(raw[3]) && !is_conditional(raw[0]));
        assert!(parse_define(&["#defined X"], 0, 0).is_none());
        let found: Vec<_> = uses("run (x) + 1e5f * y2").collect();
        assert_eq!(found, [("run", true), ("x", false), ("y2", false)]);
        let mut macros = Macros::default();
        let kernel = parse_define(&["#define KERNEL __global__"], 0, 0).unwrap();
        macros.define(&kernel, None);
        assert!(macros.is_device("KERNEL") && macros.is_macro("KERNEL"));
        let launch = Expansion::HostConstruct("a launch".into());
        macros.define(&define, Some(launch));
        assert!(macros.expansion("LAUNCH", true).is_some());
        assert!(macros.expansion("LAUNCH", false).is_none());
        macros.undefine("LAUNCH");
        assert!(macros.expansion("LAUNCH", true).is_none());
    }
}
