//! The one error type of the HTTP API. Clients get a safe message and a stable
//! code as JSON; the real cause of an internal failure goes to the log only.

use axum::{
    http::{header, HeaderValue, StatusCode},
    response::{IntoResponse, Response},
    Json,
};
use crate::{
    models::ErrorReply,
    refusals::{AccountRefusal, TitleRefusal},
};

pub type Result<T, E = AppError> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error("Sign in to continue.")]
    Unauthorized,
    #[error("Not found.")]
    NotFound,
    #[error("{0}")]
    BadRequest(String),
    #[error("{0}")]
    Forbidden(String),
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    PayloadTooLarge(String),
    #[error("{0}")]
    UnsupportedMediaType(String),
    #[error("This address does not take that kind of request.")]
    MethodNotAllowed,
    /// A body that did not arrive in time.
    #[error("The request took too long to arrive. Please try again.")]
    RequestTimeout,
    #[error("{0}")]
    Unavailable(String),
    #[error("Too many attempts. Wait {0} seconds and try again.")]
    TooManyRequests(u64),
    /// An account started more replies than its limit allows.
    #[error("You have started a lot of replies in the last minute. Try again in {0} seconds.")]
    TooManyTurns(u64),
    /// An account holds as many live lesson pages open as it may (`lessons::live`).
    #[error("This account has too many lesson pages open. Close a few tabs, then reload this page to see changes as they happen.")]
    TooManyPages,
    #[error("Your school has started a lot of replies in the last minute. Try again in {0} seconds.")]
    SchoolBusy(u64),
    /// The school's budget is spent (402): the sentence, and when the
    /// allowance comes back.
    #[error("{message}")]
    BudgetExhausted { message: String, resets_at: String },
    /// Too much work queued (password hashing): come back after this many seconds.
    #[error("The server is busy. Please try again in a few seconds.")]
    Busy(u64),
    #[error("Something went wrong on the server. Please try again.")]
    Internal(String),
    /// The account keeps as much as it may (`quota`).
    #[error("Your account's storage is full, so this was not saved. Delete lessons, versions or material you no longer need, and empty the trash, to make room.")]
    StorageFull,
    /// A sign-up or sign-in the teacher must change.
    #[error("{}", .0.message())]
    Account(AccountRefusal),
    /// A lesson title the teacher must change.
    #[error("{}", .0.message())]
    Title(TitleRefusal),
    /// A lesson document with these problems (nothing was stored).
    #[error("The lesson has problems, so nothing was created. Each is listed with its line.")]
    InvalidLesson(Vec<crate::lesson::LessonError>),
    /// A decision on a held edit that names no digest the server gave for
    /// it as it now stands (`lessons::shown`).
    #[error("This is not the change you were shown, so nothing was done. Look at the suggestion again, then decide.")]
    NotAsShown,
    /// A decision naming a digest older than a paused reply waits.
    #[error("This suggestion was shown a while ago, so nothing was done. Look at its changes again, then decide.")]
    ShownTooLongAgo,
    /// An edit that collides with changes made since: these of its changes.
    #[error("The lesson was changed in the same places since, so nothing was changed. Look at the changes below and make them by hand if you still want them.")]
    Overlap(Vec<crate::lesson::Change>),
}

impl AppError {
    pub fn status(&self) -> StatusCode {
        match self {
            Self::Unauthorized => StatusCode::UNAUTHORIZED,
            Self::NotFound => StatusCode::NOT_FOUND,
            Self::BadRequest(_) | Self::InvalidLesson(_) => StatusCode::BAD_REQUEST,
            Self::Forbidden(_) => StatusCode::FORBIDDEN,
            Self::Conflict(_) | Self::Overlap(_) | Self::NotAsShown | Self::ShownTooLongAgo => StatusCode::CONFLICT,
            Self::PayloadTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            Self::UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::RequestTimeout => StatusCode::REQUEST_TIMEOUT,
            Self::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Self::Unavailable(_) | Self::Busy(_) => StatusCode::SERVICE_UNAVAILABLE,
            Self::TooManyRequests(_) | Self::TooManyTurns(_) | Self::SchoolBusy(_) | Self::TooManyPages => StatusCode::TOO_MANY_REQUESTS,
            Self::BudgetExhausted { .. } => StatusCode::PAYMENT_REQUIRED,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
            Self::StorageFull => StatusCode::INSUFFICIENT_STORAGE,
            Self::Account(r) => match r {
                AccountRefusal::EmailTaken | AccountRefusal::SsoEmailTaken | AccountRefusal::SsoLinkedElsewhere => StatusCode::CONFLICT,
                AccountRefusal::SsoNoSchool | AccountRefusal::LtiUnknown | AccountRefusal::LtiNoClass => StatusCode::FORBIDDEN,
                AccountRefusal::SignupClosed | AccountRefusal::InviteInvalid => StatusCode::FORBIDDEN,
                AccountRefusal::JoinCodeInvalid => StatusCode::NOT_FOUND,
                AccountRefusal::TooManyAttempts(_) => StatusCode::TOO_MANY_REQUESTS,
                AccountRefusal::Server => StatusCode::INTERNAL_SERVER_ERROR,
                _ => StatusCode::BAD_REQUEST,
            },
            Self::Title(TitleRefusal::Server) => StatusCode::INTERNAL_SERVER_ERROR,
            Self::Title(_) => StatusCode::BAD_REQUEST,
        }
    }

    /// A stable, machine-readable name for the error.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Unauthorized => "unauthorized",
            Self::NotFound => "not_found",
            Self::BadRequest(_) => "bad_request",
            Self::InvalidLesson(_) => "invalid_lesson",
            Self::Forbidden(_) => "forbidden",
            Self::Conflict(_) | Self::Overlap(_) => "conflict",
            Self::NotAsShown => "not_as_shown",
            Self::ShownTooLongAgo => "shown_too_long_ago",
            Self::PayloadTooLarge(_) => "too_large",
            Self::UnsupportedMediaType(_) => "unsupported_media_type",
            Self::RequestTimeout => "timeout",
            Self::MethodNotAllowed => "method_not_allowed",
            Self::Unavailable(_) => "unavailable",
            Self::Busy(_) => "busy",
            Self::TooManyRequests(_) | Self::TooManyTurns(_) | Self::SchoolBusy(_) | Self::TooManyPages => "rate_limited",
            Self::BudgetExhausted { .. } => "budget_exhausted",
            Self::Internal(_) => "internal",
            Self::StorageFull => "storage_full",
            Self::Account(_) | Self::Title(_) => match self.status() {
                StatusCode::CONFLICT => "conflict",
                StatusCode::FORBIDDEN => "forbidden",
                StatusCode::TOO_MANY_REQUESTS => "rate_limited",
                StatusCode::INTERNAL_SERVER_ERROR => "internal",
                _ => "bad_request",
            },
        }
    }
}

impl From<sqlx::Error> for AppError {
    fn from(e: sqlx::Error) -> Self {
        // The database's own refusal of a write past an account's storage.
        if let sqlx::Error::Database(d) = &e {
            if d.message().contains("margin_storage_full") {
                return Self::StorageFull;
            }
        }
        Self::Internal(format!("database: {e}"))
    }
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        if let Self::Internal(cause) = &self {
            tracing::error!(%cause, "internal error");
        }
        if let Self::InvalidLesson(errors) = &self {
            // Not in `ErrorReply`: the browser never reads these, and its
            // bundle would carry their reader.
            let body = serde_json::json!({ "error": self.to_string(), "code": self.code(), "errors": errors });
            return (self.status(), Json(body)).into_response();
        }
        if let Self::BudgetExhausted { message, resets_at } = &self {
            let body = serde_json::json!({ "error": message, "code": self.code(), "message": message, "resetsAt": resets_at });
            return (self.status(), Json(body)).into_response();
        }
        let conflicts = match &self {
            Self::Overlap(changes) => changes.clone(),
            _ => Vec::new(),
        };
        let mut res = (self.status(), Json(ErrorReply { error: self.to_string(), code: self.code().into(), conflicts })).into_response();
        if let Self::TooManyRequests(secs) | Self::TooManyTurns(secs) | Self::SchoolBusy(secs) | Self::Busy(secs) = self {
            if let Ok(v) = HeaderValue::from_str(&secs.to_string()) {
                res.headers_mut().insert(header::RETRY_AFTER, v);
            }
        }
        res
    }
}
