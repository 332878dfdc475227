//! A teacher's lessons as a collection: finding them (search, sort, pages),
//! renaming, duplicating, importing one from XML, and the trash (delete,
//! restore, delete forever, and the purge of what has been there 30 days).
//!
//! A lesson in the trash keeps its revisions, chats and proposals; every
//! other query treats it as gone (`lessons`, `chats`, `proposals`), so
//! restoring it brings everything back as it was.

use std::time::Duration;

use serde::Deserialize;

use crate::server::{
    db::{self, Db},
    error::{AppError, Result},
    lessons::{self, clean_title},
    chats::turns::TurnHub,
};
use crate::{
    lesson,
    models::{Author, Lesson, LessonList, LessonSummary, TrashedLesson},
    refusals::MAX_LESSON_TITLE_CHARS,
};

/// Days a deleted lesson stays in the trash.
pub const TRASH_DAYS: u32 = 30;
/// Most lessons one page of a list holds.
pub const MAX_PAGE: i64 = 200;

/// How a list is ordered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Sort {
    /// Most recently changed first.
    #[default]
    Edited,
    /// By title, A to Z.
    Title,
    /// Best match first (with a search; without one, as `Edited`).
    Relevance,
}

impl Sort {
    /// `title`, `relevance` or anything else (the default order).
    pub fn from_word(word: &str) -> Self {
        match word {
            "title" => Self::Title,
            "relevance" => Self::Relevance,
            _ => Self::Edited,
        }
    }
}

/// The words of a search as a full-text query: every word must be there,
/// each matched by its beginning ("volcan" finds "volcanoes"), in any case.
/// Anything but letters and digits only separates words, so nothing typed is
/// ever read as query syntax. `None`: the search has no word in it.
fn match_query(backend: db::Backend, text: &str) -> Option<String> {
    let words: Vec<String> = text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).take(MAX_WORDS).map(str::to_lowercase).collect();
    if words.is_empty() {
        return None;
    }
    Some(match backend {
        db::Backend::Sqlite => words.iter().map(|w| format!("\"{w}\"*")).collect::<Vec<_>>().join(" "),
        db::Backend::Postgres => words.iter().map(|w| format!("{w}:*")).collect::<Vec<_>>().join(" & "),
    })
}

/// Words of a search that count; more are ignored.
const MAX_WORDS: usize = 16;

/// The teacher's lessons whose title or text has every word of `query` (all
/// lessons when it is empty), in `sort` order, `limit` from `offset`.
///
/// Full-text search over titles and each lesson's words without its markup
/// (`search_text`, so "answer" does not find every exercise by its
/// attribute): SQLite's FTS5 (`lesson_search`, kept in step by triggers) and
/// PostgreSQL's `tsvector` (`search_vector`, a generated column), both
/// without stemming, the title weighted above the text for "Best match".
/// `make bench` times it with 1,000 lessons.
pub async fn find(db: &Db, owner: &str, query: &str, sort: Sort, limit: i64, offset: i64) -> Result<LessonList> {
    let backend = db::Backend::of(db);
    let (limit, offset) = (limit.clamp(1, MAX_PAGE), offset.max(0));
    let query = query.trim();
    let order = match sort {
        Sort::Title => "lower(l.title), l.id",
        Sort::Relevance if !query.is_empty() => match backend {
            db::Backend::Sqlite => "bm25(lesson_search, 10.0, 1.0), l.updated_at DESC, l.id",
            db::Backend::Postgres => "ts_rank(l.search_vector, to_tsquery('simple', $2)) DESC, l.updated_at DESC, l.id",
        },
        _ => "l.updated_at DESC, l.id",
    };
    if query.is_empty() {
        let filter = "l.owner_id = $1 AND l.deleted_at IS NULL";
        let lessons = sqlx::query_as::<_, LessonSummary>(&format!(
            "SELECT l.id, l.title, l.updated_at FROM lessons l WHERE {filter} ORDER BY {order} LIMIT $2 OFFSET $3"
        ))
        .bind(owner)
        .bind(limit)
        .bind(offset)
        .fetch_all(db)
        .await?;
        let total: i64 = sqlx::query_scalar(&format!("SELECT COUNT(*) FROM lessons l WHERE {filter}")).bind(owner).fetch_one(db).await?;
        return Ok(LessonList { lessons, total });
    }
    let Some(matching) = match_query(backend, query) else {
        return Ok(LessonList { lessons: Vec::new(), total: 0 });
    };
    let from = match backend {
        db::Backend::Sqlite => {
            // CROSS JOIN keeps the index first: SQLite would otherwise walk
            // the teacher's lessons and ask the index about each.
            "lesson_search CROSS JOIN lessons l ON l.rowid = lesson_search.rowid
             WHERE lesson_search MATCH $2 AND l.owner_id = $1 AND l.deleted_at IS NULL"
        }
        db::Backend::Postgres => {
            "lessons l WHERE l.search_vector @@ to_tsquery('simple', $2) AND l.owner_id = $1 AND l.deleted_at IS NULL"
        }
    };
    let lessons = sqlx::query_as::<_, LessonSummary>(&format!(
        "SELECT l.id, l.title, l.updated_at FROM {from} ORDER BY {order} LIMIT $3 OFFSET $4"
    ))
    .bind(owner)
    .bind(&matching)
    .bind(limit)
    .bind(offset)
    .fetch_all(db)
    .await?;
    let total: i64 = sqlx::query_scalar(&format!("SELECT COUNT(*) FROM {from}")).bind(owner).bind(&matching).fetch_one(db).await?;
    Ok(LessonList { lessons, total })
}

/// Gives a lesson a new title.
pub async fn rename(db: &Db, owner: &str, id: &str, title: &str) -> Result<Lesson> {
    let title = clean_title(title)?;
    let done = sqlx::query(
        "UPDATE lessons SET title = $1, updated_at = $4
         WHERE id = $2 AND owner_id = $3 AND deleted_at IS NULL",
    )
    .bind(&title)
    .bind(id)
    .bind(owner)
    .bind(db::time::now())
    .execute(db)
    .await?;
    db::touched_one(&done)?;
    lessons::get_own(db, owner, id).await
}

/// A title cut to the length titles may have.
pub(crate) fn fit_title(title: &str) -> String {
    title.chars().take(MAX_LESSON_TITLE_CHARS).collect()
}

/// "Copy of …": the lesson's current document as a new lesson, without its
/// history or chats.
pub async fn duplicate(db: &Db, owner: &str, id: &str) -> Result<Lesson> {
    let original = lessons::get_editable(db, owner, id).await?;
    let title = fit_title(&format!("Copy of {}", original.title));
    let summary: String = format!("Copied from “{}”", original.title).chars().take(200).collect();
    insert_copy(db, owner, &title, &original.document_xml, &summary, &original.id).await
}

/// A new lesson of `owner`'s holding `document` and a copy of the material
/// of lesson `material_of`, written in one transaction: if the material
/// cannot be copied, there is no half copy left behind (nor one left by a
/// server stopped between the two).
pub(super) async fn insert_copy(db: &Db, owner: &str, title: &str, document: &str, summary: &str, material_of: &str) -> Result<Lesson> {
    let mut tx = db::begin_write(db).await?;
    let id = lessons::insert_in(&mut tx, owner, title, document, Author::Teacher, summary).await?;
    crate::server::material::sources::copy_in(&mut tx, material_of, &id).await?;
    tx.commit().await?;
    lessons::get_own(db, owner, &id).await
}

/// A lesson made from an XML file. Nothing is created unless the document is
/// valid; the errors say where each problem is. Without a title, the
/// lesson's first heading names it.
pub async fn import(db: &Db, owner: &str, title: Option<&str>, xml: &str) -> Result<Lesson> {
    if xml.len() > lesson::MAX_BYTES {
        return Err(AppError::PayloadTooLarge(format!("The lesson is too large. Keep it under {} KB.", lesson::MAX_BYTES / 1024)));
    }
    let root = lesson::normalize(xml).map_err(AppError::InvalidLesson)?;
    let errors = crate::server::standards::frameworks::problems(db, owner, &root).await?;
    if !errors.is_empty() {
        return Err(AppError::InvalidLesson(errors));
    }
    let heading = root
        .children
        .iter()
        .find_map(|n| match n {
            lesson::Node::Element(e) if e.name == "h1" => Some(e.text()),
            _ => None,
        })
        .filter(|t| !t.trim().is_empty());
    let title = match title.map(str::trim).filter(|t| !t.is_empty()) {
        Some(t) => clean_title(t)?,
        None => clean_title(&fit_title(heading.as_deref().unwrap_or("Imported lesson")))?,
    };
    lessons::insert(db, owner, &title, &root.to_xml(), "Imported the lesson").await
}

/// Runs `sql` (binding the lesson id, then the owner) on exactly one of the
/// teacher's lessons; none matched is `NotFound`.
async fn one_lesson(db: &Db, sql: &str, owner: &str, id: &str) -> Result<()> {
    let done = sqlx::query(sql).bind(id).bind(owner).bind(db::time::now()).execute(db).await?;
    db::touched_one(&done)?;
    Ok(())
}

/// Moves a lesson to the trash, stopping a reply running in any of its
/// chats first (and waiting, a little, until it has stopped).
pub async fn trash(db: &Db, turns: &TurnHub, owner: &str, id: &str) -> Result<()> {
    lessons::get_own(db, owner, id).await?;
    for chat in chat_ids(db, owner, id).await? {
        if let Some(log) = turns.running_in(&chat) {
            log.cancel.cancel();
            if tokio::time::timeout(Duration::from_secs(10), log.finished()).await.is_err() {
                return Err(AppError::Conflict("A reply in this lesson is still stopping. Try again in a moment.".into()));
            }
        }
    }
    let sql = "UPDATE lessons SET deleted_at = $3
               WHERE id = $1 AND owner_id = $2 AND deleted_at IS NULL";
    one_lesson(db, sql, owner, id).await
}

/// Takes a lesson out of the trash, with its chats and history.
pub async fn restore(db: &Db, owner: &str, id: &str) -> Result<Lesson> {
    let sql = "UPDATE lessons SET deleted_at = NULL WHERE id = $1 AND owner_id = $2 AND deleted_at IS NOT NULL";
    one_lesson(db, sql, owner, id).await?;
    lessons::get_own(db, owner, id).await
}

/// Deletes a lesson in the trash for good, with everything that belongs to it.
pub async fn delete_forever(db: &Db, owner: &str, id: &str) -> Result<()> {
    one_lesson(db, "DELETE FROM lessons WHERE id = $1 AND owner_id = $2 AND deleted_at IS NOT NULL", owner, id).await
}

/// The teacher's trash, most recently deleted first.
pub async fn list_trash(db: &Db, owner: &str) -> Result<Vec<TrashedLesson>> {
    Ok(sqlx::query_as(
        "SELECT id, title, deleted_at FROM lessons WHERE owner_id = $1 AND deleted_at IS NOT NULL ORDER BY deleted_at DESC, id",
    )
    .bind(owner)
    .fetch_all(db)
    .await?)
}

/// Deletes for good every lesson in the trash for `TRASH_DAYS` as of `now`
/// (an ISO time; the clock is the caller's, so tests can pick the day).
pub async fn purge(db: &Db, now: &str) -> Result<u64> {
    let done = sqlx::query("DELETE FROM lessons WHERE deleted_at IS NOT NULL AND deleted_at <= $1")
        .bind(db::time::shifted(now, Duration::from_secs(u64::from(TRASH_DAYS) * 86_400), false).ok_or_else(|| AppError::Internal(format!("not a time: {now}")))?)
        .execute(db)
        .await?;
    Ok(done.rows_affected())
}

/// Fills in the search text of lessons stored before it existed (run at start-up).
pub async fn fill_search_text(db: &Db) -> Result<u64> {
    let rows: Vec<(String, String)> = sqlx::query_as("SELECT id, document_xml FROM lessons WHERE search_text IS NULL").fetch_all(db).await?;
    for (id, xml) in &rows {
        sqlx::query("UPDATE lessons SET search_text = $1 WHERE id = $2").bind(lessons::search_text(xml)).bind(id).execute(db).await?;
    }
    Ok(rows.len() as u64)
}

/// The chats of a lesson (in the trash or not), to stop their running turns.
async fn chat_ids(db: &Db, owner: &str, lesson_id: &str) -> Result<Vec<String>> {
    Ok(sqlx::query_scalar("SELECT id FROM chat_sessions WHERE lesson_id = $1 AND owner_id = $2")
        .bind(lesson_id)
        .bind(owner)
        .fetch_all(db)
        .await?)
}
