//! The API's extractors: axum's `Json`, `Path`, `Query` and `Form`, whose
//! rejections answer in the API's JSON error shape (a malformed request is a
//! 400, a body that is not JSON a 415) instead of axum's plain text.

use axum::extract::{
    rejection::{FormRejection, JsonRejection, PathRejection, QueryRejection},
    FromRequest, FromRequestParts,
};
use axum::http::StatusCode;

use crate::server::error::AppError;

/// A JSON body (`Content-Type: application/json` required).
#[derive(FromRequest)]
#[from_request(via(axum::Json), rejection(AppError))]
pub struct ApiJson<T>(pub T);

/// The path's parameters.
#[derive(FromRequestParts)]
#[from_request(via(axum::extract::Path), rejection(AppError))]
pub struct ApiPath<T>(pub T);

/// The query string.
#[derive(FromRequestParts)]
#[from_request(via(axum::extract::Query), rejection(AppError))]
pub struct ApiQuery<T>(pub T);

/// A URL-encoded form body.
#[derive(FromRequest)]
#[from_request(via(axum::Form), rejection(AppError))]
pub struct ApiForm<T>(pub T);

fn by_status(status: StatusCode, message: String) -> AppError {
    match status {
        StatusCode::PAYLOAD_TOO_LARGE => AppError::PayloadTooLarge("The request is too large.".into()),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => AppError::UnsupportedMediaType(message),
        s if s.is_server_error() => AppError::Internal(message),
        _ => AppError::BadRequest(message),
    }
}

impl From<JsonRejection> for AppError {
    fn from(r: JsonRejection) -> Self {
        let message = match &r {
            JsonRejection::MissingJsonContentType(_) => "Send the request as JSON (Content-Type: application/json).".to_string(),
            JsonRejection::JsonSyntaxError(_) => "The request is not valid JSON.".to_string(),
            JsonRejection::JsonDataError(e) => format!("The request's JSON does not fit: {}", e.body_text()),
            other => other.body_text(),
        };
        by_status(r.status(), message)
    }
}

impl From<PathRejection> for AppError {
    fn from(r: PathRejection) -> Self {
        by_status(r.status(), format!("The address is not valid: {}", r.body_text()))
    }
}

impl From<QueryRejection> for AppError {
    fn from(r: QueryRejection) -> Self {
        by_status(r.status(), format!("The query string is not valid: {}", r.body_text()))
    }
}

impl From<FormRejection> for AppError {
    fn from(r: FormRejection) -> Self {
        let message = match &r {
            FormRejection::InvalidFormContentType(_) => "Send the form as application/x-www-form-urlencoded.".to_string(),
            other => format!("The form could not be read: {}", other.body_text()),
        };
        by_status(r.status(), message)
    }
}

/// An optional JSON body: none without a JSON content type, a 400 when the
/// JSON is there but malformed.
impl<T, S> axum::extract::OptionalFromRequest<S> for ApiJson<T>
where
    axum::Json<T>: axum::extract::OptionalFromRequest<S, Rejection = JsonRejection>,
    S: Send + Sync,
{
    type Rejection = AppError;

    async fn from_request(req: axum::extract::Request, state: &S) -> Result<Option<Self>, Self::Rejection> {
        let json = <axum::Json<T> as axum::extract::OptionalFromRequest<S>>::from_request(req, state).await?;
        Ok(json.map(|axum::Json(v)| ApiJson(v)))
    }
}
