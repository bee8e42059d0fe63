//! `cuda-link fatbin`: packs cubins, PTX and LTO-IR into one fatbin with
//! the pure-Rust writer, each arch taken from the file or from `FILE:sm_XX`.

use std::path::{Path, PathBuf};

use cuda_link::inspect::Compression;
use cuda_link::{Arch, FatbinBuilder, ObjectCode};

use crate::{Failure, report};

/// The flags of `fatbin`.
#[derive(clap::Args)]
pub(crate) struct FatbinArgs {
    /// Output file.
    #[arg(short, long)]
    pub(crate) output: PathBuf,
    /// Inputs: cubins, PTX, LTO-IR. `FILE:sm_XX` puts it in that slot
    /// (PTX for sm_80 in the sm_90 slot, say); otherwise its own arch.
    #[arg(required = true)]
    pub(crate) inputs: Vec<String>,
    /// How entries are stored: none (the default), lz4 (nvFatbin's
    /// -compress-mode=speed) or zstd (its default, size and balance
    /// modes). LTO-IR stays plain.
    #[arg(long, value_enum, default_value = "none")]
    pub(crate) compress: CompressArg,
    /// Refuse executable cubins: the fatbin is for linking.
    #[arg(long)]
    pub(crate) relocatable: bool,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub(crate) enum CompressArg {
    None,
    Lz4,
    Zstd,
}

impl CompressArg {
    pub(crate) fn compression(self) -> Compression {
        match self {
            CompressArg::None => Compression::None,
            CompressArg::Lz4 => Compression::Lz4,
            CompressArg::Zstd => Compression::Zstd,
        }
    }
}

/// `FILE` or `FILE:ARCH`: the arch after the last `:` when it parses as
/// one, so a path holding a `:` still reads as a path.
fn split_input(input: &str) -> (&str, Option<Arch>) {
    match input.rsplit_once(':') {
        Some((path, arch)) => match arch.parse::<Arch>() {
            Ok(arch) => (path, Some(arch)),
            Err(_) => (input, None),
        },
        None => (input, None),
    }
}

/// Packs `args.inputs` into `args.output`.
pub fn run(args: FatbinArgs) -> Result<(), Failure> {
    let mut builder = FatbinBuilder::new()
        .compression(args.compress.compression())
        .relocatable(args.relocatable);
    for input in &args.inputs {
        let (path, arch) = split_input(input);
        let code =
            ObjectCode::from_path(Path::new(path)).map_err(|e| Failure::Reported(report(&e)))?;
        builder = builder
            .add(&code, arch)
            .map_err(|e| Failure::Reported(report(&e)))?;
    }
    let name = args.output.display().to_string();
    let fatbin = builder
        .build(&name)
        .map_err(|e| Failure::Reported(report(&e)))?;
    fatbin
        .write_to(&args.output)
        .map_err(|e| Failure::Reported(format!("cannot write {name}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_arch_suffix_is_split_off_only_when_it_is_one() {
        assert_eq!(split_input("a.ptx:sm_90"), ("a.ptx", Some(Arch::sm(90))));
        assert_eq!(split_input("dir:x/a.ptx"), ("dir:x/a.ptx", None));
        assert_eq!(split_input("a.cubin"), ("a.cubin", None));
    }
}
