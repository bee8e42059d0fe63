//! The memory a caller and its worker share: a memfd that both map.
//! Requests and answers are written into it and only their lengths cross
//! the socket, so an input is copied once (into the file) and read where
//! it lies, instead of being copied through the kernel in socket-sized
//! pieces with a wakeup for each.
//!
//! The file is sealed against shrinking: a mapping of either side never
//! reaches past its end (which would raise `SIGBUS`), whatever the other
//! side does. Either side may grow it, and maps it again when a message is
//! longer than its mapping.
//!
//! Who writes when is the protocol's: the caller writes a request, then
//! waits for the answer's length; the worker reads the request, writes the
//! answer, then sends its length and waits for the next request. Neither
//! touches the memory while the other may, and a worker that passed a
//! limit is killed and reaped before its file is dropped.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::Arc;

use super::super::LinkError;
use super::os_failure;

/// One mapping of the file, unmapped when the last view of it goes.
pub(super) struct Mapping {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the mapping is memory like any other allocation: it is not tied
// to a thread, and `Mapping` only gives it out under the rules above.
unsafe impl Send for Mapping {}
// SAFETY: as above; shared views only read.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// Maps the first `len` bytes of `fd`, which has at least as many.
    fn new(fd: RawFd, len: usize) -> Result<Self, LinkError> {
        // SAFETY: a fresh shared mapping of an open descriptor; the kernel
        // picks the address, and the length is within the file.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len.max(1),
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(os_failure("mmap"));
        }
        // A worker forked later, or any child of the caller, gets no copy:
        // each worker maps its own file and no other.
        // SAFETY: advice on the mapping just made.
        if unsafe { libc::madvise(ptr, len.max(1), libc::MADV_DONTFORK) } != 0 {
            let failure = os_failure("madvise(MADV_DONTFORK)");
            // SAFETY: the mapping just made, used by no one.
            unsafe { libc::munmap(ptr, len.max(1)) };
            return Err(failure);
        }
        Ok(Mapping {
            ptr: ptr.cast(),
            len,
        })
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: `ptr` and `len` are this mapping's, and no view outlives
        // it (views hold an `Arc` of it).
        unsafe { libc::munmap(self.ptr.cast(), self.len.max(1)) };
    }
}

/// The first `len` bytes of a mapping, kept mapped: a request's inputs
/// are read where they lie (`bytes::Bytes::from_owner`).
pub(super) struct View {
    mapping: Arc<Mapping>,
    len: usize,
}

impl AsRef<[u8]> for View {
    fn as_ref(&self) -> &[u8] {
        // SAFETY: `len` is within the mapping, which lives as long as
        // `self`, and the other side does not write while a message is
        // read (the module's protocol).
        unsafe { std::slice::from_raw_parts(self.mapping.ptr, self.len) }
    }
}

/// The shared file and this side's mapping of it.
pub(super) struct Shared {
    fd: OwnedFd,
    mapping: Arc<Mapping>,
}

impl Shared {
    /// A new, empty file, sealed against shrinking.
    pub(super) fn create() -> Result<Self, LinkError> {
        // SAFETY: the name is a NUL-terminated literal.
        let fd = unsafe {
            libc::memfd_create(
                c"cuda-link-worker".as_ptr(),
                libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING,
            )
        };
        if fd < 0 {
            return Err(os_failure("memfd_create"));
        }
        // SAFETY: the descriptor was just created and is owned by no one else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: a valid descriptor and a seal argument.
        if unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_ADD_SEALS, libc::F_SEAL_SHRINK) } != 0 {
            return Err(os_failure("fcntl(F_ADD_SEALS)"));
        }
        Self::open(fd)
    }

    /// This side's view of an existing file (the worker's, of the file it
    /// inherited).
    pub(super) fn open(fd: OwnedFd) -> Result<Self, LinkError> {
        let len = file_len(fd.as_raw_fd())?;
        let mapping = Arc::new(Mapping::new(fd.as_raw_fd(), len)?);
        Ok(Shared { fd, mapping })
    }

    pub(super) fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// The file alone, this side's mapping forgotten, not unmapped: in the
    /// child of a fork, which has no copy of it (`MADV_DONTFORK`), its
    /// address may hold another mapping.
    pub(super) fn disown(self) -> OwnedFd {
        std::mem::forget(self.mapping);
        self.fd
    }

    /// The file's size.
    pub(super) fn file_len(&self) -> Result<usize, LinkError> {
        file_len(self.fd())
    }

    /// Maps at least `len` bytes, growing the file first when it is
    /// shorter (`grow`) or failing when it is (the other side said more
    /// than it wrote).
    fn cover(&mut self, len: usize, grow: bool) -> Result<(), LinkError> {
        if len <= self.mapping.len {
            return Ok(());
        }
        let mut file = self.file_len()?;
        if file < len {
            if !grow {
                return Err(LinkError::Isolation {
                    detail: format!("a message of {len} bytes is longer than the shared file"),
                });
            }
            file = len.next_power_of_two();
            let size = libc::off_t::try_from(file).map_err(|_| LinkError::Isolation {
                detail: format!("a message of {len} bytes is too long to share"),
            })?;
            // SAFETY: a valid descriptor; growing a file has no other effect.
            if unsafe { libc::ftruncate(self.fd(), size) } != 0 {
                return Err(os_failure("ftruncate"));
            }
        }
        self.mapping = Arc::new(Mapping::new(self.fd(), file)?);
        Ok(())
    }

    /// Writes a message of `len` bytes with `write`, which must fill them
    /// without reading them (both callers copy into the slice).
    pub(super) fn write(
        &mut self,
        len: usize,
        write: impl FnOnce(&mut [u8]),
    ) -> Result<(), LinkError> {
        if Arc::strong_count(&self.mapping) != 1 {
            // Every mapping shows the same pages: a view of the last
            // message would see this one written under it.
            return Err(LinkError::Isolation {
                detail: "a shared message is written while one is still read".into(),
            });
        }
        self.cover(len, true)?;
        // SAFETY: `len` is within the mapping; no view of it is alive
        // (checked above: older mappings went with their views); `write`
        // only writes through the slice, and the other side does not touch
        // the memory meanwhile (the module's protocol; a worker corrupted
        // into breaking it could only change the request it reads next).
        let bytes = unsafe { std::slice::from_raw_parts_mut(self.mapping.ptr, len) };
        write(bytes);
        Ok(())
    }

    /// Copies the first `len` bytes, which the worker wrote, into `out`:
    /// the caller's read. A worker is trusted to keep the protocol only as
    /// far as nvJitLink does not corrupt it, so the caller never holds a
    /// reference into the memory, it copies. The caller reserves `out`
    /// (fallibly: an answer can be large); this reserves only what is
    /// missing.
    pub(super) fn copy_out(&mut self, len: usize, out: &mut Vec<u8>) -> Result<(), LinkError> {
        self.cover(len, false)?;
        out.clear();
        out.reserve_exact(len);
        // SAFETY: `len` is within the mapping and `out` has room for it;
        // the pages of a file are always initialized. Bytes a worker that
        // broke the protocol writes meanwhile are copied as some bytes,
        // which the caller decodes as it decodes any answer.
        unsafe {
            std::ptr::copy_nonoverlapping(self.mapping.ptr, out.as_mut_ptr(), len);
            out.set_len(len);
        }
        Ok(())
    }

    /// A view of the first `len` bytes, which the caller wrote: the
    /// worker's read (the caller keeps the protocol: it is this crate).
    pub(super) fn read(&mut self, len: usize) -> Result<View, LinkError> {
        self.cover(len, false)?;
        Ok(View {
            mapping: Arc::clone(&self.mapping),
            len,
        })
    }
}

fn file_len(fd: RawFd) -> Result<usize, LinkError> {
    // SAFETY: `stat` is plain data, filled by fstat before it is read.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a valid descriptor and an out-pointer to a `stat`.
    if unsafe { libc::fstat(fd, &mut stat) } != 0 {
        return Err(os_failure("fstat"));
    }
    usize::try_from(stat.st_size).map_err(|_| os_failure("fstat"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_written_is_read_through_another_mapping() {
        let mut writer = Shared::create().unwrap();
        // SAFETY: dup of a valid descriptor.
        let copy = unsafe { OwnedFd::from_raw_fd(libc::dup(writer.fd())) };
        let mut reader = Shared::open(copy).unwrap();
        writer.write(5, |b| b.copy_from_slice(b"hello")).unwrap();
        let view = reader.read(5).unwrap();
        assert_eq!(view.as_ref(), b"hello");
        // Not while a view of the last message is alive.
        assert!(reader.write(1, |b| b.fill(0)).is_err());
        drop(view);
        // A longer message grows the file and both sides map it again.
        writer.write(100_000, |b| b.fill(7)).unwrap();
        assert_eq!(reader.read(100_000).unwrap().as_ref()[99_999], 7);
        let mut copied = Vec::new();
        reader.copy_out(3, &mut copied).unwrap();
        assert_eq!(copied, [7, 7, 7]);
        // More than was ever written is an error, never a read past the end.
        assert!(reader.read(1 << 30).is_err());
        assert!(reader.copy_out(1 << 30, &mut copied).is_err());
        // The file cannot shrink.
        // SAFETY: a valid descriptor.
        assert_ne!(unsafe { libc::ftruncate(writer.fd(), 0) }, 0);
    }
}
