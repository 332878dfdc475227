//! The SQLite and PostgreSQL migration trees are written by hand, one file
//! in each per change. This test migrates a fresh database of each kind and
//! compares what they hold: tables, columns (a mapped type and whether they
//! may be empty), primary keys, and indexes (their columns, whether they are
//! unique, whether they are partial). Any difference fails, unless it is
//! listed in `INTENDED` with the reason it exists.
//!
//! It needs both databases whatever the run is for, so it runs (the same
//! way) in the SQLite pass and in the PostgreSQL pass.
#![cfg(feature = "ssr")]

use crate::common;

use std::collections::{BTreeMap, BTreeSet};

use sqlx::{postgres::PgPoolOptions, sqlite::SqlitePoolOptions, Row};

/// Differences between the two schemas that are meant, each as the line
/// `describe` prints for it, with why.
const INTENDED: &[(&str, &str)] = &[
    // Flags: SQLite has no boolean type; 0 and 1 there, read through `db::Flag`.
    ("column ai_calls.estimated: integer in SQLite, boolean in PostgreSQL", "a flag"),
    ("column chat_messages.cancel_requested: integer in SQLite, boolean in PostgreSQL", "a flag"),
    ("column lesson_revisions.reviewed: integer in SQLite, boolean in PostgreSQL", "a flag"),
    ("column lessons.review_edits: integer in SQLite, boolean in PostgreSQL", "a flag"),
    ("column users.react_to_events: integer in SQLite, boolean in PostgreSQL", "a flag"),
    ("column users.tell_wrong_answers: integer in SQLite, boolean in PostgreSQL", "a flag"),
    ("column user_identities.email_verified: integer in SQLite, boolean in PostgreSQL", "a flag"),
    ("column safety_flags.from_student: integer in SQLite, boolean in PostgreSQL", "a flag"),
    // Search: an FTS5 table (and the shadow tables SQLite keeps for it) in
    // SQLite; a tsvector column with a GIN index in PostgreSQL (`library`).
    ("table lesson_search: only in SQLite", "full-text search, SQLite's way"),
    ("table lesson_search_config: only in SQLite", "FTS5's own table"),
    ("primary key of lesson_search_config: Some([\"k\"]) in SQLite, None in PostgreSQL", "FTS5's own table"),
    ("table lesson_search_data: only in SQLite", "FTS5's own table"),
    ("primary key of lesson_search_data: Some([\"id\"]) in SQLite, None in PostgreSQL", "FTS5's own table"),
    ("table lesson_search_docsize: only in SQLite", "FTS5's own table"),
    ("primary key of lesson_search_docsize: Some([\"id\"]) in SQLite, None in PostgreSQL", "FTS5's own table"),
    ("table lesson_search_idx: only in SQLite", "FTS5's own table"),
    ("primary key of lesson_search_idx: Some([\"segid\", \"term\"]) in SQLite, None in PostgreSQL", "FTS5's own table"),
    ("column lessons.search_vector: only in PostgreSQL", "full-text search, PostgreSQL's way"),
    ("index on lessons (search_vector): only in PostgreSQL", "full-text search, PostgreSQL's way"),
    // One account per address whatever its case: SQLite's column is
    // `UNIQUE COLLATE NOCASE` (with an index on lower(email) for the lookup
    // both databases share); PostgreSQL's is one unique index on lower(email).
    ("unique index on users (email): only in SQLite", "email unique without case, SQLite's way"),
    ("index on users (<expression>): only in SQLite", "email lookup by lower(email)"),
    ("unique index on users (<expression>): only in PostgreSQL", "email unique without case, PostgreSQL's way"),
];

/// One database's schema, in terms both can be compared in.
#[derive(Debug, Default)]
struct Schema {
    /// table → column → (type, nullable)
    columns: BTreeMap<String, BTreeMap<String, (String, bool)>>,
    /// table → primary key columns, in order
    primary: BTreeMap<String, Vec<String>>,
    /// (table, columns, unique, partial)
    indexes: BTreeSet<(String, Vec<String>, bool, bool)>,
}

/// A column type as both dialects mean it.
fn mapped_type(declared: &str) -> String {
    let t = declared.trim().to_ascii_lowercase();
    let t = t.split('(').next().unwrap_or("").trim().to_string();
    match t.as_str() {
        "text" | "character varying" | "varchar" | "character" | "char" => "text",
        "integer" | "int" | "bigint" | "smallint" | "int4" | "int8" | "int2" => "integer",
        "real" | "double precision" | "float8" | "float4" | "numeric" => "real",
        "blob" | "bytea" => "blob",
        "boolean" | "bool" => "boolean",
        other => return other.to_string(),
    }
    .to_string()
}

async fn sqlite_schema(url: &str) -> Schema {
    let pool = SqlitePoolOptions::new().max_connections(1).connect(url).await.expect("open the SQLite file");
    let mut schema = Schema::default();
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_sqlx%' ORDER BY name",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    for table in tables {
        let mut pk: Vec<(i64, String)> = Vec::new();
        let mut cols = BTreeMap::new();
        for row in sqlx::query(&format!("PRAGMA table_info(\"{table}\")")).fetch_all(&pool).await.unwrap() {
            let name: String = row.get("name");
            let declared: String = row.get("type");
            let notnull: i64 = row.get("notnull");
            let pk_pos: i64 = row.get("pk");
            // SQLite lets a non-integer primary key hold NULL unless it says
            // NOT NULL; PostgreSQL never does. Both refuse NULL in practice
            // here (every id is written by the server), so a key column
            // counts as not null on both sides.
            cols.insert(name.clone(), (mapped_type(&declared), notnull == 0 && pk_pos == 0));
            if pk_pos > 0 {
                pk.push((pk_pos, name));
            }
        }
        pk.sort();
        if !pk.is_empty() {
            schema.primary.insert(table.clone(), pk.into_iter().map(|(_, n)| n).collect());
        }
        for row in sqlx::query(&format!("PRAGMA index_list(\"{table}\")")).fetch_all(&pool).await.unwrap() {
            let name: String = row.get("name");
            let unique: i64 = row.get("unique");
            let origin: String = row.get("origin");
            let partial: i64 = row.get("partial");
            if origin == "pk" {
                continue;
            }
            let mut cols: Vec<(i64, String)> = Vec::new();
            for c in sqlx::query(&format!("PRAGMA index_xinfo(\"{name}\")")).fetch_all(&pool).await.unwrap() {
                let key: i64 = c.get("key");
                if key == 0 {
                    continue;
                }
                let seqno: i64 = c.get("seqno");
                let col: Option<String> = c.get("name");
                cols.push((seqno, col.unwrap_or_else(|| "<expression>".into())));
            }
            cols.sort();
            schema.indexes.insert((table.clone(), cols.into_iter().map(|(_, n)| n).collect(), unique == 1, partial == 1));
        }
        schema.columns.insert(table, cols);
    }
    pool.close().await;
    schema
}

async fn postgres_schema(url: &str) -> Schema {
    let pool = PgPoolOptions::new().max_connections(1).connect(url).await.expect("open the PostgreSQL database");
    let mut schema = Schema::default();
    for row in sqlx::query(
        "SELECT table_name::text AS t, column_name::text AS c, data_type::text AS ty, is_nullable::text AS n
         FROM information_schema.columns
         WHERE table_schema = 'public' AND table_name NOT LIKE '_sqlx%'
         ORDER BY table_name, ordinal_position",
    )
    .fetch_all(&pool)
    .await
    .unwrap()
    {
        let (t, c, ty, n): (String, String, String, String) = (row.get("t"), row.get("c"), row.get("ty"), row.get("n"));
        schema.columns.entry(t).or_default().insert(c, (mapped_type(&ty), n == "YES"));
    }
    // Every index, with its columns in order (an expression shows as
    // `<expression>`), whether it is unique, partial, or the primary key.
    for row in sqlx::query(
        "SELECT t.relname::text AS t, ix.indisunique AS u, ix.indisprimary AS p, ix.indpred IS NOT NULL AS partial,
                ARRAY(SELECT COALESCE(a.attname::text, '<expression>')
                      FROM unnest(ix.indkey::int2[]) WITH ORDINALITY AS k(num, pos)
                      LEFT JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.num AND k.num <> 0
                      ORDER BY k.pos) AS cols
         FROM pg_index ix
         JOIN pg_class t ON t.oid = ix.indrelid
         JOIN pg_namespace s ON s.oid = t.relnamespace
         WHERE s.nspname = 'public' AND t.relname NOT LIKE '_sqlx%'",
    )
    .fetch_all(&pool)
    .await
    .unwrap()
    {
        let (t, unique, primary, partial, cols): (String, bool, bool, bool, Vec<String>) =
            (row.get("t"), row.get("u"), row.get("p"), row.get("partial"), row.get("cols"));
        if primary {
            schema.primary.insert(t, cols);
        } else {
            schema.indexes.insert((t, cols, unique, partial));
        }
    }
    pool.close().await;
    schema
}

/// Every difference, one line each, in a stable order.
fn differences(sqlite: &Schema, postgres: &Schema) -> Vec<String> {
    let mut out = Vec::new();
    let tables: BTreeSet<&String> = sqlite.columns.keys().chain(postgres.columns.keys()).collect();
    for table in tables {
        match (sqlite.columns.get(table), postgres.columns.get(table)) {
            (Some(_), None) => out.push(format!("table {table}: only in SQLite")),
            (None, Some(_)) => out.push(format!("table {table}: only in PostgreSQL")),
            (Some(s), Some(p)) => {
                let names: BTreeSet<&String> = s.keys().chain(p.keys()).collect();
                for col in names {
                    match (s.get(col), p.get(col)) {
                        (Some(_), None) => out.push(format!("column {table}.{col}: only in SQLite")),
                        (None, Some(_)) => out.push(format!("column {table}.{col}: only in PostgreSQL")),
                        (Some((st, sn)), Some((pt, pn))) => {
                            if st != pt {
                                out.push(format!("column {table}.{col}: {st} in SQLite, {pt} in PostgreSQL"));
                            }
                            if sn != pn {
                                let says = |n: bool| if n { "may be empty" } else { "not null" };
                                out.push(format!("column {table}.{col}: {} in SQLite, {} in PostgreSQL", says(*sn), says(*pn)));
                            }
                        }
                        (None, None) => {}
                    }
                }
            }
            (None, None) => {}
        }
        let (sp, pp) = (sqlite.primary.get(table), postgres.primary.get(table));
        if sp != pp {
            out.push(format!("primary key of {table}: {sp:?} in SQLite, {pp:?} in PostgreSQL"));
        }
    }
    let describe = |(t, cols, unique, partial): &(String, Vec<String>, bool, bool)| {
        format!("{}{}index on {t} ({})", if *unique { "unique " } else { "" }, if *partial { "partial " } else { "" }, cols.join(", "))
    };
    for ix in sqlite.indexes.difference(&postgres.indexes) {
        out.push(format!("{}: only in SQLite", describe(ix)));
    }
    for ix in postgres.indexes.difference(&sqlite.indexes) {
        out.push(format!("{}: only in PostgreSQL", describe(ix)));
    }
    out
}

#[tokio::test]
async fn the_sqlite_and_postgresql_schemas_say_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let sqlite_url = format!("sqlite://{}/margin.db", dir.path().display());
    margin::server::db::connect(&sqlite_url).await.expect("migrate SQLite").close().await;

    let pg = common::database::TestDatabase::new_postgres().await;
    margin::server::db::connect(&pg.url).await.expect("migrate PostgreSQL").close().await;

    let sqlite = sqlite_schema(&sqlite_url).await;
    let postgres = postgres_schema(&pg.url).await;
    assert!(sqlite.columns.len() > 10 && postgres.columns.len() > 10, "both databases were migrated");

    let found = differences(&sqlite, &postgres);
    let intended: BTreeSet<&str> = INTENDED.iter().map(|(d, _)| *d).collect();
    let unexpected: Vec<&String> = found.iter().filter(|d| !intended.contains(d.as_str())).collect();
    let gone: Vec<&&str> = intended.iter().filter(|d| !found.iter().any(|f| f == **d)).collect();
    assert!(
        unexpected.is_empty() && gone.is_empty(),
        "the two migration trees disagree:\n  {}\n{}",
        unexpected.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n  "),
        if gone.is_empty() { String::new() } else { format!("listed as intended but no longer found (remove them from INTENDED): {gone:?}") }
    );
}

#[test]
fn a_difference_in_type_nullability_or_index_is_found() {
    let mut a = Schema::default();
    a.columns.entry("t".into()).or_default().insert("c".into(), ("text".into(), false));
    a.indexes.insert(("t".into(), vec!["c".into()], true, false));
    let mut b = Schema::default();
    b.columns.entry("t".into()).or_default().insert("c".into(), ("integer".into(), true));
    b.indexes.insert(("t".into(), vec!["c".into()], false, false));
    let found = differences(&a, &b);
    assert_eq!(
        found,
        vec![
            "column t.c: text in SQLite, integer in PostgreSQL",
            "column t.c: not null in SQLite, may be empty in PostgreSQL",
            "unique index on t (c): only in SQLite",
            "index on t (c): only in PostgreSQL",
        ]
    );
    assert!(differences(&a, &a).is_empty());
}
