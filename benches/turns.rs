//! `make bench`: what Margin adds on top of the model, measured on loopback
//! against the scripted model.
//!
//! Three processes, so each number belongs to one of them: this one drives
//! the clients; it starts itself again as the scripted model
//! (`MARGIN_BENCH_ROLE=model`) and as the Margin server
//! (`MARGIN_BENCH_ROLE=server`, a real router on a fresh SQLite file).
//!
//! Prints:
//! - the median time to the first text event through Margin versus sending
//!   the scripted model the very same request directly, and the difference
//!   (target: under 1 ms);
//! - the server's CPU time per 1,000 streamed text deltas (from
//!   /proc/<pid>/stat, 10 ms resolution): 20,000 deltas sent at once, then
//!   replies of 20,000 and 100,000 characters paced as a model writes them
//!   (the work per delta must not grow with the reply's length);
//! - 100 turns started at once, each a reply the model writes over six
//!   seconds: time to the first text (p50, p95) and to the end (p50, max),
//!   through Margin and from the model directly (targets: first text p50
//!   under the model's own plus 100 ms; the end within 10% of the model's);
//! - the server's peak resident memory per open stream with 100 and 1,000
//!   concurrent turns, each count on a fresh server (target: under 64 KB),
//!   and beside it a bare relay's (`common::relay`: the same axum, hyper
//!   and reqwest passing the model's stream through, nothing else), the
//!   floor any server in between holds per stream here.
//!
//! `MARGIN_BENCH_ONLY=soak` (`make soak`) runs only the soak instead: 200
//! streams held open for 10 minutes (`SOAK_STREAMS`, `SOAK_SECS`), each
//! client starting a new minute-long turn when its last one ends, and prints
//! the server's open file descriptors and resident memory over time.
//!
//! `MARGIN_BENCH_ONLY=first-text` stops after the first measurement,
//! `MARGIN_BENCH_ONLY=memory` measures only the memory per open stream
//! (`MARGIN_BENCH_STREAMS=100` only at that count, e.g. under a profiler);
//! `MARGIN_BENCH_WRAP` runs the server under a profiler (see `spawn`).
//!
//! `MARGIN_BENCH_DATABASE=postgres` runs it all on PostgreSQL instead of
//! SQLite (a fresh database per server on `MARGIN_BENCH_POSTGRES_URL`,
//! default `postgres://postgres@127.0.0.1:5432/test`), and adds what many
//! instances cost: a second server on the same database follows a turn
//! running on the first, and the bench prints how long an event takes from
//! being written by one to being read from the other (p50, p95), and the
//! rows the turn wrote.

use std::{
    io::{BufRead, BufReader, Write},
    net::SocketAddr,
    path::PathBuf,
    process::{Child, ChildStdout},
    time::{Duration, Instant},
};

use leptos::config::LeptosOptions;
use margin::{
    agent::config::AiConfig,
    scripted::ScriptedLlm,
    server::{chats::ai::AiRuntime, accounts::auth, config::Config, db, lessons, edge::router, state::AppState},
};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};

mod common;

use common::{call, cpu_seconds, drain, exit_with_parent, header, request, runtime, ROLE};

fn main() {
    match std::env::var(ROLE).as_deref() {
        Ok("model") => runtime(1).block_on(model()),
        Ok("server") => runtime(2).block_on(server()),
        Ok("relay") => runtime(2).block_on(common::relay()),
        _ => runtime(1).block_on(drive()),
    }
}



/// The scripted model. A line `last` on stdin prints the last request it was
/// sent (so that the driver can send the very same request directly).
async fn model() {
    let llm = std::sync::Arc::new(ScriptedLlm::start().await.unwrap());
    println!("ready {}", llm.base_url);
    let requests = llm.clone();
    std::thread::spawn(move || {
        for line in std::io::stdin().lines() {
            if line.as_deref().is_ok_and(|l| l.trim() == "last") {
                let last = requests.requests().pop().unwrap_or_default();
                println!("{last}");
            }
        }
        std::process::exit(0);
    });
    std::future::pending::<()>().await;
}

/// The bench's server: one teacher starts hundreds of turns a minute, so
/// the per-account limit on replies is off.
async fn server() {
    exit_with_parent();
    let model_url = std::env::var("MODEL_URL").expect("MODEL_URL");
    let dir = tempfile::tempdir().unwrap();
    let url = std::env::var("DATABASE_URL").unwrap_or_else(|_| format!("sqlite://{}/bench.db", dir.path().display()));
    let pool = db::connect(&url).await.unwrap();
    if std::env::var("MARGIN_BENCH_JOIN").is_ok() {
        // A second instance on a database the first has set up.
        let options = LeptosOptions::builder().output_name("margin").site_root("target/site").build();
        let ai = AiRuntime::start(AiConfig::scripted(model_url, PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("prompts"))).await;
        let state = AppState::new(options, pool, Config { database_url: url, turns_per_minute_user: 0, turns_per_minute_school: 0, ..Config::default() }, ai, std::sync::Arc::new(margin::server::reactions::versions::Listener));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        println!("ready {}", listener.local_addr().unwrap());
        axum::serve(router::no_delay(listener), router::build(state).into_make_service()).await.unwrap();
        return;
    }
    let prompts = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("prompts");
    let ai = AiRuntime::start(AiConfig::scripted(model_url, prompts)).await;
    let options = LeptosOptions::builder().output_name("margin").site_root("target/site").build();
    let state = AppState::new(options, pool, Config { database_url: url, turns_per_minute_user: 0, turns_per_minute_school: 0, ..Config::default() }, ai, std::sync::Arc::new(margin::server::reactions::versions::Listener));
    let user = auth::create_user(&state.db, &state.hash_gate, true, "bench@x.org", "benchmark password", None, None).await.unwrap();
    let token = auth::create_session(&state.db, &user.id, 1).await.unwrap();
    let lesson = lessons::create(&state.db, &user.id, "Bench").await.unwrap();
    let reserve = time_reservation(&state, &token, &lesson.id, &user.id, &user.school_id).await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    println!("ready {} {} {} {}", listener.local_addr().unwrap(), token, lesson.id, reserve.as_nanos());
    axum::serve(router::no_delay(listener), router::build(state).into_make_service()).await.unwrap();
}

/// What the budget check and reservation add before a turn's first call.
/// The server makes the reservation beside the query that reads the
/// teacher and the chat (`chat_routes::stream`); this times that query alone
/// and the two together, as the server runs them, through the same
/// connections, and answers the difference of the medians (500 each).
async fn time_reservation(state: &AppState, token: &str, lesson_id: &str, user_id: &str, school: &str) -> Duration {
    use margin::server::{accounts::budget, chats};
    let chat = chats::create_session(&state.db, user_id, lesson_id, "Reservation").await.unwrap();
    let month = budget::month_of(state.clock.now());
    let hash = margin::server::ids::token_hash(token);
    let (mut alone, mut both) = (Vec::new(), Vec::new());
    for _ in 0..500 {
        let t = Instant::now();
        chats::turns::store::user_and_chat(&state.db, token, &chat.id, 20).await.unwrap().unwrap();
        alone.push(t.elapsed());
        let t = Instant::now();
        let (found, reserved) = tokio::join!(
            chats::turns::store::user_and_chat(&state.db, token, &chat.id, 20),
            budget::reserve_for_session(&state.budget_writer, &hash, 20_000, -1, &month),
        );
        both.push(t.elapsed());
        found.unwrap().unwrap();
        assert!(reserved.unwrap().is_some());
        budget::release(&state.budget_writer, school, 20_000).await.unwrap();
    }
    median(both).saturating_sub(median(alone))
}

/// Starts this benchmark again in `role`; returns the child and the words of
/// its `ready` line. `MARGIN_BENCH_WRAP="heaptrack -o /tmp/server"`, say, runs
/// the server under a profiler (its own numbers are then the wrapper's, not
/// Margin's); `MARGIN_BENCH_WRAP_ROLE=relay` runs the bare relay under it
/// instead, to hold the two side by side.
fn spawn(role: &str, env: &[(&str, &str)]) -> (Child, Vec<String>, BufReader<ChildStdout>) {
    let wrapped = std::env::var("MARGIN_BENCH_WRAP_ROLE").unwrap_or_else(|_| "server".into());
    let wrap = std::env::var("MARGIN_BENCH_WRAP").ok().filter(|_| role == wrapped);
    common::spawn_role(role, env, wrap.as_deref())
}

struct Bench {
    server: SocketAddr,
    model: SocketAddr,
    token: String,
    lesson_id: String,
    /// The median budget check and reservation, as the server measured it.
    reserve: Duration,
    model_url: String,
    /// The server's PostgreSQL database, when the bench runs on PostgreSQL.
    database: Option<String>,
}

impl Bench {
    async fn session(&self) -> String {
        let answer = call(self.server, "POST", &format!("/api/lessons/{}/chats", self.lesson_id), "{}", Some(&self.token)).await;
        let v: serde_json::Value = serde_json::from_str(&answer).unwrap_or_else(|_| panic!("not JSON: {answer}"));
        v["id"].as_str().unwrap().to_string()
    }

    fn turn_request(&self, session: &str, content: &str) -> (SocketAddr, String) {
        let body = serde_json::json!({ "sessionId": session, "content": content }).to_string();
        (self.server, request("POST", &self.server.to_string(), "/api/chat/stream", &body, Some(&self.token)))
    }

    fn model_request(&self, content: &str) -> (SocketAddr, String) {
        let body = serde_json::json!({
            "model": "bench", "stream": true,
            "messages": [{ "role": "system", "content": "x" }, { "role": "user", "content": content }]
        })
        .to_string();
        self.model_body(&body)
    }

    fn model_body(&self, body: &str) -> (SocketAddr, String) {
        (self.model, request("POST", &self.model.to_string(), "/v1/chat/completions", body, None))
    }
}


/// Starts `n` turns at once, each a reply the model writes over six seconds,
/// and compares the time to the first text and to the end with the same
/// number of requests sent to the model directly at once.
async fn many_at_once(b: &Bench, n: usize) {
    async fn timed(target: (SocketAddr, String), first: &'static str, end: &'static str) -> (Duration, Duration) {
        let started = Instant::now();
        let (first_at, seen, mut s) = until(target, first).await;
        if !seen.contains(end) {
            let mut all = seen.into_bytes();
            let mut buf = [0u8; 65536];
            loop {
                let from = match s.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(k) => {
                        all.extend_from_slice(&buf[..k]);
                        all.len().saturating_sub(k + end.len())
                    }
                };
                // Only what just came in can complete the marker: searching
                // the whole reply on every read would make the driver, not
                // the server, the slow part.
                if String::from_utf8_lossy(&all[from..]).contains(end) {
                    break;
                }
            }
        }
        (first_at, started.elapsed())
    }
    async fn burst(targets: Vec<(SocketAddr, String)>, first: &'static str, end: &'static str) -> (Vec<Duration>, Vec<Duration>) {
        let tasks: Vec<_> = targets.into_iter().map(|t| tokio::spawn(timed(t, first, end))).collect();
        let (mut firsts, mut ends) = (Vec::new(), Vec::new());
        for t in tasks {
            let (f, e) = t.await.unwrap();
            firsts.push(f);
            ends.push(e);
        }
        firsts.sort();
        ends.sort();
        (firsts, ends)
    }
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let pct = |v: &[Duration], p: f64| v[((v.len() as f64 - 1.0) * p).round() as usize];

    let direct: Vec<_> = (0..n).map(|_| b.model_request("benchmark paced")).collect();
    let (model_first, model_end) = burst(direct, "\"content\":\"abcdefghij", "[DONE]").await;
    let mut sessions = Vec::with_capacity(n);
    for _ in 0..n {
        sessions.push(b.session().await);
    }
    let through: Vec<_> = sessions.iter().map(|s| b.turn_request(s, "benchmark paced")).collect();
    let (first, end) = burst(through, "event: text", "event: done").await;
    println!("{n} turns started at once (replies the model writes over 6 s):");
    println!(
        "  first text: p50 {:>7.1} ms, p95 {:>7.1} ms through Margin; p50 {:>7.1} ms, p95 {:>7.1} ms from the model  (target: p50 under the model's + 100 ms)",
        ms(pct(&first, 0.5)), ms(pct(&first, 0.95)), ms(pct(&model_first, 0.5)), ms(pct(&model_first, 0.95))
    );
    println!(
        "  whole reply: p50 {:>7.0} ms, max {:>7.0} ms through Margin; p50 {:>7.0} ms, max {:>7.0} ms from the model  (target: within 10%)",
        ms(pct(&end, 0.5)), ms(pct(&end, 1.0)), ms(pct(&model_end, 0.5)), ms(pct(&model_end, 1.0))
    );
}

/// `make soak`: holds `SOAK_STREAMS` turns open for `SOAK_SECS`, each client
/// starting its next minute-long turn as soon as the last one ends, and
/// samples the server's open files and resident memory. Both must stay flat:
/// a leak of connections, turns or buffers shows as a climb.
async fn soak(b: &Bench, server_pid: u32) {
    let env = |name: &str, default: u64| std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default);
    let (streams, secs) = (env("SOAK_STREAMS", 200) as usize, env("SOAK_SECS", 600));
    let every = Duration::from_secs((secs / 20).max(5));
    let mut sessions = Vec::with_capacity(streams);
    for _ in 0..streams {
        sessions.push(b.session().await);
    }
    let finished = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let deadline = Instant::now() + Duration::from_secs(secs);
    let clients: Vec<_> = sessions
        .iter()
        .map(|s| {
            let target = b.turn_request(s, "soak");
            let finished = finished.clone();
            tokio::spawn(async move {
                while Instant::now() < deadline {
                    let (_, _, s) = until(target.clone(), "event: text").await;
                    drain(s).await;
                    finished.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
            })
        })
        .collect();
    let fds = || std::fs::read_dir(format!("/proc/{server_pid}/fd")).map(|d| d.count()).unwrap_or(0);
    println!("soak: {streams} streams for {secs} s, turns of a minute each, restarted as they end");
    println!("  {:>6}  {:>9}  {:>10}  {:>14}", "time", "open fds", "RSS (MB)", "turns finished");
    let started = Instant::now();
    let mut samples = Vec::new();
    loop {
        tokio::time::sleep(every).await;
        let (f, rss) = (fds(), rss_kb(server_pid) / 1024.0);
        let t = started.elapsed().as_secs();
        println!("  {t:>5}s  {f:>9}  {rss:>10.1}  {:>14}", finished.load(std::sync::atomic::Ordering::Relaxed));
        samples.push((f, rss));
        if Instant::now() >= deadline {
            break;
        }
    }
    for c in clients {
        c.abort();
    }
    // From the second sample on (the first still includes start-up).
    if let (Some(first), Some(last)) = (samples.get(1), samples.last()) {
        let max_rss = samples[1..].iter().map(|s| s.1).fold(0.0, f64::max);
        println!(
            "  open fds {} → {}; RSS {:.1} → {:.1} MB (highest {:.1}) after warm-up  (target: both flat)",
            first.0, last.0, first.1, last.1, max_rss
        );
    }
}


/// Sends a request; returns the time until `marker` first appears, what was
/// read by then, and the open connection (the caller reads on or holds it).
async fn until(target: (SocketAddr, String), marker: &str) -> (Duration, String, TcpStream) {
    let mut s = TcpStream::connect(target.0).await.unwrap();
    s.set_nodelay(true).unwrap();
    let started = Instant::now();
    s.write_all(target.1.as_bytes()).await.unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        let n = s.read(&mut buf).await.unwrap();
        assert!(n > 0, "stream ended before {marker:?}: {}", String::from_utf8_lossy(&seen));
        seen.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&seen);
        if text.contains(marker) {
            return (started.elapsed(), text.into_owned(), s);
        }
    }
}



fn rss_kb(pid: u32) -> f64 {
    status_kb(pid, "VmRSS:")
}

/// A memory figure of /proc/<pid>/status (VmRSS: resident now; VmHWM: the
/// most that was ever resident), in KB.
fn status_kb(pid: u32, field: &str) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with(field))
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

/// A fresh scripted model and Margin server on a fresh database.
struct Procs {
    model: Child,
    model_out: BufReader<ChildStdout>,
    server: Child,
}

fn start() -> (Bench, Procs) {
    let (model, words, model_out) = spawn("model", &[]);
    let model_url = words[0].clone();
    let database = postgres::fresh();
    let mut env = vec![("MODEL_URL", model_url.as_str())];
    if let Some(url) = &database {
        env.push(("DATABASE_URL", url));
    }
    let (server, words, _) = spawn("server", &env);
    let b = Bench {
        server: words[0].parse().unwrap(),
        model: model_url.trim_start_matches("http://").trim_end_matches("/v1").parse().unwrap(),
        token: words[1].clone(),
        lesson_id: words[2].clone(),
        reserve: Duration::from_nanos(words[3].parse().unwrap()),
        model_url,
        database,
    };
    (b, Procs { model, model_out, server })
}

async fn drive() {
    let (b, mut procs) = start();
    match std::env::var("MARGIN_BENCH_ONLY").as_deref() {
        Ok("soak") => return soak(&b, procs.server.id()).await,
        Ok("memory") => {
            drop(procs);
            return memory_per_stream().await;
        }
        _ => {}
    }
    let session = b.session().await;

    // 1. Time to first text. A few turns first, so that the chat holds its
    // full history; then the model request Margin made for the last of them
    // is sent to the model directly, turn for turn with Margin, so that the
    // model does the same work both ways.
    for _ in 0..12 {
        let (_, _, s) = until(b.turn_request(&session, "test"), "event: text").await;
        drain(s).await;
    }
    let stdin = procs.model.stdin.as_mut().unwrap();
    stdin.write_all(b"last\n").unwrap();
    stdin.flush().unwrap();
    let mut same_request = String::new();
    procs.model_out.read_line(&mut same_request).unwrap();
    assert!(same_request.contains("\"messages\""), "no request recorded: {same_request}");
    let rounds = 100;
    let (mut direct, mut margin) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let (t, _, s) = until(b.model_body(same_request.trim()), DIRECT_TEXT).await;
        drain(s).await;
        let (m, _, s) = until(b.turn_request(&session, "test"), "event: text").await;
        drain(s).await; // the turn ends before the next one starts
        direct.push(t);
        margin.push(m);
    }
    let (d, m) = (median(direct), median(margin));
    println!("time to first text event (median of {rounds}):");
    println!("  scripted model directly: {:>8.3} ms  (the same request Margin sends)", d.as_secs_f64() * 1e3);
    println!("  through Margin:          {:>8.3} ms", m.as_secs_f64() * 1e3);
    let target = if std::env::var("MARGIN_BENCH_DATABASE").as_deref() == Ok("postgres") { "< 2 ms on PostgreSQL" } else { "< 1 ms" };
    println!("  added by Margin:         {:>8.3} ms  (target {target})", (m.saturating_sub(d)).as_secs_f64() * 1e3);
    println!("  of which the budget check and reservation: {:>8.3} ms  (the chat's query with the reservation beside it, less the query alone; medians of 500; target < 0.3 ms)", b.reserve.as_secs_f64() * 1e3);
    if std::env::var("MARGIN_BENCH_ONLY").as_deref() == Ok("first-text") {
        return; // for profiling the first-text path alone (under strace, say)
    }

    // 2. CPU per 1,000 deltas, in the server process alone.
    let deltas = 20_000.0;
    let (model_pid, server_pid) = (procs.model.id(), procs.server.id());
    let before = cpu_seconds(model_pid);
    let (_, _, s) = until(b.model_request("benchmark stream"), DIRECT_BENCH).await;
    drain(s).await;
    let model_cpu = cpu_seconds(model_pid) - before;
    let before = cpu_seconds(server_pid);
    let (_, _, s) = until(b.turn_request(&session, "benchmark stream"), "event: text").await;
    drain(s).await;
    let server_cpu = cpu_seconds(server_pid) - before;
    println!("CPU time per 1,000 streamed text deltas ({deltas} deltas):");
    println!("  the scripted model writing them: {:>7.2} ms", model_cpu / deltas * 1e6);
    println!("  the Margin server relaying them: {:>7.2} ms  (all sent at once)", server_cpu / deltas * 1e6);
    // Replies written as a model writes them, a delta about every
    // millisecond: a short one and one five times as long. The work per
    // delta must be the same.
    for (said, deltas, what) in [("benchmark short", 4_000.0, "20,000"), ("benchmark long", 20_000.0, "100,000")] {
        let paced_session = b.session().await;
        let before = cpu_seconds(server_pid);
        let (_, _, s) = until(b.turn_request(&paced_session, said), "event: text").await;
        drain(s).await;
        let cpu = cpu_seconds(server_pid) - before;
        println!("  the Margin server relaying them: {:>7.2} ms  (paced, {what}-character reply)", cpu / deltas * 1e6);
    }

    many_at_once(&b, 100).await;

    if b.database.is_some() {
        // On a fresh server and database, so that the rows counted are this turn's.
        let (fresh, procs) = start();
        postgres::across_instances(&fresh, fresh.database.as_deref().unwrap()).await;
        drop(procs);
    }

    drop(procs); // their stdin closes; they exit
    memory_per_stream().await;
}

/// 3. Server memory per open stream. Each count on a fresh server whose
/// database connections are open (eight turns at once, the pool's size,
/// have run): peak resident memory while the streams open, less resident
/// memory before, per stream. `MARGIN_BENCH_ONLY=memory` runs only this.
async fn memory_per_stream() {
    let counts: Vec<usize> = match std::env::var("MARGIN_BENCH_STREAMS") {
        Ok(k) => vec![k.trim().parse().expect("MARGIN_BENCH_STREAMS: a number of streams")],
        Err(_) => vec![100, 1000],
    };
    for k in counts {
        let (b, procs) = start();
        let server_pid = procs.server.id();
        let mut sessions = Vec::with_capacity(k);
        for _ in 0..k {
            sessions.push(b.session().await);
        }
        let warm: Vec<_> = sessions[..8].iter().map(|s| tokio::spawn(until(b.turn_request(s, "test"), "event: text"))).collect();
        for t in warm {
            drain(t.await.unwrap().2).await;
        }
        let base = rss_kb(server_pid);
        // The peak so far (signing the bench teacher up hashes a password
        // in 19 MB) is not the streams'.
        let peak_reset = std::fs::write(format!("/proc/{server_pid}/clear_refs"), "5").is_ok();
        let mut tasks = Vec::with_capacity(k);
        for s in &sessions {
            let target = b.turn_request(s, "Hold on a second");
            tasks.push(tokio::spawn(async move { until(target, "event: text").await }));
        }
        let mut open = Vec::with_capacity(k);
        for t in tasks {
            let (_, head, s) = t.await.unwrap();
            open.push((header(&head, "x-turn-id").unwrap().to_string(), s));
        }
        let peak = if peak_reset { status_kb(server_pid, "VmHWM:") } else { rss_kb(server_pid) };
        let margin = (peak - base).max(0.0) / k as f64;
        let floor = relay_memory_per_stream(&b, k).await;
        println!(
            "{k} concurrent open streams: {margin:.1} KB of server memory per stream (target < 64 KB); a bare relay {floor:.1} KB, so Margin's own {:.1} KB",
            margin - floor
        );
        for (turn, s) in open {
            call(b.server, "POST", &format!("/api/chat/turns/{turn}/cancel"), "{}", Some(&b.token)).await;
            drain(s).await;
        }
        drop(procs);
    }
}

/// The same measure for a bare relay to the same model (`common::relay`):
/// `k` streams held open through it, each until its first text, after
/// eight opened and closed first (as Margin's warm turns). What any server
/// on this axum, hyper and reqwest holds per open stream, in KB.
async fn relay_memory_per_stream(b: &Bench, k: usize) -> f64 {
    let (mut relay, words, _) = spawn("relay", &[("MODEL_URL", b.model_url.as_str())]);
    let at: SocketAddr = words[0].parse().unwrap();
    let body = serde_json::json!({
        "model": "bench", "stream": true,
        "messages": [{ "role": "system", "content": "x" }, { "role": "user", "content": "Hold on a second" }]
    })
    .to_string();
    let ask = || (at, request("POST", &at.to_string(), "/v1/chat/completions", &body, None));
    let warm: Vec<_> = (0..8).map(|_| tokio::spawn(until(ask(), "\"content\":\""))).collect();
    for t in warm {
        drop(t.await.unwrap());
    }
    let base = rss_kb(relay.id());
    let peak_reset = std::fs::write(format!("/proc/{}/clear_refs", relay.id()), "5").is_ok();
    let tasks: Vec<_> = (0..k).map(|_| tokio::spawn(until(ask(), "\"content\":\""))).collect();
    let mut open = Vec::with_capacity(k);
    for t in tasks {
        open.push(t.await.unwrap());
    }
    let peak = if peak_reset { status_kb(relay.id(), "VmHWM:") } else { rss_kb(relay.id()) };
    drop(open);
    let _ = relay.kill();
    let _ = relay.wait();
    (peak - base).max(0.0) / k as f64
}

/// The PostgreSQL side of the bench.
mod postgres {
    use std::time::{Duration, SystemTime};

    use margin::server::db;
    use sqlx::{AnyConnection, Connection, Executor};
    use tokio::io::AsyncReadExt;

    use super::{call, header, request, spawn, until, Bench};

    const DEFAULT: &str = "postgres://postgres@127.0.0.1:5432/test";

    /// A fresh database for one server, when the bench runs on PostgreSQL.
    /// Bench databases are named `margin_bench_*` and left for inspection.
    pub fn fresh() -> Option<String> {
        if std::env::var("MARGIN_BENCH_DATABASE").as_deref() != Ok("postgres") {
            return None;
        }
        let server = std::env::var("MARGIN_BENCH_POSTGRES_URL").unwrap_or_else(|_| DEFAULT.into());
        let name = format!("margin_bench_{}", margin::server::ids::random_hex(6));
        std::thread::scope(|s| {
            s.spawn(|| {
                let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
                rt.block_on(async {
                    sqlx::any::install_default_drivers();
                    let mut admin = AnyConnection::connect(&server).await.expect("the PostgreSQL server for the bench");
                    admin.execute(format!("CREATE DATABASE {name}").as_str()).await.unwrap();
                })
            });
        });
        let base = server.rsplit_once('/').map_or(server.as_str(), |(b, _)| b);
        Some(format!("{base}/{name}"))
    }

    fn epoch_ms(t: SystemTime) -> f64 {
        t.duration_since(SystemTime::UNIX_EPOCH).unwrap().as_secs_f64() * 1e3
    }

    /// Rows written in the database so far (PostgreSQL's statistics, which
    /// each connection sends within a second or so).
    async fn rows_written(pool: &db::Db) -> i64 {
        sqlx::query_scalar("SELECT (tup_inserted + tup_updated + tup_deleted)::BIGINT FROM pg_stat_database WHERE datname = current_database()")
            .fetch_one(pool)
            .await
            .unwrap()
    }

    /// A turn running on the bench's server, followed from a second server on
    /// the same database: how long each stored batch takes to reach the
    /// reader there, and what the turn wrote.
    pub async fn across_instances(b: &Bench, url: &str) {
        let (second, words, _) = spawn("server", &[("MODEL_URL", &b.model_url), ("DATABASE_URL", url), ("MARGIN_BENCH_JOIN", "1")]);
        let other: std::net::SocketAddr = words[0].parse().unwrap();
        let pool = db::connect(url).await.unwrap();
        let session = b.session().await;
        // Statistics reach pg_stat_database within PostgreSQL's idle report interval (10 s).
        tokio::time::sleep(Duration::from_secs(11)).await;
        let written_before = rows_written(&pool).await;

        let (_, head, first) = until(b.turn_request(&session, "benchmark paced"), "event: text").await;
        let turn = header(&head, "x-turn-id").unwrap().to_string();
        let streaming = std::time::Instant::now();
        let follow = request("GET", &other.to_string(), &format!("/api/chat/turns/{turn}/events?after=0"), "", Some(&b.token));
        let mut s = tokio::net::TcpStream::connect(other).await.unwrap();
        tokio::io::AsyncWriteExt::write_all(&mut s, follow.as_bytes()).await.unwrap();
        // When each event id first reached the reader on the second server.
        let mut arrived: Vec<(u64, f64)> = Vec::new();
        let (mut seen, mut buf, mut done) = (String::new(), vec![0u8; 65536], false);
        while !done {
            let n = s.read(&mut buf).await.unwrap();
            if n == 0 {
                break;
            }
            let at = epoch_ms(SystemTime::now());
            seen.push_str(&String::from_utf8_lossy(&buf[..n]));
            while let Some(end) = seen.find("\n\n") {
                let block: String = seen.drain(..end + 2).collect();
                if let Some(id) = block.lines().find_map(|l| l.strip_prefix("id: ")).and_then(|v| v.trim().parse().ok()) {
                    arrived.push((id, at));
                }
                done |= block.contains("event: done");
            }
        }
        let streamed = streaming.elapsed();
        super::drain(first).await;

        // Each stored batch, from its write to the reader's first sight of its last event.
        let batches: Vec<(i64, String)> =
            sqlx::query_as("SELECT last_seq, created_at FROM turn_events WHERE turn_id = $1 ORDER BY last_seq").bind(&turn).fetch_all(&pool).await.unwrap();
        let mut lags: Vec<f64> = batches
            .iter()
            .filter_map(|(last, created)| {
                let written = db::time::epoch_millis(created)? as f64;
                let read = arrived.iter().find(|(id, _)| *id >= *last as u64)?.1;
                Some((read - written).max(0.0))
            })
            .collect();
        lags.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let pick = |q: f64| lags.get(((lags.len() as f64 - 1.0) * q).round() as usize).copied().unwrap_or(f64::NAN);
        println!("a turn on one instance, read on another (PostgreSQL, {} batches):", lags.len());
        println!("  from written to read on the other instance: p50 {:.1} ms, p95 {:.1} ms  (target p95 < 50 ms; write times have 1 ms steps)", pick(0.5), pick(0.95));

        tokio::time::sleep(Duration::from_secs(11)).await;
        let written = rows_written(&pool).await - written_before;
        let tenths = streamed.as_secs_f64() * 10.0;
        println!(
            "  rows written for the turn: {written} over {:.1} s of streaming ({} event batches) = {:.2} per 100 ms  (goal <= 1 per 100 ms, plus 1 per version)",
            streamed.as_secs_f64(),
            batches.len(),
            written as f64 / tenths
        );
        let _ = call(other, "GET", "/healthz", "", None).await;
        drop(second);
    }
}
