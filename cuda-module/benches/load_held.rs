//! The default path held under load: threads that each link a program,
//! load it, launch its kernel and check every number, again and again,
//! for a while; with unique programs (every link a miss) and with 16
//! programs repeated (our in-memory tier answers), through the isolated
//! linker (the default) and in-process. `cargo xtask test-gpu` bundles it;
//! `load_held.sh` runs it in both loading modes.
//!
//! `load_held SECONDS THREADS` prints one row per configuration: rounds a
//! second, the round's p50 and p99, failures and wrong numbers, and what
//! the process holds before and after (RSS, descriptors) and at the end
//! (live link workers, zombies, and the bytes our in-memory tier holds:
//! it keeps up to 256 MiB of outputs by default).

use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use cuda_link::{Isolation, Linker, LinkerOptions, ObjectCode, OutputKind};
use cuda_module::{Context, DeviceBuffer, LaunchConfig, Library};

/// `saxpy(float a, const float *x, float *y, int n)`.
const SAXPY_PTX: &str = include_str!("../examples/saxpy.ptx");

/// Elements per launch.
const N: usize = 4096;

/// Programs cycled through when programs repeat.
const REPEATED: usize = 16;

/// The PTX of program `n`: saxpy under its own kernel name, so that no
/// two unique programs are the same input to any cache.
fn program(n: usize) -> (String, String) {
    let name = format!("saxpy_{n}");
    (
        SAXPY_PTX.replace(".entry saxpy(", &format!(".entry {name}(")),
        name,
    )
}

/// One round: link, load, launch, copy back and check; the wrong
/// numbers, or what failed.
fn round(
    context: &Context,
    options: &LinkerOptions,
    n: usize,
    x: &DeviceBuffer,
    xs: &[f32],
) -> Result<usize, String> {
    let (ptx, name) = program(n);
    let mut linker = Linker::new(options.clone()).map_err(|e| e.to_string())?;
    let input = ObjectCode::from_ptx(ptx, format!("{name}.ptx")).map_err(|e| e.to_string())?;
    linker.add(&input).map_err(|e| e.to_string())?;
    let cubin = linker.link(OutputKind::Cubin).map_err(|e| e.to_string())?;
    let library = Library::load(&cubin).map_err(|e| e.to_string())?;
    let kernel = library.kernel(&name).map_err(|e| e.to_string())?;
    let a = (n % 7) as f32 + 1.0;
    let y = DeviceBuffer::from_slice(context, &vec![1.0f32; N]).map_err(|e| e.to_string())?;
    let (mut a_arg, mut x_arg, mut y_arg, mut n_arg) = (a, x.pointer(), y.pointer(), N as i32);
    let mut params: [*mut c_void; 4] = [
        (&raw mut a_arg).cast(),
        (&raw mut x_arg).cast(),
        (&raw mut y_arg).cast(),
        (&raw mut n_arg).cast(),
    ];
    let config = LaunchConfig::for_elements(N as u32, 256);
    // SAFETY: one value of each of saxpy's parameter types; x and y hold N
    // floats each, and the kernel stays within n = N.
    unsafe { kernel.launch(context, std::ptr::null_mut(), config, &mut params) }
        .map_err(|e| e.to_string())?;
    cuda_module::synchronize(context).map_err(|e| e.to_string())?;
    let ys: Vec<f32> = y.to_vec().map_err(|e| e.to_string())?;
    // Exact: a * i + 1 stays below 2^24 for i < 4096 and a <= 7.
    Ok((0..N).filter(|&i| ys[i] != a * xs[i] + 1.0).count())
}

/// What the process holds: resident memory (KiB) and open descriptors.
fn held() -> (u64, usize) {
    let rss = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("VmRSS:"))
                .and_then(|kib| kib.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0);
    let fds = std::fs::read_dir("/proc/self/fd").map_or(0, Iterator::count);
    (rss, fds)
}

/// This process's children: (alive, zombies).
fn children() -> (usize, usize) {
    let mut pids = Vec::new();
    for task in std::fs::read_dir("/proc/self/task")
        .into_iter()
        .flatten()
        .flatten()
    {
        let listed = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
        pids.extend(listed.split_whitespace().map(str::to_owned));
    }
    let zombie = |pid: &String| {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|stat| {
                stat.rsplit_once(") ")
                    .map(|(_, rest)| rest.starts_with('Z'))
            })
            .unwrap_or(false)
    };
    let zombies = pids.iter().filter(|pid| zombie(pid)).count();
    (pids.len() - zombies, zombies)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let at = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[at] * 1e3
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let seconds: u64 = args.first().and_then(|s| s.parse().ok()).unwrap_or(60);
    let threads: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(8);
    let context = Context::primary(0).expect("a GPU");
    let arch = {
        let _current = context.make_current().expect("current");
        cuda_link::current_device_arch().expect("the device's arch")
    };
    let mode = cuda_module::loading_mode().expect("the loading mode");
    let xs: Vec<f32> = (0..N).map(|i| i as f32).collect();
    let x = DeviceBuffer::from_slice(&context, &xs).expect("x");
    let configs = [
        ("unique", "isolated", Isolation::process()),
        ("repeated", "isolated", Isolation::process()),
        ("unique", "in-process", Isolation::InProcess),
        ("repeated", "in-process", Isolation::InProcess),
    ];
    println!(
        "| mode | programs | linker | threads | s | rounds/s | p50 ms | p99 ms | failed | wrong | \
         RSS MiB before → after | fds before → after | workers, zombies after | tier MiB after |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let next_unique = AtomicUsize::new(REPEATED);
    for (programs, linker, isolation) in configs {
        let options = LinkerOptions::for_arch(arch).isolation(isolation);
        // Warm-up: the library loaded, a worker started, the repeated
        // programs linked once.
        for n in 0..REPEATED {
            let _ = round(&context, &options, n, &x, &xs);
        }
        let before = held();
        let failed = AtomicUsize::new(0);
        let wrong = AtomicUsize::new(0);
        let start = Instant::now();
        let deadline = start + Duration::from_secs(seconds);
        let latencies: Vec<Vec<f64>> = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads)
                .map(|thread| {
                    let (context, options, x, xs) = (&context, &options, &x, &xs);
                    let (failed, wrong, next_unique) = (&failed, &wrong, &next_unique);
                    scope.spawn(move || {
                        let _current = context.make_current().expect("current");
                        let mut times = Vec::new();
                        let mut turn = thread;
                        while Instant::now() < deadline {
                            let n = match programs {
                                "unique" => next_unique.fetch_add(1, Ordering::Relaxed),
                                _ => turn % REPEATED,
                            };
                            turn += 1;
                            let began = Instant::now();
                            match round(context, options, n, x, xs) {
                                Ok(0) => {}
                                Ok(bad) => {
                                    wrong.fetch_add(bad, Ordering::Relaxed);
                                }
                                Err(error) => {
                                    if failed.fetch_add(1, Ordering::Relaxed) == 0 {
                                        eprintln!("{programs} {linker}: {error}");
                                    }
                                }
                            }
                            times.push(began.elapsed().as_secs_f64());
                        }
                        times
                    })
                })
                .collect();
            workers
                .into_iter()
                .map(|worker| worker.join().expect("a thread"))
                .collect()
        });
        let elapsed = start.elapsed().as_secs_f64();
        let mut all: Vec<f64> = latencies.into_iter().flatten().collect();
        all.sort_by(f64::total_cmp);
        let after = held();
        let (workers, zombies) = children();
        println!(
            "| {mode:?} | {programs} | {linker} | {threads} | {elapsed:.0} | {:.0} | {:.2} | {:.2} \
             | {} | {} | {} → {} | {} → {} | {workers}, {zombies} | {} |",
            all.len() as f64 / elapsed,
            percentile(&all, 0.5),
            percentile(&all, 0.99),
            failed.load(Ordering::Relaxed),
            wrong.load(Ordering::Relaxed),
            before.0 / 1024,
            after.0 / 1024,
            before.1,
            after.1,
            cuda_link::MemoryCache::stats().bytes >> 20,
        );
    }
}
