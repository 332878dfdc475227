//! The lessons list, creating a lesson and opening one.

use leptos::prelude::*;

use crate::models::{Lesson, LessonSummary, Revision, RevisionSummary, SaveOutcome};

#[server]
pub async fn list_lessons() -> Result<Vec<LessonSummary>, ServerFnError> {
    use super::ssr::{fail, require_user};
    let (state, user) = require_user().await?;
    crate::server::lessons::list_for_owner(&state.db, &user.id).await.map_err(fail)
}

/// Creates a lesson and sends the browser to it.
#[server]
pub async fn create_lesson(title: String) -> Result<String, ServerFnError> {
    use super::ssr::{fail, require_user};
    let (state, user) = require_user().await?;
    let lesson = crate::server::lessons::create(&state.db, &user.id, &title).await.map_err(fail)?;
    leptos_axum::redirect(&format!("/lessons/{}", lesson.id));
    Ok(lesson.id)
}

#[server]
pub async fn get_lesson(id: String) -> Result<Lesson, ServerFnError> {
    use super::ssr::{fail, require_user};
    let (state, user) = require_user().await?;
    crate::server::lessons::get_owned(&state.db, &user.id, &id).await.map_err(fail)
}

/// Saves the teacher's XML on top of `base_revision`.
#[server]
pub async fn save_lesson(id: String, xml: String, base_revision: i64) -> Result<SaveOutcome, ServerFnError> {
    use super::ssr::{fail, require_user};
    let (state, user) = require_user().await?;
    crate::server::lessons::save_document(&state.db, &user.id, &id, &xml, base_revision, crate::models::Author::Teacher, "Edited the XML")
        .await
        .map_err(fail)
}

#[server]
pub async fn list_revisions(id: String) -> Result<Vec<RevisionSummary>, ServerFnError> {
    use super::ssr::{fail, require_user};
    let (state, user) = require_user().await?;
    crate::server::lessons::list_revisions(&state.db, &user.id, &id).await.map_err(fail)
}

#[server]
pub async fn get_revision(id: String, number: i64) -> Result<Revision, ServerFnError> {
    use super::ssr::{fail, require_user};
    let (state, user) = require_user().await?;
    crate::server::lessons::get_revision(&state.db, &user.id, &id, number).await.map_err(fail)
}

#[server]
pub async fn restore_revision(id: String, number: i64, base_revision: i64) -> Result<SaveOutcome, ServerFnError> {
    use super::ssr::{fail, require_user};
    let (state, user) = require_user().await?;
    crate::server::lessons::restore_revision(&state.db, &user.id, &id, number, base_revision).await.map_err(fail)
}
