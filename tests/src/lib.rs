//! Test support: real device code from NVIDIA's redistributables.
//!
//! `cargo xtask test` installs the wheels and exports their paths; these
//! helpers turn CUDA C++ into PTX / LTO-IR / cubins with NVRTC, PTX into
//! cubins with ptxas, and entries into fatbins with nvFatbin. Outside
//! `cargo xtask test` the paths are unset and [`redist`] returns `None`, so
//! tests skip; with `CUDA_LINK_REQUIRE_REDIST` set a missing path fails.

use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::path::{Path, PathBuf};
use std::process::Command;

pub mod corpus;
pub mod crash_report;
pub mod fixtures;
pub mod hostile;
pub mod phases;
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

/// The path of `libcudadevrt.a`.
pub fn cudadevrt() -> Option<PathBuf> {
    redist("CUDA_LINK_CUDADEVRT")
}

type Error = Box<dyn std::error::Error + Send + Sync>;

fn open(var: &str) -> Result<libloading::Library, Error> {
    let path = redist(var).ok_or_else(|| format!("{var} is unset"))?;
    // SAFETY: NVIDIA's libraries have no load-time preconditions. Opened
    // resident: tests open and drop them from many threads.
    Ok(unsafe { cuda_dylib::open_file(path.as_os_str()) }?)
}

/// Output of one NVRTC compilation.
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

/// Compiles CUDA C++ with NVRTC. `options` are NVRTC options such as
/// `-arch=sm_90`, `-dlto`, `-rdc=true`, passed as given (the tests' raw
/// view of NVRTC; programs use `cuda-compile`). Every output NVRTC made is
/// returned.
pub fn nvrtc(source: &str, name: &str, options: &[&str]) -> Result<Compiled, Error> {
    use nvrtc_sys::{Nvrtc, NvrtcError, sys::nvrtcResult};
    static NVRTC: std::sync::OnceLock<Result<Nvrtc, String>> = std::sync::OnceLock::new();
    let lib = NVRTC
        .get_or_init(|| {
            let path = redist("CUDA_LINK_NVRTC_PATH").ok_or("CUDA_LINK_NVRTC_PATH is unset")?;
            // SAFETY: the pinned NVRTC wheel that `cargo xtask test` installed.
            unsafe { Nvrtc::open(&path) }.map_err(|e| format!("{e:?}"))
        })
        .as_ref()
        .map_err(|e| e.clone())?;
    let source = CString::new(source)?;
    let c_name = CString::new(name)?;
    let options: Vec<CString> = options
        .iter()
        .map(|o| CString::new(*o))
        .collect::<Result<_, _>>()?;
    let option_ptrs: Vec<*const c_char> = options.iter().map(|o| o.as_ptr()).collect();
    let mut program = std::ptr::null_mut();
    // SAFETY: an out-pointer, C strings alive for the call, no headers.
    let created = unsafe {
        lib.nvrtcCreateProgram(
            &mut program,
            source.as_ptr(),
            c_name.as_ptr(),
            0,
            std::ptr::null(),
            std::ptr::null(),
        )
    }?;
    NvrtcError::check(created)?;
    // SAFETY: a live program and its option array.
    let status = unsafe {
        lib.nvrtcCompileProgram(program, option_ptrs.len() as c_int, option_ptrs.as_ptr())
    }?;
    // One output: `Some` when NVRTC made it, read with the size it gave.
    type Sized = unsafe fn(
        &nvrtc_sys::NvrtcFns,
        nvrtc_sys::sys::nvrtcProgram,
        *mut usize,
    ) -> Result<nvrtcResult, nvrtc_sys::SymbolUnavailable>;
    type Read = unsafe fn(
        &nvrtc_sys::NvrtcFns,
        nvrtc_sys::sys::nvrtcProgram,
        *mut c_char,
    ) -> Result<nvrtcResult, nvrtc_sys::SymbolUnavailable>;
    let fetch = |size_of: Sized, read: Read| -> Option<Vec<u8>> {
        let mut size = 0usize;
        // SAFETY: a compiled program and an out-pointer.
        if unsafe { size_of(lib, program, &mut size) } != Ok(nvrtcResult::NVRTC_SUCCESS)
            || size == 0
        {
            return None;
        }
        let mut bytes = vec![0u8; size];
        // SAFETY: a buffer of the size NVRTC reported.
        let copied = unsafe { read(lib, program, bytes.as_mut_ptr().cast()) };
        (copied == Ok(nvrtcResult::NVRTC_SUCCESS)).then_some(bytes)
    };
    let log = fetch(
        nvrtc_sys::NvrtcFns::nvrtcGetProgramLogSize,
        nvrtc_sys::NvrtcFns::nvrtcGetProgramLog,
    )
    .map(|bytes| {
        CStr::from_bytes_until_nul(&bytes)
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    })
    .unwrap_or_default();
    let result = if status != nvrtcResult::NVRTC_SUCCESS {
        Err(format!(
            "NVRTC failed to compile {name} ({}):\n{log}",
            NvrtcError { result: status }
        )
        .into())
    } else {
        Ok(Compiled {
            // NVRTC's PTX ends in a NUL; nvcc's and ptxas's files do not,
            // and every test uses PTX as those tools write it.
            ptx: fetch(
                nvrtc_sys::NvrtcFns::nvrtcGetPTXSize,
                nvrtc_sys::NvrtcFns::nvrtcGetPTX,
            )
            .map(|mut ptx| {
                while ptx.last() == Some(&0) {
                    ptx.pop();
                }
                ptx
            }),
            ltoir: fetch(
                nvrtc_sys::NvrtcFns::nvrtcGetLTOIRSize,
                nvrtc_sys::NvrtcFns::nvrtcGetLTOIR,
            ),
            cubin: fetch(
                nvrtc_sys::NvrtcFns::nvrtcGetCUBINSize,
                nvrtc_sys::NvrtcFns::nvrtcGetCUBIN,
            ),
            log,
        })
    };
    // SAFETY: the program came from nvrtcCreateProgram; destroyed once.
    let _ = unsafe { lib.nvrtcDestroyProgram(&mut program) };
    result
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
    type Handle = *mut c_void;
    let lib = open("CUDA_LINK_NVFATBIN_PATH")?;
    let options: Vec<CString> = options
        .iter()
        .map(|o| CString::new(*o))
        .collect::<Result<_, _>>()?;
    let option_ptrs: Vec<*const c_char> = options.iter().map(|o| o.as_ptr()).collect();
    // SAFETY: the signatures are those of nvFatbin.h 12.9.
    unsafe {
        let create: libloading::Symbol<
            unsafe extern "C" fn(*mut Handle, *const *const c_char, usize) -> c_int,
        > = lib.get(b"nvFatbinCreate\0")?;
        let add_ptx: libloading::Symbol<
            unsafe extern "C" fn(
                Handle,
                *const c_char,
                usize,
                *const c_char,
                *const c_char,
                *const c_char,
            ) -> c_int,
        > = lib.get(b"nvFatbinAddPTX\0")?;
        let add_cubin: libloading::Symbol<
            unsafe extern "C" fn(
                Handle,
                *const c_void,
                usize,
                *const c_char,
                *const c_char,
            ) -> c_int,
        > = lib.get(b"nvFatbinAddCubin\0")?;
        let add_ltoir: libloading::Symbol<
            unsafe extern "C" fn(
                Handle,
                *const c_void,
                usize,
                *const c_char,
                *const c_char,
                *const c_char,
            ) -> c_int,
        > = lib.get(b"nvFatbinAddLTOIR\0")?;
        let size: libloading::Symbol<unsafe extern "C" fn(Handle, *mut usize) -> c_int> =
            lib.get(b"nvFatbinSize\0")?;
        let get: libloading::Symbol<unsafe extern "C" fn(Handle, *mut c_void) -> c_int> =
            lib.get(b"nvFatbinGet\0")?;
        let destroy: libloading::Symbol<unsafe extern "C" fn(*mut Handle) -> c_int> =
            lib.get(b"nvFatbinDestroy\0")?;

        let mut handle: Handle = std::ptr::null_mut();
        let status = create(&mut handle, option_ptrs.as_ptr(), option_ptrs.len());
        if status != 0 {
            return Err(format!("nvFatbinCreate failed: {status}").into());
        }
        let mut result = Ok(());
        for (i, input) in inputs.iter().enumerate() {
            let ident = CString::new(format!("input{i}"))?;
            let status = match *input {
                FatbinInput::Ptx(ptx, arch) => {
                    // nvFatbin wants NUL-terminated PTX.
                    let mut text = ptx.strip_suffix(b"\0").unwrap_or(ptx).to_vec();
                    text.push(0);
                    let arch = CString::new(arch)?;
                    add_ptx(
                        handle,
                        text.as_ptr().cast(),
                        text.len(),
                        arch.as_ptr(),
                        ident.as_ptr(),
                        c"".as_ptr(),
                    )
                }
                FatbinInput::Cubin(cubin, arch) => {
                    let arch = CString::new(arch)?;
                    add_cubin(
                        handle,
                        cubin.as_ptr().cast(),
                        cubin.len(),
                        arch.as_ptr(),
                        ident.as_ptr(),
                    )
                }
                FatbinInput::Ltoir(ltoir, arch) => {
                    let arch = CString::new(arch)?;
                    add_ltoir(
                        handle,
                        ltoir.as_ptr().cast(),
                        ltoir.len(),
                        arch.as_ptr(),
                        ident.as_ptr(),
                        c"".as_ptr(),
                    )
                }
            };
            if status != 0 {
                result = Err(format!("nvFatbinAdd for input {i} failed: {status}"));
                break;
            }
        }
        let mut bytes = Vec::new();
        if result.is_ok() {
            let mut len = 0usize;
            if size(handle, &mut len) == 0 {
                bytes.resize(len, 0);
                if get(handle, bytes.as_mut_ptr().cast()) != 0 {
                    result = Err("nvFatbinGet failed".to_owned());
                }
            } else {
                result = Err("nvFatbinSize failed".to_owned());
            }
        }
        destroy(&mut handle);
        result.map(|()| bytes).map_err(Into::into)
    }
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
