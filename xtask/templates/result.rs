//! The typed errors of a call: [`{{error}}`], a `{{result}}` other than
//! success, and [`SymbolUnavailable`], a symbol the loaded library lacks.

use crate::sys::{{result}};

/// A failed {{display}} call's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{} ({})", self.name(), self.result.0)]
pub struct {{error}} {
    /// The result code.
    pub result: {{result}},
}

impl {{error}} {
    /// `Ok` for `{{success}}`, else the typed error.
    pub fn check(result: {{result}}) -> Result<(), {{error}}> {
        match result {
            {{result}}::{{success}} => Ok(()),
            result => Err({{error}} { result }),
        }
    }

    /// The result's name, e.g. `"{{example_error}}"`.
    pub fn name(&self) -> &'static str {
        result_name(self.result)
    }
}

/// The name of a `{{result}}` as the header spells it, e.g.
/// `"{{example_error}}"`, from the generated constants;
/// `"{{unknown}}"` for a value the pinned header does not name.
pub fn result_name(result: {{result}}) -> &'static str {
    result.name().unwrap_or("{{unknown}}")
}

/// A symbol that the loaded library does not export.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("symbol `{symbol}` is not available in the loaded {library}")]
pub struct SymbolUnavailable {
    /// The library's display name.
    pub library: &'static str,
    /// The missing symbol.
    pub symbol: &'static str,
}
