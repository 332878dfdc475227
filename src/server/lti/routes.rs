//! The doors an LMS uses, and the School page's registration forms.
//!
//! - `GET|POST /lti/login`: the platform's login initiation; off to its
//!   authorization address;
//! - `POST /lti/launch`: the platform posts the signed launch; a session for
//!   its person and the page it opens, or the sign-in page with a sentence;
//! - `POST /school/lti`, `POST /school/lti/{id}/remove`, and
//!   `GET|POST /api/school/lti`, `DELETE /api/school/lti/{id}`: a school's
//!   admin registers and removes platforms.

use axum::{
    extract::State,
    http::{header, HeaderMap, StatusCode},
    response::{IntoResponse, Redirect, Response},
    routing::{delete, get, post},
    Json, Router,
};
use serde::Deserialize;

use super::{
    launch::{self, Initiation, LtiError},
    people,
    platforms::{self, Platform, Registration},
};
use crate::server::{
    accounts::{auth, current_user::CurrentUser, schools::admin_school},
    http::{
        client_addr::ClientAddr,
        error::{AppError, Result},
        extractors::{ApiForm, ApiJson, ApiPath, ApiQuery},
    },
    state::AppState,
};

/// The cookie holding a launch's state in the browser that started it.
const STATE_COOKIE: &str = "margin_lti";

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/lti/login", get(login_get).post(login_post))
        .route("/lti/launch", post(launch_post))
        .route("/school/lti", post(form_register))
        .route("/school/lti/{id}/remove", post(form_remove))
        .route("/api/school/lti", get(api_list).post(api_register))
        .route("/api/school/lti/{id}", delete(api_remove))
}

/// The paths a platform posts to from its own site (`http::csrf` lets them by).
pub fn posted_by_platforms(path: &str) -> bool {
    matches!(path, "/lti/login" | "/lti/launch")
}

/// This site's origin, for the launch address Margin gives the platform.
fn origin(state: &AppState, headers: &HeaderMap) -> String {
    if let Some(public) = &state.config.public_origin {
        return public.clone();
    }
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .filter(|h| !h.is_empty() && h.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']')))
        .map(str::to_string)
        .unwrap_or_else(|| state.leptos_options.site_addr.to_string());
    format!("http://{host}")
}

fn refused(e: &LtiError) -> Response {
    match e {
        LtiError::App(AppError::Internal(_)) => tracing::error!(reason = %e, "an LMS launch failed"),
        _ => tracing::warn!(reason = %e, "an LMS launch was refused"),
    }
    Redirect::to(&format!("/signin?error={}", e.refusal().code())).into_response()
}

async fn login_get(State(state): State<AppState>, ClientAddr(client): ClientAddr, headers: HeaderMap, ApiQuery(init): ApiQuery<Initiation>) -> Response {
    login(&state, client, &headers, init).await
}

async fn login_post(State(state): State<AppState>, ClientAddr(client): ClientAddr, headers: HeaderMap, ApiForm(init): ApiForm<Initiation>) -> Response {
    login(&state, client, &headers, init).await
}

async fn login(state: &AppState, client: std::net::IpAddr, headers: &HeaderMap, init: Initiation) -> Response {
    let started = async {
        state.limits.sign_in_started(client).await?;
        launch::login(state, &init, &origin(state, headers)).await
    }
    .await;
    match started {
        Ok((location, value)) => {
            let secure = if state.config.secure_cookies { "; Secure" } else { "" };
            let cookie = format!("{STATE_COOKIE}={value}; Path=/lti; HttpOnly; SameSite=Lax; Max-Age={}{secure}", launch::WINDOW.as_secs());
            ([(header::SET_COOKIE, cookie)], Redirect::to(&location)).into_response()
        }
        Err(e) => refused(&e),
    }
}

#[derive(Deserialize)]
struct LaunchForm {
    #[serde(default)]
    id_token: String,
    #[serde(default)]
    state: String,
}

fn cookie_value<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v.trim())
}

async fn launch_post(State(state): State<AppState>, ClientAddr(client): ClientAddr, headers: HeaderMap, ApiForm(form): ApiForm<LaunchForm>) -> Response {
    let done = async {
        let launch = launch::verify(&state, &form.id_token, &form.state, cookie_value(&headers, STATE_COOKIE)).await?;
        if launch.message_type() == launch::DEEP_LINKING {
            return Err(LtiError::Refused(crate::refusals::AccountRefusal::LtiFailed, "Deep Linking is not open yet".into()));
        }
        let (user, to) = people::land(&state, client, &launch).await?;
        tracing::info!(user = %user.id, platform = %launch.platform.id, teacher = !user.is_student(), "LMS launch");
        Ok::<_, LtiError>((user, to))
    }
    .await;
    match done {
        Ok((user, to)) => match auth::create_session(&state.db, &user.id, state.config.session_days).await {
            Ok(token) => {
                let session = auth::session_cookie(&token, state.config.session_days, state.config.secure_cookies);
                ([(header::SET_COOKIE, session)], Redirect::to(&to)).into_response()
            }
            Err(e) => refused(&LtiError::App(e)),
        },
        Err(e) => refused(&e),
    }
}

/// A platform as its School page and the API show it.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Registered {
    #[serde(flatten)]
    platform: Platform,
    deployments: Vec<String>,
}

async fn api_list(State(state): State<AppState>, CurrentUser(user): CurrentUser) -> Result<Json<Vec<Registered>>> {
    let school = admin_school(&user)?;
    let list = platforms::of_school(&state.db, school).await?;
    Ok(Json(list.into_iter().map(|(platform, deployments)| Registered { platform, deployments }).collect()))
}

async fn api_register(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiJson(r): ApiJson<Registration>) -> Result<Response> {
    let platform = platforms::register(&state.db, &user, &r).await?;
    Ok((StatusCode::CREATED, Json(platform)).into_response())
}

async fn api_remove(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath(id): ApiPath<String>) -> Result<StatusCode> {
    platforms::remove(&state.db, &user, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}

fn school_answer(done: Result<()>, ok: &str) -> Response {
    let to = match done {
        Ok(()) => format!("/school?done={ok}#lms"),
        Err(AppError::Unauthorized) => "/signin?next=/school".into(),
        Err(AppError::Forbidden(_)) => "/school".into(),
        Err(AppError::BadRequest(_)) => "/school?error=lti-input#lms".into(),
        Err(AppError::Conflict(_)) => "/school?error=lti-taken#lms".into(),
        Err(AppError::NotFound) => "/school#lms".into(),
        Err(e) => {
            tracing::error!(error = %e, "an LMS registration form failed");
            "/school?error=server".into()
        }
    };
    Redirect::to(&to).into_response()
}

async fn form_register(State(state): State<AppState>, user: Result<Option<CurrentUser>>, ApiForm(r): ApiForm<Registration>) -> Response {
    school_answer(
        async {
            let user = user?.ok_or(AppError::Unauthorized)?.0;
            platforms::register(&state.db, &user, &r).await.map(|_| ())
        }
        .await,
        "lti-registered",
    )
}

async fn form_remove(State(state): State<AppState>, user: Result<Option<CurrentUser>>, ApiPath(id): ApiPath<String>) -> Response {
    school_answer(
        async {
            let user = user?.ok_or(AppError::Unauthorized)?.0;
            platforms::remove(&state.db, &user, &id).await
        }
        .await,
        "lti-removed",
    )
}
