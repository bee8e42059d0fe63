//! Real links with nvJitLink 12 and 13 on the CPU, every input kind.

use std::sync::Arc;

use cuda_link::inspect::Contents;
use cuda_link::{
    Arch, LinkError, Linker, LinkerOptions, ObjectCode, ObjectKind, OutputKind, PtxIsa, Reason,
};
use cuda_link_tests::{FatbinInput, fixtures, nvfatbin, nvjitlink_libraries};
use nvjitlink_sys::{NvJitLink, sys::nvJitLinkResult};

/// Runs `check` once per provisioned nvJitLink major.
fn each_nvjitlink(mut check: impl FnMut(u32, Arc<NvJitLink>)) {
    for (major, path) in nvjitlink_libraries() {
        // SAFETY: the pinned nvJitLink wheel that `cargo xtask test` installed.
        let lib = Arc::new(unsafe { NvJitLink::open(&path) }.unwrap_or_else(|e| panic!("{e}")));
        check(major, lib);
    }
}

fn linker(lib: &Arc<NvJitLink>, options: LinkerOptions) -> Linker {
    Linker::with_nvjitlink(Arc::clone(lib), options).unwrap()
}

fn sm90() -> LinkerOptions {
    LinkerOptions::for_arch(Arch::sm(90))
}

/// Links `inputs` and checks that the cubin is sm_90 and has `kernels`.
fn link_and_check(lib: &Arc<NvJitLink>, inputs: &[ObjectCode], kernels: &[&str]) -> ObjectCode {
    let mut linker = linker(lib, sm90());
    linker.add_many(inputs).unwrap();
    let cubin = linker
        .link(OutputKind::Cubin)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(cubin.kind(), ObjectKind::Cubin);
    let info = cubin.inspect().unwrap();
    assert_eq!(info.arches(), ["sm_90".parse().unwrap()], "{info}");
    for kernel in kernels {
        assert!(info.kernels().contains(kernel), "{kernel} missing:\n{info}");
    }
    cubin
}

fn ptx(name: &str, source: &str) -> Option<ObjectCode> {
    Some(ObjectCode::from_ptx(fixtures::ptx(source, name)?, name).unwrap())
}

fn ltoir(name: &str, source: &str) -> Option<ObjectCode> {
    Some(ObjectCode::from_ltoir(fixtures::ltoir(source, name, "sm_90")?, name).unwrap())
}

/// `lto_saxpy` and the two modules it calls, as sm_90 LTO-IR.
fn lto_saxpy_inputs() -> Option<[ObjectCode; 3]> {
    Some([
        ltoir("lto_main.cu", fixtures::LTO_MAIN_CU)?,
        ltoir("lto_scale.cu", fixtures::LTO_SCALE_CU)?,
        ltoir("lto_offset.cu", fixtures::LTO_OFFSET_CU)?,
    ])
}

#[test]
fn each_input_kind_alone() {
    let _serial = cuda_link_tests::serial();
    let Some(saxpy_ptx) = fixtures::saxpy_ptx() else {
        return;
    };
    let Some(cubin) = fixtures::saxpy_relocatable_cubin() else {
        return;
    };
    let Some(saxpy_ltoir) = fixtures::saxpy_ltoir() else {
        return;
    };
    let fatbin = nvfatbin(&[FatbinInput::Cubin(&cubin, "90")], &["-compress-all"]).unwrap();
    let ptx_code = ObjectCode::from_ptx(saxpy_ptx, "saxpy.ptx").unwrap();
    let inputs = [
        ptx_code,
        ObjectCode::from_cubin(cubin, "saxpy.cubin").unwrap(),
        ObjectCode::from_ltoir(saxpy_ltoir, "saxpy.ltoir").unwrap(),
        ObjectCode::from_fatbin(fatbin, "saxpy.fatbin").unwrap(),
    ];
    each_nvjitlink(|major, lib| {
        for input in &inputs {
            eprintln!("nvJitLink {major}: {}", input.name());
            link_and_check(&lib, std::slice::from_ref(input), &["saxpy"]);
        }
    });
}

#[test]
fn the_real_libcudadevrt_archive_and_its_host_object() {
    let _serial = cuda_link_tests::serial();
    let Some(devrt) = fixtures::cudadevrt_bytes() else {
        return;
    };
    let devrt = ObjectCode::from_archive(devrt, "libcudadevrt.a").unwrap();
    let Some(user) = ptx("devrt_user.cu", fixtures::DEVRT_USER_CU) else {
        return;
    };
    let Some(object) = fixtures::cudadevrt_object() else {
        return;
    };
    let object = ObjectCode::from_object(object, "cuda_device_runtime.o").unwrap();
    each_nvjitlink(|_, lib| {
        link_and_check(&lib, &[user.clone(), devrt.clone()], &["parent", "child"]);
        // The archive's member alone is a host object input.
        link_and_check(&lib, &[user.clone(), object.clone()], &["parent", "child"]);
        // Without the archive the device-runtime launch stays unresolved.
        let mut alone = linker(&lib, sm90());
        alone.add(&user).unwrap();
        assert!(alone.link(OutputKind::Cubin).is_err());
    });
}

#[test]
fn mixed_kinds_with_lto() {
    let _serial = cuda_link_tests::serial();
    let Some(main) = ltoir("lto_main.cu", fixtures::LTO_MAIN_CU) else {
        return;
    };
    let Some(scale) = ltoir("lto_scale.cu", fixtures::LTO_SCALE_CU) else {
        return;
    };
    let Some(offset) = ptx("lto_offset.cu", fixtures::LTO_OFFSET_CU) else {
        return;
    };
    let Some(saxpy) = fixtures::saxpy_relocatable_cubin() else {
        return;
    };
    let saxpy = ObjectCode::from_cubin(saxpy, "saxpy.cubin").unwrap();
    each_nvjitlink(|_, lib| {
        let mut linker = linker(&lib, sm90());
        linker.add_many([&main, &scale, &offset, &saxpy]).unwrap();
        assert!(linker.uses_lto(), "-lto is added for LTO-IR inputs");
        let cubin = linker
            .link(OutputKind::Cubin)
            .unwrap_or_else(|e| panic!("{e}"));
        let kernels = cubin
            .inspect()
            .unwrap()
            .kernels()
            .iter()
            .map(|k| k.to_string())
            .collect::<Vec<_>>();
        assert!(
            kernels.contains(&"lto_saxpy".to_owned()) && kernels.contains(&"saxpy".to_owned()),
            "{kernels:?}"
        );
    });
}

#[test]
fn ptx_and_ltoir_outputs() {
    let _serial = cuda_link_tests::serial();
    let Some([main, scale, offset]) = lto_saxpy_inputs() else {
        return;
    };
    each_nvjitlink(|major, lib| {
        let mut linker = linker(&lib, sm90());
        linker.add_many([&main, &scale, &offset]).unwrap();
        let ptx = linker
            .link(OutputKind::Ptx)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(ptx.kind(), ObjectKind::Ptx);
        assert_eq!(ptx.inspect().unwrap().kernels(), ["lto_saxpy"]);

        let ltoir = linker.link(OutputKind::Ltoir);
        if major >= 13 {
            let ltoir = ltoir.unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(ltoir.kind(), ObjectKind::Ltoir);
        } else {
            assert!(
                matches!(ltoir, Err(LinkError::LtoirOutputNeedsNvJitLink13 { .. })),
                "{ltoir:?}"
            );
        }

        // The ptx option and the requested output must agree.
        let options = sm90().ptx(true).link_time_optimization(true);
        let mut asks_for_ptx = Linker::with_nvjitlink(Arc::clone(&lib), options).unwrap();
        asks_for_ptx.add_many([&main, &scale, &offset]).unwrap();
        assert!(matches!(
            asks_for_ptx.link(OutputKind::Cubin),
            Err(LinkError::InvalidOption { option: "ptx", .. })
        ));
        assert_eq!(
            asks_for_ptx.link(OutputKind::Ptx).unwrap().kind(),
            ObjectKind::Ptx
        );

        // PTX output needs LTO, which plain PTX inputs do not bring.
        let mut plain = linker_for_ptx_only(&lib);
        assert!(matches!(
            plain.link(OutputKind::Ptx),
            Err(LinkError::OutputNeedsLto { .. })
        ));
    });
}

/// PTX output lowered to `ptx_isa`: it states that ISA and ptxas took
/// it; an ISA too old for the arch (sm_90 needs 7.8) is `PtxIsaTooLow`
/// with ptxas's words; an ISA at or above nvJitLink's leaves the PTX as
/// linked.
#[test]
#[allow(clippy::result_large_err)]
fn ptx_output_lowered_to_the_isa_asked() {
    let _serial = cuda_link_tests::serial();
    let Some([main, scale, offset]) = lto_saxpy_inputs() else {
        return;
    };
    let version = |code: &ObjectCode| match code.inspect().unwrap().contents {
        Contents::Ptx(info) => info.version,
        other => panic!("{other:?}"),
    };
    each_nvjitlink(|major, lib| {
        let link = |isa: Option<PtxIsa>| {
            let mut options = sm90();
            options.ptx_isa = isa;
            let mut linker = linker(&lib, options);
            linker.add_many([&main, &scale, &offset]).unwrap();
            linker.link(OutputKind::Ptx)
        };
        let linked = link(None).unwrap();
        let first = PtxIsa::first_of_cuda(major).unwrap();
        let lowered = link(Some(first)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(version(&lowered), first.to_string());
        assert_ne!(version(&linked), first.to_string(), "nvJitLink {major}");
        assert_eq!(lowered.inspect().unwrap().kernels(), ["lto_saxpy"]);
        let stated: PtxIsa = version(&linked).parse().unwrap();
        assert_eq!(link(Some(stated)).unwrap().as_bytes(), linked.as_bytes());
        let too_low = link(Some(PtxIsa::new(7, 0))).unwrap_err();
        let LinkError::PtxIsaTooLow { isa, log, .. } = &too_low else {
            panic!("{too_low}");
        };
        assert_eq!(*isa, PtxIsa::new(7, 0));
        assert!(log.contains("sm_90") || log.contains("version"), "{log}");
    });
}

fn linker_for_ptx_only(lib: &Arc<NvJitLink>) -> Linker {
    let mut linker = linker(lib, sm90());
    linker
        .add(&ObjectCode::from_ptx(fixtures::saxpy_ptx().unwrap(), "saxpy.ptx").unwrap())
        .unwrap();
    linker
}

#[test]
fn undefined_reference_carries_the_log_and_inputs() {
    let _serial = cuda_link_tests::serial();
    let Some(user) = ptx("extern_user.cu", fixtures::EXTERN_USER_CU) else {
        return;
    };
    each_nvjitlink(|_, lib| {
        let mut linker = linker(&lib, sm90());
        linker.add(&user).unwrap();
        let err = linker.link(OutputKind::Cubin).unwrap_err();
        let LinkError::NvJitLink {
            inputs, error_log, ..
        } = &err
        else {
            panic!("{err:?}")
        };
        assert_eq!(inputs, &["extern_user.cu"]);
        assert!(
            error_log.contains("Undefined reference to 'missing_function'"),
            "{error_log}"
        );
        assert!(err.to_string().contains("Undefined reference"), "{err}");
        assert_eq!(linker.error_log(), error_log);
    });
}

#[test]
fn unrecognized_option_is_reported() {
    let _serial = cuda_link_tests::serial();
    each_nvjitlink(|_, lib| {
        let Some(ptx) = fixtures::saxpy_ptx() else {
            return;
        };
        let options = sm90().extra_flags(["-no-such-flag"]);
        let mut linker = linker(&lib, options);
        linker
            .add(&ObjectCode::from_ptx(ptx, "saxpy.ptx").unwrap())
            .unwrap();
        let err = linker.link(OutputKind::Cubin).unwrap_err();
        assert!(
            matches!(
                &err,
                LinkError::NvJitLink { error, .. }
                    if error.result == nvJitLinkResult::NVJITLINK_ERROR_UNRECOGNIZED_OPTION
            ),
            "{err:?}"
        );
    });
}

#[test]
fn missing_and_invalid_arch() {
    let _serial = cuda_link_tests::serial();
    each_nvjitlink(|_, lib| {
        let Some(ptx) = fixtures::saxpy_ptx() else {
            return;
        };
        let mut linker = linker(&lib, LinkerOptions::default());
        linker
            .add(&ObjectCode::from_ptx(ptx, "saxpy.ptx").unwrap())
            .unwrap();
        // No driver here, hence no current context to take the arch from.
        assert!(matches!(
            linker.link(OutputKind::Cubin),
            Err(LinkError::MissingArch)
        ));
        // Arches are typed: a bad one never reaches a linker.
        assert!("gfx90a".parse::<Arch>().is_err());
        // nvJitLink ends the process on a one-digit SM ("Unknown arch
        // name"): refused before it is called, in this process too.
        for options in [
            LinkerOptions::for_arch(Arch::sm(9)),
            LinkerOptions::default().targets([cuda_link::LinkTarget::Cubin(Arch::sm(9))]),
        ] {
            let options = options.isolation(cuda_link::Isolation::InProcess);
            let ptx = linker.inputs()[0].clone();
            assert!(matches!(
                Linker::check(&options, std::slice::from_ref(&ptx)),
                Err(LinkError::InvalidOption { option: "arch", .. })
            ));
            let mut tiny = self::linker(&lib, options);
            tiny.add(&ptx).unwrap();
            let refused = match tiny.options().targets.is_empty() {
                true => tiny.link(OutputKind::Cubin).map(drop),
                false => tiny.link_fatbin().map(drop),
            };
            let said = cuda_link::Report(&refused.unwrap_err()).to_string();
            assert!(said.contains("sm_9 is no GPU architecture"), "{said}");
        }
    });
}

#[test]
fn ltoir_newer_than_the_target_fails() {
    let _serial = cuda_link_tests::serial();
    let Some(newer) = fixtures::ltoir(fixtures::SAXPY_CU, "saxpy.cu", "sm_100") else {
        return;
    };
    let newer = ObjectCode::from_ltoir(newer, "saxpy_sm100.ltoir").unwrap();
    each_nvjitlink(|_, lib| {
        let mut linker = linker(&lib, sm90());
        linker.add(&newer).unwrap();
        let err = linker.link(OutputKind::Cubin).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("saxpy_sm100.ltoir"), "{text}");
        assert!(text.to_lowercase().contains("arch"), "{text}");
    });
}

#[test]
fn executable_cubin_is_refused_before_linking() {
    let _serial = cuda_link_tests::serial();
    let Some(exec) = fixtures::saxpy_executable_cubin() else {
        return;
    };
    let exec = ObjectCode::from_cubin(exec, "saxpy_exec.cubin").unwrap();
    each_nvjitlink(|_, lib| {
        let err = linker(&lib, sm90()).add(&exec).map(drop).unwrap_err();
        let LinkError::Input(input) = &err else {
            panic!("{err:?}")
        };
        assert_eq!(input.reason, Reason::ExecutableCubin);
        assert!(err.to_string().contains("saxpy_exec.cubin"), "{err}");
    });
}

#[test]
fn options_reach_nvjitlink() {
    let _serial = cuda_link_tests::serial();
    let Some(ptx) = ptx("heavy.cu", fixtures::HEAVY_CU) else {
        return;
    };
    each_nvjitlink(|_, lib| {
        // -verbose and -time write to the info log.
        for options in [sm90().verbose(true), sm90().time(true)] {
            let mut linker = linker(&lib, options.clone());
            linker.add(&ptx).unwrap();
            linker.link(OutputKind::Cubin).unwrap();
            assert!(
                !linker.info_log().trim().is_empty(),
                "{options:?} left no info log"
            );
        }
        // max_register_count lowers the count recorded in .nv.info.
        let registers = |limit: Option<u32>| {
            let mut options = sm90().no_cache(true);
            options.max_register_count = limit;
            let mut linker = linker(&lib, options);
            linker.add(&ptx).unwrap();
            let info = linker.link(OutputKind::Cubin).unwrap().inspect().unwrap();
            let Contents::Cubin(cubin) = info.contents else {
                panic!()
            };
            cubin.registers["heavy"]
        };
        let free = registers(None);
        let capped = registers(Some(32));
        assert!(
            capped <= 32 && capped < free,
            "capped {capped}, free {free}"
        );
    });
}

#[test]
fn linkers_run_in_parallel_threads() {
    let _serial = cuda_link_tests::serial();
    let Some(ptx) = fixtures::saxpy_ptx() else {
        return;
    };
    let ptx = ObjectCode::from_ptx(ptx, "saxpy.ptx").unwrap();
    each_nvjitlink(|_, lib| {
        std::thread::scope(|scope| {
            for _ in 0..4 {
                let (lib, ptx) = (Arc::clone(&lib), ptx.clone());
                scope.spawn(move || {
                    for _ in 0..3 {
                        link_and_check(&lib, std::slice::from_ref(&ptx), &["saxpy"]);
                    }
                });
            }
        });
    });
}

/// The section names of a linked cubin.
fn section_names(code: &ObjectCode) -> Vec<String> {
    use object::{Object as _, ObjectSection as _};
    let file = object::File::parse(code.as_bytes()).unwrap();
    file.sections()
        .filter_map(|s| s.name().ok().map(str::to_owned))
        .collect()
}

fn saxpy_ptx_and_ltoir() -> Option<(ObjectCode, ObjectCode)> {
    Some((
        ptx("saxpy.cu", fixtures::SAXPY_CU)?,
        ltoir("saxpy.cu", fixtures::SAXPY_CU)?,
    ))
}

/// `ftz`, `prec_div`, `prec_sqrt` and `fma`, each set to each value, link
/// PTX, LTO-IR and a mix of both on nvJitLink 12 and 13: libNVVM, which
/// gets them under LTO, takes only the `=0` / `=1` spelling.
#[test]
fn boolean_options_link_with_and_without_lto() {
    let _serial = cuda_link_tests::serial();
    let Some((ptx_input, ltoir_input)) = saxpy_ptx_and_ltoir() else {
        return;
    };
    let mixed = [
        ltoir("lto_main.cu", fixtures::LTO_MAIN_CU).unwrap(),
        ptx("lto_scale.cu", fixtures::LTO_SCALE_CU).unwrap(),
        ltoir("lto_offset.cu", fixtures::LTO_OFFSET_CU).unwrap(),
    ];
    let sets: [(&[ObjectCode], &str); 3] = [
        (std::slice::from_ref(&ptx_input), "saxpy"),
        (std::slice::from_ref(&ltoir_input), "saxpy"),
        (&mixed, "lto_saxpy"),
    ];
    each_nvjitlink(|major, lib| {
        for (inputs, kernel) in sets {
            for value in [true, false] {
                for (field, options) in [
                    ("ftz", sm90().ftz(value)),
                    ("prec_div", sm90().prec_div(value)),
                    ("prec_sqrt", sm90().prec_sqrt(value)),
                    ("fma", sm90().fma(value)),
                ] {
                    let mut linker = linker(&lib, options);
                    linker.add_many(inputs).unwrap();
                    let linked = linker.link(OutputKind::Cubin).unwrap_or_else(|e| {
                        panic!(
                            "nvJitLink {major}, {field} = {value}, {:?}: {e}",
                            inputs[0].kind()
                        )
                    });
                    assert!(linked.inspect().unwrap().kernels().contains(&kernel));
                }
            }
        }
    });
}

/// `ftz`, `-O`, `lineinfo` and `debug` show in the output, not only in a
/// successful link. `ftz` changes LTO-IR's code generation; PTX spells
/// `.ftz` on each instruction, so there it changes nothing.
#[test]
fn code_changing_options_change_the_output() {
    let _serial = cuda_link_tests::serial();
    let Some((ptx_input, ltoir_input)) = saxpy_ptx_and_ltoir() else {
        return;
    };
    each_nvjitlink(|major, lib| {
        for input in [&ptx_input, &ltoir_input] {
            let link = |options: LinkerOptions| {
                let options = options.no_cache(true);
                let mut linker = linker(&lib, options);
                linker.add(input).unwrap();
                linker.link(OutputKind::Cubin).unwrap()
            };
            let what = format!("nvJitLink {major}, {}", input.kind());
            let base = link(sm90());
            let has =
                |code: &ObjectCode, section: &str| section_names(code).iter().any(|s| s == section);
            let ftz = link(sm90().ftz(true));
            let is_ltoir = input.kind() == ObjectKind::Ltoir;
            assert_eq!(ftz.as_bytes() != base.as_bytes(), is_ltoir, "{what}: ftz");
            let o0 = link(sm90().optimization_level(0));
            assert_ne!(o0.as_bytes(), base.as_bytes(), "{what}: -O0");
            assert!(!has(&base, ".nv_debug_line_sass"), "{what}");
            let lineinfo = link(sm90().lineinfo(true));
            assert!(has(&lineinfo, ".nv_debug_line_sass"), "{what}: lineinfo");
            let debug = link(sm90().debug(true));
            assert!(has(&debug, ".nv_debug_info_reg_sass"), "{what}: debug");
            assert!(!has(&lineinfo, ".nv_debug_info_reg_sass"), "{what}");
        }
    });
}

/// One link per target, bundled: sm_80, sm_90 and sm_100 cubins and
/// compute_80 PTX from one LTO-IR input, each link through the cache; a
/// target that cannot link is named.
#[test]
fn multi_arch_links_bundle_a_fatbin() {
    use cuda_link::{LinkCache, LinkTarget};
    let _serial = cuda_link_tests::serial();
    let Some(ltoir) = fixtures::ltoir(fixtures::SAXPY_CU, "saxpy.cu", "sm_80") else {
        return;
    };
    let input = ObjectCode::from_ltoir(ltoir, "saxpy.ltoir").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cache = Arc::new(LinkCache::new(dir.path()).with_memory_tier(false));
    for (major, path) in nvjitlink_libraries() {
        if major < 13 {
            continue; // sm_100 needs nvJitLink 13.
        }
        // SAFETY: the pinned nvJitLink wheel that `cargo xtask test` installed.
        let lib = Arc::new(unsafe { NvJitLink::open(&path) }.unwrap());
        let targets = LinkTarget::parse_gencode("arch=compute_80,code=[sm_80,compute_80]")
            .unwrap()
            .into_iter()
            .chain([
                LinkTarget::Cubin(Arch::sm(90)),
                LinkTarget::Cubin(Arch::sm(100)),
            ]);
        let options = LinkerOptions::default().targets(targets).no_cache(true);
        let link = || {
            let mut linker = Linker::with_nvjitlink(Arc::clone(&lib), options.clone())
                .unwrap()
                .with_cache(Arc::clone(&cache));
            linker.add(&input).unwrap();
            linker.link_fatbin().unwrap_or_else(|e| panic!("{e:?}"))
        };
        let fatbin = link();
        let info = fatbin.inspect().unwrap();
        let slots: Vec<String> = info
            .fatbin_entries()
            .map(|e| format!("{} {}", e.kind.name(), e.arch))
            .collect();
        assert_eq!(
            slots,
            ["cubin sm_80", "ptx sm_80", "cubin sm_90", "cubin sm_100"]
        );
        assert_eq!(info.kernels(), ["saxpy"]);
        let hits = cache.stats().hits;
        link();
        assert_eq!(cache.stats().hits, hits + 4, "each target's link is cached");

        // LTO-IR for sm_80 cannot be linked for sm_75: the error names it.
        let mut linker = Linker::with_nvjitlink(
            Arc::clone(&lib),
            LinkerOptions::default().targets([LinkTarget::Cubin(Arch::sm(75))]),
        )
        .unwrap();
        linker.add(&input).unwrap();
        match linker.link_fatbin() {
            Err(LinkError::ForTarget { target, .. }) => assert_eq!(target, "sm_75"),
            other => panic!("{other:?}"),
        }

        // Each target its own inputs: the sm_90 slot holds what was given
        // for it.
        let Some(other) = fixtures::ltoir(
            &fixtures::SAXPY_CU.replace("saxpy", "other"),
            "other.cu",
            "sm_90",
        ) else {
            return;
        };
        let other = ObjectCode::from_ltoir(other, "other.ltoir").unwrap();
        let mut linker = Linker::with_nvjitlink(Arc::clone(&lib), options.clone()).unwrap();
        let per_target = vec![
            (LinkTarget::Cubin(Arch::sm(80)), vec![input.clone()]),
            (LinkTarget::Cubin(Arch::sm(90)), vec![other.clone()]),
        ];
        let fatbin = linker.link_fatbin_each(per_target.clone()).unwrap();
        let info = fatbin.inspect().unwrap();
        let mut kernels = info.kernels();
        kernels.sort();
        assert_eq!(kernels, ["other", "saxpy"]);
        // The outputs themselves, in order, bundle into the same fatbin.
        let linked = linker.link_each(per_target).unwrap();
        let kinds: Vec<_> = linked.iter().map(|(t, o)| (*t, o.kind())).collect();
        assert_eq!(
            kinds,
            [
                (
                    LinkTarget::Cubin(Arch::sm(80)),
                    cuda_link::ObjectKind::Cubin
                ),
                (
                    LinkTarget::Cubin(Arch::sm(90)),
                    cuda_link::ObjectKind::Cubin
                )
            ]
        );
        assert_eq!(linked[1].1.inspect().unwrap().kernels(), ["other"]);
        assert_eq!(
            linker.bundle(&linked).unwrap().as_bytes(),
            fatbin.as_bytes()
        );
        assert!(matches!(linker.bundle(&[]), Err(LinkError::NoTargets)));
        // A target whose inputs cannot link together is named.
        let twice = vec![(LinkTarget::Cubin(Arch::sm(90)), vec![other.clone(), other])];
        match linker.link_fatbin_each(twice) {
            Err(LinkError::ForTarget { target, source }) => {
                assert_eq!(target, "sm_90");
                assert!(source.to_string().contains("multiply defined"), "{source}");
            }
            other => panic!("{other:?}"),
        }
    }
}
