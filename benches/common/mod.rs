//! What the benchmarks that start Margin in processes of their own share:
//! starting a role of the same binary, plain HTTP/1.1 on loopback, and
//! reading a process's CPU time. Not a benchmark itself (cargo finds only
//! `benches/*.rs`).

#![allow(dead_code)] // each benchmark uses its own part

use std::{
    io::{BufRead, BufReader, Read},
    net::SocketAddr,
    process::{Child, ChildStdout, Command, Stdio},
};

use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};

/// The variable that tells a started copy of the benchmark what to be.
pub const ROLE: &str = "MARGIN_BENCH_ROLE";

pub fn runtime(workers: usize) -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(workers).enable_all().build().unwrap()
}

/// A child process exits when the driver closes its stdin (or dies).
pub fn exit_with_parent() {
    std::thread::spawn(|| {
        let _ = std::io::stdin().read_to_end(&mut Vec::new());
        std::process::exit(0);
    });
}

/// Starts this benchmark again in `role` (optionally under `wrap`, a
/// profiler's command line); returns the child, the words of its `ready`
/// line and the rest of its output.
pub fn spawn_role(role: &str, env: &[(&str, &str)], wrap: Option<&str>) -> (Child, Vec<String>, BufReader<ChildStdout>) {
    let exe = std::env::current_exe().unwrap();
    let mut words = wrap.unwrap_or("").split_whitespace();
    let mut cmd = match words.next() {
        Some(program) => {
            let mut c = Command::new(program);
            c.args(words).arg(&exe);
            c
        }
        None => Command::new(&exe),
    };
    cmd.env(ROLE, role).env("RUST_LOG", "off").stdin(Stdio::piped()).stdout(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    // A wrapper may print lines of its own first.
    while out.read_line(&mut line).unwrap() > 0 && !line.starts_with("ready") {
        line.clear();
    }
    let words: Vec<String> = line.split_whitespace().map(str::to_string).collect();
    assert_eq!(words.first().map(String::as_str), Some("ready"), "{role} did not start: {line:?}");
    (child, words[1..].to_vec(), out)
}

pub fn request(method: &str, host: &str, path: &str, body: &str, token: Option<&str>) -> String {
    let auth = token.map(|t| format!("Authorization: Bearer {t}\r\n")).unwrap_or_default();
    format!(
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n{auth}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// A plain request; returns the response body.
pub async fn call(addr: SocketAddr, method: &str, path: &str, body: &str, token: Option<&str>) -> String {
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(request(method, &addr.to_string(), path, body, token).as_bytes()).await.unwrap();
    let mut all = Vec::new();
    s.read_to_end(&mut all).await.unwrap();
    let text = String::from_utf8_lossy(&all);
    text.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default()
}

pub async fn drain(mut s: TcpStream) -> usize {
    let mut total = 0;
    let mut buf = [0u8; 65536];
    loop {
        match s.read(&mut buf).await {
            Ok(0) | Err(_) => return total,
            Ok(n) => total += n,
        }
    }
}

/// A process's user and system CPU time, in seconds (clock ticks of 1/100 s).
pub fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or("");
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

pub fn header<'a>(response: &'a str, name: &str) -> Option<&'a str> {
    let head = response.split("\r\n\r\n").next()?;
    head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// A bare relay, the floor under any server between a browser and the
/// model on this machine: it passes each request to the model and the
/// answer back as it comes, with nothing else (no accounts, no database, no
/// parsing of what the model writes), on the same axum, hyper and reqwest
/// as Margin. `make bench-scale` measures the same replies through it (the
/// time any relay adds here); `make bench` its memory per open stream (what
/// any relay holds per stream here).
pub async fn relay() {
    exit_with_parent();
    let model_url = std::env::var("MODEL_URL").expect("MODEL_URL");
    let http = reqwest::Client::new();
    let pass = move |body: axum::body::Bytes| {
        let (http, to) = (http.clone(), format!("{model_url}/chat/completions"));
        async move {
            let answer = http.post(to).header("content-type", "application/json").body(body).send().await.map_err(|e| e.to_string())?;
            Ok::<_, String>(axum::body::Body::from_stream(answer.bytes_stream()))
        }
    };
    let app = axum::Router::new().route("/v1/chat/completions", axum::routing::post(pass));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    println!("ready {}", listener.local_addr().unwrap());
    axum::serve(margin::server::edge::router::no_delay(listener), app.into_make_service()).await.unwrap();
}
