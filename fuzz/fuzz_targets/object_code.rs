//! `cargo +nightly fuzz run object_code`: detection, every constructor and
//! inspection must return, never panic, on any bytes.
#![no_main]

use cuda_link::{ObjectCode, ObjectKind};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(code) = ObjectCode::from_bytes(data.to_vec(), "fuzz") {
        if let Ok(info) = code.inspect() {
            let _ = (info.to_string(), info.to_json());
        }
        let _ = code.check_linkable();
    }
    for kind in ObjectKind::ALL {
        let _ = ObjectCode::with_kind(kind, data.to_vec(), "fuzz").map(|c| c.inspect());
    }
});
