//! Arch resolution: the builder's archs, else `CUDA_COMPUTE_CAP`, else
//! what NVRTC compiles and nvJitLink links, each checked against NVRTC.

use cuda_compile::Compiler;
use cuda_link::{Arch, ArchVariant};

use crate::build::Build;
use crate::env;
use crate::error::BuildError;

/// The cubin archs: explicit, else `CUDA_COMPUTE_CAP`, else every arch
/// NVRTC supports; each checked against NVRTC's list.
pub(crate) fn resolve_archs(
    build: &Build,
    compiler: Option<&Compiler>,
) -> Result<Vec<Arch>, BuildError> {
    let supported = match compiler {
        Some(compiler) => Some(
            compiler
                .supported_archs()
                .map_err(|e| BuildError::NoNvrtc(Box::new(e)))?,
        ),
        None => None,
    };
    let from_env = env::var("CUDA_COMPUTE_CAP");
    let mut archs: Vec<Arch> = match (&build.archs, from_env) {
        (Some(archs), _) => archs
            .iter()
            .map(|a| parse_arch("Build::archs", a))
            .collect::<Result<_, _>>()?,
        (None, Some(caps)) => caps
            .split(',')
            .map(|a| parse_arch("CUDA_COMPUTE_CAP", a))
            .collect::<Result<_, _>>()?,
        (None, None) => match &supported {
            Some(supported) => linkable(supported),
            None => {
                return Err(BuildError::BadArch {
                    from: "Build::archs",
                    value: "(none: set archs or CUDA_COMPUTE_CAP when nvcc stands in for NVRTC)"
                        .into(),
                });
            }
        },
    };
    archs.sort_by_key(|arch| (arch.sm, arch.suffix()));
    archs.dedup();
    // `a` archs exist from sm_90, `f` ones from sm_100.
    if let Some(bad) = archs.iter().find(|arch| match arch.variant {
        ArchVariant::Base => false,
        ArchVariant::Specific => arch.sm < 90,
        ArchVariant::Family => arch.sm < 100,
    }) {
        return Err(BuildError::BadArch {
            from: "Build::archs or CUDA_COMPUTE_CAP",
            value: bad.to_string(),
        });
    }
    if let (Some(supported), Some(compiler)) = (&supported, compiler)
        && let Some(missing) = archs
            .iter()
            .find(|arch| !supported.iter().any(|s| s.sm == arch.sm))
    {
        let list: Vec<String> = supported.iter().map(|a| a.sm.to_string()).collect();
        return Err(BuildError::UnsupportedArch {
            sm: missing.sm,
            nvrtc: compiler.nvrtc().version_string(),
            supported: list.join(", "),
        });
    }
    Ok(archs)
}

/// Of NVRTC's archs, those the loaded nvJitLink links under LTO (13.x
/// dropped sm_50 to sm_72 and sm_101, which NVRTC 12.x compiles). Without
/// nvJitLink, all: the first link says what is missing.
fn linkable(supported: &[Arch]) -> Vec<Arch> {
    match nvjitlink_sys::NvJitLink::global() {
        Ok(lib) => supported
            .iter()
            .copied()
            .filter(|arch| lib.links_arch(arch.sm, true))
            .collect(),
        Err(_) => supported.to_vec(),
    }
}

/// `sm_90`, `compute_90`, `90`, `9.0` (nvidia-smi's spelling), `sm_90a`.
pub(crate) fn parse_arch(from: &'static str, text: &str) -> Result<Arch, BuildError> {
    text.parse().map_err(|_| BuildError::BadArch {
        from,
        value: text.trim().to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn archs_parse_in_every_spelling() {
        for text in ["sm_86", "compute_86", "86", "8.6", " 86 "] {
            assert_eq!(parse_arch("test", text).unwrap(), Arch::sm(86), "{text}");
        }
        assert_eq!(parse_arch("test", "sm_90a").unwrap().to_string(), "sm_90a");
        for bad in ["", "8.", ".6", "8.6.1", "gfx90a", "sm_"] {
            assert!(parse_arch("test", bad).is_err(), "{bad}");
        }
    }
}
