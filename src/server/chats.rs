//! Chat sessions and messages in the database, always scoped to their owner:
//! someone else's session is `NotFound`, exactly like one that does not exist.
//!
//! The turn engine that writes replies is `turns`; the model connection it
//! uses is `ai`; the HTTP doors are `routes`.

pub mod ai;
pub mod design;
pub mod export;
pub mod routes;
pub mod turn_json;
pub mod turns;

use std::collections::HashMap;

use crate::server::{
    db::{self, Db},
    error::{AppError, Result},
    classes::STUDENT_SEES,
    ids,
    lessons::proposals,
};
use crate::{
    chat::{
        events::{ErrorData, UsageData},
        proposal::{ProposalMark, ProposalStatus},
        message::{Attachments, ChatMessage, ChatSession, MessageStatus, Role, ToolCallRecord, DEFAULT_CHAT_TITLE, MAX_CHAT_TITLE_CHARS},
    },
};

/// A chat's name as typed, tidied; a blank one is the default name (a
/// lesson's title, by contrast, must not be blank: `lessons::clean_title`).
fn chat_title_or_default(title: &str) -> String {
    let t: String = title.split_whitespace().collect::<Vec<_>>().join(" ").chars().take(MAX_CHAT_TITLE_CHARS).collect();
    if t.is_empty() { DEFAULT_CHAT_TITLE.into() } else { t }
}

/// A chat's lesson is not in the trash (a condition on `chat_sessions`).
const IN_LIVE_LESSON: &str = "lesson_id IN (SELECT id FROM lessons WHERE deleted_at IS NULL)";

/// Columns of `chat_sessions`, as `ChatSession` reads them.
const SESSION_COLUMNS: &str = "id, lesson_id, title, created_at, updated_at";

/// Whether `user` may chat about the lesson: they may edit it (their own,
/// or a colleague's they were invited to edit), or (for a student) it is
/// published to one of their classes. `NotFound` otherwise.
async fn may_chat(db: &Db, user: &str, lesson_id: &str) -> Result<()> {
    let found: Option<(i64,)> = sqlx::query_as(&format!(
        "SELECT 1 FROM lessons l JOIN users u ON u.id = $2 WHERE l.id = $1 AND l.deleted_at IS NULL AND ({} OR (u.role = 'student' AND {STUDENT_SEES}))",
        crate::server::lessons::editable_by("l", "u.id")
    ))
    .bind(lesson_id)
    .bind(user)
    .fetch_optional(db)
    .await?;
    found.map(|_| ()).ok_or(AppError::NotFound)
}

pub async fn create_session(db: &Db, owner: &str, lesson_id: &str, title: &str) -> Result<ChatSession> {
    may_chat(db, owner, lesson_id).await?;
    let id = ids::new_id();
    sqlx::query("INSERT INTO chat_sessions (id, owner_id, lesson_id, title) VALUES ($1, $2, $3, $4)")
        .bind(&id)
        .bind(owner)
        .bind(lesson_id)
        .bind(chat_title_or_default(title))
        .execute(db)
        .await?;
    get_session(db, owner, &id).await
}

pub async fn list_sessions(db: &Db, owner: &str, lesson_id: &str) -> Result<Vec<ChatSession>> {
    may_chat(db, owner, lesson_id).await?;
    let sessions = sqlx::query_as(&format!(
        "SELECT {SESSION_COLUMNS} FROM chat_sessions WHERE owner_id = $1 AND lesson_id = $2 ORDER BY updated_at DESC, id"
    ))
    .bind(owner)
    .bind(lesson_id)
    .fetch_all(db)
    .await?;
    Ok(sessions)
}

/// Whether a chat with this id exists at all, whoever's it is.
pub async fn exists(db: &Db, id: &str) -> Result<bool> {
    let found: Option<(i64,)> = sqlx::query_as("SELECT 1 FROM chat_sessions WHERE id = $1").bind(id).fetch_optional(db).await?;
    Ok(found.is_some())
}

pub async fn get_session(db: &Db, owner: &str, id: &str) -> Result<ChatSession> {
    let session = sqlx::query_as(&format!("SELECT {SESSION_COLUMNS} FROM chat_sessions WHERE id = $1 AND owner_id = $2 AND {IN_LIVE_LESSON}"))
        .bind(id)
        .bind(owner)
        .fetch_optional(db)
        .await?;
    session.ok_or(AppError::NotFound)
}

pub async fn rename_session(db: &Db, owner: &str, id: &str, title: &str) -> Result<ChatSession> {
    let done = sqlx::query(
        &format!(
            "UPDATE chat_sessions SET title = $1, updated_at = $4
             WHERE id = $2 AND owner_id = $3 AND {IN_LIVE_LESSON}"
        ),
    )
    .bind(chat_title_or_default(title))
    .bind(id)
    .bind(owner)
    .bind(db::time::now())
    .execute(db)
    .await?;
    db::touched_one(&done)?;
    get_session(db, owner, id).await
}

pub async fn delete_session(db: &Db, owner: &str, id: &str) -> Result<()> {
    let done = sqlx::query(&format!("DELETE FROM chat_sessions WHERE id = $1 AND owner_id = $2 AND {IN_LIVE_LESSON}"))
        .bind(id)
        .bind(owner)
        .execute(db)
        .await?;
    db::touched_one(&done)?;
    Ok(())
}

/// A row of `chat_messages`.
#[derive(sqlx::FromRow)]
struct MessageRow {
    id: String,
    role: String,
    content: String,
    reasoning: String,
    tool_calls: String,
    document_xml: Option<String>,
    status: String,
    error_code: Option<String>,
    error_message: Option<String>,
    model: Option<String>,
    prompt_tokens: i64,
    completion_tokens: i64,
    total_tokens: i64,
    turn_id: Option<String>,
    created_at: String,
    attachments: Option<String>,
    rounds: i64,
}

/// Columns of `chat_messages m`, as `MessageRow` reads them.
/// A running reply paused on a held edit reads as `awaiting`.
const MESSAGE_COLUMNS: &str = "m.id, m.role, m.content, m.reasoning, m.tool_calls, m.document_xml,
     CASE WHEN m.status = 'running' AND m.resume_state IS NOT NULL THEN 'awaiting' ELSE m.status END AS status, m.error_code, m.error_message,
     m.model, m.prompt_tokens, m.completion_tokens, m.total_tokens, m.turn_id, m.created_at, m.attachments, m.rounds";

fn role(role: &str) -> Role {
    if role == "assistant" { Role::Assistant } else { Role::User }
}

fn steps(tool_calls: &str) -> Vec<ToolCallRecord> {
    serde_json::from_str(tool_calls).unwrap_or_default()
}

fn message(row: MessageRow) -> ChatMessage {
    ChatMessage {
        id: row.id,
        role: role(&row.role),
        content: row.content,
        reasoning: row.reasoning,
        tool_calls: steps(&row.tool_calls),
        document_xml: row.document_xml,
        status: MessageStatus::parse(&row.status),
        error: row.error_code.map(|code| ErrorData { code, message: row.error_message.unwrap_or_default() }),
        model: row.model,
        usage: UsageData {
            prompt_tokens: row.prompt_tokens as u32,
            completion_tokens: row.completion_tokens as u32,
            total_tokens: row.total_tokens as u32,
        },
        turn_id: row.turn_id,
        created_at: row.created_at,
        attachments: Attachments::read(row.attachments.as_deref()),
        rounds: u32::try_from(row.rounds).unwrap_or(0),
    }
}

/// Where the proposals among these steps stand now (the steps recorded them
/// as pending; the decision is the proposal's).
fn with_marks(calls: &mut [ToolCallRecord], marks: &HashMap<String, ProposalMark>) {
    for c in calls {
        let Some(p) = c.proposal.as_mut() else { continue };
        if let Some(mark) = marks.get(&p.id) {
            (p.status, p.revision, p.reason) = (mark.status, mark.revision, mark.reason.clone());
            if p.status != ProposalStatus::Pending {
                (p.digest, p.decisions) = (None, Vec::new());
            }
        }
    }
}

/// Each edit among these messages' steps that the teacher undid, with the
/// version that took it back (the lesson's undos, one query, only when a
/// step made a version).
async fn with_undos(db: &Db, session_id: &str, messages: &mut [ChatMessage]) -> Result<()> {
    let made = |c: &ToolCallRecord| c.proposal.as_ref().filter(|p| p.status == ProposalStatus::Applied).and_then(|p| p.revision).or(c.revision);
    if !messages.iter().any(|m| m.tool_calls.iter().any(|c| made(c).is_some())) {
        return Ok(());
    }
    let undos: HashMap<i64, i64> = sqlx::query_as::<_, (i64, i64)>(
        "SELECT r.undoes, MIN(r.number) FROM lesson_revisions r JOIN chat_sessions s ON s.lesson_id = r.lesson_id
         WHERE s.id = $1 AND r.undoes IS NOT NULL GROUP BY r.undoes",
    )
    .bind(session_id)
    .fetch_all(db)
    .await?
    .into_iter()
    .collect();
    for c in messages.iter_mut().flat_map(|m| m.tool_calls.iter_mut()) {
        c.undone = made(c).and_then(|n| undos.get(&n).copied());
    }
    Ok(())
}

/// Each proposal still waiting among these messages' steps, with a fresh
/// digest to decide it by: the page shows it now, so a decision made from
/// what it shows names a digest that is good.
pub async fn with_fresh_digests(db: &Db, clock: &crate::server::clock::ShownClock, messages: &mut [ChatMessage]) -> Result<()> {
    for p in messages.iter_mut().flat_map(|m| m.tool_calls.iter_mut()).filter_map(|c| c.proposal.as_mut()) {
        if p.status == ProposalStatus::Pending {
            p.digest = proposals::fresh_digest(db, &p.id, clock).await?;
        }
    }
    Ok(())
}

/// All messages of one of the teacher's sessions, oldest first.
pub async fn list_messages(db: &Db, owner: &str, session_id: &str) -> Result<Vec<ChatMessage>> {
    get_session(db, owner, session_id).await?;
    let rows: Vec<MessageRow> =
        sqlx::query_as(&format!("SELECT {MESSAGE_COLUMNS} FROM chat_messages m WHERE m.session_id = $1 ORDER BY m.seq"))
            .bind(session_id)
            .fetch_all(db)
            .await?;
    let mut messages: Vec<ChatMessage> = rows.into_iter().map(message).collect();
    if messages.iter().any(|m| m.tool_calls.iter().any(|c| c.proposal.is_some())) {
        let marks = proposals::marks_for_chat(db, session_id).await?;
        for m in &mut messages {
            with_marks(&mut m.tool_calls, &marks);
        }
    }
    with_undos(db, session_id, &mut messages).await?;
    Ok(messages)
}

/// The assistant message written by a turn, with the owner and session of that turn.
pub async fn turn_message(db: &Db, owner: &str, turn_id: &str) -> Result<ChatMessage> {
    let row: Option<MessageRow> = sqlx::query_as(&format!(
        "SELECT {MESSAGE_COLUMNS} FROM chat_messages m JOIN chat_sessions s ON s.id = m.session_id
         WHERE m.turn_id = $1 AND s.owner_id = $2 AND s.{IN_LIVE_LESSON}"
    ))
    .bind(turn_id)
    .bind(owner)
    .fetch_optional(db)
    .await?;
    let mut m = row.map(message).ok_or(AppError::NotFound)?;
    if m.tool_calls.iter().any(|c| c.proposal.is_some()) {
        with_marks(&mut m.tool_calls, &proposals::marks_for_message(db, &m.id).await?);
    }
    Ok(m)
}

/// The current document and revision of the lesson a turn's chat is about.
pub async fn turn_lesson(db: &Db, owner: &str, turn_id: &str) -> Result<Option<(String, i64)>> {
    Ok(sqlx::query_as(&format!(
        "SELECT l.document_xml, l.revision FROM chat_messages m
           JOIN chat_sessions s ON s.id = m.session_id
           JOIN lessons l ON l.id = s.lesson_id AND {} AND l.deleted_at IS NULL
         WHERE m.turn_id = $1 AND s.owner_id = $2",
        crate::server::lessons::editable_by("l", "s.owner_id")
    ))
    .bind(turn_id)
    .bind(owner)
    .fetch_optional(db)
    .await?)
}
