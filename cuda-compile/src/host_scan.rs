//! The verdict before any compile: a host function that launches a kernel
//! (`<<<...>>>`) or calls the runtime's host API, a `main`, or a host
//! function with `extern "C"` linkage, outside the guards that hide code
//! from NVRTC. NVRTC's own errors cannot be the verdict: under
//! `-default-device` a launcher compiles as a device function (a
//! dynamic-parallelism launch) and is silently dropped.
//!
//! Macros count as what they expand to: a `#define` whose body defines a
//! launcher makes host code where it is expanded, and one whose body
//! launches or calls the runtime makes a host function that uses it host
//! code, as in the launcher tables of quantization kernels. A macro that
//! stands for `__global__` or `__device__` makes a device function.

use std::rc::Rc;

use crate::host_macros::{self, Expansion, Macros, uses};

/// What a `{` opened.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Block {
    /// A namespace, `extern "C"`, or a class body: what is inside is at
    /// the top level as far as functions go. `exported`: an `extern "C"`
    /// block, whose functions the host calls by name.
    Scope { exported: bool },
    /// A function body, from its signature's line, host or device.
    Function { line: usize, host: bool },
    /// Anything else: a nested block, an initializer.
    Other,
}

/// The first host function of `source` that launches a kernel, calls the
/// runtime's host API, is `main` or has `extern "C"` linkage: its
/// signature's first line (from 1) and the construct, named as the
/// verdict names it.
pub(crate) fn first_host_function(source: &str) -> Option<(usize, String)> {
    scan(source, None)
}

/// [`first_host_function`] of a file, or with `outer`, of a macro's body
/// (which holds no `#define`), `outer` being the macros defined before it.
fn scan(source: &str, outer: Option<&Macros>) -> Option<(usize, String)> {
    let text = crate::source::blanked(source);
    let raw: Vec<&str> = source.lines().collect();
    // How many lines before each name the `"C"` linkage (the one literal
    // the blanked text keeps): a range of lines asks in constant time.
    let mut c_lines = vec![0usize];
    for line in text.lines() {
        let last = c_lines.last().copied().unwrap_or_default();
        c_lines.push(last + usize::from(line.contains("\"C\"")));
    }
    let mut own = Macros::default();
    // The `#define` being read: its first line's index.
    let mut define: Option<usize> = None;
    let mut stack: Vec<Block> = Vec::new();
    // How many `extern "C" {` blocks of the stack are open.
    let mut exported_scopes = 0usize;
    // The host function being read: the stack's depth it opened at, its
    // signature's line, and whether it has `extern "C"` linkage.
    let mut host: Option<(usize, usize, bool)> = None;
    // The text since the last `;`, `{` or `}` outside a function, and the
    // line where it starts.
    let mut pending = String::new();
    let mut pending_line = 0usize;
    let mut pending_blank = true;
    // Whether the last directive line goes on (`\` at its end).
    let mut continued = false;
    for (index, (line, hidden)) in guarded_lines(&text).into_iter().enumerate() {
        if continued || line.trim_start().starts_with('#') {
            let first_line = !continued;
            if first_line && outer.is_none() && !hidden {
                define = Some(index);
                if let Some(name) = host_macros::undefined_name(line) {
                    own.undefine(name);
                }
            }
            continued = line.trim_end().ends_with('\\');
            if !continued
                && let Some(first) = define.take()
                && let Some(parsed) = host_macros::parse_define(&raw, first, index)
            {
                let expansion = expansion(&parsed.body, first + 1, &own);
                own.define(&parsed, expansion);
            }
            // `#if` and the like may stand inside a signature.
            if !(first_line && host_macros::is_conditional(line)) {
                pending.clear();
                pending_blank = true;
            }
            continue;
        }
        if hidden {
            continue;
        }
        let macros = outer.unwrap_or(&own);
        // Expanded anywhere, it defines the function there.
        let defined =
            uses(line).find_map(|(word, called)| match macros.expansion(word, called)? {
                Expansion::HostFunction(at, what) => Some((word, *at, what)),
                Expansion::HostConstruct(_) => None,
            });
        if let Some((name, at, what)) = defined {
            // A macro's body says what the innermost macro makes; the
            // file, the macro it expands.
            let what = match outer {
                Some(_) => what.to_string(),
                None => format!("{what}, from macro `{name}` (line {at})"),
            };
            return Some((index + 1, what));
        }
        // A launch or a host runtime call in a host function's text.
        let construct = |segment: &str| {
            host_construct(segment).or_else(|| {
                uses(segment).find_map(|(word, called)| match macros.expansion(word, called)? {
                    Expansion::HostConstruct(what) => Some(format!("{what} (from macro `{word}`)")),
                    Expansion::HostFunction(..) => None,
                })
            })
        };
        // This line's text inside a host function: checked as it ends.
        let mut segment = String::new();
        for c in line.chars() {
            if host.is_some() {
                segment.push(c);
            }
            let in_body = matches!(stack.last(), Some(Block::Function { .. } | Block::Other));
            match c {
                '{' => {
                    // Whether the lines of the signature name `"C"`.
                    let c_linkage = || {
                        let from = pending_line.saturating_sub(1).min(index);
                        c_lines
                            .get(index + 1)
                            .zip(c_lines.get(from))
                            .is_some_and(|(to, from)| to > from)
                    };
                    let block = match in_body {
                        true => Block::Other,
                        false => classify(&pending, pending_line, macros, c_linkage),
                    };
                    if let Block::Function { line, host: true } = block {
                        if is_main(&pending) {
                            return Some((line, "a `main` function".to_owned()));
                        }
                        if host.is_none() {
                            let linkage = exported_scopes > 0 || is_extern(&pending) && c_linkage();
                            let exported = linkage && exportable(&pending, macros);
                            host = Some((stack.len(), line, exported));
                        }
                    }
                    if block == (Block::Scope { exported: true }) {
                        exported_scopes += 1;
                    }
                    stack.push(block);
                    pending.clear();
                    pending_blank = true;
                }
                '}' => {
                    if stack.pop() == Some(Block::Scope { exported: true }) {
                        exported_scopes -= 1;
                    }
                    if let Some((depth, at, exported)) = host
                        && stack.len() <= depth
                    {
                        if let Some(what) = construct(&segment) {
                            return Some((at, describe(&raw, at, &what)));
                        }
                        // Defined for the host to call by name (over FFI),
                        // whatever it does: NVRTC would drop it, or under
                        // `-default-device` compile it for the device.
                        if exported {
                            let what = "`extern \"C\"` linkage, for the host to call";
                            return Some((at, describe(&raw, at, what)));
                        }
                        host = None;
                        segment.clear();
                    }
                    pending.clear();
                    pending_blank = true;
                }
                ';' if !in_body => {
                    pending.clear();
                    pending_blank = true;
                }
                c if !in_body => {
                    if pending_blank && !c.is_whitespace() {
                        pending_line = index + 1;
                        pending_blank = false;
                    }
                    pending.push(c);
                }
                _ => {}
            }
        }
        pending.push(' ');
        if let Some((_, at, _)) = host
            && let Some(what) = construct(&segment)
        {
            return Some((at, describe(&raw, at, &what)));
        }
    }
    None
}

/// What a `#define`'s `body` (from line `line`) expands to, when it is
/// host code, `known` being the macros before it.
fn expansion(body: &str, line: usize, known: &Macros) -> Option<Expansion> {
    if let Some((_, what)) = scan(body, Some(known)) {
        return Some(Expansion::HostFunction(line, what.into()));
    }
    let text = crate::source::blanked(body);
    if let Some(what) = host_construct(&text) {
        return Some(Expansion::HostConstruct(what.into()));
    }
    // Through the macros it expands in turn: shared, not copied, so that
    // a chain of macros stays linear.
    uses(&text).find_map(|(word, called)| match known.expansion(word, called)? {
        Expansion::HostFunction(_, what) => Some(Expansion::HostFunction(line, Rc::clone(what))),
        Expansion::HostConstruct(what) => Some(Expansion::HostConstruct(Rc::clone(what))),
    })
}

/// Whether a host function of `extern "C"` linkage is one the host calls
/// by name: not `static`, `inline` or `constexpr` (internal, or a helper
/// that a kernel may call under `--expt-relaxed-constexpr`), and with no
/// macro before its name, which may stand for anything.
fn exportable(signature: &str, macros: &Macros) -> bool {
    let signature = without_template_heads(signature);
    let before_paren = signature.split('(').next().unwrap_or_default();
    !uses(before_paren).any(|(word, _)| {
        matches!(
            word,
            "static" | "inline" | "constexpr" | "__forceinline__" | "__inline__"
        ) || macros.is_macro(word)
    })
}

/// What a `{` after `signature` (from line `line`) opens; `c_linkage`
/// says whether it names `extern "C"`.
fn classify(signature: &str, line: usize, macros: &Macros, c_linkage: impl Fn() -> bool) -> Block {
    let signature = without_template_heads(signature);
    let before_paren = signature.split('(').next().unwrap_or_default();
    let words: Vec<&str> = before_paren
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    let is_type = ["struct", "class", "union"]
        .iter()
        .any(|kw| words.contains(kw));
    let namespace =
        words.first() == Some(&"namespace") || words.starts_with(&["inline", "namespace"]);
    // `extern "C" {`, or `extern "C++" {` (blanked to `"   "`).
    let linkage_block = words == ["extern"] || words == ["extern", "C"];
    if namespace || is_type || linkage_block {
        return Block::Scope {
            exported: linkage_block && c_linkage(),
        };
    }
    // A statement, as a macro's body holds at its top level.
    let statement = ["if", "else", "for", "while", "switch", "do", "return"];
    if words.first().is_some_and(|word| statement.contains(word)) {
        return Block::Other;
    }
    // An initializer (`int x = f(...)`, `auto k = [](...)`) has its `=`
    // before the first parenthesis; a default argument after it.
    let assigns = before_paren.contains('=') && !words.contains(&"operator");
    if signature.contains('(') && !assigns {
        let device = uses(signature).any(|(word, _)| macros.is_device(word));
        return Block::Function {
            line,
            host: !device,
        };
    }
    Block::Other
}

/// `signature` without its leading `template <...>` heads (whose default
/// arguments hold `=`).
fn without_template_heads(signature: &str) -> &str {
    let mut rest = signature.trim_start();
    while let Some(after) = rest.strip_prefix("template") {
        let after = after.trim_start();
        if !after.starts_with('<') {
            break;
        }
        let mut depth = 0usize;
        let mut end = None;
        for (at, c) in after.char_indices() {
            match c {
                '<' => depth += 1,
                '>' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        end = Some(at + 1);
                        break;
                    }
                }
                _ => {}
            }
        }
        match end {
            Some(end) => rest = after[end..].trim_start(),
            None => break,
        }
    }
    rest
}

/// Whether a function's signature declares `extern` linkage.
fn is_extern(signature: &str) -> bool {
    without_template_heads(signature).split_whitespace().next() == Some("extern")
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
/// The signature is cut at 200 characters.
fn describe(raw: &[&str], line: usize, what: &str) -> String {
    let code = raw.get(line - 1).map_or("", |l| l.trim());
    let code = code.split('{').next().unwrap_or(code).trim_end();
    let code = match code.char_indices().nth(200) {
        Some((cut, _)) => format!("{}...", &code[..cut]),
        None => code.to_owned(),
    };
    format!("a host function (`{code}`) with {what}")
}

/// Host-only calls of the CUDA runtime.
pub(crate) const RUNTIME_CALLS: &[&str] = &[
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
    "cudaPeekAtLastError",
    "cudaLaunchKernel",
    "cudaLaunchKernelEx",
    "cudaLaunchCooperativeKernel",
    "cudaMemcpyToSymbol",
    "cudaMemcpyToSymbolAsync",
    "cudaMemcpyFromSymbol",
    "cudaMemcpy2D",
    "cudaMemcpy2DAsync",
    "cudaMemsetAsync",
    "cudaMallocAsync",
    "cudaFreeAsync",
    "cudaStreamSynchronize",
    "cudaFuncSetAttribute",
    "cudaEventRecord",
    "cudaEventSynchronize",
    "cuLaunchKernel",
    "cuLaunchKernelEx",
];

/// Each line of `text` (comments and strings blanked) with whether a
/// guard hides it from NVRTC (`#ifndef __CUDACC_RTC__`, `#if 0`, `#ifndef
/// __CUDA_ARCH__`, or the `#else` of their positive tests). A directive
/// line itself is not hidden unless an enclosing guard hides it.
pub(crate) fn guarded_lines(text: &str) -> Vec<(&str, bool)> {
    // Per open conditional: whether it hides its lines from NVRTC, and
    // whether it is an `__CUDACC_RTC__` test (whose `#else` flips it).
    let mut stack: Vec<(bool, bool)> = Vec::new();
    // How many open conditionals hide their lines: kept, not recounted.
    let mut hiding = 0usize;
    let mut lines = Vec::new();
    for line in text.lines() {
        lines.push((line, hiding > 0));
        let Some(directive) = line.trim_start().strip_prefix('#') else {
            continue;
        };
        let words: String = directive.split_whitespace().collect::<Vec<_>>().join(" ");
        let guard = words.contains("__CUDACC_RTC__") || words.contains("__CUDA_ARCH__");
        let negated = words.starts_with("ifndef") || words.replace(' ', "").contains("!defined");
        if words == "if 0" {
            stack.push((true, true));
            hiding += 1;
        } else if words.starts_with("if") {
            stack.push((guard && negated, guard));
            hiding += usize::from(guard && negated);
        } else if words.starts_with("else") || words.starts_with("elif") {
            if let Some(top) = stack.last_mut()
                && top.1
            {
                top.0 = !top.0;
                match top.0 {
                    true => hiding += 1,
                    false => hiding -= 1,
                }
            }
        } else if words.starts_with("endif")
            && let Some((hides, _)) = stack.pop()
        {
            hiding -= usize::from(hides);
        }
    }
    lines
}

/// Whether `word` stands alone in `line` (not inside an identifier).
pub(crate) fn has_word(line: &str, word: &str) -> bool {
    let ident = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
    line.match_indices(word).any(|(at, _)| {
        !ident(line[..at].chars().next_back()) && !ident(line[at + word.len()..].chars().next())
    })
}

#[cfg(test)]
mod tests {
    use super::first_host_function;
    use proptest::prelude::*;

    proptest! {
        /// Any text, real-looking or not, gives an answer without a panic,
        /// and an answer's line is one of the text's.
        #[test]
        fn any_text_gets_a_verdict(
            text in "([{}();#<>a-z_ \n\"/*]|__global__|void |<<<|extern \"C\"|#define m|\\\\\n){0,300}"
        ) {
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

    /// Launchers as real files write them: a default stream argument, a
    /// template default, after a multi-line macro, in an inline
    /// namespace, after a character literal that holds a quote or brace.
    #[test]
    fn launchers_with_defaults_and_after_macros_are_found() {
        for (source, line) in [
            (
                "void launch(float *x, cudaStream_t s = 0) {\n  k<<<1, 1, 0, s>>>(x);\n}\n",
                1,
            ),
            (
                "template <int B = 256>\nvoid launch(float *x) {\n  k<B><<<1, B>>>(x);\n}\n",
                1,
            ),
            (
                "#define LOOP(i, n) \\\n  for (int i = 0; i < n; \\\n       i += 1)\n\
                 void launch(float *x) {\n  k<<<1, 1>>>(x);\n}\n",
                4,
            ),
            (
                "inline namespace v1 {\nvoid launch() { k<<<1, 1>>>(); }\n}\n",
                2,
            ),
            (
                "__device__ bool q(const char *s) { return s[0] == '\"' || s[0] == '{'; }\n\
                 void launch() { k<<<1, 1>>>(); }\n",
                2,
            ),
        ] {
            assert_eq!(
                first_host_function(source).map(|f| f.0),
                Some(line),
                "{source}"
            );
        }
        // `1'000'000` is a number, not a character literal.
        let source = "__device__ int n() { return 1'000'000; }\nvoid run() { k<<<1, 1>>>(); }\n";
        assert_eq!(first_host_function(source).map(|f| f.0), Some(2));
    }

    /// Inputs that were quadratic (a scan of the block stack per
    /// character, of the whole body per line): they now finish at once.
    #[test]
    fn hostile_nesting_and_long_bodies_are_linear() {
        let braces = "{".repeat(200_000);
        assert_eq!(first_host_function(&braces), None);
        let body: String = "  x += 1;\n".repeat(100_000);
        let source = format!("void run() {{\n{body}  k<<<1, 1>>>();\n}}\n");
        assert_eq!(first_host_function(&source).map(|f| f.0), Some(1));
        let spaces = " ".repeat(200_000);
        assert_eq!(first_host_function(&spaces), None);
        let conditionals = "#if X\n".repeat(100_000);
        assert_eq!(first_host_function(&conditionals), None);
    }

    /// Launchers as quantization kernels write them: a table of
    /// `extern "C"` functions made by a macro, or a launch macro used in a
    /// host function. The verdict names where the macro is expanded.
    #[test]
    fn launchers_made_or_used_through_macros_are_found() {
        let table = "#define DEFINE_LAUNCHER(bits, T, name)                 \\\n\
                     \x20 extern \"C\" void quantize_##bits##_##name(T *w, int n) { \\\n\
                     \x20   cudaMemset(w, 0, n * sizeof(T));                 \\\n\
                     \x20   k<T><<<1, 1>>>(w, n);                            \\\n\
                     \x20 }\n\
                     template <typename T> __global__ void k(T *w, int n) {}\n\
                     DEFINE_LAUNCHER(2, float, f32)\n\
                     DEFINE_LAUNCHER(4, float, f32)\n";
        let (line, what) = first_host_function(table).unwrap();
        assert_eq!(line, 7, "{what}");
        assert!(
            what.contains("quantize_##bits") && what.contains("`DEFINE_LAUNCHER` (line 1)"),
            "{what}"
        );
        let used = "#define LAUNCH(kernel, n) kernel<<<(n + 255) / 256, 256>>>(n)\n\
                    __global__ void k(int n) {}\n\
                    void run(int n) {\n  LAUNCH(k, n);\n}\n";
        let (line, what) = first_host_function(used).unwrap();
        assert_eq!(line, 3, "{what}");
        assert!(
            what.contains("run(int n)") && what.contains("`LAUNCH`"),
            "{what}"
        );
        let one_line = "#define CHECK(x) cudaMemcpy(x, x, 4, cudaMemcpyDefault)\n\
                        void copy(float *p) { CHECK(p); }\n";
        assert_eq!(first_host_function(one_line).map(|f| f.0), Some(2));
        // Macros through macros: a dispatch `switch` of launch macros, and
        // a table of tables.
        let dispatch = "#define LAUNCH(B) k<B><<<grid, B>>>(x)\n\
                        #define DISPATCH(n) \\\n  switch (n) { \\\n  case 1: LAUNCH(32); break; \\\n  \
                        default: LAUNCH(64); }\n\
                        extern \"C\" void launch_gemv(float *x, int n) {\n  dim3 grid(1);\n  \
                        DISPATCH(n);\n}\n";
        let (line, what) = first_host_function(dispatch).unwrap();
        assert_eq!(line, 6, "{what}");
        assert!(
            what.contains("launch_gemv") && what.contains("`DISPATCH`"),
            "{what}"
        );
        let tables = "#define ONE(n) void run_##n() { k<<<1, n>>>(); }\n\
                      #define ALL ONE(1) ONE(2)\n\
                      __global__ void k() {}\nALL\n";
        let (line, what) = first_host_function(tables).unwrap();
        assert_eq!(line, 4, "{what}");
        assert!(what.contains("`ALL` (line 2)"), "{what}");
    }

    /// Host functions with `extern` linkage are host code whatever they
    /// do: stubs for old GPUs (`assert(false)`, an `fprintf`) that Rust
    /// calls by name, which NVRTC would drop. Kernels and device functions
    /// with `extern "C"` are not.
    #[test]
    fn extern_host_functions_are_host_code() {
        for (source, line) in [
            (
                "#include <cassert>\nextern \"C\" void launch_fp8(float *x, int n) {\n  assert(false);\n}\n",
                2,
            ),
            (
                "extern \"C\" {\n__global__ void k() {}\nvoid stub() { fprintf(stderr, \"sm_80\"); }\n}\n",
                3,
            ),
            (
                "template <typename T> __global__ void k(T *x) {}\nextern \"C\" int version() { return 3; }\n",
                2,
            ),
        ] {
            let (at, what) = first_host_function(source).unwrap_or_else(|| panic!("{source}"));
            assert_eq!(at, line, "{what}");
            assert!(what.contains("`extern \"C\"` linkage"), "{what}");
        }
        for source in [
            "extern \"C\" __global__ void k(float *x) { x[0] = 1; }\n",
            "extern \"C\" {\n__global__ void k() {}\n__device__ int f() { return 1; }\n}\n",
            "extern \"C\" __host__ __device__ int both() { return 1; }\n",
            "static int helper() { return 2; }\nextern \"C\" __global__ void k() {}\n",
            // Annotations behind macros.
            "#define DEVICE_INLINE __device__ __forceinline__\nextern \"C\" {\n\
             DEVICE_INLINE float sq(float x) { return x * x; }\n__global__ void k() {}\n}\n",
            "#define KERNEL __global__\nextern \"C\" KERNEL void k(float *x) { x[0] = 1; }\n",
            "#define HD __host__ __device__\nextern \"C\" HD inline int f() { return 1; }\n",
            // Helpers of an `extern "C"` block that the host cannot call
            // by name, and a C++ block.
            "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\
             static inline int ceil_div(int a, int b) { return (a + b - 1) / b; }\n\
             __global__ void k(int *x) { x[0] = ceil_div(x[1], 2); }\n\
             #ifdef __cplusplus\n}\n#endif\n",
            "extern \"C\" {\nconstexpr int half(int a) { return a / 2; }\n__global__ void k() {}\n}\n",
            "extern \"C++\" {\ninline int h() { return 1; }\nint g() { return 2; }\n}\n",
            // A signature around a conditional, inside `extern "C"`.
            "extern \"C\" {\n__global__ void\n#if __CUDA_ARCH__ >= 800\n__launch_bounds__(256, 2)\n\
             #endif\nk(float *x) { x[0] = 1; }\n}\n",
        ] {
            assert_eq!(first_host_function(source), None, "{source}");
        }
    }

    /// Macros that make device code, launch from device code, are never
    /// expanded, or are hidden from NVRTC make no host code.
    #[test]
    fn device_macros_and_unused_or_guarded_launchers_are_not_host_code() {
        for source in [
            "#define KERNEL(T) __global__ void k_##T(T *x) { x[0] = 1; }\nKERNEL(float)\n",
            "#define SPAWN(k) k<<<1, 1>>>()\n__global__ void c() {}\n\
             __global__ void p() { SPAWN(c); }\n",
            "#define LAUNCHER(n) void run_##n() { k<<<1, n>>>(); }\n__global__ void k() {}\n",
            "#ifndef __CUDACC_RTC__\n#define LAUNCHER void run() { k<<<1, 1>>>(); }\n#endif\n\
             __global__ void k() {}\n",
            "#define LAUNCHER void run() { k<<<1, 1>>>(); }\n#ifndef __CUDACC_RTC__\n\
             LAUNCHER\n#endif\n",
        ] {
            assert_eq!(first_host_function(source), None, "{source}");
        }
    }

    /// Host API calls beyond the common ones, and a `//` comment that a
    /// `\` carries onto the next line.
    #[test]
    fn more_runtime_calls_and_spliced_comments() {
        for call in [
            "cudaLaunchKernelEx(&config, k, x)",
            "cudaMemcpyToSymbol(table, x, 16)",
            "cudaStreamSynchronize(s)",
            "cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, 0, args, 0)",
        ] {
            let source = format!("void run(float *x) {{\n  {call};\n}}\n");
            assert_eq!(first_host_function(&source).map(|f| f.0), Some(1), "{call}");
        }
        let spliced = "// note \\\nvoid run() { k<<<1, 1>>>(); }\n__global__ void k() {}\n";
        assert_eq!(first_host_function(spliced), None);
    }

    /// A macro is what its last `#define` says, until `#undef`; a
    /// function-like macro's name alone is no expansion; a kernel behind
    /// a macro that launches is device code.
    #[test]
    fn redefined_undefined_and_unexpanded_macros() {
        for source in [
            "#define OP(n) void n##_run() { k<<<1, 1>>>(); }\n#undef OP\n\
             #define OP(n) __global__ void n(float *x) {}\nOP(foo)\n",
            "#define OP(n) void n##_run() { k<<<1, 1>>>(); }\n\
             #define OP(n) __global__ void n(float *x) {}\nOP(foo)\n",
            "#define run(n) void run_##n() { k<<<1, n>>>(); }\n__device__ int run;\n",
            "#define KERNEL __global__\nKERNEL void parent() { child<<<1, 1>>>(); }\n",
        ] {
            assert_eq!(first_host_function(source), None, "{source}");
        }
    }

    /// Directives inside a directive's lines are not read as macros
    /// within macros, and a file of many macros and uses stays linear.
    #[test]
    fn macro_bodies_nest_no_deeper_and_stay_linear() {
        let nested = "#define A \\\n".repeat(100_000);
        assert_eq!(first_host_function(&nested), None);
        let mut many = String::new();
        for i in 0..20_000 {
            many.push_str(&format!("#define L{i}(x) x<<<1, 1>>>()\n"));
        }
        for i in 0..20_000 {
            many.push_str(&format!("__global__ void k{i}() {{ L{i}(k{i}); }}\n"));
        }
        assert_eq!(first_host_function(&many), None);
        many.push_str("void run() { L0(k0); }\n");
        assert_eq!(first_host_function(&many).map(|f| f.0), Some(40_001));
        // A chain of 20,000 macros, each the one before, over a launcher
        // with a 100 kB signature: what each makes is shared, not copied
        // (20,000 copies would be 2 GB).
        let long = "x".repeat(100_000);
        let mut chain = format!("#define M0 void run(int {long}) {{ k<<<1, 1>>>(); }}\n");
        for i in 1..20_000 {
            chain.push_str(&format!("#define M{i} M{}\n", i - 1));
        }
        chain.push_str("M19999\n");
        let (line, what) = first_host_function(&chain).unwrap();
        assert_eq!(line, 20_001);
        assert!(
            what.len() < 400 && what.contains("`M19999` (line 20000)"),
            "{what}"
        );
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
