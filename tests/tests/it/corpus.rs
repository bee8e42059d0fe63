//! The nvcc 13 corpus (`tests/corpus`, built by `cargo xtask test`): every
//! file inspected against cuobjdump, every container linked with
//! nvJitLink 13, the defect classes of real-world inputs refused with
//! typed errors.
#![allow(clippy::result_large_err)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cuda_link::inspect::{Contents, Payload};
use cuda_link::{
    Arch, LinkError, Linker, LinkerOptions, ObjectCode, ObjectError, OutputKind, Reason,
};
use cuda_link_tests::corpus::{self, CALLER_KERNELS};
use nvjitlink_sys::NvJitLink;

/// The corpus folder and nvJitLink 13 (nvcc 13's output needs 13).
fn setup() -> Option<(PathBuf, Arc<NvJitLink>)> {
    let dir = corpus::dir()?;
    let path = cuda_link_tests::redist("CUDA_LINK_NVJITLINK13_PATH")?;
    // SAFETY: the pinned nvJitLink wheel that `cargo xtask test` installed.
    let lib = unsafe { NvJitLink::open(&path) }.unwrap_or_else(|e| panic!("{e}"));
    Some((dir, Arc::new(lib)))
}

fn load(dir: &Path, name: &str) -> ObjectCode {
    ObjectCode::from_bytes(corpus::read(dir, name), name).unwrap_or_else(|e| panic!("{e}"))
}

fn link_with(
    lib: &Arc<NvJitLink>,
    dir: &Path,
    names: &[&str],
    options: LinkerOptions,
) -> Result<ObjectCode, LinkError> {
    let mut linker = Linker::with_nvjitlink(Arc::clone(lib), options)?;
    for name in names {
        linker.add(&load(dir, name))?;
    }
    linker.link(OutputKind::Cubin)
}

fn link(lib: &Arc<NvJitLink>, dir: &Path, names: &[&str]) -> Result<ObjectCode, LinkError> {
    let options = LinkerOptions::for_arch(Arch::sm(90)).no_cache(true);
    link_with(lib, dir, names, options)
}

fn kernels(code: &ObjectCode) -> BTreeSet<String> {
    let inspection = code.inspect().unwrap();
    inspection
        .kernels()
        .into_iter()
        .map(str::to_owned)
        .collect()
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| (*s).to_owned()).collect()
}

fn corpus_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.len() > 100, "the corpus holds {} files", names.len());
    names
}

#[test]
fn inspection_agrees_with_cuobjdump_on_every_file() {
    let Some((dir, _)) = setup() else { return };
    for name in corpus_files(&dir) {
        let code = load(&dir, &name);
        if name.ends_with(".ptx") {
            // As nvcc writes it: the NUL the C libraries need is ours to add.
            assert_ne!(code.as_bytes().last(), Some(&0), "{name}");
            assert_eq!(code.image().as_bytes().last(), Some(&0), "{name}");
        }
        let inspection = code.inspect().unwrap_or_else(|e| panic!("{e}"));
        // cuobjdump reads neither bare PTX nor bare LTO-IR.
        if matches!(inspection.contents, Contents::Ptx(_) | Contents::Ltoir(_)) {
            continue;
        }
        let Some(theirs) = corpus::cuobjdump(&dir.join(&name)) else {
            return;
        };
        let mut ours = corpus::Listing::default();
        let push_cubin = |listing: &mut corpus::Listing, arch: String, kernels: &[String]| {
            listing.elf.push(arch);
            listing.kernels.extend(kernels.iter().cloned());
        };
        if let Contents::Cubin(info) = &inspection.contents {
            push_cubin(&mut ours, info.arch.to_string(), &info.kernels);
        }
        for entry in inspection.fatbin_entries() {
            match &entry.payload {
                Payload::Cubin(info) => {
                    push_cubin(&mut ours, entry.arch.to_string(), &info.kernels)
                }
                Payload::Ptx(_) => ours.ptx.push(entry.arch.to_string()),
                Payload::Ltoir(_) | Payload::Opaque => ours.ltoir.push(entry.arch.to_string()),
                other => panic!("{name}: entry {} not decoded: {other:?}", entry.index),
            }
        }
        ours.elf.sort();
        ours.ptx.sort();
        ours.ltoir.sort();
        ours.ltoir.dedup();
        ours.kernels.sort();
        ours.kernels.dedup();
        assert_eq!(
            ours, theirs,
            "{name}: ours (left) against cuobjdump (right)"
        );
    }
}

#[test]
fn device_functions_link_from_every_container() {
    let Some((dir, lib)) = setup() else { return };
    let _serial = cuda_link_tests::serial();
    let callers = corpus::containers("use_device_functions");
    let callees = corpus::containers("device_functions");
    for ((caller, caller_lto), (callee, callee_lto)) in callers.iter().zip(&callees) {
        let linked = link(&lib, &dir, &[caller, callee]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            kernels(&linked),
            set(&CALLER_KERNELS),
            "{caller} + {callee}"
        );
        let mut linker =
            Linker::with_nvjitlink(Arc::clone(&lib), LinkerOptions::for_arch(Arch::sm(90)));
        let linker = linker.as_mut().unwrap();
        linker
            .add_many([&load(&dir, caller), &load(&dir, callee)])
            .unwrap();
        assert_eq!(linker.uses_lto(), *caller_lto || *callee_lto, "{caller}");
    }
    // Mixed: LTO-IR calling SASS, PTX calling LTO-IR, every compression mode.
    for pair in [
        ["use_device_functions.ltoir", "device_functions.o"],
        ["use_device_functions.ptx", "device_functions_lto.fatbin"],
        ["use_device_functions_lto.o", "libdevice_functions.a"],
        [
            "use_device_functions_none.fatbin",
            "device_functions_sass.fatbin",
        ],
        ["use_device_functions_size.fatbin", "device_functions.cubin"],
        [
            "use_device_functions_speed.fatbin",
            "device_functions.cubin",
        ],
        [
            "use_device_functions_balance.fatbin",
            "device_functions.cubin",
        ],
        [
            "use_device_functions_default.fatbin",
            "device_functions.cubin",
        ],
    ] {
        let linked = link(&lib, &dir, &pair).unwrap_or_else(|e| panic!("{pair:?}: {e}"));
        assert_eq!(kernels(&linked), set(&CALLER_KERNELS), "{pair:?}");
    }
}

#[test]
fn every_source_links_alone_or_with_its_partners() {
    let Some((dir, lib)) = setup() else { return };
    let _serial = cuda_link_tests::serial();
    let cases: [(&str, Option<&str>, &[&str]); 4] = [
        ("lto_kernel", Some("lto_scale"), &["lto_apply"]),
        ("variables", None, &["use_variables"]),
        (
            "device_launch",
            Some("cudadevrt"),
            &["dl_child", "dl_parent"],
        ),
        ("weak_use", Some("weak_add"), &["call_weak"]),
    ];
    for (stem, partner, expected) in cases {
        let partners = partner.map(corpus::containers);
        for (i, (file, _)) in corpus::containers(stem).iter().enumerate() {
            let mut names = vec![file.clone()];
            match (partner, &partners) {
                (Some("cudadevrt"), _) => names.push("libcudadevrt.a".into()),
                (Some(_), Some(partners)) => names.push(partners[i].0.clone()),
                _ => {}
            }
            if stem.starts_with("weak") && i >= 5 {
                break; // weak_*.cu are built without LTO forms.
            }
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            let linked = link(&lib, &dir, &names).unwrap_or_else(|e| panic!("{names:?}: {e}"));
            // libcudadevrt.a brings its own file-local kernels.
            let mut found = kernels(&linked);
            found.retain(|k| !k.starts_with("__nv_static_") || partner != Some("cudadevrt"));
            assert_eq!(found, set(expected), "{names:?}");
        }
    }
    let linked = link(&lib, &dir, &["variables.o"]).unwrap();
    let Contents::Cubin(info) = linked.inspect().unwrap().contents else {
        panic!("a cubin")
    };
    for variable in ["device_counter", "constant_coeffs", "managed_value"] {
        assert!(
            info.globals.iter().any(|g| g.contains(variable)),
            "{variable} in {:?}",
            info.globals
        );
    }
    let params = link(&lib, &dir, &["params.fatbin"]).unwrap();
    let expected = [
        "p_scalars",
        "p_struct",
        "p_aligned",
        "p_odd",
        "p_array",
        "p_none",
        "_Z10p_templateIfEvPT_S0_",
        "_Z10p_templateIiEvPT_S0_",
    ];
    assert_eq!(kernels(&params), set(&expected));
}

#[test]
fn nvcc_warnings_and_errors_are_where_the_build_left_them() {
    let Some((dir, lib)) = setup() else { return };
    let _serial = cuda_link_tests::serial();
    assert!(corpus::build_log(&dir, "warn.cubin").contains("warning #177-D"));
    let linked = link(&lib, &dir, &["warn.cubin"]).unwrap();
    assert_eq!(kernels(&linked), set(&["warns"]));
    assert!(!dir.join("error.ptx").exists());
    assert!(
        corpus::build_log(&dir, "error.ptx")
            .contains("identifier \"undeclared_name\" is undefined")
    );
}

#[test]
fn undefined_externs_carry_nvjitlinks_words() {
    let Some((dir, lib)) = setup() else { return };
    let _serial = cuda_link_tests::serial();
    for (file, lto) in corpus::containers("undefined_extern") {
        let error = link(&lib, &dir, &[&file]).expect_err(&file);
        let log = error
            .error_log()
            .unwrap_or_else(|| panic!("{file}: {error}"));
        let expected = if lto {
            // Under LTO, ptxas reports it on the PTX libNVVM wrote.
            "Unresolved extern function 'undefined_extern'".to_owned()
        } else {
            format!("Undefined reference to 'undefined_extern' in '{file}'")
        };
        assert!(log.contains(&expected), "{file}: {log}");
        assert!(error.to_string().contains(&expected), "{file}: {error}");
    }
}

#[test]
fn duplicate_strong_definitions_fail_from_every_container() {
    let Some((dir, lib)) = setup() else { return };
    let _serial = cuda_link_tests::serial();
    for (file, lto) in corpus::containers("duplicate_add") {
        let first = if lto {
            "device_functions.ltoir"
        } else {
            "device_functions.o"
        };
        let error = link(&lib, &dir, &[first, &file]).expect_err(&file);
        if lto {
            // LTO-IR is not inspectable; libNVVM refuses the pair itself.
            let log = error.error_log().unwrap_or_default();
            assert!(log.contains("symbol multiply defined"), "{file}: {error}");
            continue;
        }
        match error {
            LinkError::DuplicateDefinition {
                symbol,
                first: in_first,
                second,
            } => {
                assert_eq!(symbol, "add_cabi");
                assert_eq!(in_first, first);
                assert!(second.starts_with(&file), "{second}");
            }
            other => panic!("{file}: {other}"),
        }
    }
    // A refused input leaves nothing behind: the link goes on without it.
    let mut linker =
        Linker::with_nvjitlink(Arc::clone(&lib), LinkerOptions::for_arch(Arch::sm(90))).unwrap();
    linker.add(&load(&dir, "device_functions.o")).unwrap();
    assert!(linker.add(&load(&dir, "libduplicate_add.a")).is_err());
    linker.add(&load(&dir, "use_device_functions.o")).unwrap();
    let linked = linker.link(OutputKind::Cubin).unwrap();
    assert_eq!(kernels(&linked), set(&CALLER_KERNELS));
    assert_eq!(linker.inputs().len(), 2);
}

#[test]
fn executable_cubins_are_refused_in_every_container() {
    let Some((dir, lib)) = setup() else { return };
    let _serial = cuda_link_tests::serial();
    for file in [
        "standalone.cubin",
        "standalone.fatbin",
        "standalone_ptx.fatbin",
        "standalone.o",
        "libstandalone.a",
    ] {
        let mut linker =
            Linker::with_nvjitlink(Arc::clone(&lib), LinkerOptions::for_arch(Arch::sm(90)))
                .unwrap();
        let error = linker.add(&load(&dir, file)).expect_err(file);
        let LinkError::Input(ObjectError { name, reason }) = error else {
            panic!("{file}: {error}")
        };
        assert_eq!(name, file);
        match reason {
            Reason::ExecutableCubin => assert_eq!(file, "standalone.cubin"),
            Reason::Inside { place, reason } => {
                assert_eq!(*reason, Reason::ExecutableCubin);
                assert!(place.contains("fatbin entry 0"), "{file}: {place}");
            }
            other => panic!("{file}: {other}"),
        }
    }
}

/// Every fatbin of the corpus, rebuilt by the pure-Rust writer from its
/// own entries, holds the same entries: kind, arch, flags, version,
/// identifier, options and the payload after decompression; and
/// cuobjdump lists the rebuilt file as it lists the original, and
/// extracts the same bytes from both.
#[test]
fn every_corpus_fatbin_round_trips_through_the_writer() {
    let Some((dir, _)) = setup() else { return };
    let scratch = tempfile::tempdir().unwrap();
    let (mut count, mut extracted) = (0, 0);
    for name in corpus_files(&dir)
        .into_iter()
        .filter(|n| n.ends_with(".fatbin"))
    {
        let original = load(&dir, &name);
        let rebuilt = cuda_link::FatbinBuilder::from_fatbin(&original)
            .and_then(|builder| builder.build(format!("{name} rebuilt")))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let entries = |code: &ObjectCode| {
            let parsed = cuda_link::fuzzing::parse_all(code.as_bytes()).unwrap();
            let (_, fatbin) = &parsed[0];
            fatbin
                .entries()
                .map(|entry| {
                    let entry = entry.unwrap();
                    let payload = match entry.is_opaque() {
                        true => entry.payload.to_vec(),
                        false => entry.decompress().unwrap().into_owned(),
                    };
                    (
                        entry.kind,
                        entry.arch,
                        entry.flags,
                        entry.version,
                        entry.identifier(),
                        entry.options_raw.map(<[u8]>::to_vec),
                        payload,
                    )
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(entries(&original), entries(&rebuilt), "{name}");
        let path = scratch.path().join(&name);
        rebuilt.write_to(&path).unwrap();
        if let (Some(ours), Some(theirs)) = (
            corpus::cuobjdump(&path),
            corpus::cuobjdump(&dir.join(&name)),
        ) {
            assert_eq!(
                ours, theirs,
                "{name}: rebuilt (left) against original (right)"
            );
            let (ours, theirs) = (
                corpus::cuobjdump_extract(&path).unwrap(),
                corpus::cuobjdump_extract(&dir.join(&name)).unwrap(),
            );
            assert!(ours == theirs, "{name}: cuobjdump extracts other bytes");
            extracted += ours.len();
        }
        count += 1;
    }
    assert!(count >= 10, "{count} fatbins in the corpus");
    if cuda_link_tests::redist("CUDA_LINK_CUOBJDUMP").is_some() {
        assert!(extracted >= 20, "{extracted} entries extracted");
    }
}

/// The same fatbins rebuilt by nvFatbin (`FatbinBuilder::build_with`)
/// list the same in cuobjdump and in our inspection (kind and arch of each
/// entry, and kernels). Fatbins with encoded LTO-IR are left out:
/// nvFatbin takes plain LTO-IR and encodes it itself.
#[test]
fn every_corpus_fatbin_rebuilds_with_nvfatbin() {
    let Some((dir, _)) = setup() else { return };
    let Some(path) = cuda_link_tests::redist("CUDA_LINK_NVFATBIN13_PATH") else {
        return;
    };
    // SAFETY: the pinned nvFatbin wheel that `cargo xtask test` installed.
    let lib = unsafe { nvfatbin_sys::NvFatbin::open(&path) }.unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let mut count = 0;
    for name in corpus_files(&dir)
        .into_iter()
        .filter(|n| n.ends_with(".fatbin"))
    {
        let original = load(&dir, &name);
        let info = original.inspect().unwrap();
        if info
            .fatbin_entries()
            .any(|e| matches!(e.payload, Payload::Opaque))
        {
            continue;
        }
        let rebuilt = cuda_link::FatbinBuilder::from_fatbin(&original)
            .and_then(|builder| builder.build_with(&lib, format!("{name} by nvFatbin")))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let slots = |code: &ObjectCode| {
            let info = code.inspect().unwrap();
            let slots: Vec<String> = info
                .fatbin_entries()
                .map(|e| format!("{} {}", e.kind.name(), e.arch))
                .collect();
            (
                slots,
                info.kernels()
                    .into_iter()
                    .map(str::to_owned)
                    .collect::<Vec<_>>(),
            )
        };
        assert_eq!(slots(&rebuilt), slots(&original), "{name}");
        let path = scratch.path().join(&name);
        rebuilt.write_to(&path).unwrap();
        if let (Some(ours), Some(theirs)) = (
            corpus::cuobjdump(&path),
            corpus::cuobjdump(&dir.join(&name)),
        ) {
            assert_eq!(
                ours, theirs,
                "{name}: by nvFatbin (left) against original (right)"
            );
        }
        count += 1;
    }
    assert!(count >= 5, "{count} fatbins without encoded LTO-IR");
}

/// A host object goes into an nvFatbin-written fatbin as its relocatable
/// device code (`nvFatbinAddReloc`): relocatable PTX entries.
#[test]
fn a_host_object_goes_in_through_nvfatbin() {
    let (Some(path), Some(object)) = (
        cuda_link_tests::redist("CUDA_LINK_NVFATBIN13_PATH"),
        cuda_link_tests::fixtures::cudadevrt_object(),
    ) else {
        return;
    };
    // SAFETY: the pinned nvFatbin wheel that `cargo xtask test` installed.
    let lib = unsafe { nvfatbin_sys::NvFatbin::open(&path) }.unwrap();
    let object = ObjectCode::from_object(object, "cuda_device_runtime.o").unwrap();
    let fatbin = cuda_link::FatbinBuilder::new()
        .add(&object, None)
        .and_then(|builder| builder.build_with(&lib, "reloc.fatbin"))
        .unwrap_or_else(|e| panic!("{e}"));
    let info = fatbin.inspect().unwrap();
    let kinds: BTreeSet<String> = info.fatbin_entries().map(|e| e.kind.name()).collect();
    assert_eq!(kinds, BTreeSet::from(["reloc-ptx".to_owned()]));
}

/// An sm_100 cubin's entry, written in Rust and by nvFatbin: the same
/// flags and the same options slot (the cubin's `.nv.compat` records).
#[test]
fn sm100_entries_are_written_as_nvfatbin_writes_them() {
    let (Some(path), Some(ptx)) = (
        cuda_link_tests::redist("CUDA_LINK_NVFATBIN13_PATH"),
        cuda_link_tests::fixtures::saxpy_ptx(),
    ) else {
        return;
    };
    // SAFETY: the pinned nvFatbin wheel that `cargo xtask test` installed.
    let lib = unsafe { nvfatbin_sys::NvFatbin::open(&path) }.unwrap();
    let cubin = cuda_link_tests::ptxas(&ptx, "sm_100", true).unwrap();
    let cubin = ObjectCode::from_cubin(cubin, "saxpy.sm_100.cubin").unwrap();
    let builder = cuda_link::FatbinBuilder::new().add(&cubin, None).unwrap();
    let entry = |code: &ObjectCode| {
        let parsed = cuda_link::fuzzing::parse_all(code.as_bytes()).unwrap();
        let entry = parsed[0].1.entries().next().unwrap().unwrap();
        (
            entry.flags,
            entry.version,
            entry.options_raw.map(<[u8]>::to_vec),
        )
    };
    let ours = entry(&builder.build("ours").unwrap());
    let theirs = entry(&builder.build_with(&lib, "theirs").unwrap());
    assert_eq!(ours, theirs);
}
