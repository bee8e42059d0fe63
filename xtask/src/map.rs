//! `docs/architecture.md`'s dependency table is the workspace's: each
//! member's library and build dependencies on other members, as `cargo
//! metadata` reports them, line for line.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

type Arrows = BTreeMap<String, BTreeSet<String>>;

/// `name → a, b` lines of the document's fenced blocks.
fn drawn(text: &str) -> Arrows {
    text.lines()
        .filter_map(|line| line.split_once('→'))
        .filter(|(name, _)| !name.trim().is_empty() && !name.trim().contains(' '))
        .map(|(name, deps)| {
            let deps = deps
                .split(',')
                .map(str::trim)
                .filter(|dep| !dep.is_empty())
                .map(str::to_owned)
                .collect();
            (name.trim().to_owned(), deps)
        })
        .collect()
}

/// What cargo says: every member, and its normal and build dependencies
/// that are members.
fn real() -> Arrows {
    let output = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ])
        .current_dir(crate::workspace_root())
        .output()
        .expect("cargo metadata runs");
    assert!(output.status.success(), "{output:?}");
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let packages = metadata["packages"].as_array().unwrap();
    let members: BTreeSet<&str> = packages.iter().filter_map(|p| p["name"].as_str()).collect();
    packages
        .iter()
        .map(|package| {
            let deps = package["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|dep| dep["kind"].is_null() || dep["kind"] == "build")
                .filter_map(|dep| dep["name"].as_str())
                .filter(|name| members.contains(name))
                .map(str::to_owned)
                .collect();
            (package["name"].as_str().unwrap().to_owned(), deps)
        })
        .collect()
}

#[test]
fn the_map_draws_every_dependency_and_no_other() {
    let path = crate::workspace_root().join("docs/architecture.md");
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        drawn(&text),
        real(),
        "docs/architecture.md's dependency table differs from cargo metadata"
    );
}

#[test]
fn a_missing_or_extra_arrow_is_seen() {
    let table = "```text\na → b, c\nb →\nc → b\n```\nprose with x → y in it\n";
    let arrows = drawn(table);
    assert_eq!(arrows.len(), 3);
    assert_eq!(
        arrows["a"],
        BTreeSet::from(["b".to_owned(), "c".to_owned()])
    );
    assert!(arrows["b"].is_empty());
}
