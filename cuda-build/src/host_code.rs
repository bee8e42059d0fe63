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

/// The first host construct of `source` outside a `#ifndef
/// __CUDACC_RTC__` guard: `(line from 1, what it is)`.
pub(crate) fn find(source: &str) -> Option<(usize, String)> {
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
            let rtc = words.contains("__CUDACC_RTC__");
            let negated = words.starts_with("ifndef") || words.contains("!defined");
            if words.starts_with("if") {
                stack.push((rtc && negated, rtc));
            } else if words.starts_with("else") || words.starts_with("elif") {
                if let Some(top) = stack.last_mut()
                    && top.1
                {
                    top.0 = !top.0;
                }
            } else if words.starts_with("endif") {
                stack.pop();
            } else if !hidden && let Some(rest) = words.strip_prefix("include") {
                let name = rest.trim().trim_matches(['<', '>', '"']);
                if HOST_HEADERS.contains(&name) {
                    return Some((index + 1, format!("`#include <{name}>`")));
                }
            }
            continue;
        }
        if hidden {
            continue;
        }
        if line.contains("<<<") {
            return Some((index + 1, "a `<<<...>>>` kernel launch".to_owned()));
        }
        if let Some(call) = RUNTIME_CALLS.iter().find(|call| has_word(line, call)) {
            return Some((index + 1, format!("`{call}`")));
        }
        if has_word(line, "main") && line.contains("main(") && line.contains("int") {
            return Some((index + 1, "a `main` function".to_owned()));
        }
    }
    None
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
    use super::find;

    #[test]
    fn finds_host_code_and_its_line() {
        let source = "#include <stdint.h>\n__global__ void k(float *y) {}\n\
                      void run(float *y) {\n  k<<<1, 1>>>(y);\n}\n";
        assert_eq!(
            find(source),
            Some((4, "a `<<<...>>>` kernel launch".into()))
        );
        let source = "#include <cuda_runtime.h>\n__global__ void k() {}\n";
        assert_eq!(
            find(source),
            Some((1, "`#include <cuda_runtime.h>`".into()))
        );
        let source = "__global__ void k() {}\nint main() {\n  float *p;\n  cudaMalloc(&p, 4);\n}\n";
        assert_eq!(find(source), Some((2, "a `main` function".into())));
    }

    #[test]
    fn guarded_commented_and_quoted_host_code_is_not_reported() {
        let source = "__global__ void k() {}\n#ifndef __CUDACC_RTC__\n#include <cuda_runtime.h>\n\
                      void run() { k<<<1, 1>>>(); cudaDeviceSynchronize(); }\n#endif\n\
                      // k<<<1, 1>>>();\n/* cudaMalloc */\nconst char *s = \"<<<\";\n\
                      __device__ int my_cudaMalloc_count;\n";
        assert_eq!(find(source), None);
        let source =
            "#if !defined(__CUDACC_RTC__)\nint main() {}\n#else\n__global__ void k() {}\n#endif\n";
        assert_eq!(find(source), None);
        let source =
            "#ifdef __CUDACC_RTC__\n__global__ void k() {}\n#else\nint main() {}\n#endif\n";
        assert_eq!(find(source), None);
    }
}
