//! The class pages' data, for the pages rendered on the server
//! (`components::classes`); every change they offer is a plain form
//! (`server::classes::routes` and `learn`). Teachers' pages take a teacher
//! and find the class or lesson by its owner (anyone else's is not found);
//! a student's take the student.

use leptos::prelude::*;

use crate::models::{ClassPage, ClassSummary, JoinView, LessonResults, StudentHome, StudentWork};

/// The signed-in teacher's classes.
#[server]
pub async fn get_classes() -> Result<Vec<ClassSummary>, ServerFnError> {
    use super::ssr::{fail, require_user};
    let (state, user) = require_user().await?;
    crate::server::classes::list(&state.db, &user.id).await.map_err(fail)
}

/// One class of the signed-in teacher, with its join link.
#[server]
pub async fn get_class(id: String) -> Result<ClassPage, ServerFnError> {
    use super::ssr::{fail, require_user};
    let (state, user) = require_user().await?;
    let headers = use_context::<axum::http::request::Parts>().map(|p| p.headers).unwrap_or_default();
    crate::server::classes::routes::class_page(&state, &user, &headers, &id).await.map_err(fail)
}

/// A lesson's results, for its teacher.
#[server]
pub async fn get_results(lesson: String) -> Result<LessonResults, ServerFnError> {
    use super::ssr::{fail, require_user};
    let (state, user) = require_user().await?;
    crate::server::classes::routes::lesson_results(&state, &user, &lesson).await.map_err(fail)
}

/// A lesson's Standards page: its coverage, and the school's frameworks
/// searched for `query`.
#[server]
pub async fn get_lesson_standards(lesson: String, query: String) -> Result<crate::models::LessonStandards, ServerFnError> {
    use super::ssr::{fail, require_user};
    let (state, user) = require_user().await?;
    crate::server::classes::coverage::lesson_page(&state, &user.id, &lesson, &query).await.map_err(fail)
}

/// One student's work on a lesson, for the teacher of a class they are in.
#[server]
pub async fn get_student_work(lesson: String, student: String) -> Result<StudentWork, ServerFnError> {
    use super::ssr::{fail, require_user};
    let (state, user) = require_user().await?;
    crate::server::classes::routes::student_work_page(&state, &user, &lesson, &student).await.map_err(fail)
}

/// The signed-in student's classes.
#[server]
pub async fn get_my_classes() -> Result<StudentHome, ServerFnError> {
    use super::ssr::{fail, state, user};
    use crate::server::error::AppError;
    let user = user().await?.ok_or_else(|| fail(AppError::Unauthorized))?;
    crate::server::classes::learn::home(&state()?, &user).await.map_err(fail)
}

/// What a join link opens, for whoever follows it (signed in or not).
#[server]
pub async fn get_join(code: String) -> Result<JoinView, ServerFnError> {
    use axum::extract::FromRequestParts;

    use super::ssr::{fail, state, user};
    use crate::server::http::client_addr::ClientAddr;
    let state = state()?;
    let Some(mut parts) = use_context::<axum::http::request::Parts>() else {
        return Err(ServerFnError::new("the request is missing"));
    };
    let Ok(ClientAddr(client)) = ClientAddr::from_request_parts(&mut parts, &state).await;
    crate::server::classes::learn::join_view(&state, client, user().await?, &code).await.map_err(fail)
}
