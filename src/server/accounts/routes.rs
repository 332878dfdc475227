//! HTTP endpoints for accounts. Two doors to the same logic in `auth`:
//! - `/api/auth/*` speaks JSON for API clients and returns the token;
//! - `/auth/*` takes the browser's HTML forms and answers with redirects, so
//!   signing in works before (or without) the WASM bundle.
//!
//! Form errors travel back as a short code in the query string (never as free
//! text, so nobody can make the page say what they like).

use std::net::IpAddr;

use axum::{
    extract::State,
    http::{header, HeaderMap, StatusCode},
    response::{IntoResponse, Redirect, Response},
    routing::{get, post},
    Json, Router,
};
use serde::{Deserialize, Serialize};

use crate::server::{
    accounts::auth,
    http::client_addr::ClientAddr,
    accounts::current_user::Member,
    error::{AppError, Result},
    http::extractors::{ApiForm, ApiJson},
    state::AppState,
};
use crate::{models::UserInfo, refusals::AccountRefusal};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/auth/signup", post(api_signup))
        .route("/api/auth/login", post(api_login))
        .route("/api/auth/logout", post(api_logout))
        .route("/api/auth/me", get(api_me))
        .route("/auth/signup", post(form_signup))
        .route("/auth/signin", post(form_signin))
        .route("/auth/signout", post(form_signout))
}

#[derive(Deserialize)]
pub struct Credentials {
    #[serde(default)]
    email: String,
    #[serde(default)]
    password: String,
    /// Where to go after a form sign-in (a path on this site).
    #[serde(default)]
    next: Option<String>,
    /// An invitation's token: join the school that sent it.
    #[serde(default)]
    invite: Option<String>,
    /// A class's join code: a student's account, in that class.
    #[serde(default)]
    join: Option<String>,
}

/// Signs up, or signs in, and starts a session. Shared by both doors.
/// Lengths first, then the limits, and only then a password is hashed.
async fn start_session(state: &AppState, client: IpAddr, creds: &Credentials, signup: bool) -> Result<(UserInfo, String)> {
    auth::check_lengths(&creds.email, &creds.password)?;
    let user = if signup {
        state.limits.sign_up(client).await?;
        auth::create_user(&state.db, &state.hash_gate, state.config.allow_signup, &creds.email, &creds.password, creds.invite.as_deref(), creds.join.as_deref())
            .await?
    } else {
        if let Some(wait) = state.limits.sign_in(&creds.email, client).await? {
            tokio::time::sleep(wait).await;
        }
        auth::authenticate(&state.db, &state.hash_gate, &creds.email, &creds.password).await?
    };
    let token = auth::create_session(&state.db, &user.id, state.config.session_days).await?;
    tracing::info!(user = %user.id, signup, "session started");
    Ok((user, token))
}

fn with_cookie(state: &AppState, token: &str, res: impl IntoResponse) -> Response {
    let cookie = auth::session_cookie(token, state.config.session_days, state.config.secure_cookies);
    ([(header::SET_COOKIE, cookie)], res).into_response()
}

/// The answer to a sign-up or sign-in through the API.
#[derive(Serialize)]
struct SessionReply {
    token: String,
    user: UserInfo,
}

/// Who is signed in.
#[derive(Serialize)]
struct MeReply {
    user: UserInfo,
}

async fn api_signup(State(state): State<AppState>, ClientAddr(client): ClientAddr, ApiJson(creds): ApiJson<Credentials>) -> Result<Response> {
    let (user, token) = start_session(&state, client, &creds, true).await?;
    let body = Json(SessionReply { token: token.clone(), user });
    Ok(with_cookie(&state, &token, (StatusCode::CREATED, body)))
}

async fn api_login(State(state): State<AppState>, ClientAddr(client): ClientAddr, ApiJson(creds): ApiJson<Credentials>) -> Result<Response> {
    let (user, token) = start_session(&state, client, &creds, false).await?;
    let body = Json(SessionReply { token: token.clone(), user });
    Ok(with_cookie(&state, &token, body))
}

async fn api_logout(State(state): State<AppState>, headers: HeaderMap) -> Result<Response> {
    if let Some(token) = auth::token_from_headers(&headers) {
        auth::delete_session(&state.db, &token).await?;
    }
    let cookie = auth::clear_session_cookie(state.config.secure_cookies);
    Ok(([(header::SET_COOKIE, cookie)], StatusCode::NO_CONTENT).into_response())
}

async fn api_me(Member(user): Member) -> Json<MeReply> {
    Json(MeReply { user })
}

/// A local path to continue to after signing in; anything else goes home.
/// Browsers drop tabs and line breaks from a URL (so `/\t/evil.example`
/// becomes `//evil.example`, another site) and a line break cannot go in a
/// `Location` header at all, so a path with any control character is refused
/// outright, as are `//` and backslashes.
pub fn safe_next(next: Option<&str>) -> &str {
    match next {
        Some(p) if p.starts_with('/') && !p.starts_with("//") && !p.contains('\\') && !p.chars().any(char::is_control) => p,
        _ => "/",
    }
}

/// What a form page is told went wrong.
fn refusal(e: &AppError) -> AccountRefusal {
    match e {
        AppError::Account(r) => *r,
        AppError::TooManyRequests(secs) | AppError::Busy(secs) => AccountRefusal::TooManyAttempts(*secs),
        _ => AccountRefusal::Server,
    }
}

fn back_to_form(page: &str, e: &AppError, creds: &Credentials) -> Response {
    let mut query = vec![("error", refusal(e).code()), ("email", creds.email.trim().to_string())];
    if let Some(next) = creds.next.as_deref().filter(|n| !n.is_empty()) {
        query.push(("next", next.to_string()));
    }
    if let Some(invite) = creds.invite.as_deref().filter(|n| !n.is_empty()) {
        query.push(("invite", invite.to_string()));
    }
    let qs = serde_urlencoded::to_string(&query).unwrap_or_default();
    Redirect::to(&format!("{page}?{qs}")).into_response()
}

async fn form_signup(State(state): State<AppState>, ClientAddr(client): ClientAddr, ApiForm(creds): ApiForm<Credentials>) -> Response {
    form_session(&state, client, &creds, true).await
}

async fn form_signin(State(state): State<AppState>, ClientAddr(client): ClientAddr, ApiForm(creds): ApiForm<Credentials>) -> Response {
    form_session(&state, client, &creds, false).await
}

/// A form sign-up or sign-in: on success the cookie and the page asked for,
/// otherwise back to the form with what went wrong.
async fn form_session(state: &AppState, client: IpAddr, creds: &Credentials, signup: bool) -> Response {
    match start_session(state, client, creds, signup).await {
        Ok((_, token)) => with_cookie(state, &token, Redirect::to(safe_next(creds.next.as_deref()))),
        Err(e) => {
            if let AppError::Internal(_) = e {
                tracing::error!(error = %e, signup, "form sign-in failed");
            }
            // A student signing up from a class's link goes back to that page.
            let join = creds.join.as_deref().map(crate::server::classes::tidy_code).filter(|c| !c.is_empty()).map(|c| format!("/join/{c}"));
            back_to_form(join.as_deref().unwrap_or(if signup { "/signup" } else { "/signin" }), &e, creds)
        }
    }
}

async fn form_signout(State(state): State<AppState>, headers: HeaderMap) -> Response {
    if let Some(token) = auth::token_from_headers(&headers) {
        if let Err(e) = auth::delete_session(&state.db, &token).await {
            tracing::error!(error = %e, "sign-out failed to delete the session");
        }
    }
    let cookie = auth::clear_session_cookie(state.config.secure_cookies);
    ([(header::SET_COOKIE, cookie)], Redirect::to("/signin")).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_must_stay_on_this_site() {
        assert_eq!(safe_next(Some("/lessons/abc")), "/lessons/abc");
        assert_eq!(safe_next(Some("//evil.example")), "/");
        assert_eq!(safe_next(Some("https://evil.example")), "/");
        assert_eq!(safe_next(Some("/\\evil.example")), "/");
        assert_eq!(safe_next(None), "/");
        // What browsers read as another site once they drop tabs and line breaks.
        assert_eq!(safe_next(Some("/\t/evil.example")), "/");
        assert_eq!(safe_next(Some("/\n/evil.example")), "/");
        assert_eq!(safe_next(Some("/\r\n/evil.example")), "/");
        // A line break must never reach a Location header.
        assert_eq!(safe_next(Some("/lessons\r\nSet-Cookie: x=1")), "/");
        assert_eq!(safe_next(Some("/lessons/abc?tab=history")), "/lessons/abc?tab=history");
    }
}
