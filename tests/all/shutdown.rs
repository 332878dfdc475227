//! The real server process, stopped.
//! - SIGTERMed with 50 turns streaming, readers that never read and an upload
//!   that never finishes, it exits within `MARGIN_SHUTDOWN_SECS` (after the
//!   turns' own grace) and has stored every turn as interrupted with the
//!   words it had.
//! - Killed (-9) mid-turn, the next process marks the turn interrupted, and
//!   Retry runs it again with the question shown once.

use std::{
    io::{Read, Write},
    net::TcpStream,
    sync::mpsc,
    time::{Duration, Instant},
};

use serde_json::{json, Value};

use crate::common::database;
use crate::common::server;

use server::{until_count,  Server};

const TURNS: usize = 50;
const NEVER_READ: usize = 5;
const SHUTDOWN_SECS: u64 = 2;
/// The server's settings here: the stop above, a short lease (a killed
/// server's reply is ended soon), and no limit on replies (one teacher
/// starts fifty at once).
const SERVER_ENV: [(&str, &str); 3] = [("MARGIN_SHUTDOWN_SECS", "2"), ("MARGIN_TURN_LEASE_SECS", "3"), ("MARGIN_TURNS_PER_MINUTE_USER", "0")];
/// The turns' grace in `startup` (5 s) plus the bound, plus room for a busy machine.
const DEADLINE: Duration = Duration::from_secs(5 + SHUTDOWN_SECS + 13);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_with_open_streams_exits_in_time_and_keeps_every_partial_reply() {
    let dir = tempfile::tempdir().unwrap();
    let database = database::TestDatabase::new(dir.path()).await;
    let server = Server::start(&database.url, dir.path(), &SERVER_ENV).await;
    let base = server.base.clone();
    let port: u16 = base.rsplit(':').next().unwrap().parse().unwrap();
    let http = reqwest::Client::new();

    let post = |path: String, auth: Option<String>, body: Value| {
        let mut req = http.post(format!("{base}{path}")).json(&body);
        if let Some(auth) = auth {
            req = req.header("authorization", auth);
        }
        async move { req.send().await.unwrap().json::<Value>().await.unwrap() }
    };
    let signup = post("/api/auth/signup".into(), None, json!({"email": "stop@school.org", "password": "correct horse"})).await;
    let token = signup["token"].as_str().unwrap().to_string();
    let auth = format!("Bearer {token}");
    let no_redirect = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let made = no_redirect
        .post(format!("{base}/lessons/new"))
        .header("authorization", &auth)
        .header("content-type", "application/x-www-form-urlencoded")
        .body("title=Stopping")
        .send()
        .await
        .unwrap();
    let lesson = made.headers()["location"].to_str().unwrap().trim_start_matches("/lessons/").to_string();

    let mut streams = Vec::new();
    for i in 0..TURNS {
        let chat = post(format!("/api/lessons/{lesson}/chats"), Some(auth.clone()), json!({"title": format!("Chat {i}")})).await;
        let mut res = http
            .post(format!("{base}/api/chat/stream"))
            .header("authorization", &auth)
            .json(&json!({"sessionId": chat["id"], "content": "hold on"}))
            .send()
            .await
            .unwrap();
        assert!(res.status().is_success(), "turn {i}: {}", res.status());
        if i >= NEVER_READ {
            // Follow until the first words arrive, then stop reading.
            let mut seen = String::new();
            while !seen.contains("event: text") {
                let chunk = res.chunk().await.unwrap().expect("stream ended early");
                seen.push_str(&String::from_utf8_lossy(&chunk));
            }
        }
        streams.push(res);
    }

    // An upload that announces a body and never sends it.
    let mut slow = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        slow,
        "PUT /api/lessons/{lesson}/document HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: {auth}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{{\"xml\":"
    )
    .unwrap();
    slow.flush().unwrap();

    // Every turn's first words are stored before the stop (checkpoints), so
    // "kept its words" below is about the stop, not about timing.
    let pool = margin::server::db::connect(&database.url).await.unwrap();
    until_count(
        &pool,
        "SELECT COUNT(*) FROM chat_messages WHERE role = 'assistant' AND status = 'running' AND content LIKE 'Thinking%'",
        TURNS as i64,
    )
    .await;

    let stopped_at = Instant::now();
    server.signal("-TERM");
    let (tx, rx) = mpsc::channel();
    let mut server = server;
    let mut child = server.take_child();
    std::thread::spawn(move || {
        let status = child.wait();
        let _ = tx.send(status);
    });
    let status = rx.recv_timeout(DEADLINE).unwrap_or_else(|_| panic!("the server was still running {DEADLINE:?} after SIGTERM"));
    let took = stopped_at.elapsed();
    assert!(status.unwrap().success(), "the server did not exit cleanly");
    eprintln!("stopped in {took:?} with {TURNS} open streams");

    let rows: Vec<(String, String)> = sqlx::query_as("SELECT status, content FROM chat_messages WHERE role = 'assistant'")
        .fetch_all(&pool)
        .await
        .unwrap();
    assert_eq!(rows.len(), TURNS);
    for (status, content) in &rows {
        assert_eq!(status, "interrupted");
        assert!(content.starts_with("Thinking about this carefully"), "partial text lost: {content:?}");
    }
    let mut rest = Vec::new();
    let _ = slow.read_to_end(&mut rest);
    drop(streams);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_kill_9_mid_turn_retry_runs_the_turn_again_and_the_question_shows_once() {
    let dir = tempfile::tempdir().unwrap();
    let database = database::TestDatabase::new(dir.path()).await;
    let mut server = Server::start(&database.url, dir.path(), &SERVER_ENV).await;
    let http = reqwest::Client::new();
    let auth = server.sign_up(&http, "kill@school.org").await;
    let pool = margin::server::db::connect(&database.url).await.unwrap();
    let owner: String = sqlx::query_scalar("SELECT id FROM users").fetch_one(&pool).await.unwrap();
    let lesson = margin::server::lessons::create(&pool, &owner, "Killed").await.unwrap().id;
    let chat = margin::server::chats::create_session(&pool, &owner, &lesson, "").await.unwrap().id;
    let turn = |retry: bool| {
        http.post(format!("{}/api/chat/stream", server.base))
            .header("authorization", &auth)
            .json(&json!({"sessionId": chat, "content": "hold on", "retry": retry}))
            .send()
    };
    let held = turn(false).await.unwrap();
    assert!(held.status().is_success());
    until_count(&pool, "SELECT COUNT(*) FROM chat_messages WHERE status = 'running' AND content LIKE 'Thinking%'", 1).await;

    // No chance to save anything: the next process finds the turn running.
    server.signal("-KILL");
    server.wait();
    drop(held);
    let server = Server::start(&database.url, dir.path(), &SERVER_ENV).await;
    until_count(&pool, "SELECT COUNT(*) FROM chat_messages WHERE status = 'interrupted'", 1).await;

    let http = reqwest::Client::new();
    let retried = http
        .post(format!("{}/api/chat/stream", server.base))
        .header("authorization", &auth)
        .json(&json!({"sessionId": chat, "content": "hold on", "retry": true}))
        .send()
        .await
        .unwrap();
    assert!(retried.status().is_success(), "{}", retried.status());
    let turn_id = retried.headers()["x-turn-id"].to_str().unwrap().to_string();
    let rows: Vec<(String, String)> = sqlx::query_as("SELECT role, status FROM chat_messages ORDER BY seq").fetch_all(&pool).await.unwrap();
    assert_eq!(rows, vec![("user".to_string(), "complete".to_string()), ("assistant".to_string(), "running".to_string())]);
    let cancelled = http
        .post(format!("{}/api/chat/turns/{turn_id}/cancel", server.base))
        .header("authorization", &auth)
        .send()
        .await
        .unwrap();
    assert!(cancelled.status().is_success());
    drop(retried);
    server.signal("-TERM");
}
