//! The build's cache: the cache folder and, with the `remote` feature,
//! the shared store behind it, set up from the builder and the variables.

use cuda_link::LinkCache;

use crate::build::Build;
use crate::env;

/// The cache folder (`Build::cache_dir`, else the default one), and with
/// the `remote` feature the shared store behind it (`Build::cache_url`,
/// else `CUDA_LINK_CACHE_URL`).
pub(crate) fn open_cache(build: &Build) -> LinkCache {
    let cache = LinkCache::new(build.cache.clone().unwrap_or_else(LinkCache::default_dir));
    #[cfg(feature = "remote-tier")]
    {
        let remote = cuda_link::RemoteCache::from_env(|name| {
            let name = *cuda_link::RemoteCache::VARIABLES
                .iter()
                .find(|v| **v == name)?;
            match name {
                "CUDA_LINK_CACHE_URL" if build.cache_url.is_some() => {
                    build.cache_url.as_ref().map(|url| url.0.clone())
                }
                "CUDA_LINK_CACHE_READ_ONLY" if build.cache_read_only => Some("1".into()),
                "CUDA_LINK_CACHE_SIGNING_KEY" if build.cache_signing_key.is_some() => {
                    build.cache_signing_key.as_ref().map(|key| key.0.clone())
                }
                "CUDA_LINK_CACHE_VERIFY_KEY" if build.cache_verify_key.is_some() => {
                    build.cache_verify_key.clone()
                }
                _ => env::var(name),
            }
        });
        match remote {
            Some(Ok(remote)) if !remote.is_trusted() => {
                if build.cargo_metadata {
                    println!(
                        "cargo:warning=cuda-build: the shared cache {} is not used: {}",
                        remote.url(),
                        cuda_link::RemoteCache::UNTRUSTED
                    );
                }
            }
            Some(Ok(remote)) => return cache.with_remote(remote),
            // A build never fails because of its cache: said, and built
            // without the store.
            Some(Err(error)) if build.cargo_metadata => {
                println!("cargo:warning=cuda-build: the shared cache is off: {error}");
            }
            Some(Err(_)) | None => {}
        }
    }
    #[cfg(not(feature = "remote-tier"))]
    if build.cargo_metadata && env::var("CUDA_LINK_CACHE_URL").is_some() {
        println!(
            "cargo:warning=cuda-build: CUDA_LINK_CACHE_URL is set, but cuda-build was built \
             without its `remote` feature: the shared cache is not used"
        );
    }
    cache
}
