//! `cargo xtask bench-remote`: the shared cache, with a real
//! `redis-server`, on candle's kernel set (`cuda-build` with its `remote`
//! feature, three SM arches plus PTX, one fatbin per file):
//!
//! - two runners, each with a fresh cache folder: B builds after A and
//!   should take every compile from the store, in a tenth of A's time;
//! - a cold build whose every lookup misses, with the store behind the
//!   cache against none, in ABBA pairs: the store should cost at most 5 %;
//! - a store that accepts connections and never answers: the build should
//!   end within the store's timeout plus a cold build.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::Result;
use crate::bench_build::{BuildBench, scratch_dir};

/// The store's timeout in the dead-store run, in seconds.
const DEAD_TIMEOUT: &str = "2";

pub fn bench_remote(workspace: &Path, pairs: usize) -> Result<()> {
    let bench = BuildBench::new(workspace, "candle", true, "remote")?;
    let scratch = scratch_dir(workspace, "bench-remote")?;
    let redis = Redis::start(&scratch)?;
    let url = || ("CUDA_LINK_CACHE_URL", redis.url());
    let fresh = |name: &str| -> (PathBuf, PathBuf) {
        let dir = scratch.join(name);
        (dir.join("out"), dir.join("cache"))
    };
    let build = |name: &str, env: &[(&str, String)]| -> Result<(f64, Vec<String>)> {
        let (out, cache) = fresh(name);
        let (seconds, lines) = bench.run(&out, &cache, env)?;
        println!("{name}: {seconds:.2} s: {}", lines.join(" | "));
        Ok((seconds, lines))
    };
    eprintln!(
        "xtask: {} candle files, redis-server on {}, {pairs} ABBA pairs",
        bench.files().len(),
        redis.url()
    );

    // Two runners.
    let (cold_a, _) = build("runner-a", &[url()])?;
    let (warm_b, lines) = build("runner-b", &[url()])?;
    let fields: Vec<&str> = lines.first().map_or(vec![], |l| l.split(' ').collect());
    let (compiled, cached, remote) = (fields[1], fields[2], fields.get(4).copied().unwrap_or("?"));
    println!(
        "runner B after runner A: {warm_b:.2} s against {cold_a:.2} s = {:.3}x; \
         {compiled} compiled, {cached} cached, {remote} from the store",
        warm_b / cold_a
    );

    // A miss with the store against none.
    let mut ratios = Vec::new();
    for pair in 0..pairs {
        redis.flush()?;
        let with = |n| build(&format!("miss-remote-{pair}-{n}"), &[url()]).map(|r| r.0);
        let without = |n| build(&format!("miss-local-{pair}-{n}"), &[]).map(|r| r.0);
        let (remote, local) = match pair % 2 {
            0 => {
                let r = with(0)?;
                (r, without(0)?)
            }
            _ => {
                let l = without(0)?;
                (with(0)?, l)
            }
        };
        ratios.push(remote / local);
        println!(
            "pair {pair}: store behind {remote:.2} s, none {local:.2} s: {:.3}x",
            remote / local
        );
    }
    ratios.sort_by(f64::total_cmp);
    println!(
        "a miss with the store behind the cache / without, median of {pairs}: {:.3}x",
        ratios[pairs / 2]
    );

    // A store that never answers.
    let silent = TcpListener::bind(("127.0.0.1", 0))?;
    let silent_url = format!("redis://127.0.0.1:{}/0", silent.local_addr()?.port());
    let held = std::thread::spawn(move || {
        // Accepted and held open, never answered, until the process ends.
        let mut open = Vec::new();
        for stream in silent.incoming().flatten() {
            open.push(stream);
        }
    });
    let (cold, _) = build("dead-none", &[])?;
    let (dead, _) = build(
        "dead-store",
        &[
            ("CUDA_LINK_CACHE_URL", silent_url),
            ("CUDA_LINK_CACHE_TIMEOUT", DEAD_TIMEOUT.to_owned()),
        ],
    )?;
    println!(
        "a store that never answers (timeout {DEAD_TIMEOUT} s): {dead:.2} s against a cold \
         build's {cold:.2} s (+{:.2} s)",
        dead - cold
    );
    drop(held);
    Ok(())
}

/// A `redis-server` for the bench, stopped when dropped.
pub(crate) struct Redis {
    child: Child,
    port: u16,
}

impl Redis {
    pub(crate) fn start(scratch: &Path) -> Result<Redis> {
        let port = TcpListener::bind(("127.0.0.1", 0))?.local_addr()?.port();
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--dir"])
            .arg(scratch)
            .stdout(Stdio::null())
            .spawn()
            .map_err(|e| {
                format!("cannot start redis-server (apt-get install redis-server): {e}")
            })?;
        let redis = Redis { child, port };
        for _ in 0..500 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Ok(redis);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Err(format!("redis-server did not answer on port {port}").into())
    }

    pub(crate) fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    /// Empties the store.
    fn flush(&self) -> Result<()> {
        let status = Command::new("redis-cli")
            .args(["-p", &self.port.to_string(), "FLUSHALL"])
            .stdout(Stdio::null())
            .status()?;
        match status.success() {
            true => Ok(()),
            false => Err("redis-cli FLUSHALL failed".into()),
        }
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
