//! The on-disk format of one entry: a magic, a version, the SHA-256 of the
//! body and its length, then the output and the info log, each
//! length-prefixed. The checksum catches corruption, not forgery: trust in
//! the entries comes from the directory's ownership (see `trust`).

use sha2::{Digest, Sha256};

use super::CachedLink;

const MAGIC: &[u8; 10] = b"CLNKCACHE\0";
const FORMAT_VERSION: u32 = 1;
const HEADER_LEN: usize = MAGIC.len() + 4 + 32 + 8;

pub(super) fn encode(output: &[u8], info_log: &str) -> Vec<u8> {
    let mut body = Vec::with_capacity(16 + output.len() + info_log.len());
    body.extend_from_slice(&(output.len() as u64).to_le_bytes());
    body.extend_from_slice(output);
    body.extend_from_slice(&(info_log.len() as u64).to_le_bytes());
    body.extend_from_slice(info_log.as_bytes());
    let mut file = Vec::with_capacity(HEADER_LEN + body.len());
    file.extend_from_slice(MAGIC);
    file.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    file.extend_from_slice(&Sha256::digest(&body));
    file.extend_from_slice(&(body.len() as u64).to_le_bytes());
    file.extend_from_slice(&body);
    file
}

/// `None` for anything but an intact entry of this format.
pub(super) fn decode(file: &[u8]) -> Option<CachedLink> {
    let rest = file.strip_prefix(MAGIC)?;
    let (version, rest) = rest.split_first_chunk::<4>()?;
    let (checksum, rest) = rest.split_first_chunk::<32>()?;
    let (len, body) = rest.split_first_chunk::<8>()?;
    if u32::from_le_bytes(*version) != FORMAT_VERSION
        || u64::from_le_bytes(*len) != body.len() as u64
        || Sha256::digest(body).as_slice() != checksum
    {
        return None;
    }
    let (output_len, rest) = body.split_first_chunk::<8>()?;
    let (output, rest) =
        rest.split_at_checked(usize::try_from(u64::from_le_bytes(*output_len)).ok()?)?;
    let (log_len, log) = rest.split_first_chunk::<8>()?;
    if u64::from_le_bytes(*log_len) != log.len() as u64 {
        return None;
    }
    Some(CachedLink {
        output: output.to_vec(),
        info_log: String::from_utf8_lossy(log).into_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_and_every_corruption_is_caught() {
        let file = encode(b"\x7fELF cubin bytes", "info");
        assert_eq!(
            decode(&file),
            Some(CachedLink {
                output: b"\x7fELF cubin bytes".to_vec(),
                info_log: "info".into()
            })
        );
        for len in 0..file.len() {
            assert_eq!(decode(&file[..len]), None, "truncated to {len}");
        }
        for at in 0..file.len() {
            let mut flipped = file.clone();
            flipped[at] ^= 0x40;
            assert_eq!(decode(&flipped), None, "flipped byte {at}");
        }
    }
}
