//! Kernels kept through link-time optimisation: LTO keeps an NVVM IR
//! kernel only where something marks it used, and `nvvm.annotations`
//! alone does not. numba's IR lists its kernels in `@llvm.used`;
//! hand-written IR, cuda.core's examples and most front ends do not, and
//! their kernels vanished from the link's output without an error. Before
//! an NVVM IR text module is lowered to LTO-IR, each of its kernels is
//! added to `@llvm.used`, as numba writes it: in a new global, or in the
//! module's own.

use std::collections::HashMap;

use crate::nvvm_ir::NvvmIrInfo;

/// `text` with every kernel of `info` in `@llvm.used`, or `None` when
/// nothing needs adding or the module's own `@llvm.used` is written so
/// that it cannot be extended here (the link's check of its output then
/// names what it lacks).
pub(crate) fn with_kernels_used(text: &str, info: &NvvmIrInfo) -> Option<String> {
    let used_line = text.lines().find(|line| is_used_global(line));
    let missing: Vec<String> = kernel_values(text, info)
        .into_iter()
        .filter(|(name, _)| !used_line.is_some_and(|line| names_global(line, name)))
        .map(|(_, value)| value)
        .collect();
    if missing.is_empty() {
        return None;
    }
    let element = match info.opaque_pointers {
        true => "ptr",
        false => "i8*",
    };
    let added: Vec<String> = missing
        .iter()
        .map(|value| match info.opaque_pointers {
            true => value.clone(),
            false => format!("i8* bitcast ({value} to i8*)"),
        })
        .collect();
    match used_line {
        None => {
            let global = format!(
                "@llvm.used = appending global [{} x {element}] [{}], section \"llvm.metadata\"\n",
                added.len(),
                added.join(", ")
            );
            let mut out = text.to_owned();
            if !out.ends_with('\n') {
                out.push('\n');
            }
            out.push_str(&global);
            Some(out)
        }
        Some(line) => {
            let extended = extended_used(line, &added)?;
            // That line itself, not the same text elsewhere (a comment).
            let mut out = String::with_capacity(text.len() + extended.len());
            let mut replaced = false;
            for each in text.split_inclusive('\n') {
                match !replaced && is_used_global(each) {
                    true => {
                        replaced = true;
                        out.push_str(&extended);
                        out.push_str(&each[each.trim_end_matches(['\r', '\n']).len()..]);
                    }
                    false => out.push_str(each),
                }
            }
            Some(out)
        }
    }
}

/// Whether `line` defines `@llvm.used`.
fn is_used_global(line: &str) -> bool {
    let line = line.trim_start();
    line.starts_with("@llvm.used ") || line.starts_with("@\"llvm.used\" ")
}

/// Whether `line` names the global `name` (`@name` or `@"name"`), whole.
fn names_global(line: &str, name: &str) -> bool {
    let quoted = format!("@\"{name}\"");
    let plain = format!("@{name}");
    line.contains(&quoted)
        || line.match_indices(&plain).any(|(at, _)| {
            line[at + plain.len()..]
                .chars()
                .next()
                .is_none_or(|c| !(c.is_alphanumeric() || matches!(c, '_' | '.' | '$')))
        })
}

/// Each kernel's name and its value as a constant (`void (float*)* @k`,
/// or `ptr @k`): from its `nvvm.annotations` node, read as the module's
/// inspection reads it, which names it with its type, or, for a
/// `ptx_kernel` function of opaque-pointer IR, `ptr @k`.
fn kernel_values(text: &str, info: &NvvmIrInfo) -> Vec<(String, String)> {
    // Each annotated kernel's first node, in one pass over the lines.
    let mut annotated: HashMap<String, &str> = HashMap::new();
    for line in text.lines() {
        if let Some(rest) = line.trim_start().strip_prefix('!')
            && let Some((_, node)) = rest.split_once('=')
            && let Some((name, value)) = crate::nvvm_ir::kernel_annotation(node)
        {
            annotated.entry(name).or_insert(value);
        }
    }
    let mut found = Vec::new();
    for kernel in &info.kernels {
        let value = annotated
            .get(kernel)
            .map(|value| value.to_string())
            .or_else(|| {
                info.opaque_pointers
                    .then(|| format!("ptr {}", global_name(kernel)))
            });
        if let Some(value) = value {
            found.push((kernel.clone(), value));
        }
    }
    found
}

/// `@name`, quoted when it must be.
fn global_name(name: &str) -> String {
    let plain = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$'))
        && !name.starts_with(|c: char| c.is_ascii_digit());
    match plain {
        true => format!("@{name}"),
        false => format!("@\"{name}\""),
    }
}

/// `line`, an `@llvm.used` of `[N x T] [elements]`, with `added`
/// appended; `None` when it is not written so.
fn extended_used(line: &str, added: &[String]) -> Option<String> {
    let open = line.find('[')?;
    let close_type = open + line[open..].find(']')?;
    let array_type = &line[open + 1..close_type];
    let (count, element) = array_type.split_once(" x ")?;
    let count: usize = count.trim().parse().ok()?;
    let values_open = close_type + line[close_type..].find('[')?;
    // The matching `]` of the values, past nested brackets.
    let mut depth = 0usize;
    let mut values_close = None;
    for (at, c) in line[values_open..].char_indices() {
        match c {
            '[' | '(' => depth += 1,
            ']' | ')' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    values_close = Some(values_open + at);
                    break;
                }
            }
            _ => {}
        }
    }
    let values_close = values_close?;
    let values = line[values_open + 1..values_close].trim();
    let mut all: Vec<&str> = Vec::new();
    if !values.is_empty() {
        all.push(values);
    }
    all.extend(added.iter().map(String::as_str));
    Some(format!(
        "{}[{} x {}] [{}]{}",
        &line[..open],
        count + added.len(),
        element.trim(),
        all.join(", "),
        &line[values_close + 1..]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(text: &str) -> NvvmIrInfo {
        crate::nvvm_ir::inspect(text.as_bytes()).unwrap()
    }

    const SAXPY: &str = "target triple = \"nvptx64-nvidia-cuda\"\n\
        define void @saxpy(float %a, float* %x) {\n  ret void\n}\n\
        !nvvm.annotations = !{!0}\n\
        !0 = !{void (float, float*)* @saxpy, !\"kernel\", i32 1}\n\
        !nvvmir.version = !{!1}\n!1 = !{i32 2, i32 0}\n";

    #[test]
    fn a_kernel_without_a_mark_gets_one() {
        let marked = with_kernels_used(SAXPY, &info(SAXPY)).unwrap();
        assert!(
            marked.ends_with(
                "@llvm.used = appending global [1 x i8*] [i8* bitcast (void (float, float*)* \
                 @saxpy to i8*)], section \"llvm.metadata\"\n"
            ),
            "{marked}"
        );
        // Marked, it needs nothing more.
        assert_eq!(with_kernels_used(&marked, &info(&marked)), None);
    }

    /// A node written without spaces is the kernel's as the inspection
    /// reads it, and marks it.
    #[test]
    fn a_node_without_spaces_marks_its_kernel() {
        let text = SAXPY.replace(
            "!{void (float, float*)* @saxpy, !\"kernel\", i32 1}",
            "!{void (float, float*)* @saxpy,!\"kernel\",i32 1}",
        );
        assert_eq!(info(&text).kernels, ["saxpy"]);
        let marked = with_kernels_used(&text, &info(&text)).unwrap();
        assert!(
            marked.contains("[i8* bitcast (void (float, float*)* @saxpy to i8*)]"),
            "{marked}"
        );
    }

    #[test]
    fn a_used_list_of_other_globals_is_extended() {
        let text = format!(
            "{SAXPY}@\"llvm.used\" = appending global [1 x i8*] [i8* bitcast (i32 ()* @anchor \
             to i8*)], section \"llvm.metadata\"\n"
        );
        let marked = with_kernels_used(&text, &info(&text)).unwrap();
        assert!(
            marked.contains(
                "@\"llvm.used\" = appending global [2 x i8*] [i8* bitcast (i32 ()* @anchor to \
                 i8*), i8* bitcast (void (float, float*)* @saxpy to i8*)], section \
                 \"llvm.metadata\""
            ),
            "{marked}"
        );
    }

    #[test]
    fn opaque_pointer_kernels_by_annotation_or_convention() {
        let text = "target triple = \"nvptx64-nvidia-cuda\"\n\
            define ptx_kernel void @a(ptr %x) {\n  ret void\n}\n\
            define void @\"b.c\"(ptr %x) {\n  ret void\n}\n\
            !nvvm.annotations = !{!0}\n!0 = !{ptr @\"b.c\", !\"kernel\", i32 1}\n";
        let marked = with_kernels_used(text, &info(text)).unwrap();
        assert!(
            marked.contains("[2 x ptr] [")
                && marked.contains("ptr @a")
                && marked.contains("ptr @\"b.c\""),
            "{marked}"
        );
    }
}
