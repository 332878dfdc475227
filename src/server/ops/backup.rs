//! `margin backup <file>` and `margin restore <file>`: a school's whole
//! database kept in one file and put back, by whoever runs the server.
//!
//! - SQLite: the backup is a consistent copy taken while the server runs
//!   (`VACUUM INTO`, which reads one snapshot); restoring checks the file
//!   (`PRAGMA integrity_check`) and puts it where `DATABASE_URL` points.
//! - PostgreSQL: PostgreSQL's own `pg_dump` (its custom format, without
//!   owners or grants, so that it restores under another role) and
//!   `pg_restore` in one transaction. They must be installed beside Margin,
//!   of the server's major version or newer.
//!
//! Neither ever overwrites: a backup refuses a file that exists, a restore
//! a database that exists (SQLite) or holds any table (PostgreSQL). Each
//! says how many rows every table holds afterwards, read back from the
//! result, so an operator can compare the two.

use std::path::Path;

use sqlx::Connection;

use crate::server::db::{self, Backend, Db};

/// One table's rows, as read back.
pub struct Counted {
    pub table: String,
    pub rows: i64,
}

/// The file a `sqlite://…` URL names.
fn sqlite_path(url: &str) -> &str {
    let path = url.trim_start_matches("sqlite://").trim_start_matches("sqlite:");
    path.split('?').next().unwrap_or(path)
}

fn refuse_existing(file: &Path) -> Result<(), String> {
    if file.exists() {
        return Err(format!("{} already exists. A backup never overwrites: name a new file.", file.display()));
    }
    Ok(())
}

/// Writes a backup of the database at `url` to `file`.
pub async fn backup(url: &str, file: &Path) -> Result<Vec<Counted>, String> {
    refuse_existing(file)?;
    match Backend::of_url(url) {
        Some(Backend::Sqlite) => {
            if !Path::new(sqlite_path(url)).is_file() {
                return Err(format!("There is no SQLite database at {}.", sqlite_path(url)));
            }
            let source = db::connect(url).await.map_err(|e| format!("Could not open the database: {e}"))?;
            let target = file.to_str().ok_or("The backup's file name must be UTF-8.")?;
            sqlx::query("VACUUM INTO $1").bind(target).execute(&source).await.map_err(|e| format!("Could not write the backup: {e}"))?;
            source.close().await;
            counts_of_sqlite_file(file).await
        }
        Some(Backend::Postgres) => {
            let out = std::process::Command::new("pg_dump")
                .args(["--format=custom", "--no-owner", "--no-privileges", "--file"])
                .arg(file)
                .arg("--dbname")
                .arg(url)
                .output()
                .map_err(|e| format!("Could not run pg_dump ({e}). Install PostgreSQL's client tools (Debian: postgresql-client) of the server's version or newer."))?;
            if !out.status.success() {
                return Err(format!("pg_dump failed: {}", redact(&String::from_utf8_lossy(&out.stderr), url)));
            }
            let db = db::connect(url).await.map_err(|e| format!("Could not open the database: {e}"))?;
            counts(&db, Backend::Postgres).await
        }
        None => Err("DATABASE_URL must start with sqlite:// or postgres://".into()),
    }
}

/// Puts the backup in `file` into the database at `url`, which must not
/// exist (SQLite) or must hold no table (PostgreSQL).
pub async fn restore(url: &str, file: &Path) -> Result<Vec<Counted>, String> {
    if !file.is_file() {
        return Err(format!("There is no backup at {}.", file.display()));
    }
    match Backend::of_url(url) {
        Some(Backend::Sqlite) => {
            let target = Path::new(sqlite_path(url));
            if target.exists() {
                return Err(format!(
                    "A database already exists at {}. A restore never overwrites: stop the server, move that file aside, and restore again.",
                    target.display()
                ));
            }
            if let Some(dir) = target.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).map_err(|e| format!("Could not make {}: {e}", dir.display()))?;
            }
            // Checked as a copy beside the target, then put in place at once.
            let part = target.with_extension("restoring");
            std::fs::copy(file, &part).map_err(|e| format!("Could not copy the backup: {e}"))?;
            if let Err(why) = check_sqlite_file(&part).await {
                std::fs::remove_file(&part).ok();
                return Err(why);
            }
            std::fs::rename(&part, target).map_err(|e| format!("Could not put the database in place: {e}"))?;
            // Opening it brings an older backup's schema up to this version.
            let db = db::connect(url).await.map_err(|e| format!("The restored database does not open: {e}"))?;
            counts(&db, Backend::Sqlite).await
        }
        Some(Backend::Postgres) => {
            sqlx::any::install_default_drivers();
            let mut conn = sqlx::AnyConnection::connect(url).await.map_err(|e| format!("Could not open the PostgreSQL database: {e}"))?;
            let tables: i64 = sqlx::query_scalar("SELECT COUNT(*)::BIGINT FROM information_schema.tables WHERE table_schema = current_schema()")
                .fetch_one(&mut conn)
                .await
                .map_err(|e| e.to_string())?;
            conn.close().await.ok();
            if tables > 0 {
                return Err(format!("The PostgreSQL database already holds {tables} tables. A restore goes only into a new, empty database (createdb)."));
            }
            let out = std::process::Command::new("pg_restore")
                .args(["--no-owner", "--no-privileges", "--exit-on-error", "--single-transaction", "--dbname"])
                .arg(url)
                .arg(file)
                .output()
                .map_err(|e| format!("Could not run pg_restore ({e}). Install PostgreSQL's client tools (Debian: postgresql-client)."))?;
            if !out.status.success() {
                return Err(format!("pg_restore failed; nothing was restored: {}", redact(&String::from_utf8_lossy(&out.stderr), url)));
            }
            let db = db::connect(url).await.map_err(|e| format!("The restored database does not open: {e}"))?;
            counts(&db, Backend::Postgres).await
        }
        None => Err("DATABASE_URL must start with sqlite:// or postgres://".into()),
    }
}

/// The URL (and its password) never reaches what is printed.
fn redact(said: &str, url: &str) -> String {
    said.replace(url, &db::redacted(url)).trim().to_string()
}

/// Opens a SQLite file as it is (no migrations) and checks it.
async fn check_sqlite_file(file: &Path) -> Result<(), String> {
    sqlx::any::install_default_drivers();
    let url = format!("sqlite://{}", file.display());
    let mut conn = sqlx::AnyConnection::connect(&url).await.map_err(|e| format!("The backup is not a SQLite database: {e}"))?;
    let said: String = sqlx::query_scalar("PRAGMA integrity_check").fetch_one(&mut conn).await.map_err(|e| format!("The backup is not a SQLite database: {e}"))?;
    let margin: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN ('users', 'lessons', '_sqlx_migrations')")
        .fetch_one(&mut conn)
        .await
        .map_err(|e| e.to_string())?;
    conn.close().await.ok();
    if said != "ok" {
        return Err(format!("The backup is damaged: {said}"));
    }
    if margin < 3 {
        return Err("The file is a SQLite database, but not a Margin backup.".into());
    }
    Ok(())
}

async fn counts_of_sqlite_file(file: &Path) -> Result<Vec<Counted>, String> {
    check_sqlite_file(file).await?;
    let db = db::connect(&format!("sqlite://{}", file.display())).await.map_err(|e| e.to_string())?;
    let out = counts(&db, Backend::Sqlite).await;
    db.close().await;
    out
}

/// Every table's rows (not the migrations' own bookkeeping).
async fn counts(db: &Db, backend: Backend) -> Result<Vec<Counted>, String> {
    let list = match backend {
        Backend::Sqlite => "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> '_sqlx_migrations' ORDER BY name",
        Backend::Postgres => "SELECT table_name::TEXT FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name <> '_sqlx_migrations' ORDER BY 1",
    };
    let names: Vec<String> = sqlx::query_scalar(list).fetch_all(db).await.map_err(|e| e.to_string())?;
    let mut out = Vec::with_capacity(names.len());
    for table in names {
        let rows: i64 = sqlx::query_scalar(&format!("SELECT COUNT(*) FROM {table}")).fetch_one(db).await.map_err(|e| format!("counting {table}: {e}"))?;
        out.push(Counted { table, rows });
    }
    Ok(out)
}
