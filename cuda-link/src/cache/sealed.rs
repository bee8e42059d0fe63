//! The objects a remote store holds, and whom a reader trusts for them.
//!
//! An object is an entry file behind a header: a magic, the format, the
//! scheme that vouches for it, then the scheme's tag over the header, the
//! key the entry is stored under and the entry:
//!
//! - `ED25519`: a signature by the writers' Ed25519 key, over the SHA-256
//!   of those bytes. Readers hold only the public key: they can check an
//!   entry, never make one.
//! - `HMAC`: HMAC-SHA256 under a key every writer and reader shares, so
//!   every reader can also sign.
//! - `HASHED`: a SHA-256, which anyone with write access to the store can
//!   compute. Read only where the reader opted in to trusting the store
//!   itself (`CUDA_LINK_CACHE_TRUST_UNSIGNED`).
//!
//! A reader serves an object only under a scheme it holds a key for; an
//! object that claims a scheme the reader has no key for is refused, never
//! taken on its word.

use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

const MAGIC: &[u8; 8] = b"CLNKRMT\0";
/// 2: a scheme field and Ed25519 signatures (1 had a "signed" flag, which
/// a keyless reader took on its word).
const FORMAT: u32 = 2;
const HEAD_LEN: usize = MAGIC.len() + 4 + 4;
/// The longest header and tag of any scheme.
pub(super) const MAX_HEAD_LEN: usize = HEAD_LEN + 64;

/// How an object is vouched for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scheme {
    Hashed = 0,
    Hmac = 1,
    Ed25519 = 2,
}

impl Scheme {
    fn tag_len(self) -> usize {
        match self {
            Scheme::Hashed | Scheme::Hmac => 32,
            Scheme::Ed25519 => 64,
        }
    }
}

/// What a store's objects are checked with, and signed with when this
/// process publishes.
#[derive(Clone, Default)]
pub(super) struct Keys {
    /// The writers' Ed25519 key: signs, and its public half verifies.
    pub signing: Option<SigningKey>,
    /// Public keys whose signatures are served.
    pub verifying: Vec<VerifyingKey>,
    /// The shared HMAC key.
    pub team: Option<Vec<u8>>,
    /// Serve hashed objects, which anyone who can write the store makes.
    pub trust_unsigned: bool,
}

impl Keys {
    /// Whether any object can be served.
    pub fn can_read(&self) -> bool {
        self.signing.is_some()
            || !self.verifying.is_empty()
            || self.team.is_some()
            || self.trust_unsigned
    }

    /// Whether this process can vouch for what it publishes in a way its
    /// readers check: a key, or a store trusted as it is.
    pub fn can_write(&self) -> bool {
        // A keyed reader that also trusts unsigned entries would publish
        // hashed ones, which every keyed reader refuses.
        self.signing.is_some() || self.team.is_some() || (self.trust_unsigned && !self.keyed())
    }

    /// Whether some key is set, so that hashed objects are refused.
    fn keyed(&self) -> bool {
        self.signing.is_some() || !self.verifying.is_empty() || self.team.is_some()
    }

    /// The scheme this process publishes with: the strongest it holds.
    fn scheme(&self) -> Scheme {
        match (&self.signing, &self.team) {
            (Some(_), _) => Scheme::Ed25519,
            (None, Some(_)) => Scheme::Hmac,
            (None, None) => Scheme::Hashed,
        }
    }
}

impl std::fmt::Debug for Keys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Keys")
            .field("signing", &self.signing.is_some())
            .field("verifying", &self.verifying.len())
            .field("team", &self.team.is_some())
            .field("trust_unsigned", &self.trust_unsigned)
            .finish()
    }
}

/// SHA-256 of the header, the key and the entry: what is signed.
fn digest(head: &[u8], key: &[u8; 32], entry: &[u8]) -> [u8; 32] {
    let mut hash = Sha256::new();
    hash.update(head);
    hash.update(key);
    hash.update(entry);
    hash.finalize().into()
}

fn mac(team: &[u8], head: &[u8], key: &[u8; 32], entry: &[u8]) -> Hmac<Sha256> {
    // HMAC takes a key of any length: `new_from_slice` cannot fail.
    let mut mac = Hmac::<Sha256>::new_from_slice(team).unwrap_or_else(|_| unreachable!());
    mac.update(head);
    mac.update(key);
    mac.update(entry);
    mac
}

/// The object stored under `key` for an entry file, vouched for with the
/// strongest scheme `keys` hold.
pub(super) fn seal(key: &[u8; 32], entry: &[u8], keys: &Keys) -> Vec<u8> {
    let scheme = keys.scheme();
    let mut object = Vec::with_capacity(HEAD_LEN + scheme.tag_len() + entry.len());
    object.extend_from_slice(MAGIC);
    object.extend_from_slice(&FORMAT.to_le_bytes());
    object.extend_from_slice(&(scheme as u32).to_le_bytes());
    let head = &object[..HEAD_LEN];
    let tag: Vec<u8> = match (scheme, &keys.signing, &keys.team) {
        (Scheme::Ed25519, Some(signing), _) => {
            signing.sign(&digest(head, key, entry)).to_bytes().to_vec()
        }
        (Scheme::Hmac, _, Some(team)) => {
            mac(team, head, key, entry).finalize().into_bytes().to_vec()
        }
        _ => digest(head, key, entry).to_vec(),
    };
    object.extend_from_slice(&tag);
    object.extend_from_slice(entry);
    object
}

/// The entry file in an object stored under `key`, when `keys` vouch for
/// it; else why not.
pub(super) fn open<'a>(
    object: &'a [u8],
    key: &[u8; 32],
    keys: &Keys,
) -> Result<&'a [u8], &'static str> {
    let rest = object
        .strip_prefix(MAGIC)
        .ok_or("not an entry of this format")?;
    let (format, rest) = rest.split_first_chunk::<4>().ok_or("truncated")?;
    let (scheme, rest) = rest.split_first_chunk::<4>().ok_or("truncated")?;
    if u32::from_le_bytes(*format) != FORMAT {
        return Err("another format version");
    }
    let scheme = match u32::from_le_bytes(*scheme) {
        0 => Scheme::Hashed,
        1 => Scheme::Hmac,
        2 => Scheme::Ed25519,
        _ => return Err("vouched for by a scheme this version does not know"),
    };
    let (tag, entry) = rest.split_at_checked(scheme.tag_len()).ok_or("truncated")?;
    let head = &object[..HEAD_LEN];
    match scheme {
        Scheme::Ed25519 => {
            let signature = Signature::from_slice(tag).map_err(|_| "a malformed signature")?;
            let signed = digest(head, key, entry);
            let public = keys.signing.as_ref().map(SigningKey::verifying_key);
            let mut verifiers = keys.verifying.iter().chain(public.as_ref()).peekable();
            if verifiers.peek().is_none() {
                return Err("signed with Ed25519, and no verify key is set");
            }
            match verifiers.any(|v| v.verify_strict(&signed, &signature).is_ok()) {
                true => Ok(entry),
                false => Err("its signature is not by a trusted key"),
            }
        }
        Scheme::Hmac => {
            let team = keys
                .team
                .as_deref()
                .ok_or("signed with a team key, and none is set")?;
            mac(team, head, key, entry)
                .verify_slice(tag)
                .map(|()| entry)
                .map_err(|_| "its signature is not the team key's")
        }
        Scheme::Hashed if keys.keyed() => Err("unsigned, and a key is set"),
        Scheme::Hashed if !keys.trust_unsigned => {
            Err("unsigned, and unsigned entries are not trusted")
        }
        Scheme::Hashed if digest(head, key, entry) == *tag => Ok(entry),
        Scheme::Hashed => Err("its hash does not match: corrupt or truncated"),
    }
}

/// An Ed25519 key from its 32 bytes in hex (64 digits, any case).
pub(super) fn key_from_hex(text: &str) -> Option<[u8; 32]> {
    let text = text.trim();
    if text.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (byte, pair) in out.iter_mut().zip(text.as_bytes().chunks(2)) {
        let pair = std::str::from_utf8(pair).ok()?;
        *byte = u8::from_str_radix(pair, 16).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ENTRY: &[u8] = b"CLNKCACHE\0 an entry file";
    const AT: [u8; 32] = [7; 32];

    fn writer() -> Keys {
        Keys {
            signing: Some(SigningKey::from_bytes(&[3; 32])),
            ..Keys::default()
        }
    }

    fn reader() -> Keys {
        Keys {
            verifying: vec![SigningKey::from_bytes(&[3; 32]).verifying_key()],
            ..Keys::default()
        }
    }

    fn team() -> Keys {
        Keys {
            team: Some(b"a team key of 16+ bytes".to_vec()),
            ..Keys::default()
        }
    }

    fn keyless() -> Keys {
        Keys {
            trust_unsigned: true,
            ..Keys::default()
        }
    }

    #[test]
    fn each_scheme_opens_for_its_reader_and_every_corruption_is_caught() {
        for (written, read) in [
            (writer(), reader()),
            (team(), team()),
            (keyless(), keyless()),
        ] {
            let object = seal(&AT, ENTRY, &written);
            assert_eq!(open(&object, &AT, &read), Ok(ENTRY));
            assert_eq!(open(&object, &AT, &written), Ok(ENTRY));
            assert!(open(&object, &[8; 32], &read).is_err(), "re-keyed");
            for at in 0..object.len() {
                let mut flipped = object.clone();
                flipped[at] ^= 0x20;
                assert!(open(&flipped, &AT, &read).is_err(), "byte {at}");
            }
            for len in 0..HEAD_LEN + 64 {
                assert!(open(&object[..len.min(object.len() - 1)], &AT, &read).is_err());
            }
        }
    }

    /// Whatever the flag or tag says, an object is served only under a
    /// scheme the reader holds a key for.
    #[test]
    fn a_forged_object_is_never_served() {
        let other = Keys {
            signing: Some(SigningKey::from_bytes(&[4; 32])),
            ..Keys::default()
        };
        let forged = [
            seal(&AT, ENTRY, &other),
            seal(&AT, ENTRY, &keyless()),
            seal(
                &AT,
                ENTRY,
                &Keys {
                    team: Some(b"another key of 16+ bytes".to_vec()),
                    ..Keys::default()
                },
            ),
        ];
        for object in &forged {
            for reader in [reader(), team(), writer()] {
                assert!(open(object, &AT, &reader).is_err());
            }
            // Any scheme number over a hashed object's tag.
            for scheme in 0..4u32 {
                let mut claimed = seal(&AT, ENTRY, &keyless());
                claimed[12..16].copy_from_slice(&scheme.to_le_bytes());
                for reader in [reader(), team(), writer()] {
                    assert!(open(&claimed, &AT, &reader).is_err());
                }
            }
        }
        // A keyless reader that did not opt in serves nothing, and no
        // keyless reader serves a signed object it cannot check.
        assert!(open(&seal(&AT, ENTRY, &keyless()), &AT, &Keys::default()).is_err());
        assert!(open(&seal(&AT, ENTRY, &writer()), &AT, &keyless()).is_err());
        assert!(open(&seal(&AT, ENTRY, &team()), &AT, &keyless()).is_err());
    }

    #[test]
    fn a_verify_only_reader_cannot_write() {
        assert!(reader().can_read() && !reader().can_write());
        assert!(!Keys::default().can_read() && !Keys::default().can_write());
        assert!(writer().can_write() && team().can_write() && keyless().can_write());
        let trusting_reader = Keys {
            trust_unsigned: true,
            ..reader()
        };
        assert!(!trusting_reader.can_write());
    }

    #[test]
    fn keys_read_from_hex() {
        let hex = "00".repeat(31) + "Ff";
        assert_eq!(key_from_hex(&hex).map(|k| k[31]), Some(0xff));
        assert_eq!(key_from_hex("abc"), None);
        assert_eq!(key_from_hex(&"zz".repeat(32)), None);
    }
}
