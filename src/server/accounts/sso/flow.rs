//! The sign-in itself, OpenID Connect's authorization code flow: `start`
//! sends the browser to the provider with a fresh state, nonce and PKCE
//! challenge (kept in `sso_logins` for ten minutes, one use; the state also
//! in a cookie, so the answer must come back to the browser that asked);
//! `finish` takes the code the provider sends back, exchanges it with the
//! verifier, and verifies the ID token against the provider's published keys
//! (signature, issuer, audience, expiry, nonce), reading the email from the
//! provider's UserInfo when the token has none (or no confirmation of it).
//! Only then is anyone named: `identities` decides whose account it is.

use openidconnect::{
    core::{CoreAuthenticationFlow, CoreClient, CoreIdToken},
    AuthorizationCode, ClaimsVerificationError, ClientId, ClientSecret, CsrfToken, Nonce, PkceCodeChallenge, PkceCodeVerifier, RedirectUrl, Scope,
    OAuth2TokenResponse, TokenResponse,
};

use super::providers::{ProviderConfig, ProviderError};
use crate::server::http::outbound::error_chain;
use crate::{
    refusals::AccountRefusal,
    server::{
        db,
        error::AppError,
        ids::{random_hex, token_hash},
        state::AppState,
    },
};

/// The cookie that holds a sign-in's state in the browser that started it.
pub const STATE_COOKIE: &str = "margin_sso";
/// How long a sign-in may take at the provider.
pub const WINDOW: std::time::Duration = std::time::Duration::from_secs(600);

/// Why a sign-in with a school account stopped. The person reads the
/// refusal's sentence; the reason goes to the log (never a token).
#[derive(Debug, thiserror::Error)]
pub enum SsoError {
    #[error("refused: {}", .0.code())]
    Refused(AccountRefusal),
    /// The provider failed or its answer did not verify: the reason.
    #[error("{0}")]
    Failed(String),
    /// The state is unknown, used, expired, or not this browser's.
    #[error("{0}")]
    Expired(&'static str),
    #[error(transparent)]
    App(#[from] AppError),
}

impl SsoError {
    pub fn refusal(&self) -> AccountRefusal {
        match self {
            Self::Refused(r) => *r,
            Self::Failed(_) => AccountRefusal::SsoFailed,
            Self::Expired(_) => AccountRefusal::SsoExpired,
            Self::App(AppError::TooManyRequests(secs) | AppError::Busy(secs)) => AccountRefusal::TooManyAttempts(*secs),
            Self::App(AppError::Account(r)) => *r,
            Self::App(_) => AccountRefusal::Server,
        }
    }
}

impl From<ProviderError> for SsoError {
    fn from(e: ProviderError) -> Self {
        Self::Failed(e.to_string())
    }
}

impl From<sqlx::Error> for SsoError {
    fn from(e: sqlx::Error) -> Self {
        Self::App(e.into())
    }
}

/// What a sign-in is for, remembered while the person is at the provider.
#[derive(Clone, Debug, Default, sqlx::FromRow)]
pub struct Purpose {
    /// The page to open after (a path on this site).
    pub next_path: String,
    /// A class's join code: a student joining that class.
    pub join_code: Option<String>,
    /// Linking the identity to this signed-in account instead of signing in.
    pub link_user_id: Option<String>,
}

/// Who the provider says signed in, verified.
#[derive(Clone, Debug)]
pub struct Identity {
    pub provider: String,
    pub issuer: String,
    pub subject: String,
    pub email: Option<String>,
    pub email_verified: bool,
    /// The provider's tenant claim, when it has one configured.
    pub tenant: Option<String>,
}

/// Starts a sign-in: the provider's address to send the browser to, and the
/// state for the cookie.
pub async fn start(state: &AppState, provider: &str, origin: &str, purpose: &Purpose) -> Result<(String, String), SsoError> {
    let config = state.sso.get(provider)?;
    let metadata = state.sso.metadata(provider, false).await?;
    let redirect = redirect_uri(origin, config);
    let client = CoreClient::from_provider_metadata(metadata, ClientId::new(config.client_id.clone()), config.client_secret.clone().map(ClientSecret::new))
        .set_redirect_uri(RedirectUrl::new(redirect.clone()).map_err(|e| SsoError::Failed(format!("redirect address: {e}")))?);
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let (url, csrf, nonce) = client
        .authorize_url(CoreAuthenticationFlow::AuthorizationCode, || CsrfToken::new(random_hex(24)), || Nonce::new(random_hex(24)))
        .add_scope(Scope::new("email".into()))
        .add_scope(Scope::new("profile".into()))
        .set_pkce_challenge(challenge)
        .url();
    sqlx::query("DELETE FROM sso_logins WHERE expires_at < $1").bind(db::time::now()).execute(&state.db).await?;
    sqlx::query(
        "INSERT INTO sso_logins (state_hash, provider, nonce, pkce_verifier, redirect_uri, next_path, join_code, link_user_id, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
    )
    .bind(token_hash(csrf.secret()))
    .bind(&config.id)
    .bind(nonce.secret())
    .bind(verifier.secret())
    .bind(&redirect)
    .bind(&purpose.next_path)
    .bind(&purpose.join_code)
    .bind(&purpose.link_user_id)
    .bind(db::time::from_now(WINDOW))
    .execute(&state.db)
    .await?;
    Ok((url.to_string(), csrf.secret().clone()))
}

/// Where the provider sends the browser back to.
pub fn redirect_uri(origin: &str, config: &ProviderConfig) -> String {
    format!("{}/auth/sso/{}/callback", origin.trim_end_matches('/'), config.id)
}

/// A started sign-in, as stored.
#[derive(sqlx::FromRow)]
struct Pending {
    provider: String,
    nonce: String,
    pkce_verifier: String,
    redirect_uri: String,
    expires_at: String,
    #[sqlx(flatten)]
    purpose: Purpose,
}

/// Takes a started sign-in by the state that came back: once, in time, in
/// the browser that started it, for the provider it was started with.
pub async fn take(state: &AppState, provider: &str, returned: &str, cookie: Option<&str>) -> Result<(Purpose, PendingCheck), SsoError> {
    if returned.is_empty() || cookie != Some(returned) {
        return Err(SsoError::Expired("the state is not the one this browser started with"));
    }
    // One use, even when two answers race: the one whose DELETE returns the row goes on.
    let row: Option<Pending> = sqlx::query_as(
        "DELETE FROM sso_logins WHERE state_hash = $1 \
         RETURNING provider, nonce, pkce_verifier, redirect_uri, expires_at, next_path, join_code, link_user_id",
    )
    .bind(token_hash(returned))
    .fetch_optional(&state.db)
    .await?;
    let Some(row) = row else { return Err(SsoError::Expired("no sign-in was started with this state, or it was used")) };
    if row.expires_at < db::time::now() {
        return Err(SsoError::Expired("the sign-in took longer than ten minutes"));
    }
    if row.provider != provider {
        return Err(SsoError::Expired("the sign-in was started with another provider"));
    }
    let check = PendingCheck { nonce: row.nonce, verifier: row.pkce_verifier, redirect_uri: row.redirect_uri };
    Ok((row.purpose, check))
}

/// What the token exchange needs of a started sign-in.
pub struct PendingCheck {
    nonce: String,
    verifier: String,
    redirect_uri: String,
}

/// Exchanges the code and verifies the ID token; the provider's keys are
/// fetched again once when the token names a key not yet seen.
pub async fn finish(state: &AppState, provider: &str, code: &str, check: PendingCheck) -> Result<Identity, SsoError> {
    let config = state.sso.get(provider)?;
    let metadata = state.sso.metadata(provider, false).await?;
    let client = CoreClient::from_provider_metadata(metadata, ClientId::new(config.client_id.clone()), config.client_secret.clone().map(ClientSecret::new))
        .set_redirect_uri(RedirectUrl::new(check.redirect_uri.clone()).map_err(|e| SsoError::Failed(format!("redirect address: {e}")))?);
    let http = state.sso.client();
    let tokens = client
        .exchange_code(AuthorizationCode::new(code.to_string()))
        .map_err(|e| SsoError::Failed(format!("the provider has no token endpoint: {e}")))?
        .set_pkce_verifier(PkceCodeVerifier::new(check.verifier.clone()))
        .request_async(&http)
        .await
        .map_err(|e| SsoError::Failed(format!("the code exchange failed: {}", error_chain(&e))))?;
    let token = tokens.id_token().ok_or_else(|| SsoError::Failed("the provider sent no ID token".into()))?;
    let nonce = Nonce::new(check.nonce.clone());
    let verified = match verify(&client, token, &nonce) {
        Err(ClaimsVerificationError::SignatureVerification(_)) => {
            // Perhaps the provider rotated its keys: look once more.
            let metadata = state.sso.metadata(provider, true).await?;
            let client = CoreClient::from_provider_metadata(metadata, ClientId::new(config.client_id.clone()), config.client_secret.clone().map(ClientSecret::new));
            verify(&client, token, &nonce)
        }
        other => other,
    }
    .map_err(|e| SsoError::Failed(format!("the ID token did not verify: {}", error_chain(&e))))?;
    let tenant = config.tenant_claim.as_deref().and_then(|claim| claim_of(token, claim));
    let mut identity = Identity { provider: config.id.clone(), tenant, ..verified };
    if identity.email.is_none() || !identity.email_verified {
        // OpenID Connect lets a provider keep the email out of the ID token
        // and give it at its UserInfo address (oidc-provider, an OpenID
        // Certified provider, does so at its defaults). Asked with the
        // access token, for the same subject (openidconnect checks it).
        let subject = openidconnect::SubjectIdentifier::new(identity.subject.clone());
        match client.user_info(tokens.access_token().clone(), Some(subject)) {
            Ok(request) => match request.request_async::<openidconnect::EmptyAdditionalClaims, _, openidconnect::core::CoreGenderClaim>(&http).await {
                Ok(info) => {
                    let email = info.email().map(|e| e.to_string());
                    let verified = info.email_verified() == Some(true);
                    match (&identity.email, email) {
                        (None, Some(e)) => (identity.email, identity.email_verified) = (Some(e), verified),
                        (Some(had), Some(e)) if *had == e => identity.email_verified |= verified,
                        _ => {}
                    }
                }
                Err(e) => tracing::warn!(provider, reason = %error_chain(&e), "the provider's UserInfo could not be read"),
            },
            Err(_) => tracing::debug!(provider, "the provider has no UserInfo address"),
        }
    }
    Ok(identity)
}

/// The verified claims Margin reads.
fn verify<A, B, C, D, E, F>(client: &CoreClient<A, B, C, D, E, F>, token: &CoreIdToken, nonce: &Nonce) -> Result<Identity, ClaimsVerificationError>
where
    A: openidconnect::EndpointState,
    B: openidconnect::EndpointState,
    C: openidconnect::EndpointState,
    D: openidconnect::EndpointState,
    E: openidconnect::EndpointState,
    F: openidconnect::EndpointState,
{
    let verifier = client.id_token_verifier();
    let claims = token.claims(&verifier, nonce)?;
    Ok(Identity {
        provider: String::new(),
        issuer: claims.issuer().to_string(),
        subject: claims.subject().to_string(),
        email: claims.email().map(|e| e.to_string()),
        email_verified: claims.email_verified() == Some(true),
        tenant: None,
    })
}

/// One claim of a token already verified, as text.
fn claim_of(token: &CoreIdToken, claim: &str) -> Option<String> {
    match crate::server::http::outbound::verified_claims(&token.to_string())?.get(claim)? {
        serde_json::Value::String(s) if !s.trim().is_empty() => Some(s.trim().chars().take(200).collect()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}
