//! What the public calls answer: attributes as the driver gives them,
//! globals of the context asked for, launches with cudarc's configuration.

use cuda_driver_sys::sys::{CUfunction_attribute as A, CUresult};

use super::{created, current, depth, kernel};
use crate::context::Context;
use crate::error::ModuleError;
use crate::library::LoadOptions;

/// Each field is its own attribute (the stub answers `1000 + attribute`);
/// the yes-or-no ones are `bool`s, true for any non-zero answer.
#[test]
fn attributes_are_the_drivers_with_flags_as_bools() {
    let context = created();
    let (_library, saxpy) = kernel("saxpy", LoadOptions::default());
    let attributes = saxpy.attributes(&context).unwrap();
    let value = |attribute: A| 1000 + attribute.0 as i32;
    assert_eq!(
        attributes.max_threads_per_block,
        value(A::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
    );
    assert_eq!(attributes.num_regs, value(A::CU_FUNC_ATTRIBUTE_NUM_REGS));
    assert_eq!(
        attributes.required_cluster_depth,
        value(A::CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH)
    );
    assert_eq!(
        attributes.cluster_scheduling_policy_preference,
        value(A::CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE)
    );
    assert!(attributes.cache_mode_ca);
    assert!(attributes.cluster_size_must_be_set);
    assert!(attributes.non_portable_cluster_size_allowed);
}

/// `Library::global` answers for the context it is given, pushed for the
/// call and popped after it, whatever was current before; after a module
/// fallback, only the module's context has the global.
#[test]
fn a_global_is_the_given_contexts() {
    let (library, _) = kernel("saxpy", LoadOptions::default());
    let (first, second) = (Context::primary(0).unwrap(), Context::primary(1).unwrap());
    for outer in [Some(created()), None] {
        let before = outer.as_ref().map_or(std::ptr::null_mut(), Context::as_raw);
        let before_depth = depth();
        // The stub puts a global at its context's id << 16; primary
        // contexts of devices 0 and 1 have ids 1 and 2.
        assert_eq!(library.global(&first, "bias").unwrap(), (1 << 16, 4));
        assert_eq!(library.global(&second, "bias").unwrap(), (2 << 16, 4));
        let error = library.global(&first, "missing").unwrap_err();
        assert!(
            matches!(
                &error,
                ModuleError::Call { call: "cuLibraryGetGlobal", error, symbol: Some(symbol), .. }
                    if error.result == CUresult::CUDA_ERROR_NOT_FOUND && &**symbol == "missing"
            ),
            "{error}"
        );
        assert_eq!((current(), depth()), (before, before_depth));
    }

    let home = created();
    let module_api = LoadOptions::default().force_module_api(true);
    let (module, _) = kernel("saxpy", module_api);
    let (address, size) = module.global(&home, "bias").unwrap();
    assert_eq!(size, 4);
    let other = created();
    let error = module.global(&other, "bias").unwrap_err();
    assert!(
        matches!(&error, ModuleError::ForeignContext { kernel, library }
            if kernel == "bias" && library == "saxpy.ptx"),
        "{error}"
    );
    assert!(
        error.to_string().starts_with("`bias` of saxpy.ptx"),
        "{error}"
    );
    // The module's context, through any `Context` of it, still has it.
    assert_eq!(module.global(&home, "bias").unwrap(), (address, 4));
    assert_eq!(current(), other.as_raw());
}

/// Launches take cudarc's `LaunchConfig` as well as ours.
#[cfg(feature = "cudarc")]
#[test]
fn a_launch_takes_cudarcs_config() {
    let context = created();
    let (_library, saxpy) = kernel("saxpy", LoadOptions::default());
    let config = cudarc::driver::LaunchConfig::for_num_elems(1000);
    // SAFETY: the stub driver reads no parameter and runs nothing.
    unsafe { saxpy.launch(&context, std::ptr::null_mut(), config, &mut []) }.unwrap();
    assert_eq!(super::last_launch_context(), context.as_raw());
    let ours = crate::LaunchConfig::from(config);
    assert_eq!(
        (ours.grid_dim, ours.block_dim, ours.shared_mem_bytes),
        (config.grid_dim, config.block_dim, config.shared_mem_bytes)
    );
}

/// A failed call's error names the symbol called, as the driver's table
/// resolved it: versioned where the table is (`cuModuleGetGlobal_v2`, which
/// `cuda.h`'s `cuModuleGetGlobal` stands for).
#[test]
fn a_failed_call_names_the_symbol_the_table_resolved() {
    let home = created();
    let (library, _) = kernel("saxpy", LoadOptions::default());
    let (module, _) = kernel("saxpy", LoadOptions::default().force_module_api(true));
    for (loaded, symbol) in [
        (&library, "cuLibraryGetGlobal"),
        (&module, "cuModuleGetGlobal_v2"),
    ] {
        let error = loaded.global(&home, "missing").unwrap_err();
        let ModuleError::Call { call, .. } = &error else {
            panic!("{error:?}")
        };
        assert_eq!(*call, symbol);
        assert!(
            cuda_driver_sys::DriverFns::SYMBOLS
                .iter()
                .any(|name| name.to_bytes() == call.as_bytes()),
            "{call} is a symbol of the table"
        );
        let expected = format!("{symbol} failed with CUDA_ERROR_NOT_FOUND");
        assert!(error.to_string().starts_with(&expected), "{error}");
    }
}
