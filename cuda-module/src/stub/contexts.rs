//! Contexts: pushed ones are popped on every path, launches leave the
//! thread's current context as it was, and a module's kernel serves only
//! the context the module was loaded into.

use std::panic::AssertUnwindSafe;

use cuda_driver_sys::sys::CUfunction_attribute as A;

use cuda_driver_sys::sys::CUresult;

use super::{created, current, depth, driver, kernel, last_launch_context, synchronizations};
use crate::context::Context;
use crate::error::ModuleError;
use crate::launch::LaunchConfig;
use crate::library::LoadOptions;

const CONFIG: LaunchConfig = LaunchConfig {
    grid_dim: (2, 1, 1),
    block_dim: (128, 1, 1),
    shared_mem_bytes: 0,
};

#[test]
fn with_current_pops_when_the_closure_panics_or_fails() {
    let outer = created();
    let inner = Context::primary(0).unwrap();
    let unwound = std::panic::catch_unwind(AssertUnwindSafe(|| {
        inner.with_current(|| -> Result<(), ModuleError> {
            assert_eq!(current(), inner.as_raw());
            panic!("a panic inside with_current");
        })
    }));
    assert!(unwound.is_err());
    assert_eq!(current(), outer.as_raw());
    assert_eq!(depth(), 1);

    let failed = inner.with_current(|| Err::<(), _>(ModuleError::BadName("x".into())));
    assert!(matches!(failed, Err(ModuleError::BadName(_))));
    assert_eq!(current(), outer.as_raw());
    assert_eq!(depth(), 1);
}

/// A context already current is used as it is: nothing is pushed, and it
/// stays current after the call, also when the call fails.
#[test]
fn with_current_runs_in_place_when_the_context_is_current() {
    let context = created();
    let seen = context.with_current(|| Ok((current(), depth()))).unwrap();
    assert_eq!(seen, (context.as_raw(), 1));
    let failed = context.with_current(|| Err::<(), _>(ModuleError::BadName("x".into())));
    assert!(matches!(failed, Err(ModuleError::BadName(_))));
    assert_eq!((current(), depth()), (context.as_raw(), 1));
}

/// `Kernel::launch` pushes the launch's context and pops it, whether the
/// launch succeeds or fails, with a context current before it or none.
#[test]
fn a_launch_restores_the_current_context() {
    let inner = Context::primary(0).unwrap();
    let (_library, saxpy) = kernel("saxpy", LoadOptions::default());
    let (_failing_library, failing) = kernel("fails_launch", LoadOptions::default());
    for outer in [Some(created()), None] {
        let before = outer.as_ref().map_or(std::ptr::null_mut(), Context::as_raw);
        let before_depth = depth();
        // SAFETY: the stub driver reads no parameter and runs nothing.
        unsafe { saxpy.launch(&inner, std::ptr::null_mut(), CONFIG, &mut []) }.unwrap();
        assert_eq!(last_launch_context(), inner.as_raw());
        assert_eq!((current(), depth()), (before, before_depth));

        // SAFETY: as above.
        let error =
            unsafe { failing.launch(&inner, std::ptr::null_mut(), CONFIG, &mut []) }.unwrap_err();
        assert!(
            matches!(
                error,
                ModuleError::Call {
                    call: "cuLaunchKernel",
                    ..
                }
            ),
            "{error}"
        );
        assert_eq!(last_launch_context(), inner.as_raw());
        assert_eq!((current(), depth()), (before, before_depth));

        crate::synchronize(&inner).unwrap();
        assert_eq!((current(), depth()), (before, before_depth));
    }
}

/// Unloading waits for the contexts a kernel was launched in, each once
/// however many launches, and for no context where nothing was launched.
#[test]
fn unloading_waits_only_where_a_kernel_was_launched() {
    let context = created();
    let other = Context::primary(1).unwrap();
    let (library, saxpy) = kernel("saxpy", LoadOptions::default());
    saxpy.function(&context).unwrap();
    let before = synchronizations();
    drop((library, saxpy));
    assert_eq!(synchronizations(), before, "nothing was launched");

    let (library, saxpy) = kernel("saxpy", LoadOptions::default());
    for launched_in in [&context, &other, &context, &other] {
        // SAFETY: the stub driver reads no parameter and runs nothing.
        unsafe { saxpy.launch(launched_in, std::ptr::null_mut(), CONFIG, &mut []) }.unwrap();
    }
    let before = synchronizations();
    drop(saxpy);
    assert_eq!(
        synchronizations(),
        before,
        "the library still holds the code"
    );
    drop(library);
    assert_eq!(synchronizations(), before + 2, "one wait per context");

    // After a fallback to the module API too.
    let (library, saxpy) = kernel("saxpy", LoadOptions::default().force_module_api(true));
    // SAFETY: as above.
    unsafe { saxpy.launch(&context, std::ptr::null_mut(), CONFIG, &mut []) }.unwrap();
    let before = synchronizations();
    drop((library, saxpy));
    assert_eq!(
        synchronizations(),
        before + 1,
        "a module's launches are waited for"
    );
}

/// After a fallback to the module API, a kernel's function belongs to the
/// context current at load time; asked for in another, it is a typed
/// error, for lookups, attributes and launches alike.
#[test]
fn a_module_kernel_refuses_other_contexts() {
    let options = LoadOptions::default().force_module_api(true);
    let home = created();
    let (library, saxpy) = kernel("saxpy", options);
    assert!(library.is_module());
    let function = saxpy.function(&home).unwrap();

    let other = created();
    let foreign = |result: Result<(), ModuleError>| match result {
        Err(ModuleError::ForeignContext { kernel, library }) => {
            assert_eq!((kernel.as_str(), library.as_str()), ("saxpy", "saxpy.ptx"))
        }
        other => panic!("expected ForeignContext, got {other:?}"),
    };
    let error = saxpy.function(&other).map(drop).unwrap_err();
    assert!(
        error.to_string().contains("into another context"),
        "{error}"
    );
    foreign(Err(error));
    foreign(
        saxpy
            .attribute(&other, A::CU_FUNC_ATTRIBUTE_NUM_REGS)
            .map(drop),
    );
    foreign(saxpy.set_max_dynamic_shared_size_bytes(&other, 1024));
    foreign(saxpy.max_potential_block_size(&other, 0, 0).map(drop));
    // SAFETY: refused before the driver is called.
    foreign(unsafe { saxpy.launch(&other, std::ptr::null_mut(), CONFIG, &mut []) });
    assert_eq!((current(), depth()), (other.as_raw(), 2));

    // The home context, through any `Context` of it, still gets it.
    assert_eq!(saxpy.function(&home).unwrap(), function);
    // SAFETY: the stub driver reads no parameter and runs nothing.
    unsafe { saxpy.launch(&home, std::ptr::null_mut(), CONFIG, &mut []) }.unwrap();
    assert_eq!(last_launch_context(), home.as_raw());
    drop(other);
    let primary = Context::primary(1).unwrap();
    let _current = primary.make_current().unwrap();
    let (_library, on_primary) = kernel("saxpy", options);
    let again = Context::primary(1).unwrap();
    on_primary.function(&again).unwrap();
    foreign(on_primary.function(&home).map(drop));

    // The library API's kernels serve every context.
    let (_library, shared) = kernel("saxpy", LoadOptions::default());
    for context in [&home, &primary] {
        shared.function(context).unwrap();
    }
}

/// `make_current` makes its context current until the guard drops, which
/// makes current again what was current before: none, or another context;
/// this crate's own calls, which push and pop, nest inside a guard.
#[test]
fn a_current_guard_restores_the_previous_context() {
    let context = Context::primary(0).unwrap();
    let other = Context::primary(1).unwrap();
    assert_eq!((current(), depth()), (std::ptr::null_mut(), 0));
    {
        let _current = context.make_current().unwrap();
        assert_eq!((current(), depth()), (context.as_raw(), 1));
        crate::synchronize(&other).unwrap();
        assert_eq!((current(), depth()), (context.as_raw(), 1));
    }
    assert_eq!((current(), depth()), (std::ptr::null_mut(), 0));

    let outer = created();
    {
        let _current = context.make_current().unwrap();
        assert_eq!((current(), depth()), (context.as_raw(), 1));
        {
            let _nested = other.make_current().unwrap();
            assert_eq!((current(), depth()), (other.as_raw(), 1));
        }
        assert_eq!(current(), context.as_raw());
    }
    assert_eq!((current(), depth()), (outer.as_raw(), 1));
}

/// Guards dropped out of the order they were made in still leave current
/// the newest live guard's context, and at the end what was current before
/// the first, as cuda-link's `DeviceContext` does.
#[test]
fn current_guards_dropped_out_of_order_restore_the_first_previous() {
    let outer = created();
    let (a, b) = (Context::primary(0).unwrap(), Context::primary(1).unwrap());
    let guard_a = a.make_current().unwrap();
    let guard_b = b.make_current().unwrap();
    drop(guard_a);
    assert_eq!(current(), b.as_raw(), "B's guard lives: its context stays");
    drop(guard_b);
    assert_eq!((current(), depth()), (outer.as_raw(), 1));

    // Three, the middle one first.
    let c = Context::primary(2).unwrap();
    let guards = [&a, &b, &c].map(|context| Some(context.make_current().unwrap()));
    let [mut guard_a, mut guard_b, mut guard_c] = guards;
    guard_b.take();
    assert_eq!(current(), c.as_raw());
    guard_c.take();
    assert_eq!(
        current(),
        a.as_raw(),
        "A's guard lives: its context is back"
    );
    guard_a.take();
    assert_eq!((current(), depth()), (outer.as_raw(), 1));
}

/// A guard keeps its context alive: a created context whose `Context` is
/// dropped while it is current is destroyed only after the guard restored
/// the previous one.
#[test]
fn a_current_guard_keeps_its_context_alive() {
    let outer = created();
    let inner = Context::create(0).unwrap();
    let raw = inner.as_raw();
    let is_alive = || {
        let mut id = 0;
        // SAFETY: an out-pointer; the stub never frees a context, so the
        // handle may be asked about after its end.
        let status = unsafe { driver().cuCtxGetId(raw, &mut id) }.unwrap();
        status == CUresult::CUDA_SUCCESS
    };
    let guard = inner.make_current().unwrap();
    drop(inner);
    assert!(is_alive());
    assert_eq!(current(), raw);
    drop(guard);
    assert!(!is_alive(), "destroyed with the guard, its last holder");
    assert_eq!((current(), depth()), (outer.as_raw(), 1));
}
