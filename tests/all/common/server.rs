//! The real server binary, started on a free port over a given database
//! (`database`), with the scripted model as its provider; and a wait on the
//! database for a count to be reached.
#![allow(dead_code)]

use std::{
    process::{Command, Stdio},
    time::{Duration, Instant},
};

fn free_port() -> u16 {
    // Taken back at once; the server binds it a moment later.
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

pub struct Server {
    /// The process; killed when the `Server` is dropped, unless taken.
    child: Option<std::process::Child>,
    pub base: String,
}

impl Server {
    /// Starts the server over `db`, with `env` added, and waits until it is healthy.
    ///
    /// The free port is found by binding and letting go, so another socket
    /// (a database connection going out) can take it before the server
    /// binds it; the server then exits at once. Such a start is tried again
    /// on another port, a few times, rather than waited on in vain.
    pub async fn start(db: &str, site_root: &std::path::Path, env: &[(&str, &str)]) -> Self {
        for _ in 0..3 {
            if let Some(server) = Self::try_start(db, site_root, env).await {
                return server;
            }
        }
        panic!("the server exited at start three times");
    }

    /// One start: `None` when the process ended before it was healthy.
    async fn try_start(db: &str, site_root: &std::path::Path, env: &[(&str, &str)]) -> Option<Self> {
        let port = free_port();
        let mut command = Command::new(env!("CARGO_BIN_EXE_margin"));
        command
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("DATABASE_URL", db)
            .env("LEPTOS_SITE_ADDR", format!("127.0.0.1:{port}"))
            .env("LEPTOS_OUTPUT_NAME", "margin")
            .env("LEPTOS_SITE_ROOT", site_root)
            .env("AI_PROVIDER", "demo")
            .env("RUST_LOG", "warn");
        for (k, v) in env {
            command.env(k, v);
        }
        let mut child = command
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("server starts");
        let base = format!("http://127.0.0.1:{port}");
        let http = reqwest::Client::new();
        let started = Instant::now();
        loop {
            if let Ok(r) = http.get(format!("{base}/healthz")).send().await {
                if r.status().is_success() {
                    break;
                }
            }
            if let Ok(Some(status)) = child.try_wait() {
                eprintln!("the server on port {port} exited at start ({status}); trying another port");
                return None;
            }
            assert!(started.elapsed() < Duration::from_secs(60), "server never became healthy");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Some(Self { child: Some(child), base })
    }

    pub fn signal(&self, signal: &str) {
        let pid = self.child.as_ref().expect("running").id().to_string();
        let sent = Command::new("kill").args([signal, &pid]).status().unwrap();
        assert!(sent.success());
    }

    /// Waits for the process to end.
    pub fn wait(&mut self) -> std::process::ExitStatus {
        self.child.as_mut().expect("running").wait().unwrap()
    }

    /// The process, no longer killed on drop.
    pub fn take_child(&mut self) -> std::process::Child {
        self.child.take().expect("running")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Server {
    /// `GET path` here with a session token, read as JSON.
    pub async fn get_json(&self, path: &str, token: &str) -> serde_json::Value {
        reqwest::Client::new().get(format!("{}{path}", self.base)).bearer_auth(token).send().await.unwrap().json().await.unwrap()
    }

    /// Signs a new teacher up here; their `Authorization` header value.
    pub async fn sign_up(&self, http: &reqwest::Client, email: &str) -> String {
        let signup: serde_json::Value = http
            .post(format!("{}/api/auth/signup", self.base))
            .json(&serde_json::json!({"email": email, "password": "correct horse"}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        format!("Bearer {}", signup["token"].as_str().expect("signed up"))
    }
}

/// Waits (with a deadline) until `sql`, a count, says `want`.
pub async fn until_count(pool: &margin::server::db::Db, sql: &str, want: i64) {
    let waiting = Instant::now();
    loop {
        let n: i64 = sqlx::query_scalar(sql).fetch_one(pool).await.unwrap();
        if n == want {
            return;
        }
        assert!(waiting.elapsed() < Duration::from_secs(60), "{sql}: {n}, not {want}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits (with a deadline) until `sql`, a count, says at least `want`.
pub async fn until_at_least(pool: &margin::server::db::Db, sql: &str, want: i64) {
    let waiting = Instant::now();
    loop {
        let n: i64 = sqlx::query_scalar(sql).fetch_one(pool).await.unwrap();
        if n >= want {
            return;
        }
        assert!(waiting.elapsed() < Duration::from_secs(60), "{sql}: {n}, not {want} or more");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
