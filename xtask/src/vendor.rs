//! `cargo xtask vendor-test`: copies each sys crate out of the workspace the
//! way its README's "Vendoring" steps tell a vendor to, literally: the files
//! step 1 names, the values step 2 gives for the workspace fields (a field
//! the README gives no value for fails the run), `cuda-dylib` deleted,
//! `discover` emptied; then builds and tests it there, alone, offline, with
//! every driver-header feature.

use std::path::Path;

use crate::{Result, cargo, copy_dir, redist, run, with_redist_env};

/// The sys crates and the feature sets each is tested with.
const CRATES: &[(&str, &[&str])] = &[
    ("nvjitlink-sys", &[""]),
    ("nvrtc-sys", &[""]),
    ("nvfatbin-sys", &[""]),
    ("nvvm-sys", &[""]),
    ("cuda-driver-sys", &["cuda-12090", "cuda-13000"]),
];

pub fn vendor_test(workspace: &Path) -> Result<()> {
    redist::ensure(workspace, &[])?;
    for &(name, feature_sets) in CRATES {
        let out = workspace.join("target/vendor-test").join(name);
        let _ = std::fs::remove_dir_all(&out);
        let readme = std::fs::read_to_string(workspace.join(name).join("README.md"))?;
        let steps =
            vendoring_steps(&readme).ok_or(format!("{name}/README.md has no Vendoring steps"))?;
        for file in files_to_copy(steps) {
            let from = workspace.join(name).join(file);
            if from.is_dir() {
                copy_dir(&from, &out.join(file))?;
            } else {
                std::fs::create_dir_all(&out)?;
                std::fs::copy(&from, out.join(file))
                    .map_err(|e| format!("{name}/README.md names {file}: {e}"))?;
            }
        }
        let own = std::fs::read_to_string(workspace.join(name).join("Cargo.toml"))?;
        std::fs::write(
            out.join("Cargo.toml"),
            standalone_manifest(&own, &readme_values(steps))
                .map_err(|e| format!("{name}/README.md: {e}"))?,
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

/// The text of the README's "## Vendoring" section.
fn vendoring_steps(readme: &str) -> Option<&str> {
    let start = readme.find("## Vendoring")?;
    let rest = &readme[start + "## Vendoring".len()..];
    Some(rest.find("\n## ").map_or(rest, |end| &rest[..end]))
}

/// Step 1's backticked names: files, or folders ending in `/`, that a
/// vendor copies (`nvjitlink-sys/Cargo.toml` counts as `Cargo.toml`).
fn files_to_copy(steps: &str) -> Vec<&str> {
    let step = steps.split("\n2. ").next().unwrap_or_default();
    step.split('`')
        .skip(1)
        .step_by(2)
        .map(|name| {
            name.rsplit_once('/').map_or(
                name,
                |(dir, file)| {
                    if file.is_empty() { dir } else { file }
                },
            )
        })
        .map(|name| name.trim_end_matches('/'))
        .collect()
}

/// Step 2's backticked `key = value` pairs.
fn readme_values(steps: &str) -> Vec<(String, String)> {
    steps
        .split('`')
        .skip(1)
        .step_by(2)
        .filter_map(|pair| pair.split_once(" = "))
        .map(|(key, value)| (key.trim().to_owned(), value.trim().to_owned()))
        .collect()
}

/// A sys crate's manifest as a vendor's copy: workspace fields resolved,
/// the discovery dependency and the workspace lints removed, `discover`
/// emptied and off, and its own `[workspace]`.
fn standalone_manifest(own: &str, values: &[(String, String)]) -> Result<String> {
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
            let value = values
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v)
                .ok_or_else(|| format!("step 2 gives no value for {key}.workspace"))?;
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
