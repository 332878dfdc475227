//! The chat API: sessions, the streaming turn (`POST /api/chat/stream`),
//! resuming a turn's events and cancelling a turn. Errors before a stream
//! starts are plain HTTP with a JSON body; once it starts, they are events.

use std::{convert::Infallible, sync::Arc, time::Duration};

use axum::{
    body::Bytes,
    extract::{DefaultBodyLimit, Path, Query, State},
    http::{HeaderMap, HeaderValue, StatusCode},
    response::{
        sse::{Event, KeepAlive, Sse},
        IntoResponse, Response,
    },
    routing::{get, post},
    Json, Router,
};
use futures::{Stream, StreamExt};
use serde::Deserialize;
use serde_json::json;

use super::{
    ai::AiStatus,
    auth, chats,
    current_user::CurrentUser,
    error::{AppError, Result},
    ids,
    state::AppState,
    turns::{self, TurnJob, TurnLog},
};
use crate::chat::{
    events::{ChatEvent, DoneData, TextData, ToolEndData, ToolStartData, ToolStatus},
    message::{ChatMessage, MessageStatus, TitleRequest, TurnRequest},
};

/// Longest message a teacher can send, in characters.
pub const MAX_MESSAGE_CHARS: usize = 20_000;
/// Largest request body for a turn, in bytes.
pub const MAX_TURN_BODY: usize = 512 * 1024;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/chat/stream", post(stream).layer(DefaultBodyLimit::max(MAX_TURN_BODY * 4)))
        .route("/api/chat/turns/{turn_id}/events", get(resume))
        .route("/api/chat/turns/{turn_id}/cancel", post(cancel))
        .route("/api/lessons/{lesson_id}/chats", get(list_sessions).post(create_session))
        .route("/api/chats/{id}", axum::routing::patch(rename_session).delete(delete_session))
        .route("/api/chats/{id}/messages", get(messages))
        .route("/api/ai/status", get(ai_status))
}

async fn stream(State(state): State<AppState>, headers: HeaderMap, body: Bytes) -> Result<Response> {
    // The checks answer in the same order as everywhere else (401 first), but
    // the teacher, the chat, its lesson and the conversation so far are one
    // query: this is on the way to the first word of the reply.
    let token = auth::token_from_headers(&headers).ok_or(AppError::Unauthorized)?;
    let parsed = if body.len() > MAX_TURN_BODY {
        Err(AppError::PayloadTooLarge(format!("The request is too large. Keep it under {} KB.", MAX_TURN_BODY / 1024)))
    } else {
        serde_json::from_slice::<TurnRequest>(&body)
            .map_err(|e| AppError::BadRequest(format!("Send JSON with sessionId and content ({e}).")))
    };
    let body = match parsed {
        Ok(body) => body,
        Err(e) => {
            auth::user_for_token(&state.db, &token).await?.ok_or(AppError::Unauthorized)?;
            return Err(e);
        }
    };
    let limit = state.ai.config.history_messages;
    let (user, chat) = chats::user_and_chat(&state.db, &token, &body.session_id, limit).await?.ok_or(AppError::Unauthorized)?;
    let content = body.content.trim();
    if content.is_empty() {
        return Err(AppError::BadRequest("Write a message first.".into()));
    }
    let chars = content.chars().count();
    if chars > MAX_MESSAGE_CHARS {
        return Err(AppError::PayloadTooLarge(format!(
            "The message is too long ({chars} characters). Keep it under {MAX_MESSAGE_CHARS}."
        )));
    }
    let chats::ChatStart { session, document_xml, revision, history } = chat.ok_or(AppError::NotFound)?;
    let Some(agent) = state.ai.agent.clone() else {
        return Err(AppError::Unavailable(
            state.ai.unavailable.clone().unwrap_or_else(|| "The assistant is not configured.".into()),
        ));
    };
    let log = state.turns.begin(&ids::new_id(), &user.id, &session.id, &ids::new_id())?;
    // The turn starts at once (calling the model) while its two messages are
    // stored; it writes nothing, and no event is sent, until they are.
    let user_message_id = ids::new_id();
    let (stored_tx, stored) = turns::stored_gate();
    tokio::spawn(turns::run(TurnJob {
        db: state.db.clone(),
        agent: agent.clone(),
        hub: state.turns.clone(),
        log: log.clone(),
        lesson_id: session.lesson_id.clone(),
        document: (document_xml, revision),
        history,
        user_text: content.to_string(),
        stored,
    }));
    // Stored in a task of its own: a client that leaves now cannot leave the
    // turn half-begun (running, but with its messages unsaved or its chat
    // marked busy for good).
    let storing = {
        let (db, hub, log, session_id, content, model) =
            (state.db.clone(), state.turns.clone(), log.clone(), session.id.clone(), content.to_string(), agent.model().to_string());
        tokio::spawn(async move {
            let ids = chats::TurnIds { turn: &log.turn_id, user_message: &user_message_id, assistant_message: &log.message_id };
            let stored = chats::start_turn(&db, &session_id, &content, &ids, &model).await;
            if stored.is_err() {
                log.cancel.cancel();
                hub.abandon(&log);
            }
            stored_tx.set(stored.is_ok());
            stored
        })
    };
    match storing.await {
        Ok(Ok(())) => Ok(sse(log, 0, keepalive(&state))),
        Ok(Err(e)) => Err(e),
        Err(e) => Err(AppError::Internal(format!("storing the turn's messages failed: {e}"))),
    }
}

fn keepalive(state: &AppState) -> Duration {
    Duration::from_secs(state.config.keepalive_secs)
}

#[derive(Deserialize)]
struct ResumeQuery {
    after: Option<u64>,
}

async fn resume(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Path(turn_id): Path<String>,
    Query(query): Query<ResumeQuery>,
    headers: HeaderMap,
) -> Result<Response> {
    let after = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .or(query.after)
        .unwrap_or(0);
    if let Some(log) = state.turns.get(&turn_id) {
        if log.owner_id != user.id {
            return Err(AppError::NotFound);
        }
        return Ok(sse(log, after, keepalive(&state)));
    }
    // Not in this process any more: replay what the database kept.
    let message = chats::turn_message(&state.db, &user.id, &turn_id).await?;
    let lesson_now = chats::turn_lesson(&state.db, &user.id, &turn_id).await?;
    let events: Vec<Result<Event, Infallible>> = replay(&message, lesson_now)
        .into_iter()
        .enumerate()
        .map(|(i, e)| (i as u64 + 1, e))
        .filter(|(seq, _)| *seq > after)
        .map(|(seq, e)| Ok(sse_event(seq, &e)))
        .collect();
    Ok(with_turn_headers(Sse::new(futures::stream::iter(events)).into_response(), &turn_id, &message.id))
}

async fn cancel(State(state): State<AppState>, CurrentUser(user): CurrentUser, Path(turn_id): Path<String>) -> Result<Response> {
    if let Some(log) = state.turns.get(&turn_id) {
        if log.owner_id != user.id {
            return Err(AppError::NotFound);
        }
        if log.is_finished() {
            return Ok(Json(json!({ "status": "finished" })).into_response());
        }
        log.cancel.cancel();
        return Ok((StatusCode::ACCEPTED, Json(json!({ "status": "cancelling" }))).into_response());
    }
    chats::turn_message(&state.db, &user.id, &turn_id).await?;
    Ok(Json(json!({ "status": "finished" })).into_response())
}

/// The events a finished turn stands for, rebuilt from its stored message.
///
/// The turn's last edit carries the document only while it is still the
/// lesson's current one (`lesson_now`, with its revision): a page following
/// the replay must never be shown an older document than the lesson has now,
/// nor save on top of one.
fn replay(m: &ChatMessage, lesson_now: Option<(String, i64)>) -> Vec<ChatEvent> {
    let mut out = Vec::new();
    let current = match (&m.document_xml, lesson_now) {
        (Some(edited), Some((xml, revision))) if *edited == xml => Some((xml, revision)),
        _ => None,
    };
    let last_edit = m.tool_calls.iter().rposition(|c| c.tool == "edit_document" && c.status == ToolStatus::Success);
    for (i, c) in m.tool_calls.iter().enumerate() {
        out.push(ChatEvent::ToolStart(Box::new(ToolStartData {
            id: c.id.clone(),
            tool: c.tool.clone(),
            args: c.args.clone(),
            display_text: c.display_text.clone(),
        })));
        let document = current.as_ref().filter(|_| Some(i) == last_edit);
        out.push(ChatEvent::ToolEnd(Box::new(ToolEndData {
            id: c.id.clone(),
            status: c.status,
            error: c.error.clone(),
            summary: c.summary.clone(),
            document_xml: document.map(|(xml, _)| xml.clone()),
            document_html: document.map(|(xml, _)| crate::lesson::render_both(xml)),
            revision: document.map(|(_, revision)| *revision),
        })));
    }
    if !m.content.is_empty() {
        out.push(ChatEvent::Text(TextData { content: m.content.clone() }));
    }
    out.push(match (m.status, &m.error) {
        (MessageStatus::Cancelled, _) => ChatEvent::Cancelled(DoneData { message_id: m.id.clone() }),
        (MessageStatus::Complete, _) => ChatEvent::Done(DoneData { message_id: m.id.clone() }),
        (_, Some(e)) => ChatEvent::Error(Box::new(e.clone())),
        (_, None) => ChatEvent::error("interrupted", "This reply did not finish."),
    });
    out
}

fn sse_event(seq: u64, e: &ChatEvent) -> Event {
    Event::default().event(e.name()).id(seq.to_string()).data(e.data_json())
}

fn with_turn_headers(mut res: Response, turn_id: &str, message_id: &str) -> Response {
    let h = res.headers_mut();
    for (name, value) in [("x-turn-id", turn_id), ("x-message-id", message_id)] {
        if let Ok(v) = HeaderValue::from_str(value) {
            h.insert(name, v);
        }
    }
    h.insert("cache-control", HeaderValue::from_static("no-cache"));
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    res
}

/// The turn's events after `after` as SSE, following the live turn to its end.
fn sse(log: Arc<TurnLog>, after: u64, keepalive: Duration) -> Response {
    let (turn_id, message_id) = (log.turn_id.clone(), log.message_id.clone());
    let body = Sse::new(follow(log, after)).keep_alive(KeepAlive::new().interval(keepalive).text("keepalive"));
    with_turn_headers(body.into_response(), &turn_id, &message_id)
}

/// Reads the log from `after` on. When the reader falls behind, the text
/// pieces waiting for it are sent as one event (numbered as the last of them),
/// never out of order with the other events.
pub fn follow(log: Arc<TurnLog>, after: u64) -> impl Stream<Item = Result<Event, Infallible>> {
    let rx = log.subscribe();
    futures::stream::unfold((log, after, rx, false), |(log, cursor, mut rx, done)| async move {
        if done {
            return None;
        }
        loop {
            let (batch, finished) = log.since(cursor);
            if let Some((last, event)) = batch.last() {
                let (last, terminal) = (*last, event.is_terminal());
                let events: Vec<Result<Event, Infallible>> = merge_text(batch).into_iter().map(Ok).collect();
                return Some((futures::stream::iter(events), (log, last, rx, terminal)));
            }
            if finished || rx.changed().await.is_err() {
                return None;
            }
        }
    })
    .flatten()
}

fn merge_text(batch: Vec<(u64, ChatEvent)>) -> Vec<Event> {
    let mut out = Vec::new();
    let mut text: Option<(u64, String)> = None;
    for (seq, e) in batch {
        match e {
            ChatEvent::Text(t) => match &mut text {
                Some((last, s)) => {
                    *last = seq;
                    s.push_str(&t.content);
                }
                None => text = Some((seq, t.content)),
            },
            other => {
                if let Some((last, s)) = text.take() {
                    out.push(sse_event(last, &ChatEvent::text(s)));
                }
                out.push(sse_event(seq, &other));
            }
        }
    }
    if let Some((last, s)) = text {
        out.push(sse_event(last, &ChatEvent::text(s)));
    }
    out
}

async fn list_sessions(State(state): State<AppState>, CurrentUser(user): CurrentUser, Path(lesson_id): Path<String>) -> Result<Response> {
    Ok(Json(chats::list_sessions(&state.db, &user.id, &lesson_id).await?).into_response())
}

async fn create_session(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Path(lesson_id): Path<String>,
    body: Option<Json<TitleRequest>>,
) -> Result<Response> {
    let title = body.map(|Json(b)| b.title).unwrap_or_default();
    let session = chats::create_session(&state.db, &user.id, &lesson_id, &title).await?;
    Ok((StatusCode::CREATED, Json(session)).into_response())
}

async fn rename_session(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Path(id): Path<String>,
    Json(body): Json<TitleRequest>,
) -> Result<Response> {
    Ok(Json(chats::rename_session(&state.db, &user.id, &id, &body.title).await?).into_response())
}

async fn delete_session(State(state): State<AppState>, CurrentUser(user): CurrentUser, Path(id): Path<String>) -> Result<Response> {
    chats::get_session(&state.db, &user.id, &id).await?;
    if let Some(log) = state.turns.running_in(&id) {
        log.cancel.cancel();
    }
    chats::delete_session(&state.db, &user.id, &id).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

async fn messages(State(state): State<AppState>, CurrentUser(user): CurrentUser, Path(id): Path<String>) -> Result<Response> {
    let messages = chats::list_messages(&state.db, &user.id, &id).await?;
    let running = state.turns.running_in(&id).map(|l| l.turn_id.clone());
    Ok(Json(json!({ "messages": messages, "runningTurnId": running })).into_response())
}

async fn ai_status(State(state): State<AppState>, CurrentUser(_): CurrentUser) -> Json<AiStatus> {
    Json(state.ai.status())
}
