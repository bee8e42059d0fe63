//! Host code NVRTC cannot compile: found in a file that failed, to say
//! which construct on which line, and how to guard it.

/// Host-only calls of the CUDA runtime.
const RUNTIME_CALLS: &[&str] = &[
    "cudaMallocManaged",
    "cudaMallocHost",
    "cudaMalloc",
    "cudaMemcpyAsync",
    "cudaMemcpy",
    "cudaMemset",
    "cudaFree",
    "cudaDeviceSynchronize",
    "cudaStreamCreate",
    "cudaSetDevice",
    "cudaGetLastError",
    "cudaLaunchKernel",
];

/// Headers only a host compiler has.
const HOST_HEADERS: &[&str] = &[
    "cuda_runtime.h",
    "cuda_runtime_api.h",
    "iostream",
    "vector",
    "string",
    "fstream",
    "thread",
    "cstdlib",
    "stdlib.h",
];

/// The first host construct of `source`, outside a `#ifndef
/// __CUDACC_RTC__` (or `#if 0`, `#ifndef __CUDA_ARCH__`) guard, on a line
/// NVRTC's `log` reports an error for: `(line from 1, what it is)`. Only
/// such a line is named, so that legitimate device code (a `<<<` launch
/// under dynamic parallelism, the device runtime's `cudaMalloc`) is never
/// blamed for another error.
pub(crate) fn find(source: &str, log: &str) -> Option<(usize, String)> {
    let errors = error_lines(log);
    let on_error_line = constructs(source)
        .into_iter()
        .find(|(line, _)| errors.iter().any(|(at, _)| at == line));
    // NVRTC names an unannotated function itself: "host functions are not
    // allowed in JIT mode", on the function's first line.
    on_error_line.or_else(|| {
        let (line, _) = errors
            .iter()
            .find(|(_, message)| message.contains("host functions are not allowed"))?;
        let text = source.lines().nth(line.checked_sub(1)?)?.trim();
        Some((*line, format!("a host function (`{text}`)")))
    })
}

/// The errors NVRTC's log reports on lines of the compiled file:
/// `name(LINE): error: message`, as `(LINE, message)`.
fn error_lines(log: &str) -> Vec<(usize, &str)> {
    log.lines()
        .filter_map(|line| {
            let (before, message) = line.split_once("): ")?;
            let (_, number) = before.rsplit_once('(')?;
            message
                .contains("error")
                .then_some((number.parse().ok()?, message))
        })
        .collect()
}

/// Every host construct outside a guard, in order.
fn constructs(source: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    // Includes are read from the text with its strings kept (a quoted
    // include is a string); the rest without comments and strings.
    let raw: Vec<&str> = source.lines().collect();
    let text = without_comments_and_strings(source);
    // Per open conditional: whether it hides its lines from NVRTC, and
    // whether it is an `__CUDACC_RTC__` test (whose `#else` flips it).
    let mut stack: Vec<(bool, bool)> = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let hidden = stack.iter().any(|&(hides, _)| hides);
        let trimmed = line.trim_start();
        if let Some(directive) = trimmed.strip_prefix('#') {
            let directive = directive.trim_start();
            let words: String = directive.split_whitespace().collect::<Vec<_>>().join(" ");
            let guard = words.contains("__CUDACC_RTC__") || words.contains("__CUDA_ARCH__");
            let negated =
                words.starts_with("ifndef") || words.replace(' ', "").contains("!defined");
            if words == "if 0" {
                stack.push((true, true));
            } else if words.starts_with("if") {
                stack.push((guard && negated, guard));
            } else if words.starts_with("else") || words.starts_with("elif") {
                if let Some(top) = stack.last_mut()
                    && top.1
                {
                    top.0 = !top.0;
                }
            } else if words.starts_with("endif") {
                stack.pop();
            } else if !hidden && words.starts_with("include") {
                let original = raw.get(index).copied().unwrap_or_default();
                let name = original
                    .split_once("include")
                    .map_or("", |(_, rest)| rest.trim().trim_matches(['<', '>', '"']));
                if HOST_HEADERS.contains(&name) {
                    found.push((index + 1, format!("`#include <{name}>`")));
                }
            }
            continue;
        }
        if hidden {
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

/// Whether `word` stands alone in `line` (not inside an identifier).
fn has_word(line: &str, word: &str) -> bool {
    let ident = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
    line.match_indices(word).any(|(at, _)| {
        !ident(line[..at].chars().next_back()) && !ident(line[at + word.len()..].chars().next())
    })
}

/// `source` with comments and string literals blanked, lines kept.
fn without_comments_and_strings(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    let mut chars = source.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '/' if chars.peek() == Some(&'/') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut last = ' ';
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                    }
                    if last == '*' && c == '/' {
                        break;
                    }
                    last = c;
                }
                out.push(' ');
            }
            '"' => {
                out.push('"');
                let mut escaped = false;
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                    if !escaped && c == '"' {
                        break;
                    }
                    escaped = !escaped && c == '\\';
                }
                out.push('"');
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    /// As if NVRTC had reported an error on every line.
    fn find(source: &str) -> Option<(usize, String)> {
        let log: String = (1..=source.lines().count())
            .map(|n| format!("x.cu({n}): error: something\n"))
            .collect();
        super::find(source, &log)
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

    #[test]
    fn only_lines_with_an_error_are_named() {
        let source = "__global__ void child() {}\n__global__ void parent() {\n  child<<<1, 1>>>();\n}\n\
                      __global__ void k() { undeclared(); }\n";
        let log = "x.cu(5): error: identifier \"undeclared\" is undefined\n1 error detected";
        assert_eq!(super::find(source, log), None);
        let log = "x.cu(3): error: something about the launch";
        assert_eq!(
            super::find(source, log),
            Some((3, "a `<<<...>>>` kernel launch".into()))
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
