//! nvcc's spellings of options, as NVRTC takes them: the one table that
//! the CLI's nvcc-style flags and cuda-build's `Build::flag` both use.
//!
//! NVRTC takes most device options under nvcc's own names (`-lineinfo`,
//! `--use_fast_math`, `-Xptxas`), and those pass through as they are. The
//! rest of what kernel authors pass nvcc is in `TABLE`: an option NVRTC
//! lacks but whose effect it has another way, or one that only concerns
//! nvcc's host side and changes nothing in device code. Each entry was
//! checked against NVRTC 12.9, 13.0 and 13.5, which refuse all of them by
//! name ("unrecognized option").

/// An option that [`ProgramOptions::nvcc_options`](crate::ProgramOptions::nvcc_options) left out, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DroppedOption {
    /// The option as given, with its value where it takes one
    /// (`-Xcompiler -fPIC`).
    pub option: String,
    /// Why it changes nothing in NVRTC's output.
    pub why: &'static str,
}

/// What an nvcc option is to NVRTC.
#[derive(Clone, Copy)]
pub(crate) enum Meaning {
    /// NVRTC's `--device-as-default-execution-space`: nvcc's relaxed
    /// constexpr lets device code call host constexpr functions; NVRTC
    /// refuses any function without `__device__`, constexpr or not, and
    /// this makes them device functions, so the code nvcc accepts compiles.
    DefaultDevice,
    /// Nothing in device code, for this reason.
    Nothing(&'static str),
}

/// How an option takes its value.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Value {
    None,
    /// `OPT=V` or `OPT V`.
    Next,
    /// `-O3`, `-O=3` or `-O 3`: a digit.
    Digit,
}

pub(crate) struct Entry {
    pub(crate) spellings: &'static [&'static str],
    value: Value,
    pub(crate) meaning: Meaning,
    /// nvcc's host side alone: no device tool (NVRTC, nvJitLink, ptxas)
    /// has an option of that name.
    host_side: bool,
}

const HOST_COMPILER: &str = "an option of the host compiler; NVRTC compiles device code only";

/// nvcc's options that NVRTC refuses, and what each means there.
const TABLE: &[Entry] = &[
    Entry {
        spellings: &["--expt-relaxed-constexpr", "-expt-relaxed-constexpr"],
        value: Value::None,
        host_side: false,
        meaning: Meaning::DefaultDevice,
    },
    Entry {
        spellings: &[
            "--expt-extended-lambda",
            "-expt-extended-lambda",
            "--extended-lambda",
            "-extended-lambda",
        ],
        value: Value::None,
        host_side: false,
        meaning: Meaning::Nothing(
            "NVRTC refuses `__device__` lambdas whatever the options, and plain lambdas in \
             device code need none",
        ),
    },
    Entry {
        spellings: &["-O", "--optimize"],
        value: Value::Digit,
        host_side: false,
        meaning: Meaning::Nothing(
            "nvcc's -O is the host compiler's level; device code is optimised either way",
        ),
    },
    Entry {
        spellings: &["-Xcompiler", "--compiler-options"],
        value: Value::Next,
        host_side: true,
        meaning: Meaning::Nothing(HOST_COMPILER),
    },
    Entry {
        spellings: &["-ccbin", "--compiler-bindir"],
        value: Value::Next,
        host_side: true,
        meaning: Meaning::Nothing(HOST_COMPILER),
    },
    Entry {
        spellings: &["--default-stream", "-default-stream"],
        value: Value::Next,
        host_side: true,
        meaning: Meaning::Nothing("the CUDA runtime's default stream, a host-code setting"),
    },
    Entry {
        spellings: &["--threads", "-threads"],
        value: Value::Next,
        host_side: true,
        meaning: Meaning::Nothing("nvcc's own parallel compiles"),
    },
    Entry {
        spellings: &["-c", "--compile"],
        value: Value::None,
        host_side: true,
        meaning: Meaning::Nothing("compile without linking, which is all NVRTC does"),
    },
    Entry {
        spellings: &["--keep", "-keep"],
        value: Value::None,
        host_side: true,
        meaning: Meaning::Nothing("nvcc's intermediate files"),
    },
    // Not claimed from a command line of its own (`cuda-link --verbose`
    // is the CLI's), only from nvcc's flags given as such.
    Entry {
        spellings: &["--verbose", "-v"],
        value: Value::None,
        host_side: false,
        meaning: Meaning::Nothing("nvcc's report of the commands it runs"),
    },
    Entry {
        spellings: &["--dryrun", "-dryrun"],
        value: Value::None,
        host_side: true,
        meaning: Meaning::Nothing("nvcc's report of the commands it would run"),
    },
    Entry {
        spellings: &["--keep-dir", "-keep-dir"],
        value: Value::Next,
        host_side: true,
        meaning: Meaning::Nothing("nvcc's intermediate files"),
    },
    Entry {
        spellings: &[
            "--forward-unknown-to-host-compiler",
            "-forward-unknown-to-host-compiler",
            "--forward-unknown-to-host-linker",
            "-forward-unknown-to-host-linker",
            "--use-local-env",
            "-use-local-env",
        ],
        value: Value::None,
        host_side: true,
        meaning: Meaning::Nothing(HOST_COMPILER),
    },
    Entry {
        spellings: &["-MD", "-MMD", "-M", "--generate-dependencies"],
        value: Value::None,
        // `cuda-link compile -MD` is the CLI's own.
        host_side: false,
        meaning: Meaning::Nothing("nvcc's dependency file; cuda-build watches what NVRTC reads"),
    },
    Entry {
        spellings: &[
            "-MF",
            "--dependency-output",
            "-MT",
            "--dependency-target-name",
        ],
        value: Value::Next,
        host_side: false,
        meaning: Meaning::Nothing("nvcc's dependency file; cuda-build watches what NVRTC reads"),
    },
    Entry {
        spellings: &["--resource-usage", "-res-usage"],
        value: Value::None,
        host_side: true,
        meaning: Meaning::Nothing("nvcc's report of each kernel's registers and memory"),
    },
    Entry {
        spellings: &[
            "-Wno-deprecated-gpu-targets",
            "--Wno-deprecated-gpu-targets",
        ],
        value: Value::None,
        host_side: true,
        meaning: Meaning::Nothing("a warning of nvcc's driver"),
    },
];

fn is_digit(text: &str) -> bool {
    text.len() == 1 && text.as_bytes()[0].is_ascii_digit()
}

/// NVRTC's and nvcc's options whose value may be the next word: that word
/// is the option's, whatever it looks like (`-Xptxas -O3` is ptxas's -O3).
pub(crate) const VALUE_IN_NEXT_WORD: &[&str] = &[
    "-Xptxas",
    "--ptxas-options",
    "-I",
    "--include-path",
    "-D",
    "--define-macro",
    "-U",
    "--undefine-macro",
    "-include",
    "--pre-include",
    "-maxrregcount",
    "--maxrregcount",
    "-std",
    "--std",
    "-arch",
    "--gpu-architecture",
];

/// The entry `option` is, and whether its value is the next option.
fn lookup(option: &str) -> Option<(&'static Entry, bool)> {
    TABLE.iter().find_map(|entry| {
        entry.spellings.iter().find_map(|&spelling| {
            let rest = option.strip_prefix(spelling)?;
            match (entry.value, rest) {
                (Value::None, "") => Some((entry, false)),
                (Value::Next | Value::Digit, "") => Some((entry, true)),
                (Value::Next, rest) if rest.starts_with('=') => Some((entry, false)),
                (Value::Digit, rest) => {
                    is_digit(rest.strip_prefix('=').unwrap_or(rest)).then_some((entry, false))
                }
                _ => None,
            }
        })
    })
}

/// The nvcc option `words` starts with, if it is one of nvcc's host side
/// alone (`-Xcompiler -fPIC`, `--default-stream per-thread`, `--threads 4`,
/// `--keep`, `-ccbin`, `-Wno-deprecated-gpu-targets`), which no device
/// tool takes and which changes nothing in device code: how many of
/// `words` it takes (its value may be the next), and why it is left out.
/// For command lines with options of their own besides nvcc's, such as
/// `cuda-link compile`'s; [`ProgramOptions::nvcc_options`](crate::ProgramOptions::nvcc_options) takes these too.
///
/// ```
/// let words = ["-Xcompiler", "-fPIC", "k.cu"];
/// let (taken, dropped) = cuda_compile::nvcc_host_option(&words).unwrap();
/// assert_eq!((taken, dropped.option.as_str()), (2, "-Xcompiler -fPIC"));
/// assert!(cuda_compile::nvcc_host_option(&["-O3"]).is_none()); // ptxas has -O too
/// ```
pub fn nvcc_host_option<S: AsRef<str>>(words: &[S]) -> Option<(usize, DroppedOption)> {
    let (entry, taken, option) = matched(words)?;
    match entry.meaning {
        Meaning::Nothing(why) if entry.host_side => Some((taken, DroppedOption { option, why })),
        _ => None,
    }
}

/// The table's option `words` starts with: its entry, how many of `words`
/// it takes (its value may be the next: for `-O`, only a digit), and its
/// text with that value.
pub(crate) fn matched<S: AsRef<str>>(words: &[S]) -> Option<(&'static Entry, usize, String)> {
    let first = words.first()?.as_ref();
    let (entry, value_follows) = lookup(first)?;
    let value = words
        .get(1)
        .map(AsRef::as_ref)
        .filter(|value| value_follows && (entry.value != Value::Digit || is_digit(value)));
    Some(match value {
        Some(value) => (entry, 2, format!("{first} {value}")),
        None => (entry, 1, first.to_owned()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::ProgramOptions;

    fn apply(options: &[&str]) -> (ProgramOptions, Vec<String>) {
        let mut program = ProgramOptions::default();
        let dropped = program.nvcc_options(options);
        (program, dropped.into_iter().map(|d| d.option).collect())
    }

    #[test]
    fn nvrtc_options_pass_through_in_order() {
        let (options, dropped) = apply(&["-lineinfo", "--use_fast_math", "-Xptxas=-v", "-Ofc=max"]);
        assert_eq!(
            options.extra_options,
            ["--use_fast_math", "-Xptxas=-v", "-Ofc=max"]
        );
        assert!(options.lineinfo);
        assert!(dropped.is_empty());
    }

    #[test]
    fn relaxed_constexpr_is_default_device() {
        for spelling in ["--expt-relaxed-constexpr", "-expt-relaxed-constexpr"] {
            let (options, dropped) = apply(&[spelling]);
            assert!(options.device_as_default_execution_space);
            assert!(options.extra_options.is_empty() && dropped.is_empty());
        }
    }

    #[test]
    fn host_options_are_dropped_with_their_values() {
        let (options, dropped) = apply(&[
            "-O3",
            "-O",
            "2",
            "--optimize=1",
            "-Xcompiler",
            "-fPIC",
            "--compiler-options=-Wall",
            "--default-stream",
            "per-thread",
            "-default-stream=legacy",
            "--threads",
            "4",
            "--keep",
            "-Wno-deprecated-gpu-targets",
            "--extended-lambda",
            "-DX=1",
        ]);
        assert_eq!(
            dropped,
            [
                "-O3",
                "-O 2",
                "--optimize=1",
                "-Xcompiler -fPIC",
                "--compiler-options=-Wall",
                "--default-stream per-thread",
                "-default-stream=legacy",
                "--threads 4",
                "--keep",
                "-Wno-deprecated-gpu-targets",
                "--extended-lambda",
            ]
        );
        assert_eq!(options.extra_options, ["--define-macro=X=1"]);
    }

    #[test]
    fn near_spellings_are_nvrtc_s() {
        // NVRTC's own: -Ofast-compile, and words that merely start alike.
        let (options, dropped) = apply(&["-Ofast-compile=max", "-O33", "--keeps", "-Xcompilerx"]);
        assert!(dropped.is_empty());
        assert_eq!(options.extra_options.len(), 4);
    }

    #[test]
    fn a_value_in_the_next_word_is_the_option_s() {
        let (options, dropped) = apply(&["-Xptxas", "-O3", "-I", "-O2", "-lineinfo"]);
        assert!(dropped.is_empty());
        assert_eq!(options.extra_options, ["-Xptxas", "-O3"]);
        assert_eq!(options.include_path, ["-O2"]);
    }

    #[test]
    fn host_side_options_alone_are_named() {
        assert_eq!(nvcc_host_option(&["--threads", "4"]).unwrap().0, 2);
        assert_eq!(
            nvcc_host_option(&["--default-stream=legacy", "x"])
                .unwrap()
                .0,
            1
        );
        assert_eq!(nvcc_host_option(&["--keep", "k.cu"]).unwrap().0, 1);
        assert_eq!(nvcc_host_option(&["-c", "k.cu"]).unwrap().0, 1);
        for driver in ["--dryrun", "--resource-usage"] {
            assert_eq!(
                nvcc_host_option(&[driver, "k.cu"]).unwrap().0,
                1,
                "{driver}"
            );
        }
        assert_eq!(nvcc_host_option(&["--keep-dir", "k", "k.cu"]).unwrap().0, 2);
        // A command line's own `--verbose` or `-MD` stays its own; as
        // nvcc's flags (cuda-build's `flag`), they are dropped with a note.
        for own in ["--verbose", "-MD", "-M"] {
            assert!(nvcc_host_option(&[own]).is_none(), "{own}");
        }
        let (_, dropped) = apply(&["--verbose", "-MD", "-MF", "k.d", "-lineinfo"]);
        assert_eq!(dropped, ["--verbose", "-MD", "-MF k.d"]);
        for device in [
            "-O3",
            "--expt-extended-lambda",
            "--expt-relaxed-constexpr",
            "-lineinfo",
        ] {
            assert!(nvcc_host_option(&[device]).is_none(), "{device}");
        }
        assert!(nvcc_host_option::<&str>(&[]).is_none());
    }

    #[test]
    fn a_bare_o_takes_only_a_digit() {
        let (options, dropped) = apply(&["-O", "-lineinfo"]);
        assert_eq!(dropped, ["-O"]);
        assert!(options.extra_options.is_empty() && options.lineinfo);
    }

    #[test]
    fn a_value_missing_at_the_end_is_still_dropped() {
        let (options, dropped) = apply(&["-Xcompiler"]);
        assert_eq!(dropped, ["-Xcompiler"]);
        assert!(options.extra_options.is_empty());
    }
}
