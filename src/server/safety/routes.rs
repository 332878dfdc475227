//! The doors of students' safety: the flags (listed and acknowledged by
//! the people who may see them; anyone else, students included, is told
//! they do not exist), a lesson's tutor policy (its owner's), and the
//! school's help sentence (its admin's). Each JSON door has a plain form
//! beside it for the server-drawn pages.

use axum::{
    extract::State,
    http::StatusCode,
    response::{IntoResponse, Redirect, Response},
    routing::{get, post, put},
    Json, Router,
};
use serde::{Deserialize, Serialize};

use crate::{
    models::{Flag, TutorPolicy},
    server::{
        accounts::{
            current_user::{CurrentUser, Member, TeacherPage},
            help, schools,
        },
        error::{AppError, Result},
        http::extractors::{ApiForm, ApiJson, ApiPath, ApiQuery},
        state::AppState,
    },
};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/flags", get(api_list))
        .route("/api/flags/{id}/acknowledge", post(api_acknowledge))
        .route("/flags/{id}/acknowledge", post(form_acknowledge))
        .route("/api/lessons/{id}/tutor", put(api_tutor))
        .route("/api/school/help", get(api_help).put(api_set_help))
        .route("/school/help", post(form_help))
}

#[derive(Deserialize)]
struct ListQuery {
    /// `1`: acknowledged ones too.
    #[serde(default)]
    all: Option<String>,
    /// Only this lesson's.
    #[serde(default)]
    lesson: Option<String>,
}

async fn api_list(State(state): State<AppState>, Member(user): Member, ApiQuery(q): ApiQuery<ListQuery>) -> Result<Json<Vec<Flag>>> {
    if user.is_student() {
        return Err(AppError::NotFound);
    }
    let all = q.all.as_deref() == Some("1");
    Ok(Json(super::flags::list(&state.db, &user, all, q.lesson.as_deref()).await?))
}

async fn api_acknowledge(State(state): State<AppState>, Member(user): Member, ApiPath(id): ApiPath<String>) -> Result<StatusCode> {
    super::flags::acknowledge(&state.db, &user, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}

async fn form_acknowledge(State(state): State<AppState>, TeacherPage(user): TeacherPage, ApiPath(id): ApiPath<String>) -> Result<Response> {
    super::flags::acknowledge(&state.db, &user, &id).await?;
    Ok(Redirect::to("/flags").into_response())
}

#[derive(Deserialize)]
struct PolicyBody {
    policy: TutorPolicy,
}

async fn api_tutor(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath(id): ApiPath<String>, ApiJson(body): ApiJson<PolicyBody>) -> Result<StatusCode> {
    super::policy::set(&state.db, &user.id, &id, body.policy).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Help {
    /// The school's own sentence ("" when it uses the server's).
    #[serde(default)]
    sentence: String,
    /// What students are shown: the school's, or the server's.
    #[serde(default, skip_deserializing)]
    shown: String,
}

async fn help_of(state: &AppState, school_id: &str) -> Result<Help> {
    let sentence = help::own_help_sentence(&state.db, school_id).await?.unwrap_or_default();
    let shown = help::help_sentence(&state.db, school_id).await?;
    Ok(Help { sentence, shown })
}

async fn api_help(State(state): State<AppState>, CurrentUser(user): CurrentUser) -> Result<Json<Help>> {
    let school = schools::admin_school(&user)?;
    Ok(Json(help_of(&state, school).await?))
}

async fn api_set_help(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiJson(body): ApiJson<Help>) -> Result<Json<Help>> {
    let school = schools::admin_school(&user)?;
    help::set_help_sentence(&state.db, school, &body.sentence).await?;
    Ok(Json(help_of(&state, school).await?))
}

async fn form_help(State(state): State<AppState>, TeacherPage(user): TeacherPage, ApiForm(form): ApiForm<Help>) -> Result<Response> {
    let school = schools::admin_school(&user)?;
    help::set_help_sentence(&state.db, school, &form.sentence).await?;
    Ok(Redirect::to("/school").into_response())
}
