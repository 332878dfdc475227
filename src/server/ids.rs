//! Random identifiers and secrets from the operating system's generator.

use argon2::password_hash::rand_core::{OsRng, RngCore};

/// `bytes` random bytes as lowercase hex.
pub fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    OsRng.fill_bytes(&mut buf);
    buf.iter().map(|b| format!("{b:02x}")).collect()
}

/// A new id for a row: 128 random bits, unguessable so that ids in URLs leak nothing.
pub fn new_id() -> String {
    random_hex(16)
}
