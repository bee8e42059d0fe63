//! [`{{error}}`]: a `{{result}}` other than success, typed.

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
