//! What went wrong with a lesson file a teacher tried to import, kept for a
//! few minutes for the page the import redirects to. The address carries
//! only a random token, never the text, so nobody can make the page say
//! what they like; a token is good only for the teacher who imported.
//!
//! Kept in the database: with many instances, the page after the import
//! may be served by another one.

use std::time::Duration;

use crate::server::{
    db::{time, Db},
    error::Result,
    ids,
};
use crate::models::ImportReport;

/// How long a report is kept.
const KEEP: Duration = Duration::from_secs(600);

/// Keeps `report` for `owner`; returns the token that finds it.
pub async fn keep(db: &Db, owner: &str, report: &ImportReport) -> Result<String> {
    let token = ids::random_hex(16);
    sqlx::query("INSERT INTO import_reports (token, owner_id, report, created_at) VALUES ($1, $2, $3, $4)")
        .bind(&token)
        .bind(owner)
        .bind(serde_json::to_string(report).unwrap_or_default())
        .bind(time::now())
        .execute(db)
        .await?;
    Ok(token)
}

/// The report behind `token`, if it is `owner`'s and was kept after `now`
/// minus `KEEP`.
pub async fn find(db: &Db, owner: &str, token: &str, now: &str) -> Result<Option<ImportReport>> {
    let Some(since) = time::shifted(now, KEEP, false) else { return Ok(None) };
    let report: Option<String> = sqlx::query_scalar("SELECT report FROM import_reports WHERE token = $1 AND owner_id = $2 AND created_at >= $3")
        .bind(token)
        .bind(owner)
        .bind(since)
        .fetch_optional(db)
        .await?;
    Ok(report.and_then(|r| serde_json::from_str(&r).ok()))
}

/// Forgets reports kept before `now` minus `KEEP`.
pub async fn purge(db: &Db, now: &str) -> Result<u64> {
    let Some(before) = time::shifted(now, KEEP, false) else { return Ok(0) };
    Ok(sqlx::query("DELETE FROM import_reports WHERE created_at < $1").bind(before).execute(db).await?.rows_affected())
}
