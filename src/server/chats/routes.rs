//! The chat API: sessions, the streaming turn (`POST /api/chat/stream`),
//! resuming a turn's events and cancelling a turn. Thin handlers: they check
//! the request and its owner, and the turn engine (`turns`) does the rest.
//! Errors before a stream starts are plain HTTP with a JSON body; once it
//! starts, they are events.

use std::time::Duration;

use axum::{
    body::Bytes,
    extract::State,
    http::{HeaderMap, StatusCode},
    response::{IntoResponse, Response},
    routing::{get, post},
    Json, Router,
};
use serde::{Deserialize, Serialize};

use crate::server::{
    chats::ai::AiStatus,
    accounts::auth,
    accounts::budget,
    chats,
    accounts::current_user::{CurrentUser, Member},
    error::{AppError, Result},
    http::extractors::{ApiJson, ApiPath, ApiQuery},
    lessons::events,
    state::AppState,
    chats::turns::{self, meter, CancelStatus, NewTurn},
    chats::turn_json::Shape,
};
use crate::{
    chat::message::{Attachments, MessageRequest, SessionMessages, TitleRequest, MAX_SELECTION_CHARS},
    models::LessonEvent,
};

/// Longest message a teacher can send, in characters.
pub const MAX_MESSAGE_CHARS: usize = 20_000;
/// Largest request body for a turn, in bytes.
pub const MAX_TURN_BODY: usize = 512 * 1024;

/// The routes that answer with a reply's event stream (`router::build`
/// keeps them out of compression).
pub fn streams() -> Router<AppState> {
    Router::new().route("/api/chat/stream", post(stream)).route("/api/chat/turns/{turn_id}/events", get(resume))
}

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/chat/turns/{turn_id}/cancel", post(cancel))
        .route("/api/lessons/{lesson_id}/chats", get(list_sessions).post(create_session))
        .route("/api/chats/{id}", axum::routing::patch(rename_session).delete(delete_session))
        .route("/api/chats/{id}/messages", get(messages))
        .route("/api/chats/{id}/export", get(super::export::export))
        .route("/api/ai/status", get(ai_status))
        .route("/api/ai/usage", get(ai_usage))
}

/// `?protocol=004`: the turn in the design's words (`chats::design`).
#[derive(Deserialize)]
struct ProtocolQuery {
    protocol: Option<String>,
}

impl ProtocolQuery {
    /// Whether the design's words were asked for; a protocol this server
    /// does not speak is refused before anything runs.
    fn design(&self) -> Result<bool> {
        match self.protocol.as_deref() {
            None => Ok(false),
            Some(p) if p == chats::design::PROTOCOL => Ok(true),
            Some(other) => Err(AppError::BadRequest(format!(
                "This server does not speak protocol “{other}”. Leave `protocol` out for Margin's events, or ask for `{}`.",
                chats::design::PROTOCOL
            ))),
        }
    }
}

async fn stream(State(state): State<AppState>, ApiQuery(query): ApiQuery<ProtocolQuery>, headers: HeaderMap, body: Bytes) -> Result<Response> {
    // The checks answer in the same order as everywhere else (401 first), but
    // the teacher, the chat, its lesson and the conversation so far are one
    // query: this is on the way to the first word of the reply.
    let token = auth::token_from_headers(&headers).ok_or(AppError::Unauthorized)?;
    let design = query.design()?;
    let is_json = headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().to_ascii_lowercase().starts_with("application/json"));
    let parsed = if !is_json {
        Err(AppError::UnsupportedMediaType("Send the request as JSON (Content-Type: application/json).".into()))
    } else if body.len() > MAX_TURN_BODY {
        Err(AppError::PayloadTooLarge(format!("The request is too large. Keep it under {} KB.", MAX_TURN_BODY / 1024)))
    } else {
        serde_json::from_slice::<MessageRequest>(&body)
            .map_err(|e| AppError::BadRequest(format!("Send JSON with sessionId and content ({e}).")))
    };
    let body = match parsed {
        Ok(body) => body,
        Err(e) => {
            auth::user_for_token(&state.db, &token).await?.ok_or(AppError::Unauthorized)?;
            return Err(e);
        }
    };
    // A retry reads two more: the question and the reply it replaces.
    let limit = state.ai.config().history_messages + if body.retry { 2 } else { 0 };
    // The first model call is reserved beside the query for the teacher and
    // the chat, not after it: the reservation (its fixed prompt, the
    // question and AI_MAX_TOKENS) does not need the chat, only the session.
    let agent = state.ai.agent();
    let selected = body.attachments.as_ref().and_then(|a| a.selected_text.as_ref()).map_or(0, |s| s.text.len());
    let first = agent.as_ref().map_or(0, |a| a.first_call_reservation(body.content.len() + selected));
    let default = budget::default_allowance(state.config.monthly_tokens);
    let now = state.clock.now();
    let (hash, month) = (crate::server::ids::token_hash(&token), budget::month_of(now));
    let (found, reserved) = tokio::join!(
        chats::turns::store::user_and_chat(&state.db, &token, &body.session_id, limit),
        budget::reserve_for_session(&state.budget_writer, &hash, i64::from(first), default, &month),
    );
    // From here any refusal drops the reservation, which gives it back.
    let mut held = match &reserved {
        Ok(Some(school)) => Some(meter::Spending::held(state.budget_writer.clone(), school.clone(), String::new(), default, state.clock.clone(), i64::from(first))),
        _ => None,
    };
    let (user, chat) = found?.ok_or(AppError::Unauthorized)?;
    reserved?;
    let asked = if body.retry {
        None
    } else {
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
        Some(content.to_string())
    };
    let attachments = match (&asked, body.attachments) {
        (Some(_), Some(a)) => checked_attachments(a)?,
        _ => None,
    };
    let mut chat = chat.ok_or(AppError::NotFound)?;
    let content = match asked {
        Some(content) => content,
        None => {
            let question = chats::turns::store::retry_question(&chat.history)?;
            // The model sees the question once, as the turn's question.
            chat.history.truncate(chat.history.len() - 2);
            question
        }
    };
    // A student talks to the tutor; their role is the account's, never the
    // request's. (Their first call was reserved by the teacher's agent's
    // fixed prompt, found before the role: a little more than the tutor's,
    // and given back when the call settles.)
    let student = user.is_student();
    // The lesson's tutor policy, and the student's message checked for
    // what their teachers must see (a retry's question raised its flags
    // when it was first sent, and is not flagged twice).
    let safety = if student {
        let (lesson, chat_id) = (&chat.session.lesson_id, &chat.session.id);
        let s = crate::server::safety::before_student_turn(&state.db, &user, lesson, chat_id, &content, &chat.document_xml, !body.retry).await?;
        Some(Box::new(s))
    } else {
        None
    };
    let agent = if student { state.ai.tutor()? } else { agent? };
    // Counted on the account and its school, never on anything the client says.
    state.limits.turn(&user.id, &user.school_id).await?;
    let Some(mut spending) = held.take() else {
        let entry = crate::server::audit::NewEntry {
            school_id: &user.school_id,
            action: crate::models::AuditAction::Refusal,
            actor: if student { crate::models::AuditActor::Student } else { crate::models::AuditActor::Teacher },
            person_id: &user.id,
            lesson_id: Some(&chat.session.lesson_id),
            turn_id: None,
            model: "",
            tokens: 0,
            outcome: "budget",
            tools: Vec::new(),
        };
        crate::server::audit::record(&state.db, entry).await;
        return Err(meter::refusal(&state.db, &user.id, now).await);
    };
    spending.user_id = user.id.clone();
    let (user_id, wants_json) = (user.id.clone(), wants_json(&headers));
    let kind = if student { turns::TurnKind::Student } else { turns::TurnKind::Teacher };
    let lesson_id = chat.session.lesson_id.clone();
    let turn = NewTurn { owner_id: user.id, chat, content, retry: body.retry, spending, attachments, kind, safety };
    let log = turns::start(&state.turn_writer, &state.turns, &state.bus, agent, turn).await?;
    if !student {
        // What the reply changes reaches the lesson's versions when it ends.
        turns::tell_lesson_when_done(&state, lesson_id, log.clone());
    }
    let shape = if design { Shape::Design } else { Shape::Margin };
    if wants_json {
        return chats::turn_json::answer_live(&state, &user_id, &log, shape).await;
    }
    if design {
        let (turn_id, message_id) = (log.turn_id.clone(), log.message_id.clone());
        return Ok(chats::design::response(chats::design::log_batches(log), 0, turn_id, message_id, keepalive(&state)));
    }
    Ok(turns::live_response(log, 0, keepalive(&state)))
}

/// What a teacher's message may carry: a selection of the lesson, trimmed,
/// with the id of its block. Only the server starts automatic turns, so a
/// `trigger` from a client is refused.
fn checked_attachments(a: Attachments) -> Result<Option<Attachments>> {
    if a.trigger.is_some() {
        return Err(AppError::BadRequest("A message cannot say what triggered it: only the server starts automatic replies.".into()));
    }
    let Some(mut sel) = a.selected_text else { return Ok(None) };
    sel.text = sel.text.trim().to_string();
    let chars = sel.text.chars().count();
    if chars > MAX_SELECTION_CHARS {
        return Err(AppError::PayloadTooLarge(format!(
            "The selection is too long ({chars} characters). Select less than {MAX_SELECTION_CHARS} characters to ask about."
        )));
    }
    if sel.block_id.len() > 64 || !sel.block_id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        return Err(AppError::BadRequest("The selection's block id is not one a lesson uses.".into()));
    }
    Ok((!sel.text.is_empty()).then(|| Attachments { trigger: None, selected_text: Some(sel) }))
}

/// Whether a request asks for the finished reply as JSON rather than its
/// events as they come: `Accept: application/json` and no event stream.
fn wants_json(headers: &HeaderMap) -> bool {
    let accept = headers.get(axum::http::header::ACCEPT).and_then(|v| v.to_str().ok()).unwrap_or("").to_ascii_lowercase();
    accept.contains("application/json") && !accept.contains("text/event-stream")
}

fn keepalive(state: &AppState) -> Duration {
    Duration::from_secs(state.config.keepalive_secs)
}

#[derive(Deserialize)]
struct ResumeQuery {
    after: Option<u64>,
    protocol: Option<String>,
}

async fn resume(
    State(state): State<AppState>,
    Member(user): Member,
    ApiPath(turn_id): ApiPath<String>,
    ApiQuery(query): ApiQuery<ResumeQuery>,
    headers: HeaderMap,
) -> Result<Response> {
    let after = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .or(query.after)
        .unwrap_or(0);
    let design = ProtocolQuery { protocol: query.protocol }.design()?;
    let shape = if design { Shape::Design } else { Shape::Margin };
    if let Some(log) = state.turns.get(&turn_id) {
        if log.owner_id != user.id {
            return Err(AppError::NotFound);
        }
        // A script asking again after a decision: the turn at its next pause or end.
        if wants_json(&headers) {
            return chats::turn_json::answer_live(&state, &user.id, &log, shape).await;
        }
        if design {
            let (turn_id, message_id) = (log.turn_id.clone(), log.message_id.clone());
            return Ok(chats::design::response(chats::design::log_batches(log), after, turn_id, message_id, keepalive(&state)));
        }
        return Ok(turns::live_response(log, after, keepalive(&state)));
    }
    if wants_json(&headers) {
        return chats::turn_json::answer_stored(&state, &user.id, &turn_id, shape).await;
    }
    let message = chats::turn_message(&state.db, &user.id, &turn_id).await?;
    // Running on another instance, or run there lately: its stored events.
    if let Some(reads) = state.turns.stored_reads().filter(|_| state.bus.shared()) {
        if message.status.is_running() || turns::remote::has_stored(&state.db, &turn_id).await? {
            if design {
                // The design's words are read from the turn's first event.
                let batches = turns::remote_batches(state.db.clone(), state.bus.clone(), reads.clone(), user.id.clone(), turn_id.clone(), 0);
                return Ok(chats::design::response(batches, after, turn_id, message.id, keepalive(&state)));
            }
            return Ok(turns::remote_response(state.db.clone(), &state.bus, reads.clone(), &user.id, &turn_id, &message.id, after, keepalive(&state)));
        }
    }
    // Not in this process any more: replay what the database kept.
    let lesson_now = chats::turn_lesson(&state.db, &user.id, &turn_id).await?;
    if design {
        let events: Vec<(u64, crate::chat::events::ChatEvent)> = chats::design::for_replay(turns::replay(&message, lesson_now)).into_iter().enumerate().map(|(i, e)| (i as u64 + 1, e)).collect();
        return Ok(chats::design::response(futures::stream::iter(vec![events]), after, turn_id, message.id, keepalive(&state)));
    }
    Ok(turns::replay_response(&turn_id, &message, lesson_now, after))
}

/// The answer to a cancel request.
#[derive(Serialize)]
struct CancelReply {
    status: CancelStatus,
}

async fn cancel(State(state): State<AppState>, Member(user): Member, ApiPath(turn_id): ApiPath<String>) -> Result<Response> {
    let status = turns::cancel(&state.db, &state.turns, &user.id, &turn_id).await?;
    let code = match status {
        CancelStatus::Cancelling => StatusCode::ACCEPTED,
        CancelStatus::Finished => StatusCode::OK,
    };
    Ok((code, Json(CancelReply { status })).into_response())
}

async fn list_sessions(State(state): State<AppState>, Member(user): Member, ApiPath(lesson_id): ApiPath<String>) -> Result<Response> {
    Ok(Json(chats::list_sessions(&state.db, &user.id, &lesson_id).await?).into_response())
}

async fn create_session(
    State(state): State<AppState>,
    Member(user): Member,
    ApiPath(lesson_id): ApiPath<String>,
    body: Option<ApiJson<TitleRequest>>,
) -> Result<Response> {
    let title = body.map(|ApiJson(b)| b.title).unwrap_or_default();
    let session = chats::create_session(&state.db, &user.id, &lesson_id, &title).await?;
    tell_chats(&state, &user, &lesson_id).await;
    Ok((StatusCode::CREATED, Json(session)).into_response())
}

async fn rename_session(
    State(state): State<AppState>,
    Member(user): Member,
    ApiPath(id): ApiPath<String>,
    ApiJson(body): ApiJson<TitleRequest>,
) -> Result<Response> {
    let session = chats::rename_session(&state.db, &user.id, &id, &body.title).await?;
    tell_chats(&state, &user, &session.lesson_id).await;
    Ok(Json(session).into_response())
}

async fn delete_session(State(state): State<AppState>, Member(user): Member, ApiPath(id): ApiPath<String>) -> Result<Response> {
    let session = chats::get_session(&state.db, &user.id, &id).await?;
    if let Some(log) = state.turns.running_in(&id) {
        log.cancel.cancel();
    }
    chats::delete_session(&state.db, &user.id, &id).await?;
    tell_chats(&state, &user, &session.lesson_id).await;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// The teacher's open pages of the lesson hear that its chats changed; a
/// student's chats are not on them.
async fn tell_chats(state: &AppState, user: &crate::models::UserInfo, lesson_id: &str) {
    if !user.is_student() {
        events::tell(&state.bus, &state.db, lesson_id, LessonEvent::Chats).await;
    }
}

async fn messages(State(state): State<AppState>, Member(user): Member, ApiPath(id): ApiPath<String>) -> Result<Response> {
    let mut messages = match chats::list_messages(&state.db, &user.id, &id).await {
        // A student asking for someone else's chat (their teacher's, say) is
        // told plainly that it is not for them.
        Err(AppError::NotFound) if user.is_student() && chats::exists(&state.db, &id).await? => {
            return Err(AppError::Forbidden("This chat is not yours.".into()));
        }
        found => found?,
    };
    chats::with_fresh_digests(&state.db, &state.shown, &mut messages).await?;
    let mut running_turn_id = state.turns.running_in(&id).map(|l| l.turn_id.clone());
    if running_turn_id.is_none() && state.bus.shared() {
        // Running on another instance: the page follows it through this one.
        running_turn_id = messages.iter().rev().find(|m| m.status.is_running()).and_then(|m| m.turn_id.clone());
    }
    Ok(Json(SessionMessages { messages, running_turn_id }).into_response())
}

/// The assistant, and where the school's budget stands.
async fn ai_status(State(state): State<AppState>, Member(user): Member) -> Result<Json<AiStatus>> {
    let mut status = state.ai.status();
    let default = budget::default_allowance(state.config.monthly_tokens);
    let usage = budget::summary(&state.db, &user.school_id, default, state.clock.now()).await?;
    status.blocked = usage.blocked();
    let now = state.clock.now();
    if status.blocked.is_none() && budget::share_spent(&state.db, &user.id, &budget::month_of(now)).await? {
        status.blocked = Some(crate::chat::message::share_spent(&budget::reset_day(now)));
    }
    // The school's spending is for its teachers, not its students.
    if !user.is_student() {
        status.meter = usage.meter();
        status.usage = Some(usage);
    }
    status.role = user.role;
    Ok(Json(status))
}

#[derive(Deserialize)]
struct UsageQuery {
    /// An admin may ask for one teacher of the school.
    user: Option<String>,
}

/// The month's use by teacher and by day: the whole school's for its admin,
/// a teacher's own otherwise.
async fn ai_usage(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiQuery(q): ApiQuery<UsageQuery>) -> Result<Response> {
    let only = match q.user {
        Some(other) if !user.is_admin() && other != user.id => {
            return Err(AppError::Forbidden("Only your school's admin can see other teachers' usage.".into()));
        }
        asked if user.is_admin() => asked,
        _ => Some(user.id.clone()),
    };
    Ok(Json(budget::report(&state.db, &user.school_id, only.as_deref(), state.clock.now()).await?).into_response())
}

