//! The result of [`ObjectCode::inspect`](crate::ObjectCode::inspect): a
//! tree that prints as a table and serialises to JSON.

use std::fmt::{self, Write as _};

use crate::arch::Arch;
use crate::kind::ObjectKind;

pub use crate::cubin::{CubinInfo, ElfType};
pub use crate::fatbin::{Compression, EntryKind};
pub use crate::ltoir::LtoirInfo;
pub use crate::names::NameList;
pub use crate::nvvm_ir::{NvvmIrForm, NvvmIrInfo};
pub use crate::ptx::PtxInfo;

/// Everything an object holds.
#[derive(Debug, Clone)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct Inspection {
    /// The object's name.
    pub name: String,
    /// Its kind.
    pub kind: ObjectKind,
    /// Its size in bytes.
    pub size: usize,
    /// What is inside.
    pub contents: Contents,
}

/// Kind-specific contents.
#[derive(Debug, Clone)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[non_exhaustive]
pub enum Contents {
    /// A cubin's arch and symbols.
    Cubin(CubinInfo),
    /// A PTX module's header and kernels.
    Ptx(PtxInfo),
    /// An LTO-IR header.
    Ltoir(LtoirInfo),
    /// An NVVM IR module's target, version, kernels and functions.
    NvvmIr(NvvmIrInfo),
    /// A fatbin's entries.
    Fatbin(FatbinInfo),
    /// A host object's embedded fatbins.
    Object(ObjectInfo),
    /// An archive's members.
    Archive(ArchiveInfo),
}

/// The entries of one fatbin.
#[derive(Debug, Clone)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct FatbinInfo {
    /// In order.
    pub entries: Vec<EntryInfo>,
}

/// One fatbin entry and, where decodable, what it holds.
#[derive(Debug, Clone)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct EntryInfo {
    /// Position in the fatbin.
    pub index: usize,
    /// PTX, cubin, LTO-IR, ...
    pub kind: EntryKind,
    /// Target architecture, with `a` / `f`.
    pub arch: Arch,
    /// The raw flags word.
    pub flags: u64,
    /// How the payload is stored.
    pub compression: Compression,
    /// Stored payload bytes.
    pub stored_size: u64,
    /// Size after decompression (equal to the stored size when plain).
    pub uncompressed_size: u64,
    /// PTX ISA, ELF ABI or LTO-IR format version, `"major.minor"`.
    pub version: String,
    /// The identifier, if any.
    pub identifier: Option<String>,
    /// Recorded compile options, if any.
    pub options: Option<String>,
    /// The decoded payload.
    pub payload: Payload,
}

/// What a fatbin entry's payload turned out to be.
#[derive(Debug, Clone)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[non_exhaustive]
pub enum Payload {
    /// An inner cubin.
    Cubin(CubinInfo),
    /// Inner PTX.
    Ptx(PtxInfo),
    /// An inner LTO-IR header.
    Ltoir(LtoirInfo),
    /// Compressed LTO-IR: listed and linkable, but encoded.
    Opaque,
    /// A kind this parser does not decode.
    Unknown,
    /// Decoding failed.
    Error(String),
}

/// A host object's fatbins.
#[derive(Debug, Clone)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct ObjectInfo {
    /// The host architecture.
    pub machine: String,
    /// Each embedded fatbin.
    pub fatbins: Vec<EmbeddedInfo>,
}

/// One fatbin inside a host object.
#[derive(Debug, Clone)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct EmbeddedInfo {
    /// The section.
    pub section: String,
    /// Offset in the section.
    pub offset: u64,
    /// The fatbin.
    pub fatbin: FatbinInfo,
}

/// An archive's members.
#[derive(Debug, Clone)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct ArchiveInfo {
    /// In order.
    pub members: Vec<MemberInfo>,
}

/// One archive member.
#[derive(Debug, Clone)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct MemberInfo {
    /// Its name.
    pub name: String,
    /// Its size.
    pub size: usize,
    /// Its device code, or why it has none.
    pub object: Result<ObjectInfo, String>,
}

impl Inspection {
    /// Every kernel name found anywhere inside, deduplicated, in order.
    pub fn kernels(&self) -> Vec<&str> {
        if let Contents::Ptx(info) = &self.contents {
            // Already deduplicated by the PTX reader.
            return info.kernels.iter().map(String::as_str).collect();
        }
        let lists = self.kernel_lists();
        let mut seen = foldhash::HashSet::with_capacity_and_hasher(
            lists.iter().map(|list| list.len()).sum(),
            foldhash::fast::RandomState::default(),
        );
        lists
            .into_iter()
            .flatten()
            .map(String::as_str)
            .filter(|name| seen.insert(*name))
            .collect()
    }

    fn kernel_lists(&self) -> Vec<&[String]> {
        match &self.contents {
            Contents::Cubin(info) => vec![&info.kernels],
            Contents::Ptx(info) => vec![&info.kernels],
            Contents::Ltoir(_) => Vec::new(),
            Contents::NvvmIr(info) => vec![&info.kernels],
            _ => self
                .fatbin_entries()
                .filter_map(|entry| match &entry.payload {
                    Payload::Cubin(info) => Some(info.kernels.as_slice()),
                    Payload::Ptx(info) => Some(info.kernels.as_slice()),
                    _ => None,
                })
                .collect(),
        }
    }

    /// Replaces every C++ kernel name with its [`demangle`](crate::demangle)d
    /// form (`saxpy<float>`), the name `cuda-module` also finds it by.
    pub fn demangle_kernels(&mut self) {
        let rename = |names: &mut Vec<String>| {
            for name in names.iter_mut() {
                if let Some(demangled) = crate::demangle(name) {
                    *name = demangled;
                }
            }
        };
        let fatbin = |fatbin: &mut FatbinInfo| {
            for entry in &mut fatbin.entries {
                match &mut entry.payload {
                    Payload::Cubin(info) => rename(&mut info.kernels),
                    Payload::Ptx(info) => rename(&mut info.kernels),
                    _ => {}
                }
            }
        };
        match &mut self.contents {
            Contents::Cubin(info) => rename(&mut info.kernels),
            Contents::Ptx(info) => rename(&mut info.kernels),
            Contents::Ltoir(_) => {}
            Contents::NvvmIr(info) => rename(&mut info.kernels),
            Contents::Fatbin(info) => fatbin(info),
            Contents::Object(object) => object
                .fatbins
                .iter_mut()
                .for_each(|e| fatbin(&mut e.fatbin)),
            Contents::Archive(archive) => archive
                .members
                .iter_mut()
                .filter_map(|m| m.object.as_mut().ok())
                .flat_map(|o| o.fatbins.iter_mut())
                .for_each(|e| fatbin(&mut e.fatbin)),
        }
    }

    /// Every architecture inside, sorted and deduplicated.
    pub fn arches(&self) -> Vec<Arch> {
        let mut arches = Vec::new();
        match &self.contents {
            Contents::Cubin(info) => arches.push(info.arch),
            Contents::Ltoir(info) => arches.push(info.arch),
            Contents::Ptx(info) => {
                arches.extend(info.target.iter().filter_map(|t| t.parse::<Arch>().ok()))
            }
            _ => arches.extend(self.fatbin_entries().map(|e| e.arch)),
        }
        arches.sort();
        arches.dedup();
        arches
    }

    /// Every fatbin entry, from a fatbin, a host object or an archive.
    pub fn fatbin_entries(&self) -> impl Iterator<Item = &EntryInfo> {
        self.fatbins().into_iter().flat_map(|f| f.entries.iter())
    }

    /// Every fatbin, from a fatbin, a host object or an archive.
    pub fn fatbins(&self) -> Vec<&FatbinInfo> {
        let objects: Vec<&ObjectInfo> = match &self.contents {
            Contents::Fatbin(fatbin) => return vec![fatbin],
            Contents::Object(object) => vec![object],
            Contents::Archive(archive) => archive
                .members
                .iter()
                .filter_map(|m| m.object.as_ref().ok())
                .collect(),
            _ => return Vec::new(),
        };
        objects
            .into_iter()
            .flat_map(|o| o.fatbins.iter().map(|e| &e.fatbin))
            .collect()
    }

    #[cfg(feature = "serde")]
    /// The inspection as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    }
}

impl fmt::Display for Inspection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}: {}, {} bytes", self.name, self.kind, self.size)?;
        match &self.contents {
            Contents::Cubin(info) => write_cubin(f, info, "  "),
            Contents::Ptx(info) => write_ptx(f, info, "  "),
            Contents::Ltoir(info) => {
                writeln!(f, "  arch {}, NVVM {}", info.arch, info.nvvm_generation)
            }
            Contents::NvvmIr(info) => write_nvvm_ir(f, info),
            Contents::Fatbin(fatbin) => write_fatbin(f, fatbin, "  "),
            Contents::Object(object) => write_object(f, object, "  "),
            Contents::Archive(archive) => {
                for member in &archive.members {
                    write!(f, "  member {} ({} bytes)", member.name, member.size)?;
                    match &member.object {
                        Ok(object) => {
                            writeln!(f)?;
                            write_object(f, object, "    ")?;
                        }
                        Err(why) => writeln!(f, ": skipped, {why}")?,
                    }
                }
                Ok(())
            }
        }
    }
}

fn write_cubin(f: &mut fmt::Formatter<'_>, info: &CubinInfo, indent: &str) -> fmt::Result {
    writeln!(
        f,
        "{indent}arch {}, ELF ABI v{}, {:?}",
        info.arch, info.abi_version, info.elf_type
    )?;
    writeln!(
        f,
        "{indent}{}, {}, {}",
        count(info.kernels.len(), "kernel"),
        count(info.device_functions.len(), "device function"),
        count(info.globals.len(), "global")
    )?;
    write_names(f, "kernels", &info.kernels, indent)
}

fn write_ptx(f: &mut fmt::Formatter<'_>, info: &PtxInfo, indent: &str) -> fmt::Result {
    let address = info
        .address_size
        .map(|a| format!(", address size {a}"))
        .unwrap_or_default();
    writeln!(
        f,
        "{indent}PTX ISA {}, target {}{address}{}",
        info.version,
        info.target.join(", "),
        jit_by(&info.version)
    )?;
    write_names(f, "kernels", &info.kernels, indent)?;
    write_names(f, "device functions", &info.functions, indent)
}

/// `"; JIT from driver 580 (CUDA 13.0) on"`: the oldest driver that
/// JIT-compiles PTX of ISA `version`; nothing for a version that does not
/// parse.
fn jit_by(version: &str) -> String {
    version
        .parse::<crate::PtxIsa>()
        .map(|isa| format!("; JIT from {} on", isa.oldest_driver()))
        .unwrap_or_default()
}

/// `1 kernel`, `2 kernels`.
fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

fn write_names(
    f: &mut fmt::Formatter<'_>,
    label: &str,
    names: &[String],
    indent: &str,
) -> fmt::Result {
    const SHOWN: usize = 8;
    if names.is_empty() {
        return Ok(());
    }
    // User names first: toolkit internals (`__nv_static_...`) are long and many.
    let (user, internal): (Vec<&String>, Vec<&String>) =
        names.iter().partition(|n| !n.starts_with("__"));
    let shown: Vec<&str> = user
        .into_iter()
        .chain(internal)
        .take(SHOWN)
        .map(String::as_str)
        .collect();
    let mut line = shown.join(", ");
    if names.len() > SHOWN {
        let _ = write!(line, ", ... ({} more)", names.len() - SHOWN);
    }
    writeln!(f, "{indent}{label}: {line}")
}

fn write_object(f: &mut fmt::Formatter<'_>, object: &ObjectInfo, indent: &str) -> fmt::Result {
    writeln!(f, "{indent}host machine {}", object.machine)?;
    for embedded in &object.fatbins {
        writeln!(
            f,
            "{indent}fatbin in {} at {:#x}:",
            embedded.section, embedded.offset
        )?;
        write_fatbin(f, &embedded.fatbin, &format!("{indent}  "))?;
    }
    Ok(())
}

fn write_nvvm_ir(f: &mut fmt::Formatter<'_>, info: &NvvmIrInfo) -> fmt::Result {
    let unstated = |value: &Option<String>| value.clone().unwrap_or_else(|| "none".into());
    match info.form {
        NvvmIrForm::Bitcode => {
            return writeln!(f, "  bitcode (its contents are libNVVM's to read)");
        }
        NvvmIrForm::Text => {}
    }
    let version = info.ir_version.map_or_else(
        || "none".to_owned(),
        |(major, minor)| format!("{major}.{minor}"),
    );
    writeln!(
        f,
        "  triple {}, nvvmir.version {version}",
        unstated(&info.triple)
    )?;
    writeln!(f, "  datalayout {}", unstated(&info.datalayout))?;
    writeln!(
        f,
        "  {}, {} defined, {} declared",
        count(info.kernels.len(), "kernel"),
        count(info.defined.len(), "function"),
        info.declared.len()
    )?;
    for kernel in &info.kernels {
        writeln!(f, "    {kernel}")?;
    }
    Ok(())
}

fn write_fatbin(f: &mut fmt::Formatter<'_>, fatbin: &FatbinInfo, indent: &str) -> fmt::Result {
    writeln!(
        f,
        "{indent}{:>3}  {:<10} {:<8} {:<6} {:>10} {:>12}  {:<7} contents",
        "#", "kind", "arch", "codec", "stored", "uncompressed", "version"
    )?;
    for entry in &fatbin.entries {
        let contents = match &entry.payload {
            Payload::Cubin(info) => {
                format!(
                    "{} ({:?})",
                    count(info.kernels.len(), "kernel"),
                    info.elf_type
                )
            }
            Payload::Ptx(info) => {
                format!(
                    "{} (PTX {}{})",
                    count(info.kernels.len(), "kernel"),
                    info.version,
                    jit_by(&info.version)
                )
            }
            Payload::Ltoir(info) => format!("LTO-IR {}", info.arch),
            Payload::Opaque => "encoded LTO-IR".to_owned(),
            Payload::Unknown => "-".to_owned(),
            Payload::Error(why) => format!("error: {why}"),
        };
        writeln!(
            f,
            "{indent}{:>3}  {:<10} {:<8} {:<6} {:>10} {:>12}  {:<7} {contents}",
            entry.index,
            entry.kind.name(),
            entry.arch.to_string(),
            entry.compression.name(),
            entry.stored_size,
            entry.uncompressed_size,
            entry.version,
        )?;
    }
    Ok(())
}
