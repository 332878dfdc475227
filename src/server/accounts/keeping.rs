//! How long a school keeps its chats: a school's setting, set by its admin,
//! read by the daily sweep (`ops::retention`). `None` keeps them until
//! someone deletes them, which is the default. The audit log of AI actions
//! (`server::audit`) is kept `audit_days`, 180 unless the school says.

use crate::server::{
    db::Db,
    error::{AppError, Result},
};

/// The longest period a school may set, in days (ten years).
pub const MOST_DAYS: i64 = 3_650;

/// How long chats are kept, in days.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Keeping {
    /// Students' chats with the tutor.
    pub tutor_chats_days: Option<i64>,
    /// Teachers' chats with the assistant.
    pub teacher_chats_days: Option<i64>,
    /// The audit log's entries ([`AUDIT_DAYS`] unless set). On a change,
    /// `None` leaves it as it was.
    #[serde(default)]
    pub audit_days: Option<i64>,
}

/// How long the audit log is kept unless the school says otherwise: as
/// long as Google keeps Gemini-in-Classroom's admin audit events.
pub const AUDIT_DAYS: i64 = 180;

pub async fn of_school(db: &Db, school_id: &str) -> Result<Keeping> {
    let row: Option<(Option<i64>, Option<i64>, i64)> =
        sqlx::query_as("SELECT keep_tutor_chats_days, keep_teacher_chats_days, keep_audit_days FROM schools WHERE id = $1")
            .bind(school_id)
            .fetch_optional(db)
            .await?;
    let (tutor_chats_days, teacher_chats_days, audit_days) = row.ok_or(AppError::NotFound)?;
    Ok(Keeping { tutor_chats_days, teacher_chats_days, audit_days: Some(audit_days) })
}

pub async fn set(db: &Db, school_id: &str, k: Keeping) -> Result<()> {
    for days in [k.tutor_chats_days, k.teacher_chats_days].into_iter().flatten() {
        if !(1..=MOST_DAYS).contains(&days) {
            return Err(AppError::BadRequest(format!("Keep chats for 1 to {MOST_DAYS} days, or leave it empty to keep them until they are deleted.")));
        }
    }
    if k.audit_days.is_some_and(|d| !(30..=MOST_DAYS).contains(&d)) {
        return Err(AppError::BadRequest(format!("Keep the audit log for 30 to {MOST_DAYS} days.")));
    }
    sqlx::query("UPDATE schools SET keep_tutor_chats_days = $1, keep_teacher_chats_days = $2, keep_audit_days = COALESCE($3, keep_audit_days) WHERE id = $4")
        .bind(k.tutor_chats_days)
        .bind(k.teacher_chats_days)
        .bind(k.audit_days)
        .bind(school_id)
        .execute(db)
        .await?;
    Ok(())
}
