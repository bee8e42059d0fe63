//! `cargo xtask vendor-test`: copies each sys crate out of the workspace the
//! way its README tells a vendor to (workspace fields resolved, `cuda-dylib`
//! deleted, `discover` emptied), then builds and tests it there,
//! alone, offline, with every driver-header feature.

use std::path::Path;

use crate::{Result, cargo, redist, run, with_redist_env};

/// The sys crates and the feature sets each is tested with.
const CRATES: &[(&str, &[&str])] = &[
    ("nvjitlink-sys", &[""]),
    ("cuda-driver-sys", &["cuda-12090", "cuda-13000"]),
];

pub fn vendor_test(workspace: &Path) -> Result<()> {
    redist::ensure(workspace, &[])?;
    let manifest = std::fs::read_to_string(workspace.join("Cargo.toml"))?;
    for &(name, feature_sets) in CRATES {
        let out = workspace.join("target/vendor-test").join(name);
        let _ = std::fs::remove_dir_all(&out);
        copy_dir(&workspace.join(name), &out)?;
        let own = std::fs::read_to_string(workspace.join(name).join("Cargo.toml"))?;
        std::fs::write(
            out.join("Cargo.toml"),
            standalone_manifest(&own, &manifest)?,
        )?;
        std::fs::copy(workspace.join("Cargo.lock"), out.join("Cargo.lock"))?;
        for features in feature_sets {
            eprintln!("xtask: {name} alone, --no-default-features --features '{features}'");
            run(with_redist_env(cargo().current_dir(&out), workspace)
                .env(
                    "CARGO_TARGET_DIR",
                    workspace.join("target/vendor-test/target"),
                )
                .args(["test", "--offline", "--no-default-features", "--features"])
                .arg(features))?;
        }
    }
    Ok(())
}

fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}

/// The value of `key = value` in `section` of a manifest.
fn value_in<'a>(manifest: &'a str, section: &str, key: &str) -> Option<&'a str> {
    let mut current = "";
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            current = line;
        } else if current == section
            && let Some((k, v)) = line.split_once('=')
            && k.trim() == key
        {
            return Some(v.trim());
        }
    }
    None
}

/// A sys crate's manifest as a vendor's copy: workspace fields resolved,
/// the discovery dependency and the workspace lints removed, `discover`
/// emptied and off, and its own `[workspace]`.
fn standalone_manifest(own: &str, workspace: &str) -> Result<String> {
    let mut out = String::new();
    let mut section = String::new();
    for line in own.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('[') {
            section = trimmed.to_owned();
            if section == "[lints]" {
                continue;
            }
        }
        if section == "[lints]" || trimmed.starts_with("cuda-dylib") {
            continue;
        }
        if trimmed.starts_with("discover =") {
            // Kept, empty and off: it only gates the items that need cuda-dylib.
            out.push_str("discover = []\n");
            continue;
        }
        if let Some(key) = trimmed.strip_suffix(".workspace = true") {
            let (table, key) = if section == "[package]" {
                ("[workspace.package]", key)
            } else {
                ("[workspace.dependencies]", key)
            };
            let value = value_in(workspace, table, key)
                .ok_or_else(|| format!("{key} is not in the workspace's {table}"))?;
            out.push_str(&format!("{key} = {value}\n"));
        } else if trimmed.starts_with("default =") {
            out.push_str(
                &line
                    .replace("\"discover\", ", "")
                    .replace("\"discover\"", ""),
            );
            out.push('\n');
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    out.push_str("\n[workspace]\n");
    Ok(out)
}
