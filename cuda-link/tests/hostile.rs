//! Hostile images never become an `ObjectCode`, so they never reach the C
//! libraries that trust the offsets inside them; and PTX without a NUL, as
//! nvcc writes it, links every time.
#![allow(clippy::result_large_err)]

use std::process::Command;
use std::sync::Arc;

use cuda_link::NvJitLink;
use cuda_link::{Arch, Linker, LinkerOptions, ObjectCode, OutputKind, Reason};
use cuda_link_tests::hostile::{self, Hostile};
use cuda_link_tests::{fixtures, nvjitlink_libraries};

fn hostile_set() -> Option<Vec<Hostile>> {
    let cubin = fixtures::saxpy_relocatable_cubin()?;
    Some(hostile::images(&cubin))
}

/// The innermost reason of a nested one.
fn innermost(reason: &Reason) -> &Reason {
    match reason {
        Reason::Inside { reason, .. } => innermost(reason),
        other => other,
    }
}

#[test]
fn every_hostile_image_is_a_typed_error() {
    let Some(images) = hostile_set() else { return };
    assert!(images.len() > 40, "{}", images.len());
    for image in images {
        let err = ObjectCode::from_bytes(image.bytes.clone(), image.name.as_str())
            .map(drop)
            .expect_err(&image.name);
        assert_eq!(err.name, image.name);
        assert!(
            matches!(
                innermost(&err.reason),
                Reason::Malformed { .. } | Reason::Truncated { .. }
            ),
            "{}: {err}",
            image.name
        );
    }
}

#[test]
fn every_truncation_of_a_real_cubin_is_refused() {
    let Some(cubin) = fixtures::saxpy_relocatable_cubin() else {
        return;
    };
    ObjectCode::from_cubin(cubin.clone(), "whole").unwrap();
    for len in 0..cubin.len() {
        let result = ObjectCode::from_cubin(cubin[..len].to_vec(), "cut");
        assert!(result.is_err(), "a cubin cut to {len} bytes was accepted");
    }
}

#[test]
fn containers_name_the_bad_entry() {
    let Some(cubin) = fixtures::saxpy_relocatable_cubin() else {
        return;
    };
    let fatbin = hostile::raw_fatbin(&[(2, 90, &cubin), (2, 90, &cubin[..64])]);
    let err = ObjectCode::from_fatbin(fatbin, "two.fatbin").unwrap_err();
    let Reason::Inside { place, .. } = &err.reason else {
        panic!("{err}")
    };
    assert_eq!(place, "fatbin entry 1");
}

/// The hostile set, in a child process, through `from_bytes` and, if a
/// regression let one through, both nvJitLink majors: a crash fails this
/// test instead of killing the run.
#[test]
fn hostile_images_never_reach_nvjitlink() {
    if nvjitlink_libraries().is_empty() || hostile_set().is_none() {
        return;
    }
    let output = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "hostile_child",
            "--include-ignored",
            "--nocapture",
        ])
        .env("CUDA_LINK_HOSTILE_CHILD", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "child died: {:?}\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("1 passed"), "{stdout}");
}

#[test]
#[ignore = "run by hostile_images_never_reach_nvjitlink in a child process"]
fn hostile_child() {
    assert!(std::env::var_os("CUDA_LINK_HOSTILE_CHILD").is_some());
    let images = hostile_set().unwrap();
    for (major, path) in nvjitlink_libraries() {
        // SAFETY: the pinned nvJitLink wheel that `cargo xtask test` installed.
        let lib = Arc::new(unsafe { NvJitLink::open(path) }.unwrap());
        for image in &images {
            let Ok(code) = ObjectCode::from_bytes(image.bytes.clone(), image.name.as_str()) else {
                continue;
            };
            let mut linker =
                Linker::with_nvjitlink(Arc::clone(&lib), LinkerOptions::for_arch(Arch::sm(90)))
                    .unwrap();
            let linked = linker.add(&code).and_then(|l| l.link(OutputKind::Cubin));
            panic!(
                "{} reached nvJitLink {major}: {:?}",
                image.name,
                linked.map(drop)
            );
        }
    }
}

/// PTX without a trailing NUL, as nvcc writes it, links every time.
#[test]
fn ptx_without_a_nul_links_every_time() {
    let Some(ptx) = fixtures::saxpy_ptx() else {
        return;
    };
    assert_ne!(ptx.last(), Some(&0), "fixtures carry no NUL");
    let counter = fixtures::ptx(fixtures::COUNTER_CU, "counter.cu").unwrap();
    for (major, path) in nvjitlink_libraries() {
        // SAFETY: the pinned nvJitLink wheel that `cargo xtask test` installed.
        let lib = Arc::new(unsafe { NvJitLink::open(path) }.unwrap());
        for (name, bytes, kernel) in [
            ("saxpy.ptx", &ptx, "saxpy"),
            ("counter.ptx", &counter, "add_bias"),
        ] {
            let code = ObjectCode::from_ptx(bytes.clone(), name).unwrap();
            assert_eq!(code.as_bytes(), &bytes[..]);
            assert_eq!(code.image().as_bytes().last(), Some(&0));
            for round in 0..50 {
                let mut linker =
                    Linker::with_nvjitlink(Arc::clone(&lib), LinkerOptions::for_arch(Arch::sm(90)))
                        .unwrap();
                linker.add(&code).unwrap();
                let cubin = linker
                    .link(OutputKind::Cubin)
                    .unwrap_or_else(|e| panic!("nvJitLink {major}, {name}, round {round}: {e}"));
                assert_eq!(cubin.inspect().unwrap().kernels(), [kernel]);
            }
        }
    }
}
