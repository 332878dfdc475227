//! A real app for integration tests: a fresh database (a SQLite file in a
//! temporary folder, or a PostgreSQL database of its own: `database`), the
//! full router, and helpers to send requests and read responses.
#![allow(dead_code)]

pub mod classes;
pub mod database;
pub mod fake_lms;
pub mod fake_sso;
pub mod server;
pub mod tables;
pub mod waits;

use axum::{
    body::Body,
    http::{header, Method, Request, Response, StatusCode},
    Router,
};
use http_body_util::BodyExt;
use leptos::config::LeptosOptions;
use margin::{
    agent::config::AiConfig,
    scripted::ScriptedLlm,
    server::{
        chats::ai::AiRuntime,
        config::Config,
        db,
        clock::LimitClock,
        http::limits::AccountLimits,
        edge::router,
        state::AppState,
    },
};
use serde_json::Value;
use tempfile::TempDir;
use tower::ServiceExt;

pub struct TestApp {
    pub router: Router,
    pub state: AppState,
    pub dir: TempDir,
    pub database: database::TestDatabase,
}

pub async fn app() -> TestApp {
    app_with(Config::default()).await
}

pub fn prompts() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("prompts")
}

/// The assistant backed by a fresh scripted model.
pub async fn scripted_ai() -> AiRuntime {
    let llm = ScriptedLlm::start().await.expect("scripted model");
    AiRuntime::with_scripted(AiConfig::scripted(llm.base_url.clone(), prompts()), llm)
}

pub async fn app_with(config: Config) -> TestApp {
    app_with_ai(config, scripted_ai().await).await
}

/// An app whose sign-in and sign-up limits run on a clock that stands still
/// (returned, to move it).
pub async fn app_with_still_clock(config: Config) -> (TestApp, LimitClock) {
    let clock = LimitClock::manual();
    let (signups, turns, school) = (config.signups_per_client_hour, config.turns_per_minute_user, config.turns_per_minute_school);
    let mut app = app_with(config).await;
    let limits = AccountLimits::with_clock(clock.clone(), signups).with_turns_per_minute(turns).with_school_turns_per_minute(school);
    app.state.limits = std::sync::Arc::new(margin::server::state::shared_limits(limits, &app.state.db));
    app.router = router::build(app.state.clone());
    (app, clock)
}

pub async fn app_with_ai(mut config: Config, ai: AiRuntime) -> TestApp {
    let dir = tempfile::tempdir().expect("temp dir");
    let database = database::TestDatabase::new(dir.path()).await;
    config.database_url = database.url.clone();
    // The tests' platforms and providers run on this machine: the operator's
    // allowance for inner addresses, unless the test set one of its own
    // (a test of the refusal names an address it will never use).
    if config.outbound_allow.is_empty() {
        config.outbound_allow = vec![margin::server::config::ip_range::IpRange::parse("127.0.0.0/8").unwrap(), margin::server::config::ip_range::IpRange::parse("::1").unwrap()];
    }
    // Material is read by the built server binary in its child mode.
    config.extractor_program.get_or_insert_with(|| env!("CARGO_BIN_EXE_margin").into());
    let pool = db::connect(&config.database_url).await.expect("database");
    margin::server::accounts::quota::configure(&pool, config.storage_mb, config.student_storage_mb).await.expect("storage limits");
    let options = LeptosOptions::builder().output_name("margin").site_root("target/site").build();
    let mut state = AppState::new(options, pool, config, ai, std::sync::Arc::new(margin::server::reactions::versions::Listener));
    // Automatic turns wait for a clock that moves only when a test moves it.
    state.reactions = margin::server::clock::ReactionClock::manual();
    let router = router::build(state.clone());
    TestApp { router, state, dir, database }
}

pub struct Reply {
    pub status: StatusCode,
    pub headers: axum::http::HeaderMap,
    pub body: String,
}

impl Reply {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
    pub fn location(&self) -> &str {
        self.headers.get(header::LOCATION).and_then(|v| v.to_str().ok()).unwrap_or("")
    }
    pub fn set_cookie(&self) -> String {
        self.headers.get(header::SET_COOKIE).and_then(|v| v.to_str().ok()).unwrap_or("").to_string()
    }
    /// The value of cookie `name` among the `Set-Cookie` headers (`None` when
    /// absent or cleared).
    pub fn cookie(&self, name: &str) -> Option<String> {
        self.headers
            .get_all(header::SET_COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .filter_map(|v| v.split(';').next()?.split_once('='))
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.to_string())
            .filter(|v| !v.is_empty())
    }
    /// The `name=value` part of the Set-Cookie header, to send back as `Cookie`.
    pub fn cookie_pair(&self) -> String {
        self.set_cookie().split(';').next().unwrap_or("").to_string()
    }
}

async fn read(res: Response<Body>) -> Reply {
    let status = res.status();
    let headers = res.headers().clone();
    let bytes = res.into_body().collect().await.expect("body").to_bytes();
    Reply { status, headers, body: String::from_utf8_lossy(&bytes).into_owned() }
}

impl TestApp {
    /// Makes every insert into `table` fail, as a full disk would.
    pub async fn refuse_inserts(&self, table: &str) {
        self.refuse("INSERT", table).await;
    }

    /// Undoes `refuse_inserts`.
    pub async fn allow_inserts(&self, table: &str) {
        self.allow(table).await;
    }

    /// Makes every update of `table` fail, as a full disk would.
    pub async fn refuse_updates(&self, table: &str) {
        self.refuse("UPDATE", table).await;
    }

    /// Undoes `refuse_updates`.
    pub async fn allow_updates(&self, table: &str) {
        self.allow(table).await;
    }

    async fn refuse(&self, write: &str, table: &str) {
        let sql = if database::postgres() {
            format!(
                "CREATE FUNCTION no_room() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'disk full'; END $$ LANGUAGE plpgsql;
                 CREATE TRIGGER no_room BEFORE {write} ON {table} FOR EACH ROW EXECUTE FUNCTION no_room();"
            )
        } else {
            format!("CREATE TRIGGER no_room BEFORE {write} ON {table} BEGIN SELECT RAISE(ABORT, 'disk full'); END")
        };
        sqlx::raw_sql(&sql).execute(&self.state.db).await.unwrap();
        self.every_connection_reads_the_schema().await;
    }

    async fn allow(&self, table: &str) {
        let sql = if database::postgres() {
            format!("DROP TRIGGER no_room ON {table}; DROP FUNCTION no_room();")
        } else {
            "DROP TRIGGER no_room".to_string()
        };
        sqlx::raw_sql(&sql).execute(&self.state.db).await.unwrap();
        self.every_connection_reads_the_schema().await;
    }

    /// On SQLite, has every connection of the server's pools read the
    /// schema just changed, as the server's do at start, after its
    /// migrations (`db::every_connection_reads_the_schema`, which says why).
    async fn every_connection_reads_the_schema(&self) {
        if database::postgres() {
            return;
        }
        for pool in [&self.state.db, &self.state.turn_writer] {
            margin::server::db::every_connection_reads_the_schema(pool).await.unwrap();
        }
    }

    pub async fn send(&self, req: Request<Body>) -> Reply {
        read(self.router.clone().oneshot(req).await.expect("response")).await
    }

    pub async fn get(&self, path: &str, auth: Auth<'_>) -> Reply {
        self.send(auth.apply(Request::builder().method(Method::GET).uri(path)).body(Body::empty()).unwrap()).await
    }

    /// A GET whose answer is bytes (a download): status, headers, body.
    pub async fn get_bytes(&self, path: &str, auth: Auth<'_>) -> (StatusCode, axum::http::HeaderMap, Vec<u8>) {
        let res = self.router.clone().oneshot(auth.apply(Request::builder().method(Method::GET).uri(path)).body(Body::empty()).unwrap()).await.expect("response");
        let (status, headers) = (res.status(), res.headers().clone());
        (status, headers, res.into_body().collect().await.expect("body").to_bytes().to_vec())
    }

    pub async fn post_json(&self, path: &str, auth: Auth<'_>, body: Value) -> Reply {
        self.send_json(Method::POST, path, auth, body).await
    }

    /// A decision on a proposal (`path`: `/api/proposals/{id}/apply` or
    /// `…/discard`), made as a teacher makes it from what they see: naming
    /// the digest the proposal's own page gives the caller (none when it is
    /// not theirs to see), with `body`.
    pub async fn decide(&self, path: &str, auth: Auth<'_>, mut body: Value) -> Reply {
        let id = path.split('/').nth(3).expect("/api/proposals/{id}/…");
        let shown = self.get(&format!("/api/proposals/{id}"), auth).await;
        if let (Some(digest), Some(fields)) = (shown.json().get("digest").cloned(), body.as_object_mut()) {
            fields.insert("digest".into(), digest);
        }
        self.post_json(path, auth, body).await
    }

    pub async fn put_json(&self, path: &str, auth: Auth<'_>, body: Value) -> Reply {
        self.send_json(Method::PUT, path, auth, body).await
    }

    pub async fn send_json(&self, method: Method, path: &str, auth: Auth<'_>, body: Value) -> Reply {
        let req = auth
            .apply(Request::builder().method(method).uri(path))
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(body.to_string()))
            .unwrap();
        self.send(req).await
    }

    pub async fn post_form(&self, path: &str, auth: Auth<'_>, form: &[(&str, &str)]) -> Reply {
        let req = auth
            .apply(Request::builder().method(Method::POST).uri(path))
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(Body::from(serde_urlencoded::to_string(form).unwrap()))
            .unwrap();
        self.send(req).await
    }

    /// Signs up through the JSON API and returns the session token.
    pub async fn sign_up(&self, email: &str) -> String {
        let r = self
            .post_json("/api/auth/signup", Auth::None, serde_json::json!({"email": email, "password": "correct horse"}))
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
        r.json()["token"].as_str().expect("token").to_string()
    }

    pub async fn user_id(&self, token: &str) -> String {
        let me = self.get("/api/auth/me", Auth::Bearer(token)).await;
        me.json()["user"]["id"].as_str().expect("user id").to_string()
    }
}

/// A signed-up teacher with a lesson ("Verbs") and a chat about it.
pub struct Teacher {
    pub token: String,
    pub lesson_id: String,
    pub session_id: String,
}

pub async fn teacher(app: &TestApp, email: &str) -> Teacher {
    let token = app.sign_up(email).await;
    let owner = app.user_id(&token).await;
    let lesson = margin::server::lessons::create(&app.state.db, &owner, "Verbs").await.unwrap();
    let r = app.post_json(&format!("/api/lessons/{}/chats", lesson.id), Auth::Bearer(&token), serde_json::json!({"title": "First chat"})).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    Teacher { token, lesson_id: lesson.id, session_id: r.json()["id"].as_str().unwrap().to_string() }
}

/// The teacher's first words in their new lesson (which starts as its
/// title and an empty paragraph): a sentence in its paragraph, saved as
/// version 2, as the editor saves it.
pub const FIRST_WORDS: &str = "Read the poem twice, then answer the questions about it below.";
pub async fn begin_writing(app: &TestApp, t: &Teacher) {
    let owner = app.user_id(&t.token).await;
    let l = margin::server::lessons::get_editable(&app.state.db, &owner, &t.lesson_id).await.unwrap();
    let xml = l.document_xml.replace(r#"<p id="b2"/>"#, &format!(r#"<p id="b2">{FIRST_WORDS}</p>"#));
    let r = app.put_json(&format!("/api/lessons/{}/document", t.lesson_id), Auth::Bearer(&t.token), serde_json::json!({"xml": xml, "baseRevision": l.revision, "merge": true})).await;
    assert_eq!(r.json()["outcome"]["Saved"]["revision"], l.revision + 1, "{}", r.body);
}

/// A colleague of the school `admin` runs: signed up through an
/// invitation link of theirs. Their session token.
pub async fn colleague(app: &TestApp, admin: &str, email: &str) -> String {
    let invite = app.post_json("/api/school/invites", Auth::Bearer(admin), serde_json::json!({})).await.json();
    let r = app.post_json("/api/auth/signup", Auth::None, serde_json::json!({"email": email, "password": "correct horse", "invite": invite["token"]})).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    r.json()["token"].as_str().unwrap().to_string()
}

/// The origin of Margin's pages in these tests (the default listen address).
pub const OWN_ORIGIN: &str = "http://127.0.0.1:3000";

/// How a test request proves who it is.
#[derive(Clone, Copy)]
pub enum Auth<'a> {
    None,
    Bearer(&'a str),
    Cookie(&'a str),
}

impl Auth<'_> {
    pub fn apply(self, b: axum::http::request::Builder) -> axum::http::request::Builder {
        match self {
            Auth::None => b,
            Auth::Bearer(t) => b.header(header::AUTHORIZATION, format!("Bearer {t}")),
            // A browser says which page a request comes from; Margin's own
            // pages are served from the listen address.
            Auth::Cookie(t) => b.header(header::COOKIE, format!("margin_session={t}")).header(header::ORIGIN, OWN_ORIGIN),
        }
    }
}

/// Reads SSE events from a response body until `n` have arrived (or the stream ends).
pub async fn read_events(
    body: &mut Body,
    parser: &mut margin::chat::sse::SseParser,
    n: usize,
) -> Vec<margin::chat::sse::SseMessage> {
    let mut got = Vec::new();
    while got.len() < n {
        match body.frame().await {
            Some(Ok(frame)) => {
                if let Some(data) = frame.data_ref() {
                    got.extend(parser.push(data));
                }
            }
            _ => break,
        }
    }
    got
}

/// A multipart body of files (name, bytes) as `file` fields.
pub fn multipart(files: &[(&str, &[u8])]) -> (String, Vec<u8>) {
    let boundary = "m4terialB0undary";
    let mut body = Vec::new();
    for (name, bytes) in files {
        body.extend_from_slice(format!("--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\nContent-Type: application/octet-stream\r\n\r\n").as_bytes());
        body.extend_from_slice(bytes);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

/// Posts files to `path` as the lesson page's "Add material" does.
pub async fn upload(app: &TestApp, path: &str, auth: Auth<'_>, files: &[(&str, &[u8])]) -> Reply {
    let (kind, body) = multipart(files);
    let req = auth.apply(Request::builder().method(Method::POST).uri(path).header(header::CONTENT_TYPE, kind));
    app.send(req.body(Body::from(body)).unwrap()).await
}

/// Starts a turn and answers as soon as it is accepted, its stream unread
/// (dropping the response leaves the turn running).
pub async fn start_turn(app: &TestApp, token: &str, session_id: &str, content: &str) -> Response<Body> {
    let req = Request::builder()
        .method(Method::POST)
        .uri("/api/chat/stream")
        .header(header::AUTHORIZATION, format!("Bearer {token}"))
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(serde_json::json!({"sessionId": session_id, "content": content}).to_string()))
        .unwrap();
    app.router.clone().oneshot(req).await.expect("response")
}
