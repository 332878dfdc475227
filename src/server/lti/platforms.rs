//! The LMS platforms a school's admin registered, with the deployments that
//! may launch Margin, and each platform's published keys: fetched when a
//! launch first needs them, kept for an hour, fetched again when a token
//! names a key not yet seen (the platform rotated its keys).

use openidconnect::{core::CoreJsonWebKeySet, JsonWebKeySetUrl};
use serde::{Deserialize, Serialize};

use super::keys;
use crate::{
    models::UserInfo,
    server::{
        accounts::schools::admin_school,
        db::{self, Db},
        error::{AppError, Result},
        http::{
            outbound::{self, error_chain},
        },
        config::origin_of,
        ids,
    },
};

/// Deployments one platform may list.
const MAX_DEPLOYMENTS: usize = 50;

/// A registered platform.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, sqlx::FromRow)]
#[serde(rename_all = "camelCase")]
pub struct Platform {
    pub id: String,
    pub school_id: String,
    pub name: String,
    pub issuer: String,
    pub client_id: String,
    pub login_url: String,
    pub token_url: String,
    pub jwks_url: String,
    /// Other origins its services answer at, one per line.
    pub service_origins: String,
}

impl Platform {
    /// The registration's origins: its issuer's, login's, token's and keys'
    /// addresses', and the service origins its admin added.
    pub fn origins(&self) -> Vec<String> {
        [&self.issuer, &self.login_url, &self.token_url, &self.jwks_url]
            .into_iter()
            .filter_map(|u| origin_of(u))
            .chain(self.service_origins.lines().filter_map(origin_of))
            .collect()
    }

    /// Whether `url` is on one of the registration's origins: the only
    /// places Margin sends its access tokens or a teacher's browser.
    pub fn serves(&self, url: &str) -> bool {
        origin_of(url).is_some_and(|o| self.origins().contains(&o))
    }
}

/// What a school's admin enters to register a platform (its admin reads
/// these off the platform's developer key or tool registration).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Registration {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub issuer: String,
    #[serde(default)]
    pub client_id: String,
    #[serde(default)]
    pub login_url: String,
    #[serde(default)]
    pub token_url: String,
    #[serde(default)]
    pub jwks_url: String,
    /// Deployment ids, separated by commas, spaces or lines.
    #[serde(default)]
    pub deployments: String,
    /// Other origins the platform's services (roster, grades) answer at,
    /// separated by commas, spaces or lines; e.g. a Canvas's own address.
    #[serde(default)]
    pub service_origins: String,
}

fn is_url(s: &str) -> bool {
    let s = s.trim();
    (s.starts_with("https://") || s.starts_with("http://")) && s.len() <= 500 && !s.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// Registers a platform for the admin's school; a sentence for what is missing.
pub async fn register(db: &Db, admin: &UserInfo, r: &Registration) -> Result<Platform> {
    let school = admin_school(admin)?.to_string();
    let (kid, pem) = keys::made().await?;
    register_in(db, &school, r, Prepared { id: ids::new_id(), kid, pem }).await
}

/// A registration's id and key pair, made before it is stored (Dynamic
/// Registration gives the platform the keys address before it answers).
pub struct Prepared {
    pub id: String,
    pub kid: String,
    pub pem: String,
}

/// Registers a platform for `school` with its prepared id and key.
pub async fn register_in(db: &Db, school: &str, r: &Registration, prepared: Prepared) -> Result<Platform> {
    let school = school.to_string();
    let name = r.name.trim();
    let name = if name.is_empty() { "LMS" } else { name };
    if name.chars().count() > 80 {
        return Err(AppError::BadRequest("Keep the platform's name under 80 characters.".into()));
    }
    for (value, what) in [(&r.issuer, "issuer"), (&r.login_url, "login (authentication) address"), (&r.token_url, "token address"), (&r.jwks_url, "keys (JWKS) address")] {
        if !is_url(value) {
            return Err(AppError::BadRequest(format!("Enter the platform's {what}: an address beginning https://.")));
        }
    }
    let client_id = r.client_id.trim();
    if client_id.is_empty() || client_id.len() > 200 {
        return Err(AppError::BadRequest("Enter the client id the platform gave Margin.".into()));
    }
    // The login address is where `/lti/login` sends anyone's browser: it must
    // be on the origin of the issuer or of the keys that sign the launches.
    let signer_origins = [origin_of(&r.issuer), origin_of(&r.jwks_url)];
    if !signer_origins.contains(&origin_of(&r.login_url)) {
        return Err(AppError::BadRequest("The login (authentication) address must be on the same site as the issuer or the keys (JWKS) address.".into()));
    }
    let mut service_origins = Vec::new();
    for o in r.service_origins.split([',', ' ', '\n', '\r', '\t']).map(str::trim).filter(|o| !o.is_empty()) {
        match origin_of(o).filter(|_| is_url(o)) {
            Some(origin) if service_origins.len() < 10 => service_origins.push(origin),
            _ => return Err(AppError::BadRequest("Enter each other service address as https://host (up to 10).".into())),
        }
    }
    let deployments: Vec<&str> = r.deployments.split([',', ' ', '\n', '\r', '\t']).map(str::trim).filter(|d| !d.is_empty()).collect();
    if deployments.is_empty() || deployments.len() > MAX_DEPLOYMENTS || deployments.iter().any(|d| d.len() > 200) {
        return Err(AppError::BadRequest(format!("Enter the deployment id the platform shows for Margin (up to {MAX_DEPLOYMENTS}).")));
    }
    let Prepared { id, kid, pem } = prepared;
    let platform = Platform {
        id,
        school_id: school,
        name: name.to_string(),
        issuer: r.issuer.trim().to_string(),
        client_id: client_id.to_string(),
        login_url: r.login_url.trim().to_string(),
        token_url: r.token_url.trim().to_string(),
        jwks_url: r.jwks_url.trim().to_string(),
        service_origins: service_origins.join("\n"),
    };
    // One client id at one token address belongs to one school: another
    // school registering it would be asking that LMS for tokens in its name.
    let elsewhere: Option<String> = sqlx::query_scalar("SELECT school_id FROM lti_platforms WHERE client_id = $1 AND token_url = $2 AND school_id <> $3 LIMIT 1")
        .bind(&platform.client_id)
        .bind(&platform.token_url)
        .bind(&platform.school_id)
        .fetch_optional(db)
        .await?;
    if elsewhere.is_some() {
        tracing::warn!(school = %platform.school_id, "refused a registration of another school's client id at its token address");
        return Err(AppError::Conflict("That platform and client id are registered already on this server.".into()));
    }
    let mut tx = db::begin_write(db).await?;
    let inserted = sqlx::query(
        "INSERT INTO lti_platforms (id, school_id, name, issuer, client_id, login_url, token_url, jwks_url, service_origins, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
    )
    .bind(&platform.id)
    .bind(&platform.school_id)
    .bind(&platform.name)
    .bind(&platform.issuer)
    .bind(&platform.client_id)
    .bind(&platform.login_url)
    .bind(&platform.token_url)
    .bind(&platform.jwks_url)
    .bind(&platform.service_origins)
    .bind(db::time::now())
    .execute(&mut *tx)
    .await;
    match inserted {
        Ok(_) => {}
        Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
            return Err(AppError::Conflict("That platform and client id are registered already on this server.".into()))
        }
        Err(e) => return Err(e.into()),
    }
    for d in deployments {
        sqlx::query("INSERT INTO lti_deployments (platform_id, deployment_id) VALUES ($1, $2) ON CONFLICT (platform_id, deployment_id) DO NOTHING")
            .bind(&platform.id)
            .bind(d)
            .execute(&mut *tx)
            .await?;
    }
    keys::store(&mut *tx, Some(&platform.id), &kid, &pem).await?;
    tx.commit().await?;
    tracing::info!(platform = %platform.id, school = %platform.school_id, issuer = %platform.issuer, "LMS platform registered");
    Ok(platform)
}

const COLUMNS: &str = "id, school_id, name, issuer, client_id, login_url, token_url, jwks_url, service_origins";

/// The school's platforms, with their deployments.
pub async fn of_school(db: &Db, school_id: &str) -> Result<Vec<(Platform, Vec<String>)>> {
    let platforms: Vec<Platform> = sqlx::query_as(&format!("SELECT {COLUMNS} FROM lti_platforms WHERE school_id = $1 ORDER BY created_at"))
        .bind(school_id)
        .fetch_all(db)
        .await?;
    let mut out = Vec::new();
    for p in platforms {
        let deployments = sqlx::query_scalar("SELECT deployment_id FROM lti_deployments WHERE platform_id = $1 ORDER BY deployment_id").bind(&p.id).fetch_all(db).await?;
        out.push((p, deployments));
    }
    Ok(out)
}

/// Removes one of the admin's school's platforms (its launches stop; the
/// accounts and classes they made stay).
pub async fn remove(db: &Db, admin: &UserInfo, id: &str) -> Result<()> {
    let school = admin_school(admin)?;
    let done = sqlx::query("DELETE FROM lti_platforms WHERE id = $1 AND school_id = $2").bind(id).bind(school).execute(db).await?;
    if done.rows_affected() == 0 {
        return Err(AppError::NotFound);
    }
    Ok(())
}

/// The platform a launch names: by issuer and, when given, client id (an
/// issuer with one registration needs none).
pub async fn find(db: &Db, issuer: &str, client_id: Option<&str>) -> Result<Option<Platform>> {
    let found: Vec<Platform> = match client_id.filter(|c| !c.is_empty()) {
        Some(c) => sqlx::query_as(&format!("SELECT {COLUMNS} FROM lti_platforms WHERE issuer = $1 AND client_id = $2")).bind(issuer).bind(c).fetch_all(db).await?,
        None => sqlx::query_as(&format!("SELECT {COLUMNS} FROM lti_platforms WHERE issuer = $1 LIMIT 2")).bind(issuer).fetch_all(db).await?,
    };
    Ok(if found.len() == 1 { found.into_iter().next() } else { None })
}

pub async fn get(db: &Db, id: &str) -> Result<Option<Platform>> {
    Ok(sqlx::query_as(&format!("SELECT {COLUMNS} FROM lti_platforms WHERE id = $1")).bind(id).fetch_optional(db).await?)
}

pub async fn deployment_known(db: &Db, platform_id: &str, deployment_id: &str) -> Result<bool> {
    let found: Option<String> = sqlx::query_scalar("SELECT deployment_id FROM lti_deployments WHERE platform_id = $1 AND deployment_id = $2")
        .bind(platform_id)
        .bind(deployment_id)
        .fetch_optional(db)
        .await?;
    Ok(found.is_some())
}

/// Each platform's published keys, shared by every request.
pub struct PlatformKeys {
    http: outbound::Outbound,
    kept: outbound::Kept<CoreJsonWebKeySet>,
}

impl PlatformKeys {
    pub fn new(http: outbound::Outbound) -> Self {
        Self { http, kept: outbound::Kept::default() }
    }

    /// The platform's keys, kept for an hour; `fresh` fetches them again.
    pub async fn of(&self, platform: &Platform, fresh: bool) -> std::result::Result<CoreJsonWebKeySet, String> {
        if !fresh {
            if let Some(k) = self.kept.get(&platform.id) {
                return Ok(k);
            }
        }
        let url = JsonWebKeySetUrl::new(platform.jwks_url.clone()).map_err(|e| format!("the keys address: {e}"))?;
        let client = outbound::client(&self.http);
        let keys = CoreJsonWebKeySet::fetch_async(&url, &client).await.map_err(|e| format!("fetching the platform's keys: {}", error_chain(&e)))?;
        self.kept.keep(&platform.id, keys.clone());
        Ok(keys)
    }
}
