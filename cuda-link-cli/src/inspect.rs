//! `cuda-link inspect`: every file is reported, and the exit code says
//! whether any failed.

use std::io::Read as _;
use std::path::Path;

use cuda_link::{Inspection, ObjectCode, ObjectError};

use crate::{Failure, report, say};

/// How `inspect` prints.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A table per file.
    Table,
    /// One JSON array of every file.
    Json,
    /// One JSON object per line (JSON Lines).
    JsonLines,
}

/// Inspects every file (`-` is standard input), prints each, then fails
/// if any could not be read.
pub fn run(files: &[std::path::PathBuf], format: Format, demangle: bool) -> Result<(), Failure> {
    let mut failed = 0usize;
    let mut array = Vec::new();
    for file in files {
        let result = read(file).map(|mut info| {
            if demangle {
                info.demangle_kernels();
            }
            info
        });
        let shown = match (&result, format) {
            (Ok(info), Format::Table) => info.to_string(),
            (Ok(info), _) => {
                serde_json::to_string(info).map_err(|e| Failure::Other(e.to_string()))?
            }
            (Err(e), Format::Table) => {
                say::err(format!("cuda-link: {}", report(e)));
                failed += 1;
                continue;
            }
            (Err(e), _) => {
                failed += 1;
                serde_json::json!({ "name": file.display().to_string(), "error": report(e) })
                    .to_string()
            }
        };
        match format {
            Format::Json => array.push(shown),
            _ => {
                if !say::out(shown.trim_end()).map_err(Failure::Other)? {
                    return Ok(()); // The reader has gone: nothing left to tell.
                }
            }
        }
    }
    if format == Format::Json {
        say::out(format!("[{}]", array.join(",\n"))).map_err(Failure::Other)?;
    }
    match failed {
        0 => Ok(()),
        n => Err(Failure::Reported(format!(
            "{n} of {} inputs could not be inspected",
            files.len()
        ))),
    }
}

/// A file, read a fatbin at a time, or standard input for `-`.
fn read(file: &Path) -> Result<Inspection, ObjectError> {
    if file != Path::new("-") {
        return cuda_link::inspect_path(file);
    }
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .read_to_end(&mut bytes)
        .map_err(|e| cuda_link::ObjectError {
            name: "<stdin>".into(),
            reason: cuda_link::Reason::Io {
                kind: e.kind(),
                message: e.to_string(),
            },
        })?;
    ObjectCode::from_bytes(bytes, "<stdin>")?.inspect()
}
