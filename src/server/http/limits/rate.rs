//! What a limit counts and how fast: shared by the limits kept in memory
//! (`limits`) and those kept in the database (`shared`).

use std::time::Duration;

/// A limiter's key: the first 16 bytes of a SHA-256 of what is counted.
pub type Key = [u8; 16];

/// A limit: `burst` tries at once, then one every `every`.
#[derive(Clone, Copy, Debug)]
pub struct Rate {
    pub burst: u32,
    pub every: Duration,
}
