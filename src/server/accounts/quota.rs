//! How much each account may keep. Every write of a lesson's version, of
//! material, or of a student's answer is counted on its account in the
//! database (the triggers of migration `storage`), which refuses a write
//! past the account's limit whichever part of the server makes it; the
//! limits are the server's configuration, written here when it starts.
//! The School page shows each account's use.

use crate::server::{db::Db, error::Result};

/// Writes the server's limits, in MiB, where the database's checks read them.
pub async fn configure(db: &Db, teacher_mb: u64, student_mb: u64) -> Result<()> {
    let bytes = |mb: u64| i64::try_from(mb.saturating_mul(1024 * 1024)).unwrap_or(i64::MAX);
    for (kind, limit) in [("teacher", bytes(teacher_mb)), ("student", bytes(student_mb))] {
        sqlx::query("INSERT INTO storage_quotas (kind, bytes) VALUES ($1, $2) ON CONFLICT (kind) DO UPDATE SET bytes = excluded.bytes")
            .bind(kind)
            .bind(limit)
            .execute(db)
            .await?;
    }
    Ok(())
}

/// What the account keeps, in bytes, and its limit (`None`: no limit written).
pub async fn usage(db: &Db, user_id: &str) -> Result<(i64, Option<i64>)> {
    let row: Option<(i64, Option<i64>)> = sqlx::query_as(
        "SELECT u.stored_bytes, q.bytes FROM users u
           LEFT JOIN storage_quotas q ON q.kind = (CASE WHEN u.role = 'student' THEN 'student' ELSE 'teacher' END)
         WHERE u.id = $1",
    )
    .bind(user_id)
    .fetch_optional(db)
    .await?;
    Ok(row.unwrap_or((0, None)))
}
