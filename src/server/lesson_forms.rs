//! The browser's plain HTML form for creating a lesson. Like the sign-in
//! forms, it answers with redirects, so "New lesson" works as soon as the
//! page arrives and needs no code in the browser bundle: on success to the
//! new lesson, otherwise back to the list with a short error code and the
//! title that was typed (so nothing is lost). Opening `/lessons/new` in the
//! address bar leads to the list, where the form is.

use axum::{
    extract::State,
    response::{IntoResponse, Redirect, Response},
    routing::get,
    Router,
};
use serde::Deserialize;

use super::{
    extract::{ApiForm},current_user::CurrentUser, error::AppError, lessons, state::AppState};
use crate::refusals::TitleRefusal;

/// Where the form posts. Not a lesson page, though it looks like one.
pub const NEW_LESSON_PATH: &str = "/lessons/new";

pub fn router() -> Router<AppState> {
    Router::new().route(NEW_LESSON_PATH, get(|| async { Redirect::to("/") }).post(form_create))
}

#[derive(Deserialize)]
struct NewLesson {
    #[serde(default)]
    title: String,
}

/// What the lessons page is told went wrong.
fn refusal(e: &AppError) -> TitleRefusal {
    match e {
        AppError::Title(r) => *r,
        _ => TitleRefusal::Server,
    }
}

async fn form_create(
    State(state): State<AppState>,
    user: Result<Option<CurrentUser>, AppError>,
    ApiForm(form): ApiForm<NewLesson>,
) -> Response {
    let user = match user {
        Ok(Some(CurrentUser(user))) => user,
        Ok(None) => return Redirect::to("/signin").into_response(),
        Err(e) => return back(&e, &form.title),
    };
    match lessons::create(&state.db, &user.id, &form.title).await {
        Ok(lesson) => Redirect::to(&format!("/lessons/{}", lesson.id)).into_response(),
        Err(e) => back(&e, &form.title),
    }
}

fn back(e: &AppError, title: &str) -> Response {
    if let AppError::Internal(_) = e {
        tracing::error!(error = %e, "creating a lesson failed");
    }
    // Keep what was typed, within reason (it travels in the address).
    let kept: String = title.chars().take(400).collect();
    let qs = serde_urlencoded::to_string([("error", refusal(e).code()), ("title", kept.as_str())]).unwrap_or_default();
    Redirect::to(&format!("/?{qs}")).into_response()
}
