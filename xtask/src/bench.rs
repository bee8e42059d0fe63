//! `cargo xtask bench`: the CPU link benches and a table of their medians.

use std::path::Path;

use crate::{Result, cargo, redist, run, with_redist_env};

/// The link workloads of `cuda-link/benches/link.rs`.
const WORKLOADS: &[&str] = &["small", "big", "lto8", "archive"];

/// Runs the criterion benches, then prints medians and the wrapper's
/// overhead over raw nvJitLink.
pub fn bench(workspace: &Path, extra: &[String]) -> Result<()> {
    redist::ensure(workspace, &[])?;
    run(with_redist_env(cargo().current_dir(workspace), workspace)
        .args(["bench", "-p", "cuda-link", "--bench", "link", "--"])
        .args(extra))?;
    let paired = std::fs::read_to_string(workspace.join("target/criterion/paired-overhead.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .unwrap_or_default();
    println!(
        "\n| workload | raw nvJitLink | cuda-link Linker | criterion raw / wrapper | overhead (paired) |"
    );
    println!("|---|---|---|---|---|");
    for workload in WORKLOADS {
        let criterion = match (
            median_ns(workspace, workload, "raw"),
            median_ns(workspace, workload, "wrapper"),
        ) {
            (Some(raw), Some(wrapper)) => format!("{} / {}", format_ns(raw), format_ns(wrapper)),
            _ => "-".to_owned(),
        };
        let pair = &paired[workload];
        match (
            pair["raw_s"].as_f64(),
            pair["wrapper_s"].as_f64(),
            pair["median_ratio"].as_f64(),
        ) {
            (Some(raw), Some(wrapper), Some(ratio)) => println!(
                "| {workload} | {} | {} | {criterion} | {:+.2}% ({} pairs) |",
                format_ns(raw * 1e9),
                format_ns(wrapper * 1e9),
                (ratio - 1.0) * 100.0,
                pair["pairs"]
            ),
            _ => println!("| {workload} | - | - | {criterion} | not measured |"),
        }
    }
    if let (Some(cold), Some(warm)) = (
        median_ns(workspace, "big_cache", "cold_no_cache"),
        median_ns(workspace, "big_cache", "warm_hit"),
    ) {
        println!(
            "\npersistent cache on big: cold -no-cache link {}, warm hit {}: {:.0}x faster",
            format_ns(cold),
            format_ns(warm),
            cold / warm
        );
    }
    Ok(())
}

/// The median of one criterion benchmark, in nanoseconds.
pub fn median_ns(workspace: &Path, group: &str, function: &str) -> Option<f64> {
    let path = workspace.join(format!(
        "target/criterion/{group}/{function}/new/estimates.json"
    ));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    json["median"]["point_estimate"].as_f64()
}

/// `1.234 ms`, `56.7 µs`, `89 ns`.
pub fn format_ns(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.3} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.1} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}
