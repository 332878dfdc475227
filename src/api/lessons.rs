//! The lessons list and opening a lesson, for the pages rendered on the
//! server. (A lesson is created by a plain form, `server::lesson_forms`; the
//! workspace in the browser saves and browses versions through
//! `server::lesson_api`.)

use leptos::prelude::*;

use crate::models::{Lesson, LessonSummary};

#[server]
pub async fn list_lessons() -> Result<Vec<LessonSummary>, ServerFnError> {
    use super::ssr::{fail, require_user};
    let (state, user) = require_user().await?;
    crate::server::lessons::list_for_owner(&state.db, &user.id).await.map_err(fail)
}

#[server]
pub async fn get_lesson(id: String) -> Result<Lesson, ServerFnError> {
    use super::ssr::{fail, require_user};
    let (state, user) = require_user().await?;
    crate::server::lessons::get_owned(&state.db, &user.id, &id).await.map_err(fail)
}
