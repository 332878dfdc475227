//! `margin backup` and `margin restore` (issue #70), on the run's own
//! backend: a school's work backed up while the server has it open,
//! restored into a new database, every table compared row for row, the
//! restored school serving its teacher; neither command ever overwrites.

use std::process::{Command, Output};

use crate::common::{self, app, tables::everything};

/// Runs `margin <args>` against the database at `url`.
fn margin(url: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_margin"))
        .args(args)
        .env("DATABASE_URL", url)
        .env("RUST_LOG", "warn")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap()
}

fn said(out: &Output) -> String {
    format!("{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

#[tokio::test]
async fn a_backup_taken_while_the_server_runs_restores_every_row_and_neither_command_overwrites() {
    // A school's work: a lesson with versions, a reply, material, a class with a student's answers.
    let app = app().await;
    let t = common::classes::school_at_work(&app, "backup@x.org").await;

    // On PostgreSQL the reply's events are also stored for other instances,
    // a moment after its end: the backup is taken once they are (a row
    // written after it is rightly not in it).
    if common::database::postgres() {
        common::server::until_at_least(&app.state.db, r#"SELECT COUNT(*) FROM turn_events WHERE entries LIKE '%"e":"done"%'"#, 1).await;
    }
    // Backed up while the app still holds the database open.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("margin.backup");
    let file_arg = file.to_str().unwrap();
    let out = margin(&app.database.url, &["backup", file_arg]);
    assert!(out.status.success(), "{}", said(&out));
    assert!(said(&out).contains("lesson_revisions"), "each table's rows are said: {}", said(&out));
    let written = std::fs::metadata(&file).unwrap().len();
    let again = margin(&app.database.url, &["backup", file_arg]);
    assert!(!again.status.success() && said(&again).contains("already exists"), "{}", said(&again));
    assert_eq!(std::fs::metadata(&file).unwrap().len(), written, "the backup was not overwritten");

    // Restored into a new database: every table, row for row.
    let target = common::database::TestDatabase::new(dir.path()).await;
    let out = margin(&target.url, &["restore", file_arg]);
    assert!(out.status.success(), "{}", said(&out));
    let restored = margin::server::db::connect(&target.url).await.unwrap();
    let (before, after) = (everything(&app.state.db).await, everything(&restored).await);
    assert!(before.len() > 15, "{} tables", before.len());
    for table in ["users", "lessons", "lesson_revisions", "chat_messages", "lesson_sources", "classes", "student_answers"] {
        assert!(after.iter().any(|(t, rows)| t == table && !rows.is_empty()), "{table} came back with rows");
    }
    assert_eq!(before.iter().map(|(t, _)| t).collect::<Vec<_>>(), after.iter().map(|(t, _)| t).collect::<Vec<_>>());
    for ((table, a), (_, b)) in before.iter().zip(&after) {
        assert_eq!(a, b, "{table} differs after the restore");
    }
    restored.close().await;

    // The restored school serves its teacher.
    let served = tempfile::tempdir().unwrap();
    let server = common::server::Server::start(&target.url, served.path(), &[]).await;
    let lesson = server.get_json(&format!("/api/lessons/{}", t.lesson_id), &t.token).await;
    assert_eq!(lesson["revision"], 2, "{lesson}");
    drop(server);

    // A restore never overwrites a database that is there.
    let restored = margin::server::db::connect(&target.url).await.unwrap();
    let full = everything(&restored).await;
    let again = margin(&target.url, &["restore", file_arg]);
    assert!(!again.status.success(), "{}", said(&again));
    assert!(said(&again).contains("already"), "{}", said(&again));
    assert_eq!(everything(&restored).await, full);
    // Nor is anything but a backup restored.
    let junk = dir.path().join("junk.backup");
    std::fs::write(&junk, b"not a database").unwrap();
    let elsewhere = common::database::TestDatabase::new(&dir.path().join("other")).await;
    let out = margin(&elsewhere.url, &["restore", junk.to_str().unwrap()]);
    assert!(!out.status.success(), "{}", said(&out));
}
