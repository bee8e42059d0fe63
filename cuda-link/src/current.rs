//! The thread's list of guards that made a context current, shared by
//! `cuda_link::DeviceContext` and `cuda_module::CurrentGuard`, so the two
//! nest in the order they are made, whatever order they are dropped in.
//! Contexts are kept as untyped pointers: this module never calls the
//! driver (it is in the data layer, built without one). Not part of the API.

use std::cell::RefCell;
use std::ffi::c_void;

thread_local! {
    /// The live guards of this thread, oldest first.
    static GUARDS: RefCell<Guards> = const { RefCell::new(Guards::new()) };
}

/// A thread's live guards, oldest first, each with the context to restore
/// when it is the newest one to drop.
#[derive(Debug)]
struct Guards {
    next_token: u64,
    entries: Vec<(u64, *mut c_void)>,
}

impl Guards {
    const fn new() -> Self {
        Guards {
            next_token: 0,
            entries: Vec::new(),
        }
    }
}

/// A guard's place in the thread's list, from [`push`]; [`release`]
/// takes it back. Not `Copy`, `Clone` or constructible elsewhere, so only
/// what `push` was given ever comes back.
#[derive(Debug)]
pub struct Token(u64);

/// Records a new guard, made while `previous` was current.
///
/// # Safety
/// `previous` must be null or a context that was current on this thread:
/// [`release`] may hand it back, and the callers make it current again
/// with `cuCtxSetCurrent`, which trusts a non-null handle to be a context.
pub unsafe fn push(previous: *mut c_void) -> Token {
    GUARDS.with(|guards| {
        let mut guards = guards.borrow_mut();
        let token = guards.next_token;
        guards.next_token += 1;
        guards.entries.push((token, previous));
        Token(token)
    })
}

/// Removes the guard of `token`: the context to make current now if it
/// was the newest, `None` if a newer guard lives on (and inherits what
/// this one would have restored). While the thread's locals are being
/// destroyed, `previous` (what the guard itself saw).
pub fn release(token: Token, previous: *mut c_void) -> Option<*mut c_void> {
    GUARDS
        .try_with(|guards| {
            let mut guards = guards.borrow_mut();
            let index = guards.entries.iter().position(|&(t, _)| t == token.0)?;
            let (_, restore) = guards.entries.remove(index);
            match guards.entries.get_mut(index) {
                Some((_, newer)) => {
                    *newer = restore;
                    None
                }
                None => Some(restore),
            }
        })
        .unwrap_or(Some(previous))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A thread's current context as the driver would keep it, under
    /// guards that act as `make_current` and `drop` do.
    struct Thread {
        current: usize,
    }

    fn handle(n: usize) -> *mut c_void {
        std::ptr::without_provenance_mut(n)
    }

    impl Thread {
        fn make_current(&mut self, context: usize) -> Token {
            // SAFETY: the pointers are never made current; only compared.
            let token = unsafe { push(handle(self.current)) };
            self.current = context;
            token
        }

        fn drop_guard(&mut self, token: Token) {
            if let Some(context) = release(token, handle(0)) {
                self.current = context.addr();
            }
        }
    }

    #[test]
    fn guards_dropped_out_of_order_restore_the_first_previous() {
        let mut thread = Thread { current: 7 };
        let a = thread.make_current(1);
        let b = thread.make_current(2);
        thread.drop_guard(a);
        assert_eq!(thread.current, 2, "B lives: its context stays current");
        thread.drop_guard(b);
        assert_eq!(thread.current, 7, "what was current before A");
        assert!(GUARDS.with(|guards| guards.borrow().entries.is_empty()));
    }

    /// For every drop order of four guards, the current context is always
    /// the newest live guard's, or the original once none is left.
    #[test]
    fn every_drop_order_keeps_the_newest_guard_current() {
        fn orders(items: Vec<usize>) -> Vec<Vec<usize>> {
            if items.len() <= 1 {
                return vec![items];
            }
            let mut all = Vec::new();
            for i in 0..items.len() {
                let mut rest = items.clone();
                let first = rest.remove(i);
                for mut order in orders(rest) {
                    order.insert(0, first);
                    all.push(order);
                }
            }
            all
        }
        for order in orders(vec![0, 1, 2, 3]) {
            let mut thread = Thread { current: 100 };
            // Guard i makes context 10 + i current.
            let mut tokens: Vec<Option<Token>> =
                (0..4).map(|i| Some(thread.make_current(10 + i))).collect();
            let mut live = [true; 4];
            for &i in &order {
                thread.drop_guard(tokens[i].take().unwrap());
                live[i] = false;
                let expected = live
                    .iter()
                    .rposition(|&l| l)
                    .map_or(100, |newest| 10 + newest);
                assert_eq!(thread.current, expected, "drop order {order:?}");
            }
        }
    }

    #[test]
    fn a_released_guard_restores_what_it_saw() {
        // SAFETY: the pointer is never made current; only compared.
        let token = unsafe { push(handle(1)) };
        assert_eq!(release(token, handle(9)), Some(handle(1)));
        assert!(GUARDS.with(|guards| guards.borrow().entries.is_empty()));
    }
}
