//! The lessons list, creating a lesson and opening one, for the pages
//! rendered on the server. (The workspace in the browser saves and browses
//! versions through `server::lesson_api`.)

use leptos::prelude::*;

use crate::models::{Lesson, LessonSummary};

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
