//! LTI Dynamic Registration (1EdTech, 1.0): the way Canvas, Moodle and
//! Brightspace add a tool, and the first way a school registers its LMS.
//!
//! The school's admin makes a registration address on the School page
//! (`invite`: `/lti/register/{token}`, a day, one use; the token names the
//! school, since the LMS's admin opens it inside the LMS, where Margin's
//! session cookie does not come along). The LMS opens it with
//! `openid_configuration` (where the platform describes itself) and
//! `registration_token`. Margin (`register`):
//! 1. reads the platform's configuration (an outside address: `outbound`),
//!    whose issuer must be the configuration's own site;
//! 2. makes the registration's id and key pair, and sends the platform its
//!    own registration: login and launch addresses, its keys address
//!    (`/lti/jwks/{id}`, this registration's alone), the messages and
//!    services it uses;
//! 3. keeps what the platform answers (its client id and deployment) as a
//!    registered platform of the school (`platforms::register_in`), whose
//!    services may also answer on the configuration's and registration's
//!    sites;
//!
//! then shows a page that tells the LMS it is done
//! (`org.imsglobal.lti.close`). The client id comes from the platform,
//! never from a person, so no school can claim another's.

use serde_json::{json, Value};

use super::platforms::{self, Platform, Prepared, Registration};
use crate::{
    models::UserInfo,
    server::{
        accounts::schools::admin_school,
        config::origin_of,
        db::{self, Db},
        error::{AppError, Result},
        http::{
            outbound,
        },
        ids,
        state::AppState,
    },
};

/// How long a registration address works.
pub const WINDOW: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

const TOOL_CONFIGURATION: &str = "https://purl.imsglobal.org/spec/lti-tool-configuration";
const PLATFORM_CONFIGURATION: &str = "https://purl.imsglobal.org/spec/lti-platform-configuration";

/// A registration address for the admin's school: its token (shown once).
pub async fn invite(db: &Db, admin: &UserInfo) -> Result<String> {
    let school = admin_school(admin)?;
    let token = ids::random_hex(24);
    sqlx::query("DELETE FROM lti_registration_invites WHERE expires_at < $1").bind(db::time::now()).execute(db).await?;
    sqlx::query("INSERT INTO lti_registration_invites (token_hash, school_id, expires_at) VALUES ($1, $2, $3)")
        .bind(ids::token_hash(&token))
        .bind(school)
        .bind(db::time::from_now(WINDOW))
        .execute(db)
        .await?;
    Ok(token)
}

/// The school a registration address is for, while it works.
pub async fn school_of(db: &Db, token: &str) -> Result<Option<String>> {
    Ok(sqlx::query_scalar("SELECT school_id FROM lti_registration_invites WHERE token_hash = $1 AND expires_at > $2")
        .bind(ids::token_hash(token))
        .bind(db::time::now())
        .fetch_optional(db)
        .await?)
}

/// Why a registration did not complete: a sentence for the LMS's admin.
#[derive(Debug)]
pub struct Refused(pub String);

impl From<AppError> for Refused {
    fn from(e: AppError) -> Self {
        match e {
            AppError::BadRequest(s) | AppError::Conflict(s) => Refused(s),
            other => {
                tracing::error!(error = %other, "an LMS's dynamic registration failed");
                Refused("Margin could not store the registration. Try again in a minute.".into())
            }
        }
    }
}

fn refused(s: impl Into<String>) -> Refused {
    Refused(s.into())
}

/// Registers the platform whose configuration is at `configuration_url`
/// with the school of `token`; the address's one use.
pub async fn register(state: &AppState, token: &str, configuration_url: &str, registration_token: Option<&str>, origin: &str) -> std::result::Result<Platform, Refused> {
    let school = school_of(&state.db, token).await?.ok_or_else(|| refused("This registration address has been used or has expired. Ask your school's Margin admin for a new one."))?;
    let http = &state.lti_tokens.http;
    let configuration = fetch_json(http, reqwest::Method::GET, configuration_url, None, None).await.map_err(|e| refused(format!("Margin could not read the LMS's configuration: {e}.")))?;
    let text = |name: &str| configuration[name].as_str().map(str::trim).filter(|s| !s.is_empty()).map(str::to_string);
    let issuer = text("issuer").ok_or_else(|| refused("The LMS's configuration names no issuer."))?;
    if origin_of(&issuer).is_none() || origin_of(&issuer) != origin_of(configuration_url) {
        return Err(refused("The LMS's configuration is not on its issuer's own site."));
    }
    let (Some(login_url), Some(token_url), Some(jwks_url), Some(registration_endpoint)) =
        (text("authorization_endpoint"), text("token_endpoint"), text("jwks_uri"), text("registration_endpoint"))
    else {
        return Err(refused("The LMS's configuration lacks its authorization, token, keys or registration address."));
    };
    let product = configuration[PLATFORM_CONFIGURATION]["product_family_code"].as_str().unwrap_or("LMS").chars().take(60).collect::<String>();

    let (kid, pem) = super::keys::made().await?;
    let id = ids::new_id();
    let origin = origin.trim_end_matches('/');
    let launch = format!("{origin}/lti/launch");
    let domain = origin.split_once("://").map(|(_, host)| host).unwrap_or(origin);
    let scope = [super::grades::SCORE_SCOPE, "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem", super::roster::ROSTER_SCOPE].join(" ");
    let ours = json!({
        "application_type": "web",
        "response_types": ["id_token"],
        "grant_types": ["implicit", "client_credentials"],
        "initiate_login_uri": format!("{origin}/lti/login"),
        "redirect_uris": [launch],
        "client_name": "Margin",
        "jwks_uri": format!("{origin}/lti/jwks/{id}"),
        "token_endpoint_auth_method": "private_key_jwt",
        "scope": scope,
        TOOL_CONFIGURATION: {
            "domain": domain,
            "target_link_uri": launch,
            "description": "Lessons and exercises your teachers write with an AI assistant; students answer them here.",
            "claims": ["iss", "sub", "email", "name"],
            "messages": [
                { "type": "LtiResourceLinkRequest", "target_link_uri": launch },
                { "type": "LtiDeepLinkingRequest", "target_link_uri": launch, "label": "Margin lesson" },
            ],
        },
    });
    let answer = fetch_json(http, reqwest::Method::POST, &registration_endpoint, registration_token, Some(&ours))
        .await
        .map_err(|e| refused(format!("The LMS did not take Margin's registration: {e}.")))?;
    let client_id = answer["client_id"].as_str().map(str::trim).filter(|c| !c.is_empty()).ok_or_else(|| refused("The LMS's answer has no client id."))?;
    let deployment = answer[TOOL_CONFIGURATION]["deployment_id"].as_str().map(str::trim).filter(|d| !d.is_empty()).ok_or_else(|| {
        refused("The LMS's answer names no deployment. Register it by hand on Margin's School page with the deployment id the LMS shows.")
    })?;
    let services: Vec<String> = [origin_of(configuration_url), origin_of(&registration_endpoint)].into_iter().flatten().collect();
    let registration = Registration {
        name: product,
        issuer,
        client_id: client_id.to_string(),
        login_url,
        token_url,
        jwks_url,
        deployments: deployment.to_string(),
        service_origins: services.join("\n"),
    };
    let platform = platforms::register_in(&state.db, &school, &registration, Prepared { id, kid, pem }).await?;
    // One use: a second LMS needs an address of its own.
    sqlx::query("DELETE FROM lti_registration_invites WHERE token_hash = $1").bind(ids::token_hash(token)).execute(&state.db).await.map_err(AppError::from)?;
    tracing::info!(platform = %platform.id, school = %platform.school_id, "LMS registered itself (LTI Dynamic Registration)");
    Ok(platform)
}

/// A JSON request to an outside address (with the platform's registration
/// token when it gave one), its JSON answer read to 64 KB.
async fn fetch_json(http: &outbound::Outbound, method: reqwest::Method, url: &str, bearer: Option<&str>, body: Option<&Value>) -> std::result::Result<Value, String> {
    let mut request = http.request(method, url)?.header(reqwest::header::ACCEPT, "application/json");
    if let Some(token) = bearer.filter(|t| !t.is_empty()) {
        request = request.bearer_auth(token);
    }
    if let Some(body) = body {
        request = request.header(reqwest::header::CONTENT_TYPE, "application/json").body(body.to_string());
    }
    let answer = request.send().await.map_err(|e| e.without_url().to_string())?;
    if !answer.status().is_success() {
        return Err(format!("it answered {}", answer.status()));
    }
    let bytes = outbound::read_capped(answer, 64 * 1024).await?;
    serde_json::from_slice(&bytes).map_err(|_| "its answer is not JSON".to_string())
}
