//! Colleagues who edit a lesson with its owner. The owner invites a teacher
//! of the same school by email (on the lesson's Share page) and can remove
//! them again. An editor opens the lesson, edits it, has their own chats
//! with the assistant about it, adds material, and reviews what their own
//! chats propose; every version says who made it. What stays the owner's:
//! sharing with the school, inviting, publishing to classes and results,
//! versions for other levels, renaming, the assistant's review setting,
//! and deleting. (An editor who wants the lesson for their own classes
//! copies it: Duplicate.)
//!
//! Editing rights are checked where every lesson is read for editing
//! (`lessons::get_editable`, `lessons::editable_by`); this module keeps
//! the list.

use axum::{
    extract::State,
    response::{IntoResponse, Redirect, Response},
    routing::{delete, post},
    Json, Router,
};
use serde::Deserialize;

use crate::{
    models::{CoEditedLesson, Editor},
    server::{
        accounts::current_user::{CurrentUser, TeacherPage},
        db::{self, Db},
        error::{AppError, Result},
        http::{
            extractors::{ApiForm, ApiJson, ApiPath},
        },
        lessons,
        state::AppState,
    },
};

/// The most colleagues one lesson is edited with.
pub const MAX_EDITORS: usize = 20;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/lessons/{id}/editors", post(api_invite).get(api_list))
        .route("/api/lessons/{id}/editors/{user_id}", delete(api_remove))
        .route("/lessons/{id}/editors", post(form_editors))
}

/// The colleagues `owner` edits lesson `id` with.
pub async fn list(db: &Db, owner: &str, id: &str) -> Result<Vec<Editor>> {
    lessons::get_own(db, owner, id).await?;
    Ok(sqlx::query_as::<_, (String, String)>(
        "SELECT u.id, u.email FROM lesson_editors e JOIN users u ON u.id = e.user_id WHERE e.lesson_id = $1 ORDER BY e.added_at, u.email",
    )
    .bind(id)
    .fetch_all(db)
    .await?
    .into_iter()
    .map(|(user_id, email)| Editor { user_id, email })
    .collect())
}

/// Invites the teacher with `email` to edit `owner`'s lesson `id`: they
/// must be a teacher of the owner's school. A sentence when not.
pub async fn invite(db: &Db, owner: &str, id: &str, email: &str) -> Result<Vec<Editor>> {
    let current = list(db, owner, id).await?;
    let email = email.trim();
    let not_colleague = || AppError::BadRequest(format!("“{email}” is not a teacher at your school. Invite a colleague by the email they sign in with."));
    let found: Option<(String, String)> = sqlx::query_as(
        "SELECT u.id, u.role FROM users u JOIN users o ON o.id = $2
         WHERE LOWER(u.email) = LOWER($1) AND u.school_id IS NOT NULL AND u.school_id = o.school_id",
    )
    .bind(email)
    .bind(owner)
    .fetch_optional(db)
    .await?;
    let (user_id, role) = found.ok_or_else(not_colleague)?;
    if role == "student" {
        return Err(not_colleague());
    }
    if user_id == owner {
        return Err(AppError::BadRequest("This is your own lesson: you edit it already.".into()));
    }
    if current.iter().any(|e| e.user_id == user_id) {
        return Ok(current);
    }
    if current.len() >= MAX_EDITORS {
        return Err(AppError::BadRequest(format!("A lesson is edited with at most {MAX_EDITORS} colleagues.")));
    }
    sqlx::query("INSERT INTO lesson_editors (lesson_id, user_id, added_at) VALUES ($1, $2, $3)").bind(id).bind(&user_id).bind(db::time::now()).execute(db).await?;
    list(db, owner, id).await
}

/// Stops `user_id` editing `owner`'s lesson `id` (their chats stay theirs,
/// but no longer reach the lesson).
pub async fn remove(db: &Db, owner: &str, id: &str, user_id: &str) -> Result<Vec<Editor>> {
    lessons::get_own(db, owner, id).await?;
    sqlx::query("DELETE FROM lesson_editors WHERE lesson_id = $1 AND user_id = $2").bind(id).bind(user_id).execute(db).await?;
    list(db, owner, id).await
}

/// The lessons colleagues invited `user` to edit, newest edit first.
pub async fn co_edited(db: &Db, user: &str) -> Result<Vec<CoEditedLesson>> {
    Ok(sqlx::query_as::<_, (String, String, String, String)>(
        "SELECT l.id, l.title, o.email, l.updated_at FROM lesson_editors e
           JOIN lessons l ON l.id = e.lesson_id AND l.deleted_at IS NULL
           JOIN users o ON o.id = l.owner_id
         WHERE e.user_id = $1 ORDER BY l.updated_at DESC, l.id LIMIT 200",
    )
    .bind(user)
    .fetch_all(db)
    .await?
    .into_iter()
    .map(|(id, title, owner, updated_at)| CoEditedLesson { id, title, owner, updated_at })
    .collect())
}

/// The owner's email when `user` edits lesson `id` as a colleague; `None`
/// when it is their own. Not found when they may not edit it.
pub async fn owner_of(db: &Db, user: &str, id: &str) -> Result<Option<String>> {
    lessons::get_editable(db, user, id).await?;
    let (owner_id, email): (String, String) =
        sqlx::query_as("SELECT l.owner_id, u.email FROM lessons l JOIN users u ON u.id = l.owner_id WHERE l.id = $1").bind(id).fetch_one(db).await?;
    Ok((owner_id != user).then_some(email))
}

#[derive(Deserialize)]
struct InviteRequest {
    email: String,
}

async fn api_list(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath(id): ApiPath<String>) -> Result<Json<Vec<Editor>>> {
    Ok(Json(list(&state.db, &user.id, &id).await?))
}

async fn api_invite(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath(id): ApiPath<String>, ApiJson(body): ApiJson<InviteRequest>) -> Result<Json<Vec<Editor>>> {
    Ok(Json(invite(&state.db, &user.id, &id, &body.email).await?))
}

async fn api_remove(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath((id, user_id)): ApiPath<(String, String)>) -> Result<Json<Vec<Editor>>> {
    Ok(Json(remove(&state.db, &user.id, &id, &user_id).await?))
}

#[derive(Deserialize)]
struct EditorsForm {
    #[serde(default)]
    action: String,
    #[serde(default)]
    email: String,
    #[serde(default)]
    user: String,
}

/// The Share page's "Edit together" form: invite, or remove; back to the
/// page, which says why when an invitation was refused.
async fn form_editors(State(state): State<AppState>, TeacherPage(user): TeacherPage, ApiPath(id): ApiPath<String>, ApiForm(form): ApiForm<EditorsForm>) -> Result<Response> {
    let done = if form.action == "remove" { remove(&state.db, &user.id, &id, &form.user).await } else { invite(&state.db, &user.id, &id, &form.email).await };
    match done {
        Ok(_) => Ok(Redirect::to(&format!("/lessons/{id}/share")).into_response()),
        Err(AppError::BadRequest(_)) => Ok(Redirect::to(&format!("/lessons/{id}/share?editors_error=1")).into_response()),
        Err(e) => Err(e),
    }
}
