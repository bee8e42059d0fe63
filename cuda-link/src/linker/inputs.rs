//! What a linker learns of each input from our own inspection before the
//! backend sees it: executable cubins in any container (nvJitLink drops
//! their kernels), strong definitions (nvJitLink 13 reports a duplicate on
//! stderr only, and links), and LTO-IR in any container (which needs
//! `-lto`).

use crate::cubin::{CubinInfo, ElfType};
use crate::error::Reason;
use crate::inspect::{Contents, FatbinInfo, NameList, Payload};
use crate::{Arch, ObjectCode};

use super::LinkError;
use crate::fatbin::EntryKind;

/// One input's facts.
#[derive(Debug, Clone, Default)]
pub(crate) struct InputFacts {
    /// Strong definitions, each with where in the input it is: `None` for
    /// the input itself, `Some(member)` inside an archive. nvJitLink pulls
    /// in every archive member, so members count as separate inputs.
    strong_symbols: Vec<(String, Option<String>)>,
    /// Arches of the LTO-IR it carries, bare or in a container.
    pub ltoir_arches: Vec<Arch>,
    /// Whether it is LTO-IR itself, which always needs LTO (and nvJitLink
    /// then names an arch mismatch).
    bare_ltoir: bool,
}

impl InputFacts {
    /// Reads `contents`, refusing executable cubins wherever they are.
    pub fn of(contents: &Contents) -> Result<Self, Reason> {
        let refuse = |place: Option<String>| match place {
            Some(place) => Reason::inside(place, Reason::ExecutableCubin),
            None => Reason::ExecutableCubin,
        };
        let mut facts = InputFacts::default();
        match contents {
            Contents::Cubin(info) => {
                if info.elf_type == ElfType::Executable {
                    return Err(refuse(None));
                }
                facts.add_strong(&info.strong_symbols, None);
            }
            Contents::Ptx(info) => facts.add_strong(&info.strong_symbols, None),
            Contents::Ltoir(info) => {
                facts.ltoir_arches.push(info.arch);
                facts.bare_ltoir = true;
            }
            Contents::Fatbin(fatbin) => facts.add_fatbin(fatbin, "", None).map_err(refuse)?,
            Contents::Object(object) => {
                for embedded in &object.fatbins {
                    let place =
                        format!("fatbin in {} at {:#x}, ", embedded.section, embedded.offset);
                    facts
                        .add_fatbin(&embedded.fatbin, &place, None)
                        .map_err(refuse)?;
                }
            }
            Contents::Library(library) => {
                for member in &library.members {
                    let Ok(object) = &member.object else { continue };
                    for embedded in &object.fatbins {
                        let place = format!("member {}, ", member.name);
                        facts
                            .add_fatbin(&embedded.fatbin, &place, Some(&member.name))
                            .map_err(refuse)?;
                    }
                }
            }
        }
        facts.strong_symbols.sort();
        facts.strong_symbols.dedup();
        Ok(facts)
    }

    /// Adds a fatbin's entries; `Err(place)` names an executable cubin.
    fn add_fatbin(
        &mut self,
        fatbin: &FatbinInfo,
        place: &str,
        member: Option<&String>,
    ) -> Result<(), Option<String>> {
        for entry in &fatbin.entries {
            match &entry.payload {
                Payload::Cubin(CubinInfo {
                    elf_type: ElfType::Executable,
                    ..
                }) => {
                    return Err(Some(format!(
                        "{place}fatbin entry {} ({} cubin)",
                        entry.index, entry.arch
                    )));
                }
                Payload::Cubin(info) => self.add_strong(&info.strong_symbols, member),
                Payload::Ptx(info) => self.add_strong(&info.strong_symbols, member),
                _ if entry.kind == EntryKind::Ltoir => self.ltoir_arches.push(entry.arch),
                _ => {}
            }
        }
        Ok(())
    }

    fn add_strong(&mut self, names: &NameList, member: Option<&String>) {
        self.strong_symbols
            .extend(names.iter().map(|name| (name.to_owned(), member.cloned())));
    }

    /// Whether it is LTO-IR, or carries LTO-IR a link for `target` would
    /// use.
    pub fn has_ltoir_for(&self, target: Option<&Arch>) -> bool {
        match target {
            _ if self.bare_ltoir => true,
            Some(target) => self
                .ltoir_arches
                .iter()
                .any(|arch| arch.ir_compatible_with(target)),
            None => !self.ltoir_arches.is_empty(),
        }
    }
}

/// The strong definitions of a link's inputs so far, each with where it
/// is: added to input by input, so a link of n inputs checks each symbol
/// once.
#[derive(Debug, Default)]
pub(super) struct Definitions {
    first: foldhash::HashMap<String, String>,
}

impl Definitions {
    /// Records `input`'s strong definitions, or fails, recording nothing,
    /// when one of them is already defined by an earlier input or by
    /// another member of its own archive. Weak definitions (template
    /// instantiations, inline functions) are not strong and pass.
    pub fn admit(&mut self, input: &ObjectCode, facts: &InputFacts) -> Result<(), LinkError> {
        let place = |member: &Option<String>| match member {
            Some(member) => format!("{} (member {member})", input.name()),
            None => input.name().to_owned(),
        };
        let mut own = foldhash::HashMap::<&str, &Option<String>>::default();
        for (name, member) in &facts.strong_symbols {
            let first = match (self.first.get(name), own.get(name.as_str())) {
                (Some(first), _) => Some(first.clone()),
                (None, Some(other)) if *other != member => Some(place(other)),
                _ => None,
            };
            if let Some(first) = first {
                return Err(LinkError::DuplicateDefinition {
                    symbol: name.clone(),
                    first,
                    second: place(member),
                });
            }
            own.insert(name, member);
        }
        for (name, member) in own {
            self.first.insert(name.to_owned(), place(member));
        }
        Ok(())
    }
}
