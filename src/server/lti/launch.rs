//! A launch, LTI 1.3's OpenID Connect third-party initiated login: the
//! platform asks Margin to start (`login`), Margin sends the browser back to
//! the platform's authorization address with a fresh state and nonce (kept
//! ten minutes, one use), and the platform posts an ID token to
//! `/lti/launch` (`verify`): signed with one of the platform's published
//! keys, from its issuer, for Margin's client id, unexpired, carrying the
//! nonce Margin sent, LTI 1.3.0, for a deployment the school registered,
//! in the browser that started it (the state's cookie, sent cross-site).
//! A replayed launch finds its state used and is refused.

use std::time::Duration;

use openidconnect::{core::{CoreIdToken, CoreIdTokenVerifier}, ClaimsVerificationError, ClientId, IssuerUrl, Nonce};
use serde::Deserialize;
use serde_json::Value;

use super::platforms::{self, Platform};
use crate::{
    refusals::AccountRefusal,
    server::{
        db,
        error::AppError,
        http::outbound::error_chain,
        ids::{random_hex, token_hash},
        state::AppState,
    },
};

/// How long a launch may take at the platform.
pub const WINDOW: Duration = Duration::from_secs(600);

/// The LTI claims' common prefix.
pub const CLAIM: &str = "https://purl.imsglobal.org/spec/lti/claim/";
/// Deep Linking's claims' prefix.
pub const DL_CLAIM: &str = "https://purl.imsglobal.org/spec/lti-dl/claim/";
pub const RESOURCE_LINK: &str = "LtiResourceLinkRequest";
pub const DEEP_LINKING: &str = "LtiDeepLinkingRequest";

/// Why a launch stopped: the person reads the refusal; the reason goes to the log.
#[derive(Debug, thiserror::Error)]
pub enum LtiError {
    #[error("refused ({code}): {reason}", code = .0.code(), reason = .1)]
    Refused(AccountRefusal, String),
    #[error(transparent)]
    App(#[from] AppError),
}

impl LtiError {
    pub fn refusal(&self) -> AccountRefusal {
        match self {
            Self::Refused(r, _) => *r,
            Self::App(AppError::TooManyRequests(s) | AppError::Busy(s)) => AccountRefusal::TooManyAttempts(*s),
            Self::App(AppError::Account(r)) => *r,
            Self::App(_) => AccountRefusal::Server,
        }
    }

    pub(super) fn failed(reason: impl Into<String>) -> Self {
        Self::Refused(AccountRefusal::LtiFailed, reason.into())
    }
}

impl From<sqlx::Error> for LtiError {
    fn from(e: sqlx::Error) -> Self {
        Self::App(e.into())
    }
}

/// The platform's login initiation (GET or POST).
#[derive(Clone, Debug, Default, Deserialize, serde::Serialize)]
pub struct Initiation {
    #[serde(default)]
    pub iss: String,
    #[serde(default)]
    pub login_hint: String,
    #[serde(default)]
    pub target_link_uri: String,
    #[serde(default)]
    pub lti_message_hint: Option<String>,
    #[serde(default)]
    pub client_id: Option<String>,
    #[serde(default)]
    pub lti_deployment_id: Option<String>,
}

/// Starts a launch: where to send the browser (the platform's authorization
/// address, with the request), and the state for the cookie.
pub async fn login(state: &AppState, init: &Initiation, origin: &str) -> Result<(String, String), LtiError> {
    if init.iss.is_empty() || init.login_hint.is_empty() {
        return Err(LtiError::failed("the login initiation has no issuer or login hint"));
    }
    let platform = platforms::find(&state.db, &init.iss, init.client_id.as_deref())
        .await?
        .ok_or_else(|| LtiError::Refused(AccountRefusal::LtiUnknown, format!("no platform registered for issuer {}", init.iss.chars().take(120).collect::<String>())))?;
    if let Some(d) = init.lti_deployment_id.as_deref().filter(|d| !d.is_empty()) {
        if !platforms::deployment_known(&state.db, &platform.id, d).await? {
            return Err(LtiError::Refused(AccountRefusal::LtiUnknown, "the deployment is not registered".into()));
        }
    }
    let (state_value, nonce) = (random_hex(24), random_hex(24));
    sqlx::query("DELETE FROM lti_logins WHERE expires_at < $1").bind(db::time::now()).execute(&state.db).await?;
    let initiation = serde_urlencoded::to_string(init).unwrap_or_default();
    sqlx::query("INSERT INTO lti_logins (state_hash, platform_id, nonce, expires_at, initiation) VALUES ($1, $2, $3, $4, $5)")
        .bind(token_hash(&state_value))
        .bind(&platform.id)
        .bind(&nonce)
        .bind(db::time::from_now(WINDOW))
        .bind(initiation.chars().take(8000).collect::<String>())
        .execute(&state.db)
        .await?;
    let redirect = format!("{}/lti/launch", origin.trim_end_matches('/'));
    let mut query = vec![
        ("scope", "openid"),
        ("response_type", "id_token"),
        ("response_mode", "form_post"),
        ("prompt", "none"),
        ("client_id", platform.client_id.as_str()),
        ("redirect_uri", redirect.as_str()),
        ("login_hint", init.login_hint.as_str()),
        ("state", state_value.as_str()),
        ("nonce", nonce.as_str()),
    ];
    if let Some(hint) = init.lti_message_hint.as_deref() {
        query.push(("lti_message_hint", hint));
    }
    let sep = if platform.login_url.contains('?') { '&' } else { '?' };
    Ok((format!("{}{sep}{}", platform.login_url, crate::url::query(&query)), state_value))
}

/// A verified launch: the platform, who, and every claim.
#[derive(Clone, Debug)]
pub struct Launch {
    pub platform: Platform,
    pub subject: String,
    /// The email claim: shown to the person's teacher, never matched.
    pub email: Option<String>,
    pub claims: Value,
}

impl Launch {
    /// An LTI claim (`…/claim/{name}`).
    pub fn lti(&self, name: &str) -> &Value {
        &self.claims[format!("{CLAIM}{name}").as_str()]
    }

    /// A Deep Linking claim (`…/lti-dl/claim/{name}`).
    pub fn deep_linking(&self, name: &str) -> &Value {
        &self.claims[format!("{DL_CLAIM}{name}").as_str()]
    }

    pub fn message_type(&self) -> &str {
        self.lti("message_type").as_str().unwrap_or_default()
    }
}

/// A launch that came back without its cookie, started again: the same
/// initiation at `/lti/login`, for a window of its own. The state is used
/// up, so the launch that came cannot be taken afterwards.
pub async fn restart(state: &AppState, returned: &str) -> Result<Option<String>, LtiError> {
    if returned.is_empty() {
        return Ok(None);
    }
    let row: Option<(String, String)> = sqlx::query_as("DELETE FROM lti_logins WHERE state_hash = $1 RETURNING initiation, expires_at")
        .bind(token_hash(returned))
        .fetch_optional(&state.db)
        .await?;
    Ok(row.filter(|(initiation, expires_at)| !initiation.is_empty() && *expires_at >= db::time::now()).map(|(initiation, _)| format!("/lti/login?{initiation}")))
}

/// Verifies a launch's ID token against the state it came back with and
/// the cookie of the browser that started it (without which a launch could
/// be posted into anyone's browser: it is refused before this).
pub async fn verify(state: &AppState, id_token: &str, returned: &str, cookie: &str) -> Result<Launch, LtiError> {
    let expired = |why: &str| LtiError::Refused(AccountRefusal::LtiExpired, why.into());
    if returned.is_empty() {
        return Err(expired("the launch has no state"));
    }
    if cookie != returned {
        return Err(expired("the state is not the one this browser started with"));
    }
    // One use, even when two launches race: the one whose DELETE returns the row goes on.
    let row: Option<(String, String, String)> = sqlx::query_as("DELETE FROM lti_logins WHERE state_hash = $1 RETURNING platform_id, nonce, expires_at")
        .bind(token_hash(returned))
        .fetch_optional(&state.db)
        .await?;
    let Some((platform_id, nonce, expires_at)) = row else { return Err(expired("no launch was started with this state, or it was used")) };
    if expires_at < db::time::now() {
        return Err(expired("the launch took longer than ten minutes"));
    }
    let platform = platforms::get(&state.db, &platform_id).await?.ok_or_else(|| LtiError::Refused(AccountRefusal::LtiUnknown, "the platform was removed".into()))?;
    let token: CoreIdToken = id_token.trim().parse().map_err(|e| LtiError::failed(format!("the ID token is not a JWT: {e}")))?;
    let nonce = Nonce::new(nonce);
    let check = |keys| -> Result<(String, Option<String>), ClaimsVerificationError> {
        let issuer = IssuerUrl::new(platform.issuer.clone()).map_err(|e| ClaimsVerificationError::Other(e.to_string()))?;
        let verifier = CoreIdTokenVerifier::new_public_client(ClientId::new(platform.client_id.clone()), issuer, keys);
        let claims = token.claims(&verifier, &nonce)?;
        Ok((claims.subject().to_string(), claims.email().map(|e| e.to_string())))
    };
    let keys = state.lti_keys.of(&platform, false).await.map_err(LtiError::failed)?;
    let verified = match check(keys) {
        Err(ClaimsVerificationError::SignatureVerification(_)) => check(state.lti_keys.of(&platform, true).await.map_err(LtiError::failed)?),
        other => other,
    };
    let (subject, email) = verified.map_err(|e| LtiError::failed(format!("the ID token did not verify: {}", error_chain(&e))))?;
    let claims = crate::server::http::outbound::verified_claims(id_token).ok_or_else(|| LtiError::failed("the ID token's claims are not JSON"))?;
    let launch = Launch { platform, subject, email, claims };
    if launch.lti("version").as_str() != Some("1.3.0") {
        return Err(LtiError::failed("not an LTI 1.3.0 launch"));
    }
    let deployment = launch.lti("deployment_id").as_str().unwrap_or_default().to_string();
    if !platforms::deployment_known(&state.db, &launch.platform.id, &deployment).await? {
        return Err(LtiError::Refused(AccountRefusal::LtiUnknown, format!("deployment {} is not registered", deployment.chars().take(80).collect::<String>())));
    }
    if !matches!(launch.message_type(), RESOURCE_LINK | DEEP_LINKING) {
        return Err(LtiError::failed(format!("a message Margin does not take: {}", launch.message_type().chars().take(60).collect::<String>())));
    }
    Ok(launch)
}

