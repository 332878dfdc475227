//! `make bench`: what Margin adds on top of the model, measured on loopback
//! against the scripted model, in one process.
//!
//! Prints:
//! - the median time to the first text event through Margin versus straight
//!   from the scripted model, and the difference (target: under 1 ms);
//! - CPU time per 1,000 streamed text deltas through Margin versus reading the
//!   model directly (from /proc/self/stat, 10 ms resolution);
//! - resident memory per open stream with 100 and 1,000 concurrent turns
//!   (target: under 64 KB). Client sockets and the scripted model live in the
//!   same process, so this is an upper bound on the server's share.

use std::{net::SocketAddr, path::PathBuf, time::{Duration, Instant}};

use leptos::config::LeptosOptions;
use margin::{
    agent::{config::AiConfig, scripted::ScriptedLlm},
    server::{ai::AiRuntime, auth, chats, config::Config, db, lessons, router, state::AppState},
};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};

struct Bench {
    addr: SocketAddr,
    model: String,
    token: String,
    lesson_id: String,
    state: AppState,
    _dir: tempfile::TempDir,
}

async fn setup() -> Bench {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}/bench.db", dir.path().display());
    let pool = db::connect(&url).await.unwrap();
    let llm = ScriptedLlm::start().await.unwrap();
    let model = llm.base_url.clone();
    let prompts = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("prompts");
    let ai = AiRuntime::with_scripted(AiConfig::scripted(llm.base_url.clone(), prompts), llm);
    let options = LeptosOptions::builder().output_name("margin").site_root("target/site").build();
    let state = AppState::new(options, pool, Config { database_url: url, ..Config::default() }, ai);
    let user = auth::create_user(&state.db, true, "bench@x.org", "benchmark password").await.unwrap();
    let token = auth::create_session(&state.db, &user.id, 1).await.unwrap();
    let lesson = lessons::create(&state.db, &user.id, "Bench").await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = router::build(state.clone());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    Bench { addr, model, token, lesson_id: lesson.id, state, _dir: dir }
}

impl Bench {
    async fn session(&self) -> String {
        let owner = auth::user_for_token(&self.state.db, &self.token).await.unwrap().unwrap().id;
        chats::create_session(&self.state.db, &owner, &self.lesson_id, "bench").await.unwrap().id
    }

    fn turn_request(&self, session: &str, content: &str) -> (SocketAddr, String) {
        let body = serde_json::json!({ "sessionId": session, "content": content }).to_string();
        (self.addr, request(&self.addr.to_string(), "/api/chat/stream", &body, Some(&self.token)))
    }

    fn model_request(&self, content: &str) -> (SocketAddr, String) {
        let base = self.model.trim_start_matches("http://").trim_end_matches("/v1");
        let body = serde_json::json!({
            "model": "bench", "stream": true,
            "messages": [{ "role": "system", "content": "x" }, { "role": "user", "content": content }]
        })
        .to_string();
        (base.parse().unwrap(), request(base, "/v1/chat/completions", &body, None))
    }
}

fn request(host: &str, path: &str, body: &str, token: Option<&str>) -> String {
    let auth = token.map(|t| format!("Authorization: Bearer {t}\r\n")).unwrap_or_default();
    format!(
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n{auth}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// Sends a request; returns the time until `marker` first appears, and the
/// open connection (so the caller decides whether to read on or hold it).
async fn until(target: (SocketAddr, String), marker: &str) -> (Duration, TcpStream) {
    let mut s = TcpStream::connect(target.0).await.unwrap();
    let started = Instant::now();
    s.write_all(target.1.as_bytes()).await.unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        let n = s.read(&mut buf).await.unwrap();
        assert!(n > 0, "stream ended before {marker:?}: {}", String::from_utf8_lossy(&seen));
        seen.extend_from_slice(&buf[..n]);
        if String::from_utf8_lossy(&seen).contains(marker) {
            return (started.elapsed(), s);
        }
    }
}

async fn drain(mut s: TcpStream) -> usize {
    let mut total = 0;
    let mut buf = [0u8; 65536];
    loop {
        match s.read(&mut buf).await {
            Ok(0) | Err(_) => return total,
            Ok(n) => total += n,
        }
    }
}

fn cpu_seconds() -> f64 {
    // utime and stime, in clock ticks of 1/100 s (USER_HZ on Linux).
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or("");
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

fn rss_kb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// The first text chunk of the scripted greeting, and of the benchmark stream.
const DIRECT_TEXT: &str = "\"content\":\"Hello";
const DIRECT_BENCH: &str = "\"content\":\"a\"";

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let b = setup().await;
    let session = b.session().await;

    // 1. Time to first text.
    let rounds = 60;
    let (mut direct, mut margin) = (Vec::new(), Vec::new());
    for i in 0..rounds + 5 {
        let (t, s) = until(b.model_request("test"), DIRECT_TEXT).await;
        drain(s).await;
        let (m, s) = until(b.turn_request(&session, "test"), "event: text").await;
        drain(s).await; // the turn ends before the next one starts
        if i >= 5 {
            direct.push(t);
            margin.push(m);
        }
    }
    let (d, m) = (median(direct), median(margin));
    println!("time to first text event (median of {rounds}):");
    println!("  scripted model directly: {:>8.3} ms", d.as_secs_f64() * 1e3);
    println!("  through Margin:          {:>8.3} ms", m.as_secs_f64() * 1e3);
    println!("  added by Margin:         {:>8.3} ms  (target < 1 ms; ratio {:.2}x)", (m.saturating_sub(d)).as_secs_f64() * 1e3, m.as_secs_f64() / d.as_secs_f64());

    // 2. CPU per 1,000 deltas.
    let deltas = 20_000.0;
    let before = cpu_seconds();
    let (_, s) = until(b.model_request("benchmark stream"), DIRECT_BENCH).await;
    drain(s).await;
    let direct_cpu = cpu_seconds() - before;
    let before = cpu_seconds();
    let (_, s) = until(b.turn_request(&session, "benchmark stream"), "event: text").await;
    drain(s).await;
    let margin_cpu = cpu_seconds() - before;
    println!("CPU time per 1,000 streamed text deltas ({deltas} deltas):");
    println!("  scripted model read directly: {:>7.2} ms", direct_cpu / deltas * 1e6);
    println!("  through Margin (model + server + client): {:>7.2} ms", margin_cpu / deltas * 1e6);
    println!("  added by Margin:              {:>7.2} ms  (ratio {:.2}x)", (margin_cpu - direct_cpu).max(0.0) / deltas * 1e6, margin_cpu / direct_cpu.max(0.01));

    // 3. Memory per open stream.
    for k in [100usize, 1000] {
        let mut sessions = Vec::with_capacity(k);
        for _ in 0..k {
            sessions.push(b.session().await);
        }
        let base = rss_kb();
        let mut tasks = Vec::with_capacity(k);
        for s in &sessions {
            let target = b.turn_request(s, "Hold on a second");
            tasks.push(tokio::spawn(async move { until(target, "event: text").await.1 }));
        }
        let mut open = Vec::with_capacity(k);
        for t in tasks {
            open.push(t.await.unwrap());
        }
        let peak = rss_kb();
        println!("{k} concurrent open streams: {:.1} KB resident per stream (target < 64 KB)", (peak - base).max(0.0) / k as f64);
        for s in &sessions {
            if let Some(log) = b.state.turns.running_in(s) {
                log.cancel.cancel();
            }
        }
        for s in open {
            drain(s).await;
        }
    }
}
