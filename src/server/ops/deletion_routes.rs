//! The school admin's doors to deleting an account (`ops::deletion`), in
//! two steps: the preview says what goes; the deletion names the account's
//! email again, as typed by the admin, and (for a teacher) what becomes of
//! their lessons. Another school's account is not found; a teacher or a
//! student is refused.
//!
//! - `GET /api/school/members/{id}/deletion`: the preview, as JSON.
//! - `POST /api/school/members/{id}/delete` `{confirm, lessons}`: deletes.
//! - `POST /school/members/{id}/delete`: the same, as the page's form.

use axum::{
    extract::State,
    response::{IntoResponse, Redirect, Response},
    routing::{get, post},
    Json, Router,
};
use serde::Deserialize;

use super::deletion::{self, TheirLessons};
use crate::{
    models::{DeletionPreview, UserInfo},
    server::{
        accounts::{current_user::CurrentUser, schools},
        db::Db,
        error::{AppError, Result},
        http::extractors::{ApiForm, ApiJson, ApiPath},
        state::AppState,
    },
};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/school/members/{id}/deletion", get(api_preview))
        .route("/api/school/members/{id}/delete", post(api_delete))
        .route("/school/members/{id}/delete", post(form_delete))
}

/// `id`, a member of `admin`'s school; anyone else's is not found.
async fn member(db: &Db, admin: &UserInfo, id: &str) -> Result<UserInfo> {
    let school = schools::admin_school(admin)?;
    super::export::person(db, id).await?.filter(|p| p.school_id == school).ok_or(AppError::NotFound)
}

/// The first step, for the page and the API.
pub async fn preview(db: &Db, admin: &UserInfo, id: &str) -> Result<DeletionPreview> {
    let person = member(db, admin, id).await?;
    let what = deletion::preview(db, &person).await?;
    Ok(DeletionPreview {
        id: person.id,
        email: person.email,
        student: what.student,
        to_admin: what.sentence(TheirLessons::ToAdmin, &format!("you ({})", admin.email)),
        delete_all: what.sentence(TheirLessons::Delete, ""),
    })
}

async fn api_preview(State(state): State<AppState>, CurrentUser(admin): CurrentUser, ApiPath(id): ApiPath<String>) -> Result<Json<DeletionPreview>> {
    Ok(Json(preview(&state.db, &admin, &id).await?))
}

#[derive(Deserialize)]
struct DeleteBody {
    /// The account's email, typed again.
    #[serde(default)]
    confirm: String,
    /// A teacher's lessons: "admin" (the default) or "delete".
    #[serde(default)]
    lessons: String,
}

async fn delete(state: &AppState, admin: &UserInfo, id: &str, body: &DeleteBody) -> Result<deletion::WhatGoes> {
    let person = member(&state.db, admin, id).await?;
    if !body.confirm.trim().eq_ignore_ascii_case(&person.email) {
        return Err(AppError::BadRequest(format!("Type {} to delete that account.", person.email)));
    }
    let theirs = match body.lessons.trim() {
        "" => TheirLessons::ToAdmin,
        word => TheirLessons::from_word(word).ok_or_else(|| AppError::BadRequest("Choose what becomes of their lessons: \"admin\" or \"delete\".".into()))?,
    };
    let what = deletion::delete(&state.db, &person, theirs, admin).await?;
    // Nothing the shared limits count for them stays either.
    state.limits.forget_account(&person.id, &person.email).await?;
    Ok(what)
}

async fn api_delete(State(state): State<AppState>, CurrentUser(admin): CurrentUser, ApiPath(id): ApiPath<String>, ApiJson(body): ApiJson<DeleteBody>) -> Result<Json<deletion::WhatGoes>> {
    Ok(Json(delete(&state, &admin, &id, &body).await?))
}

/// The page's form: back to the School page, or to the page with what was wrong.
async fn form_delete(State(state): State<AppState>, user: Result<Option<CurrentUser>>, ApiPath(id): ApiPath<String>, ApiForm(body): ApiForm<DeleteBody>) -> Response {
    let Ok(Some(CurrentUser(admin))) = user else { return Redirect::to("/signin").into_response() };
    match delete(&state, &admin, &id, &body).await {
        Ok(_) => Redirect::to("/school?done=deleted").into_response(),
        Err(AppError::BadRequest(_)) => Redirect::to(&format!("/school/members/{id}/delete?error=confirm")).into_response(),
        Err(AppError::Conflict(_)) => Redirect::to(&format!("/school/members/{id}/delete?error=running")).into_response(),
        Err(e) => e.into_response(),
    }
}
