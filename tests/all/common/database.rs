//! A fresh, empty database for one test, on the backend the run is for:
//! `MARGIN_TEST_DATABASE=postgres` gives each test a database of its own on
//! the PostgreSQL server at `MARGIN_TEST_POSTGRES_URL` (default
//! `postgres://postgres@127.0.0.1:5432/test`), dropped when the test ends;
//! otherwise a SQLite file in a temporary folder. A Postgres run whose
//! server does not answer fails; it is never skipped.
#![allow(dead_code)]

use std::path::Path;

use sqlx::{AnyConnection, Connection, Executor};

pub const DEFAULT_POSTGRES: &str = "postgres://postgres@127.0.0.1:5432/test";

/// Whether this run is against PostgreSQL.
pub fn postgres() -> bool {
    std::env::var("MARGIN_TEST_DATABASE").is_ok_and(|v| v == "postgres")
}

/// The server the Postgres run creates its databases on.
pub fn postgres_server() -> String {
    std::env::var("MARGIN_TEST_POSTGRES_URL").unwrap_or_else(|_| DEFAULT_POSTGRES.into())
}

/// One test's database; a Postgres one is dropped with it.
pub struct TestDatabase {
    pub url: String,
    postgres_name: Option<String>,
}

impl TestDatabase {
    /// A new database: a SQLite file under `dir` (in a folder not made yet,
    /// as the server must make it), or a new PostgreSQL database.
    pub async fn new(dir: &Path) -> Self {
        if !postgres() {
            return Self { url: format!("sqlite://{}/nested/margin.db", dir.display()), postgres_name: None };
        }
        Self::new_postgres().await
    }

    /// A new PostgreSQL database, whatever the run is for (a test that
    /// compares the two backends needs one in the SQLite pass too).
    pub async fn new_postgres() -> Self {
        sqlx::any::install_default_drivers();
        let server = postgres_server();
        let name = format!("margin_test_{}", margin::server::ids::random_hex(8));
        let mut admin = AnyConnection::connect(&server)
            .await
            .unwrap_or_else(|e| panic!("the PostgreSQL test server at {server} does not answer ({e}); start one or set MARGIN_TEST_POSTGRES_URL"));
        admin.execute(format!("CREATE DATABASE {name}").as_str()).await.expect("create the test database");
        admin.close().await.ok();
        Self { url: with_database(&server, &name), postgres_name: Some(name) }
    }
}

/// `url` with its database (the last path segment) replaced by `name`.
fn with_database(url: &str, name: &str) -> String {
    let (base, query) = url.split_once('?').map_or((url, None), |(b, q)| (b, Some(q)));
    let after_scheme = base.find("://").map_or(0, |i| i + 3);
    let base = match base[after_scheme..].find('/') {
        Some(slash) => &base[..after_scheme + slash],
        None => base,
    };
    match query {
        Some(q) => format!("{base}/{name}?{q}"),
        None => format!("{base}/{name}"),
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        let Some(name) = self.postgres_name.take() else { return };
        // A test's runtime may be gone or busy: drop it from a thread of its own.
        let server = postgres_server();
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
            rt.block_on(async {
                if let Ok(mut admin) = AnyConnection::connect(&server).await {
                    let _ = admin.execute(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)").as_str()).await;
                    let _ = admin.close().await;
                }
            });
        })
        .join();
    }
}
