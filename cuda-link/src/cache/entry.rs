//! The on-disk format of one entry: a magic, a version, the key the entry
//! was stored under, an XXH3-128 over everything else in the file, the
//! body's length, then the body: the count of named blobs, and each blob's
//! name and bytes, length-prefixed. The format knows no kind of output:
//! a link stores its output and info log, a compile its output, log and
//! lowered names.
//!
//! The checksum covers the key, so an intact entry renamed to another key's
//! file name is told apart from a corrupt one, and is not served for that
//! key. It catches corruption and misfiled entries, not forgery: trust in
//! the entries comes from the directory's ownership (see `trust`).

use twox_hash::XxHash3_128;

const MAGIC: &[u8; 10] = b"CLNKCACHE\0";
/// 2: the key in the header and under the checksum. 3: XXH3-128 instead
/// of SHA-256, a fifth of a warm hit's time: the checksum finds corruption,
/// and trust comes from the directory, so it need not resist forgery.
/// 4: named blobs instead of a link's output and log.
const FORMAT_VERSION: u32 = 4;
const SUM_LEN: usize = 16;
const HEADER_LEN: usize = MAGIC.len() + 4 + 32 + SUM_LEN + 8;

/// One entry of a [`LinkCache`](super::LinkCache): named blobs, whatever
/// stored them. A link's entry holds `output` and `info_log`; a compile's,
/// its output, log and lowered names. The cache keeps the names and bytes
/// as given and checks them as one: a reader gets every blob the writer
/// stored, intact, or a miss.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CacheEntry {
    blobs: Vec<(String, Vec<u8>)>,
}

impl CacheEntry {
    /// The most blobs an entry holds: a link stores two, a compile three.
    /// A file with more is refused before any blob is read.
    pub const MAX_BLOBS: usize = 16;

    /// The entry with `bytes` under `name` (replacing a blob of that name).
    /// An entry of more than [`MAX_BLOBS`](Self::MAX_BLOBS) blobs is not stored: the cache
    /// never reads one back.
    pub fn with(mut self, name: impl Into<String>, bytes: impl Into<Vec<u8>>) -> Self {
        let name = name.into();
        let bytes = bytes.into();
        match self.blobs.iter_mut().find(|(given, _)| *given == name) {
            Some(blob) => blob.1 = bytes,
            None => self.blobs.push((name, bytes)),
        }
        self
    }

    /// The blob stored under `name`.
    pub fn get(&self, name: &str) -> Option<&[u8]> {
        self.blobs
            .iter()
            .find(|(given, _)| given == name)
            .map(|(_, bytes)| bytes.as_slice())
    }

    /// Takes the blob stored under `name` out of the entry.
    pub fn take(&mut self, name: &str) -> Option<Vec<u8>> {
        let at = self.blobs.iter().position(|(given, _)| given == name)?;
        Some(self.blobs.remove(at).1)
    }

    /// Every blob, in the order stored.
    pub fn blobs(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.blobs
            .iter()
            .map(|(name, bytes)| (name.as_str(), bytes.as_slice()))
    }

    /// The bytes of every blob together.
    pub fn len(&self) -> usize {
        self.blobs.iter().map(|(_, bytes)| bytes.len()).sum()
    }

    /// Whether the entry holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Why a file is not an entry to serve for a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Rejected {
    /// Not an intact entry of this format.
    Corrupt,
    /// An intact entry, stored under another key.
    OtherKey,
}

/// The checksum of an entry: everything in the file but the checksum.
fn checksum(version: &[u8; 4], key: &[u8; 32], len: &[u8; 8], body: &[u8]) -> [u8; SUM_LEN] {
    let mut hasher = XxHash3_128::new();
    for part in [&MAGIC[..], version, key, len, body] {
        hasher.write(part);
    }
    hasher.finish_128().to_le_bytes()
}

/// The file of an entry for `key`.
pub(super) fn encode(key: &[u8; 32], entry: &CacheEntry) -> Vec<u8> {
    let size: usize = entry
        .blobs
        .iter()
        .map(|(n, b)| 16 + n.len() + b.len())
        .sum();
    let mut body = Vec::with_capacity(8 + size);
    body.extend_from_slice(&(entry.blobs.len() as u64).to_le_bytes());
    for (name, bytes) in &entry.blobs {
        body.extend_from_slice(&(name.len() as u64).to_le_bytes());
        body.extend_from_slice(name.as_bytes());
        body.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        body.extend_from_slice(bytes);
    }
    let version = FORMAT_VERSION.to_le_bytes();
    let len = (body.len() as u64).to_le_bytes();
    let mut file = Vec::with_capacity(HEADER_LEN + body.len());
    file.extend_from_slice(MAGIC);
    file.extend_from_slice(&version);
    file.extend_from_slice(key);
    file.extend_from_slice(&checksum(&version, key, &len, &body));
    file.extend_from_slice(&len);
    file.extend_from_slice(&body);
    file
}

/// The entry in `file` when it is intact and was stored for `key`.
pub(super) fn decode(file: &[u8], key: &[u8; 32]) -> Result<CacheEntry, Rejected> {
    use Rejected::Corrupt;
    let rest = file.strip_prefix(MAGIC).ok_or(Corrupt)?;
    let (version, rest) = rest.split_first_chunk::<4>().ok_or(Corrupt)?;
    let (stored_key, rest) = rest.split_first_chunk::<32>().ok_or(Corrupt)?;
    let (sum, rest) = rest.split_first_chunk::<SUM_LEN>().ok_or(Corrupt)?;
    let (len, body) = rest.split_first_chunk::<8>().ok_or(Corrupt)?;
    if u32::from_le_bytes(*version) != FORMAT_VERSION
        || u64::from_le_bytes(*len) != body.len() as u64
        || checksum(version, stored_key, len, body) != *sum
    {
        return Err(Corrupt);
    }
    if stored_key != key {
        return Err(Rejected::OtherKey);
    }
    // A length-prefixed part of `rest`, and what follows it.
    fn part(rest: &[u8]) -> Result<(&[u8], &[u8]), Rejected> {
        let (len, rest) = rest.split_first_chunk::<8>().ok_or(Corrupt)?;
        let len = usize::try_from(u64::from_le_bytes(*len)).map_err(|_| Corrupt)?;
        rest.split_at_checked(len).ok_or(Corrupt)
    }
    let (count, mut rest) = body.split_first_chunk::<8>().ok_or(Corrupt)?;
    let count = u64::from_le_bytes(*count);
    // No writer stores more blobs; each takes 16 bytes at least.
    if count > CacheEntry::MAX_BLOBS as u64 || count > rest.len() as u64 / 16 {
        return Err(Corrupt);
    }
    let mut entry = CacheEntry::default();
    for _ in 0..count {
        let (name, after) = part(rest)?;
        let (bytes, after) = part(after)?;
        let name = std::str::from_utf8(name).map_err(|_| Corrupt)?;
        // A writer stores each name once: a second is not this format's.
        if entry.get(name).is_some() {
            return Err(Corrupt);
        }
        entry.blobs.push((name.to_owned(), bytes.to_vec()));
        rest = after;
    }
    if !rest.is_empty() {
        return Err(Corrupt);
    }
    Ok(entry)
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: [u8; 32] = [7; 32];

    fn entry() -> CacheEntry {
        CacheEntry::default()
            .with("output", b"\x7fELF cubin bytes".as_slice())
            .with("info_log", b"info".as_slice())
            .with("empty", b"".as_slice())
    }

    #[test]
    fn entries_round_trip_and_every_corruption_is_caught() {
        let file = encode(&KEY, &entry());
        assert_eq!(decode(&file, &KEY), Ok(entry()));
        assert_eq!(
            decode(&encode(&KEY, &CacheEntry::default()), &KEY),
            Ok(CacheEntry::default())
        );
        for len in 0..file.len() {
            assert_eq!(
                decode(&file[..len], &KEY),
                Err(Rejected::Corrupt),
                "truncated to {len}"
            );
        }
        // The key field included: it is under the checksum.
        for at in 0..file.len() {
            let mut flipped = file.clone();
            flipped[at] ^= 0x40;
            assert_eq!(
                decode(&flipped, &KEY),
                Err(Rejected::Corrupt),
                "flipped byte {at}"
            );
        }
    }

    /// A well-formed file of 2 million empty blobs (or of one name twice)
    /// is refused at once, before a blob is read.
    #[test]
    fn too_many_or_duplicate_blobs_are_refused() {
        let many = CacheEntry {
            blobs: (0..2_000_000)
                .map(|i| (format!("{i}"), Vec::new()))
                .collect(),
        };
        let file = encode(&KEY, &many);
        let started = std::time::Instant::now();
        assert_eq!(decode(&file, &KEY), Err(Rejected::Corrupt));
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
        let twice = CacheEntry {
            blobs: vec![("output".into(), vec![1]), ("output".into(), vec![2])],
        };
        assert_eq!(decode(&encode(&KEY, &twice), &KEY), Err(Rejected::Corrupt));
        let most = CacheEntry {
            blobs: (0..CacheEntry::MAX_BLOBS)
                .map(|i| (format!("{i}"), vec![7]))
                .collect(),
        };
        assert_eq!(decode(&encode(&KEY, &most), &KEY), Ok(most));
    }

    #[test]
    fn an_intact_entry_of_another_key_is_not_served() {
        let file = encode(&KEY, &entry());
        let mut other = KEY;
        other[31] ^= 1;
        assert_eq!(decode(&file, &other), Err(Rejected::OtherKey));
    }
}
