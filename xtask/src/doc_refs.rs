//! The documentation names only things that exist.
//!
//! The top README, each workspace member's README and
//! `docs/architecture.md` are read for what they name:
//!
//! * `cargo xtask COMMAND --flag`: a command of `cli.rs`, and a flag it takes;
//! * Cargo features: `--features X` (`crate/X` too), `feature = "X"`,
//!   "the `X` feature", "feature `X`", and the first column of a table headed
//!   `feature`: declared in a member's `[features]` (or an optional
//!   dependency), of that crate where the text says which;
//! * repository paths: a backticked `a/b` or `a/b.rs` whose first part is
//!   a file or folder of the README's folder or of the root (or that ends
//!   in a source file's extension), and relative Markdown links. `target/`
//!   is build output and is not checked.
//!
//! README.md's command tables are also checked against `cli.rs`: the
//! `xtask` row of the crate table and the `cargo xtask` lines together list
//! exactly its commands, and neither xtask's crate docs nor its README
//! repeat the list.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::cli;

/// A workspace member: its folder and package name, and its features.
struct Member {
    dir: String,
    package: String,
    features: BTreeSet<String>,
}

fn root() -> PathBuf {
    crate::workspace_root()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The `members = [...]` of the root manifest, with each member's features
/// from a line scan of its `[features]` table and its optional
/// dependencies not hidden behind `dep:`.
fn members() -> Vec<Member> {
    let manifest = read(&root().join("Cargo.toml"));
    let list = manifest
        .split_once("members = [")
        .and_then(|(_, rest)| rest.split_once(']'))
        .expect("the root manifest lists its members")
        .0;
    list.split(',')
        .map(|name| name.trim().trim_matches('"'))
        .filter(|name| !name.is_empty())
        .map(|dir| {
            let own = read(&root().join(dir).join("Cargo.toml"));
            let (mut package, mut features, mut optional) =
                (String::new(), BTreeSet::new(), Vec::new());
            let mut section = "";
            for line in own.lines().map(str::trim) {
                if line.starts_with('[') {
                    section = line;
                    continue;
                }
                let Some((key, value)) = line.split_once('=') else {
                    continue;
                };
                let key = key.trim().trim_matches('"');
                match section {
                    "[package]" if key == "name" => {
                        value.trim().trim_matches('"').clone_into(&mut package);
                    }
                    "[features]" if !key.starts_with('#') => {
                        features.insert(key.to_owned());
                    }
                    "[dependencies]" if value.contains("optional = true") => {
                        optional.push(key.split('.').next().unwrap_or(key).to_owned());
                    }
                    _ => {}
                }
            }
            for dependency in optional {
                if !own.contains(&format!("\"dep:{dependency}\"")) {
                    features.insert(dependency);
                }
            }
            Member {
                dir: dir.to_owned(),
                package,
                features,
            }
        })
        .collect()
}

/// The documents checked: the top README, each member's README,
/// `docs/architecture.md`.
fn documents(members: &[Member]) -> Vec<PathBuf> {
    let mut docs = vec![root().join("README.md")];
    docs.extend(
        members
            .iter()
            .map(|m| root().join(&m.dir).join("README.md"))
            .filter(|p| p.is_file()),
    );
    docs.push(root().join("docs/architecture.md"));
    docs
}

/// A document split into prose paragraphs (lines joined by spaces, so a
/// backticked span may wrap) and the lines of its code blocks.
struct Parts {
    prose: Vec<String>,
    code: Vec<String>,
    /// Tables: the header row's cells, then each row's cells.
    tables: Vec<(Vec<String>, Vec<Vec<String>>)>,
}

fn split(text: &str) -> Parts {
    let (mut prose, mut code, mut tables) = (Vec::new(), Vec::new(), Vec::new());
    let mut paragraph = String::new();
    let mut in_code = false;
    let cells = |line: &str| -> Vec<String> {
        line.trim()
            .trim_matches('|')
            .split('|')
            .map(|c| c.trim().to_owned())
            .collect()
    };
    let mut table: Option<(Vec<String>, Vec<Vec<String>>)> = None;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            prose.push(std::mem::take(&mut paragraph));
            continue;
        }
        if in_code {
            code.push(line.to_owned());
            continue;
        }
        if line.trim_start().starts_with('|') {
            let row = cells(line);
            match &mut table {
                None => table = Some((row, Vec::new())),
                Some(_) if row.iter().all(|c| c.chars().all(|ch| "-: ".contains(ch))) => {}
                Some((_, rows)) => rows.push(row),
            }
        } else if let Some(done) = table.take() {
            tables.push(done);
        }
        if line.trim().is_empty() {
            prose.push(std::mem::take(&mut paragraph));
        } else {
            paragraph.push(' ');
            paragraph.push_str(line);
        }
    }
    prose.push(paragraph);
    tables.extend(table);
    Parts {
        prose,
        code,
        tables,
    }
}

/// The backticked spans of a paragraph, each with the text just before
/// and just after it.
fn spans(paragraph: &str) -> Vec<(&str, &str, &str)> {
    let pieces: Vec<&str> = paragraph.split('`').collect();
    (1..pieces.len())
        .step_by(2)
        .filter(|&i| i + 1 < pieces.len())
        .map(|i| (pieces[i - 1], pieces[i], pieces[i + 1]))
        .collect()
}

/// Every `cargo xtask NAME ARGS` in the spans and code lines, as NAME and
/// the flags among ARGS (up to the span's end, or a code line's comment).
fn xtask_commands(parts: &Parts) -> Vec<(String, Vec<String>)> {
    let mut texts: Vec<String> = parts
        .prose
        .iter()
        .flat_map(|p| spans(p).into_iter().map(|(_, span, _)| span.to_owned()))
        .collect();
    texts.extend(
        parts
            .code
            .iter()
            .map(|line| line.split(" #").next().unwrap_or_default().to_owned()),
    );
    let mut found = Vec::new();
    for text in texts {
        let words: Vec<&str> = text.split_whitespace().collect();
        for (i, pair) in words.windows(2).enumerate() {
            if pair != ["cargo", "xtask"] {
                continue;
            }
            let Some(name) = words.get(i + 2) else {
                continue;
            };
            let flags = words[i + 3..]
                .iter()
                .take_while(|w| !["&&", "|", ";", "cargo"].contains(w))
                .map(|w| w.trim_matches(|c| "[]()',.".contains(c)))
                .filter(|w| w.starts_with("--"))
                .map(|w| w.split('=').next().unwrap_or(w).to_owned())
                .collect();
            found.push(((*name).to_owned(), flags));
        }
    }
    found
}

/// The packages named by `-p NAME` or `--package NAME` in the spans and
/// code lines.
fn packages(parts: &Parts) -> Vec<String> {
    let mut texts: Vec<String> = parts
        .prose
        .iter()
        .flat_map(|p| spans(p).into_iter().map(|(_, span, _)| span.to_owned()))
        .collect();
    texts.extend(parts.code.iter().cloned());
    let mut found = Vec::new();
    for text in &texts {
        let words: Vec<&str> = text.split_whitespace().collect();
        for pair in words.windows(2) {
            if ["-p", "--package"].contains(&pair[0]) {
                found.push(pair[1].trim_matches(|c| "`'\"".contains(c)).to_owned());
            }
        }
    }
    found
}

/// The features named in a document: `(crate package or None, feature)`.
fn features(parts: &Parts, own_package: Option<&str>) -> Vec<(Option<String>, String)> {
    let is_name = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_/".contains(c))
    };
    let mut found = Vec::new();
    let mut texts: Vec<&str> = parts.prose.iter().map(String::as_str).collect();
    texts.extend(parts.code.iter().map(String::as_str));
    for text in &texts {
        // `--features X`, `--features=X`, `--features 'X,Y'`.
        let words: Vec<&str> = text.split_whitespace().collect();
        for (i, word) in words.iter().enumerate() {
            let word = word.trim_matches('`');
            let list = if let Some(list) = word.strip_prefix("--features=") {
                Some(list)
            } else if word == "--features" {
                words.get(i + 1).copied()
            } else {
                None
            };
            for name in list
                .into_iter()
                .flat_map(|l| l.trim_matches(|c| "`'\"".contains(c)).split(','))
                .filter(|n| !n.is_empty())
            {
                found.push(match name.split_once('/') {
                    Some((package, feature)) => (Some(package.to_owned()), feature.to_owned()),
                    None => (None, name.to_owned()),
                });
            }
        }
        // `feature = "X"` (a cfg).
        for (_, rest) in text
            .match_indices("feature = \"")
            .map(|(i, _)| text.split_at(i + 11))
        {
            if let Some((name, _)) = rest.split_once('"') {
                found.push((own_package.map(str::to_owned), name.to_owned()));
            }
        }
    }
    // "the `X` feature", "feature `X`": a feature of this crate, or of the
    // crate the text names when it is another member (checked below as any).
    for paragraph in &parts.prose {
        for (before, span, after) in spans(paragraph) {
            let before = before.trim_end().to_ascii_lowercase();
            let after = after.trim_start().to_ascii_lowercase();
            if is_name(span) && (after.starts_with("feature") || before.ends_with(" feature")) {
                found.push((None, span.to_owned()));
            }
        }
    }
    // The first column of a table headed `feature`.
    for (header, rows) in &parts.tables {
        if header.first().is_some_and(|h| h == "feature") {
            for row in rows {
                let name = row[0].trim_matches('`');
                found.push((own_package.map(str::to_owned), name.to_owned()));
            }
        }
    }
    found
}

/// The repository paths named in a document: backticked spans that look
/// like paths, and relative Markdown link targets.
fn paths(parts: &Parts, dir: &Path) -> Vec<String> {
    let exists_in = |first: &str| bases(dir).iter().any(|base| base.join(first).exists());
    let mut found = Vec::new();
    for paragraph in &parts.prose {
        for (_, span, _) in spans(paragraph) {
            let span = span.trim();
            if !span.contains('/')
                || span.contains("://")
                || span.contains("::")
                || span.starts_with(['/', '~', '$', '-'].as_slice())
                || span.starts_with("./")
                || span.starts_with("../")
                || !span
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./*{},".contains(c))
            {
                continue;
            }
            let first = span.split('/').next().unwrap_or_default();
            let source_file = [".rs", ".md", ".toml", ".py", ".sh", ".cu", ".txt", ".json"]
                .iter()
                .any(|ext| span.ends_with(ext));
            if first != "target" && (exists_in(first) || source_file) {
                found.push(span.to_owned());
            }
        }
        // [text](path)
        for (_, rest) in paragraph
            .match_indices("](")
            .map(|(i, _)| paragraph.split_at(i + 2))
        {
            if let Some((target, _)) = rest.split_once(')') {
                let target = target.split('#').next().unwrap_or_default();
                if !target.is_empty() && !target.contains("://") && !target.starts_with("mailto:") {
                    found.push(target.to_owned());
                }
            }
        }
    }
    found
}

/// Where a path a document in `dir` names may start: `dir`, the root, and
/// each member's `src/` (`linker/isolated`, a module of cuda-link).
fn bases(dir: &Path) -> Vec<PathBuf> {
    let mut bases = vec![dir.to_path_buf(), root()];
    bases.extend(members().iter().map(|m| root().join(&m.dir).join("src")));
    bases
}

/// Whether `path` (as a document in `dir` names it) exists, relative to
/// one of its [`bases`] that holds its first part: as written, as a module (`.rs`), or for a glob, the
/// folder above its first wildcard; `{a,b}` is each of a and b.
fn path_exists(path: &str, dir: &Path) -> bool {
    if let (Some(open), Some(close)) = (path.find('{'), path.find('}')) {
        return path[open + 1..close].split(',').all(|choice| {
            path_exists(
                &format!("{}{choice}{}", &path[..open], &path[close + 1..]),
                dir,
            )
        });
    }
    let path = match path.find('*') {
        Some(star) => path[..star].rsplit_once('/').map_or("", |(dir, _)| dir),
        None => path,
    };
    let wants_dir = path.ends_with('/');
    let first = path.split('/').next().unwrap_or_default();
    bases(dir)
        .iter()
        .filter(|base| base.join(first).exists())
        .any(|base| {
            let full = base.join(path.trim_end_matches('/'));
            if wants_dir {
                full.is_dir()
            } else {
                full.exists() || full.with_extension("rs").is_file()
            }
        })
}

/// Every dead reference of every checked document, as `file: what`.
fn dead_references() -> Vec<String> {
    let members = members();
    let commands = cli::command_names();
    let by_package: BTreeMap<&str, &Member> =
        members.iter().map(|m| (m.package.as_str(), m)).collect();
    let mut dead = Vec::new();
    for doc in documents(&members) {
        let dir = doc.parent().expect("a document has a folder");
        let name = doc
            .strip_prefix(root())
            .unwrap_or(&doc)
            .display()
            .to_string();
        let own_package = members
            .iter()
            .find(|m| root().join(&m.dir) == dir)
            .map(|m| m.package.as_str());
        let parts = split(&read(&doc));

        for (command, flags) in xtask_commands(&parts) {
            if command != "help" && !commands.contains(&command) {
                dead.push(format!("{name}: `cargo xtask {command}` is no command"));
                continue;
            }
            let Some(known) = cli::long_flags(&command) else {
                continue;
            };
            for flag in flags.iter().filter(|f| !known.contains(f)) {
                dead.push(format!("{name}: `cargo xtask {command}` takes no `{flag}`"));
            }
        }

        for package in packages(&parts) {
            if !by_package.contains_key(package.as_str()) {
                dead.push(format!("{name}: no package `{package}` in the workspace"));
            }
        }

        for (package, feature) in features(&parts, own_package) {
            // "the `cuda-link` features": a crate's, not a feature's name.
            if package.is_none() && by_package.contains_key(feature.as_str()) {
                continue;
            }
            let declared = match package.as_deref() {
                Some(package) => by_package
                    .get(package)
                    .is_some_and(|m| m.features.contains(&feature)),
                None => members.iter().any(|m| m.features.contains(&feature)),
            };
            if !declared {
                let whose = package.map_or_else(String::new, |p| format!("{p}/"));
                dead.push(format!("{name}: no feature `{whose}{feature}`"));
            }
        }

        for path in paths(&parts, dir) {
            // `cuda-module/cuda-13000` is a feature, checked as one above.
            let feature = path.split_once('/').is_some_and(|(package, feature)| {
                by_package
                    .get(package)
                    .is_some_and(|m| m.features.contains(feature))
            });
            if !feature && !path_exists(&path, dir) {
                dead.push(format!("{name}: no path `{path}`"));
            }
        }
    }
    dead
}

#[test]
fn documents_name_only_what_exists() {
    let dead = dead_references();
    assert!(
        dead.is_empty(),
        "dead references in the docs:\n{}",
        dead.join("\n")
    );
}

#[test]
fn readme_lists_exactly_the_commands() {
    let commands: BTreeSet<String> = cli::command_names().into_iter().collect();
    let readme = read(&root().join("README.md"));
    let parts = split(&readme);

    let row = parts
        .tables
        .iter()
        .flat_map(|(_, rows)| rows)
        .find(|row| row.first().is_some_and(|c| c == "`xtask`"))
        .expect("README.md's crate table has an `xtask` row");
    let listed: BTreeSet<String> = spans(&format!(" {} ", row[1]))
        .into_iter()
        .map(|(_, span, _)| span.to_owned())
        // Not the pointers: `cargo xtask help`, `xtask/src/cli.rs`.
        .filter(|span| !span.contains([' ', '/']))
        .collect();
    assert_eq!(
        listed, commands,
        "README.md's `xtask` row lists other commands than cli.rs"
    );

    let documented: BTreeSet<String> = xtask_commands(&parts)
        .into_iter()
        .map(|(name, _)| name)
        .filter(|name| name != "help")
        .collect();
    assert_eq!(
        documented, commands,
        "README.md's `cargo xtask` lines name other commands than cli.rs"
    );
}

#[test]
fn xtask_docs_point_at_the_list_instead_of_copying_it() {
    let main = read(&root().join("xtask/src/main.rs"));
    let crate_docs: String = main
        .lines()
        .filter_map(|line| line.strip_prefix("//!"))
        .collect::<Vec<_>>()
        .join("\n");
    let readme = read(&root().join("xtask/README.md"));
    for (name, text) in [
        ("xtask/src/main.rs's crate docs", crate_docs),
        ("xtask/README.md", readme),
    ] {
        let named: Vec<String> = cli::command_names()
            .into_iter()
            .filter(|c| text.contains(&format!("xtask {c}")))
            .collect();
        assert!(
            named.is_empty(),
            "{name} lists commands ({}): point at `cargo xtask help` instead",
            named.join(", ")
        );
    }
}

#[test]
fn the_checks_catch_what_they_should() {
    let text = "Run `cargo xtask bindgen --chek` and `cargo xtask nope`, with\n\
                the `no-such` feature, see `docs/nothing.md` and\n\
                `xtask/src/cli.rs`, `cuda-link/src/linker/isolated`.\n\n\
                ```sh\ncargo test --features cuda-module/nope # comment\n```\n\n\
                | feature | what |\n|---|---|\n| `ghost` | x |\n";
    let parts = split(text);
    let commands = xtask_commands(&parts);
    assert_eq!(
        commands,
        [
            ("bindgen".to_owned(), vec!["--chek".to_owned()]),
            ("nope".to_owned(), vec![])
        ]
    );
    let features = features(&parts, Some("cuda-module"));
    assert!(
        features.contains(&(None, "no-such".to_owned())),
        "{features:?}"
    );
    assert!(features.contains(&(Some("cuda-module".to_owned()), "nope".to_owned())));
    assert!(features.contains(&(Some("cuda-module".to_owned()), "ghost".to_owned())));
    assert_eq!(packages(&split("`cargo run -p nope -- x`")), ["nope"]);
    let paths = paths(&parts, &root());
    assert!(paths.contains(&"docs/nothing.md".to_owned()), "{paths:?}");
    assert!(!path_exists("docs/nothing.md", &root()));
    assert!(path_exists("xtask/src/cli.rs", &root()));
    assert!(path_exists("xtask/src/", &root()));
    assert!(path_exists("xtask/src/*.rs", &root()));
    assert!(path_exists("xtask/src/{cli,gpu}.rs", &root()));
    assert!(!path_exists("xtask/src/{cli,nope}.rs", &root()));
}
