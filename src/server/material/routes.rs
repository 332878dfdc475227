//! "Add material": the JSON API for scripts (`/api/lessons/{id}/sources`:
//! list, add files as multipart `file` fields, remove one) and the lesson
//! page's plain forms, which answer with redirects back to the page (a
//! refusal is kept on the server and its token travels in the address), so
//! they work before the page's code has loaded and cost the bundle nothing.

use axum::{
    extract::{Multipart, State},
    http::StatusCode,
    response::{IntoResponse, Redirect, Response},
    routing::{delete, get, post},
    Json, Router,
};

use super::sources::{self, Upload};
use crate::{
    models::{ImportReport, SourceSummary},
    server::{
        accounts::current_user::CurrentUser,
        lessons::import_reports,
        error::{AppError, Result},
        http::extractors::ApiPath,
        reactions::{self, intents},
        state::AppState,
    },
    url::percent_encode,
};

/// The largest request of files: a few at once, each at most 10 MB.
pub const MATERIAL_BODY: usize = 25 * 1024 * 1024;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/lessons/{id}/sources", get(list).post(add))
        .route("/api/lessons/{id}/sources/{source}", delete(remove))
        .route("/lessons/{id}/sources", post(form_add))
        .route("/lessons/{id}/sources/{source}/remove", post(form_remove))
}

/// Whether `path` is one of the routes that take files.
pub fn takes_files(path: &str) -> bool {
    let rest = path.strip_prefix("/api/lessons/").or_else(|| path.strip_prefix("/lessons/"));
    rest.is_some_and(|r| r.split('/').count() == 2 && r.ends_with("/sources"))
}

/// The files of a multipart body (its `file` fields); an empty file field
/// (a form sent with nothing chosen) is left out.
async fn files(mut form: Multipart) -> Result<Vec<Upload>> {
    let mut out = Vec::new();
    loop {
        match form.next_field().await {
            Ok(Some(field)) if field.name() == Some("file") => {
                let name = field.file_name().unwrap_or("material.txt").to_string();
                let bytes = field.bytes().await.map_err(|_| AppError::BadRequest("A file could not be read. Try adding it again.".into()))?;
                if !(bytes.is_empty() && name.is_empty()) {
                    out.push(Upload { name, bytes: bytes.to_vec() });
                }
            }
            Ok(Some(_)) => {}
            Ok(None) => return Ok(out),
            Err(_) => return Err(AppError::BadRequest("The files could not be read. Try adding them again.".into())),
        }
    }
}

async fn list(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath(id): ApiPath<String>) -> Result<Json<Vec<SourceSummary>>> {
    sources::list(&state.db, &user.id, &id).await.map(Json)
}

async fn add(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath(id): ApiPath<String>, form: Multipart) -> Result<Response> {
    let added = sources::add(&state.db, &state.extractor, &user.id, &id, files(form).await?).await?;
    react_to(&state, &user.id, &id, &added).await;
    Ok((StatusCode::CREATED, Json(added)).into_response())
}

async fn remove(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath((id, source)): ApiPath<(String, String)>) -> Result<StatusCode> {
    sources::remove(&state.db, &user.id, &id, &source).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// New material is an event the assistant reacts to (unless the teacher
/// switched that off). The sources are stored either way: a failure here is
/// only logged.
async fn react_to(state: &AppState, owner_id: &str, lesson_id: &str, added: &[SourceSummary]) {
    let happened: Vec<_> = added.iter().map(|s| intents::source_added(&s.id, &s.name, s.chars)).collect();
    if let Err(e) = reactions::react(state, owner_id, lesson_id, None, &happened).await {
        tracing::warn!(error = %e, "could not queue the new material for the assistant");
    }
}

/// Back to the lesson's material, with what became of the form. A refusal
/// is kept on the server for a few minutes (`import_reports`) and the
/// address carries only its token: nobody can make the page say what they
/// like. The lesson's id goes into the address percent-encoded, so no
/// character of it can break the redirect.
async fn back(state: &AppState, owner: Option<&str>, id: &str, done: Result<()>) -> Response {
    let lesson = percent_encode(id);
    let sentence = match done {
        Ok(()) => return Redirect::to(&format!("/lessons/{lesson}#material")).into_response(),
        Err(AppError::Unauthorized) => return Redirect::to("/signin").into_response(),
        Err(AppError::NotFound) => return Redirect::to("/lessons/not-found").into_response(),
        Err(e @ (AppError::BadRequest(_) | AppError::PayloadTooLarge(_) | AppError::Unavailable(_))) => e.to_string(),
        Err(e) => {
            tracing::error!(error = %e, "a material form failed");
            AppError::Internal(String::new()).to_string()
        }
    };
    let kept = match owner {
        Some(owner) => import_reports::keep(&state.db, owner, &ImportReport { file: String::new(), problems: vec![sentence], made: None }).await.ok(),
        None => None,
    };
    let token = kept.unwrap_or_else(|| "server".into());
    Redirect::to(&format!("/lessons/{lesson}?material_error={token}#material")).into_response()
}

async fn form_add(State(state): State<AppState>, user: Result<Option<CurrentUser>>, ApiPath(id): ApiPath<String>, form: Multipart) -> Response {
    let user = match user {
        Ok(user) => user.map(|CurrentUser(u)| u),
        Err(refused) => return refused.into_response(),
    };
    let done = async {
        let user = user.as_ref().ok_or(AppError::Unauthorized)?;
        let added = sources::add(&state.db, &state.extractor, &user.id, &id, files(form).await?).await?;
        react_to(&state, &user.id, &id, &added).await;
        Ok(())
    };
    let done = done.await;
    back(&state, user.as_ref().map(|u| u.id.as_str()), &id, done).await
}

async fn form_remove(State(state): State<AppState>, user: Result<Option<CurrentUser>>, ApiPath((id, source)): ApiPath<(String, String)>) -> Response {
    let user = match user {
        Ok(user) => user.map(|CurrentUser(u)| u),
        Err(refused) => return refused.into_response(),
    };
    let done = async {
        let user = user.as_ref().ok_or(AppError::Unauthorized)?;
        sources::remove(&state.db, &user.id, &id, &source).await
    };
    let done = done.await;
    back(&state, user.as_ref().map(|u| u.id.as_str()), &id, done).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_sources_routes_take_files() {
        assert!(takes_files("/api/lessons/abc/sources"));
        assert!(takes_files("/lessons/abc/sources"));
        assert!(!takes_files("/api/lessons/abc/sources/x"));
        assert!(!takes_files("/api/lessons/abc/document"));
        assert!(!takes_files("/lessons/a/b/sources"));
    }
}
