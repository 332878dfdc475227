//! `make bench-scale`: how many replies at once several Margin instances on
//! one PostgreSQL carry, and what each step of the ramp costs the database.
//!
//! Processes, so that each number belongs to one of them: this one drives
//! the clients; it starts itself again as the scripted model, as
//! `MARGIN_SCALE_INSTANCES` (3) Margin servers on one fresh database of the
//! PostgreSQL server at `MARGIN_BENCH_POSTGRES_URL` (default: the one
//! `scripts/test-postgres` finds; the Makefile passes it). The bench says
//! whether that server runs with `fsync` on: the numbers only mean something
//! for a district if it does. It also starts as many bare relays to the
//! model (`relay`), to measure what any server in between adds here.
//!
//! After 20 replies that warm every instance up (not reported), for each
//! step of `MARGIN_SCALE_STEPS` (100, 250, 500, 1,000, 2,000), the
//! same number of six-second replies is first asked of the model directly,
//! all at once (the model's own times), then started through Margin, spread
//! over the instances; a tenth of them is also followed by a reader on
//! another instance. Per step it prints:
//! - first text p50/p95 and whole reply p50 through Margin, and over the model's;
//! - cross-instance delay p50/p95: from a batch of events being written by the
//!   instance running the reply to the reader elsewhere receiving its last event;
//! - PostgreSQL commits and rows written per second while the step ran
//!   (`pg_stat_database`, read after the statistics have been flushed);
//! - CPU of the PostgreSQL server and of the Margin instances (cores busy);
//! - errors: replies that did not start, or ended without their `done`;
//! - first text and whole reply through bare relays (`relay`, as many as
//!   instances), over the model's: what any server in between adds here.
//!
//! The replies are one teacher's unless `MARGIN_SCALE_ACCOUNTS` says how
//! many teachers of one school share them (a reply each in turn).
//!
//! The table also goes to `target/bench/scale.json`.

mod common;

use std::{
    net::SocketAddr,
    path::PathBuf,
    time::{Duration, Instant, SystemTime},
};

use common::{call, cpu_seconds, exit_with_parent, header, request, runtime, spawn_role, ROLE};
use leptos::config::LeptosOptions;
use margin::{
    agent::config::AiConfig,
    scripted::ScriptedLlm,
    server::{accounts::auth, chats::ai::AiRuntime, config::Config, db, edge::router, lessons, state::AppState},
};
use sqlx::{AnyConnection, Connection, Executor};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};

const DEFAULT_POSTGRES: &str = "postgres://postgres@127.0.0.1:5432/test";

fn main() {
    match std::env::var(ROLE).as_deref() {
        Ok("model") => runtime(1).block_on(model()),
        Ok("server") => runtime(2).block_on(server()),
        Ok("relay") => runtime(2).block_on(common::relay()),
        _ => runtime(1).block_on(drive()),
    }
}

async fn model() {
    exit_with_parent();
    let llm = ScriptedLlm::start().await.unwrap();
    println!("ready {}", llm.base_url);
    std::future::pending::<()>().await;
}

/// One Margin instance. The first (`MARGIN_SCALE_SETUP`: how many) also
/// makes the bench's teachers, all of one school, and a lesson of each, and
/// prints their tokens and the lessons' ids.
async fn server() {
    exit_with_parent();
    let model_url = std::env::var("MODEL_URL").expect("MODEL_URL");
    let url = std::env::var("DATABASE_URL").expect("DATABASE_URL");
    let pool = db::connect(&url).await.unwrap();
    let options = LeptosOptions::builder().output_name("margin").site_root("target/site").build();
    let ai = AiRuntime::start(AiConfig::scripted(model_url, PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("prompts"))).await;
    // One teacher starts thousands of replies a minute: the per-account limit is off.
    // Nor does it limit the bench's thousands of open lesson pages.
    let config = Config { database_url: url, turns_per_minute_user: 0, turns_per_minute_school: 0, lesson_streams_per_account: 0, ..Config::default() };
    let state = AppState::new(options, pool, config, ai, std::sync::Arc::new(margin::server::reactions::versions::Listener));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    if let Ok(accounts) = std::env::var("MARGIN_SCALE_SETUP") {
        // The teachers, all of the first one's school (each account made
        // has a school of its own; the others are moved into the first's).
        let (mut tokens, mut lessons, mut school) = (Vec::new(), Vec::new(), None::<String>);
        for i in 0..accounts.parse::<usize>().unwrap_or(1).max(1) {
            let user = auth::create_user(&state.db, &state.hash_gate, true, &format!("scale{i}@x.org"), "benchmark password", None, None).await.unwrap();
            let first = school.get_or_insert_with(|| user.school_id.clone());
            sqlx::query("UPDATE users SET school_id = $1 WHERE id = $2").bind(first.as_str()).bind(&user.id).execute(&state.db).await.unwrap();
            tokens.push(auth::create_session(&state.db, &user.id, 1).await.unwrap());
            lessons.push(lessons::create(&state.db, &user.id, "Scale").await.unwrap().id);
        }
        println!("ready {addr} {} {}", tokens.join(","), lessons.join(","));
    } else {
        println!("ready {addr}");
    }
    axum::serve(router::no_delay(listener), router::build(state).into_make_service()).await.unwrap();
}

/// A fresh database on the bench's PostgreSQL server; whether it has fsync on.
async fn fresh_database(server: &str) -> (String, bool) {
    sqlx::any::install_default_drivers();
    let mut admin = AnyConnection::connect(server).await.expect("the PostgreSQL server for the bench");
    let name = format!("margin_scale_{}", margin::server::ids::random_hex(6));
    admin.execute(format!("CREATE DATABASE {name}").as_str()).await.unwrap();
    let fsync: String = sqlx::query_scalar("SELECT current_setting('fsync')").fetch_one(&mut admin).await.unwrap();
    let base = server.rsplit_once('/').map_or(server, |(b, _)| b);
    (format!("{base}/{name}"), fsync == "on")
}

struct Cluster {
    instances: Vec<SocketAddr>,
    /// Bare relays to the model, as many as instances (`relay`).
    relays: Vec<SocketAddr>,
    pids: Vec<u32>,
    model: SocketAddr,
    /// The teachers' session tokens (`MARGIN_SCALE_ACCOUNTS`, one school)
    /// and a lesson of each, in the same order.
    tokens: Vec<String>,
    lessons: Vec<String>,
    pool: db::Db,
}

impl Cluster {
    /// The token of the teacher whose reply is the `i`th.
    fn token(&self, i: usize) -> &str {
        &self.tokens[i % self.tokens.len()]
    }
}

/// One reply's times, from the request being sent.
struct Timed {
    first: Option<Duration>,
    end: Option<Duration>,
}

/// Sends `req` to `addr` and reads the stream to its end: when `first`
/// appeared and when `end` did (either may not, which is an error). `turn`
/// is told the reply's turn id as soon as the head has come.
async fn timed(addr: SocketAddr, req: String, first: &'static str, end: &'static str, mut turn: Option<tokio::sync::oneshot::Sender<String>>) -> Timed {
    let mut out = Timed { first: None, end: None };
    let Ok(mut s) = TcpStream::connect(addr).await else { return out };
    let _ = s.set_nodelay(true);
    let started = Instant::now();
    if s.write_all(req.as_bytes()).await.is_err() {
        return out;
    }
    let (mut all, mut buf, mut head_read) = (Vec::<u8>::new(), vec![0u8; 65536], false);
    loop {
        let n = match s.read(&mut buf).await {
            Ok(0) | Err(_) => return out,
            Ok(n) => n,
        };
        // Only what just came in (and a marker's length before it) can hold a marker.
        let from = all.len().saturating_sub(end.len().max(first.len()));
        all.extend_from_slice(&buf[..n]);
        if !head_read {
            let text = String::from_utf8_lossy(&all);
            if text.contains("\r\n\r\n") {
                head_read = true;
                if let (Some(tx), Some(id)) = (turn.take(), header(&text, "x-turn-id")) {
                    let _ = tx.send(id.to_string());
                }
            }
        }
        let fresh = String::from_utf8_lossy(&all[from..]);
        if out.first.is_none() && fresh.contains(first) {
            out.first = Some(started.elapsed());
        }
        if fresh.contains(end) {
            out.end = Some(started.elapsed());
            return out;
        }
        if head_read {
            all.drain(..all.len().saturating_sub(64)); // nothing before is needed again
        }
    }
}

/// Follows a turn from another instance: when (epoch ms) each event id first arrived.
async fn follow(addr: SocketAddr, token: String, turn: String) -> Vec<(u64, f64)> {
    let req = request("GET", &addr.to_string(), &format!("/api/chat/turns/{turn}/events?after=0"), "", Some(&token));
    let mut arrived = Vec::new();
    let Ok(mut s) = TcpStream::connect(addr).await else { return arrived };
    if s.write_all(req.as_bytes()).await.is_err() {
        return arrived;
    }
    let (mut seen, mut buf) = (String::new(), vec![0u8; 65536]);
    loop {
        let n = match s.read(&mut buf).await {
            Ok(0) | Err(_) => return arrived,
            Ok(n) => n,
        };
        let at = epoch_ms(SystemTime::now());
        seen.push_str(&String::from_utf8_lossy(&buf[..n]));
        while let Some(end) = seen.find("\n\n") {
            let block: String = seen.drain(..end + 2).collect();
            if let Some(id) = block.lines().find_map(|l| l.strip_prefix("id: ")).and_then(|v| v.trim().parse().ok()) {
                arrived.push((id, at));
            }
            if block.contains("event: done") || block.contains("event: error") {
                return arrived;
            }
        }
    }
}

fn epoch_ms(t: SystemTime) -> f64 {
    t.duration_since(SystemTime::UNIX_EPOCH).unwrap().as_secs_f64() * 1e3
}

fn pct(v: &[f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

fn sorted(mut v: Vec<f64>) -> Vec<f64> {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v
}

/// The database's commits and rows written so far, once every connection
/// has reported them (PostgreSQL flushes an idle connection's statistics
/// within 10 s).
async fn db_counts(pool: &db::Db) -> (i64, i64) {
    tokio::time::sleep(Duration::from_secs(11)).await;
    sqlx::query_as("SELECT xact_commit::BIGINT, (tup_inserted + tup_updated + tup_deleted)::BIGINT FROM pg_stat_database WHERE datname = current_database()")
        .fetch_one(pool)
        .await
        .unwrap()
}

/// CPU seconds of every PostgreSQL process on this machine.
fn postgres_cpu() -> f64 {
    let Ok(dir) = std::fs::read_dir("/proc") else { return 0.0 };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == "postgres"))
        .map(cpu_seconds)
        .sum()
}

#[derive(serde::Serialize)]
struct Row {
    replies: usize,
    instances: usize,
    model_first_p50_ms: f64,
    first_p50_ms: f64,
    first_p95_ms: f64,
    model_end_p50_ms: f64,
    end_p50_ms: f64,
    relay_first_p50_ms: f64,
    relay_end_p50_ms: f64,
    cross_p50_ms: f64,
    cross_p95_ms: f64,
    commits_per_s: f64,
    rows_per_s: f64,
    postgres_cores: f64,
    margin_cores: f64,
    errors: usize,
}

/// `n` requests for the model at once, spread over `to` (the model itself,
/// or relays to it): when each one's first text came and when its end did,
/// in milliseconds, sorted.
async fn model_times(to: &[SocketAddr], n: usize, body: &str) -> (Vec<f64>, Vec<f64>) {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let sent: Vec<_> = (0..n)
        .map(|i| {
            let at = to[i % to.len()];
            tokio::spawn(timed(at, request("POST", &at.to_string(), "/v1/chat/completions", body, None), "\"content\":\"abcdefghij", "[DONE]", None))
        })
        .collect();
    let (mut first, mut end) = (Vec::new(), Vec::new());
    for t in sent {
        let t = t.await.unwrap();
        first.extend(t.first.map(ms));
        end.extend(t.end.map(ms));
    }
    (sorted(first), sorted(end))
}

async fn step(c: &Cluster, n: usize) -> Row {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    // The model alone, the same number at once.
    let body = serde_json::json!({
        "model": "bench", "stream": true,
        "messages": [{ "role": "system", "content": "x" }, { "role": "user", "content": "benchmark paced" }]
    })
    .to_string();
    let (model_first, model_end) = model_times(&[c.model], n, &body).await;
    // The same through the bare relays, spread as the replies are below.
    let (relay_first, relay_end) = model_times(&c.relays, n, &body).await;

    // A chat per reply, on the instance that will run it.
    let mut sessions = Vec::with_capacity(n);
    for chunk in (0..n).collect::<Vec<_>>().chunks(50) {
        let made: Vec<_> = chunk
            .iter()
            .map(|&i| {
                let (addr, token, lesson) = (c.instances[i % c.instances.len()], c.token(i).to_string(), c.lessons[i % c.lessons.len()].clone());
                tokio::spawn(async move { call(addr, "POST", &format!("/api/lessons/{lesson}/chats"), "{}", Some(&token)).await })
            })
            .collect();
        for m in made {
            let v: serde_json::Value = serde_json::from_str(&m.await.unwrap()).expect("a chat");
            sessions.push(v["id"].as_str().unwrap().to_string());
        }
    }

    let before = db_counts(&c.pool).await;
    let (pg_before, margin_before) = (postgres_cpu(), c.pids.iter().map(|p| cpu_seconds(*p)).sum::<f64>());
    let started = Instant::now();
    let k = c.instances.len();
    let replies: Vec<_> = sessions
        .iter()
        .enumerate()
        .map(|(i, session)| {
            let addr = c.instances[i % k];
            let body = serde_json::json!({ "sessionId": session, "content": "benchmark paced" }).to_string();
            let req = request("POST", &addr.to_string(), "/api/chat/stream", &body, Some(c.token(i)));
            let (reader_at, token) = (c.instances[(i + 1) % k], c.token(i).to_string());
            let followed = i % 10 == 0 && k > 1;
            tokio::spawn(async move {
                if !followed {
                    return (timed(addr, req, "event: text", "event: done", None).await, None);
                }
                // The reader joins as soon as the turn has an id.
                let (tx, rx) = tokio::sync::oneshot::channel::<String>();
                let reader = tokio::spawn(async move {
                    let turn = rx.await.ok()?;
                    Some((turn.clone(), follow(reader_at, token, turn).await))
                });
                let t = timed(addr, req, "event: text", "event: done", Some(tx)).await;
                (t, reader.await.ok().flatten())
            })
        })
        .collect();
    let (mut first, mut end, mut errors, mut followed) = (Vec::new(), Vec::new(), 0, Vec::new());
    for r in replies {
        let (t, f) = r.await.unwrap();
        match (t.first, t.end) {
            (Some(a), Some(b)) => {
                first.push(ms(a));
                end.push(ms(b));
            }
            _ => errors += 1,
        }
        followed.extend(f);
    }
    let wall = started.elapsed().as_secs_f64();
    let (pg_cpu, margin_cpu) = (postgres_cpu() - pg_before, c.pids.iter().map(|p| cpu_seconds(*p)).sum::<f64>() - margin_before);
    let after = db_counts(&c.pool).await;

    // Cross-instance delay: each stored batch, from its write to the reader's first sight of its last event.
    let mut cross = Vec::new();
    for (turn, arrived) in &followed {
        let batches: Vec<(i64, String)> =
            sqlx::query_as("SELECT last_seq, created_at FROM turn_events WHERE turn_id = $1 ORDER BY last_seq").bind(turn).fetch_all(&c.pool).await.unwrap();
        for (last, created) in batches {
            let (Some(written), Some(read)) = (db::time::epoch_millis(&created), arrived.iter().find(|(id, _)| *id >= last as u64)) else { continue };
            cross.push((read.1 - written as f64).max(0.0));
        }
    }
    let (first, end, cross) = (sorted(first), sorted(end), sorted(cross));
    Row {
        replies: n,
        instances: k,
        model_first_p50_ms: pct(&model_first, 0.5),
        first_p50_ms: pct(&first, 0.5),
        first_p95_ms: pct(&first, 0.95),
        model_end_p50_ms: pct(&model_end, 0.5),
        end_p50_ms: pct(&end, 0.5),
        relay_first_p50_ms: pct(&relay_first, 0.5),
        relay_end_p50_ms: pct(&relay_end, 0.5),
        cross_p50_ms: pct(&cross, 0.5),
        cross_p95_ms: pct(&cross, 0.95),
        commits_per_s: (after.0 - before.0) as f64 / wall,
        rows_per_s: (after.1 - before.1) as f64 / wall,
        postgres_cores: pg_cpu / wall,
        margin_cores: margin_cpu / wall,
        errors,
    }
}

/// `n` lesson pages open on the first instance (fifty to a lesson: an
/// account may make 100 lessons at once), all
/// following their lesson's live updates, and nothing happening: the
/// instance's CPU over 30 s (two keepalives per page). Answers the share of a core.
async fn idle_pages(c: &Cluster, n: usize) -> f64 {
    let mut lessons = Vec::new();
    for _ in 0..n.div_ceil(50) {
        let made = call(c.instances[0], "POST", "/api/lessons", r#"{"title":"Idle"}"#, Some(c.token(0))).await;
        let v: serde_json::Value = serde_json::from_str(&made).expect("a lesson");
        lessons.push(v["id"].as_str().unwrap_or_else(|| panic!("a lesson: {made}")).to_string());
    }
    let addr = c.instances[0];
    let mut open = Vec::with_capacity(n);
    for i in 0..n {
        let req = request("GET", &addr.to_string(), &format!("/api/lessons/{}/events", lessons[i % lessons.len()]), "", Some(c.token(0)));
        open.push(tokio::spawn(async move {
            let mut s = TcpStream::connect(addr).await.ok()?;
            s.write_all(req.as_bytes()).await.ok()?;
            let mut buf = vec![0u8; 4096];
            let mut seen = Vec::new();
            while !String::from_utf8_lossy(&seen).contains("event: revision") {
                let k = s.read(&mut buf).await.ok().filter(|k| *k > 0)?;
                seen.extend_from_slice(&buf[..k]);
            }
            Some(s)
        }));
    }
    let mut held = Vec::with_capacity(n);
    for o in open {
        held.extend(o.await.unwrap());
    }
    // Held open, read by nobody until the end (a keepalive is a few bytes).
    let (pid, secs) = (c.pids[0], 30.0);
    let before = cpu_seconds(pid);
    tokio::time::sleep(Duration::from_secs_f64(secs)).await;
    let share = (cpu_seconds(pid) - before) / secs;
    println!("{} lesson pages open on one instance, idle: {:.2} % of a core over {secs} s  (target < 5 %)", held.len(), share * 100.0);
    share
}

async fn drive() {
    let steps: Vec<usize> = std::env::var("MARGIN_SCALE_STEPS")
        .ok()
        .map(|s| s.split(',').filter_map(|v| v.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![100, 250, 500, 1000, 2000]);
    let k: usize = std::env::var("MARGIN_SCALE_INSTANCES").ok().and_then(|v| v.parse().ok()).unwrap_or(3);
    let accounts: usize = std::env::var("MARGIN_SCALE_ACCOUNTS").ok().and_then(|v| v.parse().ok()).unwrap_or(1);
    let server = std::env::var("MARGIN_BENCH_POSTGRES_URL").unwrap_or_else(|_| DEFAULT_POSTGRES.into());
    let (url, fsync) = fresh_database(&server).await;

    let (model, words, _model_out) = spawn_role("model", &[], None);
    let model_url = words[0].clone();
    let mut children = vec![model];
    let (first, words, _) = spawn_role("server", &[("MODEL_URL", &model_url), ("DATABASE_URL", &url), ("MARGIN_SCALE_SETUP", &accounts.to_string())], None);
    let split = |w: &str| w.split(',').map(str::to_string).collect::<Vec<_>>();
    let (mut instances, tokens, lessons) = (vec![words[0].parse::<SocketAddr>().unwrap()], split(&words[1]), split(&words[2]));
    let mut pids = vec![first.id()];
    children.push(first);
    for _ in 1..k {
        let (child, words, _) = spawn_role("server", &[("MODEL_URL", &model_url), ("DATABASE_URL", &url)], None);
        instances.push(words[0].parse().unwrap());
        pids.push(child.id());
        children.push(child);
    }
    let mut relays = Vec::with_capacity(k);
    for _ in 0..k {
        let (child, words, _) = spawn_role("relay", &[("MODEL_URL", &model_url)], None);
        relays.push(words[0].parse().unwrap());
        children.push(child);
    }
    let c = Cluster {
        instances,
        relays,
        pids,
        model: model_url.trim_start_matches("http://").trim_end_matches("/v1").parse().unwrap(),
        tokens,
        lessons,
        pool: db::connect(&url).await.unwrap(),
    };
    println!("{k} Margin instances on one PostgreSQL database (fsync {}), the scripted model, replies the model writes over 6 s:", if fsync { "on" } else { "OFF: not a district's numbers" });
    println!(
        "  {:>7} | {:>22} | {:>22} | {:>17} | {:>9} | {:>8} | {:>6} | {:>6} | {:>6} | {}",
        "replies", "first text p50 / p95", "whole reply p50", "cross-inst p50/p95", "commits/s", "rows/s", "PG cpu", "Margin", "errors", "bare relay: first / whole"
    );
    // Unmeasured: every instance's connections opened, its prompts read.
    step(&c, 20).await;
    let mut rows = Vec::new();
    for n in steps {
        let r = step(&c, n).await;
        println!(
            "  {:>7} | +{:>6.0} / +{:>6.0} ms     | {:>6.2} s (+{:>4.1} %)   | {:>6.1} / {:>6.1} ms | {:>9.0} | {:>8.0} | {:>6.2} | {:>6.2} | {:>6} | {:+.0} ms / {:.2} s ({:+.1} %)",
            r.replies,
            r.first_p50_ms - r.model_first_p50_ms,
            r.first_p95_ms - r.model_first_p50_ms,
            r.end_p50_ms / 1e3,
            (r.end_p50_ms / r.model_end_p50_ms - 1.0) * 100.0,
            r.cross_p50_ms,
            r.cross_p95_ms,
            r.commits_per_s,
            r.rows_per_s,
            r.postgres_cores,
            r.margin_cores,
            r.errors,
            r.relay_first_p50_ms - r.model_first_p50_ms,
            r.relay_end_p50_ms / 1e3,
            (r.relay_end_p50_ms / r.model_end_p50_ms - 1.0) * 100.0
        );
        rows.push(r);
    }
    println!("  (first text and whole reply over the model's own p50 at the same count; PG cpu and Margin: cores busy;");
    println!("   bare relay: the same replies through as many bare relays as instances, no database, nothing parsed)");
    println!("  targets at 1,000: first text p50 <= model + 100 ms, whole reply p50 within 10 %, cross-instance p95 < 50 ms, no error; commits/s <= 5 x those at 100");
    let pages = idle_pages(&c, 5_000).await;
    let _ = std::fs::create_dir_all("target/bench");
    let out = serde_json::json!({ "steps": rows, "idlePages": pages });
    let _ = std::fs::write("target/bench/scale.json", serde_json::to_string_pretty(&out).unwrap());
    drop(children); // their stdin closes; they exit
}
