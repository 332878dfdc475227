//! Deep Linking: a teacher, inside their LMS, asks to add Margin to a
//! course; the platform launches Margin with a Deep Linking request; the
//! teacher picks one of their lessons (`/lti/pick/{id}`, an hour, one use);
//! Margin answers the platform with a JWT it signs with its own key
//! (`keys`), carrying one LTI resource link whose custom parameter `lesson`
//! names the lesson, so the link's launches open it (`people`).

use serde_json::{json, Value};

use super::{
    keys,
    launch::{Launch, LtiError, CLAIM, DL_CLAIM},
    platforms,
};
use crate::{
    models::{DeepLinkPick, UserInfo},
    refusals::AccountRefusal,
    server::{
        db::{self, Db},
        error::{AppError, Result},
        ids, lessons,
    },
};

/// How long a teacher has to pick.
const WINDOW: std::time::Duration = std::time::Duration::from_secs(3600);

/// Keeps a Deep Linking request for `teacher`; the id of the page that picks.
pub async fn begin(db: &Db, launch: &Launch, teacher: &UserInfo) -> std::result::Result<String, LtiError> {
    let settings = launch.deep_linking("deep_linking_settings");
    let return_url = settings["deep_link_return_url"].as_str().map(str::trim).unwrap_or_default();
    if !(return_url.starts_with("https://") || return_url.starts_with("http://")) || return_url.len() > 2000 {
        return Err(LtiError::Refused(AccountRefusal::LtiFailed, "the Deep Linking request has no return address".into()));
    }
    if !launch.platform.serves(return_url) {
        return Err(LtiError::Refused(AccountRefusal::LtiFailed, "the Deep Linking return address is not on the platform's origins".into()));
    }
    if let Some(types) = settings["accept_types"].as_array() {
        if !types.iter().any(|t| t.as_str() == Some("ltiResourceLink")) {
            return Err(LtiError::Refused(AccountRefusal::LtiFailed, "the platform takes no LTI resource links here".into()));
        }
    }
    let id = ids::random_hex(16);
    sqlx::query("DELETE FROM lti_deep_links WHERE expires_at < $1").bind(db::time::now()).execute(db).await?;
    sqlx::query(
        "INSERT INTO lti_deep_links (id, user_id, platform_id, deployment_id, return_url, data, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(&id)
    .bind(&teacher.id)
    .bind(&launch.platform.id)
    .bind(launch.lti("deployment_id").as_str().unwrap_or_default())
    .bind(return_url)
    .bind(settings["data"].as_str())
    .bind(db::time::from_now(WINDOW))
    .execute(db)
    .await?;
    Ok(id)
}

#[derive(sqlx::FromRow)]
struct Pending {
    platform_id: String,
    deployment_id: String,
    return_url: String,
    data: Option<String>,
}

async fn pending(db: &Db, teacher: &UserInfo, id: &str) -> Result<Pending> {
    sqlx::query_as("SELECT platform_id, deployment_id, return_url, data FROM lti_deep_links WHERE id = $1 AND user_id = $2 AND expires_at > $3")
        .bind(id)
        .bind(&teacher.id)
        .bind(db::time::now())
        .fetch_optional(db)
        .await?
        .ok_or(AppError::NotFound)
}

/// The page that picks: the platform's name and the teacher's lessons.
pub async fn view(db: &Db, teacher: &UserInfo, id: &str) -> Result<DeepLinkPick> {
    let p = pending(db, teacher, id).await?;
    let platform = platforms::get(db, &p.platform_id).await?.ok_or(AppError::NotFound)?;
    let lessons = sqlx::query_as("SELECT id, title FROM lessons WHERE owner_id = $1 AND deleted_at IS NULL ORDER BY updated_at DESC LIMIT 500")
        .bind(&teacher.id)
        .fetch_all(db)
        .await?;
    Ok(DeepLinkPick { id: id.to_string(), platform: platform.name, lessons })
}

/// The teacher's choice, signed, ready to go back to the platform.
pub struct Answer {
    /// Where the platform takes it.
    pub return_url: String,
    /// `LtiDeepLinkingResponse`, signed by Margin's key.
    pub jwt: String,
    pub platform: String,
    pub title: String,
}

/// The answer to the platform for `lesson`. The request is used up.
pub async fn answer(db: &Db, teacher: &UserInfo, id: &str, lesson_id: &str, origin: &str) -> Result<Answer> {
    let p = pending(db, teacher, id).await?;
    let lesson = lessons::get_own(db, &teacher.id, lesson_id).await?;
    let platform = platforms::get(db, &p.platform_id).await?.ok_or(AppError::NotFound)?;
    if sqlx::query("DELETE FROM lti_deep_links WHERE id = $1").bind(id).execute(db).await?.rows_affected() != 1 {
        return Err(AppError::NotFound);
    }
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let mut claims = json!({
        "iss": platform.client_id,
        "aud": platform.issuer,
        "iat": now,
        "exp": now + 600,
        "nonce": ids::random_hex(16),
        format!("{CLAIM}message_type"): "LtiDeepLinkingResponse",
        format!("{CLAIM}version"): "1.3.0",
        format!("{CLAIM}deployment_id"): p.deployment_id,
        format!("{DL_CLAIM}content_items"): [{
            "type": "ltiResourceLink",
            "title": lesson.title,
            "url": format!("{}/lti/launch", origin.trim_end_matches('/')),
            "custom": { "lesson": lesson.id },
        }],
    });
    if let Some(data) = p.data {
        claims[format!("{DL_CLAIM}data").as_str()] = Value::String(data);
    }
    let jwt = keys::sign(db, &platform.id, &claims).await?;
    tracing::info!(platform = %platform.id, lesson = %lesson.id, "lesson linked into an LMS");
    Ok(Answer { return_url: p.return_url, jwt, platform: platform.name, title: lesson.title })
}
