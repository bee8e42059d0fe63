//! The on-disk format of one entry: a magic, a version, the key the entry
//! was stored under, an XXH3-128 over everything else in the file, the
//! body's length, then the output and the info log, each length-prefixed.
//!
//! The checksum covers the key, so an intact entry renamed to another key's
//! file name is told apart from a corrupt one, and is not served for that
//! key. It catches corruption and misfiled entries, not forgery: trust in
//! the entries comes from the directory's ownership (see `trust`).

use twox_hash::XxHash3_128;

use super::CachedLink;

const MAGIC: &[u8; 10] = b"CLNKCACHE\0";
/// 2: the key in the header and under the checksum. 3: XXH3-128 instead
/// of SHA-256, a fifth of a warm hit's time: the checksum finds corruption,
/// and trust comes from the directory, so it need not resist forgery.
const FORMAT_VERSION: u32 = 3;
const SUM_LEN: usize = 16;
const HEADER_LEN: usize = MAGIC.len() + 4 + 32 + SUM_LEN + 8;

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
pub(super) fn encode(key: &[u8; 32], output: &[u8], info_log: &str) -> Vec<u8> {
    let mut body = Vec::with_capacity(16 + output.len() + info_log.len());
    body.extend_from_slice(&(output.len() as u64).to_le_bytes());
    body.extend_from_slice(output);
    body.extend_from_slice(&(info_log.len() as u64).to_le_bytes());
    body.extend_from_slice(info_log.as_bytes());
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
pub(super) fn decode(file: &[u8], key: &[u8; 32]) -> Result<CachedLink, Rejected> {
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
    let (output_len, rest) = body.split_first_chunk::<8>().ok_or(Corrupt)?;
    let output_len = usize::try_from(u64::from_le_bytes(*output_len)).map_err(|_| Corrupt)?;
    let (output, rest) = rest.split_at_checked(output_len).ok_or(Corrupt)?;
    let (log_len, log) = rest.split_first_chunk::<8>().ok_or(Corrupt)?;
    if u64::from_le_bytes(*log_len) != log.len() as u64 {
        return Err(Corrupt);
    }
    Ok(CachedLink {
        output: output.to_vec(),
        info_log: String::from_utf8_lossy(log).into_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: [u8; 32] = [7; 32];

    #[test]
    fn entries_round_trip_and_every_corruption_is_caught() {
        let file = encode(&KEY, b"\x7fELF cubin bytes", "info");
        assert_eq!(
            decode(&file, &KEY),
            Ok(CachedLink {
                output: b"\x7fELF cubin bytes".to_vec(),
                info_log: "info".into()
            })
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

    #[test]
    fn an_intact_entry_of_another_key_is_not_served() {
        let file = encode(&KEY, b"\x7fELF cubin bytes", "info");
        let mut other = KEY;
        other[31] ^= 1;
        assert_eq!(decode(&file, &other), Err(Rejected::OtherKey));
    }
}
