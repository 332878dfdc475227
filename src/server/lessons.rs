//! Lessons in the database. Every query is scoped to the owner: a lesson that
//! belongs to someone else is `NotFound`, exactly like one that does not exist.

use sqlx::SqlitePool;

use super::{
    error::{AppError, Result},
    ids,
};
use crate::models::{Lesson, LessonSummary};

/// Longest title accepted, in characters.
pub const MAX_TITLE_CHARS: usize = 200;

/// Checks and tidies a title.
pub fn clean_title(title: &str) -> Result<String> {
    let title = title.split_whitespace().collect::<Vec<_>>().join(" ");
    if title.is_empty() {
        return Err(AppError::BadRequest("Give the lesson a title.".into()));
    }
    if title.chars().count() > MAX_TITLE_CHARS {
        return Err(AppError::BadRequest(format!(
            "Keep the title under {MAX_TITLE_CHARS} characters."
        )));
    }
    Ok(title)
}

/// The document a new lesson starts with.
pub fn starter_document(title: &str) -> String {
    format!(
        "<lesson>\n  <h1 id=\"b1\">{}</h1>\n  <p id=\"b2\">Start writing your lesson here, or ask the assistant for a first draft.</p>\n</lesson>\n",
        crate::lesson::escape_text(title)
    )
}

/// The teacher's lessons, most recently changed first.
pub async fn list_for_owner(db: &SqlitePool, owner_id: &str) -> Result<Vec<LessonSummary>> {
    Ok(sqlx::query_as::<_, LessonSummary>(
        "SELECT id, title, updated_at FROM lessons WHERE owner_id = ? ORDER BY updated_at DESC, id",
    )
    .bind(owner_id)
    .fetch_all(db)
    .await?)
}

/// Creates a lesson with its first revision.
pub async fn create(db: &SqlitePool, owner_id: &str, title: &str) -> Result<Lesson> {
    let title = clean_title(title)?;
    let id = ids::new_id();
    let doc = starter_document(&title);
    let mut tx = db.begin().await?;
    sqlx::query("INSERT INTO lessons (id, owner_id, title, document_xml, revision) VALUES (?, ?, ?, ?, 1)")
        .bind(&id)
        .bind(owner_id)
        .bind(&title)
        .bind(&doc)
        .execute(&mut *tx)
        .await?;
    sqlx::query(
        "INSERT INTO lesson_revisions (lesson_id, number, document_xml, author, summary)
         VALUES (?, 1, ?, 'teacher', 'Created the lesson')",
    )
    .bind(&id)
    .bind(&doc)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    get_owned(db, owner_id, &id).await
}

/// One of the teacher's lessons.
pub async fn get_owned(db: &SqlitePool, owner_id: &str, id: &str) -> Result<Lesson> {
    sqlx::query_as::<_, Lesson>(
        "SELECT id, title, document_xml, revision, updated_at FROM lessons WHERE id = ? AND owner_id = ?",
    )
    .bind(id)
    .bind(owner_id)
    .fetch_optional(db)
    .await?
    .ok_or(AppError::NotFound)
}

/// Whether the teacher owns this lesson.
pub async fn is_owned(db: &SqlitePool, owner_id: &str, id: &str) -> Result<bool> {
    let row: Option<(i64,)> = sqlx::query_as("SELECT 1 FROM lessons WHERE id = ? AND owner_id = ?")
        .bind(id)
        .bind(owner_id)
        .fetch_optional(db)
        .await?;
    Ok(row.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_are_tidied_and_checked() {
        assert_eq!(clean_title("  French   verbs \n").unwrap(), "French verbs");
        assert!(clean_title("   ").is_err());
        assert!(clean_title(&"x".repeat(MAX_TITLE_CHARS + 1)).is_err());
    }

    #[test]
    fn starter_document_escapes_the_title() {
        let doc = starter_document("Fish & <chips>");
        assert!(doc.contains("<h1 id=\"b1\">Fish &amp; &lt;chips&gt;</h1>"));
    }
}
