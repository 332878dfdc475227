//! Starting the automatic turn when a lesson's gate opens. The instance
//! that queues an event waits (on the reaction clock, in its one
//! `Scheduler`) until the lesson is due, then tries the gate; one caller
//! wins it and starts one turn for everything waiting, on the same turn
//! engine as a typed message (the teacher's limits and the school's budget
//! apply). A lesson whose turn cannot start yet is tried again later, and
//! later each time in a row (`retry_after`).

use std::sync::atomic::Ordering;

use super::{
    gate::{self, Claim, Pending, DEBOUNCE_MS},
    intents,
};
use crate::server::{
    chats::{self, turns},
    error::{AppError, Result},
    state::AppState,
};

/// The longest a lesson waits between two tries that could not start.
pub const MAX_RETRY_MS: i64 = 5 * 60_000;

/// When to try again after `tries` tries in a row could not start a turn,
/// the first of them waiting `base` ms: doubled each time, at most `MAX_RETRY_MS`.
pub fn retry_after(base: i64, tries: u32) -> i64 {
    base.max(1).saturating_mul(1i64 << tries.saturating_sub(1).min(20)).min(MAX_RETRY_MS)
}

/// Waits for `lesson_id` to be due at `due`, then opens its gate.
pub fn schedule(state: &AppState, lesson_id: String, due: i64) {
    let scheduler = &state.scheduler;
    scheduler.put(&lesson_id, due, 0);
    if !scheduler.started.swap(true, Ordering::SeqCst) {
        tokio::spawn(run(state.clone()));
    }
}

/// Waits again for every lesson with events due: on start, and every few
/// minutes (`startup::spawn_housekeeping`), since the instance that queued
/// them may have stopped. A second waker is harmless: only one opens the gate.
pub async fn resume(state: &AppState) -> Result<()> {
    for (lesson_id, due) in gate::waiting(&state.db).await? {
        if !state.scheduler.waits_for(&lesson_id) {
            schedule(state, lesson_id, due);
        }
    }
    Ok(())
}

/// The instance's one waker: sleeps until the earliest lesson is due (or a
/// new one is scheduled), then tries each lesson due, one after another.
async fn run(state: AppState) {
    let (scheduler, clock) = (state.scheduler.clone(), state.reactions.clone());
    loop {
        match scheduler.next_due() {
            None => scheduler.changed.notified().await,
            Some(at) => {
                tokio::select! {
                    () = clock.sleep_until(at) => {}
                    () = scheduler.changed.notified() => continue,
                }
            }
        }
        let now = clock.now_ms();
        for (lesson_id, tries) in scheduler.take_due(now) {
            match wake(&state, &lesson_id, now, tries).await {
                Ok(Next::Done) => {}
                Ok(Next::At(due, tries)) => scheduler.put(&lesson_id, due, tries),
                Err(e) => {
                    tracing::warn!(error = %e, lesson = %lesson_id, "the assistant could not react to what happened to a lesson");
                    let tries = tries + 1;
                    scheduler.put(&lesson_id, now + retry_after(DEBOUNCE_MS, tries), tries);
                }
            }
        }
    }
}

/// What becomes of a lesson after a try.
enum Next {
    /// Nothing more to wait for here.
    Done,
    /// Try again at this time, after this many tries in a row that failed.
    At(i64, u32),
}

/// One try of `lesson_id`'s gate at `now`.
async fn wake(state: &AppState, lesson_id: &str, now: i64, tries: u32) -> Result<Next> {
    match gate::claim(&state.db, lesson_id, now).await? {
        Claim::Won { batch, events } => match start(state, lesson_id, &events).await {
            Ok(()) => {
                gate::done(&state.db, &batch).await?;
                Ok(Next::Done)
            }
            // The teacher's own message got in first, or the limit on turns
            // is reached: the events wait for the next chance, longer each
            // time in a row.
            Err(AppError::Conflict(_)) => retry(state, lesson_id, &batch, now + retry_after(DEBOUNCE_MS, tries + 1), tries + 1).await,
            Err(AppError::TooManyTurns(secs) | AppError::SchoolBusy(secs)) => {
                let wait = retry_after((secs as i64) * 1000, tries + 1).max((secs as i64) * 1000);
                retry(state, lesson_id, &batch, now + wait, tries + 1).await
            }
            Err(e) => {
                // No assistant, no budget, the lesson gone: nothing to
                // react with. Said in the log; the events are dropped.
                tracing::info!(error = %e, lesson = %lesson_id, "an automatic turn did not start");
                gate::done(&state.db, &batch).await?;
                Ok(Next::Done)
            }
        },
        Claim::Busy => Ok(Next::At(now + retry_after(DEBOUNCE_MS, tries + 1), tries + 1)),
        Claim::Later(due) => Ok(Next::At(due, tries)),
        Claim::Gone => Ok(Next::Done),
    }
}

async fn retry(state: &AppState, lesson_id: &str, batch: &str, due: i64, tries: u32) -> Result<Next> {
    gate::put_back(&state.db, lesson_id, batch, due).await?;
    Ok(Next::At(due, tries))
}

/// Starts one turn for `events`, in the chat the last of them named if it
/// is still there, else the lesson's latest chat, else a new one.
async fn start(state: &AppState, lesson_id: &str, events: &[Pending]) -> Result<()> {
    let owner = events[0].owner_id.clone();
    // Without an assistant there is nothing to react with (asked before a
    // chat is looked for).
    state.ai.agent()?;
    let mut happened: Vec<intents::Happening> = events.iter().map(|e| e.happening.clone()).collect();
    // A version's core changed: worded now, from the core as it is, once
    // however many edits queued it (nothing, when nothing is left to carry).
    let core_changed = happened.iter().any(|h| h.intent == intents::Intent::CoreChanged);
    let carry = if core_changed { super::carry::carry(&state.db, &owner, lesson_id).await? } else { None };
    happened.retain(|h| h.intent != intents::Intent::CoreChanged);
    happened.extend(carry.as_ref().map(|c| c.happening.clone()));
    if happened.is_empty() {
        return Ok(());
    }
    let chat_id = latest_chat(state, &owner, lesson_id, events).await?;
    let (note, content) = intents::turn_message(&happened);
    // A core's changes are carried as changes the teacher reviews, whatever
    // the lesson's setting. Students' wrong answers start a turn the teacher
    // did not ask for: it suggests, and any change waits for the teacher to ask.
    let kind = if carry.is_some() {
        turns::TurnKind::CoreChange
    } else if happened.iter().any(|h| h.intent == intents::Intent::AnswerWrong) {
        turns::TurnKind::Suggest
    } else {
        turns::TurnKind::Teacher
    };
    turns::start_for(state, turns::OnBehalf { owner_id: &owner, lesson_id, chat_id, note, content, kind }).await?;
    if let Some(carry) = &carry {
        super::carry::carried(&state.db, lesson_id, carry).await?;
    }
    Ok(())
}

/// The chat an automatic turn runs in, if there is one.
async fn latest_chat(state: &AppState, owner: &str, lesson_id: &str, events: &[Pending]) -> Result<Option<String>> {
    for named in events.iter().rev().filter_map(|e| e.chat_id.as_deref()) {
        if chats::get_session(&state.db, owner, named).await.is_ok_and(|s| s.lesson_id == lesson_id) {
            return Ok(Some(named.to_string()));
        }
    }
    Ok(chats::list_sessions(&state.db, owner, lesson_id).await?.first().map(|s| s.id.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_back_off_to_a_ceiling() {
        assert_eq!(retry_after(2_000, 1), 2_000);
        assert_eq!(retry_after(2_000, 2), 4_000);
        assert_eq!(retry_after(2_000, 3), 8_000);
        assert_eq!(retry_after(2_000, 40), MAX_RETRY_MS);
        assert_eq!(retry_after(60_000, 1), 60_000);
    }
}
