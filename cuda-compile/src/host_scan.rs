//! The verdict before any compile: a host function that launches a kernel
//! (`<<<...>>>`) or calls the runtime's host API, or a `main`, outside the
//! guards that hide code from NVRTC. NVRTC's own errors cannot be the
//! verdict: under `-default-device` a launcher compiles as a device
//! function (a dynamic-parallelism launch) and is silently dropped.

use crate::host_code::{RUNTIME_CALLS, guarded_lines, has_word, without_comments_and_strings};

/// What a `{` opened.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Block {
    /// A namespace, `extern "C"`, or a class body: what is inside is at
    /// the top level as far as functions go.
    Scope,
    /// A function body, from its signature's line, host or device.
    Function { line: usize, host: bool },
    /// Anything else: a nested block, an initializer.
    Other,
}

/// The first host function of `source` that launches a kernel, calls the
/// runtime's host API or is `main`: its signature's first line (from 1)
/// and the construct, named as the verdict names it.
pub(crate) fn first_host_function(source: &str) -> Option<(usize, String)> {
    let text = without_comments_and_strings(source);
    let raw: Vec<&str> = source.lines().collect();
    let mut stack: Vec<Block> = Vec::new();
    // The text since the last `;`, `{` or `}` outside a function, and the
    // line where it starts.
    let mut pending = String::new();
    let mut pending_line = 0;
    // The body of the host function being read, and its line.
    let mut body = String::new();
    let host_at = |stack: &[Block]| {
        stack.iter().find_map(|block| match block {
            Block::Function { line, host: true } => Some(*line),
            _ => None,
        })
    };
    for (index, (line, hidden)) in guarded_lines(&text).into_iter().enumerate() {
        if hidden || line.trim_start().starts_with('#') {
            continue;
        }
        for c in line.chars() {
            if host_at(&stack).is_some() {
                body.push(c);
            }
            match c {
                '{' => {
                    let block = match stack.last() {
                        Some(Block::Function { .. } | Block::Other) => Block::Other,
                        _ => classify(&pending, pending_line),
                    };
                    if let Block::Function { line, host: true } = block
                        && is_main(&pending)
                    {
                        return Some((line, "a `main` function".to_owned()));
                    }
                    stack.push(block);
                    pending.clear();
                }
                '}' => {
                    if let Some(at) = host_at(&stack) {
                        if let Some(what) = host_construct(&body) {
                            return Some((at, describe(&raw, at, &what)));
                        }
                        stack.pop();
                        if host_at(&stack).is_none() {
                            body.clear();
                        }
                    } else {
                        stack.pop();
                    }
                    pending.clear();
                }
                ';' if !matches!(stack.last(), Some(Block::Function { .. } | Block::Other)) => {
                    pending.clear();
                }
                c => {
                    if pending.trim().is_empty() && !c.is_whitespace() {
                        pending_line = index + 1;
                    }
                    pending.push(c);
                }
            }
        }
        pending.push(' ');
        body.push('\n');
        if let Some(at) = host_at(&stack)
            && let Some(what) = host_construct(&body)
        {
            return Some((at, describe(&raw, at, &what)));
        }
    }
    None
}

/// What a `{` after `signature` opens.
fn classify(signature: &str, line: usize) -> Block {
    let words: Vec<&str> = signature
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    let before_paren = signature.split('(').next().unwrap_or_default();
    let is_type = ["struct", "class", "union"]
        .iter()
        .any(|kw| has_word(before_paren, kw));
    if words.first() == Some(&"namespace") || is_type {
        return Block::Scope;
    }
    // `extern "C" {` (the string is blanked to `""`).
    if words == ["extern"] {
        return Block::Scope;
    }
    if signature.contains('(') && !signature.contains('=') {
        let device = words
            .iter()
            .any(|w| *w == "__global__" || *w == "__device__");
        return Block::Function {
            line,
            host: !device,
        };
    }
    Block::Other
}

fn is_main(signature: &str) -> bool {
    let before_paren = signature.split('(').next().unwrap_or_default();
    before_paren.split_whitespace().last() == Some("main")
}

/// A launch or a host runtime call in a line of a host function's body.
fn host_construct(line: &str) -> Option<String> {
    if line.contains("<<<") {
        return Some("a `<<<...>>>` kernel launch".to_owned());
    }
    RUNTIME_CALLS
        .iter()
        .find(|call| has_word(line, call))
        .map(|call| format!("`{call}`"))
}

/// "a host function (`extern "C" void launch(...)`), with a `<<<...>>>`
/// kernel launch": the signature as written, on its first line.
fn describe(raw: &[&str], line: usize, what: &str) -> String {
    let code = raw.get(line - 1).map_or("", |l| l.trim());
    let code = code.split('{').next().unwrap_or(code).trim_end();
    format!("a host function (`{code}`) with {what}")
}

#[cfg(test)]
mod tests {
    use super::first_host_function;
    use proptest::prelude::*;

    proptest! {
        /// Any text, real-looking or not, gives an answer without a panic,
        /// and an answer's line is one of the text's.
        #[test]
        fn any_text_gets_a_verdict(text in "([{}();#<>a-z_ \n\"/*]|__global__|void |<<<|extern \"C\"){0,300}") {
            if let Some((line, _)) = first_host_function(&text) {
                prop_assert!(line >= 1 && line <= text.lines().count().max(1));
            }
        }
    }

    #[test]
    fn a_launcher_is_named_at_its_definition() {
        let source = "#include <cuda_runtime.h>\n\
                      template <typename T> __global__ void scale(T *x, T a) { x[0] *= a; }\n\
                      \n\
                      extern \"C\" int launch_scale(float *x, float a,\n\
                      \x20                           cudaStream_t s) {\n\
                      \x20 int n = 1;\n\
                      \x20 scale<float><<<1, 1, 0, s>>>(x, a);\n\
                      \x20 return (int)cudaGetLastError();\n\
                      }\n";
        let (line, what) = first_host_function(source).unwrap();
        assert_eq!(line, 4);
        assert!(
            what.contains("launch_scale") && what.contains("<<<"),
            "{what}"
        );
    }

    #[test]
    fn device_code_and_guarded_launchers_are_not_host_code() {
        for source in [
            "__global__ void child() {}\n__global__ void parent() { child<<<1, 1>>>(); }\n",
            "__device__ void f() { cudaMalloc(0, 0); }\n",
            "__host__ __device__ inline int g() { return 1; }\nint h() { return 2; }\n",
            "__global__ void k() {}\n#ifndef __CUDACC_RTC__\nvoid run() { k<<<1, 1>>>(); }\n#endif\n",
            "// void run() { k<<<1, 1>>>(); }\nconst char *s = \"<<<\";\n",
            "struct S { int a[2] = {1, 2}; };\nint table[] = {1, 2};\n",
        ] {
            assert_eq!(first_host_function(source), None, "{source}");
        }
    }

    #[test]
    fn launchers_inside_scopes_and_mains_are_found() {
        let source = "namespace ops {\nextern \"C\" {\n__global__ void k() {}\n\
                      void run() {\n  if (1) { k<<<1, 1>>>(); }\n}\n}\n}\n";
        assert_eq!(first_host_function(source).map(|f| f.0), Some(4));
        let source = "struct Op {\n  void launch() { k<<<1, 1>>>(); }\n};\n";
        assert_eq!(first_host_function(source).map(|f| f.0), Some(2));
        let source = "__global__ void k() {}\nint main() {\n  return 0;\n}\n";
        let (line, what) = first_host_function(source).unwrap();
        assert_eq!((line, what.as_str()), (2, "a `main` function"));
        let source = "void run(float *p) {\n  cudaMemset(p, 0, 4);\n}\n";
        assert_eq!(first_host_function(source).map(|f| f.0), Some(1));
    }
}
