//! Chat sessions and messages in the database, always scoped to their owner:
//! someone else's session is `NotFound`, exactly like one that does not exist.

use std::{collections::HashMap, sync::LazyLock};


use super::{
    db::{self, Db},
    error::{AppError, Result},
    classes::STUDENT_SEES,
    ids, proposals,
};
use crate::{
    chat::{
        events::{ErrorData, UsageData},
        proposal::ProposalMark,
        message::{model_text, title_from, Attachments, ChatMessage, ChatSession, MessageStatus, Role, StoredMessage, ToolCallRecord, DEFAULT_CHAT_TITLE, MAX_CHAT_TITLE_CHARS},
        turn::TurnRecord,
    },
    models::UserInfo,
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

/// Whether `user` may chat about the lesson: it is theirs, or (for a
/// student) published to one of their classes. `NotFound` otherwise.
async fn may_chat(db: &Db, user: &str, lesson_id: &str) -> Result<()> {
    let found: Option<(i64,)> = sqlx::query_as(&format!(
        "SELECT 1 FROM lessons l JOIN users u ON u.id = $2 WHERE l.id = $1 AND l.deleted_at IS NULL AND (l.owner_id = u.id OR (u.role = 'student' AND {STUDENT_SEES}))"
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

/// A chat a new turn is about to run in: its lesson as it is now, and its
/// last messages, oldest first.
pub struct ChatStart {
    pub session: ChatSession,
    pub document_xml: String,
    pub revision: i64,
    /// The lesson's "Review edits before applying".
    pub review_edits: bool,
    pub history: Vec<StoredMessage>,
    /// The lesson's sources (the teacher's material), oldest first.
    pub sources: Vec<crate::models::SourceSummary>,
}

/// The row of `user_and_chat`: the chat's columns are empty when the chat is
/// not the teacher's (or does not exist).
#[derive(sqlx::FromRow)]
struct UserAndChat {
    user_id: String,
    email: String,
    school_id: String,
    role: String,
    id: Option<String>,
    lesson_id: Option<String>,
    title: Option<String>,
    created_at: Option<String>,
    updated_at: Option<String>,
    document_xml: Option<String>,
    revision: Option<i64>,
    review_edits: Option<db::Flag>,
    /// `[[seq, role, content, tool_calls, status, attachments], …]`, newest first.
    history: String,
    /// `[[id, status, applied revision, reason], …]`: the chat's proposals.
    proposals: String,
    /// `[[id, name, size, chars, opening], …]`: the lesson's sources.
    sources: String,
}

/// The query of `user_and_chat`, written once per backend (they gather
/// rows into JSON differently).
fn user_and_chat_sql(backend: db::Backend, by: Key) -> &'static str {
    static SQLITE: LazyLock<String> = LazyLock::new(|| user_and_chat_query(db::Backend::Sqlite, Key::Session));
    static POSTGRES: LazyLock<String> = LazyLock::new(|| user_and_chat_query(db::Backend::Postgres, Key::Session));
    static SQLITE_USER: LazyLock<String> = LazyLock::new(|| user_and_chat_query(db::Backend::Sqlite, Key::User));
    static POSTGRES_USER: LazyLock<String> = LazyLock::new(|| user_and_chat_query(db::Backend::Postgres, Key::User));
    match (backend, by) {
        (db::Backend::Sqlite, Key::Session) => &SQLITE,
        (db::Backend::Postgres, Key::Session) => &POSTGRES,
        (db::Backend::Sqlite, Key::User) => &SQLITE_USER,
        (db::Backend::Postgres, Key::User) => &POSTGRES_USER,
    }
}

/// What `user_and_chat` finds the teacher by: a request's session token, or
/// (for a turn the server starts itself) the account's id.
#[derive(Clone, Copy)]
enum Key {
    Session,
    User,
}

fn user_and_chat_query(backend: db::Backend, by: Key) -> String {
    let (from, teacher) = match by {
        Key::Session => ("sessions s JOIN users u ON u.id = s.user_id", "s.token_hash = $1 AND s.expires_at > $4"),
        Key::User => ("users u", "u.id = $1 AND $4::TEXT IS NOT NULL"),
    };
    let history = backend.json_rows("m.seq, m.role, m.content, m.tool_calls, m.status, m.attachments");
    let proposals = backend.json_rows("p.id, p.status, p.applied_revision, p.reason");
    let sources = backend.json_rows("ls.id, ls.name, ls.size, ls.chars, ls.opening");
    format!(
        "SELECT u.id AS user_id, u.email, COALESCE(u.school_id, '') AS school_id, u.role, c.id, c.lesson_id, c.title, c.created_at, c.updated_at,
           CASE WHEN u.role = 'student'
             THEN (SELECT r.document_xml FROM lesson_revisions r WHERE r.lesson_id = l.id AND r.number = l.published_revision)
             ELSE l.document_xml END AS document_xml,
           CASE WHEN u.role = 'student' THEN l.published_revision ELSE l.revision END AS revision,
           l.review_edits,
           (SELECT {history}
              FROM (SELECT seq, role, content, tool_calls, status, attachments FROM chat_messages
                    WHERE session_id = c.id ORDER BY seq DESC LIMIT $3) m) AS history,
           (SELECT {proposals}
              FROM proposals p JOIN chat_messages pm ON pm.id = p.message_id WHERE pm.session_id = c.id) AS proposals,
           (SELECT {sources}
              FROM (SELECT id, name, size, chars, opening FROM lesson_sources
                    WHERE lesson_id = l.id ORDER BY seq, id) ls) AS sources
         FROM {from}
         LEFT JOIN chat_sessions c ON c.id = $2 AND c.owner_id = u.id
         LEFT JOIN lessons l ON l.id = c.lesson_id AND l.deleted_at IS NULL AND (l.owner_id = u.id OR (u.role = 'student' AND {STUDENT_SEES}))
         WHERE {teacher}"
    )
}

/// The teacher a session token belongs to and, if it is theirs, the chat
/// `chat_id` with its lesson and its last `history_limit` messages. One
/// query, the conversation gathered into a JSON array, because this is on the
/// way to the first word of a reply. `None`: the token is unknown or expired.
pub async fn user_and_chat(db: &Db, token: &str, chat_id: &str, history_limit: usize) -> Result<Option<(UserInfo, Option<ChatStart>)>> {
    read_user_and_chat(db, Key::Session, &super::auth::token_hash(token), chat_id, history_limit).await
}

/// The same, for the account `user_id` (a turn the server starts itself,
/// for something that happened to the lesson).
pub async fn owner_and_chat(db: &Db, user_id: &str, chat_id: &str, history_limit: usize) -> Result<Option<(UserInfo, Option<ChatStart>)>> {
    read_user_and_chat(db, Key::User, user_id, chat_id, history_limit).await
}

async fn read_user_and_chat(db: &Db, by: Key, key: &str, chat_id: &str, history_limit: usize) -> Result<Option<(UserInfo, Option<ChatStart>)>> {
    let row: Option<UserAndChat> = sqlx::query_as(user_and_chat_sql(db::Backend::of(db), by))
    .bind(key)
    .bind(chat_id)
    .bind(history_limit as i64)
    .bind(db::time::now())
    .fetch_optional(db)
    .await?;
    let Some(UserAndChat {
        user_id,
        email,
        school_id,
        role,
        id,
        lesson_id,
        title,
        created_at,
        updated_at,
        document_xml,
        revision,
        review_edits,
        history,
        proposals,
        sources,
    }) = row
    else {
        return Ok(None);
    };
    let user = UserInfo { id: user_id, email, school_id, role };
    let (Some(id), Some(lesson_id), Some(title), Some(created_at), Some(updated_at), Some(document_xml), Some(revision)) =
        (id, lesson_id, title, created_at, updated_at, document_xml, revision)
    else {
        return Ok(Some((user, None)));
    };
    let mut rows: Vec<(i64, String, String, String, String, Option<String>)> = serde_json::from_str(&history).unwrap_or_else(|e| {
        tracing::warn!(error = %e, "could not read the chat history; going on without it");
        Vec::new()
    });
    rows.sort_by_key(|r| r.0);
    let marks = proposals::marks(serde_json::from_str(&proposals).unwrap_or_default());
    let history = rows
        .into_iter()
        .map(|(_, role, content, tool_calls, status, attachments)| {
            let mut m = stored(&role, content, &tool_calls, &status, attachments.as_deref());
            if let StoredMessage::Assistant(record) = &mut m {
                with_marks(&mut record.tool_calls, &marks);
            }
            m
        })
        .collect();
    let session = ChatSession { id, lesson_id, title, created_at, updated_at };
    let review_edits = review_edits.is_some_and(bool::from);
    let sources: Vec<(String, String, i64, i64, String)> = serde_json::from_str(&sources).unwrap_or_else(|e| {
        tracing::warn!(error = %e, "could not read the lesson's sources; going on without them");
        Vec::new()
    });
    // The teacher's material is not the student's to read.
    let sources = if user.is_student() { Vec::new() } else { sources };
    let sources = sources.into_iter().map(|(id, name, size, chars, opening)| crate::models::SourceSummary { id, name, size, chars, opening }).collect();
    Ok(Some((user, Some(ChatStart { session, document_xml, revision, review_edits, history, sources }))))
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
    if done.rows_affected() == 0 {
        return Err(AppError::NotFound);
    }
    get_session(db, owner, id).await
}

pub async fn delete_session(db: &Db, owner: &str, id: &str) -> Result<()> {
    let done = sqlx::query(&format!("DELETE FROM chat_sessions WHERE id = $1 AND owner_id = $2 AND {IN_LIVE_LESSON}"))
        .bind(id)
        .bind(owner)
        .execute(db)
        .await?;
    if done.rows_affected() == 0 {
        return Err(AppError::NotFound);
    }
    Ok(())
}

/// Stores the teacher's message and the reply's (running) message, and marks
/// the chat as just used (naming it after the message if it has none yet),
/// in one round trip, as this is on the way to the first word of the reply
/// (`START_TURN_*`). The messages are one statement, both or neither; the
/// reply is leased to this instance (`ids.lease`).
///
/// One reply at a time per chat, across instances: nothing is stored while
/// the chat has a running reply (`TURN_IN_CHAT`). Sequence numbers cannot be
/// taken twice: SQLite's write statement holds the write lock before it
/// reads, and in PostgreSQL `(session_id, seq)` is unique, so two instances
/// starting a turn in the same chat at the same moment cannot interleave
/// (the second gets the same refusal).
pub async fn start_turn(db: &Db, session_id: &str, content: &str, ids: &TurnIds<'_>, model: &str) -> Result<()> {
    start_turn_with(db, session_id, content, None, ids, model).await
}

/// `start_turn` with the message's attachments. An automatic turn's chat is
/// named after what started it, not after the instructions the model reads.
pub async fn start_turn_with(db: &Db, session_id: &str, content: &str, attachments: Option<&Attachments>, ids: &TurnIds<'_>, model: &str) -> Result<()> {
    let title = match attachments.and_then(|a| a.trigger.as_deref()) {
        Some(trigger) => title_from(trigger),
        None => title_from(content),
    };
    let sql = match db::Backend::of(db) {
        db::Backend::Sqlite => START_TURN_SQLITE,
        db::Backend::Postgres => START_TURN_POSTGRES,
    };
    let done = sqlx::query(sql)
        .bind(session_id)
        .bind(ids.user_message)
        .bind(content)
        .bind(ids.assistant_message)
        .bind(model)
        .bind(ids.turn)
        .bind(DEFAULT_CHAT_TITLE)
        .bind(title)
        .bind(db::time::now())
        .bind(ids.lease.instance)
        .bind(&ids.lease.until)
        .bind(attachments.and_then(Attachments::stored))
        .bind(ids.reserved.0)
        .bind(ids.reserved.1)
        .execute(db)
        .await;
    match done {
        Ok(done) if done.rows_affected() == 0 => Err(AppError::Conflict(TURN_IN_CHAT.into())),
        Ok(_) => Ok(()),
        Err(sqlx::Error::Database(e)) if e.is_unique_violation() => Err(AppError::Conflict(TURN_IN_CHAT.into())),
        Err(e) => Err(e.into()),
    }
}

/// Why a turn could not start: the chat has a running reply (here, on
/// another instance, or one that got in first).
pub const TURN_IN_CHAT: &str = "A reply is still being written in this chat. Wait for it to finish or stop it first.";


/// `start_turn` for SQLite: two statements in one call (the chat is touched
/// first, so a failure there stores nothing).
const START_TURN_SQLITE: &str = "UPDATE chat_sessions SET updated_at = $9,
       title = CASE WHEN title = $7 AND NOT EXISTS (SELECT 1 FROM chat_messages WHERE session_id = $1) THEN $8 ELSE title END
     WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM chat_messages WHERE session_id = $1 AND status = 'running');
     WITH n AS (SELECT COALESCE(MAX(seq), 0) AS last FROM chat_messages WHERE session_id = $1),
       free AS (SELECT 1 WHERE NOT EXISTS (SELECT 1 FROM chat_messages WHERE session_id = $1 AND status = 'running'))
     INSERT INTO chat_messages (id, session_id, seq, role, content, status, model, turn_id, instance_id, lease_until, attachments, reserved_school, reserved_tokens)
     SELECT $2, $1, last + 1, 'user', $3, 'complete', NULL, NULL, NULL, NULL, $12, NULL, 0 FROM n, free
     UNION ALL
     SELECT $4, $1, last + 2, 'assistant', '', 'running', $5, $6, $10, $11, NULL, $13, $14 FROM n, free";

/// `start_turn` for PostgreSQL, which prepares one statement at a time: the
/// touch of the chat is a data-modifying `WITH`.
const START_TURN_POSTGRES: &str = "WITH touched AS (
       UPDATE chat_sessions SET updated_at = $9,
         title = CASE WHEN title = $7 AND NOT EXISTS (SELECT 1 FROM chat_messages WHERE session_id = $1) THEN $8 ELSE title END
       WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM chat_messages WHERE session_id = $1 AND status = 'running')
       RETURNING id),
     n AS (SELECT COALESCE(MAX(seq), 0) AS last FROM chat_messages WHERE session_id = $1)
     INSERT INTO chat_messages (id, session_id, seq, role, content, status, model, turn_id, instance_id, lease_until, attachments, reserved_school, reserved_tokens)
     SELECT $2, $1, last + 1, 'user', $3, 'complete', NULL, NULL, NULL, NULL, $12::TEXT, NULL::TEXT, 0 FROM n, touched
     UNION ALL
     SELECT $4, $1, last + 2, 'assistant', '', 'running', $5, $6, $10, $11, NULL::TEXT, $13::TEXT, $14::BIGINT FROM n, touched";

/// Why a Retry was refused.
fn not_retryable() -> AppError {
    AppError::Conflict("Only the chat's last reply can be tried again, and only if it did not finish.".into())
}

/// What Retry asks again: the chat's last question, when the reply to it is
/// the chat's last message and did not finish.
pub fn retry_question(history: &[StoredMessage]) -> Result<String> {
    match history {
        [.., StoredMessage::User(question), StoredMessage::Assistant(reply)]
            if matches!(reply.status, MessageStatus::Error | MessageStatus::Interrupted | MessageStatus::Cancelled) =>
        {
            Ok(question.clone())
        }
        _ => Err(not_retryable()),
    }
}

/// Stores the start of a retried turn: the reply that did not finish makes
/// way for the new one, under the same question (which is not stored again).
pub async fn restart_turn(db: &Db, session_id: &str, ids: &TurnIds<'_>, model: &str) -> Result<()> {
    // The reply that makes way may still hold a reservation its instance
    // never gave back: returned first, or it would go with the row.
    super::budget::return_abandoned(db).await?;
    let mut tx = db::begin_write(db).await?;
    let removed = sqlx::query(
        "DELETE FROM chat_messages WHERE session_id = $1 AND role = 'assistant'
           AND status IN ('error', 'interrupted', 'cancelled')
           AND seq = (SELECT MAX(seq) FROM chat_messages WHERE session_id = $1)",
    )
    .bind(session_id)
    .execute(&mut *tx)
    .await?;
    if removed.rows_affected() != 1 {
        return Err(not_retryable());
    }
    sqlx::query("UPDATE chat_sessions SET updated_at = $2 WHERE id = $1")
        .bind(session_id)
        .bind(db::time::now())
        .execute(&mut *tx)
        .await?;
    sqlx::query(
        "INSERT INTO chat_messages (id, session_id, seq, role, content, status, model, turn_id, instance_id, lease_until, reserved_school, reserved_tokens)
         SELECT $2, $1, COALESCE(MAX(seq), 0) + 1, 'assistant', '', 'running', $3, $4, $5, $6, $7, $8 FROM chat_messages WHERE session_id = $1",
    )
    .bind(session_id)
    .bind(ids.assistant_message)
    .bind(model)
    .bind(ids.turn)
    .bind(ids.lease.instance)
    .bind(&ids.lease.until)
    .bind(ids.reserved.0)
    .bind(ids.reserved.1)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

/// The ids a new turn writes under.
pub struct TurnIds<'a> {
    pub turn: &'a str,
    pub user_message: &'a str,
    pub assistant_message: &'a str,
    pub lease: Lease<'a>,
    /// The school whose budget the turn's first call reserved, and how
    /// much: recorded on the reply (`budget::return_abandoned`).
    pub reserved: (&'a str, i64),
}

/// Whose a running reply is, and until when unless renewed.
pub struct Lease<'a> {
    pub instance: &'a str,
    pub until: String,
}

/// Saves what a running turn has added since its last checkpoint (so a crash
/// loses little): the text and the reasoning are appended, never rewritten, and the steps are
/// written only when they changed. A turn's steps only ever grow, so an empty
/// list means "unchanged" (the message starts with none).
pub async fn save_progress(db: &Db, message_id: &str, text: &str, reasoning: &str, tool_calls: &[ToolCallRecord]) -> Result<()> {
    let tool_calls = (!tool_calls.is_empty()).then_some(tool_calls);
    sqlx::query(
        "UPDATE chat_messages SET content = content || $1, reasoning = reasoning || $4, tool_calls = COALESCE($2, tool_calls)
         WHERE id = $3 AND status = 'running'",
    )
    .bind(text)
    .bind(tool_calls.map(|c| serde_json::to_string(c).unwrap_or_else(|_| "[]".into())))
    .bind(message_id)
    .bind(reasoning)
    .execute(db)
    .await?;
    Ok(())
}

/// Stores a turn's message as it ended.
pub async fn finish_turn(db: &Db, message_id: &str, f: &TurnRecord) -> Result<()> {
    sqlx::query(
        "UPDATE chat_messages SET content = $1, reasoning = $2, tool_calls = $3, document_xml = $4, status = $5, error_code = $6,
                error_message = $7, prompt_tokens = $8, completion_tokens = $9, total_tokens = $10
         WHERE id = $11",
    )
    .bind(&f.text)
    .bind(&f.reasoning)
    .bind(serde_json::to_string(&f.tool_calls).unwrap_or_else(|_| "[]".into()))
    .bind(f.document_xml.as_deref())
    .bind(f.status.as_str())
    .bind(f.error.as_ref().map(|e| e.code.as_str()))
    .bind(f.error.as_ref().map(|e| e.message.as_str()))
    .bind(f.usage.prompt_tokens as i64)
    .bind(f.usage.completion_tokens as i64)
    .bind(f.usage.total_tokens as i64)
    .bind(message_id)
    .execute(db)
    .await?;
    Ok(())
}

/// Replies left running by an instance that is gone become interrupted,
/// keeping the text they had saved: those whose lease ran out before `now`,
/// or, with `all`, every running one (SQLite at start-up: one process owns
/// the file, so none of them is anyone's). Returns how many there were.
pub async fn interrupt_abandoned(db: &Db, now: &str, all: bool) -> Result<u64> {
    let done = sqlx::query(
        "UPDATE chat_messages SET status = 'interrupted', error_code = 'interrupted',
                error_message = 'The server stopped before this reply was finished.'
         WHERE status = 'running' AND ($2 OR lease_until IS NULL OR lease_until < $1)",
    )
    .bind(now)
    .bind(all)
    .execute(db)
    .await?;
    Ok(done.rows_affected())
}

/// Renews the leases of the replies `instance` is writing, until `until`;
/// returns the turns among them that someone asked (on another instance) to stop.
pub async fn renew_leases(db: &Db, instance: &str, until: &str) -> Result<Vec<String>> {
    let renewed: Vec<(String, db::Flag)> = sqlx::query_as(
        "UPDATE chat_messages SET lease_until = $2 WHERE instance_id = $1 AND status = 'running'
         RETURNING turn_id, cancel_requested",
    )
    .bind(instance)
    .bind(until)
    .fetch_all(db)
    .await?;
    Ok(renewed.into_iter().filter(|(_, stop)| stop.0).map(|(turn, _)| turn).collect())
}

/// Asks whichever instance writes one of `owner`'s running replies to stop
/// it. Whether it was running.
pub async fn request_cancel(db: &Db, owner: &str, turn_id: &str) -> Result<bool> {
    let done = sqlx::query(
        "UPDATE chat_messages SET cancel_requested = $3
         WHERE turn_id = $1 AND status = 'running'
           AND session_id IN (SELECT id FROM chat_sessions WHERE owner_id = $2)",
    )
    .bind(turn_id)
    .bind(owner)
    .bind(true)
    .execute(db)
    .await?;
    Ok(done.rows_affected() > 0)
}

/// How a turn's reply stands: its status, its error, and its message's id.
pub async fn turn_end(db: &Db, turn_id: &str) -> Result<Option<(MessageStatus, Option<ErrorData>, String)>> {
    let row: Option<(String, Option<String>, Option<String>, String)> =
        sqlx::query_as("SELECT status, error_code, error_message, id FROM chat_messages WHERE turn_id = $1")
            .bind(turn_id)
            .fetch_optional(db)
            .await?;
    Ok(row.map(|(status, code, message, id)| {
        let error = code.map(|code| ErrorData { code, message: message.unwrap_or_default() });
        (MessageStatus::parse(&status), error, id)
    }))
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
}

/// Columns of `chat_messages m`, as `MessageRow` reads them.
const MESSAGE_COLUMNS: &str = "m.id, m.role, m.content, m.reasoning, m.tool_calls, m.document_xml, m.status, m.error_code, m.error_message,
     m.model, m.prompt_tokens, m.completion_tokens, m.total_tokens, m.turn_id, m.created_at, m.attachments";

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
    }
}

/// A message of the history a new turn is given (a teacher's, as the model
/// reads it: with what it asked about).
fn stored(role_name: &str, content: String, tool_calls: &str, status: &str, attachments: Option<&str>) -> StoredMessage {
    match role(role_name) {
        Role::User => StoredMessage::User(match Attachments::read(attachments) {
            Some(a) => model_text(&content, Some(&a)),
            None => content,
        }),
        Role::Assistant => StoredMessage::Assistant(TurnRecord {
            text: content,
            tool_calls: steps(tool_calls),
            status: MessageStatus::parse(status),
            ..TurnRecord::default()
        }),
    }
}

/// Where the proposals among these steps stand now (the steps recorded them
/// as pending; the decision is the proposal's).
fn with_marks(calls: &mut [ToolCallRecord], marks: &HashMap<String, ProposalMark>) {
    for c in calls {
        if let Some(mark) = c.proposal.as_ref().and_then(|p| marks.get(&p.id)) {
            c.proposal = Some(mark.clone());
        }
    }
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
    Ok(sqlx::query_as(
        "SELECT l.document_xml, l.revision FROM chat_messages m
           JOIN chat_sessions s ON s.id = m.session_id
           JOIN lessons l ON l.id = s.lesson_id AND l.owner_id = s.owner_id AND l.deleted_at IS NULL
         WHERE m.turn_id = $1 AND s.owner_id = $2",
    )
    .bind(turn_id)
    .bind(owner)
    .fetch_optional(db)
    .await?)
}
