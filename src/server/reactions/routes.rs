//! `POST /api/chat/events`: something happened that the assistant may react
//! to; `GET/PATCH /api/account/reactions` and the lesson page's form: the
//! teacher's "Let the assistant react on its own".

use axum::{
    extract::State,
    http::StatusCode,
    response::{IntoResponse, Redirect, Response},
    routing::{get, post},
    Form, Json, Router,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::intents::{self, Intent};
use crate::server::{
    chats,
    accounts::current_user::CurrentUser,
    error::{AppError, Result},
    http::extractors::ApiJson,
    lessons,
    state::AppState,
};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/chat/events", post(event))
        .route("/api/account/reactions", get(setting).patch(change))
        .route("/settings/reactions", post(form_change))
        .route("/settings/wrong-answers", post(form_wrong_answers))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct EventRequest {
    lesson_id: String,
    /// The chat to reply in; by default the lesson's latest.
    session_id: Option<String>,
    intent: String,
    #[serde(default)]
    context: Value,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct EventReply {
    /// Waiting for an automatic turn (false: the teacher switched them off).
    queued: bool,
    /// How long until the lesson's gate opens, in milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    due_in_ms: Option<i64>,
}

async fn event(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiJson(body): ApiJson<EventRequest>) -> Result<Response> {
    // Counted before anything is read: a script sending events in a loop
    // is slowed here, whatever it names.
    state.limits.event(&user.id).await?;
    lessons::get_editable(&state.db, &user.id, &body.lesson_id).await?;
    if let Some(chat) = &body.session_id {
        if chats::get_session(&state.db, &user.id, chat).await?.lesson_id != body.lesson_id {
            return Err(AppError::NotFound);
        }
    }
    let intent = Intent::parse(&body.intent)?;
    if !matches!(body.context, Value::Null | Value::Object(_)) {
        return Err(AppError::BadRequest("context must be a JSON object.".into()));
    }
    let happened = intents::from_request(&state.db, &body.lesson_id, intent, &body.context).await?;
    let due = super::react(&state, &user.id, &body.lesson_id, body.session_id.as_deref(), &happened).await?;
    let code = if due.is_some() { StatusCode::ACCEPTED } else { StatusCode::OK };
    Ok((code, Json(EventReply { queued: due.is_some(), due_in_ms: due })).into_response())
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Setting {
    react_to_events: bool,
    /// "Tell the assistant when students get answers wrong".
    tell_wrong_answers: bool,
}

/// A change: either switch, or both.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SettingChange {
    react_to_events: Option<bool>,
    tell_wrong_answers: Option<bool>,
}

async fn setting(State(state): State<AppState>, CurrentUser(user): CurrentUser) -> Result<Json<Setting>> {
    Ok(Json(Setting { react_to_events: super::enabled(&state.db, &user.id).await?, tell_wrong_answers: super::tells_wrong_answers(&state.db, &user.id).await? }))
}

async fn change(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiJson(body): ApiJson<SettingChange>) -> Result<Json<Setting>> {
    if let Some(on) = body.react_to_events {
        super::set_enabled(&state.db, &user.id, on).await?;
    }
    if let Some(on) = body.tell_wrong_answers {
        super::set_tell_wrong_answers(&state.db, &user.id, on).await?;
    }
    setting(State(state), CurrentUser(user)).await
}

/// The lesson page's checkbox: `react` is there when ticked; `lesson` is
/// where to go back to.
#[derive(Deserialize)]
struct SettingForm {
    react: Option<String>,
    lesson: Option<String>,
}

async fn form_change(State(state): State<AppState>, user: Result<Option<CurrentUser>>, Form(form): Form<SettingForm>) -> Response {
    let Ok(Some(CurrentUser(user))) = user else { return Redirect::to("/signin").into_response() };
    if let Err(e) = super::set_enabled(&state.db, &user.id, form.react.is_some()).await {
        return e.into_response();
    }
    back_to(form.lesson, "#material")
}

/// The Results page's checkbox: `tell` is there when ticked; `lesson` is
/// the Results page to go back to. A teacher's setting (a student's session
/// is sent to sign in as a teacher).
#[derive(Deserialize)]
struct WrongAnswersForm {
    tell: Option<String>,
    lesson: Option<String>,
}

async fn form_wrong_answers(State(state): State<AppState>, user: Result<Option<CurrentUser>>, Form(form): Form<WrongAnswersForm>) -> Response {
    let Ok(Some(CurrentUser(user))) = user else { return Redirect::to("/signin").into_response() };
    if let Err(e) = super::set_tell_wrong_answers(&state.db, &user.id, form.tell.is_some()).await {
        return e.into_response();
    }
    back_to(form.lesson, "/results")
}

/// After a settings form: to the lesson it came from (`then` after its
/// path: "#material", "/results"), when that is a lesson id; else the list.
fn back_to(lesson: Option<String>, then: &str) -> Response {
    match lesson.filter(|l| !l.is_empty() && l.chars().all(|c| c.is_ascii_alphanumeric())) {
        Some(id) => Redirect::to(&format!("/lessons/{id}{then}")).into_response(),
        None => Redirect::to("/lessons").into_response(),
    }
}
