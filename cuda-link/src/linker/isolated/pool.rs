//! The idle workers of this process, and the thread that forks new ones.
//!
//! `fork()` copies every static, this pool included: a child of the
//! caller would find its parent's workers here, and two processes sharing
//! one worker's socket and memory read each other's answers. So the pool
//! records the process it belongs to; a process that finds another's pool
//! lets those workers go (closing its copies, signalling nothing) and
//! starts its own.
//!
//! Workers are forked from one thread kept for the life of the process:
//! the parent-death signal that ends a worker with its caller fires when
//! the thread that forked it ends, and a caller's threads may be short
//! lived.

use std::sync::mpsc::{Sender, SyncSender, channel, sync_channel};
use std::sync::{Mutex, MutexGuard};

use super::super::LinkError;
use super::Library;
use super::process::Worker;

/// Idle workers kept beyond this are stopped.
const MAX_IDLE: usize = 8;
/// The spawning thread's stack: nvJitLink and libNVVM run on it in the workers, as
/// it would on a program's main thread.
const SPAWNER_STACK: usize = 64 << 20;

/// What this process owns: its idle workers, any library's, and the
/// spawning thread's queue.
struct Pool {
    owner: crate::forks::Owner,
    idle: Vec<Worker>,
    spawner: Option<Sender<SpawnRequest>>,
}

type SpawnRequest = (Library, SyncSender<Result<Worker, LinkError>>);

static POOL: Mutex<Pool> = Mutex::new(Pool {
    owner: crate::forks::Owner::NONE,
    idle: Vec::new(),
    spawner: None,
});

// Every fork of this process happens while the forking thread holds the
// pool's lock (see `forks`).
hold_across_forks!(hold_across_forks, POOL, Pool);

/// The pool, made this process's own first if a fork copied another's.
fn pool() -> MutexGuard<'static, Pool> {
    hold_across_forks();
    let mut pool = POOL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let owner = crate::forks::Owner::current();
    if pool.owner != owner {
        for worker in pool.idle.drain(..) {
            worker.disown();
        }
        // The spawning thread was the parent's; a fork copied none.
        if let Some(queue) = pool.spawner.take() {
            std::mem::forget(queue);
        }
        pool.owner = owner;
    }
    pool
}

/// An idle worker of `lib` that is still alive, or a new one.
pub(super) fn take(lib: &Library) -> Result<Worker, LinkError> {
    let mut pool = pool();
    while let Some(at) = pool.idle.iter().position(|w| w.lib.is(lib)) {
        let worker = pool.idle.swap_remove(at);
        if worker.is_alive() {
            return Ok(worker);
        }
        // Killed from outside while idle: reaped (it cannot be signalled
        // by mistake, see `process`).
        worker.stop();
    }
    let queue = match &pool.spawner {
        Some(queue) => queue.clone(),
        None => {
            let queue = start_spawner()?;
            pool.spawner = Some(queue.clone());
            queue
        }
    };
    drop(pool);
    let (answer, answered) = sync_channel(1);
    let spawned = queue
        .send((lib.clone(), answer))
        .ok()
        .and_then(|()| answered.recv().ok());
    match spawned {
        Some(worker) => worker,
        None => {
            // The thread is gone (it cannot be, short of a bug): the next
            // link starts another.
            self::pool().spawner = None;
            Err(spawner_gone())
        }
    }
}

/// Back to the pool; when it is full, the longest idle worker stops, so
/// a library that is linked again finds its worker. A worker another
/// process forked (this one's parent) is let go instead.
pub(super) fn put_back(worker: Worker) {
    let mut pool = pool();
    if worker.owner() != pool.owner.pid {
        drop(pool);
        worker.disown();
        return;
    }
    let oldest = (pool.idle.len() >= MAX_IDLE).then(|| pool.idle.remove(0));
    pool.idle.push(worker);
    drop(pool);
    if let Some(oldest) = oldest {
        oldest.stop();
    }
}

/// Starts the thread that forks workers for this process.
fn start_spawner() -> Result<Sender<SpawnRequest>, LinkError> {
    let (queue, requests) = channel::<SpawnRequest>();
    std::thread::Builder::new()
        .name("cuda-link-spawn".into())
        .stack_size(SPAWNER_STACK)
        .spawn(move || {
            for (lib, answer) in requests {
                let _ = answer.send(Worker::spawn(&lib));
            }
        })
        .map_err(|error| LinkError::Isolation {
            detail: format!("cannot start the thread that forks link workers: {error}"),
        })?;
    Ok(queue)
}

fn spawner_gone() -> LinkError {
    LinkError::Isolation {
        detail: "the thread that forks link workers is gone".into(),
    }
}
