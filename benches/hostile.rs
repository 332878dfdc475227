//! `make soak-hostile`: hostile uploads beside ordinary work, on the real
//! server binary (built for benchmarks) over a fresh SQLite file, against
//! the scripted model in this process.
//!
//! For `HOSTILE_SECS` (60) at once:
//! - 20 accounts each upload hostile files without pause (arrays nested
//!   200,000 deep in a PDF, a PDF of 64 MB packed twice over, a Word document
//!   of 40 MB of XML), each expecting a refusal in words;
//! - 10 accounts each import hostile packages without pause (one 7 MB item
//!   named 96 times, one quiz of 500 questions listed 300 times, parts that
//!   together unpack to 35 MB, a "worksheet" of 40 MB of XML), each read
//!   once and within the package's budget, or refused in words;
//! - 50 streaming replies, each a minute-long turn restarted as it ends;
//! - a sign-in a second, rotating over 20 accounts (under every sign-in limit).
//!
//! Prints: replies finished and failed (target: none failed), sign-in p50 /
//! p95 / max (target: p95 under 1 s), uploads refused and anything else they
//! got, and the server's resident memory now and at its highest (VmHWM).

#[path = "../tests/all/material_files/mod.rs"]
mod material_files;

use std::{
    process::{Command, Stdio},
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc, Mutex,
    },
    time::{Duration, Instant},
};

use margin::scripted::ScriptedLlm;
use serde_json::{json, Value};

fn main() {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap().block_on(run());
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn status_kb(pid: u32, field: &str) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status.lines().find(|l| l.starts_with(field)).and_then(|l| l.split_whitespace().nth(1)).and_then(|v| v.parse().ok()).unwrap_or(0.0)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted.get(((sorted.len() as f64 - 1.0) * p).round() as usize).copied().unwrap_or_default()
}

/// A multipart body of one file field.
fn multipart(name: &str, bytes: &[u8]) -> (String, Vec<u8>) {
    let boundary = "margin-hostile-boundary";
    let mut body = format!("--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\nContent-Type: application/octet-stream\r\n\r\n").into_bytes();
    body.extend_from_slice(bytes);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

async fn run() {
    let secs: u64 = std::env::var("HOSTILE_SECS").ok().and_then(|v| v.parse().ok()).unwrap_or(60);
    let llm = ScriptedLlm::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let mut server = Command::new(env!("CARGO_BIN_EXE_margin"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("DATABASE_URL", format!("sqlite://{}/hostile.db", dir.path().display()))
        .env("LEPTOS_SITE_ADDR", format!("127.0.0.1:{port}"))
        .env("LEPTOS_OUTPUT_NAME", "margin")
        .env("LEPTOS_SITE_ROOT", dir.path())
        .env("AI_PROVIDER", "openai-compatible")
        .env("AI_BASE_URL", &llm.base_url)
        .env("AI_MODEL", "scripted")
        .env("MARGIN_SIGNUPS_PER_CLIENT_HOUR", "10000")
        .env("MARGIN_TURNS_PER_MINUTE_USER", "0")
        .env("MARGIN_TURNS_PER_MINUTE_SCHOOL", "0")
        .env("RUST_LOG", "error")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the server starts");
    let http = reqwest::Client::new();
    let started = Instant::now();
    while !http.get(format!("{base}/healthz")).send().await.is_ok_and(|r| r.status().is_success()) {
        assert!(started.elapsed() < Duration::from_secs(60), "the server never became healthy");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let pid = server.id();

    // Accounts: one teacher with replies and sign-ins, 20 senders of files.
    let signup = |email: String| {
        let (http, base) = (http.clone(), base.clone());
        async move {
            let v: Value = http.post(format!("{base}/api/auth/signup")).json(&json!({"email": email, "password": "correct horse"})).send().await.unwrap().json().await.unwrap();
            let token = v["token"].as_str().expect("signed up").to_string();
            let lesson: Value = http.post(format!("{base}/api/lessons")).bearer_auth(&token).json(&json!({"title": "L"})).send().await.unwrap().json().await.unwrap();
            (token, lesson["id"].as_str().unwrap().to_string())
        }
    };
    let (teacher, lesson) = signup("teacher@hostile.test".into()).await;
    // Sign-ins rotate over accounts of their own, one a second, so that no
    // sign-in limit (5 tries an email and address, 60 an address) refuses them.
    for n in 0..20 {
        signup(format!("signs-in{n}@hostile.test")).await;
    }
    let mut senders = Vec::new();
    for n in 0..20 {
        senders.push(signup(format!("sender{n}@hostile.test")).await);
    }
    let mut importers = Vec::new();
    for n in 0..10 {
        importers.push(signup(format!("importer{n}@hostile.test")).await.0);
    }
    let packages: Arc<Vec<(&str, Vec<u8>)>> = Arc::new(vec![
        ("repeats.zip", material_files::qti_one_part_named(96, 7 * 1024 * 1024)),
        ("listed.imscc", material_files::qti_quiz_listed(300, 500)),
        ("big.zip", material_files::qti_over_budget(5, 7 * 1024 * 1024)),
        ("sheet.docx", material_files::worksheet_bomb(40 * 1024 * 1024)),
    ]);
    let files: Arc<Vec<(&str, Vec<u8>)>> = Arc::new(vec![
        ("nested.pdf", material_files::pdf_nested(200_000)),
        ("bomb.pdf", material_files::pdf_flate_bomb(64 * 1024 * 1024, 2)),
        ("bomb.docx", material_files::docx_bomb(40 * 1024 * 1024)),
    ]);
    let before = status_kb(pid, "VmHWM:") / 1024.0;
    let deadline = Instant::now() + Duration::from_secs(secs);
    println!("hostile soak: {secs} s, 20 accounts uploading hostile files, 50 replies streaming, sign-ins in a row");

    let (finished, failed) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let mut tasks = Vec::new();
    for _ in 0..50 {
        let chat: Value =
            http.post(format!("{base}/api/lessons/{lesson}/chats")).bearer_auth(&teacher).json(&json!({})).send().await.unwrap().json().await.unwrap();
        let chat = chat["id"].as_str().unwrap().to_string();
        let (http, base, teacher, finished, failed) = (http.clone(), base.clone(), teacher.clone(), finished.clone(), failed.clone());
        tasks.push(tokio::spawn(async move {
            while Instant::now() < deadline {
                let r = http.post(format!("{base}/api/chat/stream")).bearer_auth(&teacher).json(&json!({"sessionId": chat, "content": "soak"})).send().await;
                let ok = match r {
                    Ok(r) if r.status().is_success() => r.text().await.is_ok_and(|t| t.contains("event: done")),
                    _ => false,
                };
                if ok { &finished } else { &failed }.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    let outcomes: Arc<Mutex<std::collections::BTreeMap<String, usize>>> = Arc::default();
    for (token, lesson) in senders {
        let (http, base, files, outcomes) = (http.clone(), base.clone(), files.clone(), outcomes.clone());
        tasks.push(tokio::spawn(async move {
            let mut n = 0;
            while Instant::now() < deadline {
                let (name, bytes) = &files[n % files.len()];
                n += 1;
                let (kind, body) = multipart(name, bytes);
                let r = http.post(format!("{base}/api/lessons/{lesson}/sources")).bearer_auth(&token).header("content-type", kind).body(body).send().await;
                let said = match r {
                    Ok(r) => {
                        let status = r.status().as_u16();
                        let v: Value = r.json().await.unwrap_or_default();
                        let sentence = v["error"].as_str().unwrap_or("");
                        let gist = if sentence.contains("could not be read safely") || sentence.contains("unpacks to far more") { "refused: could not be read safely" } else { sentence };
                        format!("{status} {gist}")
                    }
                    Err(e) => format!("no answer: {e}"),
                };
                *outcomes.lock().unwrap().entry(said).or_default() += 1;
            }
        }));
    }
    // Imports answer with a redirect: to the new lesson, or to the list with
    // a report (what could not come in, or why nothing did).
    let imports: Arc<Mutex<std::collections::BTreeMap<String, usize>>> = Arc::default();
    let no_redirects = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    for token in importers {
        let (http, base, packages, imports) = (no_redirects.clone(), base.clone(), packages.clone(), imports.clone());
        tasks.push(tokio::spawn(async move {
            let mut n = 0;
            while Instant::now() < deadline {
                let (name, bytes) = &packages[n % packages.len()];
                n += 1;
                let (kind, body) = multipart(name, bytes);
                let r = http
                    .post(format!("{base}/lessons/import"))
                    .header("cookie", format!("margin_session={token}"))
                    .header("origin", &base)
                    .header("content-type", kind)
                    .body(body)
                    .send()
                    .await;
                let said = match r {
                    Ok(r) => {
                        let to = r.headers().get("location").and_then(|l| l.to_str().ok()).unwrap_or("").to_string();
                        let what = if to.starts_with("/lessons/") {
                            "made a lesson".to_string()
                        } else if to.starts_with("/?import=") {
                            // What the list says about it.
                            let page = http.get(format!("{base}{to}")).header("cookie", format!("margin_session={token}")).send().await;
                            let page = match page {
                                Ok(p) => p.text().await.unwrap_or_default(),
                                Err(_) => String::new(),
                            };
                            [
                                ("named more than once", "made a lesson, the repeats said"),
                                ("unpacks to more than", "refused: past the package's budget"),
                                ("far larger than any lesson", "refused: larger than any lesson"),
                                ("could not be read safely", "refused: could not be read safely"),
                                ("Too many attempts", "refused: too many lessons made (the account's limit)"),
                                ("reading many files", "refused: every reader busy"),
                            ]
                            .iter()
                            .find(|(words, _)| page.contains(words))
                            .map(|(_, gist)| gist.to_string())
                            .unwrap_or_else(|| "reported something else".into())
                        } else {
                            "something else".to_string()
                        };
                        format!("{name}: {what}")
                    }
                    Err(e) => format!("{name}: no answer: {e}"),
                };
                *imports.lock().unwrap().entry(said).or_default() += 1;
            }
        }));
    }
    let sign_ins = {
        let (http, base) = (http.clone(), base.clone());
        tokio::spawn(async move {
            let mut took = Vec::new();
            let mut n = 0;
            while Instant::now() < deadline {
                let t = Instant::now();
                let email = format!("signs-in{}@hostile.test", n % 20);
                n += 1;
                let r = http.post(format!("{base}/api/auth/login")).json(&json!({"email": email, "password": "correct horse"})).send().await.unwrap();
                assert!(r.status().is_success(), "a sign-in was refused: {}", r.status());
                took.push(t.elapsed());
                tokio::time::sleep(Duration::from_millis(1000).saturating_sub(t.elapsed())).await;
            }
            took
        })
    };
    let mut highest_health = Duration::ZERO;
    while Instant::now() < deadline {
        let t = Instant::now();
        let ok = http.get(format!("{base}/healthz")).send().await.is_ok_and(|r| r.status().is_success());
        assert!(ok, "/healthz stopped answering");
        highest_health = highest_health.max(t.elapsed());
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let mut sign_ins = sign_ins.await.unwrap();
    for t in tasks {
        let _ = t.await;
    }
    sign_ins.sort();
    println!("  replies finished: {}, failed: {}  (target: none failed)", finished.load(Ordering::Relaxed), failed.load(Ordering::Relaxed));
    println!(
        "  sign-in ({} in a row): p50 {:.0} ms, p95 {:.0} ms, max {:.0} ms  (target: p95 < 1,000 ms)",
        sign_ins.len(),
        percentile(&sign_ins, 0.5).as_secs_f64() * 1e3,
        percentile(&sign_ins, 0.95).as_secs_f64() * 1e3,
        sign_ins.last().copied().unwrap_or_default().as_secs_f64() * 1e3
    );
    println!("  /healthz every 0.5 s answered, the slowest in {:.0} ms", highest_health.as_secs_f64() * 1e3);
    println!("  hostile uploads:");
    for (said, n) in outcomes.lock().unwrap().iter() {
        println!("    {n:>5} × {said}");
    }
    println!("  hostile imports:");
    for (said, n) in imports.lock().unwrap().iter() {
        println!("    {n:>5} × {said}");
    }
    println!(
        "  server memory: highest {before:.0} MB before the load, {:.0} MB during it (VmHWM), {:.0} MB resident at the end; readers run in processes of their own, each limited to MARGIN_EXTRACT_MEMORY_MB",
        status_kb(pid, "VmHWM:") / 1024.0,
        status_kb(pid, "VmRSS:") / 1024.0
    );
    let _ = server.kill();
    let _ = server.wait();
}
