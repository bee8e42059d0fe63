//! Host code NVRTC cannot compile: found in a file that failed, to say
//! which construct on which line of which file ([`HostCode`]).

use std::path::{Path, PathBuf};

use crate::compiler::Compiler;
use crate::error::CompileError;
use crate::host_scan::{RUNTIME_CALLS, guarded_lines, has_word};
use crate::options::ProgramOptions;
use crate::program::Program;

/// Host code in a program that failed to compile: NVRTC compiles device
/// code only. Found by [`HostCode::find`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HostCode {
    /// The file it is in: the compiled file, or a header of the program's
    /// own that it includes.
    pub file: PathBuf,
    /// The line, from 1.
    pub line: usize,
    /// What it is: "a `<<<...>>>` kernel launch", "`#include <vector>`",
    /// "a host function (`void run()`)", ...
    pub construct: String,
}

impl std::fmt::Display for HostCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}: {} is host code, and NVRTC compiles device code only",
            self.file.display(),
            self.line,
            self.construct
        )
    }
}

impl HostCode {
    /// The host code that made `error` (a [`CompileError::Compilation`] of
    /// `program` under `options`) fail, if that is why it failed: the
    /// first construct NVRTC's log reports, in the program's file or in
    /// a header of its own, at its true file and line. `None` for any
    /// other failure.
    pub fn find(
        compiler: &Compiler,
        program: &Program,
        options: &ProgramOptions,
        error: &CompileError,
    ) -> Option<HostCode> {
        let CompileError::Compilation { log, .. } = error else {
            return None;
        };
        let mut files = vec![(PathBuf::from(program.name()), program.source().to_owned())];
        let headers = compiler
            .included_files(program, options)
            .unwrap_or_default();
        for header in headers.into_iter().skip(1) {
            if let Ok(text) = std::fs::read_to_string(&header) {
                files.push((header, text));
            }
        }
        let (file, line, construct) = find(&files, log)?;
        Some(HostCode {
            file: file.to_path_buf(),
            line,
            construct,
        })
    }
}

impl HostCode {
    /// [`scan`](Self::scan) of the program's own text alone, without its
    /// headers: what can be told without NVRTC, which finds them.
    pub fn in_source(program: &Program) -> Option<HostCode> {
        crate::host_scan::first_host_function(program.source()).map(|(line, construct)| HostCode {
            file: PathBuf::from(program.name()),
            line,
            construct,
        })
    }

    /// The verdict before any compile: the first host function of
    /// `program` (or of a header of its own: under its folder or an
    /// include path of `options`) that launches a kernel, calls the
    /// runtime's host API or is `main`, outside the guards that hide code
    /// from NVRTC. It names the function's definition, not a line inside
    /// it. Such a file needs nvcc whatever NVRTC says: under
    /// `-default-device` NVRTC compiles a launcher as device code and
    /// drops it.
    pub fn scan(
        compiler: &Compiler,
        program: &Program,
        options: &ProgramOptions,
    ) -> Option<HostCode> {
        let resolved = options.resolved_cow().ok()?;
        let options = &*resolved;
        let own = |path: &Path| {
            let name = Path::new(program.name());
            let dirs = name
                .parent()
                .into_iter()
                .map(Path::to_path_buf)
                .chain(options.include_path.iter().map(PathBuf::from))
                .filter(|dir| !dir.as_os_str().is_empty());
            dirs.into_iter().any(|dir| path.starts_with(&dir))
        };
        Self::in_source(program).or_else(|| {
            let headers = compiler
                .included_files(program, options)
                .unwrap_or_default();
            headers
                .into_iter()
                .skip(1)
                .filter(|h| own(h))
                .find_map(|header| {
                    let text = std::fs::read_to_string(&header).ok()?;
                    let (line, construct) = crate::host_scan::first_host_function(&text)?;
                    Some(HostCode {
                        file: header,
                        line,
                        construct,
                    })
                })
        })
    }
}

/// Headers only a host compiler has: NVRTC reports "cannot open source
/// file" on their `#include` line, the first failure of such a file.
const HOST_HEADERS: &[&str] = &[
    "cuda_runtime.h",
    "cuda_runtime_api.h",
    "cublas_v2.h",
    "cublas.h",
    "curand.h",
    "cufft.h",
    "cusparse.h",
    "cudnn.h",
    "nccl.h",
    "iostream",
    "sstream",
    "fstream",
    "iomanip",
    "vector",
    "string",
    "map",
    "set",
    "unordered_map",
    "unordered_set",
    "memory",
    "thread",
    "mutex",
    "chrono",
    "functional",
    "stdexcept",
    "exception",
    "cstring",
    "string.h",
];

/// The first host construct NVRTC's `log` reports an error on, in log
/// order, outside a `#ifndef __CUDACC_RTC__` (or `#if 0`, `#ifndef
/// __CUDA_ARCH__`) guard: `(file, line from 1, what it is)`. `files` are
/// the compiled file and the headers of the program's own it includes,
/// `(path, text)`; an error is matched against the file it names, so a
/// construct in a header is named at its true file and line. Only a line
/// NVRTC reports is named, so that legitimate device code (a `<<<` launch
/// under dynamic parallelism, the device runtime's `cudaMalloc`) is never
/// blamed for another error.
fn find<'f>(files: &'f [(PathBuf, String)], log: &str) -> Option<(&'f Path, usize, String)> {
    let errors = error_lines(log);
    let located = errors.iter().filter_map(|&(named, line, message)| {
        let (path, text) = files.iter().find(|(path, _)| same_file(path, named))?;
        Some((path.as_path(), text, line, message))
    });
    let mut unannotated = None;
    for (path, text, line, message) in located {
        if let Some((_, construct)) = constructs(text).into_iter().find(|(at, _)| *at == line) {
            return Some((path, line, construct));
        }
        // NVRTC names an unannotated function itself: "host functions are
        // not allowed in JIT mode", on the function's first line.
        if unannotated.is_none() && message.contains("host functions are not allowed") {
            let code = text.lines().nth(line.checked_sub(1)?)?.trim();
            unannotated = Some((path, line, format!("a host function (`{code}`)")));
        }
    }
    unannotated
}

/// Whether NVRTC's name of a file (as it was included) is `path`.
fn same_file(path: &Path, named: &str) -> bool {
    let named = Path::new(named);
    path == named
        || match (path.canonicalize(), named.canonicalize()) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        }
}

/// The errors NVRTC's log reports: `file(LINE): error: message` (or
/// `catastrophic error`), as `(file, LINE, message)`, in order.
fn error_lines(log: &str) -> Vec<(&str, usize, &str)> {
    log.lines()
        .filter_map(|line| {
            let (before, message) = line.split_once("): ")?;
            let (file, number) = before.rsplit_once('(')?;
            message
                .contains("error")
                .then_some((file, number.parse().ok()?, message))
        })
        .collect()
}

/// Every host construct outside a guard, in order.
fn constructs(source: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    // The includes by their line, as the one reader finds them; the rest
    // is read without comments and strings.
    let includes = crate::source::includes_lenient(source);
    let text = crate::source::blanked(source);
    let lines = guarded_lines(&text);
    for (index, (line, hidden)) in lines.iter().enumerate() {
        if *hidden {
            continue;
        }
        if let Some(directive) = line.trim_start().strip_prefix('#') {
            if !directive.trim_start().starts_with("include") {
                continue;
            }
            let included = includes.iter().filter(|include| include.line == index + 1);
            for include in included.filter(|i| HOST_HEADERS.contains(&i.name.as_str())) {
                found.push((index + 1, format!("`#include <{}>`", include.name)));
            }
            continue;
        }
        if line.contains("<<<") {
            found.push((index + 1, "a `<<<...>>>` kernel launch".to_owned()));
        } else if let Some(call) = RUNTIME_CALLS.iter().find(|call| has_word(line, call)) {
            found.push((index + 1, format!("`{call}`")));
        } else if has_word(line, "main") && line.contains("main(") && line.contains("int") {
            found.push((index + 1, "a `main` function".to_owned()));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    /// As if NVRTC had reported an error on every line of `x.cu`.
    fn find(source: &str) -> Option<(usize, String)> {
        let log: String = (1..=source.lines().count())
            .map(|n| format!("x.cu({n}): error: something\n"))
            .collect();
        let files = [(PathBuf::from("x.cu"), source.to_owned())];
        super::find(&files, &log).map(|(_, line, what)| (line, what))
    }

    #[test]
    fn finds_host_code_and_its_line() {
        let source = "#include <stdint.h>\n__global__ void k(float *y) {}\n\
                      void run(float *y) {\n  k<<<1, 1>>>(y);\n}\n";
        assert_eq!(
            find(source),
            Some((4, "a `<<<...>>>` kernel launch".into()))
        );
        for include in ["#include <cuda_runtime.h>", "#include \"cuda_runtime.h\""] {
            let source = format!("{include}\n__global__ void k() {{}}\n");
            assert_eq!(
                find(&source),
                Some((1, "`#include <cuda_runtime.h>`".into()))
            );
        }
        let source = "__global__ void k() {}\nint main() {\n  float *p;\n  cudaMalloc(&p, 4);\n}\n";
        assert_eq!(find(source), Some((2, "a `main` function".into())));
    }

    /// An error in a header is matched against the header's own lines,
    /// not the compiled file's, and the first in the log is named.
    #[test]
    fn a_construct_in_a_header_is_named_at_its_file_and_line() {
        let files = [
            (
                PathBuf::from("k.cu"),
                "#include \"launch.cuh\"\n__global__ void k() {}\nint x;\n".to_owned(),
            ),
            (
                PathBuf::from("inc/launch.cuh"),
                "#pragma once\n#include <vector>\nvoid run() { k<<<1, 1>>>(); }\n".to_owned(),
            ),
        ];
        let log = "inc/launch.cuh(2): catastrophic error: cannot open source file \"vector\"\n\
                   k.cu(3): error: something else\n";
        let (file, line, what) = super::find(&files, log).unwrap();
        assert_eq!((file, line), (Path::new("inc/launch.cuh"), 2));
        assert_eq!(what, "`#include <vector>`");
        // The same line number in the compiled file is not blamed.
        let log = "k.cu(2): error: something\n";
        assert_eq!(super::find(&files, log), None);
    }

    #[test]
    fn only_lines_with_an_error_are_named() {
        let source = "__global__ void child() {}\n__global__ void parent() {\n  child<<<1, 1>>>();\n}\n\
                      __global__ void k() { undeclared(); }\n";
        let files = [(PathBuf::from("x.cu"), source.to_owned())];
        let log = "x.cu(5): error: identifier \"undeclared\" is undefined\n1 error detected";
        assert_eq!(super::find(&files, log), None);
        let log = "x.cu(3): error: something about the launch";
        assert_eq!(
            super::find(&files, log),
            Some((Path::new("x.cu"), 3, "a `<<<...>>>` kernel launch".into()))
        );
    }

    #[test]
    fn guarded_commented_and_quoted_host_code_is_not_reported() {
        let source = "__global__ void k() {}\n#ifndef __CUDACC_RTC__\n#include <cuda_runtime.h>\n\
                      void run() { k<<<1, 1>>>(); cudaDeviceSynchronize(); }\n#endif\n\
                      // k<<<1, 1>>>();\n/* cudaMalloc */\nconst char *s = \"<<<\";\n\
                      __device__ int my_cudaMalloc_count;\n";
        assert_eq!(find(source), None);
        for source in [
            "#if !defined(__CUDACC_RTC__)\nint main() {}\n#else\n__global__ void k() {}\n#endif\n",
            "#ifdef __CUDACC_RTC__\n__global__ void k() {}\n#else\nint main() {}\n#endif\n",
            "#if 0\nint main() {}\n#endif\n#if ! defined(__CUDA_ARCH__)\nint main() {}\n#endif\n",
        ] {
            assert_eq!(find(source), None, "{source}");
        }
    }
}
