//! Proposals in the database: edits of the agent's held for the teacher's
//! review. A proposal is made on one revision of a lesson and keeps the whole
//! lesson it would make. Applying it saves that lesson as a revision (made on
//! top of later changes when there were any, see `lesson::merge`);
//! discarding it records the decision (and the reason, which the model reads
//! in the next turn). A newer proposal for the same lesson replaces a pending
//! one. Every query is scoped to the owner: another teacher's proposal is
//! `NotFound`. A decision names the digest the teacher was shown with the
//! change (`shown`), checked before anything is decided.

use std::collections::HashMap;

use super::shown::{self, Content};
use crate::server::{
    clock::ShownClock,
    db::{self, Db},
    error::{AppError, Result},
    ids,
    lessons,
};
use crate::{
    chat::proposal::{ProposalMark, ProposalStatus},
    lesson::{self, Change},
    models::{ProposalReply, SaveReply},
};

/// A proposal about to be stored.
pub struct NewProposal<'a> {
    pub lesson_id: &'a str,
    pub owner_id: &'a str,
    pub message_id: &'a str,
    pub base_revision: i64,
    pub document_xml: &'a str,
    pub summary: &'a str,
    pub changes: &'a [Change],
}

/// Stores a proposal; a pending one for the same lesson is replaced by it.
/// Returns its id and the digest a decision on it names.
pub async fn create(db: &Db, p: NewProposal<'_>, clock: &ShownClock) -> Result<(String, String)> {
    let id = ids::new_id();
    let seal = ids::random_hex(16);
    let changes = serde_json::to_string(p.changes).unwrap_or_else(|_| "[]".into());
    let mut tx = db::begin_write(db).await?;
    // Holds the lesson's row until the commit, so two turns proposing for
    // the same lesson at once take turns (SQLite's write lock already does).
    sqlx::query("UPDATE lessons SET revision = revision WHERE id = $1").bind(p.lesson_id).execute(&mut *tx).await?;
    sqlx::query(
        "UPDATE proposals SET status = 'replaced', decided_at = $3
         WHERE lesson_id = $1 AND owner_id = $2 AND status = 'pending'",
    )
    .bind(p.lesson_id)
    .bind(p.owner_id)
    .bind(db::time::now())
    .execute(&mut *tx)
    .await?;
    sqlx::query(
        "INSERT INTO proposals (id, lesson_id, owner_id, message_id, base_revision, document_xml, summary, changes, seal)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
    )
    .bind(&id)
    .bind(p.lesson_id)
    .bind(p.owner_id)
    .bind(p.message_id)
    .bind(p.base_revision)
    .bind(p.document_xml)
    .bind(p.summary)
    .bind(&changes)
    .bind(&seal)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    let digest = shown::issue(clock, &seal, &Content { id: &id, changes: &changes, document_xml: p.document_xml });
    Ok((id, digest))
}

#[derive(sqlx::FromRow)]
struct Row {
    id: String,
    lesson_id: String,
    base_revision: i64,
    document_xml: String,
    summary: String,
    changes: String,
    status: String,
    seal: String,
}

impl Row {
    fn content(&self) -> Content<'_> {
        Content { id: &self.id, changes: &self.changes, document_xml: &self.document_xml }
    }

    /// A fresh digest while it waits.
    fn digest(&self, clock: &ShownClock) -> Option<String> {
        (ProposalStatus::from_str(&self.status) == ProposalStatus::Pending).then(|| shown::issue(clock, &self.seal, &self.content()))
    }

    /// Whether it still waits and `digest` names it as it is: else why not
    /// (decided already says so first, digest or not).
    fn decidable(&self, clock: &ShownClock, digest: &str) -> Result<()> {
        let status = ProposalStatus::from_str(&self.status);
        if status != ProposalStatus::Pending {
            return Err(decided(status));
        }
        match digest.trim() {
            "" => Err(AppError::BadRequest("Name the change you decide on: send the digest that came with it (open the suggestion to get one).".into())),
            digest => shown::check(clock, &self.seal, &self.content(), digest),
        }
    }
}

async fn get(db: &Db, owner_id: &str, id: &str) -> Result<Row> {
    sqlx::query_as::<_, Row>(
        "SELECT id, lesson_id, base_revision, document_xml, summary, changes, status, seal FROM proposals
         WHERE id = $1 AND owner_id = $2 AND lesson_id IN (SELECT id FROM lessons WHERE deleted_at IS NULL)",
    )
    .bind(id)
    .bind(owner_id)
    .fetch_optional(db)
    .await?
    .ok_or(AppError::NotFound)
}

/// One of the teacher's proposals, with the lesson it would make rendered.
/// The lesson a proposal is for.
pub async fn lesson_of(db: &Db, owner_id: &str, id: &str) -> Result<String> {
    sqlx::query_scalar("SELECT lesson_id FROM proposals WHERE id = $1 AND owner_id = $2")
        .bind(id)
        .bind(owner_id)
        .fetch_optional(db)
        .await?
        .ok_or(AppError::NotFound)
}

/// Opened while it waits, it comes with a fresh digest to decide it by.
pub async fn open(db: &Db, owner_id: &str, id: &str, clock: &ShownClock) -> Result<ProposalReply> {
    let row = get(db, owner_id, id).await?;
    Ok(ProposalReply {
        digest: row.digest(clock),
        html: lesson::render_both(&row.document_xml),
        changes: serde_json::from_str(&row.changes).unwrap_or_default(),
        id: row.id,
        lesson_id: row.lesson_id,
        status: ProposalStatus::from_str(&row.status),
        summary: row.summary,
        base_revision: row.base_revision,
    })
}

/// Why a proposal can no longer be decided.
fn decided(status: ProposalStatus) -> AppError {
    AppError::Conflict(
        match status {
            ProposalStatus::Applied => "This change was already applied.",
            ProposalStatus::Discarded => "This change was discarded.",
            ProposalStatus::Replaced => "A newer suggestion for this lesson replaced this one.",
            ProposalStatus::Pending => "This change is still waiting.",
        }
        .into(),
    )
}

/// Applies a pending proposal: saves the lesson it makes as a revision of the
/// agent's, applied by the teacher. When the lesson changed since the
/// proposal was made, its changes are made on top of the later ones; if they
/// touch the same blocks, nothing is saved and the answer names them.
pub async fn apply(db: &Db, owner_id: &str, id: &str, digest: &str, clock: &ShownClock) -> Result<SaveReply> {
    let row = get(db, owner_id, id).await?;
    row.decidable(clock, digest)?;
    let current = lessons::get_editable(db, owner_id, &row.lesson_id).await?;
    let xml = if current.revision == row.base_revision {
        row.document_xml
    } else {
        let base = lessons::get_revision(db, owner_id, &row.lesson_id, row.base_revision).await?;
        let merged = lesson::merge(
            &lessons::parsed(&base.document_xml)?,
            &lessons::parsed(&row.document_xml)?,
            &lessons::parsed(&current.document_xml)?,
        );
        merged.map_err(AppError::Overlap)?.to_xml()
    };
    // Decided and saved in one transaction: a proposal decided meanwhile
    // (another click, another tab) is refused with what became of it.
    let Some(saved) = lessons::save_reviewed(db, owner_id, &row.lesson_id, &xml, current.revision, &row.summary, id).await? else {
        return Err(decided_meanwhile(db, owner_id, id).await);
    };
    lessons::edit_reply(saved, &current.document_xml)
}

/// Why a proposal decided meanwhile was not decided again.
async fn decided_meanwhile(db: &Db, owner_id: &str, id: &str) -> AppError {
    match get(db, owner_id, id).await {
        Ok(now) => decided(ProposalStatus::from_str(&now.status)),
        Err(e) => e,
    }
}

/// Discards a pending proposal, with the teacher's reason (tidied; empty
/// means none).
pub async fn discard(db: &Db, owner_id: &str, id: &str, reason: &str, digest: &str, clock: &ShownClock) -> Result<()> {
    get(db, owner_id, id).await?.decidable(clock, digest)?;
    let reason: String = reason.split_whitespace().collect::<Vec<_>>().join(" ").chars().take(MAX_REASON_CHARS).collect();
    let decided_now = super::decisions::decide(&mut *db.acquire().await?, owner_id, id, ProposalStatus::Discarded, Some(reason).filter(|r| !r.is_empty())).await?;
    if !decided_now {
        return Err(decided_meanwhile(db, owner_id, id).await);
    }
    Ok(())
}

/// Longest reason for a discard kept, in characters.
pub const MAX_REASON_CHARS: usize = 500;

/// A fresh digest for a proposal that still waits (`None` once decided or
/// gone). Scoped by the caller: it names a proposal of steps it read.
pub async fn fresh_digest(db: &Db, id: &str, clock: &ShownClock) -> Result<Option<String>> {
    let row: Option<Row> = sqlx::query_as("SELECT id, lesson_id, base_revision, document_xml, summary, changes, status, seal FROM proposals WHERE id = $1 AND status = 'pending'")
        .bind(id)
        .fetch_optional(db)
        .await?;
    Ok(row.and_then(|r| r.digest(clock)))
}

/// Where one of the teacher's proposals stands; `None` when there is no
/// such proposal (or its lesson is in the trash).
pub async fn mark(db: &Db, owner_id: &str, id: &str) -> Result<Option<ProposalMark>> {
    let row: Option<(String, String, Option<i64>, Option<String>)> = sqlx::query_as(
        "SELECT id, status, applied_revision, reason FROM proposals
         WHERE id = $1 AND owner_id = $2 AND lesson_id IN (SELECT id FROM lessons WHERE deleted_at IS NULL)",
    )
    .bind(id)
    .bind(owner_id)
    .fetch_optional(db)
    .await?;
    Ok(row.and_then(|r| marks(vec![r]).remove(id)))
}

/// Where each proposal of a chat stands, by id: what its step shows and what
/// the next turn tells the model.
pub async fn marks_for_chat(db: &Db, session_id: &str) -> Result<HashMap<String, ProposalMark>> {
    let rows: Vec<(String, String, Option<i64>, Option<String>)> = sqlx::query_as(
        "SELECT p.id, p.status, p.applied_revision, p.reason FROM proposals p JOIN chat_messages m ON m.id = p.message_id
         WHERE m.session_id = $1",
    )
    .bind(session_id)
    .fetch_all(db)
    .await?;
    Ok(marks(rows))
}

/// Where the proposals of one reply stand, by id.
pub async fn marks_for_message(db: &Db, message_id: &str) -> Result<HashMap<String, ProposalMark>> {
    let rows: Vec<(String, String, Option<i64>, Option<String>)> =
        sqlx::query_as("SELECT id, status, applied_revision, reason FROM proposals WHERE message_id = $1").bind(message_id).fetch_all(db).await?;
    Ok(marks(rows))
}

/// Marks from rows of (id, status, applied revision, reason).
pub fn marks(rows: Vec<(String, String, Option<i64>, Option<String>)>) -> HashMap<String, ProposalMark> {
    rows.into_iter()
        .map(|(id, status, revision, reason)| {
            let mark = ProposalMark::decided(id.clone(), ProposalStatus::from_str(&status), revision, reason);
            (id, mark)
        })
        .collect()
}
