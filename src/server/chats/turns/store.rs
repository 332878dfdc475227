//! Every query the turn engine runs: the teacher and the chat a turn
//! starts in (one query, on the way to the first word), storing a turn's
//! start, its checkpoints and its end, the leases of running replies, and
//! how a turn ended. The chats' own queries (listing, naming, deleting) stay
//! in `chats`.

mod chat_start;

pub use chat_start::{owner_and_chat, user_and_chat, ChatStart};

use crate::{
    chat::{
        events::ErrorData,
        message::{title_from, Attachments, MessageStatus, StoredMessage, ToolCallRecord, DEFAULT_CHAT_TITLE},
        turn::TurnRecord,
    },
    server::{
        db::{self, Db},
        error::{AppError, Result},
    },
};

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
    crate::server::accounts::budget::return_abandoned(db).await?;
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
         WHERE id = $3 AND status = 'running' AND resume_state IS NULL",
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
                error_message = $7, prompt_tokens = $8, completion_tokens = $9, total_tokens = $10, rounds = $12
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
    .bind(i64::from(f.rounds))
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
         WHERE status = 'running' AND resume_state IS NULL AND ($2 OR lease_until IS NULL OR lease_until < $1)",
    )
    .bind(now)
    .bind(all)
    .execute(db)
    .await?;
    Ok(done.rows_affected())
}

/// Stores a reply pausing on a held edit: its record so far (whole, so
/// nothing a checkpoint had not written yet is lost) and what resuming it
/// needs (`state`). Checkpoints do not write to it while it is paused.
pub async fn pause_turn(db: &Db, message_id: &str, f: &TurnRecord, state: &str) -> Result<()> {
    sqlx::query(
        "UPDATE chat_messages SET content = $1, reasoning = $2, tool_calls = $3, document_xml = $4, prompt_tokens = $5,
                completion_tokens = $6, total_tokens = $7, rounds = $8, resume_state = $9
         WHERE id = $10 AND status = 'running'",
    )
    .bind(&f.text)
    .bind(&f.reasoning)
    .bind(serde_json::to_string(&f.tool_calls).unwrap_or_else(|_| "[]".into()))
    .bind(f.document_xml.as_deref())
    .bind(f.usage.prompt_tokens as i64)
    .bind(f.usage.completion_tokens as i64)
    .bind(f.usage.total_tokens as i64)
    .bind(i64::from(f.rounds))
    .bind(state)
    .bind(message_id)
    .execute(db)
    .await?;
    Ok(())
}

/// A paused reply goes on: checkpoints write to it again.
pub async fn unpause(db: &Db, message_id: &str) -> Result<()> {
    sqlx::query("UPDATE chat_messages SET resume_state = NULL WHERE id = $1").bind(message_id).execute(db).await?;
    Ok(())
}

/// A paused reply whose process is stopping: its lease is given up, so that
/// any instance adopts it at its next tick (`adopt_paused`).
pub async fn park(db: &Db, message_id: &str) -> Result<()> {
    sqlx::query("UPDATE chat_messages SET lease_until = NULL, instance_id = '' WHERE id = $1 AND resume_state IS NOT NULL").bind(message_id).execute(db).await?;
    Ok(())
}

/// Takes over the paused replies nobody holds: those whose lease ran out
/// before `now`, or, with `all`, every paused one (SQLite at start-up).
/// They are leased to `instance` until `until`; returns their turns.
pub async fn adopt_paused(db: &Db, instance: &str, now: &str, until: &str, all: bool) -> Result<Vec<String>> {
    // Looked for first: this runs every second on every instance, and an
    // UPDATE that changes nothing still takes SQLite's write lock.
    let any: Option<i64> = sqlx::query_scalar(
        "SELECT 1 FROM chat_messages WHERE status = 'running' AND resume_state IS NOT NULL AND ($2 OR lease_until IS NULL OR lease_until < $1) LIMIT 1",
    )
    .bind(now)
    .bind(all)
    .fetch_optional(db)
    .await?;
    if any.is_none() {
        return Ok(Vec::new());
    }
    Ok(sqlx::query_scalar::<_, Option<String>>(
        "UPDATE chat_messages SET instance_id = $1, lease_until = $2
         WHERE status = 'running' AND resume_state IS NOT NULL AND ($4 OR lease_until IS NULL OR lease_until < $3)
         RETURNING turn_id",
    )
    .bind(instance)
    .bind(until)
    .bind(now)
    .bind(all)
    .fetch_all(db)
    .await?
    .into_iter()
    .flatten()
    .collect())
}

/// A paused reply that could not be resumed ends as interrupted.
pub async fn give_up(db: &Db, turn_id: &str) -> Result<()> {
    sqlx::query(
        "UPDATE chat_messages SET status = 'interrupted', error_code = 'interrupted', resume_state = NULL,
                error_message = 'The server stopped before this reply was finished.'
         WHERE turn_id = $1 AND status = 'running'",
    )
    .bind(turn_id)
    .execute(db)
    .await?;
    Ok(())
}

/// What resuming a paused reply reads: its message, chat and owner, and the state stored at the pause.
pub async fn paused(db: &Db, turn_id: &str) -> Result<Option<(String, String, String, String)>> {
    Ok(sqlx::query_as(
        "SELECT m.id, m.session_id, s.owner_id, m.resume_state FROM chat_messages m JOIN chat_sessions s ON s.id = m.session_id
         WHERE m.turn_id = $1 AND m.status = 'running' AND m.resume_state IS NOT NULL",
    )
    .bind(turn_id)
    .fetch_optional(db)
    .await?)
}

/// Renews the leases of the replies `instance` is writing that run out
/// before `due`, until `until`; returns how many it renewed. A lease is not
/// rewritten every tick, only once it has run down to `due` (see
/// `leases::tick`): a row write per reply per tick would make the renewals
/// grow with the replies (a thousand replies, a thousand rows a second).
pub async fn renew_leases(db: &Db, instance: &str, until: &str, due: &str) -> Result<u64> {
    let renewed = sqlx::query(
        "UPDATE chat_messages SET lease_until = $2
         WHERE instance_id = $1 AND status = 'running' AND (lease_until IS NULL OR lease_until < $3)",
    )
    .bind(instance)
    .bind(until)
    .bind(due)
    .execute(db)
    .await?;
    Ok(renewed.rows_affected())
}

/// The turns among the replies `instance` is writing that someone asked
/// (on another instance) to stop. Read, not written: every tick.
pub async fn stops_asked(db: &Db, instance: &str) -> Result<Vec<String>> {
    let asked: Vec<Option<String>> = sqlx::query_scalar("SELECT turn_id FROM chat_messages WHERE status = 'running' AND cancel_requested = $2 AND instance_id = $1")
        .bind(instance)
        .bind(true)
        .fetch_all(db)
        .await?;
    Ok(asked.into_iter().flatten().collect())
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

/// How a turn's reply stands, as a reader on another instance sees it.
pub struct TurnEnd {
    pub status: MessageStatus,
    pub error: Option<ErrorData>,
    pub message_id: String,
    /// Until when the instance that wrote the reply held it. An instance
    /// stores a reply's end before its relay writes the last batch of
    /// events, so while the lease still holds, that batch may yet come.
    pub lease_until: Option<String>,
}

/// How a turn's reply stands: its status, its error, its message's id and its lease.
pub async fn turn_end(db: &Db, turn_id: &str) -> Result<Option<TurnEnd>> {
    let row: Option<(String, Option<String>, Option<String>, String, Option<String>)> =
        sqlx::query_as("SELECT status, error_code, error_message, id, lease_until FROM chat_messages WHERE turn_id = $1")
            .bind(turn_id)
            .fetch_optional(db)
            .await?;
    Ok(row.map(|(status, code, message, message_id, lease_until)| {
        let error = code.map(|code| ErrorData { code, message: message.unwrap_or_default() });
        TurnEnd { status: MessageStatus::parse(&status), error, message_id, lease_until }
    }))
}

