//! Attribute, occupancy, global and parameter queries, which may compile
//! lazily loaded code, are made under the library's JIT log lock; the parameter
//! list a driver reports is bounded.

use cuda_driver_sys::sys::CUfunction_attribute as A;

use super::{created, driver, kernel, watched};
use crate::attributes::MAX_KERNEL_PARAMS;
use crate::error::ModuleError;
use crate::library::LoadOptions;

fn module_api() -> LoadOptions {
    LoadOptions::default().force_module_api(true)
}

/// Both ways of loading, each with the call its kernels make for `library`
/// and for `module`.
fn both<'a>(library: &'a str, module: &'a str) -> [(LoadOptions, &'a str); 2] {
    [(LoadOptions::default(), library), (module_api(), module)]
}

/// `calls` are `count` calls of `expected`, each made under the lock.
fn assert_locked(calls: &[(String, bool)], expected: &str, count: usize) {
    assert_eq!(calls.len(), count, "{calls:?}");
    for (call, held) in calls {
        assert_eq!(call, expected);
        assert!(held, "{call} was made without the JIT log lock");
    }
}

/// The check itself: a call made outside the lock is seen as such, and a
/// lookup, which has always taken it, as made under it.
#[test]
fn the_hook_tells_locked_from_unlocked_calls() {
    let context = created();
    let (_library, saxpy) = kernel("saxpy", LoadOptions::default());
    let crate::kernel::KernelHandle::Kernel(raw) = saxpy.inner.handle else {
        unreachable!("the library API gives kernels")
    };
    let calls = watched(&saxpy, || {
        let mut value = 0;
        // SAFETY: a kernel of the stub and an out-pointer.
        let status = unsafe {
            driver().cuKernelGetAttribute(&mut value, A::CU_FUNC_ATTRIBUTE_NUM_REGS, raw, 0)
        };
        assert_eq!(status, Ok(cuda_driver_sys::sys::CUresult::CUDA_SUCCESS));
    });
    assert_eq!(calls, [("cuKernelGetAttribute".to_owned(), false)]);
    let calls = watched(&saxpy, || {
        saxpy.function(&context).unwrap();
    });
    assert_locked(&calls, "cuKernelGetFunction", 1);
}

#[test]
fn attribute_queries_hold_the_jit_log_lock() {
    for (options, call) in both("cuKernelGetAttribute", "cuFuncGetAttribute") {
        let context = created();
        let (_library, saxpy) = kernel("saxpy", options);
        let calls = watched(&saxpy, || {
            let regs = saxpy
                .attribute(&context, A::CU_FUNC_ATTRIBUTE_NUM_REGS)
                .unwrap();
            assert_eq!(regs, 1000 + A::CU_FUNC_ATTRIBUTE_NUM_REGS.0 as i32);
        });
        assert_locked(&calls, call, 1);
        let calls = watched(&saxpy, || {
            saxpy.attributes(&context).unwrap();
        });
        assert_locked(&calls, call, 16);
    }
    for (options, call) in both("cuKernelSetAttribute", "cuFuncSetAttribute") {
        let context = created();
        let (_library, saxpy) = kernel("saxpy", options);
        let calls = watched(&saxpy, || {
            saxpy
                .set_max_dynamic_shared_size_bytes(&context, 65536)
                .unwrap()
        });
        assert_locked(&calls, call, 1);
    }
}

#[test]
fn occupancy_queries_hold_the_jit_log_lock() {
    for options in [LoadOptions::default(), module_api()] {
        let context = created();
        let (_library, saxpy) = kernel("saxpy", options);
        // Resolved first, so that only the queries' own calls are seen.
        saxpy.function(&context).unwrap();
        let calls = watched(&saxpy, || {
            let blocks = saxpy
                .max_active_blocks_per_multiprocessor(&context, 128, 0)
                .unwrap();
            assert_eq!(blocks, 8);
        });
        assert_locked(&calls, "cuOccupancyMaxActiveBlocksPerMultiprocessor", 1);
        let calls = watched(&saxpy, || {
            assert_eq!(
                saxpy.max_potential_block_size(&context, 0, 0).unwrap(),
                (132, 1024)
            );
        });
        assert_locked(&calls, "cuOccupancyMaxPotentialBlockSize", 1);
    }
}

/// `Library::global`, which may load the code into the context it is
/// given, holds the lock too.
#[test]
fn global_lookups_hold_the_jit_log_lock() {
    for (options, call) in both("cuLibraryGetGlobal", "cuModuleGetGlobal_v2") {
        let context = created();
        let (library, saxpy) = kernel("saxpy", options);
        let calls = watched(&saxpy, || {
            assert_eq!(library.global(&context, "bias").unwrap().1, 4);
        });
        assert_locked(&calls, call, 1);
    }
}

#[test]
fn parameter_queries_hold_the_jit_log_lock() {
    for (options, call) in both("cuKernelGetParamInfo", "cuFuncGetParamInfo") {
        let _context = created();
        let (_library, saxpy) = kernel("saxpy", options);
        let calls = watched(&saxpy, || {
            let params: Vec<_> = saxpy
                .param_info()
                .unwrap()
                .iter()
                .map(|p| (p.offset, p.size))
                .collect();
            assert_eq!(params, [(0, 8), (8, 8), (16, 8), (24, 8)]);
        });
        // Four parameters, and the call past the last.
        assert_locked(&calls, call, 5);
    }
}

/// A driver that never reports the end of the list is asked for one more
/// parameter than any kernel has, then refused.
#[test]
fn an_endless_parameter_list_is_a_typed_error() {
    for (options, call) in both("cuKernelGetParamInfo", "cuFuncGetParamInfo") {
        let _context = created();
        let (_library, endless) = kernel("endless", options);
        let mut result = None;
        let calls = watched(&endless, || {
            result = Some(endless.param_info().map(<[_]>::len))
        });
        let error = result.unwrap().unwrap_err();
        assert!(
            matches!(&error, ModuleError::TooManyParameters { kernel, limit }
                if kernel == "endless" && *limit == MAX_KERNEL_PARAMS),
            "{error}"
        );
        assert!(
            error.to_string().contains("more than 32764 parameters"),
            "{error}"
        );
        assert_locked(&calls, call, MAX_KERNEL_PARAMS + 1);
    }
}
