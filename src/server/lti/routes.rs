//! The doors an LMS uses, and the School page's registration forms.
//!
//! - `GET|POST /lti/login`: the platform's login initiation; off to its
//!   authorization address;
//! - `POST /lti/launch`: the platform posts the signed launch; a session for
//!   its person and the page it opens, or the sign-in page with a sentence;
//! - `GET /lti/jwks/{id}`: one registration's public keys, for its platform
//!   (`GET /lti/jwks`: the shared key of registrations made before);
//! - `GET /lti/register/{token}`: an LMS registers itself (LTI Dynamic
//!   Registration, `dynamic`), from the address the School page made
//!   (`POST /school/lti/dynamic`, `POST /api/school/lti/dynamic`);
//! - `POST /lti/pick/{id}/choose`: a teacher's choice of lesson for a Deep Linking
//!   request, answered with a page whose form takes the signed answer back
//!   to the platform;
//! - `POST /api/classes/{id}/roster`: the class's teacher reads the course's
//!   roster from the LMS now (`{"added","removed"}`);
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
    deep_linking, keys,
    launch::{self, Initiation, LtiError},
    people,
    platforms::{self, Platform, Registration},
};
use crate::server::{
    accounts::{auth, current_user::CurrentUser, schools::admin_school},
    error::{AppError, Result},
    http::{
        client_addr::ClientAddr,
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
        .route("/lti/jwks", get(jwks))
        .route("/lti/jwks/{id}", get(registration_jwks))
        .route("/lti/register/{token}", get(dynamic_registration))
        .route("/school/lti/dynamic", post(form_dynamic))
        .route("/api/school/lti/dynamic", post(api_dynamic))
        .route("/lti/pick/{id}/choose", post(pick))
        .route("/api/classes/{id}/roster", post(api_roster))
        .route("/school/lti", post(form_register))
        .route("/school/lti/{id}/remove", post(form_remove))
        .route("/school/lti/{id}/own-key", post(form_own_key))
        .route("/api/school/lti", get(api_list).post(api_register))
        .route("/api/school/lti/{id}", delete(api_remove))
        .route("/api/school/lti/{id}/own-key", post(api_own_key))
}

/// The paths a platform posts to from its own site (`edge::csrf` lets them by).
pub fn posted_by_platforms(path: &str) -> bool {
    matches!(path, "/lti/login" | "/lti/launch")
}

/// A refused launch: its sentence on a page of its own, signed in or not.
fn refused(e: &LtiError) -> Response {
    match e {
        LtiError::App(AppError::Internal(_)) => tracing::error!(reason = %e, "an LMS launch failed"),
        _ => tracing::warn!(reason = %e, "an LMS launch was refused"),
    }
    Redirect::to(&crate::server::accounts::refused::path(e.refusal())).into_response()
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
        launch::login(state, &init, &state.origin(headers)).await
    }
    .await;
    match started {
        Ok((location, value)) => {
            // The platform's form posts the launch from its own site: only a
            // `SameSite=None` cookie comes with it, and browsers keep such a
            // cookie only when it is `Secure` (LTI runs over HTTPS; browsers
            // treat http://127.0.0.1 and localhost as secure too).
            let cookie = format!("{STATE_COOKIE}={value}; Path=/lti; HttpOnly; SameSite=None; Secure; Max-Age={}", launch::WINDOW.as_secs());
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

async fn launch_post(State(state): State<AppState>, ClientAddr(client): ClientAddr, headers: HeaderMap, ApiForm(form): ApiForm<LaunchForm>) -> Response {
    let Some(cookie) = auth::cookie(&headers, STATE_COOKIE) else {
        // Inside an LMS frame whose browser blocks other sites' cookies, the
        // launch cannot be tied to this browser. It is refused, and offered
        // again in a window of its own, where the cookie is this site's.
        tracing::warn!("an LMS launch came without its state cookie");
        let again = launch::restart(&state, &form.state).await.ok().flatten();
        return crate::server::accounts::refused::page(&state, crate::refusals::AccountRefusal::LtiNoCookie, again.map(|to| (to, "Open Margin in a new window".to_string())));
    };
    let done = async {
        let launch = launch::verify(&state, &form.id_token, &form.state, cookie).await?;
        if launch.message_type() == launch::DEEP_LINKING {
            if !people::teaches(&launch) {
                return Err(LtiError::Refused(crate::refusals::AccountRefusal::LtiFailed, "a Deep Linking request from someone who does not teach".into()));
            }
            let user = people::account(&state, client, &launch, true).await?;
            if user.is_student() {
                return Err(LtiError::Refused(crate::refusals::AccountRefusal::LtiFailed, "a Deep Linking request for a student's account".into()));
            }
            let pick = deep_linking::begin(&state.db, &launch, &user).await?;
            tracing::info!(user = %user.id, platform = %launch.platform.id, "LMS Deep Linking request");
            return Ok((user, format!("/lti/pick/{pick}")));
        }
        let (user, to) = people::land(&state, client, &launch).await?;
        super::roster::after_launch(&state, &launch).await?;
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

/// The server's shared keys, while a registration made before keys were
/// kept apart still signs with them.
async fn jwks(State(state): State<AppState>) -> Result<Response> {
    let keys = keys::jwks(&state.db, None).await?;
    Ok(([(header::CACHE_CONTROL, "public, max-age=3600")], Json(keys)).into_response())
}

#[derive(Deserialize)]
struct DynamicQuery {
    #[serde(default)]
    openid_configuration: String,
    #[serde(default)]
    registration_token: Option<String>,
}

/// The LMS registers itself, inside its own page: a page saying how it
/// went, framed by the LMS, which tells the LMS it is done.
async fn dynamic_registration(
    State(state): State<AppState>,
    headers: HeaderMap,
    nonce: Option<axum::Extension<crate::server::http::headers::CspNonce>>,
    ApiPath(token): ApiPath<String>,
    ApiQuery(q): ApiQuery<DynamicQuery>,
) -> Response {
    use leptos::prelude::*;
    let done = super::dynamic::register(&state, &token, q.openid_configuration.trim(), q.registration_token.as_deref(), &state.origin(&headers)).await;
    let (status, heading, sentence) = match &done {
        Ok(p) => (StatusCode::OK, "Margin is registered".to_string(), format!("{} can now open Margin for your school. Your school's Margin admin sees it on the School page.", p.name)),
        Err(super::dynamic::Refused(why)) => {
            tracing::warn!(reason = %why, "an LMS's dynamic registration was refused");
            (StatusCode::BAD_REQUEST, "Margin is not registered".to_string(), why.clone())
        }
    };
    let page = view! {
        <main class="page narrow">
            <h1>{heading}</h1>
            <p role=if done.is_ok() { "status" } else { "alert" }>{sentence}</p>
        </main>
    }
    .to_html();
    let nonce = nonce.map(|n| n.0 .0.clone()).unwrap_or_default();
    // LTI Dynamic Registration: the tool tells the platform's page it is done.
    let close = if done.is_ok() {
        format!("<script nonce=\"{nonce}\">(window.opener || window.parent).postMessage({{subject: \"org.imsglobal.lti.close\"}}, \"*\");</script>")
    } else {
        String::new()
    };
    let html = format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Registering Margin</title><link rel=\"stylesheet\" href=\"{}\"></head><body>{page}{close}</body></html>",
        crate::server::http::assets::stylesheet(&state.leptos_options)
    );
    let mut res = (status, axum::response::Html(html)).into_response();
    if let Some(framer) = crate::server::config::origin_of(&q.openid_configuration) {
        res.extensions_mut().insert(crate::server::http::headers::FramedBy(framer));
    }
    res
}

#[derive(serde::Serialize)]
struct DynamicAddress {
    url: String,
}

async fn api_dynamic(State(state): State<AppState>, CurrentUser(user): CurrentUser, headers: HeaderMap) -> Result<Response> {
    let token = super::dynamic::invite(&state.db, &user).await?;
    let url = format!("{}/lti/register/{token}", state.origin(&headers));
    Ok((StatusCode::CREATED, Json(DynamicAddress { url })).into_response())
}

async fn form_dynamic(State(state): State<AppState>, user: Result<Option<CurrentUser>>) -> Response {
    let made = async {
        let user = user?.ok_or(AppError::Unauthorized)?.0;
        super::dynamic::invite(&state.db, &user).await
    }
    .await;
    match made {
        Ok(token) => Redirect::to(&format!("/school?lti-registration={token}#lms")).into_response(),
        Err(e) => school_answer(Err(e), ""),
    }
}

/// One registration's keys: the address its LMS is given.
async fn registration_jwks(State(state): State<AppState>, ApiPath(id): ApiPath<String>) -> Result<Response> {
    platforms::get(&state.db, &id).await?.ok_or(AppError::NotFound)?;
    let keys = keys::jwks(&state.db, Some(&id)).await?;
    Ok(([(header::CACHE_CONTROL, "public, max-age=3600")], Json(keys)).into_response())
}

/// Gives a registration that signed with the shared key a key of its own
/// (its LMS must already read the registration's own keys address).
async fn api_own_key(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath(id): ApiPath<String>) -> Result<StatusCode> {
    own_key(&state, &user, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}

async fn form_own_key(State(state): State<AppState>, user: Result<Option<CurrentUser>>, ApiPath(id): ApiPath<String>) -> Response {
    school_answer(
        async {
            let user = user?.ok_or(AppError::Unauthorized)?.0;
            own_key(&state, &user, &id).await
        }
        .await,
        "lti-own-key",
    )
}

async fn own_key(state: &AppState, user: &crate::models::UserInfo, id: &str) -> Result<()> {
    let school = admin_school(user)?;
    let platform = platforms::get(&state.db, &id).await?.filter(|p| p.school_id == school).ok_or(AppError::NotFound)?;
    if keys::has_own(&state.db, &platform.id).await? {
        return Err(AppError::Conflict("This registration has its own key already.".into()));
    }
    keys::rotate(&state.db, Some(&platform.id)).await?;
    Ok(())
}

#[derive(Deserialize)]
struct PickForm {
    #[serde(default)]
    lesson: String,
}

/// The teacher's choice: a page whose form carries the signed answer back
/// to the platform (its origin joins this page's `form-action`).
async fn pick(State(state): State<AppState>, user: Result<Option<CurrentUser>>, headers: HeaderMap, ApiPath(id): ApiPath<String>, ApiForm(form): ApiForm<PickForm>) -> Response {
    let Ok(Some(CurrentUser(user))) = user else { return Redirect::to("/signin").into_response() };
    match deep_linking::answer(&state.db, &user, &id, &form.lesson, &state.origin(&headers)).await {
        Ok(deep_linking::Answer { return_url, jwt, platform, title }) => {
            use leptos::prelude::*;
            let heading = format!("“{title}” is ready for {platform}");
            let button = format!("Add it to {platform}");
            let page = view! {
                <main class="page narrow">
                    <h1>{heading}</h1>
                    <form method="post" action=return_url.clone()>
                        <input type="hidden" name="JWT" value=jwt/>
                        <button type="submit" class="primary">{button}</button>
                    </form>
                </main>
            }
            .to_html();
            let html = format!("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Back to your LMS · Margin</title><link rel=\"stylesheet\" href=\"{}\"></head><body>{page}</body></html>", crate::server::http::assets::stylesheet(&state.leptos_options));
            let mut res = axum::response::Html(html).into_response();
            res.extensions_mut().insert(crate::server::http::headers::FormActionAlso(return_url));
            res
        }
        // Used, expired, another teacher's, or a lesson not theirs: the page says so.
        Err(AppError::NotFound) => Redirect::to(&format!("/lti/pick/{}", crate::url::percent_encode(&id))).into_response(),
        Err(e) => {
            tracing::error!(error = %e, "a Deep Linking answer failed");
            Redirect::to("/signin?error=server").into_response()
        }
    }
}

async fn api_roster(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath(id): ApiPath<String>) -> Result<Json<super::roster::Synced>> {
    crate::server::classes::get(&state.db, &user.id, &id).await?;
    match super::roster::sync(&state, &id).await {
        Ok(Some(synced)) => Ok(Json(synced)),
        Ok(None) => Err(AppError::BadRequest("This class is not a course of an LMS that lists its members.".into())),
        Err(why) => {
            tracing::warn!(class = %id, reason = %why, "the roster could not be read from the LMS");
            Err(AppError::Unavailable("The LMS did not give Margin the course's members. Try again later.".into()))
        }
    }
}

/// A platform as its School page and the API show it.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Registered {
    #[serde(flatten)]
    platform: Platform,
    deployments: Vec<String>,
    /// The keys address its LMS must be given.
    tool_jwks_url: String,
    /// Whether it signs with its own key (not the server's shared one).
    own_key: bool,
}

async fn api_list(State(state): State<AppState>, CurrentUser(user): CurrentUser, headers: HeaderMap) -> Result<Json<Vec<Registered>>> {
    let school = admin_school(&user)?;
    let origin = state.origin(&headers);
    let mut out = Vec::new();
    for (platform, deployments) in platforms::of_school(&state.db, school).await? {
        let own_key = keys::has_own(&state.db, &platform.id).await?;
        out.push(Registered { tool_jwks_url: format!("{origin}/lti/jwks/{}", platform.id), own_key, platform, deployments });
    }
    Ok(Json(out))
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
