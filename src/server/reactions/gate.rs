//! A lesson's gate in the database: the events waiting for the next
//! automatic turn, when they are due, and when the last such turn started.
//! Every instance shares it, so a burst of uploads in two tabs, or on two
//! instances, still starts one turn: opening the gate is one conditional
//! `UPDATE`, and only one caller sees it change a row.
//!
//! The timing, in milliseconds on the reaction clock (`last_fired_ms` is
//! NULL until a first automatic turn, and NULL + anything is NULL, which
//! the CASE reads as "not later"):
//! - an event makes the lesson due `DEBOUNCE_MS` later, pushed back by each
//!   event after it, so a burst is gathered;
//! - but never sooner than `SPACING_MS` after the last automatic turn
//!   started, so later events are batched into the next one;
//! - and the gate does not open while a reply is running in any of the
//!   lesson's chats: the teacher's own message goes first.

use crate::server::{
    db::{self, Db},
    error::Result,
    ids,
};

use super::intents::{Happening, Intent};

/// How long a burst of events is gathered.
pub const DEBOUNCE_MS: i64 = 2_000;
/// The least time between two automatic turns of one lesson.
pub const SPACING_MS: i64 = 30_000;
/// The most events that wait for one lesson; later ones are dropped (the
/// turn has plenty to react to, and a script cannot fill the database).
pub const MAX_WAITING: i64 = 50;

/// An event waiting at the gate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pending {
    pub owner_id: String,
    pub chat_id: Option<String>,
    pub happening: Happening,
}

/// What trying to open the gate found.
#[derive(Debug, PartialEq, Eq)]
pub enum Claim {
    /// Opened: these events (oldest first) are this caller's to act on, as
    /// batch `batch`.
    Won { batch: String, events: Vec<Pending> },
    /// Due, but a reply is running in the lesson: try again later.
    Busy,
    /// Due later, at this time (a newer event moved it).
    Later(i64),
    /// Nothing is waiting (someone else opened it).
    Gone,
}

/// Queues what happened to `lesson_id` and answers when the lesson is due.
pub async fn queue(db: &Db, lesson_id: &str, owner_id: &str, chat_id: Option<&str>, happened: &[Happening], now: i64) -> Result<i64> {
    let mut tx = db::begin_write(db).await?;
    for h in happened {
        sqlx::query(
            "INSERT INTO lesson_pending_events (lesson_id, owner_id, chat_id, intent, note, detail, created_ms)
             SELECT $1, $2, $3, $4, $5, $6, $7
             WHERE (SELECT COUNT(*) FROM lesson_pending_events WHERE lesson_id = $1 AND batch IS NULL) < $8",
        )
        .bind(lesson_id)
        .bind(owner_id)
        .bind(chat_id)
        .bind(h.intent.as_str())
        .bind(&h.note)
        .bind(&h.detail)
        .bind(now)
        .bind(MAX_WAITING)
        .execute(&mut *tx)
        .await?;
    }
    let due: i64 = sqlx::query_scalar(
        "INSERT INTO lesson_event_gates (lesson_id, due_ms, last_fired_ms) VALUES ($1, $2, NULL)
         ON CONFLICT (lesson_id) DO UPDATE SET due_ms =
           CASE WHEN lesson_event_gates.last_fired_ms + $3 > $2 THEN lesson_event_gates.last_fired_ms + $3 ELSE $2 END
         RETURNING due_ms",
    )
    .bind(lesson_id)
    .bind(now + DEBOUNCE_MS)
    .bind(SPACING_MS)
    .fetch_one(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(due)
}

/// Tries to open `lesson_id`'s gate at `now`.
pub async fn claim(db: &Db, lesson_id: &str, now: i64) -> Result<Claim> {
    let opened = sqlx::query(
        "UPDATE lesson_event_gates SET due_ms = NULL, last_fired_ms = $2
         WHERE lesson_id = $1 AND due_ms IS NOT NULL AND due_ms <= $2
           AND NOT EXISTS (SELECT 1 FROM chat_messages m JOIN chat_sessions c ON c.id = m.session_id
                           WHERE c.lesson_id = $1 AND m.status = 'running')",
    )
    .bind(lesson_id)
    .bind(now)
    .execute(db)
    .await?;
    if opened.rows_affected() == 0 {
        let due: Option<Option<i64>> = sqlx::query_scalar("SELECT due_ms FROM lesson_event_gates WHERE lesson_id = $1")
            .bind(lesson_id)
            .fetch_optional(db)
            .await?;
        return Ok(match due.flatten() {
            None => Claim::Gone,
            Some(d) if d > now => Claim::Later(d),
            Some(_) => Claim::Busy,
        });
    }
    let batch = ids::new_id();
    sqlx::query("UPDATE lesson_pending_events SET batch = $2 WHERE lesson_id = $1 AND batch IS NULL")
        .bind(lesson_id)
        .bind(&batch)
        .execute(db)
        .await?;
    let rows: Vec<(String, Option<String>, String, String, String)> = sqlx::query_as(
        "SELECT owner_id, chat_id, intent, note, detail FROM lesson_pending_events WHERE batch = $1 ORDER BY seq",
    )
    .bind(&batch)
    .fetch_all(db)
    .await?;
    let events: Vec<Pending> = rows
        .into_iter()
        .filter_map(|(owner_id, chat_id, intent, note, detail)| {
            Some(Pending { owner_id, chat_id, happening: Happening { intent: Intent::from_wire(&intent)?, note, detail } })
        })
        .collect();
    if events.is_empty() {
        done(db, &batch).await?;
        return Ok(Claim::Gone);
    }
    Ok(Claim::Won { batch, events })
}

/// The batch has been acted on (or given up): it is forgotten.
pub async fn done(db: &Db, batch: &str) -> Result<()> {
    sqlx::query("DELETE FROM lesson_pending_events WHERE batch = $1").bind(batch).execute(db).await?;
    Ok(())
}

/// The batch could not start a turn yet: back at the gate, due at `due`.
pub async fn put_back(db: &Db, lesson_id: &str, batch: &str, due: i64) -> Result<()> {
    let mut tx = db::begin_write(db).await?;
    sqlx::query("UPDATE lesson_pending_events SET batch = NULL WHERE batch = $1").bind(batch).execute(&mut *tx).await?;
    sqlx::query("UPDATE lesson_event_gates SET due_ms = $2 WHERE lesson_id = $1").bind(lesson_id).bind(due).execute(&mut *tx).await?;
    tx.commit().await?;
    Ok(())
}

/// Drops `owner_id`'s events of kind `intent` still waiting (the teacher
/// switched that kind off).
pub async fn drop_waiting_of(db: &Db, owner_id: &str, intent: Intent) -> Result<()> {
    sqlx::query("DELETE FROM lesson_pending_events WHERE owner_id = $1 AND intent = $2 AND batch IS NULL").bind(owner_id).bind(intent.as_str()).execute(db).await?;
    Ok(())
}

/// Drops `owner_id`'s events still waiting, but those of the two kinds
/// `kept` (which are switched on and off apart, or not by the teacher's
/// switch at all).
pub async fn drop_waiting_but(db: &Db, owner_id: &str, kept: [Intent; 2]) -> Result<()> {
    sqlx::query("DELETE FROM lesson_pending_events WHERE owner_id = $1 AND intent <> $2 AND intent <> $3 AND batch IS NULL")
        .bind(owner_id)
        .bind(kept[0].as_str())
        .bind(kept[1].as_str())
        .execute(db)
        .await?;
    Ok(())
}

/// Every lesson with events due, and when (after a restart, each is waited
/// for again).
pub async fn waiting(db: &Db) -> Result<Vec<(String, i64)>> {
    Ok(sqlx::query_as("SELECT lesson_id, due_ms FROM lesson_event_gates WHERE due_ms IS NOT NULL").fetch_all(db).await?)
}
