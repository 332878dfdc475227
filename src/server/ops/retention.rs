//! Retention: once a day, on one instance, the chats a school keeps no
//! longer are deleted (`accounts::keeping`: students' chats with the tutor,
//! teachers' chats with the assistant, each after its own number of days
//! since its last message), and the audit log's entries older than the
//! school keeps them (180 days unless set). The events of replies kept for other instances
//! are forgotten by the housekeeping's own purge, within the hour.
//!
//! One instance sweeps a day: the first to claim the day in `sweeps`. The
//! counts go to `/metrics` (`margin_retention_deleted_total{what}`).

use std::time::Duration;

use time::OffsetDateTime;

use crate::server::{
    db::{time as db_time, Db},
    error::Result,
    metrics::METRICS,
};

/// What one sweep deleted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Swept {
    pub tutor_chats: u64,
    pub teacher_chats: u64,
    pub audit_entries: u64,
}

/// Claims `now`'s day for `instance`; `false` when another (or an earlier
/// tick of this one) already has it.
pub async fn claim(db: &Db, instance: &str, now: OffsetDateTime) -> Result<bool> {
    let day = db_time::stored(now).get(..10).unwrap_or_default().to_string();
    let done = sqlx::query("INSERT INTO sweeps (day, instance, swept_at) VALUES ($1, $2, $3) ON CONFLICT (day) DO NOTHING")
        .bind(day)
        .bind(instance)
        .bind(db_time::stored(now))
        .execute(db)
        .await?;
    Ok(done.rows_affected() == 1)
}

/// Sweeps if `now`'s day is still unclaimed (the housekeeping's tick).
pub async fn daily(db: &Db, instance: &str, now: OffsetDateTime) -> Result<Option<Swept>> {
    if !claim(db, instance, now).await? {
        return Ok(None);
    }
    let swept = sweep(db, now).await?;
    if swept != Swept::default() {
        tracing::info!(
            tutor_chats = swept.tutor_chats,
            teacher_chats = swept.teacher_chats,
            audit_entries = swept.audit_entries,
            "deleted the chats and audit entries schools keep no longer"
        );
    }
    Ok(Some(swept))
}

/// Deletes every chat older than its school keeps it, as of `now`.
pub async fn sweep(db: &Db, now: OffsetDateTime) -> Result<Swept> {
    let schools: Vec<(String, Option<i64>, Option<i64>)> = sqlx::query_as(
        "SELECT id, keep_tutor_chats_days, keep_teacher_chats_days FROM schools
         WHERE keep_tutor_chats_days IS NOT NULL OR keep_teacher_chats_days IS NOT NULL",
    )
    .fetch_all(db)
    .await?;
    let mut swept = Swept::default();
    for (school, tutor, teacher) in schools {
        if let Some(days) = tutor {
            swept.tutor_chats += delete_older(db, &school, true, cutoff(now, days)).await?;
        }
        if let Some(days) = teacher {
            swept.teacher_chats += delete_older(db, &school, false, cutoff(now, days)).await?;
        }
    }
    let audit: Vec<(String, i64)> = sqlx::query_as("SELECT id, keep_audit_days FROM schools").fetch_all(db).await?;
    for (school, days) in audit {
        let done = sqlx::query("DELETE FROM audit_events WHERE school_id = $1 AND at < $2").bind(&school).bind(cutoff(now, days)).execute(db).await?;
        swept.audit_entries += done.rows_affected();
    }
    METRICS.retention_deleted("tutor_chats", swept.tutor_chats);
    METRICS.retention_deleted("teacher_chats", swept.teacher_chats);
    METRICS.retention_deleted("audit_entries", swept.audit_entries);
    Ok(swept)
}

fn cutoff(now: OffsetDateTime, days: i64) -> String {
    let by = Duration::from_secs(u64::try_from(days.max(0)).unwrap_or(0) * 86_400);
    db_time::stored(now.checked_sub(time::Duration::try_from(by).unwrap_or(time::Duration::ZERO)).unwrap_or(now))
}

/// Deletes the chats of `school`'s students (or its other members) whose
/// last message is before `cutoff`; their messages go with them.
async fn delete_older(db: &Db, school: &str, students: bool, cutoff: String) -> Result<u64> {
    let role = if students { "u.role = 'student'" } else { "u.role <> 'student'" };
    let sql = format!(
        "DELETE FROM chat_sessions WHERE updated_at < $1 AND owner_id IN (SELECT u.id FROM users u WHERE u.school_id = $2 AND {role})"
    );
    Ok(sqlx::query(&sql).bind(cutoff).bind(school).execute(db).await?.rows_affected())
}
