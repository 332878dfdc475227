//! The doors of school-account sign-in. Browsers only: each answers with a
//! redirect, and a refusal comes back to the page it started from as a
//! short code (`refusals::AccountRefusal`), the reason in the log.
//!
//! - `GET /auth/sso/{provider}[?next=…][&join=…]`: off to the provider;
//! - `GET /auth/sso/{provider}/link`: the same, to link the identity to the
//!   signed-in account. A link, not a form: the page's `form-action 'self'`
//!   would stop a form's redirect to the provider. Another site cannot start
//!   it: a browser that says where a navigation comes from
//!   (`Sec-Fetch-Site`) must say this site;
//! - `GET /auth/sso/{provider}/callback`: back from the provider;
//! - `POST /account/sso/{provider}/unlink`, `POST /school/sso`,
//!   `POST /school/sso/remove`, `POST /school/sso/students`: the Account and
//!   School pages' forms;
//! - `GET /api/auth/sso`: the providers, for clients that draw their own buttons.

use axum::{
    extract::State,
    http::{header, HeaderMap},
    response::{IntoResponse, Redirect, Response},
    routing::{get, post},
    Json, Router,
};
use serde::Deserialize;

use super::{
    flow::{self, Purpose, SsoError, STATE_COOKIE},
    identities::{self, Outcome},
    school_links,
};
use crate::{
    models::SsoButton,
    refusals::AccountRefusal,
    server::{
        accounts::{
            auth,
            current_user::{CurrentUser, Member},
            routes::safe_next,
        },
        error::AppError,
        http::{
            client_addr::ClientAddr,
            extractors::{ApiForm, ApiPath, ApiQuery},
        },
        state::AppState,
    },
};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/auth/sso", get(api_providers))
        .route("/auth/sso/{provider}", get(begin))
        .route("/auth/sso/{provider}/link", get(begin_link))
        .route("/auth/sso/{provider}/callback", get(callback))
        .route("/account/sso/{provider}/unlink", post(form_unlink))
        .route("/school/sso", post(form_link_school))
        .route("/school/sso/remove", post(form_unlink_school))
        .route("/school/sso/students", post(form_student_domains))
}

#[derive(serde::Serialize)]
struct ProvidersReply {
    providers: Vec<SsoButton>,
}

async fn api_providers(State(state): State<AppState>) -> Json<ProvidersReply> {
    Json(ProvidersReply { providers: state.sso.buttons() })
}

#[derive(Deserialize, Default)]
struct BeginQuery {
    #[serde(default)]
    next: Option<String>,
    #[serde(default)]
    join: Option<String>,
}

/// The page a refusal goes back to.
fn back(purpose: &Purpose, refusal: AccountRefusal) -> Response {
    let code = refusal.code();
    let to = if purpose.link_user_id.is_some() {
        format!("/account?error={code}")
    } else if let Some(join) = purpose.join_code.as_deref().map(crate::server::classes::tidy_code).filter(|c| !c.is_empty()) {
        format!("/join/{join}?error={code}")
    } else {
        // A page of its own: the sign-in page sends a browser that is
        // signed in already (a shared classroom computer) straight home.
        crate::server::accounts::refused::path(refusal)
    };
    Redirect::to(&to).into_response()
}

fn state_cookie(state: &AppState, value: &str, max_age: u64) -> String {
    let secure = if state.config.secure_cookies { "; Secure" } else { "" };
    format!("{STATE_COOKIE}={value}; Path=/auth/sso; HttpOnly; SameSite=Lax; Max-Age={max_age}{secure}")
}

async fn go(state: &AppState, client: std::net::IpAddr, headers: &HeaderMap, provider: &str, purpose: Purpose) -> Response {
    if state.sso.get(provider).is_err() {
        return AppError::NotFound.into_response();
    }
    let started = async {
        state.limits.sign_in_started(client).await?;
        if purpose.join_code.is_some() {
            // A class code tried through a school account counts as any try.
            state.limits.join_code(client, None).await?;
        }
        flow::start(state, provider, &state.origin(headers), &purpose).await
    }
    .await;
    match started {
        Ok((location, value)) => ([(header::SET_COOKIE, state_cookie(state, &value, flow::WINDOW.as_secs()))], Redirect::to(&location)).into_response(),
        Err(e) => {
            tracing::warn!(provider, reason = %e, "school-account sign-in could not start");
            back(&purpose, e.refusal())
        }
    }
}

async fn begin(State(state): State<AppState>, ClientAddr(client): ClientAddr, headers: HeaderMap, ApiPath(provider): ApiPath<String>, ApiQuery(query): ApiQuery<BeginQuery>) -> Response {
    let purpose = Purpose {
        next_path: safe_next(query.next.as_deref()).chars().take(2000).collect(),
        join_code: query.join.map(|c| crate::server::classes::tidy_code(&c)).filter(|c| !c.is_empty()),
        link_user_id: None,
    };
    go(&state, client, &headers, &provider, purpose).await
}

async fn begin_link(State(state): State<AppState>, ClientAddr(client): ClientAddr, headers: HeaderMap, ApiPath(provider): ApiPath<String>, member: Result<Option<Member>, AppError>) -> Response {
    let Ok(Some(Member(user))) = member else { return Redirect::to("/signin?next=/account").into_response() };
    let purpose = Purpose { next_path: "/account".into(), join_code: None, link_user_id: Some(user.id) };
    let from_elsewhere = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok()).is_some_and(|site| !matches!(site, "same-origin" | "none"));
    if from_elsewhere {
        tracing::warn!(provider, "refused a school-account link started from another site");
        return back(&purpose, AccountRefusal::SsoFailed);
    }
    go(&state, client, &headers, &provider, purpose).await
}

#[derive(Deserialize, Default)]
struct CallbackQuery {
    #[serde(default)]
    code: Option<String>,
    #[serde(default)]
    state: Option<String>,
    /// The provider's own refusal (`access_denied` when the person said no).
    #[serde(default)]
    error: Option<String>,
}

async fn callback(State(state): State<AppState>, ClientAddr(client): ClientAddr, headers: HeaderMap, ApiPath(provider): ApiPath<String>, ApiQuery(query): ApiQuery<CallbackQuery>) -> Response {
    let clear = state_cookie(&state, "", 0);
    let returned = query.state.as_deref().unwrap_or_default();
    let (purpose, check) = match flow::take(&state, &provider, returned, auth::cookie(&headers, STATE_COOKIE)).await {
        Ok(taken) => taken,
        Err(e) => {
            tracing::warn!(provider, reason = %e, "school-account sign-in refused");
            return ([(header::SET_COOKIE, clear)], back(&Purpose::default(), e.refusal())).into_response();
        }
    };
    let done = async {
        if let Some(error) = &query.error {
            return Err(SsoError::Failed(format!("the provider answered {}", error.chars().take(60).collect::<String>())));
        }
        let code = query.code.as_deref().filter(|c| !c.is_empty()).ok_or_else(|| SsoError::Failed("the provider sent no code".into()))?;
        let identity = flow::finish(&state, &provider, code, check).await?;
        identities::resolve(&state, client, &identity, &purpose).await
    }
    .await;
    let answer = match done {
        Ok(Outcome::SignedIn(user)) => match auth::create_session(&state.db, &user.id, state.config.session_days).await {
            Ok(token) => {
                tracing::info!(user = %user.id, provider, "session started with a school account");
                let session = auth::session_cookie(&token, state.config.session_days, state.config.secure_cookies);
                let next = if user.is_student() && purpose.join_code.is_some() { "/learn" } else { safe_next(Some(&purpose.next_path)) };
                ([(header::SET_COOKIE, session)], Redirect::to(next)).into_response()
            }
            Err(e) => {
                tracing::error!(error = %e, "a school-account session could not start");
                back(&purpose, AccountRefusal::Server)
            }
        },
        Ok(Outcome::Linked(_)) => Redirect::to("/account?done=linked").into_response(),
        Err(e) => {
            match &e {
                SsoError::App(AppError::Internal(_)) => tracing::error!(provider, reason = %e, "school-account sign-in failed"),
                _ => tracing::warn!(provider, reason = %e, "school-account sign-in refused"),
            }
            back(&purpose, e.refusal())
        }
    };
    let mut answer = answer;
    if let Ok(value) = clear.parse() {
        answer.headers_mut().append(header::SET_COOKIE, value);
    }
    answer
}

async fn form_unlink(State(state): State<AppState>, member: Result<Option<Member>, AppError>, ApiPath(provider): ApiPath<String>) -> Response {
    let Ok(Some(Member(user))) = member else { return Redirect::to("/signin?next=/account").into_response() };
    match identities::unlink(&state, &user.id, &provider).await {
        Ok(()) => Redirect::to("/account?done=unlinked").into_response(),
        Err(AppError::BadRequest(_)) => Redirect::to("/account?error=last").into_response(),
        Err(e) => {
            tracing::error!(error = %e, "unlinking a school account failed");
            Redirect::to("/account?error=server").into_response()
        }
    }
}

#[derive(Deserialize)]
struct LinkForm {
    #[serde(default)]
    provider: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    value: String,
}

async fn form_link_school(State(state): State<AppState>, user: Result<Option<CurrentUser>, AppError>, ApiForm(form): ApiForm<LinkForm>) -> Response {
    let Ok(Some(CurrentUser(user))) = user else { return Redirect::to("/signin?next=/school").into_response() };
    school_answer(school_links::add(&state, &user, &form.provider, &form.kind, &form.value).await, "sso-linked")
}

async fn form_unlink_school(State(state): State<AppState>, user: Result<Option<CurrentUser>, AppError>, ApiForm(form): ApiForm<LinkForm>) -> Response {
    let Ok(Some(CurrentUser(user))) = user else { return Redirect::to("/signin?next=/school").into_response() };
    school_answer(school_links::remove(&state, &user, &form.provider, &form.kind, &form.value).await, "sso-removed")
}

#[derive(Deserialize)]
struct StudentDomainsForm {
    #[serde(default)]
    domains: String,
}

async fn form_student_domains(State(state): State<AppState>, user: Result<Option<CurrentUser>, AppError>, ApiForm(form): ApiForm<StudentDomainsForm>) -> Response {
    let Ok(Some(CurrentUser(user))) = user else { return Redirect::to("/signin?next=/school").into_response() };
    match school_links::set_student_domains(&state.db, &user, &form.domains).await {
        Err(AppError::BadRequest(_)) => Redirect::to("/school?error=student-domains#sign-in").into_response(),
        done => school_answer(done, "student-domains"),
    }
}

fn school_answer(done: Result<(), AppError>, ok: &str) -> Response {
    let to = match done {
        Ok(()) => format!("/school?done={ok}"),
        Err(AppError::Forbidden(_)) => "/school".into(),
        Err(AppError::BadRequest(_)) => "/school?error=sso-own".into(),
        Err(AppError::Conflict(_)) => "/school?error=sso-taken".into(),
        Err(e) => {
            tracing::error!(error = %e, "a school sign-in link failed");
            "/school?error=server".into()
        }
    };
    Redirect::to(&to).into_response()
}
