//! [`PhaseTimes`]: a `tracing` subscriber that adds up the time spent in
//! each span, for the benches' phase tables (cuda-link's and cuda-module's
//! `tracing` feature).
//!
//! A span is keyed by its path of names from the outermost span entered on
//! its thread (`link/output/validate`), so a step that runs in two places
//! is told apart.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

thread_local! {
    /// The spans entered on this thread: their names and when.
    static ENTERED: RefCell<Vec<(&'static str, Instant)>> = const { RefCell::new(Vec::new()) };
}

#[derive(Default)]
struct State {
    names: HashMap<u64, &'static str>,
    next_id: u64,
    /// Per path: the time inside it and how many times it was entered.
    totals: BTreeMap<String, (Duration, u64)>,
}

/// Adds up span times; [`PhaseTimes::install`] makes it the global
/// subscriber and [`PhaseTimes::take`] reads and resets the totals.
#[derive(Clone, Default)]
pub struct PhaseTimes(Arc<Mutex<State>>);

impl PhaseTimes {
    /// A new recorder, the process's global subscriber from now on.
    /// Panics if another global subscriber was set first.
    pub fn install() -> Self {
        let times = PhaseTimes::default();
        tracing::subscriber::set_global_default(times.clone())
            .expect("no other global tracing subscriber");
        times
    }

    /// The totals since the last call, per span path, and resets them.
    pub fn take(&self) -> BTreeMap<String, (Duration, u64)> {
        std::mem::take(&mut self.state().totals)
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Subscriber for PhaseTimes {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let mut state = self.state();
        state.next_id += 1;
        let id = state.next_id;
        state.names.insert(id, span.metadata().name());
        Id::from_u64(id)
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, _: &Event<'_>) {}

    fn enter(&self, span: &Id) {
        let name = self.state().names.get(&span.into_u64()).copied();
        ENTERED.with_borrow_mut(|entered| {
            entered.push((name.unwrap_or("?"), Instant::now()));
        });
    }

    fn exit(&self, _: &Id) {
        let Some((path, elapsed)) = ENTERED.with_borrow_mut(|entered| {
            let (name, start) = entered.pop()?;
            let elapsed = start.elapsed();
            let mut path: Vec<&str> = entered.iter().map(|(name, _)| *name).collect();
            path.push(name);
            Some((path.join("/"), elapsed))
        }) else {
            return;
        };
        let mut state = self.state();
        let total = state.totals.entry(path).or_default();
        total.0 += elapsed;
        total.1 += 1;
    }

    fn try_close(&self, span: Id) -> bool {
        self.state().names.remove(&span.into_u64());
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_spans_are_keyed_by_their_path() {
        let times = PhaseTimes::default();
        tracing::subscriber::with_default(times.clone(), || {
            let outer = tracing::debug_span!("link").entered();
            for _ in 0..2 {
                let _inner = tracing::debug_span!("validate").entered();
                std::thread::sleep(Duration::from_millis(2));
            }
            drop(outer);
            let _alone = tracing::debug_span!("validate").entered();
        });
        let totals = times.take();
        let keys: Vec<&str> = totals.keys().map(String::as_str).collect();
        assert_eq!(keys, ["link", "link/validate", "validate"]);
        let (nested, count) = totals["link/validate"];
        assert_eq!(count, 2);
        assert!(nested >= Duration::from_millis(4));
        assert!(totals["link"].0 >= nested);
        assert!(times.take().is_empty(), "take resets");
    }
}
