//! `margin copy --from sqlite://… --to postgres://…`: moves a school that
//! started on one machine (SQLite) onto PostgreSQL, where many instances
//! can serve it. Every table, in an order that satisfies its references, in
//! one transaction on the target; each table's rows counted on both sides
//! before the transaction commits. A target that already holds anything is
//! refused: the copy never merges into, or overwrites, a live database.
//!
//! The target's own schema (its migrations, run first) says which tables
//! and columns there are and of which type; the source, migrated to the same
//! version, is read by those names. The storage counts that PostgreSQL's
//! triggers keep while rows arrive are set back to the source's at the end,
//! and the storage limits are copied last, so that a copy is never refused
//! for counting an account's work twice.

use std::collections::{BTreeMap, BTreeSet};

use sqlx::{any::AnyRow, Row};

use crate::server::db::{self, Backend, Db};

/// The migrations' own bookkeeping, which each side keeps for itself.
const SKIPPED: &[&str] = &["_sqlx_migrations"];
/// Copied after every other table (see the module's note).
const LAST: &str = "storage_quotas";
/// Parameters per insert (PostgreSQL takes at most 65,535).
const PARAMETERS: usize = 30_000;

struct Column {
    name: String,
    kind: Kind,
}

/// How a column's values travel.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Text,
    Integer,
    Real,
    Flag,
    Bytes,
}

impl Kind {
    fn of(pg_type: &str) -> Result<Self, String> {
        Ok(match pg_type {
            "text" | "character varying" => Self::Text,
            "bigint" | "integer" | "smallint" => Self::Integer,
            "double precision" | "real" | "numeric" => Self::Real,
            "boolean" => Self::Flag,
            "bytea" => Self::Bytes,
            other => return Err(format!("the copy does not know the column type {other:?}")),
        })
    }
}

/// One table's rows on each side.
pub struct Copied {
    pub table: String,
    pub source: i64,
    pub target: i64,
}

/// Copies everything in `from` (SQLite) into `to` (an empty PostgreSQL database).
pub async fn copy(from: &str, to: &str) -> Result<Vec<Copied>, String> {
    if Backend::of_url(from) != Some(Backend::Sqlite) {
        return Err("--from must be a SQLite database (sqlite://path/to/margin.db)".into());
    }
    if Backend::of_url(to) != Some(Backend::Postgres) {
        return Err("--to must be a PostgreSQL database (postgres://user@host/database)".into());
    }
    let path = from.trim_start_matches("sqlite://").trim_start_matches("sqlite:");
    let path = path.split('?').next().unwrap_or(path);
    if !std::path::Path::new(path).is_file() {
        return Err(format!("There is no SQLite database at {path}."));
    }
    let source = db::connect(from).await.map_err(|e| format!("Could not open the SQLite database: {e}"))?;
    let target = db::connect(to).await.map_err(|e| format!("Could not open the PostgreSQL database: {e}"))?;
    let tables = tables(&target).await?;
    for name in tables.keys() {
        let n = count(&target, name).await?;
        if n > 0 {
            return Err(format!("The PostgreSQL database is not empty ({name} has {n} rows). The copy goes only into an empty database."));
        }
    }
    let order = order(&target, &tables).await?;
    let mut tx = target.begin().await.map_err(|e| e.to_string())?;
    for name in &order {
        let columns = &tables[name];
        let list = columns.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(", ");
        let rows = sqlx::query(&format!("SELECT {list} FROM {name}")).fetch_all(&source).await.map_err(|e| format!("reading {name}: {e}"))?;
        let per = (PARAMETERS / columns.len().max(1)).max(1);
        for chunk in rows.chunks(per) {
            let marks: Vec<String> = (0..chunk.len())
                .map(|r| format!("({})", (0..columns.len()).map(|c| format!("${}", r * columns.len() + c + 1)).collect::<Vec<_>>().join(", ")))
                .collect();
            let sql = format!("INSERT INTO {name} ({list}) VALUES {}", marks.join(", "));
            let mut q = sqlx::query(&sql);
            for row in chunk {
                for (i, c) in columns.iter().enumerate() {
                    q = bind(q, row, i, c).map_err(|e| format!("reading {name}.{}: {e}", c.name))?;
                }
            }
            q.execute(&mut *tx).await.map_err(|e| format!("writing {name}: {e}"))?;
        }
    }
    // The triggers counted every version, source and answer again as it arrived.
    let stored: Vec<(String, i64)> = sqlx::query_as("SELECT id, stored_bytes FROM users").fetch_all(&source).await.map_err(|e| e.to_string())?;
    for (id, bytes) in stored {
        sqlx::query("UPDATE users SET stored_bytes = $2 WHERE id = $1").bind(id).bind(bytes).execute(&mut *tx).await.map_err(|e| e.to_string())?;
    }
    // Serial columns go on from the highest copied value.
    let serials: Vec<(String, String)> = sqlx::query_as(
        "SELECT table_name::TEXT, column_name::TEXT FROM information_schema.columns
         WHERE table_schema = current_schema() AND column_default LIKE 'nextval(%'",
    )
    .fetch_all(&mut *tx)
    .await
    .map_err(|e| e.to_string())?;
    for (table, column) in serials {
        let sql = format!("SELECT setval(pg_get_serial_sequence('{table}', '{column}'), COALESCE((SELECT MAX({column}) FROM {table}), 0) + 1, false)");
        sqlx::query(&sql).execute(&mut *tx).await.map_err(|e| format!("{table}.{column}: {e}"))?;
    }
    let mut copied = Vec::new();
    for name in &order {
        let source_rows = count(&source, name).await?;
        let n: i64 = sqlx::query_scalar(&format!("SELECT COUNT(*)::BIGINT FROM {name}")).fetch_one(&mut *tx).await.map_err(|e| e.to_string())?;
        if n != source_rows {
            return Err(format!("{name}: {source_rows} rows in SQLite but {n} in PostgreSQL; nothing was copied."));
        }
        copied.push(Copied { table: name.clone(), source: source_rows, target: n });
    }
    tx.commit().await.map_err(|e| e.to_string())?;
    Ok(copied)
}

fn bind<'q>(q: sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>>, row: &AnyRow, i: usize, c: &Column) -> Result<sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>>, sqlx::Error> {
    Ok(match c.kind {
        Kind::Text => q.bind(row.try_get::<Option<String>, _>(i)?),
        Kind::Integer => q.bind(row.try_get::<Option<i64>, _>(i)?),
        Kind::Real => q.bind(row.try_get::<Option<f64>, _>(i)?),
        // SQLite keeps flags as 0 and 1 (`db::Flag`).
        Kind::Flag => q.bind(row.try_get::<Option<i64>, _>(i)?.map(|v| v != 0)),
        Kind::Bytes => q.bind(row.try_get::<Option<Vec<u8>>, _>(i)?),
    })
}

async fn count(db: &Db, table: &str) -> Result<i64, String> {
    sqlx::query_scalar(&format!("SELECT COUNT(*) FROM {table}")).fetch_one(db).await.map_err(|e| format!("counting {table}: {e}"))
}

/// The target's tables and their columns, in order (not the columns
/// PostgreSQL computes itself, such as the lessons' search vector).
async fn tables(target: &Db) -> Result<BTreeMap<String, Vec<Column>>, String> {
    let rows: Vec<(String, String, String)> = sqlx::query_as(
        "SELECT table_name::TEXT, column_name::TEXT, data_type::TEXT FROM information_schema.columns
         WHERE table_schema = current_schema() AND is_generated = 'NEVER' ORDER BY table_name, ordinal_position",
    )
    .fetch_all(target)
    .await
    .map_err(|e| e.to_string())?;
    let mut out: BTreeMap<String, Vec<Column>> = BTreeMap::new();
    for (table, name, pg_type) in rows {
        if SKIPPED.contains(&table.as_str()) {
            continue;
        }
        out.entry(table).or_default().push(Column { name, kind: Kind::of(&pg_type)? });
    }
    Ok(out)
}

/// The tables with each after the tables it refers to, `LAST` at the end.
/// (No table refers to itself; one that did would need its rows ordered too.)
async fn order(target: &Db, tables: &BTreeMap<String, Vec<Column>>) -> Result<Vec<String>, String> {
    let refs: Vec<(String, String)> = sqlx::query_as(
        "SELECT c.conrelid::regclass::TEXT, c.confrelid::regclass::TEXT FROM pg_constraint c
         JOIN pg_namespace n ON n.oid = c.connamespace WHERE c.contype = 'f' AND n.nspname = current_schema()",
    )
    .fetch_all(target)
    .await
    .map_err(|e| e.to_string())?;
    let mut needs: BTreeMap<&str, BTreeSet<&str>> = tables.keys().map(|t| (t.as_str(), BTreeSet::new())).collect();
    for (from, to) in &refs {
        if from != to {
            if let Some(n) = needs.get_mut(from.as_str()) {
                n.insert(to.as_str());
            }
        }
    }
    let mut done: Vec<String> = Vec::new();
    while done.len() < needs.len() {
        let ready: Vec<&str> = needs
            .iter()
            .filter(|(t, n)| !done.iter().any(|d| d == *t) && **t != LAST && n.iter().all(|r| done.iter().any(|d| d == r)))
            .map(|(t, _)| *t)
            .collect();
        if ready.is_empty() {
            break;
        }
        done.extend(ready.into_iter().map(str::to_string));
    }
    if tables.contains_key(LAST) {
        done.push(LAST.to_string());
    }
    if done.len() < tables.len() {
        return Err("the tables refer to each other in a circle; the copy cannot order them".into());
    }
    Ok(done)
}
