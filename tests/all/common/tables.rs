//! Every table of a test's database as text, row by row: for the tests
//! that compare two databases (`backup`) or look for what must be gone
//! (`deletion`).

use sqlx::{any::AnyRow, Column, Row};

/// A value as text, whatever its type (both sides are read the same way).
fn cell(row: &AnyRow, i: usize) -> String {
    if let Ok(v) = row.try_get::<Option<String>, _>(i) {
        return format!("{v:?}");
    }
    if let Ok(v) = row.try_get::<Option<i64>, _>(i) {
        return format!("{v:?}");
    }
    if let Ok(v) = row.try_get::<Option<f64>, _>(i) {
        return format!("{v:?}");
    }
    if let Ok(v) = row.try_get::<Option<bool>, _>(i) {
        return format!("{v:?}");
    }
    if let Ok(v) = row.try_get::<Option<Vec<u8>>, _>(i) {
        return format!("{v:?}");
    }
    panic!("column {} could not be read", row.columns()[i].name())
}

/// Every table (but the migrations' bookkeeping) with its rows, each row
/// as text, sorted.
pub async fn everything(db: &margin::server::db::Db) -> Vec<(String, Vec<String>)> {
    let postgres = super::database::postgres();
    let tables: Vec<String> = if postgres {
        sqlx::query_scalar("SELECT table_name::TEXT FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name <> '_sqlx_migrations' ORDER BY 1")
            .fetch_all(db)
            .await
            .unwrap()
    } else {
        sqlx::query_scalar("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> '_sqlx_migrations' ORDER BY name").fetch_all(db).await.unwrap()
    };
    let mut out = Vec::new();
    for table in tables {
        // The columns PostgreSQL computes itself (the search vector) are not data.
        let columns: Vec<String> = if postgres {
            sqlx::query_scalar("SELECT column_name::TEXT FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 AND is_generated = 'NEVER' ORDER BY ordinal_position")
                .bind(&table)
                .fetch_all(db)
                .await
                .unwrap()
        } else {
            vec!["*".to_string()]
        };
        let rows = sqlx::query(&format!("SELECT {} FROM {table}", columns.join(", "))).fetch_all(db).await.unwrap();
        let mut rows: Vec<String> = rows.iter().map(|r| (0..r.columns().len()).map(|i| cell(r, i)).collect::<Vec<_>>().join(" | ")).collect();
        rows.sort();
        out.push((table, rows));
    }
    out
}

