//! A progress line for work that runs longer than a second, on a terminal
//! only: quiet on success, as nvcc is, and nothing in pipes or logs.

use std::io::IsTerminal as _;
use std::sync::mpsc;
use std::time::Duration;

/// Runs `work`; if it takes over a second and stderr is a terminal, shows
/// `step` with the elapsed time until it ends.
pub fn while_running<T>(step: &str, work: impl FnOnce() -> T) -> T {
    if !std::io::stderr().is_terminal() {
        return work();
    }
    let (done, finished) = mpsc::channel::<()>();
    let message = step.to_owned();
    let spinner = std::thread::spawn(move || {
        if finished.recv_timeout(Duration::from_secs(1)) != Err(mpsc::RecvTimeoutError::Timeout) {
            return;
        }
        let bar = indicatif::ProgressBar::new_spinner().with_message(message);
        if let Ok(style) = indicatif::ProgressStyle::with_template("{spinner} {elapsed} {msg}") {
            bar.set_style(style);
        }
        bar.enable_steady_tick(Duration::from_millis(120));
        let _ = finished.recv();
        bar.finish_and_clear();
    });
    let result = work();
    drop(done);
    let _ = spinner.join();
    result
}
