//! What ties the teacher's decision on a held edit to the change they were
//! shown. Each proposal keeps a random seal of its own (never sent); the
//! server hands out, with every showing of a pending proposal (the pause,
//! the step, the history, `GET /api/proposals/{id}`), a digest: an HMAC,
//! under that seal, of the proposal's id, what it would change and the
//! lesson it would make, and the time the digest stops being good. Apply
//! and Discard must name it. A digest made up, made for another proposal,
//! or for content that is not what would now be applied is refused, as is
//! one older than a paused reply waits: nothing is applied or discarded
//! then, and the proposal stays, to be shown again with a fresh digest.
//!
//! A seal per proposal rather than one key for the server: every instance
//! sharing the database checks a digest with nothing to share or rotate.

use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::server::{clock::ShownClock, error::AppError, ids};

/// What a digest is made over: the proposal as stored.
pub struct Content<'a> {
    pub id: &'a str,
    /// Its changes as stored (JSON).
    pub changes: &'a str,
    pub document_xml: &'a str,
}

fn mac(seal: &str, c: &Content<'_>, expires: i64) -> Hmac<Sha256> {
    // Any key length is accepted by HMAC; the seal is 32 hex digits.
    let mut m = <Hmac<Sha256> as Mac>::new_from_slice(seal.as_bytes()).expect("HMAC takes any key");
    // Each part with its length first, so no two contents read the same.
    for part in [c.id, &expires.to_string(), c.changes, c.document_xml] {
        m.update(&(part.len() as u64).to_be_bytes());
        m.update(part.as_bytes());
    }
    m
}

/// A digest of `c`, good until the clock's `lasts` from now: `{expires}.{hex}`.
pub fn issue(clock: &ShownClock, seal: &str, c: &Content<'_>) -> String {
    let expires = clock.clock.now().unix_timestamp() + i64::try_from(clock.lasts.as_secs()).unwrap_or(i64::MAX / 2);
    format!("{expires}.{}", ids::hex(&mac(seal, c, expires).finalize().into_bytes()))
}

/// Whether `digest` was issued for exactly `c` and is still good.
pub fn check(clock: &ShownClock, seal: &str, c: &Content<'_>, digest: &str) -> Result<(), AppError> {
    let parsed = digest.split_once('.').and_then(|(expires, hex)| Some((expires.parse::<i64>().ok()?, from_hex(hex)?)));
    let Some((expires, tag)) = parsed.filter(|_| !seal.is_empty()) else { return Err(AppError::NotAsShown) };
    mac(seal, c, expires).verify_slice(&tag).map_err(|_| AppError::NotAsShown)?;
    if clock.clock.now().unix_timestamp() > expires {
        return Err(AppError::ShownTooLongAgo);
    }
    Ok(())
}

fn from_hex(hex: &str) -> Option<Vec<u8>> {
    if hex.len() != 64 || !hex.is_ascii() {
        return None;
    }
    (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).ok()).collect()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn content<'a>(id: &'a str, changes: &'a str) -> Content<'a> {
        Content { id, changes, document_xml: "<lesson><p id=\"p-1\">Hi</p></lesson>" }
    }

    #[test]
    fn a_digest_holds_for_its_own_content_until_it_expires_and_for_nothing_else() {
        let clock = ShownClock::real(Duration::from_secs(60));
        let start = time::OffsetDateTime::from_unix_timestamp(1_800_000_000).unwrap();
        clock.clock.set(start);
        let c = content("p1", "[]");
        let d = issue(&clock, "seal-a", &c);
        assert!(check(&clock, "seal-a", &c, &d).is_ok());
        // Another proposal, other changes, another document, another seal.
        assert!(matches!(check(&clock, "seal-a", &content("p2", "[]"), &d), Err(AppError::NotAsShown)));
        assert!(matches!(check(&clock, "seal-a", &content("p1", "[1]"), &d), Err(AppError::NotAsShown)));
        let other_doc = Content { document_xml: "<lesson/>", ..content("p1", "[]") };
        assert!(matches!(check(&clock, "seal-a", &other_doc, &d), Err(AppError::NotAsShown)));
        assert!(matches!(check(&clock, "seal-b", &c, &d), Err(AppError::NotAsShown)));
        assert!(matches!(check(&clock, "", &c, &d), Err(AppError::NotAsShown)));
        // Its time moved on by hand is no longer its own.
        let (expires, hex) = d.split_once('.').unwrap();
        let later = format!("{}.{hex}", expires.parse::<i64>().unwrap() + 3600);
        assert!(matches!(check(&clock, "seal-a", &c, &later), Err(AppError::NotAsShown)));
        for junk in ["", ".", "x.y", "1.abc", &format!("{expires}.{}", "0".repeat(64))] {
            assert!(matches!(check(&clock, "seal-a", &c, junk), Err(AppError::NotAsShown)), "{junk}");
        }
        // Good to the second it expires, stale after.
        clock.clock.set(start + Duration::from_secs(60));
        assert!(check(&clock, "seal-a", &c, &d).is_ok());
        clock.clock.set(start + Duration::from_secs(61));
        assert!(matches!(check(&clock, "seal-a", &c, &d), Err(AppError::ShownTooLongAgo)));
    }
}
