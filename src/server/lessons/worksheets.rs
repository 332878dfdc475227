//! A worksheet handed to students carries no answers, only a reference to
//! the lesson it was made from (`lesson::word`). The reference is kept
//! here with the lesson as it was then, one per version of the lesson; it
//! is unguessable and opens nothing by itself: an import brings the whole
//! lesson back only to a teacher who may edit that lesson now. Anyone else
//! gets what the worksheet shows.

use crate::{
    lesson::word::Worksheet,
    models::Lesson,
    server::{
        db::{self, Db},
        error::{AppError, Result},
        ids, lessons,
    },
};

/// The reference a worksheet of `lesson` (as it is now) carries.
pub async fn reference(db: &Db, lesson: &Lesson) -> Result<String> {
    sqlx::query("INSERT INTO worksheets (token, lesson_id, revision, document_xml, made_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (lesson_id, revision) DO NOTHING")
        .bind(ids::random_hex(16))
        .bind(&lesson.id)
        .bind(lesson.revision)
        .bind(&lesson.document_xml)
        .bind(db::time::now())
        .execute(db)
        .await?;
    Ok(sqlx::query_scalar("SELECT token FROM worksheets WHERE lesson_id = $1 AND revision = $2").bind(&lesson.id).bind(lesson.revision).fetch_one(db).await?)
}

/// The whole lesson a worksheet came from, when `user_id` may edit that
/// lesson; `None` when the reference is unknown or not theirs (the
/// worksheet is then the lesson it shows). A worksheet of theirs changed
/// in Word is refused with a sentence, as Margin cannot read the changes
/// into its exercises.
pub async fn resolve(db: &Db, user_id: &str, worksheet: &Worksheet) -> Result<Option<String>> {
    let Some(reference) = worksheet.reference.as_deref() else { return Ok(None) };
    let kept: Option<(String, String)> = sqlx::query_as("SELECT lesson_id, document_xml FROM worksheets WHERE token = $1").bind(reference).fetch_optional(db).await?;
    let Some((lesson_id, xml)) = kept else { return Ok(None) };
    if !lessons::is_editable(db, user_id, &lesson_id).await? {
        return Ok(None);
    }
    if !worksheet.made_from(&xml) {
        return Err(AppError::BadRequest(crate::lesson::word::CHANGED.into()));
    }
    Ok(Some(xml))
}
