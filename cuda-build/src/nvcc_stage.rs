//! The nvcc stage: host-code files (kernels launched from C++ over FFI)
//! compiled by nvcc to objects, as `cc::Build::cuda(true)` does, through
//! the build's cache, device-linked where they are relocatable, archived
//! into `lib{name}.a`, with cargo's link lines and cudart's.
//!
//! An object's key is nvcc's and the host compiler's identity, every
//! argument, what nvcc reads of the environment, and the closure key
//! cuda-compile makes for NVRTC's compiles too ([`IncludeSearch`]): the
//! file, the bytes of every header of the crate's own the scan reaches
//! through nvcc's whole search path (`-I`, `-isystem` and the host
//! compiler's folders in every spelling, `CPATH`, `CPLUS_INCLUDE_PATH`,
//! `C_INCLUDE_PATH`, `NVCC_PREPEND_FLAGS`, `NVCC_APPEND_FLAGS`), the
//! toolchain's headers by identity, and every place an include was looked
//! for and nothing was, in any subfolder. Paths under the crate root are
//! written relative to it, so that checkouts at other paths share
//! entries, unless the object names its files (`-G`, `-lineinfo`, `-g`,
//! `__FILE__`). A file nvcc reported reading (`-MD -MF`) that the scan
//! did not reach is keyed by its bytes, through a first entry that lists
//! such files. An object is stored only when nothing it read changed
//! while nvcc ran.

use std::path::{Path, PathBuf};
use std::process::Command;

use cuda_compile::{Dialect, Flags, IncludeSearch, ReadSet};
use cuda_link::{CacheEntry, CacheKey, MemoryCache};

use crate::build::Cudart;
use crate::error::BuildError;
use crate::nvcc::{self, Toolchain};
use crate::session::Session;
use crate::{env, jobs};

/// The cache domain of the closure lists and objects (a new layout gets a
/// new version).
const DOMAIN: &str = "cuda-build nvcc object 2";

/// What the nvcc stage made.
pub(crate) struct HostLibrary {
    pub(crate) archive: PathBuf,
    /// cargo's link lines, printed now and again on a no-op rebuild.
    pub(crate) link: Vec<String>,
    pub(crate) compiled: usize,
    pub(crate) cached: usize,
    /// The files each compile read that are the crate's own.
    pub(crate) dependencies: Vec<PathBuf>,
}

/// One object: its path, whether the cache gave it, what it read.
struct Object {
    path: PathBuf,
    cached: bool,
    read: Vec<PathBuf>,
}

impl Session<'_> {
    /// Compiles `files` with nvcc into `lib{name}.a`.
    pub(crate) fn build_host_files(&self, files: &[&Path]) -> Result<HostLibrary, BuildError> {
        let toolchain = self.toolchain(files)?;
        let dir = self.out_dir.join(format!("{}.host", self.name));
        std::fs::create_dir_all(&dir).map_err(|e| crate::output::output_error(&dir, e))?;
        let args = self.nvcc_args(&toolchain);
        let flags = self.nvcc_flags()?;
        let relocatable = flags.relocatable == Some(true);
        let search = self.include_search(&toolchain, &flags);
        let nvcc = NvccRun {
            toolchain: &toolchain,
            args: &args,
            relocatable,
            names_its_files: flags.names_its_files(),
            search: &search,
        };
        let indexed: Vec<(usize, &Path)> = files.iter().copied().enumerate().collect();
        let results = jobs::run_all(&indexed, |&(index, file)| {
            self.host_object(&nvcc, file, &dir, index)
        });
        // Every failing file, each with its first error.
        let (objects, mut errors): (Vec<_>, Vec<_>) = results.into_iter().partition(Result::is_ok);
        match errors.len() {
            0 => {}
            1 => return Err(errors.remove(0).err().expect("partitioned")),
            _ => {
                let errors = errors.into_iter().filter_map(Result::err).collect();
                return Err(BuildError::Files { errors });
            }
        }
        let objects: Vec<Object> = objects.into_iter().filter_map(Result::ok).collect();
        let mut paths: Vec<PathBuf> = objects.iter().map(|o| o.path.clone()).collect();
        if relocatable {
            paths.push(self.device_link(&toolchain, &args, &paths, &dir)?);
        }
        let archive = self.out_dir.join(format!("lib{}.a", self.name));
        let _ = std::fs::remove_file(&archive);
        let mut ar = Command::new(&toolchain.archiver);
        ar.arg("crs").arg(&archive).args(&paths);
        nvcc::run(&mut ar).map_err(|detail| BuildError::Nvcc {
            file: archive.clone(),
            detail,
        })?;
        let mut link = vec![
            format!("cargo:rustc-link-search=native={}", self.out_dir.display()),
            format!("cargo:rustc-link-lib=static={}", self.name),
        ];
        link.extend(cudart_lines(&toolchain, self.build.cudart, relocatable));
        let mut dependencies: Vec<PathBuf> = Vec::new();
        for object in &objects {
            for path in &object.read {
                if !dependencies.contains(path) {
                    dependencies.push(path.clone());
                }
            }
        }
        Ok(HostLibrary {
            archive,
            link,
            compiled: objects.iter().filter(|o| !o.cached).count(),
            cached: objects.iter().filter(|o| o.cached).count(),
            dependencies,
        })
    }

    /// nvcc and its host tools, or the error that lists the files needing
    /// them and how to install nvcc.
    fn toolchain(&self, files: &[&Path]) -> Result<Toolchain, BuildError> {
        let missing = |detail: String| BuildError::NvccMissing {
            files: files.iter().map(|f| f.to_path_buf()).collect(),
            detail,
        };
        let nvcc = self
            .nvcc
            .clone()
            .ok_or_else(|| missing(format!("nvcc was not found: {}", crate::error::INSTALL)))?;
        Toolchain::new(nvcc).map_err(|why| missing(format!("{why}: {}", crate::error::INSTALL)))
    }

    /// The arguments of every host-code compile: the archs (unless the
    /// flags name their own), the preprocessor's, the flags as written,
    /// the host compiler.
    fn nvcc_args(&self, toolchain: &Toolchain) -> Vec<String> {
        let build = self.build;
        let mut args = Vec::new();
        if self.flags.archs.is_empty() {
            for arch in &self.archs {
                args.push(format!("-gencode=arch={},code={arch}", arch.compute()));
            }
            if let Some(arch) = self.ptx {
                let compute = arch.compute();
                args.push(format!("-gencode=arch={compute},code={compute}"));
            }
        }
        args.extend(nvcc::preprocessor_args(
            &build.includes,
            &build.defines,
            &build.undefines,
        ));
        args.extend(build.flags.iter().filter(|f| !nvrtc_only(f)).cloned());
        args.push("-Xcompiler=-fPIC".to_owned());
        if let Some(cxx) = &toolchain.host_compiler {
            args.push(format!("-ccbin={}", cxx.display()));
        }
        args
    }

    /// The build's flags and those nvcc reads from the environment
    /// (`NVCC_PREPEND_FLAGS`, `NVCC_APPEND_FLAGS`), read as nvcc reads
    /// them.
    fn nvcc_flags(&self) -> Result<Flags, BuildError> {
        let mut words: Vec<String> = Vec::new();
        for value in [
            env::var("NVCC_PREPEND_FLAGS"),
            env::var("NVCC_APPEND_FLAGS"),
        ]
        .into_iter()
        .flatten()
        {
            words.extend(value.split_whitespace().map(str::to_owned));
        }
        words.extend(self.build.flags.iter().cloned());
        Flags::parse(&words, Dialect::Nvcc).map_err(BuildError::Flag)
    }

    /// nvcc's search path, as the closure key reads it: the build's
    /// folders, the flags' in every spelling, the environment's, then the
    /// toolchain's; `cuda_runtime.h`, which nvcc includes first, and the
    /// flags' pre-includes.
    fn include_search(&self, toolchain: &Toolchain, flags: &Flags) -> IncludeSearch {
        let mut search = IncludeSearch::new();
        search
            .own_folders(self.build.includes.iter().cloned())
            .own_folders(flags.include_dirs.iter().map(|dir| dir.path.clone()));
        for value in [
            env::var_os("CPATH"),
            env::var_os("CPLUS_INCLUDE_PATH"),
            env::var_os("C_INCLUDE_PATH"),
        ]
        .into_iter()
        .flatten()
        {
            // An empty entry is the working folder, as gcc reads it.
            let dirs = std::env::split_paths(&value).map(|dir| match dir.as_os_str().is_empty() {
                true => PathBuf::from("."),
                false => dir,
            });
            search.own_folders(dirs);
        }
        search
            .toolchain_folders(toolchain.include_dirs.iter().cloned())
            .pre_include(["cuda_runtime.h"])
            .pre_include(flags.pre_includes.iter().cloned())
            .portable(self.cache.portable_keys());
        if let Some(root) = env::var_os("CARGO_MANIFEST_DIR") {
            search.base_dir(PathBuf::from(root));
        }
        search
    }

    /// One file's object: from the cache when nothing its compile reads
    /// has changed, else compiled and stored.
    fn host_object(
        &self,
        nvcc: &NvccRun<'_>,
        file: &Path,
        dir: &Path,
        index: usize,
    ) -> Result<Object, BuildError> {
        let fail = |detail: String| BuildError::Nvcc {
            file: file.to_path_buf(),
            detail,
        };
        let stem = file.file_stem().unwrap_or_default().to_string_lossy();
        let path = dir.join(format!("{stem}-{index}.o"));
        let mut read = nvcc.search.scan(file).map_err(|e| fail(e.to_string()))?;
        let paths = Portable::new(nvcc.toolchain);
        let base = self.base_key(nvcc, &paths, &read);
        let cacheable = read.unresolved().is_none();
        if cacheable && let Some((object, read)) = self.cached_object(&base, &paths, read.clone()) {
            std::fs::write(&path, object).map_err(|e| fail(e.to_string()))?;
            return Ok(Object {
                path,
                cached: true,
                read: self.watched(&read),
            });
        }
        let depfile = path.with_extension("d");
        // A list an earlier compile left must not stand for this one's.
        let _ = std::fs::remove_file(&depfile);
        let mut command = Command::new(&nvcc.toolchain.nvcc);
        if !nvcc.args.iter().any(|a| a == "-dc" || a == "--device-c") {
            command.arg("-c");
        }
        if nvcc.relocatable {
            command.arg("-rdc=true");
        }
        command
            .args(nvcc.args)
            .arg("-MD")
            .arg("-MF")
            .arg(&depfile)
            .arg("-o")
            .arg(&path)
            .arg(file);
        let output = command
            .output()
            .map_err(|e| fail(format!("{}: {e}", nvcc.toolchain.nvcc.display())))?;
        let stderr = String::from_utf8_lossy(&output.stderr);
        if !output.status.success() {
            return Err(fail(format!(
                "{} exited with {}: {}",
                nvcc.toolchain.nvcc.display(),
                output.status,
                first_error(&stderr)
            )));
        }
        self.warn_once(&stderr);
        let listed = std::fs::read_to_string(&depfile)
            .map_err(|e| e.to_string())
            .and_then(|text| cuda_compile::parse_depfile(&text).map_err(|e| e.to_string()))
            .map_err(|e| fail(format!("nvcc's dependency file: {e}")))?;
        let listed: Vec<PathBuf> = listed.iter().map(PathBuf::from).collect();
        // A list without the file itself is not what nvcc read.
        let lists_source = listed.iter().any(|p| paths.name(p) == paths.name(file));
        // What nvcc read that the scan did not reach is keyed by its bytes.
        let unreached: Vec<PathBuf> = listed.into_iter().filter(|p| !read.reached(p)).collect();
        let mut also: Vec<PathBuf> = Vec::new();
        for path in &unreached {
            if read.also_read(path).is_ok() {
                also.push(path.clone());
            }
        }
        if cacheable
            && lists_source
            && also.len() == unreached.len()
            && self.cache.is_writable()
            && read.unchanged()
            && let Ok(object) = std::fs::read(&path)
        {
            let names: Vec<String> = also.iter().map(|p| paths.name(p)).collect();
            let list = CacheEntry::default().with("also read", names.join("\n"));
            let object = CacheEntry::default().with("object", object);
            let memory = MemoryCache::fronts(Some(&self.cache));
            MemoryCache::store(Some(&self.cache), memory, &base, list);
            MemoryCache::store(Some(&self.cache), memory, &object_key(&base, &read), object);
        }
        Ok(Object {
            path,
            cached: false,
            read: self.watched(&read),
        })
    }

    /// The key of everything but what the file reads: the toolchain, the
    /// arguments, what nvcc reads of the environment, and, when the
    /// object names its files (`-G`, `-lineinfo`, `-g`, `__FILE__`), the
    /// folders that makes it name.
    fn base_key(&self, nvcc: &NvccRun<'_>, paths: &Portable, read: &ReadSet) -> CacheKey {
        let mut base = CacheKey::builder(DOMAIN);
        base.field(nvcc.toolchain.identity.as_bytes())
            .count(nvcc.args.len());
        for arg in nvcc.args {
            base.field(paths.text(arg).as_bytes());
        }
        for var in crate::env::NVCC_READS {
            let value = crate::env::var_os(var).unwrap_or_default();
            base.field(var.as_bytes())
                .field(paths.text(&value.to_string_lossy()).as_bytes());
        }
        if nvcc.names_its_files || read.names_its_files() {
            let here = std::env::current_dir().unwrap_or_default();
            base.field(b"names its files")
                .field(here.as_os_str().as_encoded_bytes())
                .field(paths.crate_root_bytes());
        }
        base.finish()
    }

    /// The object cached under `base`'s list of files read besides, with
    /// what its compile reads.
    fn cached_object(
        &self,
        base: &CacheKey,
        paths: &Portable,
        mut read: ReadSet,
    ) -> Option<(Vec<u8>, ReadSet)> {
        let memory = MemoryCache::fronts(Some(&self.cache));
        let names = MemoryCache::load_with(Some(&self.cache), memory, base, |mut entry| {
            entry
                .take("also read")
                .and_then(|bytes| String::from_utf8(bytes).ok())
                .ok_or("not a list of files")
        })?;
        for name in names.lines().filter(|name| !name.is_empty()) {
            read.also_read(&paths.resolve(name)).ok()?;
        }
        let key = object_key(base, &read);
        let object = MemoryCache::load_with(Some(&self.cache), memory, &key, |mut entry| {
            entry.take("object").ok_or("not an object")
        })?;
        Some((object, read))
    }

    /// What a build watches of one object's compile.
    fn watched(&self, read: &ReadSet) -> Vec<PathBuf> {
        read.dependencies().to_watch(Some(self.cache.dir()))
    }

    /// nvcc's device link of relocatable objects.
    fn device_link(
        &self,
        toolchain: &Toolchain,
        args: &[String],
        objects: &[PathBuf],
        dir: &Path,
    ) -> Result<PathBuf, BuildError> {
        let output = dir.join(format!("{}-dlink.o", self.name));
        let mut command = Command::new(&toolchain.nvcc);
        command
            .arg("-dlink")
            .args(device_link_args(args))
            .args(objects)
            .arg("-o")
            .arg(&output);
        nvcc::run(&mut command).map_err(|detail| BuildError::Nvcc {
            file: output.clone(),
            detail,
        })?;
        Ok(output)
    }

    /// nvcc's warnings, each once per build.
    fn warn_once(&self, stderr: &str) {
        if !(self.build.cargo_metadata && self.build.warnings) {
            return;
        }
        let mut warned = self.warned.lock().unwrap_or_else(|p| p.into_inner());
        for line in stderr.lines().filter(|line| is_warning(line)) {
            if warned.insert(line.to_owned()) {
                println!("cargo:warning={line}");
            }
        }
    }
}

/// A warning line of nvcc's, its tools' or its host compiler's output
/// (`k.cu(3): warning #177-D: ...`, `k.cu:3:5: warning: ...`,
/// `nvcc warning : ...`, `ptxas warning : ...`); not cicc's closing
/// remark, which names warnings too.
fn is_warning(line: &str) -> bool {
    line.contains(": warning") || line.contains(" warning :")
}

/// NVRTC's own options, which nvcc does not take: a flag written for
/// NVRTC stays with NVRTC.
fn nvrtc_only(flag: &str) -> bool {
    let name = flag.split('=').next().unwrap_or(flag);
    matches!(
        name,
        "-default-device"
            | "--device-as-default-execution-space"
            | "-pch"
            | "--pch"
            | "--create-pch"
            | "--use-pch"
            | "--pch-dir"
            | "--pch-verbose"
            | "--pch-messages"
            | "--instantiate-templates-in-pch"
            | "-no-source-include"
            | "--no-source-include"
            | "-minimal"
            | "--minimal"
            | "-builtin-move-forward"
            | "--builtin-move-forward"
            | "-builtin-initializer-list"
            | "--builtin-initializer-list"
    )
}

/// The arguments a device link needs of a compile's: the archs (as
/// `-gencode`, `-arch` or their long spellings, with a value joined or as
/// the next word) and the host compiler.
fn device_link_args(args: &[String]) -> Vec<String> {
    const TAKEN: [&str; 6] = [
        "-gencode",
        "--generate-code",
        "-arch",
        "--gpu-architecture",
        "-ccbin",
        "--compiler-bindir",
    ];
    let mut kept = Vec::new();
    let mut words = args.iter();
    while let Some(arg) = words.next() {
        let name = arg.split('=').next().unwrap_or(arg);
        if TAKEN.contains(&name) {
            kept.push(arg.clone());
            if !arg.contains('=') {
                kept.extend(words.next().cloned());
            }
        }
    }
    kept
}

/// The object's key: `base` and what the file's compile reads.
fn object_key(base: &CacheKey, read: &ReadSet) -> CacheKey {
    let mut key = CacheKey::builder(DOMAIN);
    key.field(base.to_hex().as_bytes());
    read.key_into(&mut key);
    key.finish()
}

/// What every object's compile shares.
struct NvccRun<'a> {
    toolchain: &'a Toolchain,
    args: &'a [String],
    relocatable: bool,
    /// The flags make the object name its files (`-G`, `-lineinfo`, `-g`).
    names_its_files: bool,
    search: &'a IncludeSearch,
}

/// nvcc's first error line (`file(12): error: ...`, `nvcc fatal : ...`,
/// a host compiler's `error:`), else its whole output; for an NVIDIA
/// header nvcc cannot find, the wheel to install.
fn first_error(stderr: &str) -> String {
    let first = stderr
        .lines()
        .find(|line| line.contains(": error") || line.contains("error:") || line.contains("fatal"))
        .map_or_else(|| stderr.trim().to_owned(), str::to_owned);
    match cuda_compile::missing_header_hint(stderr) {
        Some(hint) => format!("{first}: {hint}"),
        None => first,
    }
}

/// Paths as keys write them: under the crate root as `$CRATE/...`, under
/// nvcc's root as `$NVCC/...`, else as they are.
struct Portable {
    crate_root: Option<PathBuf>,
    nvcc_root: PathBuf,
}

impl Portable {
    fn new(toolchain: &Toolchain) -> Self {
        let crate_root = env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from);
        Portable {
            crate_root,
            nvcc_root: toolchain.root.clone(),
        }
    }

    /// The crate root as it is on this machine.
    fn crate_root_bytes(&self) -> &[u8] {
        self.crate_root
            .as_deref()
            .map_or(&[][..], |root| root.as_os_str().as_encoded_bytes())
    }

    /// A path as nvcc named it, made absolute (not resolved: a symlink
    /// switched to another tree is another path's content).
    fn name(&self, path: &Path) -> String {
        self.text(&absolute(path).display().to_string())
    }

    /// `text` with the roots' paths replaced (a root of `/` or nothing is
    /// left alone).
    fn text(&self, text: &str) -> String {
        let replace = |text: String, root: &Path, with: &str| {
            let root = root.display().to_string();
            match root.len() > 1 {
                true => text.replace(&root, with),
                false => text,
            }
        };
        let mut text = replace(text.to_owned(), &self.nvcc_root, "$NVCC");
        if let Some(root) = &self.crate_root {
            text = replace(text, root, "$CRATE");
        }
        text
    }

    /// A name back to a path on this machine.
    fn resolve(&self, name: &str) -> PathBuf {
        if self.nvcc_root.as_os_str().len() <= 1 {
            return PathBuf::from(name);
        }
        if let Some(rest) = name.strip_prefix("$NVCC") {
            return PathBuf::from(format!("{}{rest}", self.nvcc_root.display()));
        }
        match (name.strip_prefix("$CRATE"), &self.crate_root) {
            (Some(rest), Some(root)) => PathBuf::from(format!("{}{rest}", root.display())),
            _ => PathBuf::from(name),
        }
    }
}

/// `path` joined to the working folder when relative.
fn absolute(path: &Path) -> PathBuf {
    match path.is_absolute() {
        true => path.to_path_buf(),
        false => std::env::current_dir()
            .map(|dir| dir.join(path))
            .unwrap_or_else(|_| path.to_path_buf()),
    }
}

/// cargo's lines for cudart (and the device runtime for relocatable
/// code, before it), found where nvcc finds them (its root's `lib64`,
/// `lib`, `targets/*/lib`), then in the pip wheels.
fn cudart_lines(toolchain: &Toolchain, cudart: Cudart, relocatable: bool) -> Vec<String> {
    let root = &toolchain.root;
    let mut dirs = vec![
        root.join("lib64"),
        root.join("lib"),
        root.join("targets/x86_64-linux/lib"),
        root.join("targets/sbsa-linux/lib"),
    ];
    let env = cuda_dylib::SearchEnv::from_process();
    dirs.extend(cuda_dylib::existing_dirs(
        &[],
        &["nvidia/cu13/lib", "nvidia/cuda_runtime/lib"],
        &env,
    ));
    // (folder, library): `-L` and `-l` lines.
    let mut found: Vec<(Option<PathBuf>, String)> = Vec::new();
    let find = |name: &str| dirs.iter().find(|dir| dir.join(name).is_file()).cloned();
    if relocatable && cudart != Cudart::None {
        found.push((find("libcudadevrt.a"), "static=cudadevrt".to_owned()));
    }
    match cudart {
        Cudart::Static => {
            found.push((
                find("libcudart_static.a"),
                "static=cudart_static".to_owned(),
            ));
            for system in ["dl", "rt", "pthread"] {
                found.push((None, format!("dylib={system}")));
            }
        }
        Cudart::Shared => match find("libcudart.so") {
            Some(dir) => found.push((Some(dir), "dylib=cudart".to_owned())),
            // The wheels ship only the versioned name: `-l:libcudart.so.13`
            // (a link-lib line, unlike a link-arg, reaches dependents).
            None => match versioned_cudart(&dirs) {
                Some((dir, file)) => found.push((Some(dir), format!("dylib:+verbatim={file}"))),
                None => found.push((None, "dylib=cudart".to_owned())),
            },
        },
        Cudart::None => {}
    }
    found.push((None, "dylib=stdc++".to_owned()));
    let mut lines: Vec<String> = Vec::new();
    for dir in found.iter().filter_map(|(dir, _)| dir.as_ref()) {
        let line = format!("cargo:rustc-link-search=native={}", dir.display());
        if !lines.contains(&line) {
            lines.push(line);
        }
    }
    for (_, library) in &found {
        lines.push(format!("cargo:rustc-link-lib={library}"));
    }
    lines
}

/// The first `libcudart.so.N` in `dirs`: (folder, file name).
fn versioned_cudart(dirs: &[PathBuf]) -> Option<(PathBuf, String)> {
    dirs.iter().find_map(|dir| {
        let entries = std::fs::read_dir(dir).ok()?;
        entries
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .find(|n| n.starts_with("libcudart.so."))
            .map(|n| (dir.clone(), n))
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn warnings_of_nvcc_and_the_host_compiler_not_the_remark() {
        for line in [
            "src/k.cu(747): warning #177-D: variable \"n\" was declared but never referenced",
            "src/k.cu:3:5: warning: unused variable 'x' [-Wunused-variable]",
            "nvcc warning : Support for offline compilation for architectures prior to sm_75 \
             will be removed",
            "ptxas warning : For profile sm_80 adjusting per thread register count of 1 to \
             lower bound of 24",
            "nvlink warning : Stack size for entry function cannot be statically determined",
        ] {
            assert!(super::is_warning(line), "{line}");
        }
        for line in [
            "Remark: The warnings can be suppressed with \"-diag-suppress <warning-number>\"",
            "  int warning_count = 0;",
        ] {
            assert!(!super::is_warning(line), "{line}");
        }
    }
}
