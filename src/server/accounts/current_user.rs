//! `CurrentUser`: the signed-in teacher behind a request (cookie or Bearer
//! token). It is the one way every door finds them: API handlers extract it
//! (a 401 in JSON when nobody is signed in), forms extract `Option<CurrentUser>`
//! (and send the browser to sign in), and the page gate and server functions
//! call [`CurrentUser::find`].

use axum::{
    extract::{FromRequestParts, OptionalFromRequestParts},
    http::{request::Parts, HeaderMap},
    response::{IntoResponse, Redirect, Response},
};

use crate::server::{accounts::auth, error::AppError, state::AppState};
use crate::models::UserInfo;

pub struct CurrentUser(pub UserInfo);

/// Why a student is turned away from a teacher's door.
pub const TEACHERS_ONLY: &str = "This is for teachers. Your lessons are under My classes.";

impl CurrentUser {
    /// The teacher whose live session the request carries, if any. A
    /// student's session is refused (403): every door that takes a
    /// `CurrentUser` is a teacher's.
    pub async fn find(state: &AppState, headers: &HeaderMap) -> Result<Option<Self>, AppError> {
        match Member::find(state, headers).await? {
            Some(Member(u)) if u.is_student() => Err(AppError::Forbidden(TEACHERS_ONLY.into())),
            found => Ok(found.map(|Member(u)| CurrentUser(u))),
        }
    }
}

/// A teacher's page or form: with nobody signed in, the browser goes to
/// sign in; a student's session is refused (403) as at every teacher's door.
pub struct TeacherPage(pub UserInfo);

impl FromRequestParts<AppState> for TeacherPage {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        match CurrentUser::find(state, &parts.headers).await {
            Ok(Some(CurrentUser(u))) => Ok(TeacherPage(u)),
            Ok(None) => Err(Redirect::to("/signin").into_response()),
            Err(e) => Err(e.into_response()),
        }
    }
}

/// Anyone signed in, teacher or student: the doors students use (their
/// classes, their answers, the tutor's chat) take this and check the role
/// and the membership themselves.
pub struct Member(pub UserInfo);

impl Member {
    pub async fn find(state: &AppState, headers: &HeaderMap) -> Result<Option<Self>, AppError> {
        let Some(token) = auth::token_from_headers(headers) else { return Ok(None) };
        Ok(auth::user_for_token(&state.db, &token).await?.map(Member))
    }
}

/// The two ways a door takes a signed-in user of type `$who` (which has
/// `find`): required (nobody signed in is a 401 in JSON) or optional (the
/// handler decides, e.g. a form sends the browser to sign in).
macro_rules! signed_in_extractors {
    ($who:ty) => {
        impl FromRequestParts<AppState> for $who {
            type Rejection = AppError;

            async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
                Self::find(state, &parts.headers).await?.ok_or(AppError::Unauthorized)
            }
        }

        impl OptionalFromRequestParts<AppState> for $who {
            type Rejection = AppError;

            async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Option<Self>, Self::Rejection> {
                Self::find(state, &parts.headers).await
            }
        }
    };
}

signed_in_extractors!(Member);
signed_in_extractors!(CurrentUser);
