//! The two events the product sends itself: a teacher creating a lesson
//! (`lessonCreated`) and coming back to one (`sessionStart`). Both go
//! through the lesson's gate like any event, and neither is sent for a
//! teacher who switched automatic turns off.
//!
//! (`POST /api/chat/events` still takes either whenever a script sends it:
//! what is counted here is what the product sends.)
//!
//! "Coming back" is counted per teacher and lesson (`lesson_sessions`):
//! creating a lesson begins their first session on it, the first opening of
//! a lesson they did not create here (an import, a copy, a colleague's)
//! begins one quietly, and an opening begins a new one, which is sent, only
//! once the last began `SESSION_GAP_MS` ago: the assistant greets a teacher
//! once a working day, not at every reload or tab. One conditional write
//! decides it, so two tabs or two instances send it once.

use super::intents::{self, Intent};
use crate::server::{error::Result, state::AppState};

/// How long after a teacher's last session on a lesson began opening it
/// begins another (twelve hours).
pub const SESSION_GAP_MS: i64 = 12 * 3600 * 1000;

/// `owner_id` opened `lesson_id` (one of the lessons they may edit; the
/// caller checked): queued as `sessionStart` (to be answered in `chat_id`,
/// or the lesson's latest chat) when it begins a session. How long until
/// the lesson is due, when queued.
pub async fn opened(state: &AppState, owner_id: &str, lesson_id: &str, chat_id: Option<&str>) -> Result<Option<i64>> {
    if !super::enabled(&state.db, owner_id).await? {
        return Ok(None);
    }
    let now = state.reactions.now_ms();
    // Read first: most openings are within a session and write nothing (a
    // page load is no reason to wait for the database's one writer).
    let last: Option<i64> = sqlx::query_scalar("SELECT started_ms FROM lesson_sessions WHERE owner_id = $1 AND lesson_id = $2")
        .bind(owner_id)
        .bind(lesson_id)
        .fetch_optional(&state.db)
        .await?;
    match last {
        None => {
            sqlx::query("INSERT INTO lesson_sessions (owner_id, lesson_id, started_ms) VALUES ($1, $2, $3) ON CONFLICT (owner_id, lesson_id) DO NOTHING")
                .bind(owner_id)
                .bind(lesson_id)
                .bind(now)
                .execute(&state.turn_writer)
                .await?;
            return Ok(None);
        }
        Some(started) if started > now - SESSION_GAP_MS => return Ok(None),
        Some(_) => {}
    }
    // Conditional, so that of two tabs or instances one begins it.
    let began = sqlx::query("UPDATE lesson_sessions SET started_ms = $3 WHERE owner_id = $1 AND lesson_id = $2 AND started_ms <= $4")
        .bind(owner_id)
        .bind(lesson_id)
        .bind(now)
        .bind(now - SESSION_GAP_MS)
        .execute(&state.turn_writer)
        .await?
        .rows_affected()
        == 1;
    if !began {
        return Ok(None);
    }
    let happened = intents::from_request(&state.db, lesson_id, Intent::SessionStart, &serde_json::Value::Null).await?;
    super::queue(state, owner_id, lesson_id, chat_id, &happened).await.map(Some)
}

/// `owner_id` created `lesson_id` ("New lesson"): queued as
/// `lessonCreated`, and their first session on it begins.
pub async fn created(state: &AppState, owner_id: &str, lesson_id: &str) -> Result<Option<i64>> {
    if !super::enabled(&state.db, owner_id).await? {
        return Ok(None);
    }
    sqlx::query(
        "INSERT INTO lesson_sessions (owner_id, lesson_id, started_ms) VALUES ($1, $2, $3)
         ON CONFLICT (owner_id, lesson_id) DO UPDATE SET started_ms = excluded.started_ms",
    )
    .bind(owner_id)
    .bind(lesson_id)
    .bind(state.reactions.now_ms())
    .execute(&state.turn_writer)
    .await?;
    let happened = intents::from_request(&state.db, lesson_id, Intent::LessonCreated, &serde_json::Value::Null).await?;
    super::queue(state, owner_id, lesson_id, None, &happened).await.map(Some)
}
