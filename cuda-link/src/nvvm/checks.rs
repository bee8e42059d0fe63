//! What libNVVM gets wrong silently, checked: definitions dropped for
//! the order modules were added in, and functions left unresolved, on the
//! text modules before a compile and on the PTX after it.

use std::collections::{HashMap, HashSet};

use super::NvvmRequest;
use crate::inspect::{NvvmIrForm, NvvmIrInfo};
use crate::kind::ObjectKind;
use crate::nvvm_program::NvvmFailure;
use crate::object_code::ObjectCode;

/// Functions a GPU program calls that no module defines and nothing links
/// in: the driver resolves them when it loads the code.
const SYSTEM_FUNCTIONS: [&str; 4] = ["vprintf", "malloc", "free", "__assertfail"];

/// Each module's contents, refusing inputs that are not NVVM IR; `None`
/// for bitcode, whose functions are libNVVM's to read.
pub(super) fn module_infos(
    modules: &[ObjectCode],
) -> Result<Vec<(&str, Option<&NvvmIrInfo>)>, NvvmFailure> {
    modules
        .iter()
        .map(|module| match module.kind() {
            ObjectKind::NvvmIr => Ok((
                module.name(),
                module.nvvm_ir().filter(|ir| ir.form == NvvmIrForm::Text),
            )),
            other => Err(NvvmFailure::Input {
                name: module.name().to_owned(),
                detail: format!("{other} is not NVVM IR"),
            }),
        })
        .collect()
}

/// Which functions are resolved by something other than the modules:
/// before the compile, libdevice's `__nv_*` when it is added; after it,
/// an `__nv_*` left in the PTX is one libdevice lacks.
fn resolved_elsewhere(name: &str, request: &NvvmRequest<'_>, compiled: bool) -> bool {
    SYSTEM_FUNCTIONS.contains(&name)
        || name == "__nvvm_reflect"
        || (!compiled && request.libdevice.is_some() && name.starts_with("__nv_"))
        || request.resolved_later.iter().any(|later| later == name)
}

/// libNVVM's linking of the text modules, simulated: the first module
/// keeps every definition; a later module's `linkonce` definition is kept
/// if a module before it calls it, or its own module names it (which may
/// keep more than libNVVM does: the PTX check sees the rest). A call left
/// with no kept definition is an error; so is one defined nowhere. With a
/// bitcode module, whose functions cannot be read here, only the PTX
/// check runs.
pub(super) fn check_order(
    infos: &[(&str, Option<&NvvmIrInfo>)],
    request: &NvvmRequest<'_>,
) -> Result<(), NvvmFailure> {
    let mut called: HashSet<&str> = HashSet::new();
    let mut kept: HashSet<&str> = HashSet::new();
    let mut dropped: HashMap<&str, &str> = HashMap::new();
    for (index, (name, info)) in infos.iter().enumerate() {
        let Some(info) = info else { return Ok(()) };
        let discardable: HashSet<&str> = info.discardable.iter().collect();
        let own: HashSet<&str> = info.referenced.iter().collect();
        for function in info.defined.iter() {
            if index == 0
                || !discardable.contains(function)
                || called.contains(function)
                || own.contains(function)
            {
                kept.insert(function);
            } else if !kept.contains(function) {
                dropped.entry(function).or_insert(name);
            }
        }
        called.extend(info.declared.iter());
    }
    let mut unresolved = Vec::new();
    let mut seen = HashSet::new();
    for (user, info) in infos.iter().filter_map(|(n, i)| Some((*n, (*i)?))) {
        for function in info.declared.iter() {
            if kept.contains(function) || resolved_elsewhere(function, request, false) {
                continue;
            }
            if let Some(definer) = dropped.get(function) {
                return Err(NvvmFailure::DroppedByOrder {
                    function: function.to_owned(),
                    definer: (*definer).to_owned(),
                    user: user.to_owned(),
                });
            }
            if request.check_unresolved && seen.insert(function) {
                unresolved.push(function.to_owned());
            }
        }
    }
    match unresolved.is_empty() {
        true => Ok(()),
        false => Err(NvvmFailure::Unresolved {
            modules: infos.iter().map(|(n, _)| (*n).to_owned()).collect(),
            functions: unresolved,
        }),
    }
}

/// The PTX's `.extern .func` declarations that nothing resolves.
pub(super) fn check_ptx(
    ptx: &[u8],
    infos: &[(&str, Option<&NvvmIrInfo>)],
    request: &NvvmRequest<'_>,
) -> Result<(), NvvmFailure> {
    let text = String::from_utf8_lossy(ptx);
    // The `linkonce` definitions libNVVM may drop, by function.
    let definers: HashMap<&str, &str> = infos
        .iter()
        .filter_map(|(module, info)| Some((*module, (*info)?)))
        .flat_map(|(module, info)| info.discardable.iter().map(move |f| (f, module)))
        .collect();
    let unresolved: Vec<String> = extern_functions(&text)
        .filter(|name| !resolved_elsewhere(name, request, true))
        .filter(|name| request.check_unresolved || definers.contains_key(name))
        .map(str::to_owned)
        .collect();
    if unresolved.is_empty() {
        return Ok(());
    }
    let definer = unresolved.iter().find_map(|function| {
        let module = definers.get(function.as_str())?;
        Some((function.clone(), (*module).to_owned()))
    });
    match definer {
        Some((function, definer)) => Err(NvvmFailure::DroppedByOrder {
            function,
            definer,
            user: "a module added after it".to_owned(),
        }),
        None => Err(NvvmFailure::Unresolved {
            modules: infos.iter().map(|(n, _)| (*n).to_owned()).collect(),
            functions: unresolved,
        }),
    }
}

/// The names of PTX's `.extern .func [(.param ...)] NAME(` lines.
fn extern_functions(ptx: &str) -> impl Iterator<Item = &str> {
    ptx.lines().filter_map(|line| {
        let rest = line.trim_start().strip_prefix(".extern")?.trim_start();
        let rest = rest.strip_prefix(".func")?.trim_start();
        let rest = match rest.strip_prefix('(') {
            Some(returns) => returns.split_once(')')?.1.trim_start(),
            None => rest,
        };
        let end = rest
            .find(|c: char| c == '(' || c == ';' || c.is_whitespace())
            .unwrap_or(rest.len());
        (end > 0).then(|| &rest[..end])
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Isolation;

    #[test]
    fn extern_functions_of_ptx() {
        let ptx = ".extern .func  (.param .b32 func_retval0) smooth\n(\n\
                   .extern .func vprintf(.param .b64 a);\n\
                   .visible .func f() {}\n   .extern .func __nv_sinf (";
        assert_eq!(
            extern_functions(ptx).collect::<Vec<_>>(),
            ["smooth", "vprintf", "__nv_sinf"]
        );
    }

    fn ir(name: &str, text: &str) -> ObjectCode {
        ObjectCode::from_nvvm_ir(
            format!("target triple = \"nvptx64-nvidia-cuda\"\n{text}"),
            name,
        )
        .unwrap()
    }

    fn request<'a>(modules: &'a [ObjectCode], libdevice: Option<&'a [u8]>) -> NvvmRequest<'a> {
        NvvmRequest {
            modules,
            libdevice,
            options: &[],
            resolved_later: &[],
            check_unresolved: true,
            isolation: Isolation::InProcess,
        }
    }

    #[test]
    fn a_linkonce_definition_before_its_user_is_dropped() {
        let definer = ir(
            "helper.ll",
            "define linkonce_odr void @h() {\n ret void\n}\n",
        );
        let user = ir(
            "kernel.ll",
            "declare void @h()\ndefine void @k() {\n ret void\n}\n",
        );
        let modules = [user.clone(), definer.clone()];
        let infos = module_infos(&modules).unwrap();
        assert_eq!(check_order(&infos, &request(&modules, None)), Ok(()));
        let modules = [
            ir("first.ll", "define void @x() {\n ret void\n}\n"),
            definer,
            user,
        ];
        let infos = module_infos(&modules).unwrap();
        assert!(matches!(
            check_order(&infos, &request(&modules, None)),
            Err(NvvmFailure::DroppedByOrder { function, definer, user })
                if function == "h" && definer == "helper.ll" && user == "kernel.ll"
        ));
    }

    #[test]
    fn unresolved_functions_and_libdevice() {
        let modules = [ir(
            "k.ll",
            "declare double @__nv_sin(double)\ndeclare void @vprintf()\n",
        )];
        let infos = module_infos(&modules).unwrap();
        let without = check_order(&infos, &request(&modules, None));
        assert!(
            matches!(&without, Err(NvvmFailure::Unresolved { functions, .. }) if functions == &["__nv_sin"]),
            "{without:?}"
        );
        assert!(without.unwrap_err().to_string().contains("link libdevice"));
        assert_eq!(check_order(&infos, &request(&modules, Some(b"BC"))), Ok(()));
        let later = ["__nv_sin".to_owned()];
        let resolved = NvvmRequest {
            resolved_later: &later,
            ..request(&modules, None)
        };
        assert_eq!(check_order(&infos, &resolved), Ok(()));
        // After the compile, an `__nv_*` left in the PTX is one libdevice
        // lacks.
        let ptx = b".extern .func (.param .b64 r) __nv_sinn(.param .b64 x);\n";
        let checked = check_ptx(ptx, &infos, &request(&modules, Some(b"BC")));
        assert!(
            matches!(checked, Err(NvvmFailure::Unresolved { .. })),
            "{checked:?}"
        );
    }

    /// Definitions libNVVM keeps, which the check must not call dropped:
    /// one named by its own module's code (a call, a global's
    /// initializer), and an alias's target.
    #[test]
    fn what_a_module_names_itself_is_kept() {
        let first = ir("first.ll", "define void @x() {\n ret void\n}\n");
        let calls = ir(
            "calls.ll",
            "define void @a() {\n  call void @b()\n  ret void\n}\n\
             define linkonce_odr void @b() {\n  ret void\n}\n\
             @g = global void ()* @h\n\
             define linkonce_odr void @h() {\n  ret void\n}\n\
             @c = alias void (), void ()* @a\n",
        );
        let user = ir(
            "user.ll",
            "declare void @b()\ndeclare void @h()\ndeclare void @c()\n",
        );
        let modules = [first, calls, user];
        let infos = module_infos(&modules).unwrap();
        assert_eq!(check_order(&infos, &request(&modules, None)), Ok(()));
    }

    /// A text module that calls what a bitcode module defines: the
    /// bitcode cannot be read, so nothing is called unresolved before the
    /// compile.
    #[test]
    fn bitcode_defers_to_the_ptx_check() {
        let text = ir("k.ll", "declare void @defined_in_bitcode()\n");
        let bitcode = ObjectCode::from_nvvm_ir(&b"BC\xC0\xDE\x35\x14\x00\x00"[..], "d.bc").unwrap();
        let modules = [text, bitcode];
        let infos = module_infos(&modules).unwrap();
        assert_eq!(check_order(&infos, &request(&modules, None)), Ok(()));
    }
}
