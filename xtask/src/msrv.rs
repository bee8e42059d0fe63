//! `cargo xtask msrv`: no dependency of a published crate declares a
//! newer `rust-version` than the workspace's, so the declared minimum is
//! true at least as far as the dependencies can tell.

use std::collections::HashMap;
use std::path::Path;

use crate::{Result, cargo};

/// The workspace members that are not published.
const UNPUBLISHED: &[&str] = &["xtask", "cuda-link-tests", "cuda-link-examples"];

pub fn check(workspace: &Path) -> Result<()> {
    let output = cargo()
        .current_dir(workspace)
        .args(["metadata", "--format-version", "1", "--locked"])
        .output()?;
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).into_owned().into());
    }
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout)?;
    let packages: HashMap<&str, &serde_json::Value> = metadata["packages"]
        .as_array()
        .ok_or("cargo metadata without packages")?
        .iter()
        .filter_map(|p| Some((p["id"].as_str()?, p)))
        .collect();
    let nodes: HashMap<&str, &serde_json::Value> = metadata["resolve"]["nodes"]
        .as_array()
        .ok_or("cargo metadata without a resolve graph")?
        .iter()
        .filter_map(|n| Some((n["id"].as_str()?, n)))
        .collect();
    let name = |id: &str| packages[id]["name"].as_str().unwrap_or("?").to_owned();
    let version_of = |id: &str| packages[id]["rust_version"].as_str().map(parse);
    let published: Vec<&str> = metadata["workspace_members"]
        .as_array()
        .ok_or("cargo metadata without members")?
        .iter()
        .filter_map(|m| m.as_str())
        .filter(|id| !UNPUBLISHED.contains(&name(id).as_str()))
        .collect();
    let ours = published
        .first()
        .and_then(|id| version_of(id))
        .ok_or("the workspace declares no rust-version")?;
    // Normal dependencies only: dev and build dependencies are not the
    // users' concern.
    let mut stack = published.clone();
    let mut seen = std::collections::HashSet::new();
    let mut newer = Vec::new();
    while let Some(id) = stack.pop() {
        if !seen.insert(id) {
            continue;
        }
        if let Some(version) = version_of(id).filter(|v| *v > ours) {
            newer.push(format!("{} needs {}", name(id), show(version)));
        }
        for dep in nodes[id]["deps"].as_array().into_iter().flatten() {
            let normal = dep["dep_kinds"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|kind| kind["kind"].is_null());
            if let (true, Some(pkg)) = (normal, dep["pkg"].as_str()) {
                stack.push(pkg);
            }
        }
    }
    if newer.is_empty() {
        eprintln!(
            "xtask: rust-version {} holds for every dependency",
            show(ours)
        );
        Ok(())
    } else {
        newer.sort();
        Err(format!(
            "the workspace declares rust-version {}, but {}",
            show(ours),
            newer.join(", ")
        )
        .into())
    }
}

/// `1.88` or `1.88.0` as `(1, 88, 0)`.
fn parse(version: &str) -> (u32, u32, u32) {
    let mut parts = version.split('.').map(|p| p.parse().unwrap_or(0));
    (
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
    )
}

fn show((major, minor, patch): (u32, u32, u32)) -> String {
    format!("{major}.{minor}.{patch}")
}
