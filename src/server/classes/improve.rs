//! "Improve with these results": the Results page's button, which starts a
//! turn of the teacher's assistant in the lesson's chat to read the class's
//! answers (`read_results`) and propose changes with the evidence attached.
//! Every change it proposes waits for the teacher (`TurnKind::Results`).
//! Refused when nobody has answered yet: there is nothing to improve from.

use axum::{
    extract::State,
    http::StatusCode,
    response::{IntoResponse, Redirect, Response},
    Json,
};
use serde::{Deserialize, Serialize};

use crate::server::{
    accounts::current_user::{CurrentUser, TeacherPage},
    chats::turns::{self, OnBehalf, TurnKind},
    error::{AppError, Result},
    http::{
        extractors::{ApiJson, ApiPath},
    },
    state::AppState,
};

/// What the teacher sees in the chat where a typed message would be.
pub const NOTE: &str = "Improve with these results";

const PROMPT: &str = include_str!("../../../prompts/chat/improve_with_results.md");

/// Starts the turn in `chat_id` (else the lesson's latest chat, else a new
/// one); its chat and turn.
pub async fn start(state: &AppState, owner: &str, lesson_id: &str, chat_id: Option<String>) -> Result<(String, String)> {
    let results = super::evidence::of_lesson(&state.db, owner, lesson_id).await?;
    if !results.is_some_and(|r| r.items.iter().any(|i| i.answered > 0)) {
        return Err(AppError::Conflict("No student has answered this lesson yet: there are no results to improve it with.".into()));
    }
    let turn = OnBehalf { owner_id: owner, lesson_id, chat_id, note: NOTE.into(), content: PROMPT.trim().into(), kind: TurnKind::Results };
    let (chat, log) = turns::start_for(state, turn).await?;
    Ok((chat, log.turn_id.clone()))
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ImproveBody {
    /// The chat to run in; the lesson's latest when left out.
    #[serde(default)]
    session_id: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Started {
    chat_id: String,
    /// Followed at `/api/chat/turns/{turnId}/events`.
    turn_id: String,
}

/// A button's turn started, as the API answers it: 202 with the chat and
/// the turn (also "Draft feedback", `feedback_routes`).
pub fn started((chat_id, turn_id): (String, String)) -> Response {
    (StatusCode::ACCEPTED, Json(Started { chat_id, turn_id })).into_response()
}

/// A button's turn, as the Results page's form answers it: to the lesson,
/// where the turn shows in its chat; back to the Results page with why
/// (`?{param}=`) when it could not start.
pub fn after_form(outcome: Result<(String, String)>, lesson_id: &str, param: &str) -> Result<Response> {
    match outcome {
        Ok(_) => Ok(Redirect::to(&format!("/lessons/{lesson_id}")).into_response()),
        Err(AppError::NotFound) => Err(AppError::NotFound),
        Err(e) => {
            tracing::info!(error = %e, lesson = %lesson_id, button = %param, "a Results page button's turn could not start");
            Ok(Redirect::to(&format!("/lessons/{lesson_id}/results?{param}={}", refusal_code(&e))).into_response())
        }
    }
}

/// `POST /api/lessons/{id}/improve`: 202 with the chat and the turn.
pub async fn api_improve(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath(id): ApiPath<String>, body: Option<ApiJson<ImproveBody>>) -> Result<Response> {
    let body = body.map(|ApiJson(b)| b).unwrap_or_default();
    let chat = match body.session_id {
        Some(chat) => {
            // The chat must be one of the teacher's on this lesson.
            let sessions = crate::server::chats::list_sessions(&state.db, &user.id, &id).await?;
            if !sessions.iter().any(|s| s.id == chat) {
                return Err(AppError::NotFound);
            }
            Some(chat)
        }
        None => None,
    };
    Ok(started(start(&state, &user.id, &id, chat).await?))
}

/// The Results page's button.
pub async fn form_improve(State(state): State<AppState>, TeacherPage(user): TeacherPage, ApiPath(id): ApiPath<String>) -> Result<Response> {
    after_form(start(&state, &user.id, &id, None).await, &id, "improve")
}

/// Why a button's turn could not start, as the Results page's `?improve=`
/// or `?feedback=` says it.
fn refusal_code(e: &AppError) -> &'static str {
    match e {
        AppError::Conflict(_) => "empty",
        AppError::Busy(_) | AppError::TooManyTurns(_) | AppError::TooManyRequests(_) | AppError::SchoolBusy(_) => "busy",
        AppError::BudgetExhausted { .. } => "budget",
        _ => "unavailable",
    }
}
