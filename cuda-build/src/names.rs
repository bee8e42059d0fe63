//! The generated Rust module: the fatbin's bytes and a constant per
//! kernel, named after its demangled name.

use std::collections::HashSet;
use std::fmt::Write;

/// Rust's keywords, strict and reserved, which no module may be named.
const KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern",
    "false", "fn", "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut",
    "pub", "ref", "return", "self", "static", "struct", "super", "trait", "true", "type", "unsafe",
    "use", "where", "while", "abstract", "become", "box", "do", "final", "macro", "override",
    "priv", "try", "typeof", "unsized", "virtual", "yield",
];

/// Whether `name` can name a module: an identifier, not a keyword, not `_`.
pub(crate) fn is_module_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name != "_"
        && !KEYWORDS.contains(&name)
}

/// One module of generated code: `pub mod {module}` with `FATBIN` (the
/// file `fatbin`, named relative to the generated file, which sits next
/// to it; or empty), `PTX` when `ptx` names its text file (`""`: empty),
/// a constant per kernel and `KERNELS`. Kernels are
/// listed by mangled name, so that overloads keep their suffixes from one
/// build to the next.
pub(crate) fn module(
    module: &str,
    doc: &str,
    fatbin: Option<&str>,
    ptx: Option<&str>,
    kernels: &[String],
) -> String {
    let mut kernels = kernels.to_vec();
    kernels.sort();
    kernels.dedup();
    let kernels = &kernels[..];
    let mut out = String::new();
    let _ = writeln!(out, "#[doc = {doc:?}]");
    let _ = writeln!(out, "#[allow(dead_code)]");
    let _ = writeln!(out, "pub mod {module} {{");
    match fatbin {
        Some(file) => {
            // Aligned for the driver, which reads the fatbin's headers
            // as 8-byte words.
            let _ = writeln!(out, "    #[repr(C, align(64))]");
            let _ = writeln!(out, "    struct Aligned<T: ?Sized>(T);");
            let _ = writeln!(
                out,
                "    static ALIGNED: &Aligned<[u8]> = &Aligned(*include_bytes!({file:?}));"
            );
            let _ = writeln!(out, "    /// The fatbin: a cubin per arch, and PTX.");
            let _ = writeln!(out, "    pub static FATBIN: &[u8] = &ALIGNED.0;");
        }
        None => {
            let _ = writeln!(
                out,
                "    /// Empty: no kernel was compiled into a fatbin (the module's doc says why)."
            );
            let _ = writeln!(out, "    pub static FATBIN: &[u8] = &[];");
        }
    }
    match ptx {
        Some("") => {
            let _ = writeln!(
                out,
                "    /// Empty: no kernel was compiled to PTX (the module's doc says why)."
            );
            let _ = writeln!(out, "    pub const PTX: &str = \"\";");
        }
        Some(file) => {
            let _ = writeln!(
                out,
                "    /// The fatbin's PTX, as text: for loaders that take it as text."
            );
            let _ = writeln!(out, "    pub const PTX: &str = include_str!({file:?});");
        }
        None => {}
    }
    let names = constant_names(kernels);
    for (kernel, constant) in kernels.iter().zip(&names) {
        let shown = cuda_link::demangle(kernel).unwrap_or_else(|| kernel.clone());
        let _ = writeln!(out, "    #[doc = {:?}]", format!("`{shown}`"));
        let _ = writeln!(out, "    pub const {constant}: &str = {kernel:?};");
    }
    let _ = writeln!(
        out,
        "    /// Every kernel's name, in the order of the constants."
    );
    let _ = writeln!(
        out,
        "    pub const KERNELS: &[&str] = &[{}];",
        names.join(", ")
    );
    let _ = writeln!(out, "}}");
    out
}

/// A constant name per kernel: its demangled name without the return
/// type and parameters, `ns::add<float>` as `NS_ADD_FLOAT`; a name
/// taken already (overloads, or `add_2` next to two `add`) gets the first
/// free `_2`, `_3`... in the order given.
pub(crate) fn constant_names(kernels: &[String]) -> Vec<String> {
    let reserved = ["FATBIN", "KERNELS", "ALIGNED", "PTX"];
    let mut taken: HashSet<String> = reserved.iter().map(|r| (*r).to_owned()).collect();
    let bases: Vec<String> = kernels
        .iter()
        .map(|kernel| {
            let demangled = cuda_link::demangle(kernel).unwrap_or_else(|| kernel.clone());
            let base = screaming(base_name(&demangled));
            if base.is_empty() || reserved.contains(&base.as_str()) {
                format!("KERNEL_{base}").trim_end_matches('_').to_owned()
            } else if base.starts_with(|c: char| c.is_ascii_digit()) {
                format!("K_{base}")
            } else {
                base
            }
        })
        .collect();
    // Every plain base first, so that a kernel named `add_2` keeps its
    // name and the second `add` moves on to `ADD_3`.
    let mut names: Vec<Option<String>> = vec![None; bases.len()];
    for (index, base) in bases.iter().enumerate() {
        if taken.insert(base.clone()) {
            names[index] = Some(base.clone());
        }
    }
    for (index, base) in bases.iter().enumerate() {
        if names[index].is_none() {
            let free = (2..)
                .map(|n| format!("{base}_{n}"))
                .find(|name| !taken.contains(name))
                .expect("some suffix is free");
            taken.insert(free.clone());
            names[index] = Some(free);
        }
    }
    names
        .into_iter()
        .map(|name| name.unwrap_or_default())
        .collect()
}

/// `void ns::add<float>(float*, int)` as `add`: the function's own name,
/// without its scope and template arguments.
pub(crate) fn unqualified(demangled: &str) -> &str {
    let name = base_name(demangled);
    let name = name.split('<').next().unwrap_or(name);
    name.rsplit("::").next().unwrap_or(name)
}

/// `void ns::add<float>(float*, int)` as `ns::add<float>`: up to the
/// parameter list, after the return type (both at template depth 0).
fn base_name(demangled: &str) -> &str {
    let mut depth = 0i32;
    let mut start = 0;
    let mut end = demangled.len();
    for (i, c) in demangled.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            '(' if depth == 0 => {
                end = i;
                break;
            }
            ' ' if depth == 0 => start = i + 1,
            _ => {}
        }
    }
    &demangled[start.min(end)..end]
}

/// `ns::add<float>` as `NS_ADD_FLOAT`.
fn screaming(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_uppercase());
        } else if !out.ends_with('_') && !out.is_empty() {
            out.push('_');
        }
    }
    out.trim_end_matches('_').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_follow_the_demangled_names() {
        let kernels: Vec<String> = [
            "saxpy",
            "_Z3addPfPKfi",
            "_Z3addPiPKii",
            "_ZN2ns6reduceIfEEvPT_i",
            "fatbin",
            "_Z1kv",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            constant_names(&kernels),
            [
                "SAXPY",
                "ADD",
                "ADD_2",
                "NS_REDUCE_FLOAT",
                "KERNEL_FATBIN",
                "K"
            ]
        );
        // Suffixes never land on a name another kernel has.
        let kernels =
            ["_Z3addPf", "_Z3addPi", "add_2", "fatbin", "kernel_fatbin"].map(String::from);
        let names = constant_names(&kernels);
        assert_eq!(
            names,
            ["ADD", "ADD_3", "ADD_2", "KERNEL_FATBIN", "KERNEL_FATBIN_2"]
        );
    }

    #[test]
    fn unqualified_names_drop_scope_and_template_arguments() {
        assert_eq!(unqualified("void ns::add<float>(float*, int)"), "add");
        assert_eq!(unqualified("saxpy"), "saxpy");
        assert_eq!(unqualified("void k()"), "k");
    }

    #[test]
    fn module_names_are_not_keywords() {
        assert!(is_module_name("kernels") && is_module_name("_1d"));
        for bad in ["type", "self", "gen", "_", "1k", "my kernels", ""] {
            assert!(!is_module_name(bad), "{bad}");
        }
    }

    #[test]
    fn the_module_is_rust() {
        let text = module("kernels", "doc", None, None, &["saxpy".to_owned()]);
        assert!(
            text.contains("pub const SAXPY: &str = \"saxpy\";"),
            "{text}"
        );
        assert!(
            text.contains("pub const KERNELS: &[&str] = &[SAXPY];"),
            "{text}"
        );
    }
}
