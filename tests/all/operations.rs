//! The operator's tools: `/metrics` scraped with its token (and closed
//! without it), `/readyz`, logs as JSON when asked, and `margin copy` moving
//! a real SQLite file with a teacher's and a class's work into PostgreSQL.
#![cfg(feature = "ssr")]

use crate::common;

use std::{
    io::{BufRead, BufReader},
    process::{Command, Stdio},
};

use axum::http::{header, StatusCode};
use common::{app, app_with, read_events, start_turn, teacher, Auth};
use margin::{chat::sse::SseParser, server::config::Config};
use serde_json::{json, Value};

const TOKEN: &str = "scrape-me-7f3a9c";

#[tokio::test]
async fn metrics_are_scraped_with_the_token_and_closed_without_it() {
    let app = app_with(Config { metrics_token: Some(TOKEN.into()), ..Config::default() }).await;
    let t = teacher(&app, "ops@x.org").await;
    // A reply, so that there are tokens and a first event to count.
    let mut body = start_turn(&app, &t.token, &t.session_id, "test").await.into_body();
    let events = read_events(&mut body, &mut SseParser::new(), usize::MAX).await;
    assert_eq!(events.last().unwrap().event, "done");

    assert_eq!(app.get("/metrics", Auth::None).await.status, StatusCode::UNAUTHORIZED);
    assert_eq!(app.get("/metrics", Auth::Bearer("not-the-token")).await.status, StatusCode::UNAUTHORIZED);
    assert_eq!(app.get("/metrics", Auth::Bearer(&t.token)).await.status, StatusCode::UNAUTHORIZED, "a teacher's session is not the token");
    let scraped = app.get("/metrics", Auth::Bearer(TOKEN)).await;
    assert_eq!(scraped.status, StatusCode::OK);
    assert!(scraped.headers[header::CONTENT_TYPE].to_str().unwrap().starts_with("application/openmetrics-text"));
    let school: String = sqlx::query_scalar("SELECT school_id FROM users WHERE id = $1").bind(app.user_id(&t.token).await).fetch_one(&app.state.db).await.unwrap();
    let text = &scraped.body;
    for name in [
        "margin_replies_running 0",
        "margin_lesson_pages_open",
        "margin_reply_readers_open",
        "margin_provider_first_event_seconds_count",
        "margin_event_lag_seconds_count",
        "margin_db_pool_wait_seconds_count",
        "margin_db_pool_connections",
    ] {
        assert!(text.contains(name), "{name} in:\n{text}");
    }
    let tokens = text.lines().find(|l| l.starts_with(&format!("margin_tokens_total{{school=\"{school}\"}}"))).unwrap_or_else(|| panic!("the school's tokens in:\n{text}"));
    let used: f64 = tokens.rsplit(' ').next().unwrap().parse().unwrap();
    assert!(used > 0.0, "{tokens}");
    assert!(text.trim_end().ends_with("# EOF"));
    assert!(!text.contains(&t.token) && !text.contains(TOKEN), "no secret is in the numbers");

    // Without a token set, there is no /metrics at all.
    let closed = common::app().await;
    assert_eq!(closed.get("/metrics", Auth::Bearer(TOKEN)).await.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn readyz_says_ready_and_then_not_while_the_instance_stops() {
    let app = app().await;
    // On PostgreSQL an instance is ready once it hears the others' notes.
    app.state.bus.settle(&app.state.db).await;
    let ready = app.get("/readyz", Auth::None).await;
    assert_eq!(ready.status, StatusCode::OK, "{}", ready.body);
    assert_eq!(ready.json(), json!({"ready": true}));
    app.state.turns.shutdown(std::time::Duration::from_secs(1)).await;
    let stopping = app.get("/readyz", Auth::None).await;
    assert_eq!(stopping.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(stopping.json(), json!({"ready": false, "reason": "The instance is stopping."}));
}

#[test]
fn logs_are_json_lines_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_margin"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("DATABASE_URL", format!("sqlite://{}/margin.db", dir.path().display()))
        .env("LEPTOS_SITE_ADDR", format!("127.0.0.1:{port}"))
        .env("LEPTOS_OUTPUT_NAME", "margin")
        .env("LEPTOS_SITE_ROOT", dir.path())
        .env("AI_PROVIDER", "demo")
        .env("RUST_LOG", "info")
        .env("MARGIN_LOG_FORMAT", "json")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Read on a thread of its own, so that a server that never says where it
    // listens fails the test instead of holding it.
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    // The log goes to standard output.
    let out = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    // Every line up to the one that says where it listens is a JSON object.
    let mut seen: Vec<String> = Vec::new();
    let mut listening = false;
    while let Ok(line) = rx.recv_timeout(std::time::Duration::from_secs(60)) {
        seen.push(line.clone());
        let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        assert!(v["level"].is_string() && v["timestamp"].is_string(), "{v}");
        if v["fields"]["message"].as_str().is_some_and(|m| m.contains("listening")) {
            listening = true;
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(listening, "the server said where it listens, as JSON: {seen:#?}");
}

/// Every table's rows, by table, in a database.
async fn counts(db: &margin::server::db::Db, tables: &[String]) -> Vec<(String, i64)> {
    let mut out = Vec::new();
    for t in tables {
        let n: i64 = sqlx::query_scalar(&format!("SELECT COUNT(*) FROM {t}")).fetch_one(db).await.unwrap();
        out.push((t.clone(), n));
    }
    out
}

#[tokio::test]
async fn margin_copy_moves_a_sqlite_school_into_an_empty_postgresql_and_refuses_a_full_one() {
    if common::database::postgres() {
        eprintln!("the copy reads a SQLite file: this test runs in the SQLite pass (with a PostgreSQL database as the target)");
        return;
    }
    // A school's work on SQLite: a teacher's lesson with versions, a reply,
    // material; a class with the lesson published and a student's answers.
    // The copy is of a quiet database: no automatic reply starts from the student's answer.
    let app = app().await;
    let t = common::classes::school_at_work(&app, "copy@x.org").await;

    sqlx::query("UPDATE lessons SET review_edits = 1 WHERE id = $1").bind(&t.lesson_id).execute(&app.state.db).await.unwrap();
    let source_url = app.database.url.clone();
    let target = common::database::TestDatabase::new_postgres().await;
    let tables: Vec<String> = {
        let pg = margin::server::db::connect(&target.url).await.unwrap();
        sqlx::query_scalar("SELECT table_name::TEXT FROM information_schema.tables WHERE table_schema = current_schema() AND table_name <> '_sqlx_migrations' ORDER BY 1")
            .fetch_all(&pg)
            .await
            .unwrap()
    };
    let before = counts(&app.state.db, &tables).await;
    let copy = |to: &str| {
        Command::new(env!("CARGO_BIN_EXE_margin"))
            .args(["copy", "--from", &source_url, "--to", to])
            .env("RUST_LOG", "warn")
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap()
    };
    let out = copy(&target.url);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(said.contains("every count matches"), "{said}");

    // Every table, row for row; the storage each account keeps, byte for byte.
    let pg = margin::server::db::connect(&target.url).await.unwrap();
    assert!(tables.len() > 15, "{tables:?}");
    let after = counts(&pg, &tables).await;
    assert_eq!(before, after);
    for table in ["users", "lessons", "lesson_revisions", "chat_messages", "lesson_sources", "classes", "student_answers"] {
        assert!(after.iter().any(|(t, n)| t == table && *n > 0), "{table} was copied with rows: {after:?}");
    }
    let stored = "SELECT email, stored_bytes FROM users ORDER BY email";
    let (a, b): (Vec<(String, i64)>, Vec<(String, i64)>) = (sqlx::query_as(stored).fetch_all(&app.state.db).await.unwrap(), sqlx::query_as(stored).fetch_all(&pg).await.unwrap());
    assert_eq!(a, b, "the storage counts are the source's, not counted twice");
    // A flag (0 or 1 in SQLite) arrives as PostgreSQL's boolean.
    let flag: bool = sqlx::query_scalar("SELECT review_edits FROM lessons WHERE id = $1").bind(&t.lesson_id).fetch_one(&pg).await.unwrap();
    assert!(flag, "review_edits was on in SQLite");

    // The copied school works: the teacher's session reads their lesson there.
    let dir = tempfile::tempdir().unwrap();
    let server = common_server::Server::start(&target.url, dir.path(), &[]).await;
    let lesson = server.get_json(&format!("/api/lessons/{}", t.lesson_id), &t.token).await;
    assert_eq!(lesson["revision"], 2, "{lesson}");
    drop(server);

    // A second copy into the same (now full) database is refused, and
    // changes nothing (the server that ran on it has added its own rows).
    let full = counts(&pg, &tables).await;
    let again = copy(&target.url);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("not empty"), "{}", String::from_utf8_lossy(&again.stderr));
    assert_eq!(counts(&pg, &tables).await, full);
}

use crate::common::server as common_server;
