//! The assistant reacting to what happens to a lesson, not only to what the
//! teacher types: material added, a lesson created, a student's wrong
//! answer, a session started, the core of a version changed. Each such event (`intents`) waits at the
//! lesson's gate (`gate`), shared through the database by every instance:
//! a burst is gathered into one automatic turn, turns are spaced out, and
//! none starts while a reply runs in the lesson. `fire` starts the turn when
//! the gate opens; `routes` is the API and the teacher's switch.

pub mod carry;
pub mod fire;
pub mod gate;
pub mod intents;
pub mod routes;
pub mod scheduler;
pub mod sessions;
pub mod versions;

use crate::server::{
    db::{Db, Flag},
    error::Result,
    state::AppState,
};

/// Whether `user_id` lets the assistant react to events ("Let the assistant
/// react on its own"; on unless switched off).
pub async fn enabled(db: &Db, user_id: &str) -> Result<bool> {
    let on: Option<Flag> = sqlx::query_scalar("SELECT react_to_events FROM users WHERE id = $1").bind(user_id).fetch_optional(db).await?;
    Ok(on.is_some_and(bool::from))
}

/// Switches automatic turns on or off for `user_id`; off drops what waits.
pub async fn set_enabled(db: &Db, user_id: &str, on: bool) -> Result<()> {
    sqlx::query("UPDATE users SET react_to_events = $1 WHERE id = $2").bind(on).bind(user_id).execute(db).await?;
    if !on {
        // Wrong answers are switched on and off apart; a core's changes
        // reach its versions whatever the switch says (the teacher linked
        // them, and every edit they bring waits for review).
        gate::drop_waiting_but(db, user_id, [intents::Intent::AnswerWrong, intents::Intent::CoreChanged]).await?;
    }
    Ok(())
}

/// Whether `user_id` has the assistant told when students get answers
/// wrong (off unless switched on).
pub async fn tells_wrong_answers(db: &Db, user_id: &str) -> Result<bool> {
    let on: Option<Flag> = sqlx::query_scalar("SELECT tell_wrong_answers FROM users WHERE id = $1").bind(user_id).fetch_optional(db).await?;
    Ok(on.is_some_and(bool::from))
}

/// Switches telling the assistant of wrong answers on or off for
/// `user_id`; off drops the wrong answers waiting at their lessons' gates.
pub async fn set_tell_wrong_answers(db: &Db, user_id: &str, on: bool) -> Result<()> {
    sqlx::query("UPDATE users SET tell_wrong_answers = $1 WHERE id = $2").bind(on).bind(user_id).execute(db).await?;
    if !on {
        gate::drop_waiting_of(db, user_id, intents::Intent::AnswerWrong).await?;
    }
    Ok(())
}

/// A student's check of `lesson_id` found answers wrong: queued at the
/// lesson's gate like any event, when its teacher `owner_id` asked to be
/// told (otherwise `None`, nothing queued). A class checking together is
/// gathered into one automatic turn.
pub async fn wrong_answers(state: &AppState, owner_id: &str, lesson_id: &str, happened: intents::Happening) -> Result<Option<i64>> {
    if !tells_wrong_answers(&state.db, owner_id).await? {
        return Ok(None);
    }
    queue(state, owner_id, lesson_id, None, &[happened]).await.map(Some)
}

/// Something happened to one of `owner_id`'s lessons: queued at the
/// lesson's gate, and waited for. `None` when the teacher switched automatic
/// turns off (nothing is queued); otherwise how long until the lesson is
/// due, in milliseconds.
pub async fn react(state: &AppState, owner_id: &str, lesson_id: &str, chat_id: Option<&str>, happened: &[intents::Happening]) -> Result<Option<i64>> {
    if happened.is_empty() || !enabled(&state.db, owner_id).await? {
        return Ok(None);
    }
    queue(state, owner_id, lesson_id, chat_id, happened).await.map(Some)
}

/// The core of `version_id` (one of `owner_id`'s lessons) changed: queued
/// at the version's gate whatever the switch for automatic turns says (the
/// teacher linked the version, and what its turn changes waits for them).
/// One event waits at most (`waiting`: one already does); each later change
/// only pushes the gate back, so a burst of edits is one turn. The event is
/// worded when its turn starts (`carry`).
pub async fn core_changed(state: &AppState, owner_id: &str, version_id: &str, waiting: bool) -> Result<i64> {
    let happened = intents::Happening {
        intent: intents::Intent::CoreChanged,
        note: "The lesson this is a version of changed".into(),
        detail: "The lesson this one is a version of changed.".into(),
    };
    let happened: &[intents::Happening] = if waiting { &[] } else { std::slice::from_ref(&happened) };
    queue(state, owner_id, version_id, None, happened).await
}

/// Queues `happened` at the lesson's gate and waits for it; how long until
/// the lesson is due, in milliseconds.
async fn queue(state: &AppState, owner_id: &str, lesson_id: &str, chat_id: Option<&str>, happened: &[intents::Happening]) -> Result<i64> {
    let now = state.reactions.now_ms();
    let due = gate::queue(&state.turn_writer, lesson_id, owner_id, chat_id, happened, now).await?;
    fire::schedule(state, lesson_id.to_string(), due);
    Ok(due - now)
}
