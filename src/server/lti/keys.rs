//! Margin's own keys as an LTI tool. The newest signs what Margin sends a
//! platform (a Deep Linking answer); every key is published at `/lti/jwks`
//! until a day after a newer one replaced it, so a platform that cached the
//! set still finds the key of anything signed before. The first key is made
//! when first needed; `margin lti-key rotate` makes a new one. Keys live in
//! the database, so every instance signs with the same one.

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
    http::error::{AppError, Result},
    ids,
};

/// How long a replaced key stays published.
const PUBLISHED_AFTER: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// The signing key: its id and the key.
pub async fn current(db: &Db) -> Result<(String, RsaPrivateKey)> {
    let newest: Option<(String, String)> =
        sqlx::query_as("SELECT kid, private_pem FROM lti_tool_keys WHERE retired_at IS NULL ORDER BY created_at DESC LIMIT 1").fetch_optional(db).await?;
    match newest {
        Some((kid, pem)) => Ok((kid, RsaPrivateKey::from_pkcs8_pem(&pem).map_err(|e| AppError::Internal(format!("the LTI key does not read: {e}")))?)),
        None => rotate(db).await,
    }
}

/// Makes a new signing key; the ones before it retire (published a day more).
pub async fn rotate(db: &Db) -> Result<(String, RsaPrivateKey)> {
    let key = tokio::task::spawn_blocking(|| RsaPrivateKey::new(&mut rsa::rand_core::OsRng, 2048))
        .await
        .map_err(|e| AppError::Internal(e.to_string()))?
        .map_err(|e| AppError::Internal(format!("making the LTI key: {e}")))?;
    let pem = key.to_pkcs8_pem(LineEnding::LF).map_err(|e| AppError::Internal(e.to_string()))?;
    let kid = ids::random_hex(8);
    let now = db::time::now();
    let mut tx = db::begin_write(db).await?;
    sqlx::query("UPDATE lti_tool_keys SET retired_at = $1 WHERE retired_at IS NULL").bind(&now).execute(&mut *tx).await?;
    sqlx::query("INSERT INTO lti_tool_keys (kid, private_pem, created_at) VALUES ($1, $2, $3)").bind(&kid).bind(pem.as_str()).bind(&now).execute(&mut *tx).await?;
    tx.commit().await?;
    tracing::info!(kid, "new LTI tool key");
    Ok((kid, key))
}

/// The published keys, as a JWKS.
pub async fn jwks(db: &Db) -> Result<Value> {
    let since = db::time::shifted(&db::time::now(), PUBLISHED_AFTER, false).unwrap_or_default();
    let rows: Vec<(String, String)> =
        sqlx::query_as("SELECT kid, private_pem FROM lti_tool_keys WHERE retired_at IS NULL OR retired_at > $1 ORDER BY created_at DESC").bind(since).fetch_all(db).await?;
    let keys: Vec<Value> = rows
        .into_iter()
        .filter_map(|(kid, pem)| {
            let public = RsaPrivateKey::from_pkcs8_pem(&pem).ok()?.to_public_key();
            Some(json!({ "kty": "RSA", "alg": "RS256", "use": "sig", "kid": kid, "n": B64.encode(public.n().to_bytes_be()), "e": B64.encode(public.e().to_bytes_be()) }))
        })
        .collect();
    Ok(json!({ "keys": keys }))
}

/// `claims` as a JWT signed RS256 with the current key.
pub async fn sign(db: &Db, claims: &Value) -> Result<String> {
    let (kid, key) = current(db).await?;
    let header = json!({ "alg": "RS256", "typ": "JWT", "kid": kid });
    let input = format!("{}.{}", B64.encode(header.to_string()), B64.encode(claims.to_string()));
    let signature = SigningKey::<Sha256>::new(key).sign(input.as_bytes());
    Ok(format!("{input}.{}", B64.encode(signature.to_bytes())))
}
