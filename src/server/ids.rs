//! Random identifiers and secrets from the operating system's generator, and
//! the hash under which a secret token is stored (sessions, invites).

use argon2::password_hash::rand_core::{OsRng, RngCore};

/// `bytes` as lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `bytes` random bytes as lowercase hex.
pub fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    OsRng.fill_bytes(&mut buf);
    hex(&buf)
}

/// A new id for a row: 128 random bits, unguessable so that ids in URLs leak nothing.
pub fn new_id() -> String {
    random_hex(16)
}

/// What the database keeps of a secret token: its SHA-256 in hex, so a copy
/// of the database opens no session and accepts no invite.
pub fn token_hash(token: &str) -> String {
    use sha2::{Digest, Sha256};
    hex(&Sha256::digest(token.as_bytes()))
}

/// SHA-256 of `bytes` in hex: whether a file is one already loaded.
pub fn digest(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    hex(&Sha256::digest(bytes))
}
