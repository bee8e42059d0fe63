//! [`ObjectCode`]: one piece of device code of any kind, with its name.

use std::fmt;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use bytes::Bytes;

use crate::error::{ObjectError, Reason};
#[cfg(feature = "link")]
use crate::facts::{self, LinkFacts};
use crate::inspect::{self, Inspection};
use crate::kind::ObjectKind;
use crate::read;

/// Device code of any kind, with a name for logs and errors.
///
/// Construction validates every structure that the C libraries follow
/// without checking (see [`ValidatedImage`]), so a value of this type is
/// known to be of its kind, and nvJitLink, `cuLink*` and
/// `cuLibraryLoadData` read its tables and ranges inside its bytes. What
/// lies inside those bounds (machine code, `.nv.info` attribute values,
/// LTO-IR bitcode, PTX text) is NVIDIA's to interpret, and corrupt contents
/// can still crash nvJitLink or the driver: link bytes you do not trust
/// with `Isolation::Process` (the `link` feature). Bytes are
/// shared: cloning is cheap and the linker passes them to the backend
/// without copying.
///
/// Constructors take anything that becomes [`Bytes`]: a `Vec<u8>` or
/// `String` is kept without a copy (PTX gets its NUL in the same buffer),
/// a `&'static [u8]` is borrowed; copy a borrowed slice with
/// [`Bytes::copy_from_slice`].
///
/// ```
/// use cuda_link::{ObjectCode, ObjectKind};
///
/// let ptx = ".version 8.0\n.target sm_90\n.address_size 64\n\
///            .visible .entry noop() { ret; }\n";
/// let code = ObjectCode::from_bytes(ptx.as_bytes().to_vec(), "noop.ptx")?;
/// assert_eq!(code.kind(), ObjectKind::Ptx);
/// assert_eq!(code.inspect()?.kernels(), ["noop"]);
/// # Ok::<(), cuda_link::ObjectError>(())
/// ```
#[derive(Clone)]
pub struct ObjectCode {
    name: Arc<str>,
    image: ValidatedImage,
    /// The length of the bytes as given, without PTX's trailing NULs: the
    /// image of PTX keeps one NUL, which the text does not show.
    len: usize,
    /// What it holds, read by validation itself for containers (a fatbin
    /// entry is decompressed once, not once per use), on first use for a
    /// bare cubin or PTX text; shared by clones.
    contents: Arc<OnceLock<Result<inspect::Contents, Reason>>>,
    /// What a linker needs to know of it, derived from `contents` once and
    /// shared by clones: the same object is often added to many links.
    #[cfg(feature = "link")]
    link_facts: Arc<OnceLock<Result<LinkFacts, Reason>>>,
    /// NVRTC name expressions and the lowered names they compiled to.
    name_expressions: Arc<[(String, String)]>,
}

/// The bytes of an [`ObjectCode`] as C code may see them.
///
/// `cuLibraryLoadData` and `cuModuleLoadData*` take no size, nvJitLink and
/// the driver follow the offsets inside an ELF without checking them, and
/// both read PTX up to a NUL whatever size they are given. So every byte
/// string that reaches them is one of these, which only [`ObjectCode`]'s
/// constructors make, after checking:
///
/// * cubins: the ELF header (no table at offset 0 with entries, no
///   extended numbering), section and program header tables, every
///   section's and segment's range and alignment, the section-name, symbol
///   and string tables (each ending in a NUL), every relocation's symbol
///   and offset, every note, and CUDA's own indices: the symbol in a
///   kernel section's `sh_info`, the section an `.nv.info.<k>` names, the
///   symbols in `.nv.info` records and `.nv.callgraph` edges, which must
///   tile their sections;
/// * fatbins: the header and entry sizes, known entry kinds only, every
///   options slot inside its entry header, every cubin entry (decompressed)
///   as above, every PTX entry non-empty and NUL-terminated, all within a
///   decompression budget (a ratio and a total per object);
/// * host objects and archives: every member's ELF structure, every
///   device-code section and embedded fatbin as above, every archive
///   symbol-table offset at the start of a member;
/// * PTX: a NUL at the end, appended once at construction when missing.
///
/// It does not promise that NVIDIA's code survives the contents; see
/// [`ObjectCode`].
#[derive(Clone)]
pub struct ValidatedImage {
    kind: ObjectKind,
    bytes: Bytes,
}

impl ValidatedImage {
    /// The kind the bytes were validated as.
    pub fn kind(&self) -> ObjectKind {
        self.kind
    }

    /// The bytes, NUL-terminated for PTX.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The bytes, shared without copying, e.g. to keep them alive for a
    /// loaded library.
    pub fn shared(&self) -> Bytes {
        self.bytes.clone()
    }
}

/// The bytes, NUL-terminated for PTX: what [`ValidatedImage::as_bytes`]
/// gives.
impl AsRef<[u8]> for ValidatedImage {
    fn as_ref(&self) -> &[u8] {
        &self.bytes
    }
}

impl fmt::Debug for ValidatedImage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ValidatedImage")
            .field("kind", &self.kind)
            .field("size", &self.bytes.len())
            .finish()
    }
}

impl fmt::Debug for ObjectCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ObjectCode")
            .field("name", &self.name)
            .field("kind", &self.image.kind)
            .field("size", &self.len)
            .finish()
    }
}

/// `text` with a NUL after it. The NUL goes at the end of the caller's
/// buffer when `text` is its only owner, as a `Vec` given to a constructor
/// is: a multi-megabyte PTX text is not copied for one byte.
fn nul_terminated(text: Bytes) -> Bytes {
    let mut text = Vec::from(text);
    text.reserve_exact(1);
    text.push(0);
    Bytes::from(text)
}

/// [`Reason::TooLarge`] past [`ObjectCode::max_input_bytes`].
fn check_size(size: u64) -> Result<(), Reason> {
    let limit = ObjectCode::max_input_bytes();
    match size > limit {
        true => Err(Reason::TooLarge { size, limit }),
        false => Ok(()),
    }
}

impl ObjectCode {
    /// Detects the kind from the leading bytes.
    pub fn from_bytes(
        data: impl Into<Bytes>,
        name: impl Into<String>,
    ) -> Result<Self, ObjectError> {
        let data = data.into();
        let name = name.into();
        let kind = ObjectKind::detect(&data).map_err(|reason| ObjectError::new(&name, reason))?;
        Self::validated(kind, data, name)
    }

    /// Reads a file; the kind comes from the bytes first, the extension
    /// second for text kinds (PTX with odd headers, NVVM IR without a
    /// `target` line). Binary kinds have magic: bytes without it are
    /// [`Reason::Unrecognized`], whatever the name says.
    ///
    /// The file is read into memory rather than mapped: a file truncated
    /// while mapped would fault the process.
    ///
    /// # Errors
    /// An [`ObjectError`] naming the file: [`Reason::Io`] when it cannot be
    /// read, [`Reason::Empty`], [`Reason::CudaSource`] for `.cu` text,
    /// [`Reason::Unrecognized`], or the structural reason validation found.
    ///
    /// ```no_run
    /// use cuda_link::{ObjectCode, ObjectKind, Reason};
    ///
    /// match ObjectCode::from_path("kernels.cubin") {
    ///     Ok(code) => assert_eq!(code.kind(), ObjectKind::Cubin),
    ///     Err(err) if matches!(err.reason, Reason::Io { .. }) => eprintln!("{err}"),
    ///     Err(err) => eprintln!("not device code: {err}"),
    /// }
    /// ```
    pub fn from_path(path: impl AsRef<Path>) -> Result<Self, ObjectError> {
        let path = path.as_ref();
        let name = path.display().to_string();
        // A file over the limit is refused before it is read.
        let size = std::fs::metadata(path)
            .map_err(|e| ObjectError::new(&name, Reason::io(&e)))?
            .len();
        check_size(size).map_err(|reason| ObjectError::new(&name, reason))?;
        let data = std::fs::read(path).map_err(|e| ObjectError::new(&name, Reason::io(&e)))?;
        let kind = match ObjectKind::detect(&data) {
            Ok(kind) => kind,
            // What the bytes plainly are beats what the name says.
            Err(reason @ (Reason::Empty | Reason::CudaSource)) => {
                return Err(ObjectError::new(&name, reason));
            }
            Err(reason) => path
                .extension()
                .and_then(|e| e.to_str())
                .and_then(ObjectKind::from_extension)
                .filter(|kind| matches!(kind, ObjectKind::Ptx | ObjectKind::NvvmIr))
                .ok_or_else(|| ObjectError::new(&name, reason))?,
        };
        Self::validated(kind, data.into(), name)
    }

    /// Builds an object of a known kind, checking that the bytes are of it.
    pub fn with_kind(
        kind: ObjectKind,
        data: impl Into<Bytes>,
        name: impl Into<String>,
    ) -> Result<Self, ObjectError> {
        let data = data.into();
        let name: String = name.into();
        match ObjectKind::detect(&data) {
            // A host ELF offered as a cubin gets the more precise NotEmCuda.
            Ok(ObjectKind::Object) if kind == ObjectKind::Cubin => {}
            // Bitcode offered as LTO-IR gets the more precise LlvmBitcode.
            Ok(ObjectKind::NvvmIr) if kind == ObjectKind::Ltoir => {}
            Ok(found) if found != kind => {
                let mismatch = Reason::KindMismatch {
                    expected: kind.name(),
                    found: found.name(),
                };
                return Err(ObjectError::new(&name, mismatch));
            }
            _ => {}
        }
        Self::validated(kind, data, name)
    }

    /// The most bytes an input may have: 4 GiB, or
    /// `CUDA_LINK_MAX_INPUT_BYTES` (read once). Larger inputs are
    /// [`Reason::TooLarge`] before anything is parsed; NVIDIA's largest
    /// libraries hold well under 1 GiB of device code.
    pub fn max_input_bytes() -> u64 {
        static LIMIT: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
        *LIMIT.get_or_init(|| {
            std::env::var("CUDA_LINK_MAX_INPUT_BYTES")
                .ok()
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(4 << 30)
        })
    }

    /// Validates `data` as `kind`, keeping what validation read.
    fn validated(kind: ObjectKind, data: Bytes, name: String) -> Result<Self, ObjectError> {
        let _phase = phase!("validate");
        check_size(data.len() as u64).map_err(|reason| ObjectError::new(&name, reason))?;
        let contents = read::validate(kind, &data).map_err(|r| ObjectError::new(&name, r))?;
        // PTX's terminating NULs are the image's business, not the text's.
        let len = match kind {
            ObjectKind::Ptx => data.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1),
            _ => data.len(),
        };
        let bytes = match kind {
            // nvJitLink and the driver read PTX up to a NUL, whatever size
            // they are given; nvcc and ptxas write none.
            ObjectKind::Ptx if data.last() != Some(&0) => nul_terminated(data),
            _ => data,
        };
        Ok(ObjectCode {
            name: name.into(),
            image: ValidatedImage { kind, bytes },
            len,
            contents: Arc::new(contents.map(Ok).map_or_else(OnceLock::new, OnceLock::from)),
            #[cfg(feature = "link")]
            link_facts: Arc::default(),
            name_expressions: Arc::new([]),
        })
    }

    /// An object from an image this process validated before: an isolated
    /// link's worker, a fork of this process, gets the images of the
    /// inputs over a socket and links them as they were checked here.
    #[cfg(all(feature = "link", unix))]
    pub(crate) fn from_validated_image(kind: ObjectKind, bytes: Bytes, name: String) -> Self {
        ObjectCode {
            name: name.into(),
            len: bytes.len(),
            image: ValidatedImage { kind, bytes },
            contents: Arc::default(),
            #[cfg(feature = "link")]
            link_facts: Arc::default(),
            name_expressions: Arc::new([]),
        }
    }

    /// A cubin (relocatable or executable).
    pub fn from_cubin(
        data: impl Into<Bytes>,
        name: impl Into<String>,
    ) -> Result<Self, ObjectError> {
        Self::with_kind(ObjectKind::Cubin, data, name)
    }

    /// PTX text; trailing NULs are allowed, and [`as_bytes`](Self::as_bytes)
    /// leaves them out.
    pub fn from_ptx(data: impl Into<Bytes>, name: impl Into<String>) -> Result<Self, ObjectError> {
        Self::with_kind(ObjectKind::Ptx, data, name)
    }

    /// LTO-IR from NVRTC or nvcc `-dlto`.
    pub fn from_ltoir(
        data: impl Into<Bytes>,
        name: impl Into<String>,
    ) -> Result<Self, ObjectError> {
        Self::with_kind(ObjectKind::Ltoir, data, name)
    }

    /// A fatbin.
    pub fn from_fatbin(
        data: impl Into<Bytes>,
        name: impl Into<String>,
    ) -> Result<Self, ObjectError> {
        Self::with_kind(ObjectKind::Fatbin, data, name)
    }

    /// A host object with device code in `.nv_fatbin` or `__nv_relfatbin`.
    pub fn from_object(
        data: impl Into<Bytes>,
        name: impl Into<String>,
    ) -> Result<Self, ObjectError> {
        Self::with_kind(ObjectKind::Object, data, name)
    }

    /// An `ar` archive of host objects, such as `libcudadevrt.a`.
    pub fn from_archive(
        data: impl Into<Bytes>,
        name: impl Into<String>,
    ) -> Result<Self, ObjectError> {
        Self::with_kind(ObjectKind::Archive, data, name)
    }

    /// NVVM IR, text (`.ll`) or bitcode (`.bc`): checked as far as it can
    /// be without libNVVM (text: UTF-8 without a NUL inside; bitcode: its
    /// framing), and read for [`inspect`](Self::inspect) at once.
    pub fn from_nvvm_ir(
        data: impl Into<Bytes>,
        name: impl Into<String>,
    ) -> Result<Self, ObjectError> {
        Self::with_kind(ObjectKind::NvvmIr, data, name)
    }

    /// The name given at construction.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The kind.
    pub fn kind(&self) -> ObjectKind {
        self.image.kind
    }

    /// The bytes, as given; PTX without trailing NULs, linked PTX too
    /// (the NUL C code needs stays in [`image`](Self::image)).
    pub fn as_bytes(&self) -> &[u8] {
        &self.image.bytes[..self.len]
    }

    /// Writes [`as_bytes`](Self::as_bytes) to `path`, replacing it whole: the
    /// bytes go to a temporary file beside it, which is then renamed, so a
    /// reader never sees half a file. A device or a pipe (`/dev/null`) is
    /// written through; see [`write_whole`](crate::write_whole).
    ///
    /// # Errors
    /// The I/O error of creating, writing or renaming the file.
    ///
    /// ```no_run
    /// # use cuda_link::ObjectCode;
    /// let code = ObjectCode::from_path("kernels.ptx")?;
    /// code.write_to("copy.ptx")?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write_to(&self, path: impl AsRef<Path>) -> std::io::Result<()> {
        crate::write_whole(path, self.as_bytes())
    }

    /// The validated bytes for C code: the only way bytes reach nvJitLink,
    /// `cuLink*` and `cuLibraryLoadData`.
    pub fn image(&self) -> &ValidatedImage {
        &self.image
    }

    /// The object with the names NVRTC lowered its name expressions to:
    /// `("saxpy<float>", "_Z5saxpyIfEvT_PKS0_PS0_i")`, `("&ns::var",
    /// "_ZN2ns3varE")`. `cuda-module` finds kernels and globals by these
    /// expressions; the compile cache keeps them with the output.
    pub fn with_name_expressions(self, pairs: impl IntoIterator<Item = (String, String)>) -> Self {
        ObjectCode {
            name_expressions: pairs.into_iter().collect(),
            ..self
        }
    }

    /// Every name expression with its lowered name, in the order given.
    pub fn name_expressions(&self) -> &[(String, String)] {
        &self.name_expressions
    }

    /// The lowered name of `expression`, if it was compiled as one.
    pub fn lowered_name(&self, expression: &str) -> Option<&str> {
        self.name_expressions
            .iter()
            .find(|(given, _)| given == expression)
            .map(|(_, lowered)| lowered.as_str())
    }

    /// The object under another name.
    pub fn renamed(&self, name: impl Into<String>) -> Self {
        ObjectCode {
            name: name.into().into(),
            ..self.clone()
        }
    }

    #[cfg(feature = "link")]
    /// Refuses inputs a linker would mishandle: an executable cubin, bare or
    /// anywhere in a fatbin, host object or archive, whose kernels nvJitLink
    /// silently drops. The error names the entry.
    pub fn check_linkable(&self) -> Result<(), ObjectError> {
        self.link_facts().map(drop)
    }

    /// What a linker needs to know, derived from [`Self::contents`] on
    /// first use.
    #[cfg(feature = "link")]
    pub(crate) fn link_facts(&self) -> Result<&LinkFacts, ObjectError> {
        self.link_facts
            .get_or_init(|| {
                let contents = self.contents().map_err(|e| e.reason)?;
                LinkFacts::of(contents)
            })
            .as_ref()
            .map_err(|reason| ObjectError::new(&self.name, reason.clone()))
    }

    /// Every strong definition inside, with its archive member, borrowed
    /// from the contents.
    #[cfg(feature = "link")]
    pub(crate) fn strong_symbols(&self) -> Result<Vec<(&str, Option<&str>)>, ObjectError> {
        Ok(facts::strong_symbols(self.contents()?))
    }

    /// What an NVVM IR module says of itself, as read at construction,
    /// without the copy [`inspect`](Self::inspect) makes; `None` for
    /// other kinds.
    pub fn nvvm_ir(&self) -> Option<&crate::inspect::NvvmIrInfo> {
        match self.contents().ok()? {
            inspect::Contents::NvvmIr(info) => Some(info),
            _ => None,
        }
    }

    /// What the object holds, read once and shared by clones, by
    /// inspection and by linking alike.
    fn contents(&self) -> Result<&inspect::Contents, ObjectError> {
        self.contents
            .get_or_init(|| read::contents(self.kind(), self.as_bytes()))
            .as_ref()
            .map_err(|reason| ObjectError::new(&self.name, reason.clone()))
    }

    /// Everything this object holds, read in pure Rust: arches, kernels,
    /// fatbin entries (decompressed to look inside), archive members. The
    /// reading is done once per object and its clones: by validation, at
    /// construction, for containers; on the first call or link for a bare
    /// cubin or PTX text. This returns a copy of it.
    ///
    /// # Errors
    /// For PTX, an [`ObjectError`] when its directives cannot be read. A
    /// container's member without device code, and a fatbin's PTX or
    /// LTO-IR entry that does not read as such, are listed with their
    /// error instead.
    ///
    /// ```
    /// use cuda_link::ObjectCode;
    ///
    /// let ptx = ".version 8.0\n.target sm_90\n.address_size 64\n\
    ///            .visible .entry scale() { ret; }\n";
    /// let info = ObjectCode::from_ptx(ptx.as_bytes().to_vec(), "scale.ptx")?.inspect()?;
    /// assert_eq!(info.kernels(), ["scale"]);
    /// assert_eq!(info.arches()[0].to_string(), "sm_90");
    /// # Ok::<(), cuda_link::ObjectError>(())
    /// ```
    pub fn inspect(&self) -> Result<Inspection, ObjectError> {
        Ok(Inspection {
            name: self.name.to_string(),
            kind: self.kind(),
            size: self.len,
            contents: self.contents()?.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Validation is the reading: a fatbin's tree is there as soon as it
    /// is constructed, its entries decompressed once, for validation,
    /// inspection and the linker's facts together.
    #[test]
    fn validation_yields_the_contents() {
        let ptx =
            b".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() { ret; }\n\0";
        let fatbin = crate::fatbin::tests::build(&[(1, 90, 0x11, ptx)]);
        let code = ObjectCode::from_fatbin(fatbin, "k.fatbin").unwrap();
        let read = code.contents.get().expect("read by validation");
        assert!(matches!(read, Ok(inspect::Contents::Fatbin(_))));
        assert_eq!(code.inspect().unwrap().kernels(), ["k"]);
        assert!(std::ptr::eq(read, code.contents.get().unwrap()));
    }

    /// Inspection reads an object once: its clones, later inspections and
    /// links share that one reading.
    #[test]
    fn contents_are_read_once_and_shared_by_clones() {
        let ptx = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() { ret; }\n";
        let code = ObjectCode::from_ptx(ptx.as_bytes().to_vec(), "k.ptx").unwrap();
        let clone = code.clone();
        assert!(
            code.contents.get().is_none(),
            "read before it was asked for"
        );
        assert_eq!(clone.inspect().unwrap().kernels(), ["k"]);
        let read = code
            .contents
            .get()
            .expect("the clone's reading is the original's");
        assert!(std::ptr::eq(read, code.contents.get().unwrap()));
        #[cfg(feature = "link")]
        {
            code.check_linkable().unwrap();
            assert!(std::ptr::eq(read, clone.contents.get().unwrap()));
        }
    }
}
