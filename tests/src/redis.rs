//! A real `redis-server` for the remote cache's tests, on a free port of
//! its own, stopped when dropped. CI installs it (`.ci/run`, apt) and sets
//! `CUDA_LINK_REQUIRE_REDIS`, which turns a missing server into a failure
//! instead of a skip.

use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A running `redis-server`.
pub struct RedisServer {
    child: Option<Child>,
    port: u16,
    _dir: tempfile::TempDir,
}

impl RedisServer {
    /// Starts a server that keeps nothing on disk; `None` (a skip) when
    /// `redis-server` is not installed and the run does not require it.
    pub fn start() -> Option<RedisServer> {
        Self::start_with(&[])
    }

    /// As [`start`](Self::start), with more of `redis-server`'s options
    /// (`--requirepass`, ...).
    pub fn start_with(options: &[&str]) -> Option<RedisServer> {
        let Some(server) = find("redis-server") else {
            if std::env::var_os("CUDA_LINK_REQUIRE_REDIS").is_some() {
                panic!("redis-server is not on PATH although CUDA_LINK_REQUIRE_REDIS is set");
            }
            crate::skip("redis-server is not on PATH (apt-get install redis-server)");
            return None;
        };
        // Another process may take the port between the probe and the
        // server's bind: then the server exits and another port is tried.
        for _ in 0..5 {
            let dir = tempfile::tempdir().expect("a temporary folder");
            let port = free_port();
            let child = Command::new(&server)
                .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
                .args(["--save", "", "--appendonly", "no", "--dir"])
                .arg(dir.path())
                .args(options)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("redis-server starts");
            let mut running = RedisServer {
                child: Some(child),
                port,
                _dir: dir,
            };
            if running.wait_until_up(Duration::from_secs(10)) {
                return Some(running);
            }
        }
        panic!("redis-server did not start on any of 5 free ports");
    }

    /// `redis://127.0.0.1:PORT/0`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Runs `redis-cli` against this server.
    pub fn cli(&self, args: &[&str]) -> Output {
        let cli = find("redis-cli").expect("redis-cli comes with redis-server");
        Command::new(cli)
            .args(["-p", &self.port.to_string()])
            .args(args)
            .output()
            .expect("redis-cli runs")
    }

    /// The keys stored, sorted.
    pub fn keys(&self) -> Vec<String> {
        let out = self.cli(&["--scan"]);
        let mut keys: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_owned)
            .collect();
        keys.sort();
        keys
    }

    /// Sends `signal` to the server (`SIGSTOP` hangs it: connections are
    /// still accepted, nothing is answered; `SIGCONT` resumes it).
    pub fn signal(&self, signal: i32) {
        if let Some(child) = &self.child {
            // SAFETY: our child, not yet reaped (`stop` takes it).
            unsafe { libc::kill(child.id() as i32, signal) };
        }
    }

    /// Stops the server now; the URL then refuses connections.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    fn wait_until_up(&mut self, within: Duration) -> bool {
        let start = Instant::now();
        while start.elapsed() < within {
            if let Some(child) = self.child.as_mut()
                && let Ok(Some(_)) = child.try_wait()
            {
                return false;
            }
            if TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A port free now.
pub fn free_port() -> u16 {
    TcpListener::bind(("127.0.0.1", 0))
        .and_then(|listener| listener.local_addr())
        .map(|addr| addr.port())
        .expect("a free port")
}

/// `name` on `PATH`.
fn find(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|candidate| candidate.is_file())
    })
}
