//! A blob's content address: `sha256:` and the 64 lowercase hex digits of its bytes' SHA-256.

use sha2::{Digest, Sha256};
use std::fmt;

/// The prefix of every blob id.
pub const PREFIX: &str = "sha256:";

/// A validated blob id (`sha256:` + 64 lowercase hex digits).
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BlobId(String);

impl BlobId {
    /// The id of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        let digest = Sha256::digest(bytes);
        let mut id = String::with_capacity(PREFIX.len() + 64);
        id.push_str(PREFIX);
        for byte in digest.iter() {
            id.push(char::from_digit(u32::from(byte >> 4), 16).expect("a nibble"));
            id.push(char::from_digit(u32::from(byte & 15), 16).expect("a nibble"));
        }
        BlobId(id)
    }

    /// Reads an id as hosts write it; the reason says what is wrong.
    pub fn parse(text: &str) -> Result<Self, String> {
        let Some(hex) = text.strip_prefix(PREFIX) else {
            return Err(format!("expected \"sha256:\" and 64 lowercase hex digits, found {}", quoted(text)));
        };
        if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
            return Err(format!("expected \"sha256:\" and 64 lowercase hex digits, found {}", quoted(text)));
        }
        Ok(BlobId(text.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The 64 hex digits alone (file names, database keys).
    pub fn hex(&self) -> &str {
        &self.0[PREFIX.len()..]
    }
}

/// A value in an error message, cut to a readable length.
fn quoted(text: &str) -> String {
    let cut: String = text.chars().take(80).collect();
    if cut.len() < text.len() {
        format!("{cut:?}…")
    } else {
        format!("{cut:?}")
    }
}

impl fmt::Display for BlobId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for BlobId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BlobId({})", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_id_of_bytes_is_their_sha256() {
        // SHA-256 of the empty string and of "abc" (FIPS 180-2's examples).
        assert_eq!(BlobId::of(b"").hex(), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        assert_eq!(
            BlobId::of(b"abc").as_str(),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn parse_takes_only_the_canonical_form() {
        let id = BlobId::of(b"x");
        assert_eq!(BlobId::parse(id.as_str()).unwrap(), id);
        for bad in ["", "sha256:", "sha256:ABC", &id.as_str().to_uppercase(), &format!("{}0", id), "md5:00"] {
            assert!(BlobId::parse(bad).is_err(), "{bad}");
        }
        let long = "x".repeat(500);
        assert!(BlobId::parse(&long).unwrap_err().len() < 200);
    }
}
