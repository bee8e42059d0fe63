//! The sys crates' loaders, generated: one template per file
//! (`xtask/templates/`), one table row per NVIDIA library. Each crate gets
//! its own checked-in copy, so it still vendors alone; `cargo xtask
//! bindgen` writes them and `--check` (and the test below) finds a copy
//! that drifted from the template.

use std::path::{Path, PathBuf};

use crate::Result;

/// One NVIDIA library loaded at run time: every name the templates need.
struct Library {
    /// The crate's folder, `nvfatbin-sys`.
    dir: &'static str,
    /// Its name in paths, `nvfatbin_sys`.
    krate: &'static str,
    /// Its name in messages, `nvFatbin`.
    display: &'static str,
    /// The loader type, `NvFatbin`.
    loader: &'static str,
    /// The generated function table.
    fns: &'static str,
    /// The result enum, its success and unknown names, and a named error.
    result: &'static str,
    success: &'static str,
    unknown: &'static str,
    example_error: &'static str,
    /// The typed error of a failed call.
    error: &'static str,
    /// The call-naming macro.
    call_macro: &'static str,
    /// The variable that names the file, and the tests' wheel variable
    /// prefix (`CUDA_LINK_NVFATBIN` + `13_PATH`).
    override_var: &'static str,
    test_var: &'static str,
    /// File names, newest major first, and the wheels' and a toolkit's
    /// folders.
    file_names: &'static [&'static str],
    wheel_dirs: &'static [&'static str],
    toolkit_dirs: &'static [&'static str],
    /// The majors the version function reports that these bindings take,
    /// in words for the error, and what the CUDA 12 and 13 wheels' report
    /// (libNVVM's is its own API version, 2, in both).
    supported_majors: &'static str,
    supported_text: &'static str,
    wheel_versions: (u32, u32),
    /// The pip packages of CUDA 13 and 12.
    pip: (&'static str, &'static str),
    /// The version function and its integer type.
    version_fn: &'static str,
    version_int: &'static str,
    /// The function that destroys a handle, for the macro's test.
    destroy_fn: &'static str,
    /// Symbols every supported version has, and why those.
    core_symbols: &'static [&'static str],
    core_doc: &'static str,
    /// Why the loader is `Send + Sync`.
    independent: &'static str,
    /// More of `open`'s safety contract, and a call made after a
    /// successful open (`(&path, major, minor)` are in scope).
    open_doc: &'static str,
    after_open: &'static str,
    /// The prefix of the tests' names, `nvfatbin`.
    test_prefix: &'static str,
}

/// Where a CUDA toolkit keeps its libraries.
const CUDA_TOOLKIT_DIRS: &[&str] = &[
    "lib64",
    "lib",
    "targets/x86_64-linux/lib",
    "targets/sbsa-linux/lib",
    "targets/aarch64-linux/lib",
];

const LIBRARIES: &[Library] = &[
    Library {
        dir: "nvjitlink-sys",
        krate: "nvjitlink_sys",
        display: "nvJitLink",
        loader: "NvJitLink",
        fns: "NvJitLinkFns",
        result: "nvJitLinkResult",
        success: "NVJITLINK_SUCCESS",
        unknown: "NVJITLINK_ERROR_UNKNOWN",
        example_error: "NVJITLINK_ERROR_INVALID_INPUT",
        error: "NvJitLinkError",
        call_macro: "nvjitlink_call",
        override_var: "CUDA_LINK_NVJITLINK_PATH",
        test_var: "CUDA_LINK_NVJITLINK",
        file_names: &["libnvJitLink.so.13", "libnvJitLink.so.12"],
        wheel_dirs: &["nvidia/cu13/lib", "nvidia/nvjitlink/lib"],
        toolkit_dirs: CUDA_TOOLKIT_DIRS,
        supported_majors: "12..=13",
        supported_text: "12 and 13",
        wheel_versions: (12, 13),
        pip: ("nvidia-nvjitlink", "nvidia-nvjitlink-cu12"),
        version_fn: "nvJitLinkVersion",
        version_int: "u32",
        destroy_fn: "nvJitLinkDestroy",
        core_symbols: &[
            "nvJitLinkVersion",
            "nvJitLinkCreate",
            "nvJitLinkDestroy",
            "nvJitLinkAddData",
            "nvJitLinkComplete",
            "nvJitLinkGetLinkedCubinSize",
            "nvJitLinkGetLinkedCubin",
            "nvJitLinkGetErrorLogSize",
            "nvJitLinkGetErrorLog",
            "nvJitLinkGetInfoLogSize",
            "nvJitLinkGetInfoLog",
        ],
        core_doc: "Symbols without which no link can run.",
        independent: "nvJitLink handles are independent",
        open_doc: "",
        after_open: "",
        test_prefix: "nvjitlink",
    },
    Library {
        dir: "nvrtc-sys",
        krate: "nvrtc_sys",
        display: "NVRTC",
        loader: "Nvrtc",
        fns: "NvrtcFns",
        result: "nvrtcResult",
        success: "NVRTC_SUCCESS",
        unknown: "NVRTC_ERROR_UNKNOWN",
        example_error: "NVRTC_ERROR_COMPILATION",
        error: "NvrtcError",
        call_macro: "nvrtc_call",
        override_var: "CUDA_LINK_NVRTC_PATH",
        test_var: "CUDA_LINK_NVRTC",
        file_names: &["libnvrtc.so.13", "libnvrtc.so.12"],
        wheel_dirs: &["nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib"],
        toolkit_dirs: CUDA_TOOLKIT_DIRS,
        supported_majors: "12..=13",
        supported_text: "12 and 13",
        wheel_versions: (12, 13),
        pip: ("nvidia-cuda-nvrtc", "nvidia-cuda-nvrtc-cu12"),
        version_fn: "nvrtcVersion",
        version_int: "std::ffi::c_int",
        destroy_fn: "nvrtcDestroyProgram",
        core_symbols: &[
            "nvrtcVersion",
            "nvrtcGetErrorString",
            "nvrtcCreateProgram",
            "nvrtcDestroyProgram",
            "nvrtcCompileProgram",
            "nvrtcGetPTXSize",
            "nvrtcGetPTX",
            "nvrtcGetCUBINSize",
            "nvrtcGetCUBIN",
            "nvrtcGetProgramLogSize",
            "nvrtcGetProgramLog",
            "nvrtcAddNameExpression",
            "nvrtcGetLoweredName",
        ],
        core_doc: "Symbols every supported NVRTC has, without which nothing compiles. \
                   Newer ones are optional in the table: LTO-IR (12.0), PCH (12.8), Tile \
                   IR (13.1), bundled headers (13.3); `nvrtcGetNVVM` is gone from 13 and \
                   from these bindings.",
        independent: "NVRTC programs are independent (NVRTC is thread-safe across \
                      programs)",
        open_doc: " The `libnvrtc-builtins.so.<major>.<minor>` beside it, if any, is \
                   loaded too, and must be NVRTC's.",
        after_open: "crate::preload_builtins(&path, major, minor);",
        test_prefix: "nvrtc",
    },
    Library {
        dir: "nvfatbin-sys",
        krate: "nvfatbin_sys",
        display: "nvFatbin",
        loader: "NvFatbin",
        fns: "NvFatbinFns",
        result: "nvFatbinResult",
        success: "NVFATBIN_SUCCESS",
        unknown: "NVFATBIN_ERROR_UNKNOWN",
        example_error: "NVFATBIN_ERROR_INVALID_INPUT",
        error: "NvFatbinError",
        call_macro: "nvfatbin_call",
        override_var: "CUDA_LINK_NVFATBIN_PATH",
        test_var: "CUDA_LINK_NVFATBIN",
        file_names: &["libnvfatbin.so.13", "libnvfatbin.so.12"],
        wheel_dirs: &["nvidia/cu13/lib", "nvidia/nvfatbin/lib"],
        toolkit_dirs: CUDA_TOOLKIT_DIRS,
        supported_majors: "12..=13",
        supported_text: "12 and 13",
        wheel_versions: (12, 13),
        pip: ("nvidia-nvfatbin", "nvidia-nvfatbin-cu12"),
        version_fn: "nvFatbinVersion",
        version_int: "u32",
        destroy_fn: "nvFatbinDestroy",
        core_symbols: &[
            "nvFatbinVersion",
            "nvFatbinCreate",
            "nvFatbinDestroy",
            "nvFatbinAddPTX",
            "nvFatbinAddCubin",
            "nvFatbinAddLTOIR",
            "nvFatbinSize",
            "nvFatbinGet",
        ],
        core_doc: "Symbols every supported nvFatbin has; `nvFatbinAddTileIR` (13.1) is \
                   optional in the table.",
        independent: "nvFatbin handles are independent",
        open_doc: "",
        after_open: "",
        test_prefix: "nvfatbin",
    },
    Library {
        dir: "nvvm-sys",
        krate: "nvvm_sys",
        display: "libNVVM",
        loader: "Nvvm",
        fns: "NvvmFns",
        result: "nvvmResult",
        success: "NVVM_SUCCESS",
        unknown: "an nvvmResult the header does not name",
        example_error: "NVVM_ERROR_COMPILATION",
        error: "NvvmError",
        call_macro: "nvvm_call",
        override_var: "CUDA_LINK_NVVM_PATH",
        test_var: "CUDA_LINK_NVVM",
        // 13.x's wheel (`nvidia-nvvm`) puts it beside the other libraries;
        // 12.x's nvcc wheel and the toolkits in `nvvm/lib64`.
        file_names: &["libnvvm.so.4", "libnvvm.so"],
        wheel_dirs: &["nvidia/cu13/lib", "nvidia/cuda_nvcc/nvvm/lib64"],
        toolkit_dirs: &["nvvm/lib64", "nvvm/lib"],
        supported_majors: "2..=2",
        supported_text: "2 (libNVVM's API version in CUDA 12 and 13)",
        wheel_versions: (2, 2),
        pip: ("nvidia-nvvm", "nvidia-cuda-nvcc-cu12"),
        version_fn: "nvvmVersion",
        version_int: "std::ffi::c_int",
        destroy_fn: "nvvmDestroyProgram",
        core_symbols: &[
            "nvvmVersion",
            "nvvmIRVersion",
            "nvvmGetErrorString",
            "nvvmCreateProgram",
            "nvvmDestroyProgram",
            "nvvmAddModuleToProgram",
            "nvvmLazyAddModuleToProgram",
            "nvvmVerifyProgram",
            "nvvmCompileProgram",
            "nvvmGetCompiledResultSize",
            "nvvmGetCompiledResult",
            "nvvmGetProgramLogSize",
            "nvvmGetProgramLog",
        ],
        core_doc: "Symbols libNVVM has had since CUDA 11, the whole of `nvvm.h` 12.9 and 13.x.",
        independent: "libNVVM programs are independent (libNVVM is thread-safe across \
                      programs)",
        open_doc: "",
        after_open: "",
        test_prefix: "nvvm",
    },
];

/// Each template's name, where its copy goes in a crate, and its text.
const TEMPLATES: &[(&str, &str, &str)] = &[
    (
        "loader.rs",
        "src/loader.rs",
        include_str!("../templates/loader.rs"),
    ),
    (
        "result.rs",
        "src/result.rs",
        include_str!("../templates/result.rs"),
    ),
    (
        "provisioned.rs",
        "tests/common/mod.rs",
        include_str!("../templates/provisioned.rs"),
    ),
    (
        "load_test.rs",
        "tests/load.rs",
        include_str!("../templates/load_test.rs"),
    ),
];

/// The call macro's template: every sys crate's, the driver's included.
const CALL_TEMPLATE: &str = include_str!("../templates/call.rs");

/// The driver's row of the call template: its loader is its own (it
/// resolves through `cuGetProcAddress`), its calls are named the same way.
fn driver_call_placeholders() -> Vec<(&'static str, String)> {
    vec![
        ("display", "driver".into()),
        ("macro", "driver_call".into()),
        ("result", "CUresult".into()),
        ("loader", "Driver".into()),
        ("symbol_example", "cuModuleGetGlobal_v2".into()),
        ("example_call", "cuCtxSetCurrent(context)".into()),
        (
            "macro_note",
            " The name is the table's, which is the symbol the loader resolved, \
             versioned where the table is: `cuModuleGetGlobal_v2`, not the header's \
             macro name `cuModuleGetGlobal`."
                .into(),
        ),
        (
            "example",
            doc_lines(
                "use cuda_driver_sys::{Driver, driver_call, sys::CUcontext};\n\n\
                 fn make_current(driver: &Driver, context: CUcontext) -> Result<(), String> {\n\
                 \x20   // SAFETY: a live context.\n\
                 \x20   let call = unsafe { driver_call!(driver, cuCtxSetCurrent(context)) }\n\
                 \x20       .map_err(|missing| missing.to_string())?;\n\
                 \x20   driver\n\
                 \x20       .check(call.result)\n\
                 \x20       .map_err(|error| format!(\"{} failed with {error}\", call.symbol))\n\
                 }",
            ),
        ),
    ]
}

/// A library's row of the call template.
fn call_placeholders(l: &Library) -> Vec<(&'static str, String)> {
    let example = format!(
        "use {krate}::{{{loader}, {error}, {call_macro}, sys::{result}}};\n\n\
         fn version(lib: &{loader}) -> Result<({int}, {int}), String> {{\n\
         \x20   let (mut major, mut minor) = (0, 0);\n\
         \x20   // SAFETY: two out-pointers.\n\
         \x20   let call = unsafe {{ {call_macro}!(lib, {version_fn}(&mut major, &mut minor)) }}\n\
         \x20       .map_err(|missing| missing.to_string())?;\n\
         \x20   match call.result {{\n\
         \x20       {result}::{success} => Ok((major, minor)),\n\
         \x20       result => Err(format!(\"{{}} failed with {{}}\", call.symbol, {error} {{ result }})),\n\
         \x20   }}\n\
         }}",
        krate = l.krate,
        loader = l.loader,
        error = l.error,
        call_macro = l.call_macro,
        result = l.result,
        int = l.version_int,
        version_fn = l.version_fn,
        success = l.success,
    );
    vec![
        ("display", l.display.into()),
        ("macro", l.call_macro.into()),
        ("result", l.result.into()),
        ("loader", l.loader.into()),
        ("symbol_example", l.version_fn.into()),
        (
            "example_call",
            format!("{}(&mut major, &mut minor)", l.version_fn),
        ),
        ("macro_note", String::new()),
        ("example", doc_lines(&example)),
    ]
}

/// `text` as `///` doc lines.
fn doc_lines(text: &str) -> String {
    text.lines()
        .map(|line| match line {
            "" => "///".to_owned(),
            line => format!("/// {line}"),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A generated file's text: the header naming its template, formatted.
fn generated(name: &str, text: &str) -> Result<String> {
    let header = format!(
        "// Generated by `cargo xtask bindgen` from xtask/templates/{name}. Do not edit.\n"
    );
    rustfmt(&format!("{header}{text}"))
}

/// Every generated file of every sys crate, with its text.
pub fn files(workspace: &Path) -> Result<Vec<(PathBuf, String)>> {
    let mut out = Vec::new();
    for library in LIBRARIES {
        for (name, relative, template) in TEMPLATES {
            let text = render(template, &placeholders(library))?;
            out.push((
                workspace.join(library.dir).join(relative),
                generated(name, &text)?,
            ));
        }
        let call = render(CALL_TEMPLATE, &call_placeholders(library))?;
        out.push((
            workspace.join(library.dir).join("src/call.rs"),
            generated("call.rs", &call)?,
        ));
    }
    let call = render(CALL_TEMPLATE, &driver_call_placeholders())?;
    out.push((
        workspace.join("cuda-driver-sys/src/call.rs"),
        generated("call.rs", &call)?,
    ));
    Ok(out)
}

fn quoted(list: &[&str]) -> String {
    list.iter()
        .map(|s| format!("{s:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn placeholders(l: &Library) -> Vec<(&'static str, String)> {
    let c_strings = l
        .core_symbols
        .iter()
        .map(|s| format!("c{s:?}"))
        .collect::<Vec<_>>()
        .join(", ");
    vec![
        ("crate", l.krate.into()),
        ("display", l.display.into()),
        ("loader", l.loader.into()),
        ("fns", l.fns.into()),
        ("result", l.result.into()),
        ("success", l.success.into()),
        ("unknown", l.unknown.into()),
        ("example_error", l.example_error.into()),
        ("error", l.error.into()),
        ("macro", l.call_macro.into()),
        ("override_var", l.override_var.into()),
        ("test_var", l.test_var.into()),
        ("file_names", quoted(l.file_names)),
        ("file13", l.file_names[0].into()),
        ("wheel_dirs", quoted(l.wheel_dirs)),
        ("toolkit_dirs", quoted(l.toolkit_dirs)),
        ("supported_majors", l.supported_majors.into()),
        ("supported_text", l.supported_text.into()),
        ("version12", l.wheel_versions.0.to_string()),
        ("version13", l.wheel_versions.1.to_string()),
        ("pip13", l.pip.0.into()),
        ("pip12", l.pip.1.into()),
        ("version_fn", l.version_fn.into()),
        ("version_int", l.version_int.into()),
        (
            "version_to_u32",
            match l.version_int {
                "u32" => String::new(),
                _ => "let major = u32::try_from(major).unwrap_or(0);\n\
                  let minor = u32::try_from(minor).unwrap_or(0);"
                    .into(),
            },
        ),
        ("destroy_fn", l.destroy_fn.into()),
        ("core_symbols", c_strings),
        ("first_core", l.core_symbols[0].into()),
        ("core_doc", l.core_doc.into()),
        ("independent", l.independent.into()),
        ("open_doc", l.open_doc.into()),
        ("after_open", l.after_open.into()),
        ("test_prefix", l.test_prefix.into()),
    ]
}

/// The template with each `{{name}}` replaced; a name without a value is
/// an error, so a template cannot ship a hole.
fn render(template: &str, values: &[(&str, String)]) -> Result<String> {
    let mut text = template.to_owned();
    for (name, value) in values {
        text = text.replace(&format!("{{{{{name}}}}}"), value);
    }
    let hole = text
        .match_indices("{{")
        .find(|(at, _)| text[at + 2..].starts_with(|c: char| c.is_ascii_lowercase()));
    match hole {
        Some((at, _)) => {
            let end = text[at..].find("}}").map_or(text.len(), |e| at + e + 2);
            Err(format!("template placeholder without a value: {}", &text[at..end]).into())
        }
        None => Ok(text),
    }
}

/// The text as `rustfmt` writes it, so a checked-in copy passes
/// `cargo fmt --check` whatever the names' lengths.
fn rustfmt(text: &str) -> Result<String> {
    use std::io::Write as _;
    let mut child = std::process::Command::new("rustfmt")
        .args(["--edition", "2024", "--emit", "stdout"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run rustfmt: {e}"))?;
    child
        .stdin
        .take()
        .ok_or("rustfmt has no stdin")?
        .write_all(text.as_bytes())?;
    let output = child.wait_with_output()?;
    if !output.status.success() {
        return Err(format!(
            "rustfmt refused a generated loader:\n{}",
            String::from_utf8_lossy(&output.stderr)
        )
        .into());
    }
    Ok(String::from_utf8(output.stdout)?)
}

/// Writes every generated file, or with `check` lists those that differ.
pub fn run(workspace: &Path, check: bool) -> Result<Vec<String>> {
    let mut stale = Vec::new();
    for (path, text) in files(workspace)? {
        let current = std::fs::read_to_string(&path).unwrap_or_default();
        if current == text {
            continue;
        }
        if check {
            stale.push(path.display().to_string());
        } else {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            std::fs::write(&path, text)?;
            eprintln!("xtask: wrote {}", path.display());
        }
    }
    Ok(stale)
}

#[cfg(test)]
mod tests {
    /// The checked-in loaders are the template's: an edit to one copy,
    /// or to the template without `cargo xtask bindgen`, fails here.
    #[test]
    fn loaders_match_their_template() {
        let stale = super::run(&crate::workspace_root(), true).unwrap();
        assert!(stale.is_empty(), "run `cargo xtask bindgen`: {stale:?}");
    }

    #[test]
    fn a_placeholder_without_a_value_is_an_error() {
        let err = super::render("a {{missing}} b", &[("crate", "x".into())]).unwrap_err();
        assert!(err.to_string().contains("{{missing}}"), "{err}");
    }
}
