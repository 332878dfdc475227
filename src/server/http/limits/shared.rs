//! The rate limits kept in the database, so that every instance sharing it
//! counts the same tries: GCRA (as `governor` does in memory), one
//! statement a try. A key's row holds when its next try is due (`tat`); a
//! try is let through when that is at most `burst - 1` intervals ahead of
//! now, and then moves it one interval on.

use std::time::Duration;

use super::rate::{Key, Rate};
use crate::server::{
    db::{Backend, Db},
    error::Result,
};

/// The upsert of one try, for a backend (which spells "the larger" its own way).
fn take_sql(backend: Backend) -> String {
    let max = backend.greatest();
    format!(
        "INSERT INTO rate_limits (key, tat, ok) VALUES ($1, $2 + $3, 1)
         ON CONFLICT (key) DO UPDATE SET
           tat = CASE WHEN {max}(rate_limits.tat, $2) - $2 <= $4 THEN {max}(rate_limits.tat, $2) + $3 ELSE rate_limits.tat END,
           ok = CASE WHEN {max}(rate_limits.tat, $2) - $2 <= $4 THEN 1 ELSE 0 END
         RETURNING tat, ok"
    )
}

/// Takes one try of `rate` for `key` at `now` (milliseconds on the limits'
/// clock). `Ok(None)`: let through; `Ok(Some(wait))`: not before `wait`.
pub async fn take(db: &Db, name: &str, key: &Key, rate: Rate, now: u64) -> Result<Option<Duration>> {
    let every = rate.every.as_millis() as i64;
    let tolerance = every * i64::from(rate.burst.saturating_sub(1));
    let key = stored_key(name, key);
    let (tat, ok): (i64, i64) = sqlx::query_as(&take_sql(Backend::of(db)))
        .bind(key)
        .bind(now as i64)
        .bind(every)
        .bind(tolerance)
        .fetch_one(db)
        .await?;
    Ok((ok == 0).then(|| Duration::from_millis((tat - tolerance - now as i64).max(1) as u64)))
}

/// Forgets keys whose next try was due before `now` (they are back to a full burst).
pub async fn forget_idle(db: &Db, now: u64) -> Result<u64> {
    Ok(sqlx::query("DELETE FROM rate_limits WHERE tat < $1").bind(now as i64).execute(db).await?.rows_affected())
}

/// A key as its row names it.
fn stored_key(name: &str, key: &Key) -> String {
    format!("{name}:{}", key.iter().map(|b| format!("{b:02x}")).collect::<String>())
}

/// Forgets one key (its account was deleted).
pub async fn forget(db: &Db, name: &str, key: &Key) -> Result<()> {
    sqlx::query("DELETE FROM rate_limits WHERE key = $1").bind(stored_key(name, key)).execute(db).await?;
    Ok(())
}
