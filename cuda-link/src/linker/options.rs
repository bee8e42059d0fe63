//! [`LinkerOptions`]: cuda.core's `LinkerOptions`, field for field.

use cuda_driver_sys::sys::{CUjit_cacheMode, CUjit_option};

use super::error::LinkError;
use super::link_target::LinkTarget;
use super::settings::{AsValue, Value};
use super::settings::{DriverOption, NvJitLinkFlag, linker_options};
use crate::arch::Arch;

/// Which library performs the link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Backend {
    /// nvJitLink when it loads, else the driver.
    #[default]
    Auto,
    /// nvJitLink (12.x or 13.x); no GPU needed.
    NvJitLink,
    /// The driver's `cuLink*` API; needs a current CUDA context.
    Driver,
}

impl Backend {
    /// A short lowercase name for messages.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Auto => "auto",
            Backend::NvJitLink => "nvJitLink",
            Backend::Driver => "driver",
        }
    }
}

/// Where a link runs.
///
/// Construction of an [`ObjectCode`](crate::ObjectCode) checks every
/// structure a C library follows (tables, offsets, string tables, record
/// layouts), but not the contents that NVIDIA's code interprets: machine
/// code, `.nv.info` attribute values, LTO-IR bitcode, PTX text. nvJitLink
/// crashes on some corrupt contents of that kind, so by default (on Unix)
/// nvJitLink links in a worker process, within a time and a memory limit.
///
/// Only nvJitLink is isolated: the driver's `cuLink*` (and
/// `cuLibraryLoadData` in `cuda-module`) run in the caller's process,
/// since CUDA does not survive a fork. With the driver backend the default
/// runs in-process; an explicit `Process` other than the default is
/// refused by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Isolation {
    /// In the calling process: the fastest, for inputs you trust (your
    /// own build's output, NVIDIA's libraries). A crash of nvJitLink on
    /// corrupt contents takes the process down.
    InProcess,
    /// In a worker process (Unix, nvJitLink backend), forked once and kept
    /// for the links that follow: a signal, an abort, an overrun of
    /// `timeout` or of `memory_limit` becomes [`LinkError::Crashed`],
    /// [`LinkError::TimedOut`] or [`LinkError::MemoryLimit`], and the
    /// calling process, its memory and its threads are untouched.
    Process {
        /// Kill the worker after this long; `None` waits for it.
        timeout: Option<std::time::Duration>,
        /// Kill the worker when a link adds more than this many bytes to
        /// its resident memory (a fork starts with the caller's pages);
        /// `None` lets it grow. Read from `/proc` every 50 ms while the
        /// caller waits: where `/proc` is missing (Unix other than Linux)
        /// only the deadline holds.
        memory_limit: Option<u64>,
    },
}

impl Isolation {
    /// The default time limit of an isolated link: 5 minutes.
    pub const DEFAULT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(300);

    /// A worker process with the default limits: [`DEFAULT_TIMEOUT`]
    /// and [`default_memory_limit`].
    ///
    /// [`DEFAULT_TIMEOUT`]: Self::DEFAULT_TIMEOUT
    /// [`default_memory_limit`]: Self::default_memory_limit
    pub fn process() -> Self {
        Isolation::Process {
            timeout: Some(Self::DEFAULT_TIMEOUT),
            memory_limit: Some(Self::default_memory_limit()),
        }
    }

    /// The default memory limit of an isolated link: half of the
    /// machine's physical memory (8 GiB where it cannot be read).
    pub fn default_memory_limit() -> u64 {
        #[cfg(unix)]
        {
            // SAFETY: sysconf has no preconditions; -1 means unknown.
            let (pages, page) = unsafe {
                (
                    libc::sysconf(libc::_SC_PHYS_PAGES),
                    libc::sysconf(libc::_SC_PAGESIZE),
                )
            };
            if pages > 0 && page > 0 {
                return (pages as u64).saturating_mul(page as u64) / 2;
            }
        }
        8 << 30
    }
}

impl Default for Isolation {
    /// [`Isolation::process`] on Unix, [`Isolation::InProcess`] elsewhere.
    fn default() -> Self {
        if cfg!(unix) {
            Isolation::process()
        } else {
            Isolation::InProcess
        }
    }
}

/// What [`Linker::link`](crate::Linker::link) produces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OutputKind {
    /// A loadable cubin.
    Cubin,
    /// PTX; needs link-time optimisation, as nvJitLink requires.
    Ptx,
    /// LTO-IR; needs link-time optimisation and nvJitLink 13.
    Ltoir,
}

linker_options! {
    /// Link options, one field per option of cuda.core's `LinkerOptions`.
    ///
    /// Each maps to its nvJitLink flag and, where one exists, to its `CU_JIT_*`
    /// driver option; an option the chosen backend cannot honour is an
    /// [`LinkError::UnsupportedOption`], never silently dropped.
    ///
    /// Build it with [`for_arch`](Self::for_arch) or `default()` and the
    /// setters, which are named after the fields; new options will be added,
    /// so it cannot be written as a struct literal outside this crate:
    ///
    /// ```
    /// use cuda_link::{Arch, LinkerOptions};
    ///
    /// let options = LinkerOptions::for_arch(Arch::sm(90))
    ///     .max_register_count(64)
    ///     .ftz(true)
    ///     .kernels_used(["saxpy"])
    ///     .name("saxpy link");
    /// assert_eq!(options.arch.unwrap().to_string(), "sm_90");
    /// ```
    ;
    /// `-arch=sm_90` / `CU_JIT_TARGET`; `sm_90a` and `sm_100f` too. When
    /// `None`, the current context's device decides, if there is one.
    arch: Option<Arch>, some Arch, NvJitLinkFlag::Resolved, DriverOption::Resolved;
    /// The slots of a multi-arch link ([`Linker::link_fatbin`]): a cubin
    /// per `sm_XX`, PTX per `compute_XX`. nvJitLink only: each target is a
    /// link of its own, on a thread of its own.
    ///
    /// [`Linker::link_fatbin`]: crate::Linker::link_fatbin
    targets: Vec<LinkTarget>, items LinkTarget, NvJitLinkFlag::NotAFlag, DriverOption::Unsupported;
    /// How [`Linker::link_fatbin`] stores each entry of the fatbin: as
    /// it is (`None`, the default), or compressed.
    ///
    /// [`Linker::link_fatbin`]: crate::Linker::link_fatbin
    fatbin_compression: Option<crate::fatbin::Compression>, some crate::fatbin::Compression,
        NvJitLinkFlag::NotAFlag, DriverOption::NotAnOption;
    /// cuda.core's `name`: the name of the linked output, in its logs and
    /// errors. `None`: `linked.cubin`, `linked.ptx` or `linked.ltoir`.
    name: Option<String>, text String, NvJitLinkFlag::NotAFlag, DriverOption::NotAnOption;
    /// `-maxrregcount=N` / `CU_JIT_MAX_REGISTERS`.
    max_register_count: Option<u32>, some u32,
        NvJitLinkFlag::Number("-maxrregcount="), DriverOption::Key(CUjit_option::CU_JIT_MAX_REGISTERS);
    /// `-time` / `CU_JIT_WALL_TIME`: timing in the info log.
    time: bool, flag bool,
        NvJitLinkFlag::Switch("-time"), DriverOption::Output(CUjit_option::CU_JIT_WALL_TIME);
    /// `-verbose` / `CU_JIT_LOG_VERBOSE`.
    verbose: bool, flag bool,
        NvJitLinkFlag::Switch("-verbose"), DriverOption::Key(CUjit_option::CU_JIT_LOG_VERBOSE);
    /// `-lto` / `CU_JIT_LTO`. `None`: on when an input carries LTO-IR for
    /// the target arch.
    link_time_optimization: Option<bool>, some bool, NvJitLinkFlag::Resolved, DriverOption::Resolved;
    /// `-ptx`: emit PTX (nvJitLink only, with LTO). Implied by
    /// [`OutputKind::Ptx`].
    ptx: bool, flag bool, NvJitLinkFlag::Resolved, DriverOption::Unsupported;
    /// The highest PTX ISA of PTX output: PTX that states a newer
    /// `.version` is lowered to this one and assembled once by nvJitLink's
    /// ptxas for the link's arch, which refuses code the older ISA lacks
    /// ([`LinkError::PtxIsaTooLow`]). A driver JIT-compiles PTX only up to
    /// its own CUDA release's ISA (580, CUDA 13.0: 9.0), and nvJitLink
    /// writes its own (13.5: 9.5). nvJitLink only.
    ptx_isa: Option<crate::PtxIsa>, some crate::PtxIsa, NvJitLinkFlag::NotAFlag, DriverOption::Unsupported;
    /// `-O<N>` / `CU_JIT_OPTIMIZATION_LEVEL`.
    optimization_level: Option<u32>, some u32,
        NvJitLinkFlag::Number("-O"), DriverOption::Key(CUjit_option::CU_JIT_OPTIMIZATION_LEVEL);
    /// `-g` / `CU_JIT_GENERATE_DEBUG_INFO`.
    debug: bool, flag bool,
        NvJitLinkFlag::Switch("-g"), DriverOption::Key(CUjit_option::CU_JIT_GENERATE_DEBUG_INFO);
    /// `-lineinfo` / `CU_JIT_GENERATE_LINE_INFO`.
    lineinfo: bool, flag bool,
        NvJitLinkFlag::Switch("-lineinfo"), DriverOption::Key(CUjit_option::CU_JIT_GENERATE_LINE_INFO);
    /// `-ftz=0|1` / `CU_JIT_FTZ`.
    ftz: Option<bool>, some bool,
        NvJitLinkFlag::ZeroOne("-ftz="), DriverOption::Key(CUjit_option::CU_JIT_FTZ);
    /// `-prec-div=0|1` / `CU_JIT_PREC_DIV`.
    prec_div: Option<bool>, some bool,
        NvJitLinkFlag::ZeroOne("-prec-div="), DriverOption::Key(CUjit_option::CU_JIT_PREC_DIV);
    /// `-prec-sqrt=0|1` / `CU_JIT_PREC_SQRT`.
    prec_sqrt: Option<bool>, some bool,
        NvJitLinkFlag::ZeroOne("-prec-sqrt="), DriverOption::Key(CUjit_option::CU_JIT_PREC_SQRT);
    /// `-fma=0|1` / `CU_JIT_FMA`.
    fma: Option<bool>, some bool,
        NvJitLinkFlag::ZeroOne("-fma="), DriverOption::Key(CUjit_option::CU_JIT_FMA);
    /// `-kernels-used=` each / `CU_JIT_REFERENCED_KERNEL_NAMES`.
    kernels_used: Vec<String>, list String,
        NvJitLinkFlag::Each("-kernels-used="),
        DriverOption::Names(
            CUjit_option::CU_JIT_REFERENCED_KERNEL_NAMES,
            CUjit_option::CU_JIT_REFERENCED_KERNEL_COUNT,
        );
    /// `-variables-used=` each / `CU_JIT_REFERENCED_VARIABLE_NAMES`.
    variables_used: Vec<String>, list String,
        NvJitLinkFlag::Each("-variables-used="),
        DriverOption::Names(
            CUjit_option::CU_JIT_REFERENCED_VARIABLE_NAMES,
            CUjit_option::CU_JIT_REFERENCED_VARIABLE_COUNT,
        );
    /// `-optimize-unused-variables` / `CU_JIT_OPTIMIZE_UNUSED_DEVICE_VARIABLES`.
    optimize_unused_variables: bool, flag bool,
        NvJitLinkFlag::Switch("-optimize-unused-variables"),
        DriverOption::Key(CUjit_option::CU_JIT_OPTIMIZE_UNUSED_DEVICE_VARIABLES);
    /// `-Xptxas=` each (nvJitLink only).
    ptxas_options: Vec<String>, list String, NvJitLinkFlag::Each("-Xptxas="), DriverOption::Unsupported;
    /// `-split-compile=N` (nvJitLink only).
    split_compile: Option<u32>, some u32,
        NvJitLinkFlag::Number("-split-compile="), DriverOption::Unsupported;
    /// `-split-compile-extended=N` (nvJitLink only).
    split_compile_extended: Option<u32>, some u32,
        NvJitLinkFlag::Number("-split-compile-extended="), DriverOption::Unsupported;
    /// `-no-cache` / `CU_JIT_CACHE_MODE = NONE`.
    no_cache: bool, flag bool,
        NvJitLinkFlag::Switch("-no-cache"),
        DriverOption::Value(
            CUjit_option::CU_JIT_CACHE_MODE,
            CUjit_cacheMode::CU_JIT_CACHE_OPTION_NONE.0 as usize,
        );
    /// Raw nvJitLink flags appended as given (nvJitLink only).
    extra_flags: Vec<String>, list String, NvJitLinkFlag::Each(""), DriverOption::Unsupported;
    /// Which library links.
    backend: Backend, flag Backend, NvJitLinkFlag::NotAFlag, DriverOption::NotAnOption;
    /// Where the link runs: in this process, or isolated in a child
    /// (nvJitLink only: CUDA does not survive a fork).
    isolation: Isolation, flag Isolation, NvJitLinkFlag::NotAFlag, DriverOption::Unsupported;
}

impl LinkerOptions {
    /// Options for one architecture, everything else default.
    pub fn for_arch(arch: Arch) -> Self {
        LinkerOptions {
            arch: Some(arch),
            ..Self::default()
        }
    }

    /// The nvJitLink command line for these options, from
    /// [`settings`](Self::settings). `arch` and `lto` are the resolved
    /// values.
    pub(crate) fn nvjitlink_flags(&self, arch: Arch, lto: bool, output: OutputKind) -> Vec<String> {
        let mut flags = vec![format!("-arch={arch}")];
        if lto {
            flags.push("-lto".to_owned());
        }
        if self.ptx || output == OutputKind::Ptx {
            flags.push("-ptx".to_owned());
        }
        for setting in self.settings() {
            setting.nvjitlink_flags(&mut flags);
        }
        flags
    }

    /// Fails on the first option the driver's `cuLink*` cannot honour,
    /// for any output.
    pub(crate) fn check_driver_options(&self) -> Result<(), LinkError> {
        self.first_unsupported_by_driver(&[])
    }

    /// Fails on the first option the driver's `cuLink*` cannot honour,
    /// or on an output it cannot produce.
    pub(crate) fn check_driver_support(&self, output: OutputKind) -> Result<(), LinkError> {
        self.first_unsupported_by_driver(&[
            ("ptx", output == OutputKind::Ptx),
            ("ltoir output", output == OutputKind::Ltoir),
        ])
    }

    fn first_unsupported_by_driver(&self, more: &[(&'static str, bool)]) -> Result<(), LinkError> {
        let settings = self.settings();
        let unsupported = settings
            .iter()
            .filter(|setting| setting.driver == DriverOption::Unsupported)
            .map(|setting| (setting.name, setting.value.is_set()));
        match unsupported
            .chain(more.iter().copied())
            .find(|(_, set)| *set)
        {
            Some((option, _)) => Err(LinkError::UnsupportedOption {
                option,
                backend: Backend::Driver.name(),
            }),
            None => Ok(()),
        }
    }
}

impl AsValue for Vec<LinkTarget> {
    fn as_value(&self) -> Value<'_> {
        Value::Other {
            set: !self.is_empty(),
        }
    }
}

impl AsValue for Option<crate::fatbin::Compression> {
    fn as_value(&self) -> Value<'_> {
        Value::Other {
            set: self.is_some(),
        }
    }
}

impl AsValue for Backend {
    fn as_value(&self) -> Value<'_> {
        Value::Other {
            set: *self != Backend::default(),
        }
    }
}

impl AsValue for Isolation {
    /// Set when it asks for other than the default worker: the driver,
    /// which cannot fork, runs the default in-process.
    fn as_value(&self) -> Value<'_> {
        Value::Other {
            set: *self != Isolation::default() && *self != Isolation::InProcess,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::linker::settings::Value;

    /// Every field set to other than its default. A struct literal: a new
    /// option does not compile here until it is added.
    pub(crate) fn every_option_set() -> LinkerOptions {
        LinkerOptions {
            arch: Some(Arch::sm(90)),
            targets: vec![LinkTarget::Cubin(Arch::sm(80))],
            fatbin_compression: Some(crate::fatbin::Compression::Lz4),
            name: Some("options test".into()),
            max_register_count: Some(32),
            time: true,
            verbose: true,
            link_time_optimization: Some(true),
            ptx: true,
            ptx_isa: Some(crate::PtxIsa::new(9, 0)),
            optimization_level: Some(3),
            debug: true,
            lineinfo: true,
            ftz: Some(true),
            prec_div: Some(false),
            prec_sqrt: Some(true),
            fma: Some(false),
            kernels_used: vec!["k".into()],
            variables_used: vec!["v".into()],
            optimize_unused_variables: true,
            ptxas_options: vec!["-v".into()],
            split_compile: Some(0),
            split_compile_extended: Some(2),
            no_cache: true,
            extra_flags: vec!["-jump-table-density=50".into()],
            backend: Backend::NvJitLink,
            isolation: Isolation::Process {
                timeout: None,
                memory_limit: None,
            },
        }
    }

    /// Each option reaches nvJitLink as its documented flag, or is one the
    /// linker resolves or that is not a flag (how and where it links).
    #[test]
    fn every_option_reaches_nvjitlink() {
        let options = every_option_set();
        let flags = options.nvjitlink_flags(Arch::sm(90), true, OutputKind::Cubin);
        let mut not_flags = Vec::new();
        for setting in options.settings() {
            assert!(
                setting.value.is_set(),
                "{} left at its default",
                setting.name
            );
            let mut own = Vec::new();
            setting.nvjitlink_flags(&mut own);
            match setting.nvjitlink {
                NvJitLinkFlag::NotAFlag => not_flags.push(setting.name),
                NvJitLinkFlag::Resolved => {}
                _ => assert!(!own.is_empty(), "{} adds no flag", setting.name),
            }
            for flag in own {
                assert!(flags.contains(&flag), "{flag} missing from {flags:?}");
            }
        }
        assert_eq!(
            not_flags,
            [
                "targets",
                "fatbin_compression",
                "name",
                "ptx_isa",
                "backend",
                "isolation"
            ]
        );
        for expected in [
            "-arch=sm_90",
            "-lto",
            "-ptx",
            "-time",
            "-verbose",
            "-g",
            "-lineinfo",
            "-optimize-unused-variables",
            "-no-cache",
            "-maxrregcount=32",
            "-O3",
            "-ftz=1",
            "-prec-div=0",
            "-prec-sqrt=1",
            "-fma=0",
            "-kernels-used=k",
            "-variables-used=v",
            "-Xptxas=-v",
            "-split-compile=0",
            "-split-compile-extended=2",
            "-jump-table-density=50",
        ] {
            assert!(
                flags.iter().any(|f| f == expected),
                "{expected} missing from {flags:?}"
            );
        }
        assert_eq!(flags.len(), 21);
        // However it was spelled, the arch reaches nvJitLink as sm_NN.
        let bare: Arch = "90".parse().unwrap();
        let flags = LinkerOptions::for_arch(bare).nvjitlink_flags(bare, false, OutputKind::Cubin);
        assert_eq!(flags, ["-arch=sm_90"]);
        assert!(matches!(
            options.check_driver_support(OutputKind::Cubin),
            Err(LinkError::UnsupportedOption {
                option: "targets",
                ..
            })
        ));
        assert!(matches!(Value::Switch(false), v if !v.is_set()));
    }
}
