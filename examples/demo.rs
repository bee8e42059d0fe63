//! `cargo xtask demo`: the main job on a bundled example, no GPU needed.
//!
//! Compiles `examples/demo.cu` to LTO-IR and `demo_helpers.cu` to PTX with
//! NVRTC (`cuda-compile`), links both with `libcudadevrt.a` through nvJitLink, and prints
//! the inspection of every input and of the linked cubin.

use cuda_compile::{Program, ProgramOptions, Target};
use cuda_link::{Arch, Linker, LinkerOptions, ObjectCode, OutputKind};
use cuda_link_tests::cudadevrt;

fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let arch = Arch::sm(90);
    // Relocatable device code: the two files call each other at link time.
    let options = ProgramOptions::for_arch(arch).relocatable_device_code(true);
    let main_ltoir = Program::new(include_str!("demo.cu"), "demo.cu")
        .compile(Target::Ltoir, &options)?
        .code
        .renamed("demo.ltoir");
    let helpers_ptx = Program::new(include_str!("demo_helpers.cu"), "demo_helpers.cu")
        .compile(Target::Ptx, &options)?
        .code
        .renamed("demo_helpers.ptx");
    let devrt = cudadevrt().ok_or("CUDA_LINK_CUDADEVRT is unset: run `cargo xtask demo`")?;

    let inputs = [
        main_ltoir,
        helpers_ptx,
        ObjectCode::from_path(&devrt)?.renamed("libcudadevrt.a"),
    ];
    for input in &inputs {
        let info = input.inspect()?;
        // The archive's table is long; its summary line says enough here.
        match input.kind() {
            cuda_link::ObjectKind::Archive => println!(
                "{}: archive, {} fatbin entries for {} arches, {} kernels\n",
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
