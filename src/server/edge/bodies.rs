//! Request bodies: every route has a size limit, and what is too large or
//! unreadable is answered in the API's JSON error shape, never 500.
//!
//! The edge middleware (`router::edge`) reads each body up to its route's
//! limit before any handler runs (every handler reads its whole body anyway, and the largest is a
//! lesson or a turn). tower-http's `RequestBodyLimitLayer` is not used: it
//! answers 413 in plain text, and a body that overflows while a Leptos server
//! function reads it comes back as a 500 "length limit exceeded".
//!
//! Server functions report malformed arguments as 500 with the framework's
//! own error text; those answers become 400 here.

use axum::{
    body::{to_bytes, Body},
    extract::Request,
    http::{header, HeaderMap, Method, StatusCode},
    response::{IntoResponse, Redirect, Response},
};

use crate::server::{accounts::auth, chats::routes::MAX_TURN_BODY, accounts::current_user::Member, error::AppError, state::AppState};

/// A lesson document and its details (a save, or a lesson created from XML).
pub const LESSON_BODY: usize = 1024 * 1024;
/// A turn's request (checked again, more closely, by the route).
pub const TURN_BODY: usize = MAX_TURN_BODY * 4;
/// Sign-in and sign-up: an email and a password.
pub const ACCOUNT_BODY: usize = 8 * 1024;
/// Everything else (titles, settings, server-function arguments).
pub const SMALL_BODY: usize = 64 * 1024;
/// The longest a client may take to send a body; a slower upload is answered
/// 408 and its connection freed (the largest body takes well under a second
/// on any school network).
pub const BODY_READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// The largest body `method path` may carry.
pub fn limit_for(method: &Method, path: &str) -> usize {
    if is_account_route(path) {
        ACCOUNT_BODY
    } else if path == "/api/chat/stream" {
        TURN_BODY
    } else if (method == Method::PUT && path.starts_with("/api/lessons/") && path.ends_with("/document"))
        || (method == Method::POST && path == "/api/lessons")
    {
        LESSON_BODY
    } else if method == Method::POST && crate::server::material::routes::takes_files(path) {
        crate::server::material::routes::MATERIAL_BODY
    } else if method == Method::POST && crate::server::standards::routes::takes_packages(path) {
        crate::server::standards::routes::FRAMEWORK_BODY
    } else if method == Method::POST && path == "/lessons/import" {
        // The file, and the form's own few hundred bytes around it.
        LESSON_BODY + 16 * 1024
    } else {
        SMALL_BODY
    }
}

/// For a route that takes a large body, the answer to send before reading
/// it when nobody is signed in: 401 in JSON under `/api/`, the sign-in page
/// for a form. Reading 25 MB for a request that will be refused anyway
/// costs the server, not the sender. The turn's stream (2 MB at most) only
/// needs a session token here: its handler checks the session in the same
/// query that reserves the budget, and a query more would be felt on every
/// reply's first words.
pub async fn session_first(state: &AppState, method: &Method, path: &str, headers: &HeaderMap) -> Option<Response> {
    if limit_for(method, path) <= SMALL_BODY || is_account_route(path) {
        return None;
    }
    let signed_in = if path == "/api/chat/stream" {
        auth::token_from_headers(headers).is_some()
    } else {
        match Member::find(state, headers).await {
            Ok(found) => found.is_some(),
            Err(e) => return Some(e.into_response()),
        }
    };
    if signed_in {
        None
    } else if path.starts_with("/api/") {
        Some(AppError::Unauthorized.into_response())
    } else {
        Some(Redirect::to("/signin").into_response())
    }
}

fn is_account_route(path: &str) -> bool {
    path.starts_with("/auth/") || path.starts_with("/api/auth/")
}

fn too_large(limit: usize) -> Response {
    AppError::PayloadTooLarge(format!("The request is too large. Keep it under {} KB.", limit / 1024)).into_response()
}

/// `req` with its body read whole under its route's limit, or the answer
/// when it is too large, too slow or unreadable.
pub async fn read(req: Request) -> Result<Request, Response> {
    let limit = limit_for(req.method(), req.uri().path());
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(too_large(limit));
    }
    let (parts, body) = req.into_parts();
    let read = match tokio::time::timeout(BODY_READ_TIMEOUT, to_bytes(body, limit)).await {
        Ok(read) => read,
        Err(_) => return Err(AppError::RequestTimeout.into_response()),
    };
    let bytes = match read {
        Ok(b) => b,
        Err(e) => {
            let too_big = std::error::Error::source(&e).is_some_and(|s| s.is::<http_body_util::LengthLimitError>());
            if too_big {
                return Err(too_large(limit));
            }
            return Err(AppError::BadRequest("The request's body could not be read.".into()).into_response());
        }
    };
    Ok(Request::from_parts(parts, Body::from(bytes)))
}

/// A server function's "could not read your arguments" (a 500 carrying the
/// `serverfnerror` header and an `Args|`-style body) as a JSON 400.
pub async fn server_fn_rejection(res: Response) -> Response {
    if res.status() != StatusCode::INTERNAL_SERVER_ERROR || !res.headers().contains_key("serverfnerror") {
        return res;
    }
    let (parts, body) = res.into_parts();
    let bytes = to_bytes(body, SMALL_BODY).await.unwrap_or_default();
    let text = String::from_utf8_lossy(&bytes);
    let malformed = ["Args|", "MissingArg|", "Deserialization|"].iter().any(|p| text.starts_with(p));
    if malformed {
        return AppError::BadRequest("The request's arguments are missing or malformed.".into()).into_response();
    }
    Response::from_parts(parts, Body::from(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_route_has_its_limit() {
        assert_eq!(limit_for(&Method::POST, "/api/auth/login"), ACCOUNT_BODY);
        assert_eq!(limit_for(&Method::POST, "/auth/signin"), ACCOUNT_BODY);
        assert_eq!(limit_for(&Method::POST, "/api/chat/stream"), TURN_BODY);
        assert_eq!(limit_for(&Method::PUT, "/api/lessons/abc/document"), LESSON_BODY);
        assert_eq!(limit_for(&Method::POST, "/api/lessons/abc/document"), SMALL_BODY);
        assert_eq!(limit_for(&Method::POST, "/api/lessons"), LESSON_BODY);
        assert_eq!(limit_for(&Method::POST, "/api/list_lessons123"), SMALL_BODY);
    }
}
