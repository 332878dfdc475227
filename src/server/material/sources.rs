//! A lesson's sources in the database: added (the text already read from
//! the file), listed, read a page at a time, removed. Every call names the
//! teacher: another teacher's lesson, or a trashed one, is not found.

use super::sandbox::{Extractor, Refusal};
use crate::{
    models::SourceSummary,
    server::{
        db::{self, Db},
        error::{AppError, Result},
        ids,
        lessons,
        accounts::quota,
    },
};

/// The most sources one lesson keeps.
pub const MAX_SOURCES: i64 = 20;
/// How long an opening is, in characters.
const OPENING_CHARS: usize = 160;

/// The first line or two of a text, cut at a word.
pub fn opening(text: &str) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= OPENING_CHARS {
        return flat;
    }
    let cut: String = flat.chars().take(OPENING_CHARS).collect();
    let cut = cut.rsplit_once(' ').map_or(cut.as_str(), |(head, _)| head).to_string();
    format!("{cut}…")
}

/// The lesson's sources, oldest first.
pub async fn list(db: &Db, owner_id: &str, lesson_id: &str) -> Result<Vec<SourceSummary>> {
    if !lessons::is_editable(db, owner_id, lesson_id).await? {
        return Err(AppError::NotFound);
    }
    Ok(sqlx::query_as::<_, SourceSummary>(
        "SELECT id, name, size, chars, opening FROM lesson_sources WHERE lesson_id = $1 ORDER BY seq, id",
    )
    .bind(lesson_id)
    .fetch_all(db)
    .await?)
}

/// A file to add: its name and what it holds.
pub struct Upload {
    pub name: String,
    pub bytes: Vec<u8>,
}

/// Adds files to a lesson's sources, all or none: every file is read first,
/// and one that cannot be is a refusal naming it (with the others' names
/// kept out of the store too), so a teacher never finds half a batch added.
/// The lesson and its room for more are checked before anything is read;
/// reading happens in child processes (`sandbox`), one batch per account.
pub async fn add(db: &Db, extractor: &Extractor, owner_id: &str, lesson_id: &str, files: Vec<Upload>) -> Result<Vec<SourceSummary>> {
    if files.is_empty() {
        return Err(AppError::BadRequest("Choose a file to add: a .txt, .md, .html, .docx or .pdf.".into()));
    }
    if !lessons::is_editable(db, owner_id, lesson_id).await? {
        return Err(AppError::NotFound);
    }
    let held: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM lesson_sources WHERE lesson_id = $1").bind(lesson_id).fetch_one(db).await?;
    room_for(held, files.len())?;
    // An account with no room left is refused before any reader starts (the
    // database refuses the rows themselves past the limit, `quota`).
    let (stored, limit) = quota::usage(db, owner_id).await?;
    if limit.is_some_and(|limit| stored >= limit) {
        return Err(AppError::StorageFull);
    }
    let _turn = extractor.account_turn(owner_id).map_err(refused)?;
    let mut read = Vec::with_capacity(files.len());
    for f in files {
        let name: String = f.name.trim().chars().take(200).collect();
        let text = extractor.text_of(&name, &f.bytes).await.map_err(refused)?;
        read.push((name, f.bytes.len() as i64, text));
    }

    let mut tx = db::begin_write(db).await?;
    let (held, last): (i64, i64) = sqlx::query_as("SELECT COUNT(*), COALESCE(MAX(seq), 0) FROM lesson_sources WHERE lesson_id = $1")
        .bind(lesson_id)
        .fetch_one(&mut *tx)
        .await?;
    room_for(held, read.len())?;
    let mut added = Vec::with_capacity(read.len());
    for (n, (name, size, text)) in (1..).zip(read) {
        let s = SourceSummary { id: ids::new_id(), name, size, chars: text.chars().count() as i64, opening: opening(&text) };
        sqlx::query(
            "INSERT INTO lesson_sources (id, lesson_id, seq, name, size, chars, opening, text, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        )
        .bind(&s.id)
        .bind(lesson_id)
        .bind(last + n)
        .bind(&s.name)
        .bind(s.size)
        .bind(s.chars)
        .bind(&s.opening)
        .bind(&text)
        .bind(db::time::now())
        .execute(&mut *tx)
        .await?;
        added.push(s);
    }
    tx.commit().await?;
    Ok(added)
}

/// Refused unless a lesson holding `held` sources has room for `more`.
fn room_for(held: i64, more: usize) -> Result<()> {
    if held + more as i64 > MAX_SOURCES {
        return Err(AppError::BadRequest(format!(
            "A lesson keeps at most {MAX_SOURCES} sources, and this one has {held}. Remove some before adding more."
        )));
    }
    Ok(())
}

/// A reader's refusal as the teacher gets it.
fn refused(r: Refusal) -> AppError {
    match r {
        Refusal::File(_) | Refusal::Unsafe(_) => AppError::BadRequest(r.sentence()),
        Refusal::Busy | Refusal::AccountBusy => AppError::Unavailable(r.sentence()),
        Refusal::Server(cause) => AppError::Internal(format!("reading material: {cause}")),
    }
}

/// Gives lesson `to` a copy of every source of lesson `from`, in their
/// order, on `conn`: inside the caller's write transaction, the one that
/// writes lesson `to` (`lessons::library::insert_copy`), so a copy comes
/// with all its material or is not made. The caller has checked that its
/// teacher may read lesson `from` (their own, or one shared with the school).
pub async fn copy_in(conn: &mut sqlx::AnyConnection, from: &str, to: &str) -> Result<()> {
    let rows: Vec<(i64, String, i64, i64, String, String)> =
        sqlx::query_as("SELECT seq, name, size, chars, opening, text FROM lesson_sources WHERE lesson_id = $1 ORDER BY seq, id")
            .bind(from)
            .fetch_all(&mut *conn)
            .await?;
    for (seq, name, size, chars, opening, text) in rows {
        sqlx::query(
            "INSERT INTO lesson_sources (id, lesson_id, seq, name, size, chars, opening, text, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        )
        .bind(ids::new_id())
        .bind(to)
        .bind(seq)
        .bind(name)
        .bind(size)
        .bind(chars)
        .bind(opening)
        .bind(text)
        .bind(db::time::now())
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// Removes one source; not found when it is not this teacher's lesson's.
pub async fn remove(db: &Db, owner_id: &str, lesson_id: &str, source_id: &str) -> Result<()> {
    if !lessons::is_editable(db, owner_id, lesson_id).await? {
        return Err(AppError::NotFound);
    }
    let done = sqlx::query("DELETE FROM lesson_sources WHERE id = $1 AND lesson_id = $2").bind(source_id).bind(lesson_id).execute(db).await?;
    db::touched_one(&done)?;
    Ok(())
}

/// A page of a source's text: characters `from` to `to` (at most `most`
/// of them), with its name and whole length; `None` when the lesson has no
/// such source. Read for the assistant, whose turn already checked the lesson.
pub async fn read(db: &Db, lesson_id: &str, source_id: &str, from: usize, most: usize) -> Result<Option<(String, usize, String)>> {
    let row: Option<(String, String)> = sqlx::query_as("SELECT name, text FROM lesson_sources WHERE id = $1 AND lesson_id = $2")
        .bind(source_id)
        .bind(lesson_id)
        .fetch_optional(db)
        .await?;
    Ok(row.map(|(name, text)| {
        let total = text.chars().count();
        let page: String = text.chars().skip(from).take(most).collect();
        (name, total, page)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_opening_is_cut_at_a_word() {
        assert_eq!(opening("Rivers\n\nrun  to the sea."), "Rivers run to the sea.");
        let long = "word ".repeat(100);
        let o = opening(&long);
        assert!(o.ends_with("word…") && o.chars().count() <= OPENING_CHARS + 1, "{o}");
    }
}
