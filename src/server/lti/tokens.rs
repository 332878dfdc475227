//! Access tokens from an LMS platform, for its services (grades, rosters):
//! Margin proves itself to the platform's token address with a client
//! assertion, a JWT signed by its own key (`keys`), and keeps each token, by
//! platform and scope, until 30 seconds before it expires. Each
//! registration signs with its own key (`keys`). Apart from the
//! launch, so the shared state can hold it without importing the handlers.

use std::time::{Duration, Instant};

use serde_json::json;

use super::{keys, platforms::Platform};
use crate::server::{db::Db, http::outbound, ids};

/// Access tokens from each platform, by scope, kept until shortly before they expire.
pub struct AccessTokens {
    pub(crate) http: outbound::Outbound,
    kept: outbound::Kept<String>,
}

impl AccessTokens {
    pub fn new(http: outbound::Outbound) -> Self {
        Self { http, kept: outbound::Kept::default() }
    }

    /// A token for `scope` at `platform`, for a request to `service` (a
    /// roster or line item a launch named), which must be on one of the
    /// registration's origins: a token never goes anywhere else.
    pub async fn for_service(&self, db: &Db, platform: &Platform, scope: &str, service: &str) -> Result<String, String> {
        if !platform.serves(service) {
            tracing::warn!(platform = %platform.id, "a service address outside the registration's origins was refused");
            return Err("the service address is not on the registration's origins".into());
        }
        self.get(db, platform, scope).await
    }

    async fn get(&self, db: &Db, platform: &Platform, scope: &str) -> Result<String, String> {
        let key = format!("{}|{scope}", platform.id);
        if let Some(token) = self.kept.get(&key) {
            return Ok(token);
        }
        let now = time::OffsetDateTime::now_utc().unix_timestamp();
        let assertion = keys::sign(
            db,
            &platform.id,
            &json!({ "iss": platform.client_id, "sub": platform.client_id, "aud": platform.token_url, "iat": now, "exp": now + 300, "jti": ids::random_hex(16) }),
        )
        .await
        .map_err(|e| e.to_string())?;
        let form = [
            ("grant_type", "client_credentials"),
            ("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"),
            ("client_assertion", assertion.as_str()),
            ("scope", scope),
        ];
        let body = serde_urlencoded::to_string(form).map_err(|e| e.to_string())?;
        let answer = self
            .http
            .request(reqwest::Method::POST, &platform.token_url)?
            .header(reqwest::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(body)
            .send()
            .await.map_err(|e| e.without_url().to_string())?;
        if !answer.status().is_success() {
            return Err(format!("the platform's token address answered {}", answer.status()));
        }
        let bytes = outbound::read_capped(answer, 64 * 1024).await?;
        let reply: serde_json::Value = serde_json::from_slice(&bytes).map_err(|_| "the token answer is not JSON".to_string())?;
        let token = reply["access_token"].as_str().filter(|t| !t.is_empty()).ok_or("the token answer has no access token")?.to_string();
        let lasts = reply["expires_in"].as_u64().unwrap_or(300).clamp(30, 24 * 3600);
        let until = Instant::now() + Duration::from_secs(lasts.saturating_sub(30).max(1));
        self.kept.keep_until(&key, until, token.clone());
        Ok(token)
    }
}
