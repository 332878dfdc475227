//! Server-side helpers for server functions: the shared state, the signed-in
//! teacher, and turning an `AppError` into a server-function error with the
//! right HTTP status.

use axum::http::request::Parts;
use leptos::prelude::*;
use leptos_axum::ResponseOptions;

use crate::{
    models::UserInfo,
    server::{accounts::current_user::Member, error::AppError, state::AppState},
};

pub fn state() -> Result<AppState, ServerFnError> {
    use_context::<AppState>().ok_or_else(|| ServerFnError::new("server state is missing"))
}

/// Reports an error to the caller with its HTTP status; internal causes are logged, not sent.
pub fn fail(e: AppError) -> ServerFnError {
    if let Some(res) = use_context::<ResponseOptions>() {
        res.set_status(e.status());
    }
    if let AppError::Internal(cause) = &e {
        tracing::error!(%cause, "server function failed");
    }
    ServerFnError::new(e.to_string())
}

/// Whoever is signed in, teacher or student, if anyone.
pub async fn user() -> Result<Option<UserInfo>, ServerFnError> {
    let state = state()?;
    let Some(parts) = use_context::<Parts>() else {
        return Ok(None);
    };
    let user = Member::find(&state, &parts.headers).await.map_err(fail)?;
    Ok(user.map(|Member(user)| user))
}

/// The signed-in teacher: a 401 for nobody, a 403 for a student.
pub async fn require_user() -> Result<(AppState, UserInfo), ServerFnError> {
    let user = user().await?.ok_or_else(|| fail(AppError::Unauthorized))?;
    if user.is_student() {
        return Err(fail(AppError::Forbidden(crate::server::accounts::current_user::TEACHERS_ONLY.into())));
    }
    Ok((state()?, user))
}
