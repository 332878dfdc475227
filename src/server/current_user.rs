//! `CurrentUser`: the signed-in teacher behind an API request (cookie or
//! Bearer token), or a 401 in JSON.

use axum::{extract::FromRequestParts, http::request::Parts};

use super::{auth, error::AppError, state::AppState};
use crate::models::UserInfo;

pub struct CurrentUser(pub UserInfo);

impl FromRequestParts<AppState> for CurrentUser {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        auth::user_from_headers(&state.db, &parts.headers).await?.map(CurrentUser).ok_or(AppError::Unauthorized)
    }
}
