//! No NVVM IR kernel is lost to link-time optimisation: hand-written IR,
//! cuda.core-style IR and numba's, each with and without `@llvm.used`,
//! linked by both majors to a cubin, to PTX and into a multi-arch fatbin,
//! keep every annotated kernel; a link that would lose one fails naming
//! it.

use std::sync::Arc;

use cuda_link::nvvm::Nvvm;
use cuda_link::{Arch, LinkError, LinkTarget, Linker, LinkerOptions, ObjectCode, OutputKind};
use cuda_link_tests::{nvjitlink_libraries, nvvm_ir_cases, nvvm_libraries, serial};
use nvjitlink_sys::NvJitLink;

fn pairs() -> Vec<(u32, Arc<Nvvm>, Arc<NvJitLink>)> {
    let nvvms = nvvm_libraries();
    nvjitlink_libraries()
        .into_iter()
        .filter_map(|(major, path)| {
            let (_, nvvm) = nvvms.iter().find(|(m, _)| *m == major)?;
            // SAFETY: the pinned libNVVM and nvJitLink wheels.
            let (nvvm, lib) =
                unsafe { (Nvvm::open(nvvm).unwrap(), NvJitLink::open(&path).unwrap()) };
            Some((major, Arc::new(nvvm), Arc::new(lib)))
        })
        .collect()
}

fn new_linker(nvvm: &Arc<Nvvm>, lib: &Arc<NvJitLink>, options: LinkerOptions) -> Linker {
    Linker::with_nvjitlink(Arc::clone(lib), options)
        .unwrap()
        .with_nvvm(Arc::clone(nvvm))
}

fn has(code: &ObjectCode, kernels: &[&str], case: &str) {
    let info = code.inspect().unwrap();
    let found = info.kernels();
    for kernel in kernels {
        assert!(
            found.iter().any(|k| k.contains(kernel)),
            "{case}: `{kernel}` missing:\n{info}"
        );
    }
}

#[test]
fn every_annotated_kernel_survives_a_link_to_each_output() {
    let _serial = serial();
    for (major, nvvm, lib) in pairs() {
        for (case, text, kernels) in nvvm_ir_cases() {
            let case = format!("libNVVM {major}, {case}");
            let input = ObjectCode::from_nvvm_ir(text.into_bytes(), "k.ll").unwrap();
            for output in [OutputKind::Cubin, OutputKind::Ptx] {
                let mut linker = new_linker(&nvvm, &lib, LinkerOptions::for_arch(Arch::sm(90)));
                linker.add(&input).unwrap();
                let linked = linker
                    .link(output)
                    .unwrap_or_else(|e| panic!("{case}, {output:?}: {e}"));
                has(&linked, &kernels, &format!("{case}, {output:?}"));
            }
            // A fatbin of two cubins and PTX, each slot linked apart.
            let targets = [
                LinkTarget::Cubin(Arch::sm(80)),
                LinkTarget::Cubin(Arch::sm(90)),
                LinkTarget::Ptx(Arch::sm(90)),
            ];
            let mut linker = new_linker(&nvvm, &lib, LinkerOptions::default().targets(targets));
            linker.add(&input).unwrap();
            let fatbin = linker
                .link_fatbin()
                .unwrap_or_else(|e| panic!("{case}, fatbin: {e:?}"));
            let info = fatbin.inspect().unwrap();
            let entries: Vec<_> = info.fatbin_entries().collect();
            assert_eq!(entries.len(), 3, "{case}: {info}");
            has(&fatbin, &kernels, &format!("{case}, fatbin"));
        }
    }
}

/// LLVM 15's opaque pointers and the `ptx_kernel` calling convention,
/// which libNVVM 13 reads for compute_100 (with the data layout nvJitLink's
/// LTO takes): kept without an annotation.
#[test]
fn an_opaque_pointer_ptx_kernel_survives() {
    let _serial = serial();
    let text = "target triple = \"nvptx64-nvidia-cuda\"\n\
                target datalayout = \"e-p:64:64:64-p6:32:32:32-i1:8:8-i8:8:8-i16:16:16-i32:32:32-\
                i64:64:64-i128:128:128-f32:32:32-f64:64:64-f128:128:128-v16:16:16-v32:32:32-\
                v64:64:64-v128:128:128-n16:32:64-a:8:8\"\n\
                define ptx_kernel void @opaque(ptr addrspace(1) %p) {\n\
                \x20 store float 1.0, ptr addrspace(1) %p\n  ret void\n}\n\
                !nvvmir.version = !{!0}\n!0 = !{i32 2, i32 0}\n";
    for (major, nvvm, lib) in pairs().into_iter().filter(|(major, ..)| *major >= 13) {
        let input = ObjectCode::from_nvvm_ir(text, "opaque.ll").unwrap();
        let mut linker = new_linker(&nvvm, &lib, LinkerOptions::for_arch(Arch::sm(100)));
        linker.add(&input).unwrap();
        let cubin = linker
            .link(OutputKind::Cubin)
            .unwrap_or_else(|e| panic!("{major}: {e:?}"));
        has(&cubin, &["opaque"], "opaque pointers");
    }
}

/// An `@llvm.used` written over two lines is not extended here: the
/// kernel it leaves out is lost by LTO, and the link says so, naming it;
/// naming the kernels to keep (`kernels_used`) is the way to ask for
/// fewer.
#[test]
fn a_lost_kernel_is_an_error_naming_it() {
    let _serial = serial();
    let (_, written, _) = nvvm_ir_cases().remove(2);
    let text = format!(
        "{written}@llvm.used = appending global [1 x i8*] [\n  i8* bitcast (void \
         (i32 addrspace(1)*)* @simple to i8*)], section \"llvm.metadata\"\n"
    );
    for (major, nvvm, lib) in pairs() {
        let input = ObjectCode::from_nvvm_ir(text.clone(), "two.ll").unwrap();
        let mut linker = new_linker(&nvvm, &lib, LinkerOptions::for_arch(Arch::sm(90)));
        linker.add(&input).unwrap();
        match linker.link(OutputKind::Cubin) {
            Err(LinkError::KernelsLost { missing }) => {
                assert_eq!(
                    missing,
                    [("second_kernel".to_owned(), "two.ll".to_owned())],
                    "{major}"
                );
            }
            other => panic!("{major}: {other:?}"),
        }
        let mut asked = new_linker(
            &nvvm,
            &lib,
            LinkerOptions::for_arch(Arch::sm(90)).kernels_used(["simple"]),
        );
        asked.add(&input).unwrap();
        let cubin = asked.link(OutputKind::Cubin).unwrap();
        has(&cubin, &["simple"], "kernels_used");
    }
}
