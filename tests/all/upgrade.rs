//! A SQLite database made before PostgreSQL support (migrations 0001–0006,
//! when they lived in `migrations/`) opens with the current server: the
//! moved migrations keep their checksums, the new ones are applied, and the
//! teacher's lesson is still there. (SQLite only, in both passes: it is
//! about files people already have.)
#![cfg(feature = "ssr")]

use sqlx::{migrate::Migrator, sqlite::SqlitePoolOptions};

#[tokio::test]
async fn a_database_from_before_postgresql_support_opens_and_keeps_its_lessons() {
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("old-migrations");
    std::fs::create_dir(&old).unwrap();
    for name in [
        "0001_accounts_and_lessons.sql",
        "0002_chat.sql",
        "0003_reasoning.sql",
        "0004_proposals.sql",
        "0005_lesson_trash.sql",
        "0006_lesson_search_text.sql",
    ] {
        std::fs::copy(format!("{}/migrations/sqlite/{name}", env!("CARGO_MANIFEST_DIR")), old.join(name)).unwrap();
    }
    let url = format!("sqlite://{}/margin.db?mode=rwc", dir.path().display());
    let before = SqlitePoolOptions::new().connect(&url).await.unwrap();
    Migrator::new(old.as_path()).await.unwrap().run(&before).await.unwrap();
    sqlx::query("INSERT INTO users (id, email, password_hash, created_at) VALUES ('u1', 'Old@School.org', 'x', '2026-01-01T00:00:00.000Z')")
        .execute(&before)
        .await
        .unwrap();
    sqlx::query("INSERT INTO users (id, email, password_hash, created_at) VALUES ('u2', 'later@school.org', 'x', '2026-02-01T00:00:00.000Z')")
        .execute(&before)
        .await
        .unwrap();
    sqlx::query("INSERT INTO lessons (id, owner_id, title, document_xml) VALUES ('l1', 'u1', 'Kept', '<lesson><p>Old words.</p></lesson>')")
        .execute(&before)
        .await
        .unwrap();
    before.close().await;

    let db = margin::server::db::connect(&format!("sqlite://{}/margin.db", dir.path().display())).await.expect("the old database opens");
    let lesson = margin::server::lessons::get_editable(&db, "u1", "l1").await.unwrap();
    assert_eq!(lesson.title, "Kept");
    let applied: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM _sqlx_migrations WHERE success").fetch_one(&db).await.unwrap();
    assert_eq!(applied, std::fs::read_dir(format!("{}/migrations/sqlite", env!("CARGO_MANIFEST_DIR"))).unwrap().count() as i64);
    // The email is found whatever its case, as before (now by `lower(email)`).
    let found: Option<String> = sqlx::query_scalar("SELECT id FROM users WHERE lower(email) = lower($1)").bind("old@school.org").fetch_optional(&db).await.unwrap();
    assert_eq!(found.as_deref(), Some("u1"));
    // The accounts there were become one school, run by the oldest.
    let members: Vec<(String, String, String)> =
        sqlx::query_as("SELECT id, school_id, role FROM users ORDER BY id").fetch_all(&db).await.unwrap();
    assert_eq!(members[0].1, members[1].1);
    assert_eq!((members[0].2.as_str(), members[1].2.as_str()), ("admin", "teacher"));
    let schools: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM schools").fetch_one(&db).await.unwrap();
    assert_eq!(schools, 1);
}
