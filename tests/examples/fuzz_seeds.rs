//! Writes the fuzz seed corpus (`fuzz/seeds/`) from real NVIDIA output:
//! `cargo xtask provision`, then run with the provisioned paths set, e.g.
//! through `cargo xtask test` 's environment.

use cuda_link_tests::{FatbinInput, fixtures, host_object, nvfatbin, workspace};

fn main() {
    let ptx = fixtures::saxpy_ptx().expect("NVRTC is needed");
    let cubin = fixtures::saxpy_relocatable_cubin().expect("ptxas is needed");
    let ltoir = fixtures::saxpy_ltoir().expect("NVRTC is needed");
    let fatbin = |options: &[&str]| {
        nvfatbin(
            &[
                FatbinInput::Ptx(&ptx, "90"),
                FatbinInput::Cubin(&cubin, "90a"),
                FatbinInput::Ltoir(&ltoir, "90"),
            ],
            options,
        )
        .unwrap()
    };
    let plain = fatbin(&["-compress=false"]);
    let lz4 = fatbin(&["-compress-all"]);
    let zstd = fatbin(&["-compress-all", "-compress-mode=size"]);
    let object = host_object(&lz4, "__nv_relfatbin");
    let archive = cuda_link_tests::ar_archive("k.o", &object);

    let seeds = workspace().join("fuzz/seeds");
    let write = |target: &str, name: &str, bytes: &[u8]| {
        let dir = seeds.join(target);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(name), bytes).unwrap();
    };
    for (name, bytes) in [
        ("saxpy.ptx", &ptx),
        ("saxpy.cubin", &cubin),
        ("saxpy.ltoir", &ltoir),
        ("plain.fatbin", &plain),
        ("lz4.fatbin", &lz4),
        ("zstd.fatbin", &zstd),
        ("saxpy.o", &object),
        ("saxpy.a", &archive),
    ] {
        write("object_code", name, bytes);
    }
    for (name, bytes) in [
        ("plain.fatbin", &plain),
        ("lz4.fatbin", &lz4),
        ("zstd.fatbin", &zstd),
    ] {
        write("fatbin_decompress", name, bytes);
    }
    write("ptx_scan", "saxpy.ptx", &ptx);
    let devrt_ptx = fixtures::ptx(fixtures::DEVRT_USER_CU, "devrt_user.cu").unwrap();
    write("ptx_scan", "devrt_user.ptx", &devrt_ptx);
    println!("seeds written to {}", seeds.display());
}
