//! Opening the SQLite database: the file (and its folder) is created when
//! missing, WAL mode lets readers and the writer work at once, foreign keys are
//! enforced, and migrations run before anything else touches it.

use std::{str::FromStr, time::Duration};

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous};

/// Opens (creating if needed) and migrates the database at `url`.
///
/// Write transactions elsewhere start with `BEGIN IMMEDIATE`: a deferred one
/// that reads first and writes later can fail at once with SQLITE_BUSY when
/// another writer got in between, which the busy timeout cannot wait out.
pub async fn connect(url: &str) -> Result<SqlitePool, sqlx::Error> {
    let options = SqliteConnectOptions::from_str(url)?
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal)
        .busy_timeout(Duration::from_secs(5))
        .foreign_keys(true);
    if let Some(parent) = options.get_filename().parent() {
        if !parent.as_os_str().is_empty() {
            std::fs::create_dir_all(parent)?;
        }
    }
    // No ping before handing out a connection: it is a local file, not a
    // network peer that may have gone away, and the ping would double the
    // cost of every query.
    let pool = SqlitePoolOptions::new()
        .max_connections(8)
        .test_before_acquire(false)
        .connect_with(options)
        .await?;
    sqlx::migrate!().run(&pool).await?;
    Ok(pool)
}

/// A pool of one connection to the same database, for the writes of running
/// turns (their messages, checkpoints, edits and ends), which come in bursts.
/// SQLite lets one writer in at a time; writers that collide wait in its busy
/// handler, which sleeps in steps of up to 100 ms, and a hundred turns
/// starting at once then take seconds to store their messages. Queued for
/// this one connection instead, each waits only for the writes before it.
pub fn turn_writer(pool: &SqlitePool) -> SqlitePool {
    SqlitePoolOptions::new()
        .max_connections(1)
        .test_before_acquire(false)
        .connect_lazy_with((*pool.connect_options()).clone())
}
