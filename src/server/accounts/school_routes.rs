//! The school's admin doors: the school as JSON (`/api/school…`) and the
//! plain forms of the School page (`/school/…`), which answer with redirects
//! like the lesson forms and need no code in the browser. Every door checks
//! on the server that the session's account is its school's admin; a
//! teacher gets 403 (JSON) or the page's refusal.

use axum::{
    extract::State,
    http::StatusCode,
    response::{IntoResponse, Redirect, Response},
    routing::{delete, get, post},
    Json, Router,
};
use serde::Deserialize;

use crate::server::{
    accounts::budget,
    accounts::current_user::CurrentUser,
    accounts::operators,
    error::{AppError, Result},
    http::extractors::{ApiForm, ApiJson, ApiPath},
    accounts::schools::{self, NewInvite},
    state::AppState,
};
use crate::{
    chat::message::UsageSummary,
    models::{SchoolOverview, UserInfo},
};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/school", get(api_school).patch(api_update))
        .route("/api/school/invites", post(api_invite))
        .route("/api/school/invites/{id}", delete(api_revoke))
        .route("/api/school/credits", post(api_credits))
        .route("/school/invites", post(form_invite))
        .route("/school/invites/{id}/revoke", post(form_revoke))
        .route("/api/school/members/{id}/approve", post(api_approve))
        .route("/api/school/members/{id}/decline", post(api_decline))
        .route("/school/members/{id}/approve", post(form_approve))
        .route("/school/members/{id}/decline", post(form_decline))
        .route("/api/school/members/{id}/remove", post(api_remove_member))
        .route("/school/members/{id}/remove", post(form_remove_member))
        .route("/school/credits", post(form_credits))
        .route("/school/settings", post(form_settings))
        .route("/api/school/retention", axum::routing::put(api_keeping))
        .route("/school/retention", post(form_keeping))
}

/// The admin's school, as the page and the API show it.
pub async fn overview(state: &AppState, user: &UserInfo) -> Result<SchoolOverview> {
    let school_id = schools::admin_school(user)?;
    let now = state.clock.now();
    let default = budget::default_allowance(state.config.monthly_tokens);
    let (from, to) = budget::month_window(now);
    let origin = state.config.public_origin.clone().unwrap_or_else(|| format!("http://{}", state.leptos_options.site_addr));
    let mut lms = Vec::new();
    for (p, deployments) in crate::server::lti::platforms::of_school(&state.db, school_id).await? {
        let own_key = crate::server::lti::keys::has_own(&state.db, &p.id).await?;
        lms.push(crate::models::LmsPlatform { tool_jwks_url: format!("{origin}/lti/jwks/{}", p.id), id: p.id, name: p.name, issuer: p.issuer, client_id: p.client_id, deployments, own_key });
    }
    let keeping = super::keeping::of_school(&state.db, school_id).await?;
    Ok(SchoolOverview {
        school: schools::get(&state.db, school_id).await?,
        usage: budget::summary(&state.db, school_id, default, now).await?,
        server_allowance: server_allowance(state),
        operator: operators::is_operator(&state.db, &user.id).await?,
        storage_limit: crate::server::accounts::quota::usage(&state.db, &user.id).await?.1,
        members: schools::members(&state.db, school_id, &from, &to).await?,
        invites: schools::open_invites(&state.db, school_id).await?,
        frameworks: crate::server::standards::frameworks::list(&state.db, school_id).await?,
        sso_links: crate::server::accounts::sso::school_links::of_school(state, school_id).await?,
        sso_options: crate::server::accounts::sso::school_links::options(state, user).await?,
        sso_student_domains: crate::server::accounts::sso::school_links::student_domains(&state.db, school_id).await?,
        lms,
        origin,
        help_sentence: super::help::own_help_sentence(&state.db, school_id).await?.unwrap_or_default(),
        help_default: super::help::DEFAULT_HELP.to_string(),
        keep_tutor_chats_days: keeping.tutor_chats_days,
        keep_teacher_chats_days: keeping.teacher_chats_days,
        keep_audit_days: keeping.audit_days.unwrap_or(super::keeping::AUDIT_DAYS),
    })
}

fn server_allowance(state: &AppState) -> Option<i64> {
    state.config.monthly_tokens.map(|n| i64::try_from(n).unwrap_or(i64::MAX))
}

/// Why a school's admin who is not an operator cannot add credits.
const CREDITS_ARE_THE_OPERATORS: &str =
    "Credits are added by whoever runs this Margin server (with `margin credits add`, or signed in as an operator). Ask them for more.";

/// Sets the school's own allowance when `user` may (`operators::may_set_allowance`).
async fn set_allowance(state: &AppState, user: &UserInfo, school_id: &str, wanted: Option<i64>) -> Result<()> {
    let operator = operators::is_operator(&state.db, &user.id).await?;
    let server = server_allowance(state);
    if !operators::may_set_allowance(wanted, server, operator) {
        let cap = server.map(crate::chat::message::thousands).unwrap_or_default();
        return Err(AppError::Forbidden(format!(
            "A school's allowance can be at most the server's ({cap} tokens a month). Whoever runs this Margin server can raise it."
        )));
    }
    budget::set_allowance(&state.db, school_id, wanted).await
}

/// Adds credits when `user` is an operator; a school's admin is refused.
async fn grant(state: &AppState, user: &UserInfo, school_id: &str, tokens: i64) -> Result<()> {
    if !operators::is_operator(&state.db, &user.id).await? {
        return Err(AppError::Forbidden(CREDITS_ARE_THE_OPERATORS.into()));
    }
    budget::add_credits(&state.db, school_id, tokens, Some(&user.id), state.clock.now()).await
}

async fn api_school(State(state): State<AppState>, CurrentUser(user): CurrentUser) -> Result<Json<SchoolOverview>> {
    Ok(Json(overview(&state, &user).await?))
}

/// A change to the school: its name, its own allowance (`null`: the
/// server's; a negative number: unlimited).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SchoolUpdate {
    name: Option<String>,
    #[serde(default, deserialize_with = "some_or_null")]
    monthly_tokens: Option<Option<i64>>,
    /// What each teacher, and each student, may use a month (`null`: no share).
    #[serde(default, deserialize_with = "some_or_null")]
    teacher_share: Option<Option<i64>>,
    #[serde(default, deserialize_with = "some_or_null")]
    student_share: Option<Option<i64>>,
}

/// A field that may be absent (`None`), `null` (`Some(None)`) or a value.
fn some_or_null<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Option<Option<i64>>, D::Error> {
    Ok(Some(Option::deserialize(d)?))
}

async fn api_update(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiJson(body): ApiJson<SchoolUpdate>) -> Result<Json<SchoolOverview>> {
    let school_id = schools::admin_school(&user)?.to_string();
    if let Some(name) = &body.name {
        schools::rename(&state.db, &user, name).await?;
    }
    if let Some(tokens) = body.monthly_tokens {
        set_allowance(&state, &user, &school_id, tokens).await?;
    }
    if body.teacher_share.is_some() || body.student_share.is_some() {
        let now = schools::get(&state.db, &school_id).await?;
        let teacher = body.teacher_share.unwrap_or(now.teacher_share);
        let student = body.student_share.unwrap_or(now.student_share);
        budget::set_shares(&state.db, &school_id, teacher, student).await?;
    }
    Ok(Json(overview(&state, &user).await?))
}

async fn api_invite(State(state): State<AppState>, CurrentUser(user): CurrentUser) -> Result<Response> {
    let invite: NewInvite = schools::create_invite(&state.db, &user).await?;
    Ok((StatusCode::CREATED, Json(invite)).into_response())
}

async fn api_revoke(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath(id): ApiPath<String>) -> Result<StatusCode> {
    schools::revoke_invite(&state.db, &user, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Deserialize)]
struct Credits {
    tokens: i64,
}

async fn api_credits(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiJson(body): ApiJson<Credits>) -> Result<Json<UsageSummary>> {
    let school_id = schools::admin_school(&user)?;
    let now = state.clock.now();
    grant(&state, &user, school_id, body.tokens).await?;
    let default = budget::default_allowance(state.config.monthly_tokens);
    Ok(Json(budget::summary(&state.db, school_id, default, now).await?))
}

/// Where a School form goes next: back to the page, with what happened.
fn answer(done: Result<String>) -> Response {
    match done {
        Ok(to) => Redirect::to(&to).into_response(),
        Err(AppError::Unauthorized) => Redirect::to("/signin?next=/school").into_response(),
        Err(AppError::Forbidden(_)) => Redirect::to("/school").into_response(),
        Err(AppError::BadRequest(_)) => Redirect::to("/school?error=input").into_response(),
        Err(e) => {
            tracing::error!(error = %e, "a school form failed");
            Redirect::to("/school?error=server").into_response()
        }
    }
}

fn signed_in(user: Result<Option<CurrentUser>>) -> Result<UserInfo> {
    Ok(user?.ok_or(AppError::Unauthorized)?.0)
}

/// "Invite a teacher": back to the page, which shows the new link once.
async fn form_invite(State(state): State<AppState>, user: Result<Option<CurrentUser>>) -> Response {
    answer(async {
        let user = signed_in(user)?;
        let invite = schools::create_invite(&state.db, &user).await?;
        Ok(format!("/school?invited={}", invite.token))
    }
    .await)
}

async fn form_revoke(State(state): State<AppState>, user: Result<Option<CurrentUser>>, ApiPath(id): ApiPath<String>) -> Response {
    answer(async {
        let user = signed_in(user)?;
        schools::revoke_invite(&state.db, &user, &id).await?;
        Ok("/school".to_string())
    }
    .await)
}

async fn api_approve(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath(id): ApiPath<String>) -> Result<StatusCode> {
    schools::decide(&state.db, &user, &id, true).await?;
    Ok(StatusCode::NO_CONTENT)
}

async fn api_decline(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath(id): ApiPath<String>) -> Result<StatusCode> {
    schools::decide(&state.db, &user, &id, false).await?;
    Ok(StatusCode::NO_CONTENT)
}

async fn api_remove_member(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath(id): ApiPath<String>) -> Result<StatusCode> {
    schools::remove_member(&state.db, &user, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}

async fn form_remove_member(State(state): State<AppState>, user: Result<Option<CurrentUser>>, ApiPath(id): ApiPath<String>) -> Response {
    answer(async {
        let user = signed_in(user)?;
        schools::remove_member(&state.db, &user, &id).await?;
        Ok("/school?done=removed".to_string())
    }
    .await)
}

async fn form_approve(State(state): State<AppState>, user: Result<Option<CurrentUser>>, ApiPath(id): ApiPath<String>) -> Response {
    answer(async {
        let user = signed_in(user)?;
        schools::decide(&state.db, &user, &id, true).await?;
        Ok("/school?done=approved".to_string())
    }
    .await)
}

async fn form_decline(State(state): State<AppState>, user: Result<Option<CurrentUser>>, ApiPath(id): ApiPath<String>) -> Response {
    answer(async {
        let user = signed_in(user)?;
        schools::decide(&state.db, &user, &id, false).await?;
        Ok("/school?done=declined".to_string())
    }
    .await)
}

#[derive(Deserialize)]
struct CreditsForm {
    #[serde(default)]
    tokens: String,
}

/// "Add credits".
async fn form_credits(State(state): State<AppState>, user: Result<Option<CurrentUser>>, ApiForm(form): ApiForm<CreditsForm>) -> Response {
    answer(async {
        let user = signed_in(user)?;
        let school_id = schools::admin_school(&user)?;
        let tokens = parse_tokens(&form.tokens).ok_or_else(|| AppError::BadRequest("tokens".into()))?;
        // The admin passed `admin_school`: a refusal now is the operator's to lift.
        match grant(&state, &user, school_id, tokens).await {
            Ok(()) => Ok("/school?done=credits".to_string()),
            Err(AppError::Forbidden(_)) => Ok("/school?error=operator#credits".to_string()),
            Err(e) => Err(e),
        }
    }
    .await)
}

#[derive(Deserialize)]
struct SettingsForm {
    #[serde(default)]
    name: String,
    /// Empty: the server's allowance.
    #[serde(default)]
    monthly_tokens: String,
    /// Empty: no share of their own.
    #[serde(default)]
    teacher_share: String,
    #[serde(default)]
    student_share: String,
}

/// The school's name and its own monthly allowance.
async fn form_settings(State(state): State<AppState>, user: Result<Option<CurrentUser>>, ApiForm(form): ApiForm<SettingsForm>) -> Response {
    answer(async {
        let user = signed_in(user)?;
        let school_id = schools::admin_school(&user)?.to_string();
        let optional = |text: &str| match text.trim() {
            "" => Ok(None),
            text => parse_tokens(text).map(Some).ok_or_else(|| AppError::BadRequest("tokens".into())),
        };
        let allowance = optional(&form.monthly_tokens)?;
        let (teacher_share, student_share) = (optional(&form.teacher_share)?, optional(&form.student_share)?);
        match set_allowance(&state, &user, &school_id, allowance).await {
            Ok(()) => {}
            Err(AppError::Forbidden(_)) => return Ok("/school?error=allowance".to_string()),
            Err(e) => return Err(e),
        }
        schools::rename(&state.db, &user, &form.name).await?;
        budget::set_shares(&state.db, &school_id, teacher_share, student_share).await?;
        Ok("/school?done=settings".to_string())
    }
    .await)
}

/// How long the school keeps chats (`accounts::keeping`), as JSON.
async fn api_keeping(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiJson(body): ApiJson<super::keeping::Keeping>) -> Result<Json<super::keeping::Keeping>> {
    let school_id = schools::admin_school(&user)?;
    super::keeping::set(&state.db, school_id, body).await?;
    Ok(Json(super::keeping::of_school(&state.db, school_id).await?))
}

#[derive(Deserialize)]
struct KeepingForm {
    #[serde(default)]
    tutor_chats_days: String,
    #[serde(default)]
    teacher_chats_days: String,
    #[serde(default)]
    audit_days: String,
}

/// The School page's "How long chats are kept" (empty: until deleted).
async fn form_keeping(State(state): State<AppState>, user: Result<Option<CurrentUser>>, ApiForm(form): ApiForm<KeepingForm>) -> Response {
    answer(async {
        let user = signed_in(user)?;
        let school_id = schools::admin_school(&user)?.to_string();
        let days = |text: &str| match text.trim() {
            "" => Ok(None),
            t => t.parse::<i64>().map(Some).map_err(|_| AppError::BadRequest("Write a number of days, or leave it empty.".into())),
        };
        let keeping = super::keeping::Keeping {
            tutor_chats_days: days(&form.tutor_chats_days)?,
            teacher_chats_days: days(&form.teacher_chats_days)?,
            audit_days: days(&form.audit_days)?,
        };
        super::keeping::set(&state.db, &school_id, keeping).await?;
        Ok("/school?done=retention".to_string())
    }
    .await)
}

/// A number of tokens as typed: "200000", "200,000" or "200 000".
fn parse_tokens(text: &str) -> Option<i64> {
    let digits: String = text.chars().filter(|c| !matches!(c, ',' | ' ' | '_' | '.')).collect();
    digits.parse::<i64>().ok().filter(|n| *n > 0)
}

#[cfg(test)]
mod tests {
    use super::parse_tokens;

    #[test]
    fn tokens_are_read_as_typed() {
        assert_eq!(parse_tokens("200,000"), Some(200_000));
        assert_eq!(parse_tokens(" 50 000 "), Some(50_000));
        assert_eq!(parse_tokens("-5"), None);
        assert_eq!(parse_tokens("lots"), None);
        assert_eq!(parse_tokens("0"), None);
    }
}
