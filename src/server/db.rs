//! The database: SQLite (the default, one file, one machine) or PostgreSQL
//! (many instances), chosen by the scheme of `DATABASE_URL`. Every query is
//! written once, in the SQL both understand (`$1` parameters, text
//! timestamps, `lower()` for case), and runs through sqlx's `Any` driver;
//! where the dialects differ, the difference is one small function in
//! `dialect`.
//!
//! SQLite: the file (and its folder) is created when missing, WAL mode lets
//! readers and the writer work at once, and foreign keys are enforced.
//! Migrations run before anything else touches either.

mod dialect;
mod flag;
pub mod time;

use std::time::Duration;

use sqlx::{
    any::{AnyConnectOptions, AnyPoolOptions},
    AnyPool, Executor,
};

pub use dialect::{begin_write, Backend};
pub use flag::Flag;

/// A pool of connections to the database, whichever it is.
pub type Db = AnyPool;

/// SQLite's settings for each connection. WAL is kept by the file itself;
/// the others are per connection. (Foreign keys and the busy timeout are
/// sqlx's defaults for SQLite; set again here so they do not depend on it.)
const SQLITE_PRAGMAS: &str = "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;
     PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000;";

/// Opens (creating if needed) and migrates the database at `url`.
///
/// Write transactions elsewhere start with `begin_write`: on SQLite a
/// deferred one that reads first and writes later can fail at once with
/// SQLITE_BUSY when another writer got in between, which the busy timeout
/// cannot wait out.
pub async fn connect(url: &str) -> Result<Db, sqlx::Error> {
    sqlx::any::install_default_drivers();
    let backend = Backend::of_url(url).ok_or_else(|| {
        sqlx::Error::Configuration(format!("DATABASE_URL must start with sqlite:// or postgres://, not {:?}", scheme(url)).into())
    })?;
    let url = match backend {
        Backend::Sqlite => sqlite_url(url)?,
        Backend::Postgres => url.to_string(),
    };
    let options: AnyConnectOptions = url.parse()?;
    let pool = pool_options(backend, POOL_SIZE).connect_with(options).await?;
    match backend {
        Backend::Sqlite => {
            sqlx::migrate!("migrations/sqlite").run(&pool).await?;
            every_connection_reads_the_schema(&pool).await?;
        }
        Backend::Postgres => sqlx::migrate!("migrations/postgres").run(&pool).await?,
    }
    Ok(pool)
}

/// Connections in the main pool.
const POOL_SIZE: u32 = 8;

/// Has every connection of a SQLite pool open and holding the current
/// schema: `connect` calls it once the migrations have run, and the tests
/// after they change the schema themselves. Each connection is held at once
/// (the pool's maximum, so one busy elsewhere is waited for, not missed) and
/// reads a table, which makes it read the schema if it has not or if it
/// has changed. The pool keeps them: no idle timeout.
///
/// Opened now rather than the first time a burst of requests needs them:
/// opening one and reading its schema is a few hundred kilobytes and a
/// millisecond or more on the way to the request that opens it, and what
/// the server holds should not grow with its first busy minute (`make
/// bench`, memory per open stream at 100: SQLite's heap grew by 1.2 MB
/// while the streams opened, most of it connections being opened and
/// reading the schema; 0.3 MB with them ready). Not sqlx's
/// `min_connections`, which opens them before the migrations: a connection
/// that has read a schema another connection then changes can fail its
/// next statement ("no such table: lessons" for a `DELETE FROM lessons`
/// through sqlx 0.8's SQLite 3.46, seen in tests/material), where reading a
/// table first reads the new schema cleanly.
pub async fn every_connection_reads_the_schema(pool: &Db) -> Result<(), sqlx::Error> {
    let mut held = Vec::new();
    for _ in 0..pool.options().get_max_connections() {
        let mut conn = pool.acquire().await?;
        sqlx::query("SELECT 1 FROM lessons LIMIT 1").execute(&mut *conn).await?;
        held.push(conn);
    }
    Ok(())
}

/// A write scoped to its owner (`WHERE id = $1 AND owner_id = $2`) touched
/// its row; if it touched none, the row is someone else's or gone, and
/// either is `NotFound`, so nobody learns that another's row exists.
pub fn touched_one(done: &sqlx::any::AnyQueryResult) -> Result<(), crate::server::error::AppError> {
    if done.rows_affected() == 0 {
        return Err(crate::server::error::AppError::NotFound);
    }
    Ok(())
}

/// A database URL as logs and messages may show it: its password (between
/// `user:` and `@`, or a `password=` parameter) replaced by `***`.
pub fn redacted(url: &str) -> String {
    let mut out = url.to_string();
    if let Some((scheme, rest)) = url.split_once("://") {
        let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        if let Some(at) = rest[..authority_end].rfind('@') {
            if let Some(colon) = rest[..at].find(':') {
                out = format!("{scheme}://{}:***{}", &rest[..colon], &rest[at..]);
            }
        }
    }
    if let Some(q) = out.find('?') {
        let (head, query) = out.split_at(q + 1);
        let hidden: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((k, _)) if k.eq_ignore_ascii_case("password") || k.eq_ignore_ascii_case("sslpassword") => format!("{k}=***"),
                _ => pair.to_string(),
            })
            .collect();
        out = format!("{head}{}", hidden.join("&"));
    }
    out
}

/// The scheme of a URL, for messages (never the rest: it may hold a password).
fn scheme(url: &str) -> &str {
    url.split(':').next().unwrap_or("")
}

/// Pool settings. No ping before handing out a SQLite connection: it is a
/// local file, not a network peer that may have gone away, and the ping
/// would double the cost of every query. A PostgreSQL connection can be cut
/// by the server or the network, so it is checked. A SQLite pool keeps every
/// connection it opens (a local file's do not go stale; `connect` opens
/// them all: `every_connection_reads_the_schema`); PostgreSQL's come and go as they are
/// needed, since its server counts every instance's.
fn pool_options(backend: Backend, max: u32) -> AnyPoolOptions {
    let options = AnyPoolOptions::new().max_connections(max);
    match backend {
        Backend::Sqlite => options.idle_timeout(None).max_lifetime(None).test_before_acquire(false).after_connect(|conn, _| {
            Box::pin(async move {
                conn.execute(SQLITE_PRAGMAS).await?;
                Ok(())
            })
        }),
        Backend::Postgres => options.acquire_timeout(Duration::from_secs(10)),
    }
}

/// A SQLite URL that creates the file when missing (`mode=rwc`, unless the
/// URL says otherwise), with its folder made first.
fn sqlite_url(url: &str) -> Result<String, sqlx::Error> {
    let rest = url.strip_prefix("sqlite://").or_else(|| url.strip_prefix("sqlite:")).unwrap_or(url);
    let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
    if path != ":memory:" {
        if let Some(parent) = std::path::Path::new(path).parent() {
            if !parent.as_os_str().is_empty() {
                std::fs::create_dir_all(parent)?;
            }
        }
    }
    Ok(if query.split('&').any(|p| p.starts_with("mode=")) || path == ":memory:" {
        url.to_string()
    } else if query.is_empty() {
        format!("sqlite://{path}?mode=rwc")
    } else {
        format!("sqlite://{path}?{query}&mode=rwc")
    })
}

/// The pool the turn engine writes through: the writes of running turns
/// (their messages, checkpoints, edits and ends) come in bursts.
///
/// SQLite lets one writer in at a time; writers that collide wait in its
/// busy handler, which sleeps in steps of up to 100 ms, and a hundred turns
/// starting at once then take seconds to store their messages. Queued for
/// one connection instead, each waits only for the writes before it.
/// PostgreSQL takes concurrent writers, so there it is the same pool.
pub fn turn_writer(db: &Db) -> Db {
    match Backend::of(db) {
        Backend::Sqlite => pool_options(Backend::Sqlite, 1).connect_lazy_with((*db.connect_options()).clone()),
        Backend::Postgres => db.clone(),
    }
}

/// The pool budget writes go through (`accounts::budget`): a reservation
/// before each model call and a settling after it, all on the row of the
/// call's school, so every reply of a school queues on one row lock.
///
/// PostgreSQL holds a row's lock until the commit is flushed to disk, so
/// with `synchronous_commit` on, a school's reservations go one flush at a
/// time (100 clients on one row, fsync on: about 1,200 a second, 80 ms each;
/// off: 4,300–5,200, 20 ms). Here they commit without waiting for the flush
/// (`synchronous_commit = off`): nothing is less exact, since each
/// statement still sees every commit before it; what a crash of PostgreSQL
/// itself could lose is the last fraction of a second of budget writes, and
/// only those no later ordinary commit, from any instance, has flushed (the
/// log is written in order): a reservation whose reply was never stored, or
/// a call's recorded use when its reply's progress since was lost too (that
/// reply is then recovered as interrupted and its reservation given back;
/// the call's tokens go uncounted).
///
/// SQLite: the turn writer's queue, as before (`synchronous = NORMAL` there
/// already).
pub fn budget_writer(db: &Db, turn_writer: &Db) -> Db {
    match Backend::of(db) {
        Backend::Sqlite => turn_writer.clone(),
        Backend::Postgres => pool_options(Backend::Postgres, 4)
            .after_connect(|conn, _| {
                Box::pin(async move {
                    conn.execute("SET synchronous_commit = off").await?;
                    Ok(())
                })
            })
            .connect_lazy_with((*db.connect_options()).clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_sqlite_pool_has_every_connection_open_and_ready_from_the_start() {
        let dir = tempfile::tempdir().unwrap();
        let pool = connect(&format!("sqlite://{}/margin.db", dir.path().display())).await.unwrap();
        assert_eq!(pool.size(), POOL_SIZE, "every connection open before the first request");
        // Given back to the pool by tasks of sqlx's own, which run as this one waits.
        while pool.num_idle() < POOL_SIZE as usize {
            tokio::task::yield_now().await;
        }
        // All of them at once, each answering a query on a table.
        let mut held = Vec::new();
        for _ in 0..POOL_SIZE {
            let mut conn = pool.acquire().await.unwrap();
            let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM users").fetch_one(&mut *conn).await.unwrap();
            assert_eq!(n, 0);
            held.push(conn);
        }
    }

    #[test]
    fn sqlite_urls_create_the_file_unless_told_otherwise() {
        assert_eq!(sqlite_url("sqlite://data/margin.db").unwrap(), "sqlite://data/margin.db?mode=rwc");
        assert_eq!(sqlite_url("sqlite:data/margin.db").unwrap(), "sqlite://data/margin.db?mode=rwc");
        assert_eq!(sqlite_url("sqlite://data/margin.db?cache=shared").unwrap(), "sqlite://data/margin.db?cache=shared&mode=rwc");
        assert_eq!(sqlite_url("sqlite://data/margin.db?mode=ro").unwrap(), "sqlite://data/margin.db?mode=ro");
    }

    #[test]
    fn the_backend_is_the_scheme() {
        assert_eq!(Backend::of_url("sqlite://x.db"), Some(Backend::Sqlite));
        assert_eq!(Backend::of_url("postgres://u@h/db"), Some(Backend::Postgres));
        assert_eq!(Backend::of_url("postgresql://u@h/db"), Some(Backend::Postgres));
        assert_eq!(Backend::of_url("mysql://u@h/db"), None);
        assert_eq!(scheme("postgres://user:secret@h/db"), "postgres");
    }
}
