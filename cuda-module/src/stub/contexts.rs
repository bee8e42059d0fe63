//! Contexts: pushed ones are popped on every path, launches leave the
//! thread's current context as it was, and a module's kernel serves only
//! the context the module was loaded into.

use std::panic::AssertUnwindSafe;

use cuda_driver_sys::sys::CUfunction_attribute as A;

use super::{created, current, depth, kernel, last_launch_context};
use crate::{Context, LaunchConfig, LoadOptions, ModuleError};

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

/// After a fallback to the module API, a kernel's function belongs to the
/// context current at load time; asked for in another, it is a typed
/// error, for lookups, attributes and launches alike.
#[test]
fn a_module_kernel_refuses_other_contexts() {
    let options = LoadOptions {
        force_module_api: true,
        ..LoadOptions::default()
    };
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
    primary.make_current().unwrap();
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
