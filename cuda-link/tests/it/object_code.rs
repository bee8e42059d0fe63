//! ObjectCode on real NVIDIA output: NVRTC, ptxas, nvFatbin, libcudadevrt.a.

use cuda_link::inspect::{Compression, EntryKind};
use cuda_link::inspect::{Contents, Payload};
use cuda_link::{Arch, ObjectCode, ObjectKind, Reason};
use cuda_link_tests::{FatbinInput, fixtures, host_object, nvfatbin, ptxas, temp_file};

fn arch(text: &str) -> Arch {
    text.parse().unwrap()
}

#[test]
fn nvrtc_ptx_is_detected_and_inspected() {
    let _serial = cuda_link_tests::serial();
    let Some(ptx) = fixtures::saxpy_ptx() else {
        return;
    };
    let code = ObjectCode::from_bytes(ptx, "saxpy.ptx").unwrap();
    assert_eq!(code.kind(), ObjectKind::Ptx);
    let info = code.inspect().unwrap();
    let Contents::Ptx(ptx) = &info.contents else {
        panic!("{info:?}")
    };
    assert_eq!(ptx.target, ["sm_90"]);
    assert_eq!(ptx.address_size, Some(64));
    assert!(ptx.version.starts_with("8."), "{}", ptx.version);
    assert_eq!(info.kernels(), ["saxpy"]);
}

#[test]
fn nvrtc_ltoir_reports_its_arch() {
    let _serial = cuda_link_tests::serial();
    for target in ["sm_75", "sm_90", "sm_90a", "sm_100"] {
        let Some(ltoir) = fixtures::ltoir(fixtures::SAXPY_CU, "saxpy.cu", target) else {
            return;
        };
        let code = ObjectCode::from_bytes(ltoir, "saxpy.ltoir").unwrap();
        assert_eq!(code.kind(), ObjectKind::Ltoir);
        assert_eq!(code.inspect().unwrap().arches(), [arch(target)], "{target}");
    }
}

#[test]
fn ptxas_cubins_relocatable_and_executable() {
    let _serial = cuda_link_tests::serial();
    let Some(ptx) = fixtures::saxpy_ptx() else {
        return;
    };
    for target in ["sm_90", "sm_90a", "sm_100", "sm_100a", "sm_120"] {
        for relocatable in [true, false] {
            let cubin = ptxas(&ptx, target, relocatable).unwrap();
            let code = ObjectCode::from_bytes(cubin, format!("{target}.cubin")).unwrap();
            assert_eq!(code.kind(), ObjectKind::Cubin);
            let info = code.inspect().unwrap();
            let Contents::Cubin(cubin) = &info.contents else {
                panic!()
            };
            assert_eq!(cubin.arch, arch(target), "{target}");
            assert_eq!(cubin.abi_version, if cubin.arch.sm >= 100 { 8 } else { 7 });
            assert_eq!(cubin.kernels, ["saxpy"]);
            let linkable = code.check_linkable();
            if relocatable {
                assert!(linkable.is_ok());
            } else {
                let err = linkable.unwrap_err();
                assert_eq!(err.reason, Reason::ExecutableCubin);
                assert!(
                    err.to_string()
                        .starts_with(&format!("{target}.cubin: executable")),
                    "{err}"
                );
            }
        }
    }
}

#[test]
fn family_cubin_is_told_apart_by_its_note() {
    let _serial = cuda_link_tests::serial();
    let Some(ptx) = fixtures::saxpy_ptx() else {
        return;
    };
    let cubin = ptxas(&ptx, "sm_100f", true).unwrap();
    let code = ObjectCode::from_cubin(cubin, "f.cubin").unwrap();
    assert_eq!(code.inspect().unwrap().arches(), [arch("sm_100f")]);
}

#[test]
fn nvfatbin_entries_lz4_zstd_and_variants() {
    let _serial = cuda_link_tests::serial();
    let Some(ptx) = fixtures::saxpy_ptx() else {
        return;
    };
    let Some(ltoir) = fixtures::saxpy_ltoir() else {
        return;
    };
    let cubin_90a = ptxas(&ptx, "sm_90a", false).unwrap();
    let cubin_100f = ptxas(&ptx, "sm_100f", false).unwrap();
    let inputs = [
        FatbinInput::Ptx(&ptx, "90"),
        FatbinInput::Cubin(&cubin_90a, "90a"),
        FatbinInput::Cubin(&cubin_100f, "100f"),
        FatbinInput::Ltoir(&ltoir, "90"),
    ];
    for (options, codec) in [
        (&["-compress-all"][..], Compression::Lz4),
        (
            &["-compress-all", "-compress-mode=size"][..],
            Compression::Zstd,
        ),
        (&["-compress=false"][..], Compression::None),
    ] {
        let bytes = nvfatbin(&inputs, options).unwrap();
        let code = ObjectCode::from_bytes(bytes, "mixed.fatbin").unwrap();
        assert_eq!(code.kind(), ObjectKind::Fatbin);
        let info = code.inspect().unwrap();
        let entries: Vec<_> = info.fatbin_entries().collect();
        assert_eq!(entries.len(), 4, "{options:?}\n{info}");
        let kinds: Vec<EntryKind> = entries.iter().map(|e| e.kind).collect();
        assert_eq!(
            kinds,
            [
                EntryKind::Ptx,
                EntryKind::Cubin,
                EntryKind::Cubin,
                EntryKind::Ltoir
            ]
        );
        let arches: Vec<String> = entries.iter().map(|e| e.arch.to_string()).collect();
        assert_eq!(arches, ["sm_90", "sm_90a", "sm_100f", "sm_90"]);
        for entry in &entries[..3] {
            assert_eq!(
                entry.compression, codec,
                "{options:?} entry {}",
                entry.index
            );
        }
        // The decompressed inner code is inspected, not just listed.
        assert!(
            matches!(&entries[0].payload, Payload::Ptx(p) if p.kernels == ["saxpy"]),
            "{info}"
        );
        assert!(
            matches!(&entries[1].payload, Payload::Cubin(c) if c.arch == arch("sm_90a")),
            "{info}"
        );
        // Compressed LTO-IR is encoded: listed, not decoded.
        let expected_ltoir = if codec == Compression::None {
            "ltoir"
        } else {
            "opaque"
        };
        let got = match &entries[3].payload {
            Payload::Ltoir(_) => "ltoir",
            Payload::Opaque => "opaque",
            other => panic!("{other:?}"),
        };
        assert_eq!(got, expected_ltoir, "{options:?}");
        assert_eq!(info.kernels(), ["saxpy"]);
        let json: serde_json::Value = serde_json::from_str(&info.to_json()).unwrap();
        assert_eq!(json["kind"], "fatbin");
    }
}

#[test]
fn libcudadevrt_archive_lists_sixteen_entries() {
    let _serial = cuda_link_tests::serial();
    let Some(bytes) = fixtures::cudadevrt_bytes() else {
        return;
    };
    let code = ObjectCode::from_bytes(bytes, "libcudadevrt.a").unwrap();
    assert_eq!(code.kind(), ObjectKind::Archive);
    let info = code.inspect().unwrap();
    let Contents::Archive(library) = &info.contents else {
        panic!()
    };
    assert_eq!(library.members.len(), 1);
    assert_eq!(library.members[0].name, "cuda_device_runtime.o");
    let object = library.members[0].object.as_ref().unwrap();
    assert_eq!(object.fatbins.len(), 1);
    assert_eq!(object.fatbins[0].section, "__nv_relfatbin");

    let entries: Vec<_> = info.fatbin_entries().collect();
    assert_eq!(entries.len(), 16, "{info}");
    let sms: Vec<u32> = entries.iter().map(|e| e.arch.sm).collect();
    assert_eq!(
        sms,
        [
            50, 52, 60, 61, 70, 75, 80, 86, 89, 90, 100, 101, 103, 120, 121, 121
        ]
    );
    assert!(entries.iter().all(|e| e.compression == Compression::Lz4));
    assert_eq!(entries[14].kind, EntryKind::Ptx);
    assert_eq!(
        entries[14].options.as_deref(),
        Some("--compile-only  -maxrregcount=32 ")
    );
    for entry in &entries {
        match &entry.payload {
            Payload::Cubin(cubin) => {
                assert_eq!(cubin.kernels.len(), 32, "entry {}", entry.index);
                assert_eq!(cubin.arch.sm, entry.arch.sm);
            }
            Payload::Ptx(ptx) => {
                assert_eq!(ptx.kernels.len(), 32);
                assert_eq!(ptx.target, ["sm_121"]);
            }
            other => panic!("entry {}: {other:?}", entry.index),
        }
    }
    let kernels = info.kernels();
    assert_eq!(kernels.len(), 32);
    assert!(
        kernels.iter().any(|k| k.contains("memset_3d_device")),
        "{kernels:?}"
    );
    let text = info.to_string();
    assert!(text.contains("member cuda_device_runtime.o"), "{text}");
    assert!(text.contains("fatbin in __nv_relfatbin"), "{text}");
}

#[test]
fn host_objects_carry_fatbins_in_either_section() {
    let _serial = cuda_link_tests::serial();
    let Some(ptx) = fixtures::saxpy_ptx() else {
        return;
    };
    let fatbin = nvfatbin(&[FatbinInput::Ptx(&ptx, "90")], &[]).unwrap();
    for section in [".nv_fatbin", "__nv_relfatbin"] {
        let object = host_object(&fatbin, section);
        let code = ObjectCode::from_bytes(object, "saxpy.o").unwrap();
        assert_eq!(code.kind(), ObjectKind::Object);
        let info = code.inspect().unwrap();
        assert_eq!(info.kernels(), ["saxpy"]);
        let Contents::Object(object) = &info.contents else {
            panic!()
        };
        assert_eq!(object.fatbins[0].section, section);
        assert_eq!(object.machine, "X86_64");
    }
    // Two fatbins back to back in one section.
    let mut two = fatbin.clone();
    two.resize(two.len().next_multiple_of(8), 0);
    two.extend_from_slice(&fatbin);
    let code = ObjectCode::from_object(host_object(&two, ".nv_fatbin"), "two.o").unwrap();
    assert_eq!(code.inspect().unwrap().fatbins().len(), 2);
}

#[test]
fn from_path_reads_and_detects() {
    let _serial = cuda_link_tests::serial();
    let Some(ptx) = fixtures::saxpy_ptx() else {
        return;
    };
    let (_dir, path) = temp_file("kernel.bin", &ptx);
    let code = ObjectCode::from_path(&path).unwrap();
    assert_eq!(code.kind(), ObjectKind::Ptx);
    assert_eq!(code.name(), path.display().to_string());
    // A binary kind's name does not make bytes without its magic one:
    // they are unrecognized, not a cubin with a nonsense ELF machine.
    for name in ["noise.cubin", "noise.fatbin", "noise.ltoir"] {
        let (_dir, path) = temp_file(name, &[0x5a; 3000]);
        let err = ObjectCode::from_path(&path).unwrap_err();
        assert_eq!(err.reason, Reason::Unrecognized, "{name}: {err}");
    }
}

#[test]
fn validation_errors_name_the_input_and_the_problem() {
    let _serial = cuda_link_tests::serial();
    let Some(ptx) = fixtures::saxpy_ptx() else {
        return;
    };
    let fatbin = nvfatbin(&[FatbinInput::Ptx(&ptx, "90")], &[]).unwrap();

    let err =
        ObjectCode::from_fatbin(fatbin[..fatbin.len() - 9].to_vec(), "cut.fatbin").unwrap_err();
    assert!(matches!(err.reason, Reason::Truncated { .. }), "{err}");
    assert!(
        err.to_string().starts_with("cut.fatbin: truncated"),
        "{err}"
    );

    let host = host_object(&fatbin, ".text.other");
    let err = ObjectCode::from_bytes(host.clone(), "plain.o").unwrap_err();
    assert_eq!(err.reason, Reason::NoDeviceCode);
    let err = ObjectCode::from_cubin(host, "plain.o").unwrap_err();
    assert_eq!(err.reason, Reason::NotEmCuda { machine: 62 });

    let err =
        ObjectCode::from_ltoir(b"BC\xC0\xDE\x35\x14\0\0".to_vec(), "libdevice.bc").unwrap_err();
    assert_eq!(err.reason, Reason::LlvmBitcode);

    let err = ObjectCode::from_ptx(b"// no header\n.entry k() {}".to_vec(), "k.ptx").unwrap_err();
    assert_eq!(err.reason, Reason::PtxMissingDirective(".version"));
    let err = ObjectCode::from_ptx(b".version 8.0\n.entry k() {}".to_vec(), "k.ptx").unwrap_err();
    assert_eq!(err.reason, Reason::PtxMissingDirective(".target"));

    let err = ObjectCode::from_ptx(fatbin, "wrong.ptx").unwrap_err();
    assert_eq!(
        err.reason,
        Reason::KindMismatch {
            expected: "ptx",
            found: "fatbin"
        }
    );

    let err = ObjectCode::from_bytes(vec![0u8; 64], "zeros").unwrap_err();
    assert_eq!(err.reason, Reason::Unrecognized);
    let err = ObjectCode::from_bytes(b"!<thin>\n".to_vec(), "thin.a").unwrap_err();
    assert_eq!(err.reason, Reason::ThinArchive);
    let err = ObjectCode::from_path("/nonexistent/k.ptx").unwrap_err();
    assert!(
        matches!(
            err.reason,
            Reason::Io {
                kind: std::io::ErrorKind::NotFound,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn a_vec_given_to_a_constructor_is_kept_not_copied() {
    let _serial = cuda_link_tests::serial();
    let ptx = b".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() { ret; }\n";
    let fatbin =
        cuda_link_tests::hostile::raw_fatbin(&[(1, 90, &[ptx.as_slice(), b"\0"].concat())]);
    let address = fatbin.as_ptr();
    let code = ObjectCode::from_fatbin(fatbin, "k.fatbin").unwrap();
    assert_eq!(code.as_bytes().as_ptr(), address);
    assert_eq!(code.image().as_bytes().as_ptr(), address);

    // PTX without its NUL gets one in the same buffer when it has room.
    let mut text = Vec::with_capacity(ptx.len() + 1);
    text.extend_from_slice(ptx);
    let address = text.as_ptr();
    let code = ObjectCode::from_ptx(text, "k.ptx").unwrap();
    assert_eq!(code.image().as_bytes().as_ptr(), address);
    assert_eq!(code.image().as_bytes(), [&ptx[..], b"\0"].concat());
    assert_eq!(code.as_bytes(), ptx);
    // Clones and the shared handle are the same bytes too.
    assert_eq!(code.clone().image().shared().as_ptr(), address);
}

/// An empty file and CUDA C++ source say what they are.
#[test]
fn empty_input_and_cuda_source_say_what_they_are() {
    let _serial = cuda_link_tests::serial();
    let err = ObjectCode::from_bytes(Vec::new(), "empty.bin").unwrap_err();
    assert_eq!(err.reason, Reason::Empty);
    assert!(err.to_string().contains("empty file"), "{err}");
    let source = "#include <cuda_runtime.h>\n__global__ void k(float *x) { x[0] = 1; }\n";
    let err = ObjectCode::from_bytes(source.as_bytes().to_vec(), "k.cu").unwrap_err();
    assert_eq!(err.reason, Reason::CudaSource);
    assert!(err.to_string().contains("nvcc -ptx"), "{err}");
    let bare = "__global__ void k() {}\n";
    let err = ObjectCode::from_bytes(bare.as_bytes().to_vec(), "bare.cu").unwrap_err();
    assert_eq!(err.reason, Reason::CudaSource);
}

/// PTX's trailing NULs stay out of `as_bytes`, in the image they stay.
#[test]
fn ptx_as_bytes_has_no_trailing_nul() {
    let _serial = cuda_link_tests::serial();
    let text = b".version 8.0\n.target sm_90\n.address_size 64\n".to_vec();
    let mut with_nuls = text.clone();
    with_nuls.extend([0, 0, 0]);
    let code = ObjectCode::from_ptx(with_nuls, "nul.ptx").unwrap();
    assert_eq!(code.as_bytes(), &text[..]);
    assert_eq!(code.image().as_bytes().last(), Some(&0));
}

/// An object writes itself to a path, and its image reads as bytes.
#[test]
fn objects_write_themselves_and_images_are_bytes() {
    let _serial = cuda_link_tests::serial();
    let text = b".version 8.0\n.target sm_90\n.address_size 64\n".to_vec();
    let code = ObjectCode::from_ptx(text.clone(), "k.ptx").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k.ptx");
    std::fs::write(&path, b"old contents, longer than the new ones").unwrap();
    code.write_to(&path).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), text);
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "a temporary file was left"
    );
    let image: &[u8] = code.image().as_ref();
    assert_eq!(image.last(), Some(&0));
    assert!(code.write_to(dir.path().join("missing/k.ptx")).is_err());
}

/// `write_to` a pipe writes through it, and the pipe stays (a rename would
/// put a plain file there: as root, over `/dev/null`); a link at the path
/// (one planted in a shared folder) is replaced, never followed; a folder
/// is an error.
#[cfg(unix)]
#[test]
fn write_to_keeps_pipes_and_follows_no_link() {
    use std::os::unix::fs::FileTypeExt as _;
    let text = b".version 8.0\n.target sm_90\n.address_size 64\n".to_vec();
    let code = ObjectCode::from_ptx(text.clone(), "k.ptx").unwrap();
    let dir = tempfile::tempdir().unwrap();

    let pipe = dir.path().join("pipe");
    let reader = cuda_link_tests::pipe_with_reader(&pipe);
    // Unblocks the reader whatever `write_to` did with the pipe.
    let wrote = code.write_to(&pipe);
    let kind = std::fs::symlink_metadata(&pipe).unwrap().file_type();
    assert!(kind.is_fifo(), "the pipe is still a pipe: {kind:?}");
    wrote.unwrap();
    assert_eq!(reader.join().unwrap(), text);

    let victim = dir.path().join("victim");
    std::fs::write(&victim, b"victim").unwrap();
    let link = dir.path().join("link.ptx");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    code.write_to(&link).unwrap();
    assert!(!std::fs::symlink_metadata(&link).unwrap().is_symlink());
    assert_eq!(std::fs::read(&link).unwrap(), text);
    assert_eq!(std::fs::read(&victim).unwrap(), b"victim");
    // Dangling: nothing is made where it points.
    let dangling = dir.path().join("dangling.ptx");
    std::os::unix::fs::symlink(dir.path().join("made"), &dangling).unwrap();
    code.write_to(&dangling).unwrap();
    assert!(!dir.path().join("made").exists());
    assert_eq!(std::fs::read(&dangling).unwrap(), text);
    // A file replaced keeps its mode; `name/` is a folder's name.
    let private = dir.path().join("private.ptx");
    std::fs::write(&private, b"old").unwrap();
    std::fs::set_permissions(
        &private,
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .unwrap();
    code.write_to(&private).unwrap();
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(&private).unwrap().permissions(),
    );
    assert_eq!(mode & 0o777, 0o600);
    let slash = dir.path().join("new.ptx/");
    assert!(cuda_link::check_writable(&slash).is_err());
    assert!(cuda_link::check_writable(dir.path().join("new.ptx")).is_ok());
    assert!(cuda_link::check_writable(dir.path().join("missing/k.ptx")).is_err());
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    let error = code.write_to(dir.path()).unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::IsADirectory);
}

/// An input over the size limit is refused before it is parsed, from
/// memory and from a file (which is not read). The limit comes from
/// `CUDA_LINK_MAX_INPUT_BYTES`, read once: checked in a child process.
#[test]
fn inputs_over_the_size_limit_are_refused() {
    let ptx =
        ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() { ret; }\n".repeat(4);
    if std::env::var_os("CUDA_LINK_MAX_INPUT_BYTES").is_some() {
        assert_eq!(cuda_link::ObjectCode::max_input_bytes(), 100);
        let err = ObjectCode::from_bytes(ptx.clone(), "big.ptx").unwrap_err();
        assert_eq!(
            err.reason,
            Reason::TooLarge {
                size: ptx.len() as u64,
                limit: 100
            }
        );
        let (_dir, path) = cuda_link_tests::temp_file("big.ptx", ptx.as_bytes());
        let err = ObjectCode::from_path(&path).unwrap_err();
        assert!(matches!(err.reason, Reason::TooLarge { .. }), "{err}");
        return;
    }
    assert_eq!(ObjectCode::max_input_bytes(), 4 << 30);
    ObjectCode::from_bytes(ptx, "big.ptx").unwrap();
    let child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "object_code::inputs_over_the_size_limit_are_refused",
        ])
        .env("CUDA_LINK_MAX_INPUT_BYTES", "100")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&child.stdout);
    assert!(
        child.status.success() && said.contains("1 passed"),
        "{said}"
    );
}
