//! What a linker must know of an input, read from its contents before a
//! backend sees it: executable cubins in any container (nvJitLink drops
//! their kernels), strong definitions (nvJitLink 13 reports a duplicate on
//! stderr only, and links), and LTO-IR in any container (which needs
//! `-lto`).

use crate::arch::Arch;
use crate::error::Reason;
use crate::inspect::{Contents, FatbinInfo, NameList, Payload};
use crate::inspect::{ElfType, EntryKind};

/// One input's facts. Strong symbols are not copied here: they are read
/// from the contents, where they already are, by [`strong_symbols`].
#[derive(Debug, Clone, Default)]
pub(crate) struct LinkFacts {
    /// Arches of the LTO-IR it carries, bare or in a container.
    pub ltoir_arches: Vec<Arch>,
    /// Whether it is LTO-IR itself, which always needs LTO (and nvJitLink
    /// then names an arch mismatch).
    bare_ltoir: bool,
}

impl LinkFacts {
    /// Reads `contents`, refusing executable cubins wherever they are.
    pub fn of(contents: &Contents) -> Result<Self, Reason> {
        let mut facts = LinkFacts::default();
        let refuse = |place: Option<String>| match place {
            Some(place) => Reason::inside(place, Reason::ExecutableCubin),
            None => Reason::ExecutableCubin,
        };
        match contents {
            Contents::Cubin(info) if info.elf_type == ElfType::Executable => {
                return Err(refuse(None));
            }
            Contents::Cubin(_) | Contents::Ptx(_) => {}
            // Compiled to LTO-IR for the link's arch.
            Contents::NvvmIr(_) => facts.bare_ltoir = true,
            Contents::Ltoir(info) => {
                facts.ltoir_arches.push(info.arch);
                facts.bare_ltoir = true;
            }
            _ => {
                for placed in fatbins(contents) {
                    facts
                        .add_fatbin(placed.fatbin, &placed.place)
                        .map_err(refuse)?;
                }
            }
        }
        Ok(facts)
    }

    /// Adds a fatbin's entries; `Err(place)` names an executable cubin.
    fn add_fatbin(&mut self, fatbin: &FatbinInfo, place: &str) -> Result<(), Option<String>> {
        for entry in &fatbin.entries {
            match &entry.payload {
                Payload::Cubin(info) if info.elf_type == ElfType::Executable => {
                    return Err(Some(format!(
                        "{place}fatbin entry {} ({} cubin)",
                        entry.index, entry.arch
                    )));
                }
                _ if entry.kind == EntryKind::Ltoir => self.ltoir_arches.push(entry.arch),
                _ => {}
            }
        }
        Ok(())
    }

    /// Whether it is LTO-IR, or carries LTO-IR a link for `target` would
    /// use.
    pub fn has_ltoir_for(&self, target: &Arch) -> bool {
        self.bare_ltoir
            || self
                .ltoir_arches
                .iter()
                .any(|arch| arch.ir_compatible_with(target))
    }
}

/// A fatbin inside an input: where it is, for messages, and the archive
/// member it is in.
struct Placed<'a> {
    place: String,
    member: Option<&'a str>,
    fatbin: &'a FatbinInfo,
}

/// The fatbins of a fatbin, host object or archive.
fn fatbins(contents: &Contents) -> Vec<Placed<'_>> {
    match contents {
        Contents::Fatbin(fatbin) => vec![Placed {
            place: String::new(),
            member: None,
            fatbin,
        }],
        Contents::Object(object) => object
            .fatbins
            .iter()
            .map(|e| Placed {
                place: format!("fatbin in {} at {:#x}, ", e.section, e.offset),
                member: None,
                fatbin: &e.fatbin,
            })
            .collect(),
        Contents::Archive(archive) => archive
            .members
            .iter()
            .filter_map(|member| Some((member, member.object.as_ref().ok()?)))
            .flat_map(|(member, object)| {
                object.fatbins.iter().map(move |e| Placed {
                    place: format!("member {}, ", member.name),
                    member: Some(member.name.as_str()),
                    fatbin: &e.fatbin,
                })
            })
            .collect(),
        Contents::Cubin(_) | Contents::Ptx(_) | Contents::Ltoir(_) | Contents::NvvmIr(_) => {
            Vec::new()
        }
    }
}

/// Every strong definition, with the archive member it is in (`None`
/// outside archives): nvJitLink pulls in every archive member, so members
/// count as separate inputs. Borrowed from the contents, not copied.
pub(crate) fn strong_symbols(contents: &Contents) -> Vec<(&str, Option<&str>)> {
    fn with<'a>(
        names: &'a NameList,
        member: Option<&'a str>,
    ) -> impl Iterator<Item = (&'a str, Option<&'a str>)> {
        names.iter().map(move |name| (name, member))
    }
    match contents {
        Contents::Cubin(info) => with(&info.strong_symbols, None).collect(),
        Contents::Ptx(info) => with(&info.strong_symbols, None).collect(),
        _ => fatbins(contents)
            .into_iter()
            .flat_map(|placed| {
                placed
                    .fatbin
                    .entries
                    .iter()
                    .filter_map(|entry| match &entry.payload {
                        Payload::Cubin(info) => Some(&info.strong_symbols),
                        Payload::Ptx(info) => Some(&info.strong_symbols),
                        _ => None,
                    })
                    .flat_map(move |names| with(names, placed.member))
            })
            .collect(),
    }
}
