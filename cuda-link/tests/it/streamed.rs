//! `inspect_path` reads host objects a fatbin at a time: it must agree
//! with inspecting the whole file, and a file that is cut short, or cut
//! while it is read, is a typed error, never a crash.

use cuda_link::{ObjectCode, Reason, inspect_path};
use cuda_link_tests::hostile::raw_fatbin;
use cuda_link_tests::{fixtures, host_object, temp_file};

/// A host object with two fatbins back to back, as nvcc links them.
fn two_fatbin_object() -> Vec<u8> {
    let ptx = b".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n ret;\n}\n";
    let mut section = raw_fatbin(&[(1, 90, ptx)]);
    section.resize(section.len().next_multiple_of(8), 0);
    section.extend(raw_fatbin(&[(1, 80, ptx), (1, 90, ptx)]));
    host_object(&section, ".nv_fatbin")
}

#[test]
fn streamed_inspection_matches_the_whole_file() {
    let _serial = cuda_link_tests::serial();
    let mut objects = vec![("two.o", two_fatbin_object())];
    if let Some(devrt) = fixtures::cudadevrt_object() {
        objects.push(("cuda_device_runtime.o", devrt));
    }
    for (name, bytes) in objects {
        let (_dir, path) = temp_file(name, &bytes);
        let whole = ObjectCode::from_path(&path).unwrap().inspect().unwrap();
        let streamed = inspect_path(&path).unwrap();
        assert_eq!(streamed.to_json(), whole.to_json(), "{name}");
        assert_eq!(streamed.kernels(), whole.kernels(), "{name}");
    }
    // Other kinds go through ObjectCode and inspect the same.
    let (_dir, path) = temp_file(
        "k.fatbin",
        &raw_fatbin(&[(1, 90, b".version 8.0\n.target sm_90\n")]),
    );
    assert_eq!(
        inspect_path(&path).unwrap().to_json(),
        ObjectCode::from_path(&path)
            .unwrap()
            .inspect()
            .unwrap()
            .to_json()
    );
}

#[test]
fn a_file_cut_short_is_a_typed_error() {
    let _serial = cuda_link_tests::serial();
    let bytes = two_fatbin_object();
    for cut in [bytes.len() / 2, bytes.len() * 3 / 4, bytes.len() - 1] {
        let (_dir, path) = temp_file("cut.o", &bytes[..cut]);
        let err = inspect_path(&path).unwrap_err();
        assert!(
            matches!(
                err.reason,
                Reason::Malformed { .. } | Reason::Truncated { .. }
            ),
            "cut at {cut}: {err}"
        );
    }
    let err = inspect_path("/nonexistent/k.o").unwrap_err();
    assert!(matches!(err.reason, Reason::Io { .. }), "{err}");
}

/// Another thread truncates and restores the file while it is inspected:
/// every result is the full inspection or a typed error. A mapping would
/// have raised SIGBUS here.
#[test]
fn a_file_truncated_while_read_never_crashes() {
    let _serial = cuda_link_tests::serial();
    let ptx = b".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n ret;\n}\n";
    let entries: Vec<(u16, u32, &[u8])> = (0..2000).map(|_| (1, 90, &ptx[..])).collect();
    let bytes = host_object(&raw_fatbin(&entries), ".nv_fatbin");
    let (_dir, path) = temp_file("racing.o", &bytes);
    let full = inspect_path(&path).unwrap().to_json();
    let stop = std::sync::atomic::AtomicBool::new(false);
    // The writer stops even when an assertion below fails: a panic must
    // fail the test, not leave the scope waiting on the writer forever.
    struct StopOnDrop<'a>(&'a std::sync::atomic::AtomicBool);
    impl Drop for StopOnDrop<'_> {
        fn drop(&mut self) {
            self.0.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }
    std::thread::scope(|scope| {
        let _stop = StopOnDrop(&stop);
        scope.spawn(|| {
            let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                file.set_len(bytes.len() as u64 / 3).unwrap();
                std::fs::write(&path, &bytes).unwrap();
            }
        });
        let (mut whole, mut refused) = (0, 0);
        for _ in 0..200 {
            match inspect_path(&path) {
                Ok(inspection) => {
                    assert_eq!(inspection.to_json(), full);
                    whole += 1;
                }
                Err(err) => {
                    // What is wrong, wherever in the container it is.
                    let mut innermost = &err.reason;
                    while let Reason::Inside { reason, .. } = innermost {
                        innermost = reason;
                    }
                    assert!(
                        matches!(
                            innermost,
                            Reason::Malformed { .. }
                                | Reason::Truncated { .. }
                                | Reason::Io { .. }
                                // Caught between the truncation and the rewrite.
                                | Reason::Empty
                                // A header read whole, its options cut short.
                                | Reason::BadEntryOptions { .. }
                        ),
                        "{err}"
                    );
                    refused += 1;
                }
            }
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        eprintln!("{whole} whole, {refused} refused");
        assert_eq!(whole + refused, 200);
    });
}
