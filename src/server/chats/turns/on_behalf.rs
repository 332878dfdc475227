//! Turns the app starts for a teacher rather than ones they type: an
//! automatic turn when a lesson's gate opens (`reactions::fire`), or a
//! button's ("Improve with these results"). Each runs in one of the
//! lesson's chats (the one named, else the latest, else a new one) on the
//! same engine as a typed message: the teacher's limits and the school's
//! budget apply, and the chat shows `note` where a typed message would be,
//! while the model reads `content`.

use std::sync::Arc;

use super::{meter, start, NewTurn, TurnKind, TurnLog};
use crate::{
    chat::message::Attachments,
    models::LessonEvent,
    server::{
        accounts::budget,
        chats,
        error::{AppError, Result},
        lessons::events,
        state::AppState,
    },
};

/// A turn the app starts in `lesson_id` for its teacher `owner_id`.
pub struct OnBehalf<'a> {
    pub owner_id: &'a str,
    pub lesson_id: &'a str,
    /// The chat to run in, when one is already chosen.
    pub chat_id: Option<String>,
    /// What the teacher sees in place of a message.
    pub note: String,
    /// What the model reads.
    pub content: String,
    pub kind: TurnKind,
}

/// Starts the turn; its chat and its log.
pub async fn start_for(state: &AppState, turn: OnBehalf<'_>) -> Result<(String, Arc<TurnLog>)> {
    let OnBehalf { owner_id, lesson_id, chat_id, note, content, kind } = turn;
    // Without an assistant there is nothing to answer with: asked first, so
    // that no empty chat is made for a turn that cannot run.
    let agent = if kind == TurnKind::Feedback { state.ai.feedback_agent()? } else { state.ai.agent()? };
    let latest = match chat_id {
        Some(id) => Some(id),
        None => chats::list_sessions(&state.db, owner_id, lesson_id).await?.first().map(|s| s.id.clone()),
    };
    let chat_id = match latest {
        Some(id) => id,
        None => {
            let made = chats::create_session(&state.db, owner_id, lesson_id, "").await?;
            events::tell(&state.bus, &state.db, lesson_id, LessonEvent::Chats).await;
            made.id
        }
    };
    let first = i64::from(agent.first_call_reservation(content.len()));
    let (user, chat) = super::store::owner_and_chat(&state.db, owner_id, &chat_id, state.ai.config().history_messages).await?.ok_or(AppError::NotFound)?;
    let chat = chat.ok_or(AppError::NotFound)?;
    state.limits.turn(&user.id, &user.school_id).await?;
    let default = budget::default_allowance(state.config.monthly_tokens);
    let now = state.clock.now();
    if !budget::reserve(&state.budget_writer, &user.school_id, &user.id, first, default, &budget::month_of(now)).await? {
        return Err(meter::refusal(&state.db, &user.id, now).await);
    }
    let spending = meter::Spending::held(state.budget_writer.clone(), user.school_id.clone(), user.id.clone(), default, state.clock.clone(), first);
    let attachments = Some(Attachments { trigger: Some(note), selected_text: None });
    let turn = NewTurn { owner_id: user.id, chat, content, retry: false, spending, attachments, kind, safety: None };
    let lesson_id = turn.chat.session.lesson_id.clone();
    let log = start(&state.turn_writer, &state.turns, &state.bus, agent, turn).await?;
    // What the reply changes reaches the lesson's versions when it ends.
    super::tell_lesson_when_done(state, lesson_id, log.clone());
    Ok((chat_id, log))
}
