//! Lessons in the database. Every query is scoped to the owner: a lesson that
//! belongs to someone else is `NotFound`, exactly like one that does not exist.

use sqlx::SqlitePool;

use super::{
    error::{AppError, Result},
    ids,
};
use crate::{
    models::{Author, Lesson, LessonSummary, Revision, RevisionSummary, SaveOutcome},
    refusals::{TitleRefusal, MAX_LESSON_TITLE_CHARS},
};

/// Checks and tidies a title.
pub fn clean_title(title: &str) -> Result<String> {
    let title = title.split_whitespace().collect::<Vec<_>>().join(" ");
    if title.is_empty() {
        return Err(AppError::Title(TitleRefusal::Blank));
    }
    if title.chars().count() > MAX_LESSON_TITLE_CHARS {
        return Err(AppError::Title(TitleRefusal::TooLong));
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
    let mut tx = db.begin_with("BEGIN IMMEDIATE").await?;
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

/// Longest revision summary kept, in characters.
const MAX_SUMMARY_CHARS: usize = 200;

/// Validates and stores a new version of a lesson on top of `base_revision`.
///
/// The document is stored only if it is valid and `base_revision` is still the
/// latest; otherwise nothing changes and the outcome says why.
pub async fn save_document(
    db: &SqlitePool,
    owner_id: &str,
    id: &str,
    xml: &str,
    base_revision: i64,
    author: Author,
    summary: &str,
) -> Result<SaveOutcome> {
    let current = get_owned(db, owner_id, id).await?;
    let root = match crate::lesson::normalize(xml) {
        Ok(root) => root,
        Err(errors) => return Ok(SaveOutcome::Invalid { errors }),
    };
    let doc = root.to_xml();
    let summary: String = summary.split_whitespace().collect::<Vec<_>>().join(" ").chars().take(MAX_SUMMARY_CHARS).collect();
    let summary = if summary.is_empty() { "Edited the lesson".to_string() } else { summary };
    let mut tx = db.begin_with("BEGIN IMMEDIATE").await?;
    let updated = sqlx::query(
        "UPDATE lessons SET document_xml = ?, revision = revision + 1,
                updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
         WHERE id = ? AND owner_id = ? AND revision = ?",
    )
    .bind(&doc)
    .bind(id)
    .bind(owner_id)
    .bind(base_revision)
    .execute(&mut *tx)
    .await?;
    if updated.rows_affected() == 0 {
        tx.rollback().await?;
        let latest = get_owned(db, owner_id, id).await.map(|l| l.revision).unwrap_or(current.revision);
        return Ok(SaveOutcome::Conflict { current: latest });
    }
    let revision = base_revision + 1;
    sqlx::query("INSERT INTO lesson_revisions (lesson_id, number, document_xml, author, summary) VALUES (?, ?, ?, ?, ?)")
        .bind(id)
        .bind(revision)
        .bind(&doc)
        .bind(author.as_str())
        .bind(&summary)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(SaveOutcome::Saved { revision, document_xml: doc })
}

/// The lesson's revisions, newest first.
pub async fn list_revisions(db: &SqlitePool, owner_id: &str, id: &str) -> Result<Vec<RevisionSummary>> {
    get_owned(db, owner_id, id).await?;
    let rows: Vec<(i64, String, String, String)> = sqlx::query_as(
        "SELECT number, author, summary, created_at FROM lesson_revisions WHERE lesson_id = ? ORDER BY number DESC",
    )
    .bind(id)
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(number, author, summary, created_at)| RevisionSummary { number, author: Author::from_str(&author), summary, created_at })
        .collect())
}

/// One revision of one of the teacher's lessons.
pub async fn get_revision(db: &SqlitePool, owner_id: &str, id: &str, number: i64) -> Result<Revision> {
    get_owned(db, owner_id, id).await?;
    let row: Option<(i64, String, String, String, String)> = sqlx::query_as(
        "SELECT number, author, summary, created_at, document_xml FROM lesson_revisions WHERE lesson_id = ? AND number = ?",
    )
    .bind(id)
    .bind(number)
    .fetch_optional(db)
    .await?;
    let (number, author, summary, created_at, document_xml) = row.ok_or(AppError::NotFound)?;
    Ok(Revision { number, author: Author::from_str(&author), summary, created_at, document_xml })
}

/// Makes an earlier revision the current document, as a new revision.
pub async fn restore_revision(db: &SqlitePool, owner_id: &str, id: &str, number: i64, base_revision: i64) -> Result<SaveOutcome> {
    let old = get_revision(db, owner_id, id, number).await?;
    let summary = format!("Restored version {number}");
    save_document(db, owner_id, id, &old.document_xml, base_revision, Author::Teacher, &summary).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_are_tidied_and_checked() {
        assert_eq!(clean_title("  French   verbs \n").unwrap(), "French verbs");
        assert!(clean_title("   ").is_err());
        assert!(clean_title(&"x".repeat(MAX_LESSON_TITLE_CHARS + 1)).is_err());
    }

    #[test]
    fn starter_document_escapes_the_title() {
        let doc = starter_document("Fish & <chips>");
        assert!(doc.contains("<h1 id=\"b1\">Fish &amp; &lt;chips&gt;</h1>"));
    }
}
