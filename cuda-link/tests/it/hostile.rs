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
    let _serial = cuda_link_tests::serial();
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
                Reason::Malformed { .. }
                    | Reason::Truncated { .. }
                    | Reason::BadSectionLink { .. }
                    | Reason::TableAtOffsetZero { .. }
            ),
            "{}: {err}",
            image.name
        );
    }
}

#[test]
fn every_truncation_of_a_real_cubin_is_refused() {
    let _serial = cuda_link_tests::serial();
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
    let _serial = cuda_link_tests::serial();
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
    let _serial = cuda_link_tests::serial();
    if nvjitlink_libraries().is_empty() || hostile_set().is_none() {
        return;
    }
    let output = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "hostile::hostile_child",
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
    let _serial = cuda_link_tests::serial();
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
    let _serial = cuda_link_tests::serial();
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

/// The reason `from_bytes` refuses the class image `name` with.
fn class_refusal(name: &str) -> Option<Reason> {
    let cubin = fixtures::saxpy_relocatable_cubin()?;
    let image = hostile::classes(&cubin)
        .into_iter()
        .find(|image| image.name == name)
        .unwrap_or_else(|| panic!("no class image named {name}"));
    let err = ObjectCode::from_bytes(image.bytes, name)
        .map(drop)
        .expect_err(name);
    Some(innermost(&err.reason).clone())
}

/// One test per class of structural lie, each with its own typed error.
macro_rules! refused_as {
    ($($test:ident: $name:literal => $pattern:pat,)*) => {$(
        #[test]
        fn $test() {
            let Some(reason) = class_refusal($name) else { return };
            assert!(matches!(reason, $pattern), "{}: {reason:?}", $name);
        }
    )*};
}

refused_as! {
    encoded_flag_on_a_cubin: "encoded-LTO-IR flag on a cubin"
        => Reason::EncodedNonLtoir { index: 0, .. },
    encoded_flag_on_ptx: "encoded-LTO-IR flag on PTX" => Reason::EncodedNonLtoir { index: 0, .. },
    options_slot_outside_the_header: "options slot outside the header"
        => Reason::BadEntryOptions { index: 0, .. },
    options_not_nul_terminated: "options not NUL-terminated"
        => Reason::BadEntryOptions { index: 0, .. },
    unknown_entry_kind: "unknown entry kind carrying a cubin"
        => Reason::UnknownEntryKind { index: 0, kind: 0x10 },
    header_alone_with_zero_shoff: "the ELF header alone with e_shoff 0"
        => Reason::TableAtOffsetZero { table: "section header", .. },
    zero_shoff_in_a_full_cubin: "e_shoff 0 in a full cubin"
        => Reason::TableAtOffsetZero { table: "section header", .. },
    zero_phoff_with_a_count: "e_phoff 0 with a program header"
        => Reason::TableAtOffsetZero { table: "program header", count: 1 },
    pn_xnum: "e_phnum PN_XNUM" => Reason::ExtendedNumbering { .. },
    shstrndx_xindex: "e_shstrndx SHN_XINDEX" => Reason::ExtendedNumbering { .. },
    shnum_in_section_zero: "e_shnum 0 with a section table" => Reason::ExtendedNumbering { .. },
    symbol_shndx_xindex: "a symbol's st_shndx SHN_XINDEX" => Reason::ExtendedNumbering { .. },
    shstrtab_without_nul: ".shstrtab without its last NUL" => Reason::UnterminatedStringTable { .. },
    strtab_without_nul: ".strtab without its last NUL" => Reason::UnterminatedStringTable { .. },
    text_sh_info: "sh_info of .text.<kernel> past the symbols" => Reason::BadSymbolIndex { .. },
    nv_info_sh_info: "sh_info of .nv.info.<kernel> past the sections"
        => Reason::BadSectionLink { field: "sh_info", .. },
    nv_info_sh_info_not_code: "sh_info of .nv.info.<kernel> naming a table"
        => Reason::BadSectionLink { field: "sh_info", .. },
    nv_info_record_symbol: ".nv.info record naming a symbol past the symbols"
        => Reason::BadSymbolIndex { .. },
    nv_info_record_cut: ".nv.info record running past its section" => Reason::BadCudaRecords { .. },
    relocation_type: "a relocation of a type CUDA does not define" => Reason::BadCudaRecords { .. },
    section_type: "a section type neither ELF's nor CUDA's"
        => Reason::UnknownSectionType { kind: 0x00fd_0001, .. },
    reserved_section_index: "a symbol in a reserved section index" => Reason::Malformed { .. },
    huge_alignment: "sh_addralign 2^62" => Reason::BadAlignment { align: 0x4000_0000_0000_0000, .. },
    odd_alignment: "sh_addralign 3" => Reason::BadAlignment { align: 3, .. },
    zstd_bomb: "zstd PTX bomb of 1 GiB" => Reason::DecompressionBudget { index: 0, .. },
    empty_ptx_entry: "PTX entry of zeros" => Reason::Malformed { .. },
    second_device_section: "object whose second .nv_fatbin is hostile" => Reason::Malformed { .. },
    archive_symbol_offset: "archive symbol past the end" => Reason::BadArchiveSymbol { .. },
}

#[test]
fn callgraph_of_a_partial_edge() {
    let _serial = cuda_link_tests::serial();
    let Some(cubin) = fixtures::saxpy_relocatable_cubin() else {
        return;
    };
    if hostile::section_named(&cubin, ".nv.callgraph").is_none() {
        return;
    }
    let reason = class_refusal(".nv.callgraph of a partial edge").unwrap();
    assert!(
        matches!(reason, Reason::BadCudaRecords { .. }),
        "{reason:?}"
    );
}

/// The good twins of the class images are accepted: an archive whose
/// symbol names its member, an object with two sound device sections.
#[test]
fn sound_twins_of_the_classes_are_accepted() {
    let _serial = cuda_link_tests::serial();
    let Some(cubin) = fixtures::saxpy_relocatable_cubin() else {
        return;
    };
    let fatbin = hostile::raw_fatbin(&[(2, 90, &cubin)]);
    let object = cuda_link_tests::host_object(&fatbin, ".nv_fatbin");
    // The member's header follows the magic, the table's header and the table.
    let table_len = (4 + 4 + "saxpy".len() + 1).next_multiple_of(2);
    let offset = (8 + 60 + table_len) as u32;
    let archive = hostile::ar_archive_with_symbol("k.o", &object, "saxpy", offset);
    ObjectCode::from_bytes(archive, "good.a").unwrap();
    let two = hostile::host_object_sections(&[(&fatbin, ".nv_fatbin"), (&fatbin, ".nv_fatbin")]);
    let code = ObjectCode::from_bytes(two, "two.o").unwrap();
    assert_eq!(code.inspect().unwrap().fatbins().len(), 2);
    let ptx = b".version 8.0\n.target sm_90\n.address_size 64\n";
    let with_options = hostile::fatbin_with_options(1, ptx, (72, 3), b"-O3");
    let code = ObjectCode::from_bytes(with_options, "options.fatbin").unwrap();
    let entries: Vec<_> = code.inspect().unwrap().fatbin_entries().cloned().collect();
    assert_eq!(entries[0].options.as_deref(), Some("-O3"));
}

/// A bomb costs nothing to inspect either: a bare one is refused, and one
/// inside a host object, read a fatbin at a time, is listed with the
/// budget's error, not decoded.
#[test]
fn inspecting_a_bomb_does_not_decode_it() {
    let _serial = cuda_link_tests::serial();
    let bomb = hostile::zstd_bomb_fatbin(1 << 30);
    assert!(bomb.len() < 40 << 10, "{}", bomb.len());
    let (_dir, path) = cuda_link_tests::temp_file("bomb.fatbin", &bomb);
    let err = cuda_link::inspect_path(&path).unwrap_err();
    assert!(
        matches!(err.reason, Reason::DecompressionBudget { .. }),
        "{err}"
    );
    let object = cuda_link_tests::host_object(&bomb, ".nv_fatbin");
    let (_dir, path) = cuda_link_tests::temp_file("bomb.o", &object);
    let info = cuda_link::inspect_path(&path).unwrap();
    let entry = info.fatbin_entries().next().unwrap();
    assert!(
        matches!(&entry.payload, cuda_link::inspect::Payload::Error(why) if why.contains("1024 times")),
        "{:?}",
        entry.payload
    );
}

/// Big compressed PTX (256 MiB from 1 MiB) is inspected as it is decoded:
/// the kernel is read, and the process's peak memory grows by far less
/// than the text. (`docs/benchmarks.md` has a gigabyte through the CLI.)
#[test]
fn big_compressed_ptx_is_inspected_as_a_stream() {
    let _serial = cuda_link_tests::serial();
    let bomb = hostile::lz4_ptx_bomb_fatbin(256 << 20);
    assert!(bomb.len() < 2 << 20, "{}", bomb.len());
    // Writing 5 resets the peak (VmHWM) to the current resident size.
    let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let before = peak_resident_bytes();
    let code = ObjectCode::from_bytes(bomb, "bomb.fatbin").unwrap();
    assert_eq!(code.inspect().unwrap().kernels(), ["k"]);
    if let (true, Some(before), Some(after)) = (reset, before, peak_resident_bytes()) {
        // `before` may hold another thread's transient pages that the
        // peak no longer counts: a peak below it grew by nothing.
        let grew = after.saturating_sub(before);
        assert!(grew < 128 << 20, "peak grew by {grew} bytes");
    }
}

/// The process's peak resident size, from `/proc/self/status`.
fn peak_resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib << 10)
}

/// Valid PTX behind a licence header longer than any detection window.
#[test]
fn ptx_after_a_long_comment_is_ptx() {
    let _serial = cuda_link_tests::serial();
    let mut text = "// licence line that goes on and on\n".repeat(1000);
    text.push_str("/* and a block\n comment */\n.version 8.0\n.target sm_90\n.address_size 64\n");
    text.push_str(".visible .entry k() { ret; }\n");
    let code = ObjectCode::from_bytes(text.into_bytes(), "licensed.ptx").unwrap();
    assert_eq!(code.kind(), cuda_link::ObjectKind::Ptx);
    assert_eq!(code.inspect().unwrap().kernels(), ["k"]);
}

/// A host object whose `.nv_fatbin` claims 2^64 - 8 bytes is a typed
/// error when inspected from its file, where 16 + size overflowed.
#[test]
fn streamed_fatbin_size_overflow_is_an_error() {
    let _serial = cuda_link_tests::serial();
    let mut fatbin = hostile::raw_fatbin(&[(1, 90, b".version 8.0\n.target sm_90\n")]);
    fatbin[8..16].copy_from_slice(&(u64::MAX - 7).to_le_bytes());
    let object = cuda_link_tests::host_object(&fatbin, ".nv_fatbin");
    let (_dir, path) = cuda_link_tests::temp_file("overflow.o", &object);
    let err = cuda_link::inspect_path(&path).unwrap_err();
    assert!(matches!(err.reason, Reason::Malformed { .. }), "{err}");
}

/// The classes made from an executable cubin, as the GPU tests load them,
/// are refused too.
#[test]
fn classes_of_an_executable_cubin_are_refused() {
    let _serial = cuda_link_tests::serial();
    let Some(cubin) = fixtures::saxpy_executable_cubin() else {
        return;
    };
    let classes = hostile::classes(&cubin);
    assert!(classes.len() > 20, "{}", classes.len());
    for image in classes {
        let refused = ObjectCode::from_bytes(image.bytes, image.name.as_str());
        assert!(refused.is_err(), "{} was accepted", image.name);
    }
}

/// nvcc 13's cubins carry a toolkit note whose string offsets the driver
/// follows: one past its strings is refused (the 12.9 fixtures have none).
#[test]
fn toolkit_note_offset_past_its_strings() {
    let _serial = cuda_link_tests::serial();
    let Some(dir) = cuda_link_tests::corpus::dir() else {
        return;
    };
    let cubin = std::fs::read(dir.join("params.cubin")).unwrap();
    ObjectCode::from_cubin(cubin.clone(), "params.cubin").unwrap();
    let name = "a toolkit note whose string offset lies past its strings";
    let image = hostile::classes(&cubin)
        .into_iter()
        .find(|image| image.name == name)
        .expect("nvcc 13 writes .note.nv.tkinfo");
    let err = ObjectCode::from_bytes(image.bytes, name)
        .map(drop)
        .unwrap_err();
    assert!(
        matches!(innermost(&err.reason), Reason::BadCudaRecords { .. }),
        "{err}"
    );
}

/// A PTX, LTO-IR or relocatable PTX entry without an options descriptor
/// (offset 0, as this crate's writer once wrote PTX) never reaches the
/// driver, which would read its options 16 MiB past the entry: refused
/// as `BadEntryOptions`, bare and inside a host object.
#[test]
fn entries_without_an_options_descriptor_are_refused() {
    let _serial = cuda_link_tests::serial();
    let Some(cubin) = fixtures::saxpy_relocatable_cubin() else {
        return;
    };
    let mut seen = 0;
    for image in hostile::classes(&cubin) {
        if !image.name.ends_with("without an options descriptor") {
            continue;
        }
        seen += 1;
        let object = cuda_link_tests::host_object(&image.bytes, ".nv_fatbin");
        for bytes in [image.bytes, object] {
            let err = ObjectCode::from_bytes(bytes, image.name.as_str())
                .map(drop)
                .unwrap_err();
            assert!(
                matches!(innermost(&err.reason), Reason::BadEntryOptions { .. }),
                "{}: {err}",
                image.name
            );
        }
    }
    assert_eq!(seen, 3);
}

/// An object whose entries claim more than the budget in total is
/// refused from its headers, before any entry is decoded: three entries
/// of 1 GiB each, whose payloads are no zstd at all, give the budget's
/// error, not the first entry's decoding error. Inside a host object and
/// an archive too.
#[test]
fn the_budget_is_taken_before_anything_is_decoded() {
    let _serial = cuda_link_tests::serial();
    let fatbin = hostile::claiming_fatbin(3, 1 << 30);
    let object = cuda_link_tests::host_object(&fatbin, ".nv_fatbin");
    let archive = cuda_link_tests::ar_archive("big.o", &object);
    for (name, bytes) in [
        ("fatbin", fatbin.clone()),
        ("object", object),
        ("archive", archive),
    ] {
        let started = std::time::Instant::now();
        let err = ObjectCode::from_bytes(bytes, name).map(drop).unwrap_err();
        assert!(
            matches!(innermost(&err.reason), Reason::DecompressionBudget { .. }),
            "{name}: {err}"
        );
        assert!(
            started.elapsed() < std::time::Duration::from_secs(5),
            "{name}"
        );
    }
    // Within the budget, the same entries fail on their contents.
    let two = hostile::claiming_fatbin(1, 1 << 30);
    let err = ObjectCode::from_bytes(two, "one").map(drop).unwrap_err();
    assert!(
        !matches!(innermost(&err.reason), Reason::DecompressionBudget { .. }),
        "{err}"
    );
}
