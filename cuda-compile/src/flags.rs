//! [`Flags`]: a list of nvcc or NVRTC options read once, into what each
//! means. The include scan, the cache keys, both of cuda-build's stages
//! and the CLI read this value, never the words again, so that no
//! spelling of an include folder or a file reaches a compiler unseen.

use std::path::PathBuf;

use crate::error::FlagError;
use crate::nvcc::{self, Meaning};
use crate::options::ProgramOptions;

/// Whose command line the words are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Dialect {
    /// nvcc's: a list value is split at its commas (`-I a,b` is two
    /// folders, as nvcc reads it), and the host side's options
    /// (`-Xcompiler`, `--threads`, ...) are known.
    Nvcc,
    /// NVRTC's: a value is taken whole.
    Nvrtc,
}

/// What kind of folder an include option names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum IncludeKind {
    /// `-I`, `--include-path`.
    User,
    /// `-isystem`, `--system-include`.
    System,
    /// The host compiler's `-iquote`: searched for `"name"` only.
    Quote,
    /// The host compiler's `-idirafter`: searched last.
    After,
}

/// A folder an option puts on the include search path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct IncludeDir {
    /// The folder as written.
    pub path: PathBuf,
    /// Its kind.
    pub kind: IncludeKind,
    /// Given to the host compiler (`-Xcompiler -I/x`): nvcc's
    /// preprocessor searches it, NVRTC never sees it.
    pub host_compiler: bool,
}

/// A macro option, in the order given.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MacroFlag {
    /// `-D NAME` or `-D NAME=VALUE`.
    Define(String),
    /// `-U NAME`.
    Undefine(String),
}

/// An NVRTC option that writes a file or reads one: its cache entry
/// depends on it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FileFlag {
    /// `--time=FILE`: writes it.
    Time(String),
    /// `--fdevice-time-trace=FILE`: writes it.
    DeviceTimeTrace(String),
    /// `--create-pch=FILE`: writes it.
    CreatePch(String),
    /// `--use-pch=FILE`: reads it.
    UsePch(String),
    /// `--pch-dir=DIR`: reads and writes what it holds.
    PchDir(String),
    /// `--pch` / `-pch`: precompiled headers in NVRTC's own folder.
    Pch,
}

/// A list of nvcc or NVRTC options, read once: the folders and files it
/// makes a compile read, its macros, whether it asks for relocatable
/// code, LTO or debug information, what it means nothing to a device
/// compile, and the rest in order.
///
/// ```
/// use cuda_compile::{Dialect, Flags};
///
/// let flags = Flags::parse(["-I", "inc,third_party", "-dc", "-lineinfo", "-O3"], Dialect::Nvcc)?;
/// let folders: Vec<_> = flags.include_dirs.iter().map(|d| d.path.display().to_string()).collect();
/// assert_eq!(folders, ["inc", "third_party"]);
/// assert_eq!(flags.relocatable, Some(true));
/// assert!(flags.line_info);
/// assert_eq!(flags.dropped[0].option, "-O3");
/// # Ok::<(), cuda_compile::FlagError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Flags {
    /// Include folders, in order.
    pub include_dirs: Vec<IncludeDir>,
    /// Headers included before the source (`-include`, `--pre-include`).
    pub pre_includes: Vec<String>,
    /// `-D` and `-U`, in order.
    pub macros: Vec<MacroFlag>,
    /// Relocatable device code: `Some(true)` for `-rdc=true`, `-dc`,
    /// `--relocatable-device-code=true`; `Some(false)` for `-rdc=false`,
    /// `-dw`; the last one given wins.
    pub relocatable: Option<bool>,
    /// Link-time optimisation: `-dlto`, `--dlink-time-opt`, or an
    /// `lto_XX` code.
    pub link_time_optimization: bool,
    /// The architecture options as given (`-arch=sm_90`, `-gencode=...`,
    /// `-code=...`), each with its value.
    pub archs: Vec<String>,
    /// `-G`, `--device-debug`: the output names the files it was compiled
    /// from.
    pub device_debug: bool,
    /// `-lineinfo`, `--generate-line-info`: likewise.
    pub line_info: bool,
    /// nvcc's `-g`, `--debug`, or the host compiler's `-g`: the host
    /// object names its files.
    pub host_debug: bool,
    /// Functions without an execution space are device functions:
    /// NVRTC's `-default-device`, and nvcc's `--expt-relaxed-constexpr`
    /// (the way NVRTC compiles what that lets nvcc compile).
    pub default_device: bool,
    /// NVRTC options that write or read files.
    pub files: Vec<FileFlag>,
    /// Options that change nothing in device code (nvcc's host side,
    /// `-O3`), each with why.
    pub dropped: Vec<nvcc::DroppedOption>,
    /// Every other option, in order, each with its value.
    pub rest: Vec<String>,
}

/// `(spellings, what it is)` of the options that take a value, joined
/// (`-Idir`, `-I=dir`, `--include-path=dir`) or as the next word.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Valued {
    Include(IncludeKind),
    PreInclude,
    Define,
    Undefine,
    Relocatable,
    Arch,
    Time,
    DeviceTimeTrace,
    CreatePch,
    UsePch,
    PchDir,
    OptionsFile,
    HostCompiler,
}

/// Long spellings take `=VALUE` or the next word; short ones (those
/// whose value may be joined, `-Idir`) also take the value joined.
const VALUED: &[(&str, bool, Valued)] = &[
    ("--include-path", false, Valued::Include(IncludeKind::User)),
    ("-I", true, Valued::Include(IncludeKind::User)),
    (
        "--system-include",
        false,
        Valued::Include(IncludeKind::System),
    ),
    ("-isystem", true, Valued::Include(IncludeKind::System)),
    ("--pre-include", false, Valued::PreInclude),
    ("-include", false, Valued::PreInclude),
    ("--define-macro", false, Valued::Define),
    ("-D", true, Valued::Define),
    ("--undefine-macro", false, Valued::Undefine),
    ("-U", true, Valued::Undefine),
    ("--relocatable-device-code", false, Valued::Relocatable),
    ("-rdc", false, Valued::Relocatable),
    ("--gpu-architecture", false, Valued::Arch),
    ("-arch", false, Valued::Arch),
    ("--generate-code", false, Valued::Arch),
    ("-gencode", false, Valued::Arch),
    ("--gpu-code", false, Valued::Arch),
    ("-code", false, Valued::Arch),
    ("--time", false, Valued::Time),
    ("-time", false, Valued::Time),
    ("--fdevice-time-trace", false, Valued::DeviceTimeTrace),
    ("-fdevice-time-trace", false, Valued::DeviceTimeTrace),
    ("--create-pch", false, Valued::CreatePch),
    ("-create-pch", false, Valued::CreatePch),
    ("--use-pch", false, Valued::UsePch),
    ("-use-pch", false, Valued::UsePch),
    ("--pch-dir", false, Valued::PchDir),
    ("-pch-dir", false, Valued::PchDir),
    ("--options-file", false, Valued::OptionsFile),
    ("-optf", false, Valued::OptionsFile),
    ("--compiler-options", false, Valued::HostCompiler),
    ("-Xcompiler", false, Valued::HostCompiler),
];

/// The valued option `word` starts, and its value when joined.
fn valued(word: &str) -> Option<(&'static str, Valued, Option<&str>)> {
    VALUED.iter().find_map(|&(spelling, joins, what)| {
        let rest = word.strip_prefix(spelling)?;
        let value = match rest.strip_prefix('=') {
            Some(value) => Some(value),
            None if rest.is_empty() => None,
            None if joins => Some(rest),
            None => return None,
        };
        Some((spelling, what, value))
    })
}

impl Flags {
    /// Reads `words` as `dialect`'s options.
    ///
    /// # Errors
    /// [`FlagError`] for an option whose value is missing, or a folder or
    /// file name the scan could be told apart from the compiler's (empty,
    /// or with spaces at its ends); with nvcc's dialect, `--options-file`,
    /// whose options the cache key could not see.
    pub fn parse<S: AsRef<str>>(
        words: impl IntoIterator<Item = S>,
        dialect: Dialect,
    ) -> Result<Flags, FlagError> {
        let words: Vec<String> = words.into_iter().map(|w| w.as_ref().to_owned()).collect();
        let mut flags = Flags::default();
        let mut at = 0;
        while let Some(word) = words.get(at) {
            if dialect == Dialect::Nvcc
                && let Some((entry, taken, option)) = nvcc::matched(&words[at..])
            {
                match entry.meaning {
                    Meaning::DefaultDevice => flags.default_device = true,
                    Meaning::Nothing(why) => {
                        flags.dropped.push(nvcc::DroppedOption { option, why })
                    }
                }
                // The host compiler's options are read for what they make
                // nvcc's preprocessor read.
                if entry.spellings.contains(&"-Xcompiler") {
                    flags.host_compiler_words(&words[at..at + taken]);
                }
                at += taken;
                continue;
            }
            if let Some((spelling, what, joined)) = valued(word) {
                let (value, taken) = match joined {
                    Some(value) => (value.to_owned(), 1),
                    None => match words.get(at + 1) {
                        Some(next) => (next.clone(), 2),
                        None => {
                            return Err(FlagError {
                                option: word.clone(),
                                why: "its value is missing".to_owned(),
                            });
                        }
                    },
                };
                let given = words[at..at + taken].join(" ");
                flags.valued(spelling, what, &value, &given, dialect)?;
                at += taken;
                continue;
            }
            flags.switch(word, &words, &mut at);
        }
        Ok(flags)
    }

    /// One valued option: `given` is the words it took.
    fn valued(
        &mut self,
        spelling: &str,
        what: Valued,
        value: &str,
        given: &str,
        dialect: Dialect,
    ) -> Result<(), FlagError> {
        let refuse = |why: &str| FlagError {
            option: given.to_owned(),
            why: why.to_owned(),
        };
        let names_a_path = matches!(
            what,
            Valued::Include(_)
                | Valued::PreInclude
                | Valued::Time
                | Valued::DeviceTimeTrace
                | Valued::CreatePch
                | Valued::UsePch
                | Valued::PchDir
        );
        let values: Vec<&str> = match (dialect, what) {
            (
                Dialect::Nvcc,
                Valued::Include(_) | Valued::PreInclude | Valued::Define | Valued::Undefine,
            ) => value.split(',').collect(),
            _ => vec![value],
        };
        for value in values {
            if names_a_path && (value.is_empty() || value.trim() != value) {
                return Err(refuse(
                    "an empty name, or one with spaces at its ends, which compilers read \
                     differently; name the folder or file plainly",
                ));
            }
            match what {
                Valued::Include(kind) => self.include_dirs.push(IncludeDir {
                    path: PathBuf::from(value),
                    kind,
                    host_compiler: false,
                }),
                Valued::PreInclude => self.pre_includes.push(value.to_owned()),
                Valued::Define => self.macros.push(MacroFlag::Define(value.to_owned())),
                Valued::Undefine => self.macros.push(MacroFlag::Undefine(value.to_owned())),
                Valued::Relocatable => match value {
                    "true" => self.relocatable = Some(true),
                    "false" => self.relocatable = Some(false),
                    _ => return Err(refuse("its value is `true` or `false`")),
                },
                Valued::Arch => {
                    self.link_time_optimization |= value.contains("lto_");
                    self.archs.push(format!("{spelling}={value}"));
                }
                Valued::Time => self.files.push(FileFlag::Time(value.to_owned())),
                Valued::DeviceTimeTrace => {
                    self.files.push(FileFlag::DeviceTimeTrace(value.to_owned()))
                }
                Valued::CreatePch => self.files.push(FileFlag::CreatePch(value.to_owned())),
                Valued::UsePch => self.files.push(FileFlag::UsePch(value.to_owned())),
                Valued::PchDir => self.files.push(FileFlag::PchDir(value.to_owned())),
                Valued::OptionsFile => {
                    return Err(refuse(
                        "its options would be read from a file the cache key cannot see; \
                         give them as options",
                    ));
                }
                // Only nvcc's table knows it; for NVRTC it is NVRTC's to
                // refuse.
                Valued::HostCompiler => self.rest.push(given.to_owned()),
            }
        }
        Ok(())
    }

    /// A word that is no valued option: a switch this reads, else one of
    /// the rest, with its value when that is the next word.
    fn switch(&mut self, word: &str, words: &[String], at: &mut usize) {
        match word {
            "-dc" | "--device-c" => self.relocatable = Some(true),
            "-dw" | "--device-w" => self.relocatable = Some(false),
            "-dlto" | "--dlink-time-opt" => self.link_time_optimization = true,
            "-G" | "--device-debug" => self.device_debug = true,
            "-lineinfo" | "--generate-line-info" => self.line_info = true,
            "-g" | "--debug" => self.host_debug = true,
            "-default-device" | "--device-as-default-execution-space" => self.default_device = true,
            "-pch" | "--pch" => self.files.push(FileFlag::Pch),
            _ => {
                let taken = match nvcc::VALUE_IN_NEXT_WORD.contains(&word) {
                    true => 2.min(words.len() - *at),
                    false => 1,
                };
                self.rest.extend(words[*at..*at + taken].iter().cloned());
                *at += taken;
                return;
            }
        }
        *at += 1;
    }

    /// The host compiler's options nvcc passes on (`-Xcompiler -I/x,-g`):
    /// the folders and headers its preprocessor is told of, and `-g`.
    fn host_compiler_words(&mut self, words: &[String]) {
        let value = match words {
            [option] => option.split_once('=').map_or("", |(_, value)| value),
            [_, value] => value.as_str(),
            _ => "",
        };
        let items: Vec<&str> = value.split(',').collect();
        let mut at = 0;
        while let Some(&item) = items.get(at) {
            let kinds = [
                ("-isystem", IncludeKind::System),
                ("-iquote", IncludeKind::Quote),
                ("-idirafter", IncludeKind::After),
                ("-I", IncludeKind::User),
            ];
            let found = kinds
                .iter()
                .find_map(|&(spelling, kind)| Some((item.strip_prefix(spelling)?, kind)));
            match found {
                Some((joined, kind)) => {
                    let dir = match joined {
                        "" => {
                            at += 1;
                            items.get(at).copied().unwrap_or_default()
                        }
                        joined => joined,
                    };
                    self.include_dirs.push(IncludeDir {
                        path: PathBuf::from(dir),
                        kind,
                        host_compiler: true,
                    });
                }
                None if item == "-include" => {
                    at += 1;
                    self.pre_includes
                        .extend(items.get(at).map(|name| (*name).to_owned()));
                }
                None if item == "-g" || item.starts_with("-g") && item.len() == 3 => {
                    self.host_debug = true
                }
                None => {}
            }
            at += 1;
        }
    }

    /// Whether the output names the files it was compiled from (line
    /// tables, debug information), so that it depends on where they are.
    pub fn names_its_files(&self) -> bool {
        self.device_debug || self.line_info || self.host_debug
    }
}

impl ProgramOptions {
    /// Adds options as nvcc spells them (`"--expt-relaxed-constexpr"`,
    /// `"-I"`, `"inc"`, `"-Xcompiler"`, `"-fPIC"`), for command lines and
    /// build scripts written for nvcc: read as [`Flags`] in nvcc's
    /// dialect, each into the field it means (`-I` into
    /// [`include_path`](Self::include_path), `-dc` into
    /// [`relocatable_device_code`](Self::relocatable_device_code), nvcc's
    /// `--expt-relaxed-constexpr` into
    /// [`device_as_default_execution_space`](Self::device_as_default_execution_space),
    /// the way NVRTC compiles what that flag lets nvcc compile), and the
    /// rest to [`extra_options`](Self::extra_options) as they are, so that
    /// one the loaded NVRTC does not know still fails the compile, naming
    /// it. Options that only concern nvcc's host side (`-O3`,
    /// `-Xcompiler X`, `--default-stream X`, `--threads N`, ...) and
    /// `--expt-extended-lambda` change nothing in device code: they are
    /// left out and returned, each with why, for the caller to say so.
    /// Words that cannot be read (`-I` with no folder) are kept as they
    /// are, for the compile to refuse by name.
    ///
    /// ```
    /// use cuda_compile::ProgramOptions;
    ///
    /// let mut options = ProgramOptions::default();
    /// let dropped = options.nvcc_options(["--expt-relaxed-constexpr", "-O3", "-Iinc", "--dopt=on"]);
    /// assert!(options.device_as_default_execution_space);
    /// assert_eq!(options.include_path, ["inc"]);
    /// assert_eq!(options.extra_options, ["--dopt=on"]);
    /// assert_eq!(dropped[0].option, "-O3");
    /// ```
    pub fn nvcc_options<S: AsRef<str>>(
        &mut self,
        options: impl IntoIterator<Item = S>,
    ) -> Vec<nvcc::DroppedOption> {
        let words: Vec<String> = options.into_iter().map(|w| w.as_ref().to_owned()).collect();
        match Flags::parse(&words, Dialect::Nvcc) {
            Ok(flags) => self.apply(flags),
            Err(_) => {
                self.extra_options.extend(words);
                Vec::new()
            }
        }
    }

    /// These options with their raw [`extra_options`](Self::extra_options)
    /// read as [`Flags`] and moved into the fields they mean: include
    /// folders (every spelling, `-isystem` too) into
    /// [`include_path`](Self::include_path), pre-includes, the options
    /// that read or write files, relocatable code, LTO, debug and line
    /// information. What a compile and its key are made of.
    ///
    /// # Errors
    /// [`FlagError`] for an option whose value is missing or names a
    /// folder or file the scan could misread.
    pub fn resolved(&self) -> Result<ProgramOptions, FlagError> {
        let flags = Flags::parse(&self.extra_options, Dialect::Nvrtc)?;
        let mut options = self.clone();
        options.extra_options = Vec::new();
        options.apply(flags);
        Ok(options)
    }

    /// [`resolved`](Self::resolved), borrowed when there is nothing to
    /// move: the in-memory hit path copies nothing.
    pub(crate) fn resolved_cow(&self) -> Result<std::borrow::Cow<'_, ProgramOptions>, FlagError> {
        match self.extra_options.is_empty() {
            true => Ok(std::borrow::Cow::Borrowed(self)),
            false => self.resolved().map(std::borrow::Cow::Owned),
        }
    }

    /// Moves `flags` into the fields; returns what it drops.
    pub(crate) fn apply(&mut self, flags: Flags) -> Vec<nvcc::DroppedOption> {
        let own_dirs = flags.include_dirs.iter().filter(|dir| !dir.host_compiler);
        self.include_path
            .extend(own_dirs.map(|dir| dir.path.display().to_string()));
        self.pre_include.extend(flags.pre_includes);
        for flag in flags.macros {
            self.extra_options.push(match flag {
                MacroFlag::Define(name) => format!("--define-macro={name}"),
                MacroFlag::Undefine(name) => format!("--undefine-macro={name}"),
            });
        }
        if let Some(relocatable) = flags.relocatable {
            self.relocatable_device_code = Some(relocatable);
        }
        self.link_time_optimization |= flags.link_time_optimization;
        self.debug |= flags.device_debug;
        self.lineinfo |= flags.line_info;
        self.device_as_default_execution_space |= flags.default_device;
        for file in flags.files {
            match file {
                FileFlag::Time(path) => self.time = Some(path),
                FileFlag::DeviceTimeTrace(path) => self.fdevice_time_trace = Some(path),
                FileFlag::CreatePch(path) => self.create_pch = Some(path),
                FileFlag::UsePch(path) => self.use_pch = Some(path),
                FileFlag::PchDir(path) => self.pch_dir = Some(path),
                FileFlag::Pch => self.pch = true,
            }
        }
        // NVRTC's own `-arch` stays where it was given.
        self.extra_options.extend(flags.archs);
        self.extra_options.extend(flags.rest);
        flags.dropped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dirs(flags: &Flags) -> Vec<(String, IncludeKind, bool)> {
        flags
            .include_dirs
            .iter()
            .map(|d| (d.path.display().to_string(), d.kind, d.host_compiler))
            .collect()
    }

    #[test]
    fn include_folders_in_every_spelling() {
        let words = [
            "-Ia",
            "-I=b",
            "-I",
            "c",
            "--include-path=d",
            "--include-path",
            "e",
            "-isystem",
            "f",
            "-isystemg",
            "--system-include=h",
        ];
        for dialect in [Dialect::Nvcc, Dialect::Nvrtc] {
            let flags = Flags::parse(words, dialect).unwrap();
            let found: Vec<String> = dirs(&flags).into_iter().map(|d| d.0).collect();
            assert_eq!(
                found,
                ["a", "b", "c", "d", "e", "f", "g", "h"],
                "{dialect:?}"
            );
            assert!(flags.rest.is_empty());
        }
        // nvcc splits at commas; NVRTC takes the folder whole.
        let nvcc = Flags::parse(["-Ia,b"], Dialect::Nvcc).unwrap();
        assert_eq!(nvcc.include_dirs.len(), 2);
        let nvrtc = Flags::parse(["-Ia,b"], Dialect::Nvrtc).unwrap();
        assert_eq!(dirs(&nvrtc)[0].0, "a,b");
        // The host compiler's folders, for nvcc's preprocessor alone.
        let host =
            Flags::parse(["-Xcompiler", "-I/x,-isystem,/y,-fPIC,-g"], Dialect::Nvcc).unwrap();
        assert_eq!(
            dirs(&host),
            [
                ("/x".to_owned(), IncludeKind::User, true),
                ("/y".to_owned(), IncludeKind::System, true)
            ]
        );
        assert!(host.host_debug && host.dropped.len() == 1);
    }

    #[test]
    fn what_cannot_be_read_is_refused() {
        for words in [
            &["-I"][..],
            &["--include-path="],
            &["-I", " a"],
            &["--pre-include"],
            &["-rdc=maybe"],
        ] {
            assert!(Flags::parse(words, Dialect::Nvrtc).is_err(), "{words:?}");
        }
        let error = Flags::parse(["-optf", "more.txt"], Dialect::Nvcc).unwrap_err();
        assert_eq!(error.option, "-optf more.txt");
    }

    #[test]
    fn relocatable_lto_and_debug_in_every_spelling() {
        for words in [
            &["-dc"][..],
            &["-rdc=true"],
            &["-rdc", "true"],
            &["--relocatable-device-code=true"],
        ] {
            let flags = Flags::parse(words, Dialect::Nvcc).unwrap();
            assert_eq!(flags.relocatable, Some(true), "{words:?}");
        }
        assert_eq!(
            Flags::parse(["-dc", "-rdc=false"], Dialect::Nvcc)
                .unwrap()
                .relocatable,
            Some(false)
        );
        let lto = Flags::parse(["-gencode", "arch=compute_90,code=lto_90"], Dialect::Nvcc).unwrap();
        assert!(lto.link_time_optimization);
        assert_eq!(lto.archs, ["-gencode=arch=compute_90,code=lto_90"]);
        let debug = Flags::parse(["-lineinfo"], Dialect::Nvrtc).unwrap();
        assert!(debug.names_its_files());
    }

    /// Raw options reach the fields the scan and the key read, and a
    /// second reading changes nothing.
    #[test]
    fn resolved_options_move_raw_ones_into_their_fields() {
        let options = ProgramOptions::default()
            .include_path(["first"])
            .extra_options([
                "--include-path=inc",
                "-DX=1",
                "-UX",
                "--use-pch=k.pch",
                "-lineinfo",
                "--dopt=on",
            ]);
        let resolved = options.resolved().unwrap();
        assert_eq!(resolved.include_path, ["first", "inc"]);
        assert_eq!(resolved.use_pch.as_deref(), Some("k.pch"));
        assert!(resolved.lineinfo);
        assert_eq!(
            resolved.extra_options,
            ["--define-macro=X=1", "--undefine-macro=X", "--dopt=on"]
        );
        assert_eq!(resolved.resolved().unwrap(), resolved);
    }
}
