//! [`Call`] and [`{{macro}}!`](crate::{{macro}}): a call that names the
//! symbol it called, and [`SymbolUnavailable`], a symbol the loaded
//! library lacks.

use crate::sys::{{result}};

/// A symbol that the loaded library does not export.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("symbol `{symbol}` is not available in the loaded {library}")]
pub struct SymbolUnavailable {
    /// The library's display name.
    pub library: &'static str,
    /// The missing symbol.
    pub symbol: &'static str,
}

/// A {{display}} call that was made: the symbol it called and what it
/// returned. [`{{macro}}!`](crate::{{macro}}) makes one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use = "check the call's result"]
pub struct Call {
    /// The symbol the table resolved and called, e.g. `"{{symbol_example}}"`:
    /// what [`SymbolUnavailable::symbol`] names when the library lacks it.
    pub symbol: &'static str,
    /// What it returned.
    pub result: {{result}},
}

/// Calls a function of a [`{{loader}}`](crate::{{loader}})'s table and
/// names it by the symbol called: `{{macro}}!(lib, {{example_call}})` is
/// `lib.{{example_call}}` as a `Result<`[`Call`]`,` [`SymbolUnavailable`]`>`
/// whose `symbol` is the table's name of the function, so no caller types
/// the name of the function it calls (as git2's `try_call!`).{{macro_note}}
///
/// # Safety
/// The macro adds no `unsafe` and hides none: the table's methods are
/// `unsafe fn`, so the macro goes inside the caller's `unsafe` block, whose
/// `// SAFETY:` comment vouches for the arguments as it would for the
/// direct call. Arguments are evaluated inside that block too.
///
/// ```no_run
{{example}}
/// ```
#[macro_export]
macro_rules! {{macro}} {
    ($lib:expr, $function:ident($($argument:expr),* $(,)?)) => {
        $lib.$function($($argument),*).map(|result| $crate::Call {
            symbol: ::core::stringify!($function),
            result,
        })
    };
}
