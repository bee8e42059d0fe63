//! C's `char` is `c_char`, which is `u8` on aarch64-linux (GH200, Jetson)
//! and `i8` on x86-64: hand-written FFI code that says `i8` builds here and
//! breaks there. No cross target can be installed on this machine, so this
//! test reads the sources instead.

use std::path::Path;

fn rust_sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy();
        if path.is_dir() {
            if !matches!(name.as_ref(), "target" | ".git" | "corpus" | "artifacts") {
                rust_sources(&path, out);
            }
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_i8_pointers_where_c_has_char() {
    let mut sources = Vec::new();
    rust_sources(cuda_link_tests::workspace(), &mut sources);
    assert!(sources.len() > 30, "{}", sources.len());
    let this_file = Path::new(file!()).file_name().unwrap();
    let offenders: Vec<String> = sources
        .iter()
        .filter(|path| path.file_name() != Some(this_file))
        .flat_map(|path| {
            let text = std::fs::read_to_string(path).unwrap();
            text.lines()
                .enumerate()
                .filter(|(_, line)| line.contains("*const i8") || line.contains("*mut i8"))
                .map(|(number, line)| format!("{}:{}: {}", path.display(), number + 1, line.trim()))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(
        offenders.is_empty(),
        "use c_char:\n{}",
        offenders.join("\n")
    );
}
