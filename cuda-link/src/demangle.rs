//! [`demangle`]: the name a C++ kernel is known by in source, as cuda.core
//! users name kernels through NVRTC name expressions.

use cpp_demangle::{DemangleOptions, Symbol};

/// Names longer than this are not demangled: real kernel names are far
/// shorter, and the bound keeps a hostile symbol table's cost linear.
const MAX_MANGLED_LEN: usize = 4096;

/// `saxpy<float>` for `_Z5saxpyIfEvT_PKS0_PS0_m`: the demangled name
/// without its parameters or return type; `None` for a name that is not
/// a mangled C++ name (an `extern "C"` kernel's).
///
/// ```
/// assert_eq!(
///     cuda_link::demangle("_Z5saxpyIfEvT_PKS0_PS0_m").as_deref(),
///     Some("saxpy<float>")
/// );
/// assert_eq!(cuda_link::demangle("saxpy"), None);
/// ```
pub fn demangle(name: &str) -> Option<String> {
    if !name.starts_with("_Z") || name.len() > MAX_MANGLED_LEN {
        return None;
    }
    let symbol = Symbol::new(name.as_bytes()).ok()?;
    let options = DemangleOptions::new().no_params().no_return_type();
    symbol.demangle_with_options(&options).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_namespaces_and_c_names() {
        assert_eq!(
            demangle("_Z10p_templateIfEvPT_S0_").as_deref(),
            Some("p_template<float>")
        );
        assert_eq!(
            demangle("_ZN6kernel5scaleEPfi").as_deref(),
            Some("kernel::scale")
        );
        assert_eq!(demangle("call_add_cabi"), None);
        assert_eq!(demangle("_Z"), None);
        assert_eq!(demangle(&format!("_Z{}", "9".repeat(5000))), None);
    }
}
