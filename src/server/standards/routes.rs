//! The doors to the school's frameworks: a school's admin loads a CASE
//! package (JSON, or the School page's form with a file), lists and removes
//! frameworks; every teacher of the school searches them by code or words.
//! Every door checks on the server who is asking: a teacher who is not the
//! admin gets 403, a student is refused as by every teacher door.

use axum::{
    body::Bytes,
    extract::{Multipart, State},
    http::StatusCode,
    response::{IntoResponse, Redirect, Response},
    routing::{delete, get, post},
    Json, Router,
};
use serde::{Deserialize, Serialize};

use super::{case, frameworks};
use crate::models::{Framework, StandardHit};
use crate::server::{
    accounts::{current_user::CurrentUser, schools},
    error::{AppError, Result},
    http::extractors::{ApiPath, ApiQuery},
    state::AppState,
};

/// The largest package a school's admin may upload.
pub const FRAMEWORK_BODY: usize = 16 * 1024 * 1024;
/// The most standards one search answers with.
pub const MAX_HITS: usize = 20;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/school/frameworks", get(api_list).post(api_upload))
        .route("/api/school/frameworks/{id}", delete(api_remove))
        .route("/api/standards", get(api_search))
        .route("/school/frameworks", post(form_upload))
        .route("/school/frameworks/{id}/remove", post(form_remove))
}

/// Whether `method path` is an upload of a framework (its body may be large).
pub fn takes_packages(path: &str) -> bool {
    path == "/api/school/frameworks" || path == "/school/frameworks"
}

/// A framework loaded, and how many of its coded items were left out.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Uploaded {
    framework: Framework,
    skipped: usize,
}

/// Reads and keeps a package for the admin's school.
async fn upload(state: &AppState, school: &str, bytes: Vec<u8>) -> Result<Uploaded> {
    let package = tokio::task::spawn_blocking(move || case::read(&bytes))
        .await
        .map_err(|e| AppError::Internal(e.to_string()))?
        .map_err(AppError::BadRequest)?;
    let framework = frameworks::load(&state.db, Some(school), &package).await?;
    Ok(Uploaded { framework, skipped: package.skipped })
}

async fn api_upload(State(state): State<AppState>, CurrentUser(user): CurrentUser, body: Bytes) -> Result<Response> {
    let school = schools::admin_school(&user)?.to_string();
    let done = upload(&state, &school, body.to_vec()).await?;
    Ok((StatusCode::CREATED, Json(done)).into_response())
}

/// The frameworks of the teacher's school (every teacher may see which).
async fn api_list(State(state): State<AppState>, CurrentUser(user): CurrentUser) -> Result<Json<Vec<Framework>>> {
    Ok(Json(frameworks::list(&state.db, &user.school_id).await?))
}

async fn api_remove(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath(id): ApiPath<String>) -> Result<StatusCode> {
    let school = schools::admin_school(&user)?;
    frameworks::remove(&state.db, school, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Deserialize)]
struct Search {
    #[serde(default)]
    q: String,
}

/// Standards of the teacher's school whose code starts with `q`, or whose
/// statement holds its words.
async fn api_search(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiQuery(query): ApiQuery<Search>) -> Result<Json<Vec<StandardHit>>> {
    Ok(Json(search(&state, &user.school_id, &query.q).await?))
}

/// The search behind the API and the lesson's Standards page: nothing for
/// an empty query or a school without frameworks.
pub async fn search(state: &AppState, school: &str, query: &str) -> Result<Vec<StandardHit>> {
    if query.trim().is_empty() {
        return Ok(Vec::new());
    }
    Ok(frameworks::search(&state.db, school, query, MAX_HITS).await?.unwrap_or_default())
}

/// Where a School form goes next.
fn answer(done: Result<String>) -> Response {
    match done {
        Ok(to) => Redirect::to(&to).into_response(),
        Err(AppError::Unauthorized) => Redirect::to("/signin?next=/school").into_response(),
        Err(AppError::Forbidden(_)) => Redirect::to("/school").into_response(),
        Err(AppError::BadRequest(_)) => Redirect::to("/school?error=framework#standards").into_response(),
        Err(AppError::NotFound) => Redirect::to("/school#standards").into_response(),
        Err(e) => {
            tracing::error!(error = %e, "a standards form failed");
            Redirect::to("/school?error=server").into_response()
        }
    }
}

/// "Add a framework": the file chosen, then back to the School page.
async fn form_upload(State(state): State<AppState>, user: Result<Option<CurrentUser>>, mut form: Multipart) -> Response {
    answer(async {
        let user = user?.ok_or(AppError::Unauthorized)?.0;
        let school = schools::admin_school(&user)?.to_string();
        let mut bytes = None;
        while let Ok(Some(field)) = form.next_field().await {
            if field.name() == Some("file") {
                bytes = field.bytes().await.ok();
            }
        }
        let bytes = bytes.filter(|b| !b.is_empty()).ok_or_else(|| AppError::BadRequest("no file".into()))?;
        upload(&state, &school, bytes.to_vec()).await?;
        Ok("/school?done=framework#standards".to_string())
    }
    .await)
}

async fn form_remove(State(state): State<AppState>, user: Result<Option<CurrentUser>>, ApiPath(id): ApiPath<String>) -> Response {
    answer(async {
        let user = user?.ok_or(AppError::Unauthorized)?.0;
        let school = schools::admin_school(&user)?;
        frameworks::remove(&state.db, school, &id).await?;
        Ok("/school?done=framework-removed#standards".to_string())
    }
    .await)
}
