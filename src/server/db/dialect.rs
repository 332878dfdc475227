//! Where SQLite and PostgreSQL differ, each difference as one small function:
//! how a write transaction starts, case-insensitive `LIKE`, the larger of two
//! values, and gathering rows into one JSON text. Everything else is written once.

use sqlx::{Any, Transaction};

use super::Db;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    pub fn of_url(url: &str) -> Option<Self> {
        match url.split(':').next()? {
            "sqlite" => Some(Self::Sqlite),
            "postgres" | "postgresql" => Some(Self::Postgres),
            _ => None,
        }
    }

    /// The backend a pool was opened on.
    pub fn of(db: &Db) -> Self {
        Self::of_url(db.connect_options().database_url.as_str()).unwrap_or(Self::Sqlite)
    }

    /// `LIKE` that ignores case. SQLite's `LIKE` already does (for ASCII,
    /// and `lower()` would do no more there).
    pub fn like(self) -> &'static str {
        match self {
            Self::Sqlite => "LIKE",
            Self::Postgres => "ILIKE",
        }
    }

    /// The larger of two values (a scalar, not the aggregate).
    pub fn greatest(self) -> &'static str {
        match self {
            Self::Sqlite => "max",
            Self::Postgres => "GREATEST",
        }
    }

    /// An aggregate of one JSON array per row (`row`, a list of columns),
    /// as text; `[]` when there are no rows.
    pub fn json_rows(self, row: &str) -> String {
        match self {
            Self::Sqlite => format!("json_group_array(json_array({row}))"),
            Self::Postgres => format!("COALESCE(json_agg(json_build_array({row}))::text, '[]')"),
        }
    }
}

/// Starts a transaction that will write.
///
/// SQLite: `BEGIN IMMEDIATE` takes the write lock at once, so a transaction
/// that reads before it writes cannot fail midway with SQLITE_BUSY.
/// PostgreSQL: a plain `BEGIN` (read committed); the writes that race are
/// made safe by their own statements: conditional updates (`WHERE revision =
/// $n`, `WHERE status = 'pending'`), which PostgreSQL re-checks after
/// waiting for a row another transaction holds, and unique constraints.
pub async fn begin_write(db: &Db) -> Result<Transaction<'static, Any>, sqlx::Error> {
    match Backend::of(db) {
        Backend::Sqlite => db.begin_with("BEGIN IMMEDIATE").await,
        Backend::Postgres => db.begin().await,
    }
}
