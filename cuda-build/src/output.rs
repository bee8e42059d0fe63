//! What a build writes: files rewritten only when their bytes change, and
//! the names of the modules it generates.

use std::path::Path;

use crate::error::BuildError;
use crate::names;

/// A file's module name: its stem as a Rust identifier, `_` after a
/// keyword (`type.cu` is `type_`).
pub(crate) fn module_name(file: &Path) -> String {
    let stem = file.file_stem().unwrap_or_default().to_string_lossy();
    let mut name: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    if !name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        name.insert(0, '_');
    }
    if !names::is_module_name(&name) {
        name.push('_');
    }
    name
}

/// Writes `text` unless the file already holds it, so that cargo sees no
/// change when nothing changed.
pub(crate) fn write_if_changed(path: &Path, text: &str) -> Result<(), BuildError> {
    if std::fs::read(path).ok().as_deref() == Some(text.as_bytes()) {
        return Ok(());
    }
    std::fs::write(path, text).map_err(|e| output_error(path, e))
}

pub(crate) fn output_error(path: &Path, error: std::io::Error) -> BuildError {
    BuildError::Output {
        name: path.display().to_string(),
        detail: error.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_names_are_identifiers() {
        assert_eq!(module_name(Path::new("k/add-f32.cu")), "add_f32");
        assert_eq!(module_name(Path::new("1d.cu")), "_1d");
        assert_eq!(module_name(Path::new("type.cu")), "type_");
    }
}
