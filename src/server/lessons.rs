//! Lessons in the database. Every query is scoped to the owner: a lesson that
//! belongs to someone else is `NotFound`, exactly like one that does not exist,
//! and so is one in the trash (`library` manages the trash).
//!
//! Beside the queries here: the trash and search (`library`), proposed edits
//! (`proposals`), what listeners hear when a lesson changes (`events`), import
//! reports, the print page, Word files (`word`) and packages for learning
//! platforms (`lms`), and the HTTP doors (`routes`, `library_routes`,
//! `proposal_routes`, `forms`).

pub mod announce;
pub mod decisions;
pub mod editors;
pub mod events;
pub mod forms;
pub mod import_reports;
pub mod imports;
pub mod library;
pub mod library_routes;
pub mod linked;
pub mod live;
pub mod lms;
pub mod print;
pub mod proposal_routes;
pub mod proposals;
pub mod routes;
pub mod shown;
pub mod sharing;
pub mod word;
pub mod worksheets;
pub mod versions;

use crate::server::{
    db::{self, Db},
    error::{AppError, Result},
    ids, standards,
};
use crate::{
    lesson::{self, Change, Element},
    models::{Author, Lesson, Revision, RevisionSummary, SaveOutcome, SaveReply},
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

/// The document a new lesson starts with: its title and an empty
/// paragraph to write in. The editor shows a hint in an empty block; the
/// document holds no words the teacher did not write.
pub fn starter_document(title: &str) -> String {
    format!(
        "<lesson>\n  <h1 id=\"b1\">{}</h1>\n  <p id=\"b2\"/>\n</lesson>\n",
        crate::lesson::escape_text(title)
    )
}

/// Creates a lesson with its first revision.
pub async fn create(db: &Db, owner_id: &str, title: &str) -> Result<Lesson> {
    let title = clean_title(title)?;
    insert(db, owner_id, &title, &starter_document(&title), "Created the lesson").await
}

/// A lesson the assistant made (`create_lesson`): `document` already valid,
/// its first version the assistant's.
pub async fn create_by_agent(db: &Db, owner_id: &str, title: &str, document: &str) -> Result<Lesson> {
    let title = clean_title(title)?;
    if let Ok(root) = lesson::parse(document) {
        let errors = standards::frameworks::problems(db, owner_id, &root).await?;
        if !errors.is_empty() {
            return Err(AppError::InvalidLesson(errors));
        }
    }
    insert_by(db, owner_id, &title, document, Author::Agent, "Made by the assistant").await
}

/// A new lesson with `title` and `document` (already valid) as its first version.
pub(super) async fn insert(db: &Db, owner_id: &str, title: &str, document: &str, summary: &str) -> Result<Lesson> {
    insert_by(db, owner_id, title, document, Author::Teacher, summary).await
}

/// As `insert`, its first version written by `author`.
async fn insert_by(db: &Db, owner_id: &str, title: &str, document: &str, author: Author, summary: &str) -> Result<Lesson> {
    let mut tx = db::begin_write(db).await?;
    let id = insert_in(&mut tx, owner_id, title, document, author, summary).await?;
    tx.commit().await?;
    get_own(db, owner_id, &id).await
}

/// Writes a new lesson and its first version on `conn` (inside the
/// caller's write transaction, so that what comes with the lesson lands
/// with it or not at all); its id.
pub(super) async fn insert_in(conn: &mut sqlx::AnyConnection, owner_id: &str, title: &str, document: &str, author: Author, summary: &str) -> Result<String> {
    let id = ids::new_id();
    sqlx::query("INSERT INTO lessons (id, owner_id, title, document_xml, search_text, revision) VALUES ($1, $2, $3, $4, $5, 1)")
        .bind(&id)
        .bind(owner_id)
        .bind(title)
        .bind(document)
        .bind(search_text(document))
        .execute(&mut *conn)
        .await?;
    sqlx::query("INSERT INTO lesson_revisions (lesson_id, number, document_xml, author, summary, author_id) VALUES ($1, 1, $2, $3, $4, $5)")
        .bind(&id)
        .bind(document)
        .bind(author.as_str())
        .bind(summary)
        .bind(owner_id)
        .execute(&mut *conn)
        .await?;
    Ok(id)
}

/// The words of a lesson, without its markup: what search looks in.
pub fn search_text(document: &str) -> String {
    lesson::parse(document).map(|root| root.text()).unwrap_or_default()
}

/// SQL saying the lesson row `lesson` may be edited by the user `user`
/// (column names or parameters): its owner, or a colleague the owner
/// invited (`lesson_editors`).
pub fn editable_by(lesson: &str, user: &str) -> String {
    format!("({lesson}.owner_id = {user} OR EXISTS (SELECT 1 FROM lesson_editors e WHERE e.lesson_id = {lesson}.id AND e.user_id = {user}))")
}

const LESSON_COLUMNS: &str = "l.id, l.title, l.document_xml, l.revision, l.updated_at, l.review_edits, l.edit_mode";

/// A lesson the teacher may edit: their own, or one a colleague invited
/// them to edit. Not found (as any lesson not theirs) when neither.
pub async fn get_editable(db: &Db, user_id: &str, id: &str) -> Result<Lesson> {
    sqlx::query_as::<_, Lesson>(&format!("SELECT {LESSON_COLUMNS} FROM lessons l WHERE l.id = $1 AND {} AND l.deleted_at IS NULL", editable_by("l", "$2")))
        .bind(id)
        .bind(user_id)
        .fetch_optional(db)
        .await?
        .ok_or(AppError::NotFound)
}

/// One of the teacher's own lessons: what only its owner does (share,
/// publish, make versions, rename, delete) starts here.
pub async fn get_own(db: &Db, owner_id: &str, id: &str) -> Result<Lesson> {
    sqlx::query_as::<_, Lesson>(&format!("SELECT {LESSON_COLUMNS} FROM lessons l WHERE l.id = $1 AND l.owner_id = $2 AND l.deleted_at IS NULL"))
        .bind(id)
        .bind(owner_id)
        .fetch_optional(db)
        .await?
        .ok_or(AppError::NotFound)
}

/// The current revision of a lesson `user_id` may edit; `None` when they
/// may not, or it is trashed or gone. (Read by each open page's event
/// stream, so it reads nothing else.)
pub async fn revision_of(db: &Db, user_id: &str, id: &str) -> Result<Option<i64>> {
    Ok(sqlx::query_scalar(&format!("SELECT l.revision FROM lessons l WHERE l.id = $1 AND {} AND l.deleted_at IS NULL", editable_by("l", "$2")))
        .bind(id)
        .bind(user_id)
        .fetch_optional(db)
        .await?)
}

pub async fn is_editable(db: &Db, user_id: &str, id: &str) -> Result<bool> {
    Ok(revision_of(db, user_id, id).await?.is_some())
}

/// Longest revision summary kept, in characters.
const MAX_SUMMARY_CHARS: usize = 200;

/// Validates and stores a new version of a lesson on top of `base_revision`.
///
/// The document is stored only if it is valid and `base_revision` is still the
/// latest; otherwise nothing changes and the outcome says why.
pub async fn save_document(
    db: &Db,
    owner_id: &str,
    id: &str,
    xml: &str,
    base_revision: i64,
    author: Author,
    summary: &str,
) -> Result<SaveOutcome> {
    // Only a save that decides a proposal can find it decided.
    save_revision(db, owner_id, id, xml, base_revision, (author, false), summary, None)
        .await?
        .ok_or_else(|| AppError::Internal("a save with no proposal found one decided".into()))
}

/// The lesson editor's save (`SaveRequest::merge`) and the assistant's
/// edit: `xml` was written on top of `base_revision`. When the lesson has
/// moved on since (the assistant, the teacher typing, a colleague, another
/// tab), `author`'s changes are made to the current version block by block
/// (`lesson::merge`); a block changed on both sides is a conflict, and
/// nothing is saved.
pub async fn save_merged(db: &Db, owner_id: &str, id: &str, xml: &str, base_revision: i64, author: Author, summary: &str) -> Result<SaveOutcome> {
    // Another save landing between the read and the write is read again.
    for _ in 0..3 {
        let current = get_editable(db, owner_id, id).await?;
        if current.revision <= base_revision {
            return save_document(db, owner_id, id, xml, base_revision, author, summary).await;
        }
        let conflict = SaveOutcome::Conflict { current: current.revision };
        let Ok(base) = get_revision(db, owner_id, id, base_revision).await else { return Ok(conflict) };
        let (Ok(base), Ok(theirs)) = (lesson::parse(&base.document_xml), lesson::parse(&current.document_xml)) else { return Ok(conflict) };
        let ours = match lesson::normalize_after(xml, Some(&base), &linked::linked_ids(db, id).await?) {
            Ok(root) => root,
            Err(errors) => return Ok(SaveOutcome::Invalid { errors }),
        };
        let Ok(merged) = lesson::merge(&base, &ours, &theirs) else { return Ok(conflict) };
        match save_document(db, owner_id, id, &merged.to_xml(), current.revision, author, summary).await? {
            SaveOutcome::Conflict { .. } => continue,
            outcome => return Ok(outcome),
        }
    }
    let current = get_editable(db, owner_id, id).await?;
    Ok(SaveOutcome::Conflict { current: current.revision })
}

/// `save_document` for an edit of the agent's that the teacher reviewed and
/// applied: the revision is the agent's, marked as applied by the teacher,
/// and the proposal `proposal_id` is marked applied as that revision in the
/// same transaction, so that nobody (a paused reply waiting on it, another
/// tab) ever reads it applied before the lesson is, or without its version.
/// `None` when the proposal was decided meanwhile: then nothing is saved.
pub async fn save_reviewed(
    db: &Db,
    owner_id: &str,
    id: &str,
    xml: &str,
    base_revision: i64,
    summary: &str,
    proposal_id: &str,
) -> Result<Option<SaveOutcome>> {
    save_revision(db, owner_id, id, xml, base_revision, (Author::Agent, true), summary, Some(proposal_id)).await
}

#[allow(clippy::too_many_arguments)]
async fn save_revision(
    db: &Db,
    owner_id: &str,
    id: &str,
    xml: &str,
    base_revision: i64,
    (author, reviewed): (Author, bool),
    summary: &str,
    applies: Option<&str>,
) -> Result<Option<SaveOutcome>> {
    let current = get_editable(db, owner_id, id).await?;
    let root = match lesson::normalize_after(xml, lesson::parse(&current.document_xml).ok().as_ref(), &linked::linked_ids(db, id).await?) {
        Ok(root) => root,
        Err(errors) => return Ok(Some(SaveOutcome::Invalid { errors })),
    };
    let errors = standards::frameworks::problems(db, owner_id, &root).await?;
    if !errors.is_empty() {
        return Ok(Some(SaveOutcome::Invalid { errors }));
    }
    let doc = root.to_xml();
    let summary: String = summary.split_whitespace().collect::<Vec<_>>().join(" ").chars().take(MAX_SUMMARY_CHARS).collect();
    let summary = if summary.is_empty() { "Edited the lesson".to_string() } else { summary };
    let mut tx = db::begin_write(db).await?;
    // Claimed first, so that two clicks (or two tabs) apply it once: the
    // second waits for the first, then finds it decided. The lesson's row
    // is held before the proposal's, in the order a new proposal takes
    // them (`proposals::create`), so that the two never wait on each other.
    if let Some(proposal) = applies {
        sqlx::query("UPDATE lessons SET revision = revision WHERE id = $1").bind(id).execute(&mut *tx).await?;
        let claimed = decisions::decide(&mut *tx, owner_id, proposal, crate::chat::proposal::ProposalStatus::Applied, None).await?;
        if !claimed {
            tx.rollback().await?;
            return Ok(None);
        }
    }
    let updated = sqlx::query(&format!(
        "UPDATE lessons SET document_xml = $1, search_text = $2, revision = revision + 1,
                updated_at = $6
         WHERE id = $3 AND revision = $5 AND deleted_at IS NULL AND {}",
        editable_by("lessons", "$4")
    ))
    .bind(&doc)
    .bind(search_text(&doc))
    .bind(id)
    .bind(owner_id)
    .bind(base_revision)
    .bind(db::time::now())
    .execute(&mut *tx)
    .await?;
    if updated.rows_affected() == 0 {
        tx.rollback().await?;
        let latest = get_editable(db, owner_id, id).await.map(|l| l.revision).unwrap_or(current.revision);
        return Ok(Some(SaveOutcome::Conflict { current: latest }));
    }
    let revision = base_revision + 1;
    sqlx::query("INSERT INTO lesson_revisions (lesson_id, number, document_xml, author, summary, reviewed, author_id) VALUES ($1, $2, $3, $4, $5, $6, $7)")
        .bind(id)
        .bind(revision)
        .bind(&doc)
        .bind(author.as_str())
        .bind(&summary)
        .bind(reviewed)
        .bind(owner_id)
        .execute(&mut *tx)
        .await?;
    // Autosaves add up: every tenth of the teacher's saves thins the older ones.
    if author == Author::Teacher && revision % 10 == 0 {
        thin_revisions(&mut tx, id, revision).await?;
    }
    if let Some(proposal) = applies {
        sqlx::query("UPDATE proposals SET applied_revision = $1 WHERE id = $2").bind(revision).bind(proposal).execute(&mut *tx).await?;
    }
    tx.commit().await?;
    Ok(Some(SaveOutcome::Saved { revision, document_xml: doc }))
}

/// How many of the teacher's newest versions are always kept.
pub const KEEP_TEACHER_REVISIONS: i64 = 50;

/// Thins the teacher's older versions of a lesson. Kept: the first; every
/// version of the assistant's and the one before each (Undo takes an edit
/// back against it); the published one; those pending proposals were made
/// on; the teacher's newest `KEEP_TEACHER_REVISIONS`; and the last of each
/// day. The rest (autosaves between them) go.
async fn thin_revisions(conn: &mut sqlx::AnyConnection, id: &str, newest: i64) -> Result<u64> {
    let done = sqlx::query(
        "DELETE FROM lesson_revisions WHERE lesson_id = $1 AND author = 'teacher' AND number > 1 AND number < $2
           AND number NOT IN (SELECT number FROM lesson_revisions WHERE lesson_id = $1 AND author = 'teacher' ORDER BY number DESC LIMIT $3)
           AND number NOT IN (SELECT number - 1 FROM lesson_revisions WHERE lesson_id = $1 AND author = 'agent')
           AND number NOT IN (SELECT COALESCE(published_revision, 0) FROM lessons WHERE id = $1)
           AND number NOT IN (SELECT base_revision FROM proposals WHERE lesson_id = $1 AND status = 'pending')
           AND number NOT IN (SELECT MAX(number) FROM lesson_revisions WHERE lesson_id = $1 AND author = 'teacher' GROUP BY substr(created_at, 1, 10))",
    )
    .bind(id)
    .bind(newest)
    .bind(KEEP_TEACHER_REVISIONS)
    .execute(&mut *conn)
    .await?;
    Ok(done.rows_affected())
}

/// The lesson's revisions, newest first, each with who made it when that
/// is not `user_id` (a colleague who edits it too, or the owner).
pub async fn list_revisions(db: &Db, user_id: &str, id: &str) -> Result<Vec<RevisionSummary>> {
    get_editable(db, user_id, id).await?;
    let rows: Vec<(i64, String, String, String, db::Flag, String, Option<String>)> = sqlx::query_as(
        "SELECT r.number, r.author, r.summary, r.created_at, r.reviewed, COALESCE(r.author_id, l.owner_id), u.email
         FROM lesson_revisions r JOIN lessons l ON l.id = r.lesson_id
         LEFT JOIN users u ON u.id = COALESCE(r.author_id, l.owner_id)
         WHERE r.lesson_id = $1 ORDER BY r.number DESC",
    )
    .bind(id)
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(number, author, summary, created_at, reviewed, by_id, by_email)| RevisionSummary {
            number,
            author: Author::from_str(&author),
            summary,
            created_at,
            reviewed: reviewed.into(),
            by: if by_id == user_id { None } else { Some(by_email.unwrap_or_else(|| "a former colleague".into())) },
        })
        .collect())
}

/// One revision of one of the teacher's lessons.
pub async fn get_revision(db: &Db, owner_id: &str, id: &str, number: i64) -> Result<Revision> {
    get_editable(db, owner_id, id).await?;
    let row: Option<(i64, String, String, String, String)> = sqlx::query_as(
        "SELECT number, author, summary, created_at, document_xml FROM lesson_revisions WHERE lesson_id = $1 AND number = $2",
    )
    .bind(id)
    .bind(number)
    .fetch_optional(db)
    .await?;
    let (number, author, summary, created_at, document_xml) = row.ok_or(AppError::NotFound)?;
    Ok(Revision { number, author: Author::from_str(&author), summary, created_at, document_xml })
}

/// Sets how the assistant's edits reach one of the teacher's lessons
/// (`review_edits` kept as `Every`, as older readers read it).
pub async fn set_edit_mode(db: &Db, owner_id: &str, id: &str, mode: crate::models::EditMode) -> Result<()> {
    let done = sqlx::query("UPDATE lessons SET review_edits = $1, edit_mode = $4 WHERE id = $2 AND owner_id = $3 AND deleted_at IS NULL")
        .bind(mode == crate::models::EditMode::Every)
        .bind(id)
        .bind(owner_id)
        .bind(mode.as_str())
        .execute(db)
        .await?;
    db::touched_one(&done)?;
    Ok(())
}

/// What changed from revision `from` to revision `to` of one of the
/// teacher's lessons.
pub async fn changes_between(db: &Db, owner_id: &str, id: &str, from: i64, to: i64) -> Result<Vec<Change>> {
    let (a, b) = (get_revision(db, owner_id, id, from).await?, get_revision(db, owner_id, id, to).await?);
    let (a, b) = (parsed(&a.document_xml)?, parsed(&b.document_xml)?);
    Ok(lesson::changes(&a, &b))
}

/// A stored document as a tree. Stored documents were checked when they were
/// saved, so one that does not parse is a server fault.
pub fn parsed(xml: &str) -> Result<Element> {
    lesson::parse(xml).map_err(|e| AppError::Internal(format!("a stored lesson does not parse: {e}")))
}

/// Takes back what revision `number` changed, as a new revision by the
/// teacher: the lesson as it was before it when nothing came after, else
/// that edit's changes alone, when later edits touched other blocks.
pub async fn undo_revision(db: &Db, owner_id: &str, id: &str, number: i64) -> Result<SaveReply> {
    let current = get_editable(db, owner_id, id).await?;
    if number <= 1 {
        return Err(AppError::BadRequest("The first version of a lesson has nothing before it to go back to.".into()));
    }
    let undone = get_revision(db, owner_id, id, number).await?;
    let by: Option<i64> = sqlx::query_scalar("SELECT MIN(number) FROM lesson_revisions WHERE lesson_id = $1 AND undoes = $2")
        .bind(id)
        .bind(number)
        .fetch_one(db)
        .await?;
    if let Some(by) = by {
        return Err(AppError::Conflict(format!("Version {number} was already undone (version {by} took it back).")));
    }
    // The version before it: the one just before, unless older autosaves
    // were thinned (`thin_revisions`), then the latest kept before it.
    let before_number: Option<i64> = sqlx::query_scalar("SELECT MAX(number) FROM lesson_revisions WHERE lesson_id = $1 AND number < $2")
        .bind(id)
        .bind(number)
        .fetch_one(db)
        .await?;
    let before = get_revision(db, owner_id, id, before_number.ok_or(AppError::NotFound)?).await?;
    let xml = if current.revision == number {
        before.document_xml
    } else {
        let merged = lesson::merge(&parsed(&undone.document_xml)?, &parsed(&before.document_xml)?, &parsed(&current.document_xml)?);
        merged.map_err(AppError::Overlap)?.to_xml()
    };
    let summary = format!("Undid version {number} ({})", undone.summary);
    let outcome = save_document(db, owner_id, id, &xml, current.revision, Author::Teacher, &summary).await?;
    if let SaveOutcome::Saved { revision, .. } = &outcome {
        sqlx::query("UPDATE lesson_revisions SET undoes = $1 WHERE lesson_id = $2 AND number = $3").bind(number).bind(id).bind(revision).execute(db).await?;
    }
    edit_reply(outcome, &current.document_xml)
}

/// The answer to an edit made on the teacher's word (an applied proposal,
/// an undo), from how its save went and the document it replaced: saved,
/// with what it changed, or a conflict.
pub fn edit_reply(outcome: SaveOutcome, previous_xml: &str) -> Result<SaveReply> {
    match outcome {
        SaveOutcome::Saved { ref document_xml, .. } => {
            let changes = lesson::changes(&parsed(previous_xml)?, &parsed(document_xml)?);
            Ok(SaveReply { changes, ..SaveReply::new(outcome) })
        }
        SaveOutcome::Conflict { .. } => Err(AppError::Conflict("The lesson changed just now. Try again.".into())),
        SaveOutcome::Invalid { errors } => Err(AppError::Conflict(format!(
            "Made on top of the later changes, the lesson would not be valid, so nothing was changed: {}",
            lesson::describe_errors(&errors)
        ))),
    }
}

/// Makes an earlier revision the current document, as a new revision.
pub async fn restore_revision(db: &Db, owner_id: &str, id: &str, number: i64, base_revision: i64) -> Result<SaveOutcome> {
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
