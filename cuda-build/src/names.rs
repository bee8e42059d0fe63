//! The generated Rust module: the fatbin's bytes and a constant per
//! kernel, named after its demangled name.

use std::collections::HashMap;
use std::fmt::Write;
use std::path::Path;

/// One module of generated code: `pub mod {module}` with `FATBIN` (from
/// `fatbin`, or empty), a constant per kernel and `KERNELS`.
pub(crate) fn module(module: &str, doc: &str, fatbin: Option<&Path>, kernels: &[String]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "#[doc = {doc:?}]");
    let _ = writeln!(out, "#[allow(dead_code)]");
    let _ = writeln!(out, "pub mod {module} {{");
    match fatbin {
        Some(path) => {
            // Aligned for the driver, which reads the fatbin's headers
            // as 8-byte words.
            let _ = writeln!(out, "    #[repr(C, align(64))]");
            let _ = writeln!(out, "    struct Aligned<T: ?Sized>(T);");
            let _ = writeln!(
                out,
                "    static ALIGNED: &Aligned<[u8]> = &Aligned(*include_bytes!({:?}));",
                path.display().to_string()
            );
            let _ = writeln!(out, "    /// The fatbin: a cubin per arch, and PTX.");
            let _ = writeln!(out, "    pub static FATBIN: &[u8] = &ALIGNED.0;");
        }
        None => {
            let _ = writeln!(
                out,
                "    /// Empty: built without CUDA (docs.rs), so no kernel was compiled."
            );
            let _ = writeln!(out, "    pub static FATBIN: &[u8] = &[];");
        }
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
/// taken twice (overloads) gets `_2`, `_3`... in the order given.
pub(crate) fn constant_names(kernels: &[String]) -> Vec<String> {
    let mut taken: HashMap<String, usize> = HashMap::new();
    let reserved = ["FATBIN", "KERNELS", "ALIGNED"];
    kernels
        .iter()
        .map(|kernel| {
            let demangled = cuda_link::demangle(kernel).unwrap_or_else(|| kernel.clone());
            let base = screaming(base_name(&demangled));
            let base = if base.is_empty() || reserved.contains(&base.as_str()) {
                format!("KERNEL_{base}").trim_end_matches('_').to_owned()
            } else if base.starts_with(|c: char| c.is_ascii_digit()) {
                format!("K_{base}")
            } else {
                base
            };
            let count = taken.entry(base.clone()).or_insert(0);
            *count += 1;
            match *count {
                1 => base,
                n => format!("{base}_{n}"),
            }
        })
        .collect()
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
    }

    #[test]
    fn the_module_is_rust() {
        let text = module("kernels", "doc", None, &["saxpy".to_owned()]);
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
