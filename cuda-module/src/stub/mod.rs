//! The unit tests' driver: `libcuda.c`, a stub with the driver's
//! signatures (see its header), built with `cc` on first use. `driver()`
//! hands it out instead of the real driver when the crate is built for its
//! unit tests, so they run, and mean the same, with or without a GPU.

mod api;
mod contexts;
mod lock;

use std::cell::RefCell;
use std::ffi::{CStr, c_char, c_int};
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use cuda_driver_sys::{Driver, Resolution, sys::CUcontext};
use cuda_link::ObjectCode;

use crate::context::Context;
use crate::jit_log::JitLog;
use crate::kernel::Kernel;
use crate::library::{Library, LoadOptions};

/// The stub's own entry points, besides the driver's.
struct Controls {
    depth: unsafe extern "C" fn() -> c_int,
    last_launch_context: unsafe extern "C" fn() -> CUcontext,
    synchronizations: unsafe extern "C" fn() -> c_int,
    destroy_graph: unsafe extern "C" fn() -> c_int,
}

struct Stub {
    driver: Driver,
    controls: Controls,
}

fn stub() -> &'static Stub {
    static STUB: OnceLock<Stub> = OnceLock::new();
    STUB.get_or_init(|| {
        let path = build();
        // SAFETY: our stub: it has no initialisers, and every driver entry
        // point it exports has the signature cuda.h declares.
        let driver = unsafe { Driver::open(&path, Resolution::DlsymOnly) }
            .unwrap_or_else(|e| panic!("loading the stub driver: {e}"));
        // SAFETY: as above; the stub is already loaded, so this only takes
        // another reference, and it stays loaded (`RTLD_NODELETE`) as the
        // addresses taken below need.
        let controls = unsafe {
            let library = cuda_driver_sys::libloading::Library::new(&path).unwrap();
            let set_hook = *library
                .get::<unsafe extern "C" fn(extern "C" fn(*const c_char))>(b"stub_set_hook\0")
                .unwrap();
            // Before any test thread calls in: the hook is read unsynchronised.
            set_hook(hook);
            Controls {
                depth: *library.get(b"stub_depth\0").unwrap(),
                last_launch_context: *library.get(b"stub_last_launch_context\0").unwrap(),
                synchronizations: *library.get(b"stub_synchronizations\0").unwrap(),
                destroy_graph: *library.get(b"stub_destroy_graph\0").unwrap(),
            }
        };
        let _ = std::fs::remove_dir_all(path.parent().unwrap());
        Stub { driver, controls }
    })
}

/// The stub driver, for `crate::error::driver`.
pub(crate) fn driver() -> &'static Driver {
    &stub().driver
}

/// Compiles `libcuda.c` into a directory of its own.
fn build() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cuda-module-stub-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let output = dir.join("libcuda-stub.so");
    let source = concat!(env!("CARGO_MANIFEST_DIR"), "/src/stub/libcuda.c");
    let status = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .args([
            "-std=c11", "-shared", "-fPIC", "-O1", "-Wall", "-Werror", "-o",
        ])
        .arg(&output)
        .arg(source)
        .status()
        .expect("a C compiler (cc) builds the stub driver of the unit tests");
    assert!(status.success(), "compiling {source}");
    output
}

/// This thread's context stack depth in the stub.
pub(crate) fn depth() -> i32 {
    // SAFETY: `int (void)`, reading the calling thread's state.
    unsafe { (stub().controls.depth)() }
}

/// The context that was current at this thread's last `cuLaunchKernel`.
pub(crate) fn last_launch_context() -> CUcontext {
    // SAFETY: `CUcontext (void)`, reading the calling thread's state.
    unsafe { (stub().controls.last_launch_context)() }
}

/// How many times this thread called `cuCtxSynchronize`.
pub(crate) fn synchronizations() -> i32 {
    // SAFETY: `int (void)`, reading the calling thread's state.
    unsafe { (stub().controls.synchronizations)() }
}

/// The stream the stub captures into its one graph.
pub(crate) const CAPTURING: cuda_driver_sys::sys::CUstream = 0xCA97 as _;

/// Destroys the stub's graph, as the driver would: the destructors of the
/// user objects it retained run. How many there were.
pub(crate) fn destroy_graph() -> i32 {
    // SAFETY: `int (void)`; the stub locks its own list.
    unsafe { (stub().controls.destroy_graph)() }
}

/// This thread's current context.
pub(crate) fn current() -> CUcontext {
    let mut context = std::ptr::null_mut();
    // SAFETY: an out-pointer.
    let status = unsafe { driver().cuCtxGetCurrent(&mut context) }.unwrap();
    driver().check(status).unwrap();
    context
}

/// A kernel of a library loaded from a one-kernel PTX (the stub ignores
/// the image; kernels behave by name, see `libcuda.c`).
pub(crate) fn kernel(name: &str, options: LoadOptions) -> (Library, Kernel) {
    let ptx = format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry {name}() {{ ret; }}\n"
    );
    let code = ObjectCode::from_ptx(ptx.into_bytes(), format!("{name}.ptx")).unwrap();
    let library = Library::load_with(&code, options).unwrap();
    let kernel = library.kernel(name).unwrap();
    (library, kernel)
}

/// A created context, current on this thread: each test runs on a thread
/// of its own, whose stack starts empty.
pub(crate) fn created() -> Context {
    let context = Context::create(0).unwrap();
    assert_eq!(current(), context.as_raw());
    context
}

/// Each call that may compile, and whether the log's lock was held in it.
type Calls = Vec<(String, bool)>;

thread_local! {
    /// The log whose lock the hook checks, and what it saw.
    static WATCH: RefCell<Option<(*const JitLog, Calls)>> = const { RefCell::new(None) };
}

/// Called by the stub, on the calling thread, from every entry point that
/// may compile. It must not unwind into C.
extern "C" fn hook(call: *const c_char) {
    let _ = WATCH.try_with(|watch| {
        let Ok(mut watch) = watch.try_borrow_mut() else {
            return;
        };
        if let Some((log, calls)) = watch.as_mut() {
            // SAFETY: `watched` keeps the log alive while it is watched;
            // the stub passes a static, NUL-terminated name.
            let (log, call) = unsafe { (&**log, CStr::from_ptr(call)) };
            calls.push((call.to_string_lossy().into_owned(), log.is_locked()));
        }
    });
}

/// Runs `f` and returns each call that may compile it made on this thread,
/// with whether `kernel`'s JIT log lock was held during it.
pub(crate) fn watched(kernel: &Kernel, f: impl FnOnce()) -> Calls {
    /// Stops watching when dropped, also if `f` panics: the log's borrow
    /// ends with this call.
    struct Unwatch;
    impl Drop for Unwatch {
        fn drop(&mut self) {
            let _ = WATCH.try_with(|watch| watch.borrow_mut().take());
        }
    }
    let log: *const JitLog = &kernel.inner.loaded.log;
    WATCH.with(|watch| *watch.borrow_mut() = Some((log, Vec::new())));
    let _unwatch = Unwatch;
    f();
    WATCH.with(|watch| watch.borrow_mut().take().unwrap().1)
}
