//! No module cycles in a crate, followed through re-exports: for every
//! `crate::`, `super::` and `self::` path in a module's source, in `use`
//! declarations and written inline in code (`crate::nvcc::INSTALL`), the
//! module that defines what it names (a `pub use` is followed to its
//! source); each such edge joins the two sibling modules under their
//! nearest common parent, and no set of siblings may reach each other in
//! a loop. Comments, doc comments and string literals name nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A crate's modules by path (`""` the root, `linker::options`), with
/// their source text.
fn modules(src: &Path) -> BTreeMap<String, String> {
    let mut found = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let relative = path.strip_prefix(src).unwrap().with_extension("");
            let mut parts: Vec<String> = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if matches!(
                parts.last().map(String::as_str),
                Some("mod" | "lib" | "main")
            ) {
                parts.pop();
            }
            let text = std::fs::read_to_string(&path).unwrap();
            found.insert(parts.join("::"), code_only(&text));
        }
    }
    // Tests may use anything: test-only items go, and test-only modules
    // (`#[cfg(test)] mod stub;`) with everything under them.
    let mut test_only = Vec::new();
    for (module, text) in found.iter_mut() {
        let (code, modules) = without_tests(text);
        *text = code;
        test_only.extend(modules.into_iter().map(|name| match module.is_empty() {
            true => name,
            false => format!("{module}::{name}"),
        }));
    }
    found.retain(|module, _| {
        !test_only
            .iter()
            .any(|test| module == test || module.starts_with(&format!("{test}::")))
    });
    found
}

/// `code` without its `#[cfg(test)]` items (a module, a `use`, a
/// statement), and the names of the test-only modules it declares.
fn without_tests(code: &str) -> (String, Vec<String>) {
    const MARK: &str = "#[cfg(test)]";
    let mut out = String::with_capacity(code.len());
    let mut modules = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find(MARK) {
        out.push_str(&rest[..at]);
        let item = &rest[at + MARK.len()..];
        // The item ends at its first `;`, or the `}` that closes its first
        // `{`, whichever comes first.
        let semicolon = item.find(';').unwrap_or(item.len());
        let brace = item.find('{').unwrap_or(item.len());
        let end = match brace < semicolon {
            true => {
                let mut depth = 0usize;
                let mut end = item.len();
                for (i, c) in item.char_indices().skip_while(|(i, _)| *i < brace) {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = i + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                end
            }
            false => {
                let declared = item[..semicolon].split_whitespace().collect::<Vec<_>>();
                if let [.., "mod", name] = declared.as_slice() {
                    modules.push((*name).to_owned());
                }
                (semicolon + 1).min(item.len())
            }
        };
        rest = &item[end..];
    }
    out.push_str(rest);
    (out, modules)
}

/// `text` without its comments and the insides of its string and
/// character literals: what names modules in code.
fn code_only(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    while at < bytes.len() {
        let rest = &text[at..];
        if rest.starts_with("//") {
            at += rest.find('\n').unwrap_or(rest.len());
        } else if rest.starts_with("/*") {
            at += rest.find("*/").map_or(rest.len(), |end| end + 2);
        } else if let Some((open, hashes)) = raw_string(rest).filter(|_| !after_word(&out)) {
            let close = format!("\"{}", "#".repeat(hashes));
            at += rest[open..]
                .find(&close)
                .map_or(rest.len(), |end| open + end + close.len());
            out.push_str("\"\"");
        } else if rest.starts_with('"') {
            // Bytes: a quote and a backslash are ASCII, whatever is between.
            let inside = rest.as_bytes();
            let mut end = 1;
            while end < inside.len() && inside[end] != b'"' {
                end += if inside[end] == b'\\' { 2 } else { 1 };
            }
            at += (end + 1).min(rest.len());
            out.push_str("\"\"");
        } else if let Some(len) = char_literal(rest).filter(|_| !after_word(&out)) {
            at += len;
            out.push_str("' '");
        } else {
            let c = rest.chars().next().unwrap_or(' ');
            out.push(c);
            at += c.len_utf8();
        }
    }
    out
}

/// A raw string (`r#"..."#`, `br"..."`) starting `text`: where its
/// contents start, and its `#`s.
fn raw_string(text: &str) -> Option<(usize, usize)> {
    let rest = text.strip_prefix('r').or_else(|| text.strip_prefix("br"))?;
    let hashes = rest.len() - rest.trim_start_matches('#').len();
    let prefix = text.len() - rest.len();
    rest[hashes..]
        .starts_with('"')
        .then_some((prefix + hashes + 1, hashes))
}

/// Whether `text` ends in an identifier character: an `r` there is no
/// raw string's.
fn after_word(text: &str) -> bool {
    text.chars()
        .next_back()
        .is_some_and(|c| c.is_alphanumeric() || c == '_')
}

/// A character literal's length (`'a'`, `'\\n'`, `'\"'`), not a lifetime.
fn char_literal(text: &str) -> Option<usize> {
    let rest = text.strip_prefix('\'')?;
    let escaped = rest.starts_with('\\');
    let inner = match escaped {
        true => rest.char_indices().nth(2).map(|(i, _)| i)?,
        false => rest.chars().next()?.len_utf8(),
    };
    let end = if escaped {
        rest[inner..].find('\'')? + inner
    } else {
        inner
    };
    (rest[end..].starts_with('\'') && end <= 12).then_some(end + 2)
}

/// The full paths a text names from `crate::`, `super::` and `self::`:
/// its `use` declarations, braces expanded (`crate::{a::B, C}` gives
/// `crate::a::B`, `crate::C`), and every such path written inline in its
/// code. Comments and strings name nothing.
fn paths(text: &str) -> Vec<String> {
    let code = code_only(text);
    let mut out = inline_paths(&code);
    out.extend(use_paths(&code));
    out
}

/// The full paths `code`'s `use` declarations name from `crate::`,
/// `super::` and `self::`, braces expanded.
fn use_paths(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("use ") {
        let line_start = rest[..at].rfind('\n').map_or(0, |i| i + 1);
        let lead = rest[line_start..at].trim();
        let statement = &rest[at + "use ".len()..];
        let end = statement.find(';').unwrap_or(statement.len());
        let is_use = matches!(lead, "" | "pub" | "pub(crate)" | "pub(super)");
        let path = statement[..end].trim();
        if is_use
            && ["crate::", "super::", "self::"]
                .iter()
                .any(|start| path.starts_with(start))
        {
            let flat: String = path.split_whitespace().collect::<Vec<_>>().join(" ");
            expand(&flat.replace(", ", ","), String::new(), &mut out);
        }
        rest = &statement[end.min(statement.len())..];
    }
    out
}

/// The `crate::`, `super::` and `self::` paths written inline: after no
/// identifier character or `::`, each read to its end.
fn inline_paths(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for start in ["crate::", "super::", "self::"] {
        for (at, _) in text.match_indices(start) {
            let before = text[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let end = text[at..]
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .map_or(text.len(), |end| at + end);
            out.push(text[at..end].trim_end_matches(':').to_owned());
        }
    }
    out
}

/// Reads one path (with `{...}` groups) at the start of `text`.
fn expand(text: &str, prefix: String, out: &mut Vec<String>) {
    let mut path = prefix;
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
        .unwrap_or(text.len());
    path.push_str(&text[..end]);
    let rest = &text[end..];
    if path.ends_with("::") && rest.starts_with('{') {
        let mut depth = 0;
        let mut item_start = 1;
        for (i, c) in rest.char_indices() {
            match c {
                '{' => depth += 1,
                '}' | ',' if depth == 1 => {
                    let item = rest[item_start..i].trim();
                    if !item.is_empty() {
                        expand(item, path.clone(), out);
                    }
                    item_start = i + 1;
                    if c == '}' {
                        return;
                    }
                }
                '}' => depth -= 1,
                _ => {}
            }
        }
        return;
    }
    out.push(path.trim_end_matches("::").to_owned());
}

/// `pub use` re-exports: (module, name) → the path it names, absolute.
fn reexports(modules: &BTreeMap<String, String>) -> BTreeMap<(String, String), String> {
    let mut map = BTreeMap::new();
    for (module, text) in modules {
        for (at, _) in text.match_indices("pub use ") {
            let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
            if !text[line_start..at].trim().is_empty() {
                continue;
            }
            let statement = &text[at + "pub use ".len()..];
            let statement = &statement[..statement.find(';').unwrap_or(statement.len())];
            let mut found = Vec::new();
            let first = statement.trim();
            let absolute = match first.starts_with("crate::")
                || first.starts_with("super::")
                || first.starts_with("self::")
            {
                true => first.to_owned(),
                false => format!("self::{first}"),
            };
            expand(&absolute, String::new(), &mut found);
            for path in found {
                let resolved = absolutise(module, &path);
                let name = resolved.rsplit("::").next().unwrap_or("").to_owned();
                map.insert((module.clone(), name), resolved);
            }
        }
    }
    map
}

/// `path` (from `crate::`, `super::` or `self::`) as seen from `module`,
/// without its leading `crate::`.
fn absolutise(module: &str, path: &str) -> String {
    let mut base: Vec<&str> = module.split("::").filter(|p| !p.is_empty()).collect();
    let mut parts = path.split("::").peekable();
    match parts.peek() {
        Some(&"crate") => {
            base.clear();
            parts.next();
        }
        Some(&"self") => {
            parts.next();
        }
        _ => {}
    }
    while parts.peek() == Some(&"super") {
        base.pop();
        parts.next();
    }
    base.extend(parts);
    base.join("::")
}

/// The module that defines `path` (absolute, without `crate::`).
fn defining(
    path: &str,
    modules: &BTreeMap<String, String>,
    reexports: &BTreeMap<(String, String), String>,
    depth: usize,
) -> String {
    let parts: Vec<&str> = path.split("::").filter(|p| !p.is_empty()).collect();
    // The longest prefix that is a module.
    let mut module = String::new();
    let mut used = 0;
    for n in (0..=parts.len()).rev() {
        let candidate = parts[..n].join("::");
        if modules.contains_key(&candidate) {
            module = candidate;
            used = n;
            break;
        }
    }
    if let Some(name) = parts.get(used)
        && depth < 8
        && let Some(target) = reexports.get(&(module.clone(), (*name).to_owned()))
    {
        let mut target = target.clone();
        for extra in &parts[used + 1..] {
            target.push_str("::");
            target.push_str(extra);
        }
        return defining(&target, modules, reexports, depth + 1);
    }
    module
}

/// The sibling-module loops of one crate, each as its member names.
fn loops(src: &Path) -> Vec<Vec<String>> {
    let (edges, _) = graph(src);
    strongly_connected(&edges)
        .into_iter()
        .filter(|component| component.len() > 1)
        .collect()
}

/// The sibling edges of one crate, and for each, a path that makes it.
#[allow(clippy::type_complexity)]
fn graph(
    src: &Path,
) -> (
    BTreeMap<String, BTreeSet<String>>,
    BTreeMap<(String, String), String>,
) {
    let modules = modules(src);
    let reexports = reexports(&modules);
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut why = BTreeMap::new();
    for (module, text) in &modules {
        for path in paths(text) {
            let target = defining(&absolutise(module, &path), &modules, &reexports, 0);
            let (from, to) = siblings(module, &target);
            if let (Some(from), Some(to)) = (from, to)
                && from != to
            {
                why.entry((from.clone(), to.clone()))
                    .or_insert_with(|| format!("{module}: {path}"));
                edges.entry(from).or_default().insert(to);
            }
        }
    }
    (edges, why)
}

/// The children of `a`'s and `b`'s nearest common parent that hold them;
/// `None` for one that is that parent itself.
fn siblings(a: &str, b: &str) -> (Option<String>, Option<String>) {
    let a: Vec<&str> = a.split("::").filter(|p| !p.is_empty()).collect();
    let b: Vec<&str> = b.split("::").filter(|p| !p.is_empty()).collect();
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let pick = |parts: &[&str]| (parts.len() > common).then(|| parts[..=common].join("::"));
    (pick(&a), pick(&b))
}

/// Tarjan's strongly connected components.
fn strongly_connected(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(node: &'a str, s: &mut State<'a>) {
        let n = s.index.len();
        s.index.insert(node, n);
        s.low.insert(node, n);
        s.stack.push(node);
        s.on_stack.insert(node);
        if let Some(next) = s.edges.get(node) {
            for to in next {
                let to = to.as_str();
                if !s.index.contains_key(to) {
                    visit(to, s);
                    let low = s.low[to].min(s.low[node]);
                    s.low.insert(node, low);
                } else if s.on_stack.contains(to) {
                    let low = s.index[to].min(s.low[node]);
                    s.low.insert(node, low);
                }
            }
        }
        if s.low[node] == s.index[node] {
            let mut component = Vec::new();
            while let Some(top) = s.stack.pop() {
                s.on_stack.remove(top);
                component.push(top.to_owned());
                if top == node {
                    break;
                }
            }
            component.sort();
            s.out.push(component);
        }
    }
    let mut state = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    let nodes: BTreeSet<&str> = edges
        .iter()
        .flat_map(|(from, to)| std::iter::once(from.as_str()).chain(to.iter().map(String::as_str)))
        .collect();
    for node in nodes {
        if !state.index.contains_key(node) {
            visit(node, &mut state);
        }
    }
    state.out
}

/// The imports inside a crate that name an item by its root re-export
/// (`use crate::ObjectCode`) instead of the module that defines it: the
/// root is the crate's API for its users, and an import through it hides
/// which module depends on which.
fn through_root(src: &Path) -> Vec<String> {
    let modules = modules(src);
    let reexports = reexports(&modules);
    let mut found = Vec::new();
    for (module, text) in modules.iter().filter(|(module, _)| !module.is_empty()) {
        for path in use_paths(&code_only(text)) {
            let absolute = absolutise(module, &path);
            let Some((first, _)) = absolute.split_once("::").or(Some((&absolute, ""))) else {
                continue;
            };
            let is_module = modules
                .keys()
                .any(|m| m == first || m.starts_with(&format!("{first}::")));
            if reexports.contains_key(&(String::new(), first.to_owned())) && !is_module {
                let home = defining(&absolute, &modules, &reexports, 0);
                found.push(format!(
                    "{module}: `use crate::{absolute}` (defined in `{home}`)"
                ));
            }
        }
    }
    found
}

/// The crates the checks read.
const CRATES: [&str; 12] = [
    "cuda-dylib",
    "nvjitlink-sys",
    "nvrtc-sys",
    "nvfatbin-sys",
    "nvvm-sys",
    "cuda-driver-sys",
    "cuda-link",
    "cuda-compile",
    "cuda-build",
    "cuda-module",
    "cuda-link-cli",
    "xtask",
];

#[test]
fn no_import_goes_through_the_crate_root() {
    let root = crate::workspace_root();
    let found: Vec<String> = CRATES
        .iter()
        .flat_map(|krate| {
            through_root(&root.join(krate).join("src"))
                .into_iter()
                .map(move |line| format!("{krate}: {line}"))
        })
        .collect();
    assert!(
        found.is_empty(),
        "imports through a root re-export:\n{}",
        found.join("\n")
    );
}

#[test]
fn no_crate_has_a_module_cycle() {
    let root = crate::workspace_root();
    let mut found = Vec::new();
    for krate in CRATES {
        let src = root.join(krate).join("src");
        let (edges, why) = graph(&src);
        for component in loops(&src) {
            found.push(format!("{krate}: {}", component.join(" <-> ")));
            // Each edge inside the loop, and a path that makes it.
            for ((from, to), path) in &why {
                if component.contains(from) && component.contains(to) && edges[from].contains(to) {
                    found.push(format!("    {from} -> {to} ({path})"));
                }
            }
        }
    }
    assert!(found.is_empty(), "module cycles:\n{}", found.join("\n"));
}

#[test]
fn a_cycle_through_a_reexport_is_found() {
    let dir = tempfile_dir("reexport");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(
        dir.join("src/lib.rs"),
        "mod a;\nmod b;\npub use a::Thing;\npub use b::Other;\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("src/a.rs"),
        "use crate::Other;\npub struct Thing;\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("src/b.rs"),
        "use crate::{Thing};\npub struct Other;\n",
    )
    .unwrap();
    assert_eq!(
        loops(&dir.join("src")),
        [vec!["a".to_owned(), "b".to_owned()]]
    );
    std::fs::write(dir.join("src/b.rs"), "pub struct Other;\n").unwrap();
    assert!(loops(&dir.join("src")).is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A path written inline in code makes an edge; one in a comment, a doc
/// comment, a string or test-only code does not.
#[test]
fn an_inline_path_makes_an_edge_and_a_comment_none() {
    let dir = tempfile_dir("inline");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(
        dir.join("src/lib.rs"),
        "mod a;\nmod b;\n#[cfg(test)]\nmod stub;\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("src/stub.rs"),
        "fn f() { crate::a::g(); crate::b::h(); }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("src/a.rs"),
        "pub fn g() { let _ = crate::b::INSTALL; }\n",
    )
    .unwrap();
    let quiet = "/// [`g`](crate::a::g)\n// crate::a::g\npub const INSTALL: &str = \"crate::a::g µ\";\n\
                 #[cfg(test)]\nfn t() { crate::a::g(); }\npub fn h() { crate::stub::f(); }\n";
    std::fs::write(dir.join("src/b.rs"), quiet).unwrap();
    assert!(loops(&dir.join("src")).is_empty());
    std::fs::write(
        dir.join("src/b.rs"),
        format!("{quiet}pub fn k() {{ crate::a::g(); }}\n"),
    )
    .unwrap();
    assert_eq!(
        loops(&dir.join("src")),
        [vec!["a".to_owned(), "b".to_owned()]]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A scratch folder of this process's, one per test.
fn tempfile_dir(test: &str) -> std::path::PathBuf {
    let dir = crate::workspace_root()
        .join("target/xtask-cycles")
        .join(format!("{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}
