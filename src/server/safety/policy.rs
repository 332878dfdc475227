//! How much the tutor helps on a lesson (`models::TutorPolicy`), kept on the
//! lesson and set by its owner.

use crate::{
    models::TutorPolicy,
    server::{
        db::Db,
        error::{AppError, Result},
    },
};

/// The tutor's policy on `lesson_id` (full help for a lesson not found: the
/// callers have already checked who may read it).
pub async fn of_lesson(db: &Db, lesson_id: &str) -> Result<TutorPolicy> {
    let word: Option<String> = sqlx::query_scalar("SELECT tutor_policy FROM lessons WHERE id = $1").bind(lesson_id).fetch_optional(db).await?;
    Ok(word.as_deref().and_then(TutorPolicy::from_wire).unwrap_or_default())
}

/// Sets the policy of one of `owner`'s lessons; another's is not found.
pub async fn set(db: &Db, owner: &str, lesson_id: &str, policy: TutorPolicy) -> Result<()> {
    let done = sqlx::query("UPDATE lessons SET tutor_policy = $1 WHERE id = $2 AND owner_id = $3 AND deleted_at IS NULL")
        .bind(policy.as_str())
        .bind(lesson_id)
        .bind(owner)
        .execute(db)
        .await?;
    if done.rows_affected() == 0 {
        return Err(AppError::NotFound);
    }
    Ok(())
}
