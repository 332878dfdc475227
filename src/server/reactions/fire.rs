//! Starting the automatic turn when a lesson's gate opens. Whoever queues
//! an event waits (on the reaction clock) until the lesson is due, then
//! tries the gate; one caller wins it and starts one turn for everything
//! waiting, on the same turn engine as a typed message (the teacher's
//! limits and the school's budget apply).

use super::{
    gate::{self, Claim, Pending, DEBOUNCE_MS},
    intents,
};
use crate::{
    chat::message::Attachments,
    server::{
        budget, chats,
        error::{AppError, Result},
        lesson_events,
        state::AppState,
        turns::{self, meter, NewTurn},
    },
    models::LessonEvent,
};

/// Waits for `lesson_id` to be due at `due`, then opens its gate, in a task
/// of its own.
pub fn schedule(state: &AppState, lesson_id: String, due: i64) {
    let state = state.clone();
    tokio::spawn(async move {
        if let Err(e) = wake(&state, &lesson_id, due).await {
            tracing::warn!(error = %e, lesson = %lesson_id, "the assistant could not react to what happened to a lesson");
        }
    });
}

/// Waits again for every lesson with events due: on start, and every few
/// minutes (`startup::spawn_housekeeping`), since the instance that queued
/// them may have stopped. A second waker is harmless: only one opens the gate.
pub async fn resume(state: &AppState) -> Result<()> {
    for (lesson_id, due) in gate::waiting(&state.db).await? {
        schedule(state, lesson_id, due);
    }
    Ok(())
}

async fn wake(state: &AppState, lesson_id: &str, mut due: i64) -> Result<()> {
    let clock = &state.reactions;
    loop {
        clock.sleep_until(due).await;
        let now = clock.now_ms();
        match gate::claim(&state.turn_writer, lesson_id, now).await? {
            Claim::Won { batch, events } => match start(state, lesson_id, &events).await {
                Ok(()) => return gate::done(&state.turn_writer, &batch).await,
                // The teacher's own message got in first, or the limit on
                // turns is reached: the events wait for the next chance.
                Err(AppError::Conflict(_)) => {
                    due = now + DEBOUNCE_MS;
                    gate::put_back(&state.turn_writer, lesson_id, &batch, due).await?;
                }
                Err(AppError::TooManyTurns(secs) | AppError::SchoolBusy(secs)) => {
                    due = now + (secs as i64) * 1000;
                    gate::put_back(&state.turn_writer, lesson_id, &batch, due).await?;
                }
                Err(e) => {
                    // No assistant, no budget, the lesson gone: nothing to
                    // react with. Said in the log; the events are dropped.
                    tracing::info!(error = %e, lesson = %lesson_id, "an automatic turn did not start");
                    return gate::done(&state.turn_writer, &batch).await;
                }
            },
            Claim::Busy => due = now + DEBOUNCE_MS,
            Claim::Later | Claim::Gone => return Ok(()),
        }
    }
}

/// Starts one turn for `events`, in the chat the last of them named if it
/// is still there, else the lesson's latest chat, else a new one.
async fn start(state: &AppState, lesson_id: &str, events: &[Pending]) -> Result<()> {
    let owner = events[0].owner_id.clone();
    // Without an assistant there is nothing to react with: asked first, so
    // that no empty chat is made for a turn that cannot run.
    let agent = state.ai.agent()?;
    let chat_id = match latest_chat(state, &owner, lesson_id, events).await? {
        Some(id) => id,
        None => {
            let made = chats::create_session(&state.db, &owner, lesson_id, "").await?;
            lesson_events::tell(&state.bus, &state.db, lesson_id, LessonEvent::Chats).await;
            made.id
        }
    };
    let happened: Vec<intents::Happening> = events.iter().map(|e| e.happening.clone()).collect();
    let (note, content) = intents::turn_message(&happened);
    let first = i64::from(agent.first_call_reservation(content.len()));
    let (user, chat) = chats::owner_and_chat(&state.db, &owner, &chat_id, state.ai.config().history_messages).await?.ok_or(AppError::NotFound)?;
    let chat = chat.ok_or(AppError::NotFound)?;
    state.limits.turn(&user.id, &user.school_id).await?;
    let default = budget::default_allowance(state.config.monthly_tokens);
    let now = state.clock.now();
    if !budget::reserve(&state.turn_writer, &user.school_id, first, default, &budget::month_of(now)).await? {
        return Err(meter::exhausted(now));
    }
    let mut spending = meter::Spending::held(state.turn_writer.clone(), user.school_id.clone(), default, state.clock.clone(), first);
    spending.user_id = user.id.clone();
    let attachments = Some(Attachments { trigger: Some(note), selected_text: None });
    let turn = NewTurn { owner_id: user.id, chat, content, retry: false, spending, attachments, student: false };
    turns::start(&state.turn_writer, &state.turns, &state.bus, agent, turn).await?;
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
