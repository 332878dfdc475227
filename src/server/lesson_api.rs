//! The lesson API the workspace calls from the browser (and any API client):
//! save the document, list and open its versions, restore one. JSON in and
//! out; errors are JSON `{ "error": … }` with their status, as in the chat
//! API. Every call checks that the lesson belongs to the signed-in teacher.
//! Documents come with their HTML (`LessonHtml`): the browser does not parse
//! XML.
//!
//! Plain JSON routes rather than server functions: the browser already talks
//! to the chat API this way, and a server function brings its own client
//! machinery into the WASM bundle.

use axum::{
    extract::{Path, State},
    routing::{get, post, put},
    Json, Router,
};

use super::{current_user::CurrentUser, error::Result, lessons, state::AppState};
use crate::{
    lesson,
    models::{Author, RestoreRequest, RevisionReply, RevisionSummary, SaveReply, SaveRequest},
};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/lessons/{id}/document", put(save))
        .route("/api/lessons/{id}/revisions", get(list))
        .route("/api/lessons/{id}/revisions/{number}", get(open))
        .route("/api/lessons/{id}/revisions/{number}/restore", post(restore))
}

/// Saves the teacher's XML on top of `baseRevision`.
async fn save(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Path(id): Path<String>,
    Json(body): Json<SaveRequest>,
) -> Result<Json<SaveReply>> {
    lessons::save_document(&state.db, &user.id, &id, &body.xml, body.base_revision, Author::Teacher, "Edited the XML")
        .await
        .map(|outcome| Json(SaveReply::new(outcome)))
}

async fn list(State(state): State<AppState>, CurrentUser(user): CurrentUser, Path(id): Path<String>) -> Result<Json<Vec<RevisionSummary>>> {
    lessons::list_revisions(&state.db, &user.id, &id).await.map(Json)
}

async fn open(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Path((id, number)): Path<(String, i64)>,
) -> Result<Json<RevisionReply>> {
    let revision = lessons::get_revision(&state.db, &user.id, &id, number).await?;
    let html = lesson::render_both(&revision.document_xml);
    Ok(Json(RevisionReply { revision, html }))
}

async fn restore(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Path((id, number)): Path<(String, i64)>,
    Json(body): Json<RestoreRequest>,
) -> Result<Json<SaveReply>> {
    lessons::restore_revision(&state.db, &user.id, &id, number, body.base_revision)
        .await
        .map(|outcome| Json(SaveReply::new(outcome)))
}
