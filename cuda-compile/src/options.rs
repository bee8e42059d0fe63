//! [`ProgramOptions`]: cuda.core's `ProgramOptions`, field for field, and
//! the options NVRTC 13.1 to 13.5 added, each described once.

use cuda_link::Arch;

use crate::error::CompileError;

/// The C++ dialect (`--std`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Std {
    /// `c++03`.
    Cxx03,
    /// `c++11`.
    Cxx11,
    /// `c++14`.
    Cxx14,
    /// `c++17`, NVRTC's default.
    Cxx17,
    /// `c++20`.
    Cxx20,
    /// `c++23` (NVRTC 13).
    Cxx23,
}

impl Std {
    fn spelling(self) -> &'static str {
        match self {
            Std::Cxx03 => "c++03",
            Std::Cxx11 => "c++11",
            Std::Cxx14 => "c++14",
            Std::Cxx17 => "c++17",
            Std::Cxx20 => "c++20",
            Std::Cxx23 => "c++23",
        }
    }
}

/// How an option is written on NVRTC's command line.
#[derive(Debug, Clone, Copy)]
enum Spelling {
    /// `--flag` when on.
    Switch(&'static str),
    /// `--flag=true|false` when set.
    TrueFalse(&'static str),
    /// `--flag=` and the value, when set.
    Value(&'static str),
    /// `--flag=` and each value.
    Each(&'static str),
    /// Each value as it is: options this struct has no field for.
    Raw,
    /// Not an NVRTC option: handled by the compiler.
    Ours,
}

/// An option's value, as the command line and the checks read it.
trait Render {
    /// The values to write after the spelling's `=`, or `Some(vec![])` for
    /// a switch that is on; `None` when the option is left unset.
    fn values(&self) -> Option<Vec<String>>;
}

impl Render for bool {
    fn values(&self) -> Option<Vec<String>> {
        self.then(Vec::new)
    }
}

impl Render for Option<bool> {
    fn values(&self) -> Option<Vec<String>> {
        self.map(|on| vec![on.to_string()])
    }
}

impl Render for Option<u32> {
    fn values(&self) -> Option<Vec<String>> {
        self.map(|n| vec![n.to_string()])
    }
}

impl Render for Option<String> {
    fn values(&self) -> Option<Vec<String>> {
        self.clone().map(|text| vec![text])
    }
}

impl Render for Vec<String> {
    fn values(&self) -> Option<Vec<String>> {
        (!self.is_empty()).then(|| self.clone())
    }
}

impl Render for Vec<u32> {
    fn values(&self) -> Option<Vec<String>> {
        (!self.is_empty()).then(|| self.iter().map(u32::to_string).collect())
    }
}

impl Render for Option<Std> {
    fn values(&self) -> Option<Vec<String>> {
        self.map(|std| vec![std.spelling().to_owned()])
    }
}

impl Render for Option<Arch> {
    fn values(&self) -> Option<Vec<String>> {
        self.map(|arch| vec![arch.to_string()])
    }
}

/// Writes `ProgramOptions`, a setter per field and the command line from
/// one entry per option: `field: Type, setter Argument, spelling, oldest
/// NVRTC (major, minor);`.
macro_rules! program_options {
    ($($(#[$doc:meta])* $field:ident : $ty:ty, $kind:ident $arg:ty, $spelling:expr, $since:expr;)*) => {
        /// NVRTC options: every field of cuda.core's `ProgramOptions`, and
        /// the options NVRTC 13.1 to 13.5 added.
        ///
        /// Build it with [`for_arch`](Self::for_arch) or `default()` and the
        /// setters, named after the fields; new options will be added, so
        /// it cannot be written as a struct literal outside this crate. An
        /// option the loaded NVRTC is too old for is
        /// [`CompileError::Unsupported`] before NVRTC is called.
        ///
        /// ```
        /// use cuda_compile::{ProgramOptions, Std};
        /// use cuda_link::Arch;
        ///
        /// let options = ProgramOptions::for_arch(Arch::sm(90))
        ///     .std(Std::Cxx17)
        ///     .define_macro(["BLOCK=256"])
        ///     .use_fast_math(true);
        /// assert_eq!(options.arch.unwrap().to_string(), "sm_90");
        /// ```
        #[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub struct ProgramOptions {
            $($(#[$doc])* pub $field: $ty,)*
        }

        impl ProgramOptions {
            $(cuda_link::option_setter!($kind $field $arg);)*

            /// Every option with its spelling, the oldest NVRTC that has
            /// it, and its values when set.
            fn settings(&self) -> Vec<(&'static str, Spelling, (u32, u32), Option<Vec<String>>)> {
                vec![$((stringify!($field), $spelling, $since, self.$field.values()),)*]
            }
        }
    };
}

const V12: (u32, u32) = (12, 0);
const V13: (u32, u32) = (13, 0);

program_options! {
    /// The target: `sm_90` (a cubin, or PTX / LTO-IR for `compute_90`),
    /// `sm_90a`, `sm_100f`. `None`: the current device's, when a context is
    /// current; otherwise [`CompileError::MissingArch`].
    arch: Option<Arch>, some Arch, Spelling::Ours, V12;
    /// `--relocatable-device-code=true|false` (`-rdc`). LTO-IR output sets
    /// it.
    relocatable_device_code: Option<bool>, some bool,
        Spelling::TrueFalse("--relocatable-device-code"), V12;
    /// `--extensible-whole-program` (`-ewp`).
    extensible_whole_program: bool, flag bool,
        Spelling::Switch("--extensible-whole-program"), V12;
    /// `--device-debug` (`-G`).
    debug: bool, flag bool, Spelling::Switch("--device-debug"), V12;
    /// `--generate-line-info` (`-lineinfo`).
    lineinfo: bool, flag bool, Spelling::Switch("--generate-line-info"), V12;
    /// `--dopt=on`: optimise device code even with `debug`.
    device_code_optimize: bool, flag bool, Spelling::Switch("--dopt=on"), V12;
    /// `--ptxas-options=` each.
    ptxas_options: Vec<String>, list String, Spelling::Each("--ptxas-options"), V12;
    /// `--maxrregcount=N`.
    max_register_count: Option<u32>, some u32, Spelling::Value("--maxrregcount"), V12;
    /// `--ftz=true|false`.
    ftz: Option<bool>, some bool, Spelling::TrueFalse("--ftz"), V12;
    /// `--prec-sqrt=true|false`.
    prec_sqrt: Option<bool>, some bool, Spelling::TrueFalse("--prec-sqrt"), V12;
    /// `--prec-div=true|false`.
    prec_div: Option<bool>, some bool, Spelling::TrueFalse("--prec-div"), V12;
    /// `--fmad=true|false`.
    fma: Option<bool>, some bool, Spelling::TrueFalse("--fmad"), V12;
    /// `--use_fast_math`.
    use_fast_math: bool, flag bool, Spelling::Switch("--use_fast_math"), V12;
    /// `--extra-device-vectorization`.
    extra_device_vectorization: bool, flag bool,
        Spelling::Switch("--extra-device-vectorization"), V12;
    /// `--dlink-time-opt` (`-dlto`). Implied by LTO-IR output.
    link_time_optimization: bool, flag bool, Spelling::Switch("--dlink-time-opt"), V12;
    /// `--gen-opt-lto`.
    gen_opt_lto: bool, flag bool, Spelling::Switch("--gen-opt-lto"), V12;
    /// `--define-macro=` each: `"NAME"` or `"NAME=VALUE"`.
    define_macro: Vec<String>, list String, Spelling::Each("--define-macro"), V12;
    /// `--undefine-macro=` each.
    undefine_macro: Vec<String>, list String, Spelling::Each("--undefine-macro"), V12;
    /// `--include-path=` each. The compile cache reads the headers found
    /// here.
    include_path: Vec<String>, list String, Spelling::Each("--include-path"), V12;
    /// `--pre-include=` each.
    pre_include: Vec<String>, list String, Spelling::Each("--pre-include"), V12;
    /// `--no-source-include`.
    no_source_include: bool, flag bool, Spelling::Switch("--no-source-include"), V12;
    /// `--std=`.
    std: Option<Std>, some Std, Spelling::Value("--std"), V12;
    /// `--builtin-move-forward=true|false`.
    builtin_move_forward: Option<bool>, some bool,
        Spelling::TrueFalse("--builtin-move-forward"), V12;
    /// `--builtin-initializer-list=true|false`.
    builtin_initializer_list: Option<bool>, some bool,
        Spelling::TrueFalse("--builtin-initializer-list"), V12;
    /// `--disable-warnings`.
    disable_warnings: bool, flag bool, Spelling::Switch("--disable-warnings"), V12;
    /// `--restrict`.
    restrict: bool, flag bool, Spelling::Switch("--restrict"), V12;
    /// `--device-as-default-execution-space`.
    device_as_default_execution_space: bool, flag bool,
        Spelling::Switch("--device-as-default-execution-space"), V12;
    /// `--device-int128`.
    device_int128: bool, flag bool, Spelling::Switch("--device-int128"), V12;
    /// `--device-float128`.
    device_float128: bool, flag bool, Spelling::Switch("--device-float128"), V12;
    /// `--optimization-info=` (`inline`).
    optimization_info: Option<String>, text String, Spelling::Value("--optimization-info"), V12;
    /// `--no-display-error-number`.
    no_display_error_number: bool, flag bool,
        Spelling::Switch("--no-display-error-number"), V12;
    /// `--diag-error=` each number.
    diag_error: Vec<u32>, list u32, Spelling::Each("--diag-error"), V12;
    /// `--diag-suppress=` each number.
    diag_suppress: Vec<u32>, list u32, Spelling::Each("--diag-suppress"), V12;
    /// `--diag-warn=` each number.
    diag_warn: Vec<u32>, list u32, Spelling::Each("--diag-warn"), V12;
    /// `--brief-diagnostics=true|false`.
    brief_diagnostics: Option<bool>, some bool,
        Spelling::TrueFalse("--brief-diagnostics"), V12;
    /// `--time=FILE` (`-` for the log). Writes a file: such a compile is
    /// never cached.
    time: Option<String>, text String, Spelling::Value("--time"), V12;
    /// `--split-compile=N` (0: every core).
    split_compile: Option<u32>, some u32, Spelling::Value("--split-compile"), V12;
    /// `--fdevice-syntax-only`.
    fdevice_syntax_only: bool, flag bool, Spelling::Switch("--fdevice-syntax-only"), V12;
    /// `--minimal`: no implicit CUDA headers.
    minimal: bool, flag bool, Spelling::Switch("--minimal"), V12;
    /// `--no-cache`: NVRTC's own cache of compiles (12.9+), not ours.
    no_cache: bool, flag bool, Spelling::Switch("--no-cache"), (12, 9);
    /// `--fdevice-time-trace=FILE`. Writes a file: never cached.
    fdevice_time_trace: Option<String>, text String,
        Spelling::Value("--fdevice-time-trace"), V12;
    /// `--frandom-seed=`.
    frandom_seed: Option<String>, text String, Spelling::Value("--frandom-seed"), V12;
    /// `--Ofast-compile=` (`0`, `min`, `mid`, `max`).
    ofast_compile: Option<String>, text String, Spelling::Value("--Ofast-compile"), V12;
    /// `--pch`: automatic precompiled headers (12.8).
    pch: bool, flag bool, Spelling::Switch("--pch"), (12, 8);
    /// `--create-pch=FILE` (12.8). Writes a file: never cached.
    create_pch: Option<String>, text String, Spelling::Value("--create-pch"), (12, 8);
    /// `--use-pch=FILE` (12.8). The file is read: its bytes join the key.
    use_pch: Option<String>, text String, Spelling::Value("--use-pch"), (12, 8);
    /// `--pch-dir=DIR` (12.8). Never cached: what it holds changes.
    pch_dir: Option<String>, text String, Spelling::Value("--pch-dir"), (12, 8);
    /// `--pch-verbose=true|false` (12.8).
    pch_verbose: Option<bool>, some bool, Spelling::TrueFalse("--pch-verbose"), (12, 8);
    /// `--pch-messages=true|false` (12.8).
    pch_messages: Option<bool>, some bool, Spelling::TrueFalse("--pch-messages"), (12, 8);
    /// `--instantiate-templates-in-pch=true|false` (12.8).
    instantiate_templates_in_pch: Option<bool>, some bool,
        Spelling::TrueFalse("--instantiate-templates-in-pch"), (12, 8);
    /// `--jump-table-density=N` (0 to 101).
    jump_table_density: Option<u32>, some u32, Spelling::Value("--jump-table-density"), V12;
    /// `--device-stack-protector=true|false`.
    device_stack_protector: Option<bool>, some bool,
        Spelling::TrueFalse("--device-stack-protector"), V12;
    /// `--fno-signed-zeros` (NVRTC 13).
    fno_signed_zeros: bool, flag bool, Spelling::Switch("--fno-signed-zeros"), V13;
    /// `--ffinite-math-only` (NVRTC 13).
    ffinite_math_only: bool, flag bool, Spelling::Switch("--ffinite-math-only"), V13;
    /// `--Wreorder` (NVRTC 13).
    wreorder: bool, flag bool, Spelling::Switch("--Wreorder"), V13;
    /// `--Wconversion` (NVRTC 13).
    wconversion: bool, flag bool, Spelling::Switch("--Wconversion"), V13;
    /// `--warning-as-error=` each: `all-warnings`, `reorder`,
    /// `deprecated-declarations`, `conversion` (NVRTC 13).
    warning_as_error: Vec<String>, list String, Spelling::Each("--warning-as-error"), V13;
    /// `--fmax-errors=N` (NVRTC 13).
    fmax_errors: Option<u32>, some u32, Spelling::Value("--fmax-errors"), V13;
    /// `--utf-8`: the source is UTF-8 (NVRTC 13).
    utf8: bool, flag bool, Spelling::Switch("--utf-8"), V13;
    /// `--tile-preview=` (`SIMT`; NVRTC 13.3).
    tile_preview: Option<String>, text String, Spelling::Value("--tile-preview"), (13, 3);
    /// `--enable-tile` (NVRTC 13.3).
    enable_tile: bool, flag bool, Spelling::Switch("--enable-tile"), (13, 3);
    /// `--tile-only` (NVRTC 13.3).
    tile_only: bool, flag bool, Spelling::Switch("--tile-only"), (13, 3);
    /// `--simt-only` (NVRTC 13.3).
    simt_only: bool, flag bool, Spelling::Switch("--simt-only"), (13, 3);
    /// `--default-tile` (NVRTC 13.3).
    default_tile: bool, flag bool, Spelling::Switch("--default-tile"), (13, 3);
    /// `--diagnose-implicit-tile-var` (NVRTC 13.3).
    diagnose_implicit_tile_var: bool, flag bool,
        Spelling::Switch("--diagnose-implicit-tile-var"), (13, 3);
    /// Our small device-side `stdint.h`, `cstdint`, `climits`,
    /// `limits.h`, `math.h`, `cmath`, `stdio.h` and `cstdio`, given to
    /// NVRTC in memory (it has none of them). On by default; off, the
    /// include paths decide.
    no_builtin_headers: bool, flag bool, Spelling::Ours, V12;
    /// NVRTC options passed as they are written (`"--dopt=on"`), after the
    /// others: `cc::Build::flag`'s escape, for what has no field here. An
    /// option the loaded NVRTC does not know is
    /// [`CompileError::UnknownOption`] before anything is compiled, and the
    /// compile cache's key holds each one.
    extra_options: Vec<String>, list String, Spelling::Raw, V12;
    /// With NVRTC 13.3 or newer, the CUDA headers and CCCL that NVRTC
    /// bundles are installed once into the cache directory and put on the
    /// include path. On by default; set to skip them.
    no_bundled_headers: bool, flag bool, Spelling::Ours, V12;
}

impl ProgramOptions {
    /// Options for one architecture, everything else default.
    pub fn for_arch(arch: Arch) -> Self {
        ProgramOptions {
            arch: Some(arch),
            ..Self::default()
        }
    }

    /// The NVRTC options these render, as cuda.core's
    /// `ProgramOptions.as_bytes` shows them: without the arch and the
    /// output's own options (`-arch=compute_90`, `--dlink-time-opt`) and
    /// NVIDIA's include folders, which the compiler adds.
    ///
    /// ```
    /// use cuda_compile::ProgramOptions;
    /// use cuda_link::Arch;
    ///
    /// let options = ProgramOptions::for_arch(Arch::sm(90))
    ///     .define_macro(["BLOCK=256"])
    ///     .extra_options(["-default-device"]);
    /// assert_eq!(
    ///     options.nvrtc_args((12, 9))?,
    ///     ["--define-macro=BLOCK=256", "-default-device"]
    /// );
    /// # Ok::<(), cuda_compile::CompileError>(())
    /// ```
    ///
    /// # Errors
    /// [`CompileError::Unsupported`] for an option newer than NVRTC
    /// `version`.
    pub fn nvrtc_args(&self, version: (u32, u32)) -> Result<Vec<String>, CompileError> {
        let mut args = Vec::new();
        for (name, spelling, since, values) in self.settings() {
            let Some(values) = values else { continue };
            if version < since {
                return Err(CompileError::Unsupported {
                    option: name,
                    since,
                    nvrtc: version,
                });
            }
            match spelling {
                Spelling::Switch(flag) => args.push(flag.to_owned()),
                Spelling::TrueFalse(flag) | Spelling::Value(flag) | Spelling::Each(flag) => {
                    args.extend(values.iter().map(|value| format!("{flag}={value}")));
                }
                Spelling::Raw => args.extend(values),
                Spelling::Ours => {}
            }
        }
        Ok(args)
    }

    /// The options that write files or read a directory whose contents
    /// change: a compile with one is never cached.
    pub(crate) fn uncacheable(&self) -> Option<&'static str> {
        [
            ("time", self.time.is_some()),
            ("fdevice_time_trace", self.fdevice_time_trace.is_some()),
            ("create_pch", self.create_pch.is_some()),
            ("pch", self.pch),
            ("pch_dir", self.pch_dir.is_some()),
        ]
        .into_iter()
        .find_map(|(name, set)| set.then_some(name))
    }

    /// The name of every option, in the order of the fields.
    pub fn names() -> Vec<&'static str> {
        ProgramOptions::default()
            .settings()
            .into_iter()
            .map(|(name, ..)| name)
            .collect()
    }

    /// The names of the options set to other than their defaults.
    pub fn names_set(&self) -> Vec<&'static str> {
        self.settings()
            .into_iter()
            .filter(|(.., values)| values.is_some())
            .map(|(name, ..)| name)
            .collect()
    }
}
