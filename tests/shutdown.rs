//! A stop is bounded: the real server process, SIGTERMed with 50 turns
//! streaming, readers that never read and an upload that never finishes,
//! exits within `MARGIN_SHUTDOWN_SECS` (after the turns' own grace) and has
//! stored every turn as interrupted with the words it had.

use std::{
    io::{Read, Write},
    net::TcpStream,
    process::{Command, Stdio},
    sync::mpsc,
    time::{Duration, Instant},
};

use serde_json::{json, Value};

const TURNS: usize = 50;
const NEVER_READ: usize = 5;
const SHUTDOWN_SECS: u64 = 2;
/// The turns' grace in `startup` (5 s) plus the bound, plus room for a busy machine.
const DEADLINE: Duration = Duration::from_secs(5 + SHUTDOWN_SECS + 13);

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_with_open_streams_exits_in_time_and_keeps_every_partial_reply() {
    let dir = tempfile::tempdir().unwrap();
    let db_path = dir.path().join("margin.db");
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let mut server = Command::new(env!("CARGO_BIN_EXE_margin"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("DATABASE_URL", format!("sqlite://{}", db_path.display()))
        .env("LEPTOS_SITE_ADDR", format!("127.0.0.1:{port}"))
        .env("LEPTOS_OUTPUT_NAME", "margin")
        .env("LEPTOS_SITE_ROOT", dir.path())
        .env("AI_PROVIDER", "demo")
        .env("MARGIN_SHUTDOWN_SECS", SHUTDOWN_SECS.to_string())
        .env("RUST_LOG", "warn")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("server starts");

    let http = reqwest::Client::new();
    let started = Instant::now();
    loop {
        if let Ok(r) = http.get(format!("{base}/healthz")).send().await {
            if r.status().is_success() {
                break;
            }
        }
        assert!(started.elapsed() < Duration::from_secs(60), "server never became healthy");
        tokio::task::yield_now().await;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

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
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", db_path.display())).await.unwrap();
    let waiting = Instant::now();
    loop {
        let with_words: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM chat_messages WHERE role = 'assistant' AND status = 'running' AND content LIKE 'Thinking%'",
        )
        .fetch_one(&pool)
        .await
        .unwrap();
        if with_words == TURNS as i64 {
            break;
        }
        assert!(waiting.elapsed() < Duration::from_secs(60), "only {with_words} turns stored their first words");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let stopped_at = Instant::now();
    let killed = Command::new("kill").args(["-TERM", &server.id().to_string()]).status().unwrap();
    assert!(killed.success());
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let status = server.wait();
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
