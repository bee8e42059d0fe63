//! The pure-Rust fatbin writer against NVIDIA's own tools, on the CPU:
//! its entry headers field by field against nvFatbin 12 and 13 for the
//! same inputs, and `cuobjdump` listing and extracting every entry it
//! writes, in every codec, the bytes equal to the inputs.

use std::path::Path;
use std::process::Command;

use cuda_link::inspect::Compression;
use cuda_link::{Arch, FatbinBuilder, ObjectCode};
use cuda_link_tests::{fixtures, nvrtc, ptxas};
use nvfatbin_sys::NvFatbin;

const CODECS: [Compression; 3] = [Compression::None, Compression::Lz4, Compression::Zstd];

/// The inputs: saxpy as compute_80 PTX, sm_80 and sm_100 cubins made from
/// it, and sm_90 LTO-IR.
struct Inputs {
    ptx: ObjectCode,
    sm80: ObjectCode,
    sm100: ObjectCode,
    ltoir: ObjectCode,
}

fn inputs() -> Option<Inputs> {
    let ltoir = fixtures::saxpy_ltoir()?;
    let ptx = nvrtc(fixtures::SAXPY_CU, "saxpy.cu", &["-arch=compute_80"])
        .unwrap()
        .ptx
        .unwrap();
    let cubin = |sm: &str| {
        let bytes = ptxas(&ptx, sm, false).unwrap();
        ObjectCode::from_cubin(bytes, format!("saxpy.{sm}.cubin")).unwrap()
    };
    Some(Inputs {
        sm80: cubin("sm_80"),
        sm100: cubin("sm_100"),
        ptx: ObjectCode::from_ptx(ptx, "saxpy.compute_80.ptx").unwrap(),
        ltoir: ObjectCode::from_ltoir(ltoir, "saxpy.sm_90.ltoir").unwrap(),
    })
}

/// The sets each test writes: every kind alone, and cubin with PTX.
fn sets(inputs: &Inputs) -> Vec<(&'static str, Vec<&ObjectCode>)> {
    vec![
        ("cubin", vec![&inputs.sm80]),
        ("ptx", vec![&inputs.ptx]),
        ("cubin+ptx", vec![&inputs.sm80, &inputs.ptx]),
        ("sm_100 cubin", vec![&inputs.sm100]),
        ("ltoir", vec![&inputs.ltoir]),
    ]
}

fn builder(codec: Compression, codes: &[&ObjectCode]) -> FatbinBuilder {
    let mut builder = FatbinBuilder::new().compression(codec);
    for code in codes {
        builder = builder.add(code, None).unwrap_or_else(|e| panic!("{e}"));
    }
    builder
}

/// One entry header as NVIDIA's tools read it, walked here byte by byte
/// rather than by the crate's parser: the fixed fields that do not depend
/// on the compressor, and the header's trailing bytes (identifier, options
/// descriptor, options).
#[derive(Debug, PartialEq, Eq)]
struct Shape {
    kind: u16,
    header_version: u16,
    header_size: u32,
    options_offset: u32,
    version: (u16, u16),
    sm: u32,
    identifier: (u32, u32),
    flags: u64,
    trailer: Vec<u8>,
}

fn shapes(fatbin: &[u8]) -> Vec<Shape> {
    let u16_at = |at: usize| u16::from_le_bytes(fatbin[at..at + 2].try_into().unwrap());
    let u32_at = |at: usize| u32::from_le_bytes(fatbin[at..at + 4].try_into().unwrap());
    let u64_at = |at: usize| u64::from_le_bytes(fatbin[at..at + 8].try_into().unwrap());
    let end = 16 + u64_at(8) as usize;
    let mut at = 16;
    let mut out = Vec::new();
    while at < end {
        let header_size = u32_at(at + 4);
        out.push(Shape {
            kind: u16_at(at),
            header_version: u16_at(at + 2),
            header_size,
            options_offset: u32_at(at + 0x14),
            version: (u16_at(at + 0x1a), u16_at(at + 0x18)),
            sm: u32_at(at + 0x1c),
            identifier: (u32_at(at + 0x20), u32_at(at + 0x24)),
            flags: u64_at(at + 0x28),
            trailer: fatbin[at + 64..at + header_size as usize].to_vec(),
        });
        at += header_size as usize + u64_at(at + 8) as usize;
    }
    out
}

/// Each entry's payload as the C libraries read it (PTX up to its NUL).
fn payloads(fatbin: &ObjectCode) -> Vec<Vec<u8>> {
    let parsed = cuda_link::fuzzing::parse_all(fatbin.as_bytes()).unwrap();
    parsed[0]
        .1
        .entries()
        .map(|entry| {
            let entry = entry.unwrap();
            if entry.is_opaque() {
                return entry.payload.to_vec();
            }
            let plain = entry.decompress().unwrap().into_owned();
            match entry.kind {
                cuda_link::inspect::EntryKind::Ptx => {
                    plain.split(|&b| b == 0).next().unwrap().to_vec()
                }
                _ => plain,
            }
        })
        .collect()
}

/// Every entry the Rust writer lays out as nvFatbin lays out its own for
/// the same inputs: kind, header size, options descriptor and its NUL
/// (PTX and LTO-IR always carry one, empty or not), sm_100+ compatibility
/// records, version, arch, identifier, flags and the payload after
/// decompression. The known differences, each asserted: nvFatbin
/// compresses LTO-IR and encodes it (flag 0x10000), where the writer
/// keeps LTO-IR plain; nvFatbin rewrites PTX with its comments and
/// indentation dropped and tabs made spaces, so PTX is compared statement by statement.
#[test]
fn the_writer_lays_out_entries_as_nvfatbin_does() {
    let _serial = cuda_link_tests::serial();
    let Some(inputs) = inputs() else { return };
    let mut libraries = Vec::new();
    for (variable, version) in [
        ("CUDA_LINK_NVFATBIN13_PATH", 13),
        ("CUDA_LINK_NVFATBIN_PATH", 12),
    ] {
        let Some(path) = cuda_link_tests::redist(variable) else {
            return;
        };
        // SAFETY: the pinned nvFatbin wheels that `cargo xtask test`
        // installed.
        libraries.push((version, unsafe { NvFatbin::open(&path) }.unwrap()));
    }
    let mut compared = 0;
    for (version, lib) in &libraries {
        for codec in CODECS {
            for (set, codes) in sets(&inputs) {
                let builder = builder(codec, &codes);
                let ours = builder.build("ours.fatbin").unwrap();
                let theirs = builder.build_with(lib, "theirs.fatbin").unwrap();
                let what = format!("nvFatbin {version}, {codec:?}, {set}");
                let mut our_shapes = shapes(ours.as_bytes());
                let mut their_shapes = shapes(theirs.as_bytes());
                let (mut our_payloads, mut their_payloads) = (payloads(&ours), payloads(&theirs));
                assert_eq!(our_shapes.len(), their_shapes.len(), "{what}");
                for (index, (our, their)) in
                    our_shapes.iter_mut().zip(&mut their_shapes).enumerate()
                {
                    if our.kind == 8 && codec != Compression::None {
                        assert_eq!(their.flags & 0x1_0000, 0x1_0000, "{what}: encoded");
                        assert_eq!(our.flags & 0xa000, 0, "{what}: ours stays plain");
                        their.flags = our.flags;
                        their_payloads[index].clone_from(&our_payloads[index]);
                    }
                    if our.kind == 1 {
                        our_payloads[index] = ptx_statements(&our_payloads[index]);
                        their_payloads[index] = ptx_statements(&their_payloads[index]);
                    }
                }
                assert_eq!(our_shapes, their_shapes, "{what}: ours (left), nvFatbin's");
                assert_eq!(our_payloads, their_payloads, "{what}: payloads");
                compared += our_shapes.len();
            }
        }
    }
    assert!(compared >= 36, "{compared} entries compared");
}

/// PTX text without `//` comments and blank lines, white space folded.
fn ptx_statements(text: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(text);
    let lines: Vec<String> = text
        .lines()
        .map(|line| {
            let code = line.split("//").next().unwrap_or_default();
            code.split_whitespace().collect::<Vec<_>>().join(" ")
        })
        .filter(|line| !line.is_empty())
        .collect();
    lines.join("\n").into_bytes()
}

/// Runs the provisioned cuobjdump on `file` in `dir`; its status and
/// output.
fn cuobjdump(tool: &Path, dir: &Path, args: &[&str], file: &str) -> (bool, String) {
    let output = Command::new(tool)
        .current_dir(dir)
        .args(args)
        .arg(file)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", tool.display()));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), text)
}

/// NVIDIA's cuobjdump reads every fatbin the writer produces, in every
/// codec: it lists each cubin and PTX entry, extracts them with
/// `-xelf all` / `-xptx all` byte for byte equal to the inputs (PTX up to
/// its NUL), and shows the LTO-IR entry with its arch. Before the options
/// descriptor, it refused the writer's PTX with "Invalid fatbin header".
#[test]
fn cuobjdump_extracts_every_entry_the_writer_writes() {
    let _serial = cuda_link_tests::serial();
    let (Some(tool), Some(inputs)) = (cuda_link_tests::redist("CUDA_LINK_CUOBJDUMP"), inputs())
    else {
        return;
    };
    for codec in CODECS {
        for (set, codes) in sets(&inputs) {
            let what = format!("{codec:?}, {set}");
            let fatbin = builder(codec, &codes).build("ours.fatbin").unwrap();
            let dir = tempfile::tempdir().unwrap();
            fatbin.write_to(dir.path().join("ours.fatbin")).unwrap();
            let (listed, listing) =
                cuobjdump(&tool, dir.path(), &["-lelf", "-lptx"], "ours.fatbin");
            assert!(
                listed || listing.contains("No ELF file") || listing.contains("No PTX file"),
                "{what}: {listing}"
            );
            assert!(!listing.contains("fatal"), "{what}: {listing}");
            for code in &codes {
                let kind = code.kind();
                let (args, suffix): (&[&str], _) = match kind {
                    cuda_link::ObjectKind::Cubin => (&["-xelf", "all"], ".cubin"),
                    cuda_link::ObjectKind::Ptx => (&["-xptx", "all"], ".ptx"),
                    _ => {
                        let (ok, all) = cuobjdump(&tool, dir.path(), &["-all"], "ours.fatbin");
                        assert!(ok, "{what}: {all}");
                        assert!(
                            all.contains("Fatbin nvvm code") && all.contains("arch = sm_90"),
                            "{what}: {all}"
                        );
                        continue;
                    }
                };
                let (ok, log) = cuobjdump(&tool, dir.path(), args, "ours.fatbin");
                assert!(ok, "{what}: {log}");
                let extracted: Vec<_> = std::fs::read_dir(dir.path())
                    .unwrap()
                    .map(|e| e.unwrap().path())
                    .filter(|p| p.to_string_lossy().ends_with(suffix))
                    .collect();
                assert_eq!(extracted.len(), 1, "{what}: {log}");
                let bytes = std::fs::read(&extracted[0]).unwrap();
                let input = code.as_bytes();
                let input = match kind {
                    cuda_link::ObjectKind::Ptx => input.split(|&b| b == 0).next().unwrap(),
                    _ => input,
                };
                assert!(bytes == input, "{what}: {} differs", extracted[0].display());
            }
        }
    }
}

/// PTX asked for a slot above its `.target` (compute_80 PTX for sm_90):
/// cuobjdump names the slot's arch, as the driver picks it.
#[test]
fn ptx_in_a_later_slot_is_listed_there() {
    let _serial = cuda_link_tests::serial();
    let (Some(tool), Some(inputs)) = (cuda_link_tests::redist("CUDA_LINK_CUOBJDUMP"), inputs())
    else {
        return;
    };
    let fatbin = FatbinBuilder::new()
        .add(&inputs.ptx, Some(Arch::sm(90)))
        .and_then(|b| b.build("later.fatbin"))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    fatbin.write_to(dir.path().join("later.fatbin")).unwrap();
    let (ok, listing) = cuobjdump(&tool, dir.path(), &["-lptx"], "later.fatbin");
    assert!(ok && listing.contains("sm_90.ptx"), "{listing}");
}
