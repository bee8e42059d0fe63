//! `cargo xtask peer-candle --pairs N --runners`: the whole-framework
//! numbers, on this machine, after the test builds (which leave every
//! dependency built):
//!
//! - candle-kernels' build script cold, upstream's (cudaforge and nvcc)
//!   against ours (cuda-build), in N ABBA pairs: each run cleans the crate
//!   and empties its cache, and the script's own time comes from cargo's
//!   `--timings`;
//! - with `--runners`, a second runner: a copy of the peer crate at
//!   another path, an empty
//!   cache folder, and the shared store (a real `redis-server`, a team key)
//!   that a first runner filled, against that first runner's cold build;
//! - a no-op rebuild after it: the whole `cargo build`, nothing changed,
//!   the median of eleven.

use std::path::Path;
use std::process::Stdio;
use std::time::Instant;

use super::{BuildEnv, build_script_seconds, write_workspace};
use crate::Result;
use crate::bench_remote::Redis;

/// A team key for the store: 64 hex digits.
const TEAM_KEY: &str = "5eed0fca11ab1e5eed0fca11ab1e5eed0fca11ab1e5eed0fca11ab1e5eed0fca";

/// What the measurements need: the toolchain and stubs of the test builds,
/// their folder, the peer and candle-core's source.
pub(crate) struct Numbers<'a> {
    pub(crate) workspace: &'a Path,
    pub(crate) nvcc: &'a Path,
    pub(crate) stubs: &'a Path,
    pub(crate) root: &'a Path,
    pub(crate) peer: &'a Path,
    pub(crate) candle_core: &'a Path,
}

impl Numbers<'_> {
    /// The ABBA pairs, and the runners when asked, as markdown.
    pub(crate) fn measure(&self, pairs: usize, runners: bool) -> Result<String> {
        let mut table = String::new();
        if pairs > 0 {
            table.push_str(
                "| candle-kernels' build script, cold, in this order | upstream (cudaforge, \
                 nvcc), s | ours (cuda-build), s | ours / upstream |\n|---|---|---|---|\n",
            );
        }
        let mut ratios = Vec::new();
        for pair in 0..pairs {
            // A B B A: upstream first in even pairs, ours first in odd.
            let order = match pair % 2 {
                0 => [false, true],
                _ => [true, false],
            };
            let mut times = [0.0; 2];
            for ours in order {
                times[usize::from(ours)] = self.cold(ours)?;
            }
            let ratio = times[1] / times[0];
            ratios.push(ratio);
            let first = if order[0] { "ours" } else { "upstream" };
            table.push_str(&format!(
                "| pair {pair} ({first} first) | {:.1} | {:.1} | {ratio:.2} |\n",
                times[0], times[1]
            ));
        }
        ratios.sort_by(f64::total_cmp);
        if let Some(median) = ratios.get(ratios.len() / 2) {
            // Upper median of an even count.
            table.push_str(&format!("| median of {pairs} | | | **{median:.2}** |\n"));
        }
        if runners {
            table.push('\n');
            table.push_str(&self.runners()?);
        }
        Ok(table)
    }

    /// The build environment of one variant, with its own cache folder.
    fn env<'e>(&'e self, target: &'e Path, cache: &'e Path) -> BuildEnv<'e> {
        BuildEnv {
            workspace: self.workspace,
            nvcc: self.nvcc,
            stubs: self.stubs,
            target,
            cache,
        }
    }

    /// candle-kernels' build script cold in the test build's workspace of
    /// one variant: its seconds.
    fn cold(&self, ours: bool) -> Result<f64> {
        let name = if ours { "ours" } else { "nvcc" };
        let dir = self.root.join(name);
        let cache = self.root.join(format!("cache-{name}"));
        let target = self.root.join("target");
        let env = self.env(&target, &cache);
        let seconds = build_script(&env, &dir, &[], &[])?;
        eprintln!("xtask: {name}: candle-kernels' build script, cold: {seconds:.1} s");
        Ok(seconds)
    }

    /// Two runners through the store, then a no-op rebuild of the second.
    fn runners(&self) -> Result<String> {
        let scratch = crate::bench_build::scratch_dir(self.workspace, "peer-candle/runners")?;
        let redis = Redis::start(&scratch)?;
        let store = [
            ("CUDA_LINK_CACHE_URL", redis.url()),
            ("CUDA_LINK_CACHE_KEY", TEAM_KEY.to_owned()),
        ];
        let mut seconds = Vec::new();
        let mut no_ops = Vec::new();
        for runner in ["a", "b"] {
            // Each runner its own checkout, cache folder and target folder.
            let dir = scratch.join(format!("runner-{runner}"));
            let kernels = dir.join("checkout/candle-kernels");
            crate::copy_dir(&self.peer.join("candle-kernels"), &kernels)?;
            // Its path to cuda-build is relative to the peer's place; the
            // store's feature on by default (cargo takes no `--features`
            // for a patched dependency).
            let manifest = kernels.join("Cargo.toml");
            let cuda_build = self.workspace.join("cuda-build").display().to_string();
            let text = std::fs::read_to_string(&manifest)?
                .replace("\"../../../cuda-build\"", &format!("{cuda_build:?}"))
                .replace("[features]\n", "[features]\ndefault = [\"shared-cache\"]\n");
            std::fs::write(&manifest, text)?;
            write_workspace(&dir, self.peer, self.candle_core, Some(&kernels))?;
            let cache = dir.join("cache");
            // Not the test builds' folder: `cargo clean -p` there would
            // clean both builds' candle-kernels.
            let target = scratch.join("target");
            let env = self.env(&target, &cache);
            let took = build_script(&env, &dir, &[], &store)?;
            eprintln!("xtask: runner {runner}: candle-kernels' build script: {took:.1} s");
            seconds.push(took);
            if runner == "b" {
                no_ops = no_op_rebuilds(&env, &dir, &store)?;
            }
        }
        let (&[cold, warm], &[fastest, .., slowest]) = (&seconds[..], &no_ops[..]) else {
            return Err("the runners did not all run".into());
        };
        let no_op = no_ops[no_ops.len() / 2];
        Ok(format!(
            "| through a shared store (redis-server, a team key), each runner its own checkout \
             path and empty cache folder | s |\n|---|---|\n\
             | runner A: candle-kernels' build script, the store empty | {cold:.1} |\n\
             | runner B after A: the build script | {warm:.2} ({:.3}× of A) |\n\
             | runner B again, nothing changed: the whole `cargo build`, median of {NO_OPS} \
             ({fastest:.2} to {slowest:.2}) | {no_op:.2} |\n",
            warm / cold
        ))
    }
}

/// How many no-op rebuilds give the median: one is at the mercy of the
/// machine's other work.
const NO_OPS: usize = 11;

/// The whole `cargo build` of a runner with nothing changed, `NO_OPS`
/// times after one that settles it: the seconds of each, sorted.
fn no_op_rebuilds(env: &BuildEnv, dir: &Path, store: &[(&str, String)]) -> Result<Vec<f64>> {
    let mut seconds = Vec::new();
    for run in 0..=NO_OPS {
        let start = Instant::now();
        crate::run(
            env.cargo(dir)
                .args(["build", "--release", "-p", "candle-kernels"])
                .envs(store.iter().map(|(k, v)| (k, v)))
                .stderr(Stdio::null()),
        )?;
        if run > 0 {
            seconds.push(start.elapsed().as_secs_f64());
        }
    }
    seconds.sort_by(f64::total_cmp);
    Ok(seconds)
}

/// candle-kernels cleaned, its cache folder emptied, then built with
/// `args` and `vars` added: its build script's seconds.
fn build_script(env: &BuildEnv, dir: &Path, args: &[&str], vars: &[(&str, String)]) -> Result<f64> {
    crate::run(
        env.cargo(dir)
            .args(["clean", "--release", "-p", "candle-kernels"])
            .stderr(Stdio::null()),
    )?;
    if env.cache.exists() {
        std::fs::remove_dir_all(env.cache)?;
    }
    std::fs::create_dir_all(env.cache)?;
    crate::run(
        env.cargo(dir)
            .args(["build", "--release", "-p", "candle-kernels", "--timings"])
            .args(args)
            .envs(vars.iter().map(|(k, v)| (k, v)))
            .stderr(Stdio::null()),
    )?;
    build_script_seconds(&env.target.join("cargo-timings/cargo-timing.html"))?
        .ok_or_else(|| "candle-kernels' build script did not run".into())
}
