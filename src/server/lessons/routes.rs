//! The lesson API the workspace calls from the browser (and any API client):
//! save the document, list and open its versions, restore one, undo one of
//! them, say what changed between two, and turn review of the agent's edits
//! on or off. JSON in and
//! out; errors are JSON `{ "error": … }` with their status, as in the chat
//! API. Every call checks that the lesson belongs to the signed-in teacher.
//! Documents come with their HTML (`LessonHtml`): the browser does not parse
//! XML.
//!
//! Plain JSON routes rather than server functions: the browser already talks
//! to the chat API this way, and a server function brings its own client
//! machinery into the WASM bundle.

use axum::{
    extract::State,
    routing::{get, post, put},
    Json, Router,
};
use serde::Deserialize;

use crate::server::{
    accounts::current_user::CurrentUser,
    error::{AppError, Result},
    http::extractors::{ApiJson, ApiPath, ApiQuery},
    lessons::events,
    lessons,
    state::AppState,
};
use crate::{
    lesson,
    models::{Author, ChangesReply, RestoreRequest, ReviewSetting, RevisionReply, RevisionSummary, SaveReply, SaveRequest},
};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/lessons/{id}/document", put(save))
        .route("/api/lessons/{id}/revisions", get(list))
        .route("/api/lessons/{id}/revisions/{number}", get(open))
        .route("/api/lessons/{id}/revisions/{number}/restore", post(restore))
        .route("/api/lessons/{id}/revisions/{number}/undo", post(undo))
        .route("/api/lessons/{id}/changes", get(changes))
        .route("/api/lessons/{id}/review", put(set_review))
        .route("/api/lessons/{id}/versions", get(super::versions::api_page).post(super::versions::api_make))
        .route("/lessons/{id}/versions", post(super::versions::form_make))
        .route("/api/lessons/{id}/docx", get(super::word::docx))
        .route("/api/lessons/{id}/qti", get(super::lms::qti))
        .route("/api/lessons/{id}/cartridge", get(super::lms::cartridge))
}

/// Saves the teacher's XML (or the editor's document, merged) on top of `baseRevision`.
async fn save(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    ApiPath(id): ApiPath<String>,
    ApiJson(body): ApiJson<SaveRequest>,
) -> Result<Json<SaveReply>> {
    let outcome = if body.merge {
        lessons::save_merged(&state.db, &user.id, &id, &body.xml, body.base_revision, Author::Teacher, "Edited the lesson").await?
    } else {
        lessons::save_document(&state.db, &user.id, &id, &body.xml, body.base_revision, Author::Teacher, "Edited the XML").await?
    };
    events::saved(&state, &id, &outcome).await;
    Ok(Json(SaveReply::new(outcome)))
}

async fn list(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath(id): ApiPath<String>) -> Result<Json<Vec<RevisionSummary>>> {
    lessons::list_revisions(&state.db, &user.id, &id).await.map(Json)
}

async fn open(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    ApiPath((id, number)): ApiPath<(String, i64)>,
) -> Result<Json<RevisionReply>> {
    let revision = lessons::get_revision(&state.db, &user.id, &id, number).await?;
    let html = lesson::render_both(&revision.document_xml);
    Ok(Json(RevisionReply { revision, html }))
}

async fn restore(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    ApiPath((id, number)): ApiPath<(String, i64)>,
    ApiJson(body): ApiJson<RestoreRequest>,
) -> Result<Json<SaveReply>> {
    let outcome = lessons::restore_revision(&state.db, &user.id, &id, number, body.base_revision).await?;
    events::saved(&state, &id, &outcome).await;
    Ok(Json(SaveReply::new(outcome)))
}

/// Takes back what one version changed (see `lessons::undo_revision`).
async fn undo(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath((id, number)): ApiPath<(String, i64)>) -> Result<Json<SaveReply>> {
    let reply = lessons::undo_revision(&state.db, &user.id, &id, number).await?;
    events::saved(&state, &id, &reply.outcome).await;
    Ok(Json(reply))
}

/// `?from=N&to=M`; `to` is the current version when left out, `from` the
/// one before `to`.
#[derive(Deserialize)]
struct Between {
    from: Option<i64>,
    to: Option<i64>,
}

async fn changes(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    ApiPath(id): ApiPath<String>,
    ApiQuery(between): ApiQuery<Between>,
) -> Result<Json<ChangesReply>> {
    let to = match between.to {
        Some(to) => to,
        None => lessons::get_editable(&state.db, &user.id, &id).await?.revision,
    };
    let from = between.from.unwrap_or(to - 1);
    if from < 1 || to < 1 {
        return Err(AppError::BadRequest("Versions are numbered from 1.".into()));
    }
    let changes = lessons::changes_between(&state.db, &user.id, &id, from, to).await?;
    Ok(Json(ChangesReply { from, to, changes }))
}

async fn set_review(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    ApiPath(id): ApiPath<String>,
    ApiJson(body): ApiJson<ReviewSetting>,
) -> Result<Json<ReviewSetting>> {
    let mode = body.mode();
    lessons::set_edit_mode(&state.db, &user.id, &id, mode).await?;
    Ok(Json(ReviewSetting::of(mode)))
}
