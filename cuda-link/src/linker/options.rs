//! [`LinkerOptions`]: cuda.core's `LinkerOptions`, field for field.

use crate::Arch;
use crate::linker::LinkError;

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
/// crashes on some corrupt contents of that kind, so an input from
/// someone you do not trust is linked in a child process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Isolation {
    /// In the calling process: the fastest, for inputs you trust (your
    /// own build's output, NVIDIA's libraries). A crash of nvJitLink on
    /// corrupt contents takes the process down.
    #[default]
    InProcess,
    /// In a child process forked for the link (Unix, nvJitLink backend):
    /// a signal, an abort or an overrun of `timeout` becomes
    /// [`LinkError::Crashed`] or [`LinkError::TimedOut`], and the calling
    /// process, its memory and its threads are untouched.
    Process {
        /// Kill the child after this long; `None` waits for it.
        timeout: Option<std::time::Duration>,
    },
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
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct LinkerOptions {
    /// `-arch=sm_90` / `CU_JIT_TARGET`; `sm_90a` and `sm_100f` too. When
    /// `None`, the current context's device decides, if there is one.
    pub arch: Option<Arch>,
    /// cuda.core's `name`: the name of the linked output, in its logs and
    /// errors. `None`: `linked.cubin`, `linked.ptx` or `linked.ltoir`.
    pub name: Option<String>,
    /// `-maxrregcount=N` / `CU_JIT_MAX_REGISTERS`.
    pub max_register_count: Option<u32>,
    /// `-time` / `CU_JIT_WALL_TIME`: timing in the info log.
    pub time: bool,
    /// `-verbose` / `CU_JIT_LOG_VERBOSE`.
    pub verbose: bool,
    /// `-lto` / `CU_JIT_LTO`. `None`: on when any input is LTO-IR.
    pub link_time_optimization: Option<bool>,
    /// `-ptx`: emit PTX (nvJitLink only, with LTO). Implied by
    /// [`OutputKind::Ptx`].
    pub ptx: bool,
    /// `-O<N>` / `CU_JIT_OPTIMIZATION_LEVEL`.
    pub optimization_level: Option<u32>,
    /// `-g` / `CU_JIT_GENERATE_DEBUG_INFO`.
    pub debug: bool,
    /// `-lineinfo` / `CU_JIT_GENERATE_LINE_INFO`.
    pub lineinfo: bool,
    /// `-ftz=0|1` / `CU_JIT_FTZ`.
    pub ftz: Option<bool>,
    /// `-prec-div=0|1` / `CU_JIT_PREC_DIV`.
    pub prec_div: Option<bool>,
    /// `-prec-sqrt=0|1` / `CU_JIT_PREC_SQRT`.
    pub prec_sqrt: Option<bool>,
    /// `-fma=0|1` / `CU_JIT_FMA`.
    pub fma: Option<bool>,
    /// `-kernels-used=` each / `CU_JIT_REFERENCED_KERNEL_NAMES`.
    pub kernels_used: Vec<String>,
    /// `-variables-used=` each / `CU_JIT_REFERENCED_VARIABLE_NAMES`.
    pub variables_used: Vec<String>,
    /// `-optimize-unused-variables` / `CU_JIT_OPTIMIZE_UNUSED_DEVICE_VARIABLES`.
    pub optimize_unused_variables: bool,
    /// `-Xptxas=` each (nvJitLink only).
    pub ptxas_options: Vec<String>,
    /// `-split-compile=N` (nvJitLink only).
    pub split_compile: Option<u32>,
    /// `-split-compile-extended=N` (nvJitLink only).
    pub split_compile_extended: Option<u32>,
    /// `-no-cache` / `CU_JIT_CACHE_MODE = NONE`.
    pub no_cache: bool,
    /// Raw nvJitLink flags appended as given (nvJitLink only).
    pub extra_flags: Vec<String>,
    /// Which library links.
    pub backend: Backend,
    /// Where the link runs: in this process, or isolated in a child.
    pub isolation: Isolation,
}

/// A setter for each field: `options.field(value)`; options that are
/// `Option<T>` take the `T`.
macro_rules! setters {
    ($($(#[$doc:meta])* $field:ident: $kind:tt $ty:ty;)*) => {
        $(setters!(@one $(#[$doc])* $field $kind $ty);)*
    };
    (@one $(#[$doc:meta])* $field:ident some $ty:ty) => {
        $(#[$doc])*
        pub fn $field(mut self, value: $ty) -> Self {
            self.$field = Some(value);
            self
        }
    };
    (@one $(#[$doc:meta])* $field:ident text $ty:ty) => {
        $(#[$doc])*
        pub fn $field(mut self, value: impl Into<$ty>) -> Self {
            self.$field = Some(value.into());
            self
        }
    };
    (@one $(#[$doc:meta])* $field:ident flag $ty:ty) => {
        $(#[$doc])*
        pub fn $field(mut self, on: $ty) -> Self {
            self.$field = on;
            self
        }
    };
    (@one $(#[$doc:meta])* $field:ident list $ty:ty) => {
        $(#[$doc])*
        pub fn $field<S: Into<String>>(mut self, values: impl IntoIterator<Item = S>) -> Self {
            self.$field = values.into_iter().map(Into::into).collect();
            self
        }
    };
}

impl LinkerOptions {
    /// Options for one architecture, everything else default.
    pub fn for_arch(arch: Arch) -> Self {
        LinkerOptions {
            arch: Some(arch),
            ..Self::default()
        }
    }

    setters! {
        /// Sets [`arch`](Self::arch).
        arch: some Arch;
        /// Sets [`name`](Self::name).
        name: text String;
        /// Sets [`max_register_count`](Self::max_register_count).
        max_register_count: some u32;
        /// Sets [`time`](Self::time).
        time: flag bool;
        /// Sets [`verbose`](Self::verbose).
        verbose: flag bool;
        /// Sets [`link_time_optimization`](Self::link_time_optimization).
        link_time_optimization: some bool;
        /// Sets [`ptx`](Self::ptx).
        ptx: flag bool;
        /// Sets [`optimization_level`](Self::optimization_level).
        optimization_level: some u32;
        /// Sets [`debug`](Self::debug).
        debug: flag bool;
        /// Sets [`lineinfo`](Self::lineinfo).
        lineinfo: flag bool;
        /// Sets [`ftz`](Self::ftz).
        ftz: some bool;
        /// Sets [`prec_div`](Self::prec_div).
        prec_div: some bool;
        /// Sets [`prec_sqrt`](Self::prec_sqrt).
        prec_sqrt: some bool;
        /// Sets [`fma`](Self::fma).
        fma: some bool;
        /// Sets [`kernels_used`](Self::kernels_used).
        kernels_used: list String;
        /// Sets [`variables_used`](Self::variables_used).
        variables_used: list String;
        /// Sets [`optimize_unused_variables`](Self::optimize_unused_variables).
        optimize_unused_variables: flag bool;
        /// Sets [`ptxas_options`](Self::ptxas_options).
        ptxas_options: list String;
        /// Sets [`split_compile`](Self::split_compile).
        split_compile: some u32;
        /// Sets [`split_compile_extended`](Self::split_compile_extended).
        split_compile_extended: some u32;
        /// Sets [`no_cache`](Self::no_cache).
        no_cache: flag bool;
        /// Sets [`extra_flags`](Self::extra_flags).
        extra_flags: list String;
        /// Sets [`backend`](Self::backend).
        backend: flag Backend;
        /// Sets [`isolation`](Self::isolation).
        isolation: flag Isolation;
    }

    /// The nvJitLink command line for these options. `arch` and `lto` are
    /// the resolved values.
    pub(crate) fn nvjitlink_flags(&self, arch: Arch, lto: bool, output: OutputKind) -> Vec<String> {
        let mut flags = vec![format!("-arch={arch}")];
        let mut push_if = |on: bool, flag: &str| {
            if on {
                flags.push(flag.to_owned());
            }
        };
        push_if(lto, "-lto");
        push_if(self.ptx || output == OutputKind::Ptx, "-ptx");
        push_if(self.time, "-time");
        push_if(self.verbose, "-verbose");
        push_if(self.debug, "-g");
        push_if(self.lineinfo, "-lineinfo");
        push_if(self.optimize_unused_variables, "-optimize-unused-variables");
        push_if(self.no_cache, "-no-cache");
        if let Some(n) = self.max_register_count {
            flags.push(format!("-maxrregcount={n}"));
        }
        if let Some(n) = self.optimization_level {
            flags.push(format!("-O{n}"));
        }
        for (name, value) in [
            ("ftz", self.ftz),
            ("prec-div", self.prec_div),
            ("prec-sqrt", self.prec_sqrt),
            ("fma", self.fma),
        ] {
            // nvJitLink documents `=<n>`, and libNVVM, which gets these
            // under LTO, refuses `=true` / `=false`.
            if let Some(value) = value {
                flags.push(format!("-{name}={}", u8::from(value)));
            }
        }
        flags.extend(
            self.kernels_used
                .iter()
                .map(|k| format!("-kernels-used={k}")),
        );
        flags.extend(
            self.variables_used
                .iter()
                .map(|v| format!("-variables-used={v}")),
        );
        flags.extend(self.ptxas_options.iter().map(|o| format!("-Xptxas={o}")));
        if let Some(n) = self.split_compile {
            flags.push(format!("-split-compile={n}"));
        }
        if let Some(n) = self.split_compile_extended {
            flags.push(format!("-split-compile-extended={n}"));
        }
        flags.extend(self.extra_flags.iter().cloned());
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
        let unsupported = [
            ("ptx", self.ptx),
            ("ptxas_options", !self.ptxas_options.is_empty()),
            ("split_compile", self.split_compile.is_some()),
            (
                "split_compile_extended",
                self.split_compile_extended.is_some(),
            ),
            ("extra_flags", !self.extra_flags.is_empty()),
            // CUDA does not survive the fork.
            ("isolation", self.isolation != Isolation::InProcess),
        ];
        match unsupported.iter().chain(more).find(|(_, set)| *set) {
            Some((option, _)) => Err(LinkError::UnsupportedOption {
                option,
                backend: Backend::Driver.name(),
            }),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_option_has_its_flag() {
        let options = LinkerOptions {
            arch: Some(Arch::sm(90)),
            name: Some("options test".into()),
            max_register_count: Some(32),
            time: true,
            verbose: true,
            link_time_optimization: Some(true),
            ptx: true,
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
            isolation: Isolation::InProcess,
        };
        let flags = options.nvjitlink_flags(Arch::sm(90), true, OutputKind::Cubin);
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
            Err(LinkError::UnsupportedOption { option: "ptx", .. })
        ));
    }
}
