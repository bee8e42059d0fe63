//! [`Program`]: CUDA C++ source, its in-memory headers and its name
//! expressions; [`Compiled`]: what a compile gives back.

use std::path::Path;

use cuda_link::ObjectCode;

use crate::error::CompileError;

/// CUDA C++ source with a name (for NVRTC's messages, and the folder of
/// quoted includes when it is a path), headers given in memory, and the
/// name expressions to lower.
///
/// ```no_run
/// use cuda_compile::{Program, ProgramOptions, Target};
/// use cuda_link::Arch;
///
/// let source = r#"
///     #include "scale.h"
///     template <typename T>
///     __global__ void scale(T *x, int n) { int i = threadIdx.x; if (i < n) x[i] *= FACTOR; }
/// "#;
/// let compiled = Program::new(source, "scale.cu")
///     .header("scale.h", "#define FACTOR 2")
///     .name_expression("scale<float>")
///     .compile(Target::Cubin, &ProgramOptions::for_arch(Arch::sm(90)))?;
/// let lowered = compiled.code.lowered_name("scale<float>").unwrap();
/// assert!(lowered.starts_with("_Z5scaleIfEvPT_i"));
/// # Ok::<(), cuda_compile::CompileError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Program {
    pub(crate) source: String,
    pub(crate) name: String,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) name_expressions: Vec<String>,
}

impl Program {
    /// A program from source text; `name` names it in messages.
    pub fn new(source: impl Into<String>, name: impl Into<String>) -> Self {
        Program {
            source: source.into(),
            name: name.into(),
            headers: Vec::new(),
            name_expressions: Vec::new(),
        }
    }

    /// Reads a `.cu` file; its folder is searched for quoted includes, as
    /// nvcc does (unless `no_source_include`).
    pub fn from_path(path: impl AsRef<Path>) -> Result<Self, CompileError> {
        let path = path.as_ref();
        let source = std::fs::read_to_string(path).map_err(|e| CompileError::Io {
            path: path.display().to_string(),
            detail: e.to_string(),
        })?;
        Ok(Program::new(source, path.display().to_string()))
    }

    /// Adds a header given in memory, found by `#include "include_name"` or
    /// `<include_name>` before the include path (`nvrtcCreateProgram`'s
    /// headers).
    /// A second header of the same name replaces the first.
    pub fn header(mut self, include_name: impl Into<String>, contents: impl Into<String>) -> Self {
        let (name, contents) = (include_name.into(), contents.into());
        match self.headers.iter_mut().find(|(given, _)| *given == name) {
            Some(header) => header.1 = contents,
            None => self.headers.push((name, contents)),
        }
        self
    }

    /// Adds a name expression, `"saxpy<float>"` or `"&ns::var"`: NVRTC
    /// instantiates it and reports the name it lowered it to, which the
    /// output keeps ([`ObjectCode::lowered_name`]).
    pub fn name_expression(mut self, expression: impl Into<String>) -> Self {
        self.name_expressions.push(expression.into());
        self
    }

    /// The program's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The source text.
    pub fn source(&self) -> &str {
        &self.source
    }
}

/// A compiled program.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Compiled {
    /// The output: PTX, LTO-IR or a cubin, validated, with the program's
    /// name expressions and their lowered names.
    pub code: ObjectCode,
    /// NVRTC's log: its warnings, empty when it had none.
    pub log: String,
    /// What the caller should know before using the output.
    pub warnings: Vec<Warning>,
    /// Whether the output came from the compile cache.
    pub from_cache: bool,
    /// The program's own files it read, from the scan of its includes
    /// that made the cache key: for `rerun-if-changed` and depfiles.
    pub dependencies: crate::dependencies::Dependencies,
}

/// Something a compile that succeeded wants the caller to know.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Warning {
    /// A warning of NVRTC's log, one line.
    Nvrtc(String),
    /// A line of libNVVM's log.
    Nvvm(String),
    /// The PTX's ISA is newer than the installed driver can JIT-compile:
    /// loading it will fail with `CUDA_ERROR_UNSUPPORTED_PTX_VERSION`.
    /// Compile for an older arch, or ship a cubin.
    PtxNewerThanDriver {
        /// The PTX's `.version`, `"9.0"`.
        ptx_isa: String,
        /// The driver's CUDA version, `(12, 8)`.
        driver: (u32, u32),
        /// The newest PTX ISA that driver takes.
        driver_isa: String,
    },
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Warning::Nvrtc(line) | Warning::Nvvm(line) => f.write_str(line),
            Warning::PtxNewerThanDriver {
                ptx_isa,
                driver,
                driver_isa,
            } => write!(
                f,
                "PTX ISA {ptx_isa} is newer than the driver (CUDA {}.{}) can JIT-compile \
                 (up to {driver_isa}): loading it will fail; compile for an older arch or a cubin",
                driver.0, driver.1
            ),
        }
    }
}

/// The warnings of NVRTC's log about the program's own files, a line
/// each: `file(line): warning #N-D: ...`. Those located in a header
/// `is_theirs` names (NVIDIA's, CCCL's, ours in memory) are left out, as
/// compilers leave out system headers' warnings, and so is NVRTC's
/// closing remark.
pub(crate) fn log_warnings<'a>(
    log: &'a str,
    is_theirs: impl Fn(&str) -> bool + 'a,
) -> impl Iterator<Item = Warning> + 'a {
    log.lines()
        .filter(move |line| {
            let Some((location, _)) = line.split_once(": warning") else {
                return false;
            };
            let file = location.rsplit_once('(').map_or(location, |(file, _)| file);
            !is_theirs(file)
        })
        .map(|line| Warning::Nvrtc(line.trim().to_owned()))
}

/// The newest PTX ISA a driver of CUDA `version` (`(12, 8)`) JIT-compiles,
/// as `(major, minor)`: NVIDIA's table, PTX ISA 8.0 with CUDA 12.0 to 9.0
/// with 13.0; newer drivers take at least that.
pub(crate) fn newest_ptx_isa(version: (u32, u32)) -> (u32, u32) {
    match version {
        (12, minor @ 0..=5) => (8, minor),
        (12, 6) => (8, 5),
        (12, 7) => (8, 6),
        (12, 8) => (8, 7),
        (12, _) => (8, 8),
        (13, minor) => (9, minor),
        (major, _) if major > 13 => (u32::MAX, 0),
        _ => (7, 8),
    }
}
