//! Test support: real device code from NVIDIA's redistributables.
//!
//! `cargo xtask test` installs the wheels and exports their paths; these
//! helpers turn CUDA C++ into PTX / LTO-IR / cubins with NVRTC, PTX into
//! cubins with ptxas, and entries into fatbins with nvFatbin. Outside
//! `cargo xtask test` the paths are unset and [`redist`] returns `None`, so
//! tests skip; with `CUDA_LINK_REQUIRE_REDIST` set a missing path fails.

use std::ffi::{CString, c_char};
use std::path::{Path, PathBuf};
use std::process::Command;

pub mod corpus;
pub mod crash_report;
pub mod fixtures;
pub mod hostile;
pub mod phases;
pub mod redis;
pub mod workloads;

/// The path in `var`, or `None` to skip. Panics when the test run promised
/// the redistributables (`CUDA_LINK_REQUIRE_REDIST`) and `var` is unset.
pub fn redist(var: &str) -> Option<PathBuf> {
    match std::env::var_os(var) {
        Some(path) if !path.is_empty() => Some(PathBuf::from(path)),
        _ if std::env::var_os("CUDA_LINK_REQUIRE_REDIST").is_some() => {
            panic!(
                "{var} is unset although CUDA_LINK_REQUIRE_REDIST is: run through `cargo xtask test`"
            )
        }
        _ => {
            skip(&format!("{var} is unset; run through `cargo xtask test`"));
            None
        }
    }
}

/// Serialises the tests of one binary that call NVIDIA's libraries.
///
/// Run in parallel, `cuda-link`'s link tests died with SIGSEGV in 2 of
/// about 10 full CI runs on 2026-12-02/03, never in 40 runs of the binary
/// alone, and never in the stress test, which runs 16 threads of links on
/// one nvJitLink. What differs there is NVRTC 12.9, nvJitLink 12.9 and
/// nvJitLink 13.5 working in one process at once; the cause is not found
/// (docs/reliability.md). Parallel linking keeps its own tests
/// (`linkers_run_in_parallel_threads`, `tests/tests/stress.rs`). Each crate's
/// tests are one binary, so every test there that reaches those libraries
/// holds this lock. A crash prints its address and frames
/// ([`crash_report`]) before the process dies.
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    crash_report::install();
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Says that a test skipped, past the test harness's capture of `eprintln!`,
/// so a skip shows in every run instead of passing unseen.
pub fn skip(why: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "SKIPPED: {why}");
}

/// Paths of both provisioned nvJitLink majors, as `(major, path)`.
pub fn nvjitlink_libraries() -> Vec<(u32, PathBuf)> {
    [12, 13]
        .into_iter()
        .filter_map(|major| redist(&format!("CUDA_LINK_NVJITLINK{major}_PATH")).map(|p| (major, p)))
        .collect()
}

/// Paths of both provisioned libNVVM majors, as `(major, path)`.
pub fn nvvm_libraries() -> Vec<(u32, PathBuf)> {
    [12, 13]
        .into_iter()
        .filter_map(|major| redist(&format!("CUDA_LINK_NVVM{major}_PATH")).map(|p| (major, p)))
        .collect()
}

/// A named pipe made at `path`, and a thread that reads it whole once a
/// writer opens it (it blocks until then: join it only after checking
/// that the pipe is still there).
pub fn pipe_with_reader(path: &Path) -> std::thread::JoinHandle<Vec<u8>> {
    let made = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(made.success(), "mkfifo {}", path.display());
    let path = path.to_path_buf();
    std::thread::spawn(move || std::fs::read(path).unwrap())
}

/// numba's `records` module as bitcode (`llvm-as` of `module.0.ll`; see
/// `tests/nvvm/make_fixtures.py`).
pub fn numba_bitcode() -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("nvvm/numba/records/module.0.bc");
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The NVVM IR numba-cuda made of one kernel of `nvvm/numba/`
/// (`nvvm/make_fixtures.py`): its modules as `(file name, bytes)`, in the
/// order numba added them, and the PTX numba made of them.
pub fn numba_kernel(kernel: &str) -> (Vec<(String, Vec<u8>)>, String) {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("nvvm/numba")
        .join(kernel);
    let mut modules = Vec::new();
    for index in 0.. {
        let name = format!("module.{index}.ll");
        match std::fs::read(folder.join(&name)) {
            Ok(bytes) => modules.push((format!("{kernel}/{name}"), bytes)),
            Err(_) => break,
        }
    }
    assert!(!modules.is_empty(), "no modules in {}", folder.display());
    let ptx = std::fs::read_to_string(folder.join("numba.ptx")).unwrap_or_default();
    (modules, ptx)
}

/// NVVM IR as its writers write it, each with the kernels it defines:
/// hand-written saxpy (typed pointers, an annotation, no `@llvm.used`), the
/// same marked as numba marks its kernels, the shape of cuda.core's NVVM
/// examples (two kernels, a launch bound, a global-space argument), and
/// numba's `records` kernel with its `@llvm.used` and without it.
pub fn nvvm_ir_cases() -> Vec<(&'static str, String, Vec<&'static str>)> {
    let written = |file: &str| {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("nvvm/written")
            .join(file);
        std::fs::read_to_string(path).unwrap()
    };
    let saxpy = written("saxpy.ll");
    let used = format!(
        "{saxpy}@llvm.used = appending global [1 x i8*] [i8* bitcast (void (float, \
         float*, float*, i32)* @saxpy to i8*)], section \"llvm.metadata\"\n"
    );
    let (modules, _) = numba_kernel("records");
    let numba = String::from_utf8(modules[0].1.clone()).unwrap();
    let unmarked: String = numba
        .lines()
        .filter(|line| !line.starts_with("@\"llvm.used\""))
        .map(|line| format!("{line}\n"))
        .collect();
    vec![
        ("hand-written", saxpy, vec!["saxpy"]),
        ("hand-written, used", used, vec!["saxpy"]),
        (
            "cuda.core style",
            written("cuda_core_style.ll"),
            vec!["simple", "second_kernel"],
        ),
        ("numba", numba, vec!["records"]),
        ("numba, no @llvm.used", unmarked, vec!["records"]),
    ]
}

/// The kernels of `nvvm/numba/`, each a folder.
pub const NUMBA_KERNELS: [&str; 7] = [
    "math_libdevice",
    "shared_atomics",
    "float64_int64",
    "local_array",
    "device_functions",
    "array_arguments",
    "records",
];

/// Compiles the stub nvJitLink of `data/stub_nvjitlink.c` with `defines`
/// (each `NAME=VALUE`, see the file's header) into `dir` as
/// `libnvJitLink-{name}.so`, for fault-injection tests.
pub fn stub_nvjitlink(dir: &Path, name: &str, defines: &[&str]) -> PathBuf {
    let output = dir.join(format!("libnvJitLink-{name}.so"));
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/stub_nvjitlink.c");
    let status = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .args(["-shared", "-fPIC", "-O1", "-o"])
        .arg(&output)
        .arg(&source)
        .args(defines.iter().map(|d| format!("-D{d}")))
        .status()
        .expect("a C compiler (cc) builds the stub nvJitLink");
    assert!(status.success(), "compiling {}", source.display());
    output
}

/// The path of `libcudadevrt.a`.
pub fn cudadevrt() -> Option<PathBuf> {
    redist("CUDA_LINK_CUDADEVRT")
}

type Error = Box<dyn std::error::Error + Send + Sync>;

/// Output of one NVRTC compilation: one of the three, as asked for.
#[derive(Debug, Clone, Default)]
pub struct Compiled {
    /// PTX, when not compiled with `-dlto`, without a trailing NUL, as
    /// nvcc writes it.
    pub ptx: Option<Vec<u8>>,
    /// LTO-IR, with `-dlto`.
    pub ltoir: Option<Vec<u8>>,
    /// A cubin, with `-arch=sm_NN`.
    pub cubin: Option<Vec<u8>>,
    /// The compile log.
    pub log: String,
}

/// Compiles CUDA C++ with cuda-compile on the NVRTC of
/// `CUDA_LINK_NVRTC_PATH`, spelled as NVRTC's command line: `-arch=compute_NN`
/// gives PTX, `-arch=sm_NN` with `-dlto` LTO-IR and without it a cubin;
/// `-rdc=true` is relocatable device code, and any other option is passed
/// as it is written.
pub fn nvrtc(source: &str, name: &str, options: &[&str]) -> Result<Compiled, Error> {
    use cuda_compile::{Compiler, Program, ProgramOptions, Target};
    static COMPILER: std::sync::OnceLock<Result<Compiler, String>> = std::sync::OnceLock::new();
    let compiler = COMPILER
        .get_or_init(|| {
            let path = redist("CUDA_LINK_NVRTC_PATH").ok_or("CUDA_LINK_NVRTC_PATH is unset")?;
            // SAFETY: the pinned NVRTC wheel that `cargo xtask test` installed.
            let nvrtc = unsafe { nvrtc_sys::Nvrtc::open(&path) }.map_err(|e| format!("{e:?}"))?;
            Ok(Compiler::with_nvrtc(std::sync::Arc::new(nvrtc)))
        })
        .as_ref()
        .map_err(|e| e.clone())?;
    let mut settings = ProgramOptions::default();
    let (mut arch, mut lto) = (None, false);
    for &option in options {
        match option {
            "-dlto" => lto = true,
            "-rdc=true" => settings.relocatable_device_code = Some(true),
            _ => match option.strip_prefix("-arch=") {
                Some(spelling) => arch = Some(spelling.parse::<cuda_link::ArchCode>()?),
                None => settings.extra_options.push(option.to_owned()),
            },
        }
    }
    let code = arch.ok_or("give an -arch= option")?;
    settings.arch = Some(code.arch);
    let target = match (lto, code.kind) {
        (true, _) | (false, cuda_link::CodeKind::Lto) => Target::Ltoir,
        (false, cuda_link::CodeKind::Compute) => Target::Ptx,
        (false, cuda_link::CodeKind::Sm) => Target::Cubin,
    };
    let compiled = compiler
        .compile(&Program::new(source, name), target, &settings)
        .map_err(|e| format!("{e:?}"))?;
    let bytes = compiled.code.as_bytes().to_vec();
    let mut out = Compiled {
        log: compiled.log,
        ..Compiled::default()
    };
    match target {
        // NVRTC's PTX ends in a NUL; nvcc's and ptxas's files do not, and
        // every test uses PTX as those tools write it.
        Target::Ptx => out.ptx = Some(bytes.strip_suffix(b"\0").unwrap_or(&bytes).to_vec()),
        Target::Ltoir => out.ltoir = Some(bytes),
        _ => out.cubin = Some(bytes),
    }
    Ok(out)
}

/// Assembles PTX with ptxas. `relocatable` passes `-c` (ET_REL).
pub fn ptxas(ptx: &[u8], arch: &str, relocatable: bool) -> Result<Vec<u8>, Error> {
    let ptxas = redist("CUDA_LINK_PTXAS").ok_or("CUDA_LINK_PTXAS is unset")?;
    let dir = tempfile::tempdir()?;
    let input = dir.path().join("in.ptx");
    let output = dir.path().join("out.cubin");
    std::fs::write(&input, ptx.strip_suffix(b"\0").unwrap_or(ptx))?;
    let mut command = Command::new(ptxas);
    command.arg(format!("-arch={arch}")).arg("-o").arg(&output);
    if relocatable {
        command.arg("-c");
    }
    let result = command.arg(&input).output()?;
    if !result.status.success() {
        return Err(format!("ptxas failed: {}", String::from_utf8_lossy(&result.stderr)).into());
    }
    Ok(std::fs::read(output)?)
}

/// One input of [`nvfatbin`].
#[derive(Debug, Clone, Copy)]
pub enum FatbinInput<'a> {
    /// PTX text and its arch number (`"90"`, `"90a"`).
    Ptx(&'a [u8], &'a str),
    /// A cubin and its arch number.
    Cubin(&'a [u8], &'a str),
    /// LTO-IR and its arch number.
    Ltoir(&'a [u8], &'a str),
}

/// Builds a fatbin with nvFatbin; `options` such as `-compress-mode=size`.
pub fn nvfatbin(inputs: &[FatbinInput<'_>], options: &[&str]) -> Result<Vec<u8>, Error> {
    use nvfatbin_sys::{NvFatbin, NvFatbinError, nvfatbin_call};
    static NVFATBIN: std::sync::OnceLock<Result<NvFatbin, String>> = std::sync::OnceLock::new();
    let lib = NVFATBIN
        .get_or_init(|| {
            let path =
                redist("CUDA_LINK_NVFATBIN_PATH").ok_or("CUDA_LINK_NVFATBIN_PATH is unset")?;
            // SAFETY: the pinned nvFatbin wheel that `cargo xtask test` installed.
            unsafe { NvFatbin::open(&path) }.map_err(|e| format!("{e:?}"))
        })
        .as_ref()
        .map_err(|e| e.clone())?;
    // A call's result, as an error that names the function.
    let check = |call: Result<nvfatbin_sys::Call, nvfatbin_sys::SymbolUnavailable>| {
        let call = call.map_err(|missing| missing.to_string())?;
        NvFatbinError::check(call.result).map_err(|e| format!("{} failed: {e}", call.symbol))
    };
    let options: Vec<CString> = options
        .iter()
        .map(|o| CString::new(*o))
        .collect::<Result<_, _>>()?;
    let mut option_ptrs: Vec<*const c_char> = options.iter().map(|o| o.as_ptr()).collect();
    let mut handle = std::ptr::null_mut();
    // SAFETY: an out-pointer and the option array with its length.
    check(unsafe {
        nvfatbin_call!(
            lib,
            nvFatbinCreate(&mut handle, option_ptrs.as_mut_ptr(), option_ptrs.len())
        )
    })?;
    let added = || -> Result<Vec<u8>, Error> {
        for (i, input) in inputs.iter().enumerate() {
            let ident = CString::new(format!("input{i}"))?;
            match *input {
                FatbinInput::Ptx(ptx, arch) => {
                    // nvFatbin wants NUL-terminated PTX.
                    let mut text = ptx.strip_suffix(b"\0").unwrap_or(ptx).to_vec();
                    text.push(0);
                    let arch = CString::new(arch)?;
                    // SAFETY: a live handle, the text with its size, C strings.
                    check(unsafe {
                        nvfatbin_call!(
                            lib,
                            nvFatbinAddPTX(
                                handle,
                                text.as_ptr().cast(),
                                text.len(),
                                arch.as_ptr(),
                                ident.as_ptr(),
                                c"".as_ptr(),
                            )
                        )
                    })?;
                }
                FatbinInput::Cubin(cubin, arch) => {
                    let arch = CString::new(arch)?;
                    // SAFETY: a live handle, the bytes with their size, C strings.
                    check(unsafe {
                        nvfatbin_call!(
                            lib,
                            nvFatbinAddCubin(
                                handle,
                                cubin.as_ptr().cast(),
                                cubin.len(),
                                arch.as_ptr(),
                                ident.as_ptr(),
                            )
                        )
                    })?;
                }
                FatbinInput::Ltoir(ltoir, arch) => {
                    let arch = CString::new(arch)?;
                    // SAFETY: a live handle, the bytes with their size, C strings.
                    check(unsafe {
                        nvfatbin_call!(
                            lib,
                            nvFatbinAddLTOIR(
                                handle,
                                ltoir.as_ptr().cast(),
                                ltoir.len(),
                                arch.as_ptr(),
                                ident.as_ptr(),
                                c"".as_ptr(),
                            )
                        )
                    })?;
                }
            }
        }
        let mut len = 0usize;
        // SAFETY: a live handle and an out-pointer.
        check(unsafe { nvfatbin_call!(lib, nvFatbinSize(handle, &mut len)) })?;
        let mut bytes = vec![0u8; len];
        // SAFETY: a buffer of the size nvFatbin reported.
        check(unsafe { nvfatbin_call!(lib, nvFatbinGet(handle, bytes.as_mut_ptr().cast())) })?;
        Ok(bytes)
    };
    let result = added();
    // SAFETY: the handle came from nvFatbinCreate and is destroyed once.
    let _ = unsafe { lib.nvFatbinDestroy(&mut handle) };
    result
}

/// A minimal x86-64 host object carrying `fatbin` in `section`, as nvcc
/// would emit it (`.nv_fatbin` or `__nv_relfatbin`).
pub fn host_object(fatbin: &[u8], section: &str) -> Vec<u8> {
    use object::write::{Object, StandardSection};
    use object::{Architecture, BinaryFormat, Endianness, SectionKind};
    let mut obj = Object::new(BinaryFormat::Elf, Architecture::X86_64, Endianness::Little);
    let text = obj.section_id(StandardSection::Text);
    obj.append_section_data(text, &[0xc3], 1);
    let device = obj.add_section(
        Vec::new(),
        section.as_bytes().to_vec(),
        SectionKind::ReadOnlyData,
    );
    obj.append_section_data(device, fatbin, 8);
    obj.write().expect("writing an in-memory ELF cannot fail")
}

/// A GNU `ar` archive holding one member, as `libfoo.a` files are.
pub fn ar_archive(member_name: &str, member: &[u8]) -> Vec<u8> {
    let mut archive = b"!<arch>\n".to_vec();
    let header = format!(
        "{:<16}{:<12}{:<6}{:<6}{:<8}{:<10}`\n",
        format!("{member_name}/"),
        0,
        0,
        0,
        644,
        member.len()
    );
    archive.extend_from_slice(header.as_bytes());
    archive.extend_from_slice(member);
    if member.len() % 2 == 1 {
        archive.push(b'\n');
    }
    archive
}

/// Writes `bytes` under a fresh temporary folder as `name`.
pub fn temp_file(name: &str, bytes: &[u8]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temporary folder");
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).expect("write temporary file");
    (dir, path)
}

/// The workspace root.
pub fn workspace() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// xorshift64*: a reproducible stream of mutations from one seed, for the
/// fuzzers, with no dependency.
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 bits.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number below `bound` (0 when `bound` is 0).
    pub fn below(&mut self, bound: usize) -> usize {
        (self.next() % bound.max(1) as u64) as usize
    }
}
