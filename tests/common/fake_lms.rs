//! An LMS platform for the tests, speaking LTI 1.3's launch: its keys
//! (JWKS, the same real RSA key as `fake_sso`), and an authorization
//! endpoint that checks Margin's authentication request (scope, response
//! type and mode, prompt, client id, the login hint it started with) and
//! signs the launch's ID token for the chosen person, as a platform's
//! auto-posting form would carry it. The test posts it to Margin, as the
//! browser would. A test can twist the next token.

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
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/common/keys").join(name);
            Arc::new(rsa::RsaPrivateKey::from_pkcs8_pem(&std::fs::read_to_string(path).unwrap()).unwrap())
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let issuer = format!("http://{}", listener.local_addr().unwrap());
        let inner = Inner { members: Vec::new(), roster_reads: Vec::new(), token_requests: Vec::new(), scores: Vec::new(), launcher: Launcher::new("nobody", "nobody@lms.example", LEARNER), twist: Twist::None, login_hint: String::new(), posted: None, refusals: Vec::new() };
        let fake = FakeLms { inner: Arc::new(Mutex::new(inner)), key: key("provider.pem"), stranger: key("stranger.pem"), issuer };
        let app = Router::new()
            .route("/jwks", get(jwks))
            .route("/authorize", get(authorize))
            .route("/token", axum::routing::post(token))
            .route("/lineitems/{n}/lineitem/scores", axum::routing::post(score))
            .route("/memberships/{course}", get(memberships))
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
}

async fn jwks(State(fake): State<FakeLms>) -> Json<Value> {
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

/// The roster, two members a page, the next page named in `Link`.
async fn memberships(State(fake): State<FakeLms>, uri: axum::http::Uri, headers: axum::http::HeaderMap, Query(q): Query<std::collections::HashMap<String, String>>) -> Response {
    let header = |name: axum::http::HeaderName| headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
    let mut inner = fake.inner.lock().unwrap();
    inner.roster_reads.push((header(axum::http::header::AUTHORIZATION), header(axum::http::header::ACCEPT)));
    let page: usize = q.get("page").and_then(|p| p.parse().ok()).unwrap_or(0);
    let members: Vec<Value> = inner.members.iter().skip(page * 2).take(2).cloned().collect();
    let mut res = Json(json!({ "id": format!("{}{}", fake.issuer, uri.path()), "context": { "id": "course-9" }, "members": members })).into_response();
    if inner.members.len() > (page + 1) * 2 {
        let next = format!("<{}{}?page={}>; rel=\"next\"", fake.issuer, uri.path(), page + 1);
        res.headers_mut().insert(axum::http::header::LINK, next.parse().unwrap());
    }
    res
}
