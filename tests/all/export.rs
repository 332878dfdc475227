//! A person's data exported (issue #70), on both databases: the school's
//! admin downloads one student's answers, approved feedback and tutor
//! chats, and one teacher's lessons, versions, material and chats, and
//! nothing of anyone else; a teacher, a student and a hostile school's
//! admin cannot; the command line exports by email.

use std::io::{Cursor, Read};

use axum::http::{Method, StatusCode};
use serde_json::json;

use crate::common::{colleague, classes::{ask_tutor, save_xml, student, LESSON}, Auth, TestApp};

/// Every file in a zip, with its text.
fn files(bytes: &[u8]) -> Vec<(String, String)> {
    let mut zip = zip::ZipArchive::new(Cursor::new(bytes)).expect("a zip");
    (0..zip.len())
        .map(|i| {
            let mut f = zip.by_index(i).unwrap();
            let mut text = String::new();
            f.read_to_string(&mut text).unwrap();
            (f.name().to_string(), text)
        })
        .collect()
}

async fn export(app: &TestApp, token: &str, id: &str) -> (StatusCode, Vec<u8>) {
    let (status, _, bytes) = app.get_bytes(&format!("/api/school/members/{id}/export"), Auth::Bearer(token)).await;
    (status, bytes)
}

#[tokio::test]
async fn the_admin_exports_one_persons_data_and_nobody_elses() {
    let app = crate::common::app().await;
    let admin = app.sign_up("admin@a.org").await;
    let teacher = colleague(&app, &admin, "teacher@a.org").await;
    let owner = app.user_id(&teacher).await;
    let lesson = margin::server::lessons::create(&app.state.db, &owner, "Être").await.unwrap().id;
    save_xml(&app, &teacher, &lesson, LESSON).await;
    let material = crate::common::upload(&app, &format!("/api/lessons/{lesson}/sources"), Auth::Bearer(&teacher), &[("notes.txt", "Être means to be.".as_bytes())]).await;
    assert!(material.status.is_success(), "{}", material.body);
    let c = app.post_json("/api/classes", Auth::Bearer(&teacher), json!({"name": "Year 7"})).await.json();
    let (class, code) = (c["id"].as_str().unwrap().to_string(), c["joinCode"].as_str().unwrap().to_string());
    app.send_json(Method::PUT, &format!("/api/classes/{class}/lessons/{lesson}"), Auth::Bearer(&teacher), json!({})).await;
    app.post_json(&format!("/api/lessons/{lesson}/publish"), Auth::Bearer(&teacher), json!({})).await;
    let (s1, s2) = (student(&app, "one@a.org", &code).await, student(&app, "two@a.org", &code).await);
    app.put_json(&format!("/api/learn/lessons/{lesson}/answers"), Auth::Bearer(&s1), json!({"seen": 0, "answers": {"b1": "serai-by-one"}})).await;
    app.put_json(&format!("/api/learn/lessons/{lesson}/answers"), Auth::Bearer(&s2), json!({"seen": 0, "answers": {"b1": "answer-of-two"}})).await;
    let chat = app.post_json(&format!("/api/lessons/{lesson}/chats"), Auth::Bearer(&s1), json!({})).await.json()["id"].as_str().unwrap().to_string();
    let r = ask_tutor(&app, &s1, &chat, "Explain this lesson, please", true).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let hostile = app.sign_up("admin@b.org").await;

    // A student: their answers and their chat, nothing of the other student's.
    let one = app.user_id(&s1).await;
    let (status, bytes) = export(&app, &admin, &one).await;
    assert_eq!(status, StatusCode::OK);
    let got = files(&bytes);
    let names: Vec<&str> = got.iter().map(|(n, _)| n.as_str()).collect();
    assert!(names.contains(&"person.json") && names.contains(&"README.txt"), "{names:?}");
    let all: String = got.iter().map(|(n, t)| format!("== {n}\n{t}\n")).collect();
    assert!(all.contains("one@a.org") && all.contains("serai-by-one"), "{all}");
    assert!(all.contains("Explain this lesson, please") && names.iter().any(|n| n.starts_with("chats/") && n.ends_with(".md")), "{names:?}");
    assert!(!all.contains("answer-of-two") && !all.contains("two@a.org"), "another student's data: {all}");
    assert!(!all.contains("Secret: spend ten minutes"), "no teacher's note in a student's export");

    // A teacher: their lessons, every version, the material's text, their chats.
    let (status, bytes) = export(&app, &admin, &owner).await;
    assert_eq!(status, StatusCode::OK);
    let got = files(&bytes);
    let names: Vec<&str> = got.iter().map(|(n, _)| n.as_str()).collect();
    assert!(names.iter().any(|n| n.ends_with("/lesson.xml")) && names.iter().any(|n| n.contains("/versions/2.xml")), "{names:?}");
    assert!(got.iter().any(|(n, t)| n.contains("/material/") && t.contains("Être means to be.")), "{names:?}");
    let all: String = got.iter().map(|(_, t)| t.as_str()).collect();
    assert!(!all.contains("serai-by-one"), "a student's answers are the student's export");

    // Nobody but the school's admin, and never another school's member.
    assert_eq!(export(&app, &teacher, &one).await.0, StatusCode::FORBIDDEN);
    assert_eq!(export(&app, &s1, &one).await.0, StatusCode::FORBIDDEN);
    assert_eq!(export(&app, &hostile, &one).await.0, StatusCode::NOT_FOUND);
    let theirs = app.user_id(&hostile).await;
    assert_eq!(export(&app, &admin, &theirs).await.0, StatusCode::NOT_FOUND);

    // The command line, by email.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("one.zip");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_margin"))
        .args(["export", "--email", "one@a.org", file.to_str().unwrap()])
        .env("DATABASE_URL", &app.database.url)
        .env("RUST_LOG", "warn")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let got = files(&std::fs::read(&file).unwrap());
    assert!(got.iter().any(|(_, t)| t.contains("serai-by-one")));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_margin"))
        .args(["export", "--email", "nobody@a.org", dir.path().join("x.zip").to_str().unwrap()])
        .env("DATABASE_URL", &app.database.url)
        .env("RUST_LOG", "warn")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("No account"));
    let _ = teacher;
}
