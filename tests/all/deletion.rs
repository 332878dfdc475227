//! A person's account deleted (issue #70), on both databases, in two
//! steps: the admin reads what will go, then types the email to delete.
//! A student's answers, chats and flags go and no row of any table names
//! them (every table is walked); the lesson's results count a deleted
//! student; the audit log keeps what happened without them. A teacher's
//! lessons go to the admin, or are deleted, as the admin chose. Only the
//! school's admin can, never another school's; the command line deletes
//! by email only with `--yes`.

use axum::http::StatusCode;
use serde_json::{json, Value};

use crate::common::{
    classes::{ask_tutor, class, student},
    colleague, read_events, start_turn,
    tables::everything,
    Auth, TestApp,
};

/// Every cell of every table that holds `needle`, as "table: row".
async fn naming(app: &TestApp, needles: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    for (table, rows) in everything(&app.state.db).await {
        for row in rows {
            if needles.iter().any(|n| row.to_lowercase().contains(&n.to_lowercase())) {
                found.push(format!("{table}: {row}"));
            }
        }
    }
    found
}

async fn reply(app: &TestApp, token: &str, chat: &str, content: &str) {
    let mut body = start_turn(app, token, chat, content).await.into_body();
    let events = read_events(&mut body, &mut margin::chat::sse::SseParser::new(), usize::MAX).await;
    assert_eq!(events.last().map(|e| e.event.as_str()), Some("done"), "{events:?}");
}

/// A teacher of the school with a lesson of their own, edited by the
/// assistant in a chat, in a class: (token, id, lesson, class join code).
async fn teacher_at_work(app: &TestApp, admin: &str, email: &str) -> (String, String, String, String) {
    let token = colleague(app, admin, email).await;
    let id = app.user_id(&token).await;
    let lesson = margin::server::lessons::create(&app.state.db, &id, &format!("Lesson of {}", email.split('@').next().unwrap())).await.unwrap().id;
    crate::common::classes::save_xml(app, &token, &lesson, crate::common::classes::LESSON).await;
    let chat = app.post_json(&format!("/api/lessons/{lesson}/chats"), Auth::Bearer(&token), json!({})).await.json()["id"].as_str().unwrap().to_string();
    reply(app, &token, &chat, "Add a fill-in-the-blank exercise about French verbs").await;
    let c = app.post_json("/api/classes", Auth::Bearer(&token), json!({"name": "Year 8"})).await.json();
    let (class, code) = (c["id"].as_str().unwrap().to_string(), c["joinCode"].as_str().unwrap().to_string());
    app.send_json(axum::http::Method::PUT, &format!("/api/classes/{class}/lessons/{lesson}"), Auth::Bearer(&token), json!({})).await;
    assert_eq!(app.post_json(&format!("/api/lessons/{lesson}/publish"), Auth::Bearer(&token), json!({})).await.status, StatusCode::OK);
    (token, id, lesson, code)
}

async fn answer(app: &TestApp, token: &str, lesson: &str, b1: &str) {
    let r = app.put_json(&format!("/api/learn/lessons/{lesson}/answers"), Auth::Bearer(token), json!({"seen": 0, "answers": {"b1": b1}})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(app.post_json(&format!("/api/learn/lessons/{lesson}/check"), Auth::Bearer(token), json!({})).await.status, StatusCode::OK);
}

async fn delete(app: &TestApp, admin: &str, id: &str, body: Value) -> crate::common::Reply {
    app.post_json(&format!("/api/school/members/{id}/delete"), Auth::Bearer(admin), body).await
}

#[tokio::test]
async fn deleting_a_student_leaves_no_row_naming_them_and_only_their_schools_admin_can() {
    let app = crate::common::app().await;
    let c = class(&app, "admin@a.org").await;
    let pupil = student(&app, "pupil@a.org", &c.code).await;
    let other = student(&app, "other@a.org", &c.code).await;
    let teacher = colleague(&app, &c.teacher, "teacher@a.org").await;
    let hostile = app.sign_up("admin@b.org").await;
    let id = app.user_id(&pupil).await;
    answer(&app, &pupil, &c.lesson, "serai-by-pupil").await;
    answer(&app, &other, &c.lesson, "es").await;
    let chat = app.post_json(&format!("/api/lessons/{}/chats", c.lesson), Auth::Bearer(&pupil), json!({})).await.json()["id"].as_str().unwrap().to_string();
    assert_eq!(ask_tutor(&app, &pupil, &chat, "Explain this lesson, please", true).await.status, StatusCode::OK);
    assert_eq!(ask_tutor(&app, &pupil, &chat, "my password is tulip42", true).await.status, StatusCode::OK);
    let flags = app.get("/api/flags", Auth::Bearer(&c.teacher)).await.json();
    let flag = flags[0]["id"].as_str().unwrap();
    assert_eq!(app.post_json(&format!("/api/flags/{flag}/acknowledge"), Auth::Bearer(&c.teacher), json!({})).await.status, StatusCode::NO_CONTENT);
    assert!(!naming(&app, &[&id, "pupil@a.org"]).await.is_empty());

    // Step one: what goes, in a sentence; nobody else may ask.
    let preview = app.get(&format!("/api/school/members/{id}/deletion"), Auth::Bearer(&c.teacher)).await;
    assert_eq!(preview.status, StatusCode::OK, "{}", preview.body);
    let sentence = preview.json()["toAdmin"].as_str().unwrap().to_string();
    assert!(sentence.contains("pupil@a.org") && sentence.contains("1 lesson (1 answer)") && sentence.contains("1 chat with the tutor") && sentence.contains("1 flag"), "{sentence}");
    for (token, want) in [(&teacher, StatusCode::FORBIDDEN), (&other, StatusCode::FORBIDDEN), (&hostile, StatusCode::NOT_FOUND)] {
        assert_eq!(app.get(&format!("/api/school/members/{id}/deletion"), Auth::Bearer(token)).await.status, want);
        assert_eq!(delete(&app, token, &id, json!({"confirm": "pupil@a.org"})).await.status, want);
    }
    let admin_id = app.user_id(&c.teacher).await;
    let r = app.get(&format!("/api/school/members/{admin_id}/deletion"), Auth::Bearer(&c.teacher)).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "the school keeps its admin");
    let page = app.get(&format!("/school/members/{id}/delete"), Auth::Cookie(&c.teacher)).await;
    assert!(page.body.contains("Type pupil@a.org to confirm") && page.body.contains("1 chat with the tutor"), "{}", page.body);

    // Step two: the email typed again, or nothing happens.
    assert_eq!(delete(&app, &c.teacher, &id, json!({"confirm": "other@a.org"})).await.status, StatusCode::BAD_REQUEST);
    let r = app.post_form(&format!("/school/members/{id}/delete"), Auth::Cookie(&c.teacher), &[("confirm", "nope")]).await;
    assert_eq!(r.location(), format!("/school/members/{id}/delete?error=confirm"));
    let r = app.post_form(&format!("/school/members/{id}/delete"), Auth::Cookie(&c.teacher), &[("confirm", " PUPIL@a.org ")]).await;
    assert_eq!((r.status, r.location()), (StatusCode::SEE_OTHER, "/school?done=deleted"), "{}", r.body);

    // No row of any table names them; their words are gone too.
    let left = naming(&app, &[&id, "pupil@a.org", "serai-by-pupil", "tulip42", "Explain this lesson"]).await;
    assert!(left.is_empty(), "{left:#?}");
    assert_eq!(app.get("/api/auth/me", Auth::Bearer(&pupil)).await.status, StatusCode::UNAUTHORIZED, "their sessions went with them");
    // The other student's work stays; the results count a deleted student.
    assert!(!naming(&app, &["other@a.org"]).await.is_empty());
    let results = app.get(&format!("/lessons/{}/results", c.lesson), Auth::Cookie(&c.teacher)).await;
    assert!(results.body.contains("1 deleted student") && results.body.contains("other@a.org"), "{}", results.body);
    // The audit log keeps what happened, without who.
    let log = app.get("/api/school/audit", Auth::Bearer(&c.teacher)).await.json();
    let theirs: Vec<&Value> = log.as_array().unwrap().iter().filter(|e| e["actor"] == "student").collect();
    assert_eq!(theirs.len(), 3, "{log:#}");
    assert!(theirs.iter().all(|e| e["personId"].is_null()));
    assert!(app.get("/api/school/audit?format=csv", Auth::Bearer(&c.teacher)).await.body.contains("(deleted)"));
    // Gone is gone: a second deletion finds nobody.
    assert_eq!(delete(&app, &c.teacher, &id, json!({"confirm": "pupil@a.org"})).await.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_deleted_teachers_lessons_go_to_the_admin_or_are_deleted_as_the_admin_chose() {
    let app = crate::common::app().await;
    let admin = app.sign_up("admin@a.org").await;
    let (kept_token, kept_id, kept_lesson, kept_code) = teacher_at_work(&app, &admin, "kept@a.org").await;
    let (gone_token, gone_id, gone_lesson, gone_code) = teacher_at_work(&app, &admin, "gone@a.org").await;
    let s1 = student(&app, "s1@a.org", &kept_code).await;
    let s2 = student(&app, "s2@a.org", &gone_code).await;
    answer(&app, &s1, &kept_lesson, "serai").await;
    answer(&app, &s2, &gone_lesson, "serai").await;

    // A teacher's choice is in the preview: both sentences.
    let p = app.get(&format!("/api/school/members/{kept_id}/deletion"), Auth::Bearer(&admin)).await.json();
    assert!(p["toAdmin"].as_str().unwrap().contains("1 lesson and 1 class go to you (admin@a.org)"), "{p}");
    assert!(p["deleteAll"].as_str().unwrap().contains("are deleted too"), "{p}");
    let page = app.get(&format!("/school/members/{kept_id}/delete"), Auth::Cookie(&admin)).await;
    assert!(page.body.contains(r#"value="admin""#) && page.body.contains(r#"value="delete""#), "{}", page.body);
    assert_eq!(delete(&app, &admin, &kept_id, json!({"confirm": "kept@a.org", "lessons": "maybe"})).await.status, StatusCode::BAD_REQUEST);

    // Kept: the lesson, its class and its students' answers are the admin's now.
    let r = delete(&app, &admin, &kept_id, json!({"confirm": "kept@a.org", "lessons": "admin"})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(app.get(&format!("/api/lessons/{kept_lesson}"), Auth::Bearer(&admin)).await.status, StatusCode::OK);
    let results = app.get(&format!("/lessons/{kept_lesson}/results"), Auth::Cookie(&admin)).await;
    assert!(results.body.contains("s1@a.org"), "{}", results.body);
    let found = app.get("/api/lessons?q=kept", Auth::Bearer(&admin)).await;
    assert!(found.body.contains(&kept_lesson), "the admin's search finds the lesson handed over: {}", found.body);
    let classes = app.get("/api/classes", Auth::Bearer(&admin)).await.body;
    assert!(classes.contains("Year 8"), "{classes}");
    let left = naming(&app, &[&kept_id, "kept@a.org"]).await;
    assert!(left.is_empty(), "{left:#?}");
    assert_eq!(app.get("/api/auth/me", Auth::Bearer(&kept_token)).await.status, StatusCode::UNAUTHORIZED);

    // Deleted, from the command line: nothing without --yes, then all of it.
    let margin = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_margin"))
            .args(args)
            .env("DATABASE_URL", &app.database.url)
            .env("RUST_LOG", "warn")
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap()
    };
    let out = margin(&["delete", "--email", "gone@a.org", "--lessons", "delete"]);
    let said = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success() && said.contains("are deleted too") && said.contains("Nothing was deleted"), "{said}{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(app.get(&format!("/api/lessons/{gone_lesson}"), Auth::Bearer(&gone_token)).await.status, StatusCode::OK);
    let out = margin(&["delete", "--email", "gone@a.org", "--lessons", "delete", "--yes"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // Nothing of theirs, the search index's copy of their lesson included.
    let left = naming(&app, &[&gone_id, "gone@a.org", "Lesson of gone"]).await;
    assert!(left.is_empty(), "{left:#?}");
    // The lesson is gone with everything in it; the audit log keeps that a
    // reply edited it (its id, without whose it was).
    let left = naming(&app, &[&gone_lesson]).await;
    assert!(!left.is_empty() && left.iter().all(|row| row.starts_with("audit_events: ")), "{left:#?}");
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM student_answers WHERE lesson_id = $1").bind(&kept_lesson).fetch_one(&app.state.db).await.unwrap();
    assert_eq!(n, 1, "the kept lesson's answers stay");
    let out = margin(&["delete", "--email", "admin@a.org", "--yes"]);
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("keeps its admin"));
}
