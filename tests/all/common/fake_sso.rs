//! A school-account provider for the tests: OpenID Connect discovery, its
//! keys (JWKS), an authorization endpoint that signs the chosen person in at
//! once, and a token endpoint that checks the client's secret, the code
//! (one use), the redirect address and the PKCE verifier before it hands out
//! an ID token signed with a real RSA key (`keys/provider.pem`). A test
//! chooses who signs in and can twist the next token (another key, another
//! audience, expired, another nonce or issuer) to see Margin refuse it.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

use axum::{
    extract::{Form, Query, State},
    http::{header, HeaderMap, StatusCode},
    response::{IntoResponse, Redirect, Response},
    routing::{get, post},
    Json, Router,
};
use base64::{engine::general_purpose::URL_SAFE_NO_PAD as B64, Engine};
use rsa::{pkcs1v15::SigningKey, pkcs8::DecodePrivateKey, signature::{SignatureEncoding, Signer}, traits::PublicKeyParts, RsaPrivateKey};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

pub const CLIENT_ID: &str = "margin-test";
pub const CLIENT_SECRET: &str = "test-secret-not-for-anything";

/// Who the provider signs in next.
#[derive(Clone, Debug)]
pub struct Person {
    pub sub: String,
    pub email: Option<String>,
    pub email_verified: Option<bool>,
    /// Extra claims, such as a tenant (`tid`).
    pub extra: Value,
}

impl Person {
    pub fn new(sub: &str, email: &str) -> Self {
        Self { sub: sub.into(), email: Some(email.into()), email_verified: Some(true), extra: json!({}) }
    }
}

/// What the next token gets wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Twist {
    None,
    /// Signed with a key the provider never published.
    StrangerKey,
    /// For another client.
    OtherAudience,
    /// Expired an hour ago.
    Expired,
    /// Carries a nonce Margin did not send.
    OtherNonce,
    /// From another issuer.
    OtherIssuer,
}

struct Grant {
    nonce: String,
    challenge: String,
    redirect_uri: String,
    person: Person,
}

struct Inner {
    issuer: String,
    key: RsaPrivateKey,
    stranger: RsaPrivateKey,
    person: Person,
    twist: Twist,
    codes: HashMap<String, Grant>,
    /// Token requests refused, with why.
    pub refusals: Vec<String>,
    tokens_issued: usize,
}

#[derive(Clone)]
pub struct FakeSso {
    inner: Arc<Mutex<Inner>>,
    pub issuer: String,
}

fn key(name: &str) -> RsaPrivateKey {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/all/common/keys").join(name);
    RsaPrivateKey::from_pkcs8_pem(&std::fs::read_to_string(path).expect("test key")).expect("a PKCS#8 RSA key")
}

impl FakeSso {
    pub async fn start() -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let issuer = format!("http://{}", listener.local_addr().expect("address"));
        let inner = Arc::new(Mutex::new(Inner {
            issuer: issuer.clone(),
            key: key("provider.pem"),
            stranger: key("stranger.pem"),
            person: Person::new("person-1", "teacher@lincoln.example.org"),
            twist: Twist::None,
            codes: HashMap::new(),
            refusals: Vec::new(),
            tokens_issued: 0,
        }));
        let fake = FakeSso { inner, issuer };
        let app = Router::new()
            .route("/.well-known/openid-configuration", get(discovery))
            .route("/jwks", get(jwks))
            .route("/authorize", get(authorize))
            .route("/token", post(token))
            .with_state(fake.clone());
        tokio::spawn(async move {
            axum::serve(listener, app).await.ok();
        });
        fake
    }

    /// The provider settings a Margin config needs.
    pub fn provider(&self, id: &str, tenant_claim: Option<&str>) -> margin::server::accounts::sso::providers::ProviderConfig {
        margin::server::accounts::sso::providers::ProviderConfig {
            id: id.into(),
            label: "Example SSO".into(),
            issuer: self.issuer.clone(),
            client_id: CLIENT_ID.into(),
            client_secret: Some(CLIENT_SECRET.into()),
            tenant_claim: tenant_claim.map(str::to_string),
        }
    }

    pub fn sign_in_as(&self, person: Person) {
        self.inner.lock().unwrap().person = person;
    }

    pub fn twist_next(&self, twist: Twist) {
        self.inner.lock().unwrap().twist = twist;
    }

    pub fn tokens_issued(&self) -> usize {
        self.inner.lock().unwrap().tokens_issued
    }

    pub fn refusals(&self) -> Vec<String> {
        self.inner.lock().unwrap().refusals.clone()
    }
}

async fn discovery(State(fake): State<FakeSso>) -> Json<Value> {
    let i = &fake.issuer;
    Json(json!({
        "issuer": i,
        "authorization_endpoint": format!("{i}/authorize"),
        "token_endpoint": format!("{i}/token"),
        "jwks_uri": format!("{i}/jwks"),
        "response_types_supported": ["code"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["RS256"],
        "scopes_supported": ["openid", "email", "profile"],
        "token_endpoint_auth_methods_supported": ["client_secret_basic"],
        "code_challenge_methods_supported": ["S256"],
        "claims_supported": ["sub", "iss", "aud", "exp", "iat", "email", "email_verified", "nonce"]
    }))
}

async fn jwks(State(fake): State<FakeSso>) -> Json<Value> {
    let inner = fake.inner.lock().unwrap();
    let public = inner.key.to_public_key();
    Json(json!({ "keys": [{
        "kty": "RSA", "use": "sig", "alg": "RS256", "kid": "provider-1",
        "n": B64.encode(public.n().to_bytes_be()),
        "e": B64.encode(public.e().to_bytes_be()),
    }]}))
}

async fn authorize(State(fake): State<FakeSso>, Query(q): Query<HashMap<String, String>>) -> Response {
    let get = |k: &str| q.get(k).cloned().unwrap_or_default();
    if get("client_id") != CLIENT_ID || get("response_type") != "code" || get("code_challenge_method") != "S256" || !get("scope").split(' ').any(|s| s == "openid") {
        return (StatusCode::BAD_REQUEST, "bad authorization request").into_response();
    }
    let code = format!("code-{}", rand_hex());
    let mut inner = fake.inner.lock().unwrap();
    let person = inner.person.clone();
    inner.codes.insert(code.clone(), Grant { nonce: get("nonce"), challenge: get("code_challenge"), redirect_uri: get("redirect_uri"), person });
    let sep = if get("redirect_uri").contains('?') { '&' } else { '?' };
    let to = format!("{}{sep}code={code}&state={}", get("redirect_uri"), margin::url::percent_encode(&get("state")));
    Redirect::to(&to).into_response()
}

fn rand_hex() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(1);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    hex(&Sha256::digest(format!("{n}-{nanos}").as_bytes())[..12])
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

async fn token(State(fake): State<FakeSso>, headers: HeaderMap, Form(form): Form<HashMap<String, String>>) -> Response {
    let mut inner = fake.inner.lock().unwrap();
    let refuse = |inner: &mut Inner, why: &str| {
        inner.refusals.push(why.to_string());
        (StatusCode::BAD_REQUEST, Json(json!({ "error": "invalid_grant", "error_description": why }))).into_response()
    };
    let basic = headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Basic ")).and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok());
    let expected = format!("{CLIENT_ID}:{CLIENT_SECRET}");
    if basic.as_deref() != Some(expected.as_bytes()) {
        return refuse(&mut inner, "client authentication");
    }
    let get = |k: &str| form.get(k).cloned().unwrap_or_default();
    if get("grant_type") != "authorization_code" {
        return refuse(&mut inner, "grant type");
    }
    let Some(grant) = inner.codes.remove(&get("code")) else { return refuse(&mut inner, "unknown or used code") };
    if grant.redirect_uri != get("redirect_uri") {
        return refuse(&mut inner, "redirect address");
    }
    if B64.encode(Sha256::digest(get("code_verifier").as_bytes())) != grant.challenge {
        return refuse(&mut inner, "PKCE verifier");
    }
    let twist = std::mem::replace(&mut inner.twist, Twist::None);
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
    let mut claims = json!({
        "iss": if twist == Twist::OtherIssuer { "http://elsewhere.example".to_string() } else { inner.issuer.clone() },
        "aud": if twist == Twist::OtherAudience { "another-app" } else { CLIENT_ID },
        "sub": grant.person.sub,
        "iat": now,
        "exp": if twist == Twist::Expired { now - 3600 } else { now + 600 },
        "nonce": if twist == Twist::OtherNonce { "a-nonce-margin-never-sent".to_string() } else { grant.nonce.clone() },
    });
    if let Some(email) = &grant.person.email {
        claims["email"] = json!(email);
    }
    if let Some(v) = grant.person.email_verified {
        claims["email_verified"] = json!(v);
    }
    if let (Some(map), Some(extra)) = (claims.as_object_mut(), grant.person.extra.as_object()) {
        for (k, v) in extra {
            map.insert(k.clone(), v.clone());
        }
    }
    let signer = if twist == Twist::StrangerKey { &inner.stranger } else { &inner.key };
    let id_token = sign(signer, &claims);
    inner.tokens_issued += 1;
    Json(json!({ "access_token": format!("access-{}", rand_hex()), "token_type": "Bearer", "expires_in": 600, "id_token": id_token })).into_response()
}

/// A JWS in compact form, RS256.
pub fn sign(key: &RsaPrivateKey, claims: &Value) -> String {
    let header = json!({ "alg": "RS256", "typ": "JWT", "kid": "provider-1" });
    let input = format!("{}.{}", B64.encode(header.to_string()), B64.encode(claims.to_string()));
    let signature = SigningKey::<Sha256>::new(key.clone()).sign(input.as_bytes());
    format!("{input}.{}", B64.encode(signature.to_bytes()))
}
