//! A fatal-signal report for test binaries whose crash is intermittent:
//! the signal, the faulting address and the frames go to stderr before
//! the process dies, so the next occurrence in a CI log says where.

/// Installs the report for SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT,
/// once per process. The default action follows the report, so the test
/// binary still dies of the signal.
pub fn install() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            for signal in [
                libc::SIGSEGV,
                libc::SIGBUS,
                libc::SIGFPE,
                libc::SIGILL,
                libc::SIGABRT,
            ] {
                // SAFETY: a zeroed sigaction is valid; the handler has the
                // SA_SIGINFO signature and calls only write, backtrace
                // (whose first call, below, loads libgcc before any crash)
                // and backtrace_symbols_fd, which writes without malloc.
                unsafe {
                    let mut action: libc::sigaction = std::mem::zeroed();
                    let handler: extern "C" fn(i32, *mut libc::siginfo_t, *mut libc::c_void) =
                        report;
                    action.sa_sigaction = handler as *const () as usize;
                    action.sa_flags = libc::SA_SIGINFO | libc::SA_RESETHAND;
                    libc::sigaction(signal, &action, std::ptr::null_mut());
                }
            }
            let mut frames = [std::ptr::null_mut(); 1];
            // SAFETY: a buffer of one frame.
            unsafe { libc::backtrace(frames.as_mut_ptr(), 1) };
        });
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
extern "C" fn report(signal: i32, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    let mut line = [0u8; 96];
    let mut len = 0;
    let mut put = |bytes: &[u8]| {
        for &b in bytes {
            if len < line.len() {
                line[len] = b;
                len += 1;
            }
        }
    };
    put(b"\nfatal signal ");
    put_decimal(&mut put, signal as u64);
    put(b" at address 0x");
    // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler.
    let address = unsafe { (*info).si_addr() } as u64;
    for shift in (0..16).rev() {
        put(&[b"0123456789abcdef"[(address >> (shift * 4)) as usize & 0xf]]);
    }
    put(b"; frames:\n");
    let mut frames = [std::ptr::null_mut(); 64];
    // SAFETY: write of a stack buffer; backtrace fills at most 64 frames;
    // backtrace_symbols_fd writes them to stderr.
    unsafe {
        libc::write(2, line.as_ptr().cast(), len);
        let count = libc::backtrace(frames.as_mut_ptr(), 64);
        libc::backtrace_symbols_fd(frames.as_ptr(), count, 2);
    }
    // SA_RESETHAND restored the default action: returning re-runs the
    // faulting instruction (or, for SIGABRT, abort raises it again).
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn put_decimal(put: &mut impl FnMut(&[u8]), mut value: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (value % 10) as u8;
        value /= 10;
        if value == 0 {
            break;
        }
    }
    put(&digits[at..]);
}
