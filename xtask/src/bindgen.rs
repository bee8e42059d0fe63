//! `cargo xtask bindgen`: regenerate the checked-in bindings, and the sys
//! crates' loaders ([`crate::loaders`]).
//!
//! bindgen writes the types and the `extern "C"` declarations. The
//! declarations are then turned into an ash-style function table: one
//! `PFN_name` type per function, a struct of `Option<PFN_name>` filled by a
//! resolver closure, and one method per function that returns
//! `Err(SymbolUnavailable)` instead of calling a null pointer. Nothing is
//! linked, so the sys crates build without CUDA.

use std::path::{Path, PathBuf};

use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

use crate::{Result, redist};

/// One header and what to keep of it.
struct Binding {
    header: PathBuf,
    output: PathBuf,
    clang_args: &'static [&'static str],
    functions: &'static str,
    types: &'static str,
    vars: &'static str,
    table: &'static str,
    library: &'static str,
    doc: &'static str,
    /// `cudaTypedefs.h`, whose `PFN_name_vN` typedefs give the version at
    /// which `cuGetProcAddress` hands out each plain name's declared ABI.
    typedefs: Option<PathBuf>,
    /// Result types that get a generated `name()`, so that no crate keeps
    /// a hand-written table of the header's constants.
    named_enums: &'static [&'static str],
}

fn bindings(workspace: &Path) -> Result<Vec<Binding>> {
    let from_cuda_home = |file: &str| {
        std::env::var_os("CUDA_HOME")
            .map(|home| PathBuf::from(home).join("include").join(file))
            .filter(|p| p.is_file())
    };
    let nvjitlink_header = match from_cuda_home("nvJitLink.h") {
        Some(path) => path,
        None => {
            redist::ensure(workspace, &["nvjitlink13"])?;
            redist::nvjitlink_include(workspace).join("nvJitLink.h")
        }
    };
    // Each cuda.h comes from its pinned wheel, never from CUDA_HOME.
    redist::ensure(workspace, &["runtime12", "runtime13"])?;
    let driver = |header: PathBuf, file: &str, doc: &'static str| Binding {
        typedefs: Some(header.with_file_name("cudaTypedefs.h")),
        header,
        output: workspace.join("cuda-driver-sys/src/bindings").join(file),
        clang_args: &[],
        functions: "cu[A-Z].*",
        types: "(CU|cu)[A-Za-z0-9_]*",
        vars: "(CU|CUDA)_[A-Z0-9_]*|CUDA_VERSION",
        table: "DriverFns",
        library: "libcuda",
        doc,
        // The driver names its results itself (`cuGetErrorName`).
        named_enums: &[],
    };
    Ok(vec![
        Binding {
            header: nvjitlink_header,
            output: workspace.join("nvjitlink-sys/src/bindings.rs"),
            clang_args: &["-DNVJITLINK_NO_INLINE"],
            functions: "nvJitLink.*",
            types: "nvJitLink.*",
            vars: "NVJITLINK.*",
            table: "NvJitLinkFns",
            library: "nvJitLink",
            doc: "Every entry point of `nvJitLink.h` (13.x), resolved at run time.",
            typedefs: None,
            named_enums: &["nvJitLinkResult"],
        },
        Binding {
            header: {
                redist::ensure(workspace, &["nvrtc13"])?;
                redist::nvrtc_include(workspace).join("nvrtc.h")
            },
            output: workspace.join("nvrtc-sys/src/bindings.rs"),
            clang_args: &[],
            functions: "nvrtc.*",
            types: "nvrtc.*|_nvrtcProgram",
            vars: "NVRTC.*",
            table: "NvrtcFns",
            library: "NVRTC",
            doc: "Every entry point of `nvrtc.h` (13.5), resolved at run time.",
            typedefs: None,
            named_enums: &["nvrtcResult"],
        },
        Binding {
            header: {
                redist::ensure(workspace, &["nvfatbin13"])?;
                redist::nvfatbin_include(workspace).join("nvFatbin.h")
            },
            output: workspace.join("nvfatbin-sys/src/bindings.rs"),
            clang_args: &[],
            functions: "nvFatbin.*",
            types: "nvFatbin.*",
            vars: "NVFATBIN.*",
            table: "NvFatbinFns",
            library: "nvFatbin",
            doc: "Every entry point of `nvFatbin.h` (13.5), resolved at run time.",
            typedefs: None,
            named_enums: &["nvFatbinResult"],
        },
        Binding {
            header: {
                redist::ensure(workspace, &[redist::NVCC.dir])?;
                redist::nvvm_include(workspace).join("nvvm.h")
            },
            output: workspace.join("nvvm-sys/src/bindings.rs"),
            clang_args: &[],
            functions: "nvvm.*",
            types: "nvvm.*|_nvvmProgram",
            vars: "NVVM.*",
            table: "NvvmFns",
            library: "libNVVM",
            doc: "Every entry point of `nvvm.h` (13.0), resolved at run time.",
            typedefs: None,
            named_enums: &["nvvmResult"],
        },
        driver(
            redist::cuda12_include(workspace).join("cuda.h"),
            "cuda_12090.rs",
            "Every entry point of the pinned `cuda.h` 12.9, resolved at run time.",
        ),
        driver(
            redist::cuda13_include(workspace).join("cuda.h"),
            "cuda_13000.rs",
            "Every entry point of the pinned `cuda.h` 13.0, resolved at run time.",
        ),
    ])
}

/// Regenerates every file, or with `check` compares them with what is checked in.
pub fn run(workspace: &Path, check: bool) -> Result<()> {
    let mut stale = crate::loaders::run(workspace, check)?;
    ensure_libclang()?;
    for binding in bindings(workspace)? {
        let text = generate(&binding)?;
        let current = std::fs::read_to_string(&binding.output).unwrap_or_default();
        if current == text {
            eprintln!("xtask: {} is up to date", binding.output.display());
        } else if check {
            stale.push(binding.output.display().to_string());
        } else {
            std::fs::write(&binding.output, text)?;
            eprintln!("xtask: wrote {}", binding.output.display());
        }
    }
    if stale.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "bindings differ from their headers, run `cargo xtask bindgen`: {}",
            stale.join(", ")
        )
        .into())
    }
}

/// bindgen loads libclang at run time and panics when it finds none; say
/// what to install instead.
fn ensure_libclang() -> Result<()> {
    if clang_sys::is_loaded() {
        return Ok(());
    }
    clang_sys::load().map_err(|search| {
        format!(
            "bindgen needs libclang, and none was found.\n  \
             Install it (Debian/Ubuntu: `apt-get install libclang-dev`; \
             Fedora: `dnf install clang-devel`),\n  \
             or set LIBCLANG_PATH to the folder that holds libclang.so.\n  \
             ({search})"
        )
        .into()
    })
}

fn generate(binding: &Binding) -> Result<String> {
    let raw = bindgen::Builder::default()
        .header(binding.header.to_string_lossy())
        .clang_args(binding.clang_args)
        .allowlist_function(binding.functions)
        .allowlist_type(binding.types)
        .allowlist_var(binding.vars)
        .default_enum_style(bindgen::EnumVariation::NewType {
            is_bitfield: false,
            is_global: false,
        })
        .derive_default(true)
        .derive_eq(true)
        .derive_hash(true)
        .generate_comments(false)
        .layout_tests(true)
        .use_core()
        .generate()
        .map_err(|e| format!("bindgen failed on {}: {e}", binding.header.display()))?
        .to_string();

    let mut file = syn::parse_file(&raw)?;
    let mut functions = Vec::new();
    file.items.retain(|item| match item {
        syn::Item::ForeignMod(foreign) => {
            functions.extend(foreign.items.iter().filter_map(|item| match item {
                syn::ForeignItem::Fn(f) => Some(f.sig.clone()),
                _ => None,
            }));
            false
        }
        _ => true,
    });
    functions.sort_by_key(|sig| sig.ident.to_string());
    functions.dedup_by_key(|sig| sig.ident.to_string());

    let proc_versions = match &binding.typedefs {
        Some(path) => Some(proc_versions(&std::fs::read_to_string(path)?, &functions)),
        None => None,
    };
    let table = function_table(binding, &functions, proc_versions);
    let names = enum_names(&file, binding.named_enums);
    let header_name = binding
        .header
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let body = prettyplease::unparse(&syn::parse2(quote! { #file #names #table })?);
    Ok(format!(
        "// Generated by `cargo xtask bindgen` from {header_name}. Do not edit.\n\
         #![allow(non_camel_case_types, non_snake_case, non_upper_case_globals, dead_code)]\n\
         #![allow(unpredictable_function_pointer_comparisons)]\n\
         #![allow(missing_docs, clippy::all, clippy::undocumented_unsafe_blocks)]\n\n{body}"
    ))
}

/// `impl T { pub const fn name(self) -> Option<&'static str> }` for each
/// newtype enum `T` of `enums`, from the constants bindgen wrote: the
/// first constant of each value, as the header spells it.
fn enum_names(file: &syn::File, enums: &[&str]) -> TokenStream {
    let mut out = TokenStream::new();
    for &name in enums {
        let mut arms: Vec<(u64, String)> = Vec::new();
        for item in &file.items {
            let syn::Item::Impl(block) = item else {
                continue;
            };
            let syn::Type::Path(ty) = &*block.self_ty else {
                continue;
            };
            if !ty.path.is_ident(name) {
                continue;
            }
            for item in &block.items {
                let syn::ImplItem::Const(constant) = item else {
                    continue;
                };
                let syn::Expr::Call(call) = &constant.expr else {
                    continue;
                };
                let Some(syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Int(value),
                    ..
                })) = call.args.first()
                else {
                    continue;
                };
                let Ok(value) = value.base10_parse::<u64>() else {
                    continue;
                };
                if arms.iter().all(|(seen, _)| *seen != value) {
                    arms.push((value, constant.ident.to_string()));
                }
            }
        }
        let ty = Ident::new(name, Span::call_site());
        let values = arms
            .iter()
            .map(|(value, _)| proc_macro2::Literal::u64_unsuffixed(*value));
        let names = arms.iter().map(|(_, name)| name);
        out.extend(quote! {
            impl #ty {
                /// The constant's name as the header spells it; `None` for
                /// a value the header does not name.
                pub const fn name(self) -> Option<&'static str> {
                    match self.0 {
                        #(#values => Some(#names),)*
                        _ => None,
                    }
                }
            }
        });
    }
    out
}

/// For each plain (unversioned) function name, the oldest `N` of its
/// `PFN_name_vN` typedefs: the version whose ABI the plain exported symbol,
/// and so the header's plain declaration, has. NVIDIA gives a changed ABI
/// a new name (`_v2`) rather than change a plain one.
fn proc_versions(typedefs: &str, functions: &[syn::Signature]) -> Vec<(String, u32)> {
    let mut oldest = std::collections::BTreeMap::<&str, u32>::new();
    for chunk in typedefs.split("*PFN_").skip(1) {
        let end = chunk
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(chunk.len());
        let Some((name, version)) = chunk[..end].rsplit_once("_v") else {
            continue;
        };
        if let Ok(version) = version.parse::<u32>() {
            let entry = oldest.entry(name).or_insert(version);
            *entry = (*entry).min(version);
        }
    }
    functions
        .iter()
        .map(|sig| sig.ident.to_string())
        .filter(|name| !is_versioned(name))
        .filter_map(|name| oldest.get(name.as_str()).map(|&v| (name, v)))
        .collect()
}

/// `cuX_v2`, `cuX_ptds`: names that fix their ABI themselves.
fn is_versioned(name: &str) -> bool {
    name.ends_with("_ptds")
        || name.ends_with("_ptsz")
        || name.rsplit_once("_v").is_some_and(|(_, digits)| {
            !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
        })
}

fn function_table(
    binding: &Binding,
    functions: &[syn::Signature],
    proc_versions: Option<Vec<(String, u32)>>,
) -> TokenStream {
    let table = Ident::new(binding.table, Span::call_site());
    let library = binding.library;
    let doc = binding.doc;
    let count = functions.len();
    let mut pfn_types = Vec::new();
    let mut fields = Vec::new();
    let mut loads = Vec::new();
    let mut methods = Vec::new();
    let mut names = Vec::new();
    for sig in functions {
        let name = &sig.ident;
        let name_str = name.to_string();
        let pfn = Ident::new(&format!("PFN_{name_str}"), Span::call_site());
        let inputs = &sig.inputs;
        let output = &sig.output;
        let arg_names: Vec<_> = inputs
            .iter()
            .filter_map(|arg| match arg {
                syn::FnArg::Typed(pat) => Some(pat.pat.clone()),
                syn::FnArg::Receiver(_) => None,
            })
            .collect();
        let c_name = syn::LitCStr::new(
            &std::ffi::CString::new(name_str.clone()).expect("C identifiers have no NUL"),
            Span::call_site(),
        );
        let ret = match output {
            syn::ReturnType::Default => quote!(()),
            syn::ReturnType::Type(_, ty) => quote!(#ty),
        };
        let method_doc = format!("Calls `{name_str}`; `Err` when the loaded {library} lacks it.");
        pfn_types.push(quote! {
            pub type #pfn = unsafe extern "C" fn(#inputs) #output;
        });
        fields.push(quote! { pub #name: Option<#pfn>, });
        loads.push(quote! {
            // SAFETY: `resolve` returns the address of this very symbol or
            // null; `Option<fn>` has the layout of a nullable pointer.
            #name: unsafe { core::mem::transmute::<*mut core::ffi::c_void, Option<#pfn>>(resolve(#c_name)) },
        });
        methods.push(quote! {
            #[doc = #method_doc]
            ///
            /// # Safety
            /// The C function's own contract applies to every argument.
            #[inline]
            pub unsafe fn #name(&self, #inputs) -> Result<#ret, crate::SymbolUnavailable> {
                match self.#name {
                    // SAFETY: the caller upholds the C contract.
                    Some(__pfn) => Ok(unsafe { __pfn(#(#arg_names),*) }),
                    None => Err(crate::SymbolUnavailable { library: #library, symbol: #name_str }),
                }
            }
        });
        names.push(c_name);
    }
    let idents: Vec<&Ident> = functions.iter().map(|s| &s.ident).collect();
    let proc_version_items = proc_versions.map(|versions| {
        let count = versions.len();
        let entries = versions.iter().map(|(name, version)| {
            let c_name = syn::LitCStr::new(
                &std::ffi::CString::new(name.as_str()).expect("C identifiers have no NUL"),
                Span::call_site(),
            );
            let version = *version as i32;
            quote! { (#c_name, #version) }
        });
        quote! {
            /// Plain names and the version at which `cuGetProcAddress`
            /// returns the ABI their declaration has (from `cudaTypedefs.h`),
            /// sorted by name.
            pub const PROC_VERSIONS: [(&'static core::ffi::CStr, i32); #count] = [#(#entries),*];

            /// The `cuGetProcAddress` version of a plain name's declared ABI.
            pub fn proc_version(name: &core::ffi::CStr) -> Option<i32> {
                Self::PROC_VERSIONS
                    .binary_search_by(|(entry, _)| (*entry).cmp(name))
                    .ok()
                    .map(|at| Self::PROC_VERSIONS[at].1)
            }
        }
    });
    quote! {
        #(#pfn_types)*

        #[doc = #doc]
        ///
        /// Each field is `None` where the library does not export the symbol.
        /// The addresses are valid only while the library they came from
        /// stays loaded, so the table is neither `Clone` nor `Copy`: it lives
        /// next to the library handle that keeps them valid.
        pub struct #table {
            #(#fields)*
        }

        impl #table {
            /// Every symbol name of the table, in field order.
            pub const SYMBOLS: [&'static core::ffi::CStr; #count] = [#(#names),*];

            /// Fills the table by asking `resolve` for each symbol.
            ///
            /// # Safety
            /// `resolve` must return null or the address of a function
            /// with the C signature that the header declares for that name.
            /// The library those addresses belong to must stay loaded for as
            /// long as the table, or a function pointer copied out of it, is
            /// used.
            pub unsafe fn load(mut resolve: impl FnMut(&core::ffi::CStr) -> *mut core::ffi::c_void) -> Self {
                Self { #(#loads)* }
            }

            #proc_version_items

            #(#methods)*
        }

        impl core::fmt::Debug for #table {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                let loaded = [#(self.#idents.is_some()),*];
                f.debug_struct(stringify!(#table))
                    .field("symbols", &#count)
                    .field("resolved", &loaded.iter().filter(|&&b| b).count())
                    .finish()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::is_versioned;

    /// The one copy of this rule; the driver's generated `proc_version`
    /// table applies it.
    #[test]
    fn versioned_names_fix_their_abi() {
        for name in [
            "cuMemAlloc_v2",
            "cuCtxCreate_v4",
            "cuMemcpy_ptds",
            "cuLaunch_ptsz",
        ] {
            assert!(is_versioned(name), "{name}");
        }
        for name in ["cuLibraryLoadData", "cuInit", "cuFoo_vx", "cuFoo_v"] {
            assert!(!is_versioned(name), "{name}");
        }
    }
}
