//! `cargo xtask demo`: the main job on a bundled example, no GPU needed.
//!
//! Compiles `examples/demo.cu` to LTO-IR and `demo_helpers.cu` to PTX with
//! NVRTC, links both with `libcudadevrt.a` through nvJitLink, and prints
//! the inspection of every input and of the linked cubin.

use cuda_link::{Arch, Linker, LinkerOptions, ObjectCode, OutputKind};
use cuda_link_tests::{cudadevrt, nvrtc};

fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let arch = Arch::sm(90);
    let main_ltoir = nvrtc(
        include_str!("demo.cu"),
        "demo.cu",
        &["-arch=sm_90", "-rdc=true", "-dlto"],
    )?
    .ltoir
    .ok_or("NVRTC produced no LTO-IR")?;
    let helpers_ptx = nvrtc(
        include_str!("demo_helpers.cu"),
        "demo_helpers.cu",
        &["-arch=compute_90", "-rdc=true"],
    )?
    .ptx
    .ok_or("NVRTC produced no PTX")?;
    let devrt = cudadevrt().ok_or("CUDA_LINK_CUDADEVRT is unset: run `cargo xtask demo`")?;

    let inputs = [
        ObjectCode::from_bytes(main_ltoir, "demo.ltoir")?,
        ObjectCode::from_bytes(helpers_ptx, "demo_helpers.ptx")?,
        ObjectCode::from_path(&devrt)?.renamed("libcudadevrt.a"),
    ];
    for input in &inputs {
        let info = input.inspect()?;
        // The archive's table is long; its summary line says enough here.
        match input.kind() {
            cuda_link::ObjectKind::Archive => println!(
                "{}: library, {} fatbin entries for {} arches, {} kernels\n",
                info.name,
                info.fatbin_entries().count(),
                info.arches().len(),
                info.kernels().len()
            ),
            _ => println!("{info}"),
        }
    }

    let mut linker = Linker::new(LinkerOptions::for_arch(arch))?;
    linker.add_many(&inputs)?;
    let cubin = linker.link(OutputKind::Cubin)?;
    println!(
        "linked with {} (-lto added: {})",
        linker.backend_name(),
        linker.uses_lto()
    );
    println!("{}", cubin.inspect()?);
    Ok(())
}
