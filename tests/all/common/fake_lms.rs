//! An LMS platform for the tests, speaking LTI 1.3's launch: its keys
//! (JWKS, the same real RSA key as `fake_sso`), and an authorization
//! endpoint that checks Margin's authentication request (scope, response
//! type and mode, prompt, client id, the login hint it started with) and
//! signs the launch's ID token for the chosen person, as a platform's
//! auto-posting form would carry it. The test posts it to Margin, as the
//! browser would. A test can twist the next token.
//!
//! Its token address acts as a platform's does: it gives an access token
//! only for a client assertion from its own client id, for its own token
//! address, signed by a key of the tool's that its admin configured
//! (`trust`: the keys published at the registration's own address); with
//! none configured, nobody gets a token.

use std::sync::{Arc, Mutex};

use axum::{
    extract::{Query, State},
    http::StatusCode,
    response::{IntoResponse, Response},
    routing::get,
    Json, Router,
};
use serde_json::{json, Value};

use super::fake_sso::{sign, Twist};

pub const CLIENT_ID: &str = "margin-lms-test";
pub const DEPLOYMENT: &str = "deployment-1";
pub const INSTRUCTOR: &str = "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor";
pub const LEARNER: &str = "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner";

/// Who launches, from where.
#[derive(Clone, Debug)]
pub struct Launcher {
    pub sub: String,
    pub email: Option<String>,
    pub role: &'static str,
    pub context: Option<(String, String)>,
    pub custom: Value,
    pub deployment: String,
    /// A Deep Linking request, answered at this address.
    pub deep_link_return: Option<String>,
    /// The line item scores of this launch go to (Assignment and Grade Services).
    pub line_item: Option<String>,
    /// The launch names the course's roster (Names and Role Provisioning).
    pub roster: bool,
}

impl Launcher {
    pub fn new(sub: &str, email: &str, role: &'static str) -> Self {
        Self {
            sub: sub.into(),
            email: Some(email.into()),
            role,
            context: Some(("course-9".into(), "Year 8 Science".into())),
            custom: json!({}),
            deployment: DEPLOYMENT.into(),
            deep_link_return: None,
            line_item: None,
            roster: false,
        }
    }
}

/// A launch the platform signed: what its form posts to Margin.
#[derive(Clone, Debug)]
pub struct Posted {
    pub redirect_uri: String,
    pub id_token: String,
    pub state: String,
}

/// A score the platform received.
#[derive(Clone, Debug)]
pub struct Received {
    pub path: String,
    pub authorization: String,
    pub content_type: String,
    pub body: Value,
}

struct Inner {
    /// The course's members, as the roster lists them.
    members: Vec<Value>,
    /// Roster pages served, with the Authorization and Accept they came with.
    roster_reads: Vec<(String, String)>,
    /// Token requests: the client assertion and the scope.
    pub token_requests: Vec<(String, String)>,
    scores: Vec<Received>,
    launcher: Launcher,
    twist: Twist,
    login_hint: String,
    posted: Option<Posted>,
    refusals: Vec<String>,
    /// The tool's keys this platform trusts (its JWKS), by key id.
    trusted: Vec<(String, rsa::RsaPublicKey)>,
    /// How many times its keys were fetched.
    jwks_reads: usize,
    /// The roster's `Link` written without quotes (`rel=next`), as
    /// lti1p3platform writes it.
    unquoted_links: bool,
    /// A roster page that answers 500.
    failing_page: Option<usize>,
    /// Registrations a tool sent (LTI Dynamic Registration), with the
    /// registration token each came with.
    registrations: Vec<(String, Value)>,
}

#[derive(Clone)]
pub struct FakeLms {
    inner: Arc<Mutex<Inner>>,
    key: Arc<rsa::RsaPrivateKey>,
    stranger: Arc<rsa::RsaPrivateKey>,
    pub issuer: String,
}

impl FakeLms {
    pub async fn start() -> Self {
        use rsa::pkcs8::DecodePrivateKey;
        let key = |name: &str| {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/all/common/keys").join(name);
            Arc::new(rsa::RsaPrivateKey::from_pkcs8_pem(&std::fs::read_to_string(path).unwrap()).unwrap())
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let issuer = format!("http://{}", listener.local_addr().unwrap());
        let inner = Inner { members: Vec::new(), roster_reads: Vec::new(), token_requests: Vec::new(), scores: Vec::new(), launcher: Launcher::new("nobody", "nobody@lms.example", LEARNER), twist: Twist::None, login_hint: String::new(), posted: None, refusals: Vec::new(), trusted: Vec::new(), jwks_reads: 0, unquoted_links: false, failing_page: None, registrations: Vec::new() };
        let fake = FakeLms { inner: Arc::new(Mutex::new(inner)), key: key("provider.pem"), stranger: key("stranger.pem"), issuer };
        let app = Router::new()
            .route("/jwks", get(jwks))
            .route("/authorize", get(authorize))
            .route("/token", axum::routing::post(token))
            .route("/lineitems/{n}/lineitem/scores", axum::routing::post(score))
            .route("/memberships/{course}", get(memberships))
            .route("/.well-known/openid-configuration", get(configuration))
            .route("/register", axum::routing::post(register))
            .with_state(fake.clone());
        tokio::spawn(async move {
            axum::serve(listener, app).await.ok();
        });
        fake
    }

    /// The registration a school's admin enters for this platform.
    pub fn registration(&self) -> Value {
        json!({
            "name": "Test LMS", "issuer": self.issuer, "clientId": CLIENT_ID, "deployments": DEPLOYMENT,
            "loginUrl": format!("{}/authorize", self.issuer), "tokenUrl": format!("{}/token", self.issuer), "jwksUrl": format!("{}/jwks", self.issuer),
        })
    }

    /// The login initiation the platform sends Margin for `launcher`.
    pub fn initiation(&self, launcher: Launcher) -> Vec<(String, String)> {
        let hint = format!("hint-{}", launcher.sub);
        let mut inner = self.inner.lock().unwrap();
        inner.login_hint = hint.clone();
        inner.launcher = launcher;
        vec![
            ("iss".into(), self.issuer.clone()),
            ("login_hint".into(), hint),
            ("target_link_uri".into(), "http://127.0.0.1:3000/lti/launch".into()),
            ("lti_message_hint".into(), "message-hint".into()),
            ("client_id".into(), CLIENT_ID.into()),
            ("lti_deployment_id".into(), DEPLOYMENT.into()),
        ]
    }

    pub fn twist_next(&self, twist: Twist) {
        self.inner.lock().unwrap().twist = twist;
    }

    pub fn take_posted(&self) -> Option<Posted> {
        self.inner.lock().unwrap().posted.take()
    }

    /// A line item of this platform.
    pub fn line_item(&self, n: u32) -> String {
        format!("{}/lineitems/{n}/lineitem", self.issuer)
    }

    pub fn set_members(&self, members: Vec<Value>) {
        self.inner.lock().unwrap().members = members;
    }

    pub fn roster_reads(&self) -> Vec<(String, String)> {
        self.inner.lock().unwrap().roster_reads.clone()
    }

    pub fn scores(&self) -> Vec<Received> {
        self.inner.lock().unwrap().scores.clone()
    }

    pub fn token_requests(&self) -> Vec<(String, String)> {
        self.inner.lock().unwrap().token_requests.clone()
    }

    pub fn refusals(&self) -> Vec<String> {
        self.inner.lock().unwrap().refusals.clone()
    }

    /// The platform's admin enters the tool's keys (a JWKS, as fetched from
    /// the address Margin gave for the registration).
    pub fn trust(&self, jwks: &Value) {
        use base64::{engine::general_purpose::URL_SAFE_NO_PAD as B64, Engine};
        let keys = jwks["keys"].as_array().cloned().unwrap_or_default();
        let trusted = keys
            .iter()
            .map(|k| {
                let n = rsa::BigUint::from_bytes_be(&B64.decode(k["n"].as_str().unwrap()).unwrap());
                let e = rsa::BigUint::from_bytes_be(&B64.decode(k["e"].as_str().unwrap()).unwrap());
                (k["kid"].as_str().unwrap().to_string(), rsa::RsaPublicKey::new(n, e).unwrap())
            })
            .collect();
        self.inner.lock().unwrap().trusted = trusted;
    }

    pub fn jwks_reads(&self) -> usize {
        self.inner.lock().unwrap().jwks_reads
    }

    pub fn write_unquoted_links(&self) {
        self.inner.lock().unwrap().unquoted_links = true;
    }

    pub fn fail_roster_page(&self, page: Option<usize>) {
        self.inner.lock().unwrap().failing_page = page;
    }

    /// Where the platform describes itself, for Dynamic Registration.
    pub fn configuration_url(&self) -> String {
        format!("{}/.well-known/openid-configuration", self.issuer)
    }

    pub fn registrations(&self) -> Vec<(String, Value)> {
        self.inner.lock().unwrap().registrations.clone()
    }

    /// The token address.
    pub fn token_url(&self) -> String {
        format!("{}/token", self.issuer)
    }
}

/// Whether `assertion` is a JWT signed RS256 by one of `trusted`, with the
/// claims a client assertion for `client_id` at `token_url` must carry.
fn assertion_holds(assertion: &str, trusted: &[(String, rsa::RsaPublicKey)], token_url: &str) -> Result<(), String> {
    use base64::{engine::general_purpose::URL_SAFE_NO_PAD as B64, Engine};
    use rsa::{pkcs1v15::{Signature, VerifyingKey}, sha2::Sha256, signature::Verifier};
    let parts: Vec<&str> = assertion.split('.').collect();
    let [header, claims, signature] = parts.as_slice() else { return Err("not a JWT".into()) };
    let header: Value = serde_json::from_slice(&B64.decode(header).map_err(|e| e.to_string())?).map_err(|e| e.to_string())?;
    let claims: Value = serde_json::from_slice(&B64.decode(claims).map_err(|e| e.to_string())?).map_err(|e| e.to_string())?;
    let key = trusted.iter().find(|(kid, _)| header["kid"].as_str() == Some(kid)).map(|(_, k)| k).ok_or("signed by a key this platform does not trust")?;
    let signature = Signature::try_from(B64.decode(signature).map_err(|e| e.to_string())?.as_slice()).map_err(|e| e.to_string())?;
    VerifyingKey::<Sha256>::new(key.clone()).verify(format!("{header}.{claims}", header = parts[0], claims = parts[1]).as_bytes(), &signature).map_err(|_| "the signature does not verify")?;
    if claims["iss"] != CLIENT_ID || claims["sub"] != CLIENT_ID {
        return Err("not this platform's client".into());
    }
    if claims["aud"] != token_url {
        return Err("not for this token address".into());
    }
    Ok(())
}

async fn jwks(State(fake): State<FakeLms>) -> Json<Value> {
    fake.inner.lock().unwrap().jwks_reads += 1;
    use base64::{engine::general_purpose::URL_SAFE_NO_PAD as B64, Engine};
    use rsa::traits::PublicKeyParts;
    let public = fake.key.to_public_key();
    Json(json!({ "keys": [{ "kty": "RSA", "use": "sig", "alg": "RS256", "kid": "provider-1", "n": B64.encode(public.n().to_bytes_be()), "e": B64.encode(public.e().to_bytes_be()) }] }))
}

async fn authorize(State(fake): State<FakeLms>, Query(q): Query<std::collections::HashMap<String, String>>) -> Response {
    let get = |k: &str| q.get(k).cloned().unwrap_or_default();
    let mut inner = fake.inner.lock().unwrap();
    let wrong = [
        ("scope", "openid"),
        ("response_type", "id_token"),
        ("response_mode", "form_post"),
        ("prompt", "none"),
        ("client_id", CLIENT_ID),
        ("login_hint", inner.login_hint.as_str()),
        ("lti_message_hint", "message-hint"),
    ]
    .iter()
    .find(|(k, v)| get(k) != *v)
    .map(|(k, _)| k.to_string());
    if let Some(k) = wrong.or_else(|| get("nonce").is_empty().then(|| "nonce".to_string())) {
        inner.refusals.push(k.clone());
        return (StatusCode::BAD_REQUEST, format!("bad {k}")).into_response();
    }
    let twist = std::mem::replace(&mut inner.twist, Twist::None);
    let l = inner.launcher.clone();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
    let c = "https://purl.imsglobal.org/spec/lti/claim/";
    let mut claims = json!({
        "iss": if twist == Twist::OtherIssuer { "http://elsewhere.example".to_string() } else { fake.issuer.clone() },
        "aud": if twist == Twist::OtherAudience { "another-tool" } else { CLIENT_ID },
        "azp": CLIENT_ID,
        "sub": l.sub,
        "iat": now,
        "exp": if twist == Twist::Expired { now - 3600 } else { now + 300 },
        "nonce": if twist == Twist::OtherNonce { "a-nonce-margin-never-sent".to_string() } else { get("nonce") },
        "name": "Test Person",
        format!("{c}message_type"): "LtiResourceLinkRequest",
        format!("{c}version"): "1.3.0",
        format!("{c}deployment_id"): l.deployment,
        format!("{c}target_link_uri"): get("redirect_uri"),
        format!("{c}resource_link"): { "id": "link-1", "title": "Margin" },
        format!("{c}roles"): [l.role],
        format!("{c}custom"): l.custom,
    });
    if let Some(email) = &l.email {
        claims["email"] = json!(email);
    }
    if let Some(item) = &l.line_item {
        claims["https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"] = json!({
            "scope": ["https://purl.imsglobal.org/spec/lti-ags/scope/lineitem", "https://purl.imsglobal.org/spec/lti-ags/scope/score"],
            "lineitems": format!("{}/lineitems", fake.issuer),
            "lineitem": item,
        });
    }
    if l.roster {
        claims["https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"] = json!({
            "context_memberships_url": format!("{}/memberships/{}", fake.issuer, l.context.as_ref().map(|c| c.0.as_str()).unwrap_or("none")),
            "service_versions": ["2.0"],
        });
    }
    if let Some(back) = &l.deep_link_return {
        claims[format!("{c}message_type").as_str()] = json!("LtiDeepLinkingRequest");
        if let Some(map) = claims.as_object_mut() {
            map.remove(&format!("{c}resource_link"));
        }
        claims["https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"] = json!({
            "deep_link_return_url": back, "accept_types": ["ltiResourceLink"], "accept_presentation_document_targets": ["window"], "data": "platform-data-7",
        });
    }
    if let Some((id, title)) = &l.context {
        claims[format!("{c}context")] = json!({ "id": id, "title": title, "label": "SCI8" });
    }
    let key = if twist == Twist::StrangerKey { &fake.stranger } else { &fake.key };
    let id_token = sign(key, &claims);
    inner.posted = Some(Posted { redirect_uri: get("redirect_uri"), id_token, state: get("state") });
    (StatusCode::OK, "<form method=post>…</form>").into_response()
}

/// The token address: a client-credentials grant proved by a JWT, as LTI asks.
async fn token(State(fake): State<FakeLms>, axum::extract::Form(form): axum::extract::Form<std::collections::HashMap<String, String>>) -> Response {
    let get = |k: &str| form.get(k).cloned().unwrap_or_default();
    let mut inner = fake.inner.lock().unwrap();
    if get("grant_type") != "client_credentials" || get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" || get("client_assertion").split('.').count() != 3 {
        inner.refusals.push("token request".into());
        return (StatusCode::BAD_REQUEST, Json(json!({"error": "invalid_request"}))).into_response();
    }
    if let Err(why) = assertion_holds(&get("client_assertion"), &inner.trusted, &format!("{}/token", fake.issuer)) {
        inner.refusals.push(format!("token assertion: {why}"));
        return (StatusCode::UNAUTHORIZED, Json(json!({"error": "invalid_client"}))).into_response();
    }
    inner.token_requests.push((get("client_assertion"), get("scope")));
    let n = inner.token_requests.len();
    Json(json!({ "access_token": format!("lms-access-{n}"), "token_type": "Bearer", "expires_in": 3600, "scope": get("scope") })).into_response()
}

async fn score(State(fake): State<FakeLms>, uri: axum::http::Uri, headers: axum::http::HeaderMap, body: String) -> Response {
    let header = |name: axum::http::HeaderName| headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
    let received = Received {
        path: uri.path().to_string(),
        authorization: header(axum::http::header::AUTHORIZATION),
        content_type: header(axum::http::header::CONTENT_TYPE),
        body: serde_json::from_str(&body).unwrap_or(Value::Null),
    };
    fake.inner.lock().unwrap().scores.push(received);
    StatusCode::OK.into_response()
}

/// The platform's configuration, as LTI Dynamic Registration reads it.
async fn configuration(State(fake): State<FakeLms>) -> Json<Value> {
    let i = &fake.issuer;
    Json(json!({
        "issuer": i, "authorization_endpoint": format!("{i}/authorize"), "token_endpoint": format!("{i}/token"), "jwks_uri": format!("{i}/jwks"),
        "registration_endpoint": format!("{i}/register"), "scopes_supported": ["openid"], "response_types_supported": ["id_token"],
        "id_token_signing_alg_values_supported": ["RS256"],
        "https://purl.imsglobal.org/spec/lti-platform-configuration": { "product_family_code": "test-lms", "version": "1.0", "messages_supported": [{"type": "LtiResourceLinkRequest"}, {"type": "LtiDeepLinkingRequest"}] },
    }))
}

/// Takes a tool's registration (with the registration token it handed
/// out), answering with the tool's client id and deployment here; it then
/// trusts the keys at the registration's `jwks_uri`, which the test fetches
/// for it (`trust`).
async fn register(State(fake): State<FakeLms>, headers: axum::http::HeaderMap, Json(body): Json<Value>) -> Response {
    let bearer = headers.get(axum::http::header::AUTHORIZATION).and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Bearer ")).unwrap_or_default().to_string();
    if bearer != "registration-token-1" {
        return (StatusCode::UNAUTHORIZED, Json(json!({"error": "invalid_token"}))).into_response();
    }
    fake.inner.lock().unwrap().registrations.push((bearer, body.clone()));
    let mut answer = body;
    answer["client_id"] = json!(CLIENT_ID);
    answer["https://purl.imsglobal.org/spec/lti-tool-configuration"]["deployment_id"] = json!(DEPLOYMENT);
    Json(answer).into_response()
}

/// The roster, two members a page, the next page named in `Link`.
async fn memberships(State(fake): State<FakeLms>, uri: axum::http::Uri, headers: axum::http::HeaderMap, Query(q): Query<std::collections::HashMap<String, String>>) -> Response {
    let header = |name: axum::http::HeaderName| headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
    let mut inner = fake.inner.lock().unwrap();
    inner.roster_reads.push((header(axum::http::header::AUTHORIZATION), header(axum::http::header::ACCEPT)));
    let page: usize = q.get("page").and_then(|p| p.parse().ok()).unwrap_or(0);
    if inner.failing_page == Some(page) {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    }
    let members: Vec<Value> = inner.members.iter().skip(page * 2).take(2).cloned().collect();
    let mut res = Json(json!({ "id": format!("{}{}", fake.issuer, uri.path()), "context": { "id": "course-9" }, "members": members })).into_response();
    if inner.members.len() > (page + 1) * 2 {
        let next = if inner.unquoted_links {
            format!("<{}{}?page={}>; rel=next", fake.issuer, uri.path(), page + 1)
        } else {
            format!("<{}{}?page={}>; rel=\"next\"", fake.issuer, uri.path(), page + 1)
        };
        res.headers_mut().insert(axum::http::header::LINK, next.parse().unwrap());
    }
    res
}
