//! Margin's own keys as an LTI tool. Each registration of a platform has
//! its own key pair (made when it is registered), published at
//! `/lti/jwks/{platform id}`: a platform trusts that address alone, so what
//! one school's registration signs (a client assertion for an access token,
//! a Deep Linking answer) no other registration can sign, and another
//! school cannot ask this school's LMS for a token in its name.
//!
//! Registrations made before keys were kept apart sign with the server's
//! shared key (rows without a platform), published at `/lti/jwks` and at
//! their own address, until their admin gives them a key of their own
//! ("Give it its own key", which calls `rotate`): the LMS is first pointed at the registration's own address,
//! which serves the shared key until then. The shared key is published only
//! while a registration still uses it.
//!
//! A replaced key stays published a day, so a platform that cached the set
//! still finds the key of anything signed before; `margin lti-key rotate`
//! makes new ones. Keys live in the database, so every instance signs with
//! the same one.

use base64::{engine::general_purpose::URL_SAFE_NO_PAD as B64, Engine};
use rsa::{
    pkcs1v15::SigningKey,
    pkcs8::{DecodePrivateKey, EncodePrivateKey, LineEnding},
    sha2::Sha256,
    signature::{SignatureEncoding, Signer},
    traits::PublicKeyParts,
    RsaPrivateKey,
};
use serde_json::{json, Value};

use crate::server::{
    db::{self, Db},
    error::{AppError, Result},
    ids,
};

/// How long a replaced key stays published.
const PUBLISHED_AFTER: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// The key that signs for `platform` (its own, else the shared one): its id and the key.
pub async fn current(db: &Db, platform: &str) -> Result<(String, RsaPrivateKey)> {
    let own: Option<(String, String)> =
        sqlx::query_as("SELECT kid, private_pem FROM lti_tool_keys WHERE platform_id = $1 AND retired_at IS NULL ORDER BY created_at DESC LIMIT 1")
            .bind(platform)
            .fetch_optional(db)
            .await?;
    let newest = match own {
        Some(own) => Some(own),
        None => sqlx::query_as("SELECT kid, private_pem FROM lti_tool_keys WHERE platform_id IS NULL AND retired_at IS NULL ORDER BY created_at DESC LIMIT 1")
            .fetch_optional(db)
            .await?,
    };
    match newest {
        Some((kid, pem)) => Ok((kid, RsaPrivateKey::from_pkcs8_pem(&pem).map_err(|e| AppError::Internal(format!("the LTI key does not read: {e}")))?)),
        None => rotate(db, None).await,
    }
}

/// A new RSA key pair, as its id and PKCS#8 PEM (made off the async
/// workers: it takes a while); a new registration's is stored with it.
pub async fn made() -> Result<(String, String)> {
    let key = tokio::task::spawn_blocking(|| RsaPrivateKey::new(&mut rsa::rand_core::OsRng, 2048))
        .await
        .map_err(|e| AppError::Internal(e.to_string()))?
        .map_err(|e| AppError::Internal(format!("making the LTI key: {e}")))?;
    let pem = key.to_pkcs8_pem(LineEnding::LF).map_err(|e| AppError::Internal(e.to_string()))?;
    Ok((ids::random_hex(8), pem.to_string()))
}

/// Stores `pem` as the newest key of `platform` (`None`: the shared key),
/// retiring the ones before it (published a day more).
pub async fn store(conn: &mut sqlx::AnyConnection, platform: Option<&str>, kid: &str, pem: &str) -> Result<()> {
    let now = db::time::now();
    match platform {
        Some(p) => sqlx::query("UPDATE lti_tool_keys SET retired_at = $1 WHERE retired_at IS NULL AND platform_id = $2").bind(&now).bind(p).execute(&mut *conn).await?,
        None => sqlx::query("UPDATE lti_tool_keys SET retired_at = $1 WHERE retired_at IS NULL AND platform_id IS NULL").bind(&now).execute(&mut *conn).await?,
    };
    sqlx::query("INSERT INTO lti_tool_keys (kid, private_pem, created_at, platform_id) VALUES ($1, $2, $3, $4)")
        .bind(kid)
        .bind(pem)
        .bind(&now)
        .bind(platform)
        .execute(conn)
        .await?;
    Ok(())
}

/// Makes a new signing key for `platform` (`None`: the shared key); the
/// ones before it retire (published a day more). For a registration that
/// used the shared key, this gives it its own.
pub async fn rotate(db: &Db, platform: Option<&str>) -> Result<(String, RsaPrivateKey)> {
    let (kid, pem) = made().await?;
    let mut tx = db::begin_write(db).await?;
    store(&mut *tx, platform, &kid, &pem).await?;
    tx.commit().await?;
    tracing::info!(kid, platform, "new LTI tool key");
    let key = RsaPrivateKey::from_pkcs8_pem(&pem).map_err(|e| AppError::Internal(e.to_string()))?;
    Ok((kid, key))
}

/// Whether `platform` signs with a key of its own.
pub async fn has_own(db: &Db, platform: &str) -> Result<bool> {
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM lti_tool_keys WHERE platform_id = $1").bind(platform).fetch_one(db).await?;
    Ok(n > 0)
}

/// The keys published for `platform` (its own; the shared ones while it has
/// none), or at `/lti/jwks` (`None`: the shared ones, while a registration
/// still uses them), as a JWKS.
pub async fn jwks(db: &Db, platform: Option<&str>) -> Result<Value> {
    let since = db::time::shifted(&db::time::now(), PUBLISHED_AFTER, false).unwrap_or_default();
    let own = match platform {
        Some(p) => has_own(db, p).await?,
        None => false,
    };
    let rows: Vec<(String, String)> = if own {
        sqlx::query_as("SELECT kid, private_pem FROM lti_tool_keys WHERE platform_id = $1 AND (retired_at IS NULL OR retired_at > $2) ORDER BY created_at DESC")
            .bind(platform.unwrap_or_default())
            .bind(&since)
            .fetch_all(db)
            .await?
    } else {
        // The shared keys, while some registration signs with them.
        sqlx::query_as(
            "SELECT kid, private_pem FROM lti_tool_keys WHERE platform_id IS NULL AND (retired_at IS NULL OR retired_at > $1)
               AND EXISTS (SELECT 1 FROM lti_platforms p WHERE NOT EXISTS (SELECT 1 FROM lti_tool_keys k WHERE k.platform_id = p.id))
             ORDER BY created_at DESC",
        )
        .bind(&since)
        .fetch_all(db)
        .await?
    };
    let keys: Vec<Value> = rows
        .into_iter()
        .filter_map(|(kid, pem)| {
            let public = RsaPrivateKey::from_pkcs8_pem(&pem).ok()?.to_public_key();
            Some(json!({ "kty": "RSA", "alg": "RS256", "use": "sig", "kid": kid, "n": B64.encode(public.n().to_bytes_be()), "e": B64.encode(public.e().to_bytes_be()) }))
        })
        .collect();
    Ok(json!({ "keys": keys }))
}

/// `claims` as a JWT signed RS256 with `platform`'s current key.
pub async fn sign(db: &Db, platform: &str, claims: &Value) -> Result<String> {
    let (kid, key) = current(db, platform).await?;
    let header = json!({ "alg": "RS256", "typ": "JWT", "kid": kid });
    let input = format!("{}.{}", B64.encode(header.to_string()), B64.encode(claims.to_string()));
    let signature = SigningKey::<Sha256>::new(key).sign(input.as_bytes());
    Ok(format!("{input}.{}", B64.encode(signature.to_bytes())))
}
