//! The audit log of AI actions (issue #70), on both databases: a teacher's
//! reply that edits, one whose edit is held and then applied, a tool
//! refused, a student's turn with the tutor, an automatic turn, a flag and
//! a refusal are each kept, with who, the lesson, the model, the tokens and
//! what each tool changed, never the words of a message; the school's
//! admin reads, narrows and downloads them, and nobody else does (a
//! teacher, a student, a hostile school's admin); entries older than the
//! school keeps them are swept, and nothing newer.

use axum::http::{Method, StatusCode};
use margin::{
    chat::sse::SseParser,
    server::{config::Config, ops::retention, reactions::gate::DEBOUNCE_MS},
};
use serde_json::{json, Value};
use time::OffsetDateTime;

use crate::common::{
    app_with,
    classes::{ask_tutor, class, student},
    colleague, read_events, start_turn,
    waits::{advance, until},
    Auth, TestApp,
};

/// A teacher's message in their chat, read to the reply's end.
async fn reply(app: &TestApp, token: &str, chat: &str, content: &str) {
    let mut body = start_turn(app, token, chat, content).await.into_body();
    let events = read_events(&mut body, &mut SseParser::new(), usize::MAX).await;
    assert_eq!(events.last().map(|e| e.event.as_str()), Some("done"), "{events:?}");
}

async fn log(app: &TestApp, token: &str, query: &str) -> Vec<Value> {
    let r = app.get(&format!("/api/school/audit{query}"), Auth::Bearer(token)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    r.json().as_array().unwrap().clone()
}

const ENTRIES: &str = "SELECT COUNT(*) FROM audit_events";

#[tokio::test]
async fn the_audit_log_keeps_what_the_ai_did_for_the_schools_admin_and_nobody_else() {
    let app = app_with(Config { approval_wait_secs: 1, ..Config::default() }).await;
    let c = class(&app, "admin@a.org").await;
    let pupil = student(&app, "pupil@a.org", &c.code).await;
    let colleague = colleague(&app, &c.teacher, "teacher@a.org").await;
    let hostile = class(&app, "admin@b.org").await;
    reply(&app, &hostile.teacher, &hostile.chat, "Add a fill-in-the-blank exercise about French verbs").await;

    // A reply that edits: saved as a revision.
    reply(&app, &c.teacher, &c.chat, "Add a fill-in-the-blank exercise about French verbs").await;
    // With review on, a reply whose edit is held; the teacher applies it.
    let r = app.put_json(&format!("/api/lessons/{}/review", c.lesson), Auth::Bearer(&c.teacher), json!({"reviewEdits": true})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    reply(&app, &c.teacher, &c.chat, "Add a fill-in-the-blank exercise about French verbs").await;
    let held = log(&app, &c.teacher, "").await;
    let edit = held[0]["tools"].as_array().unwrap().iter().find(|t| t["proposal"].is_string()).expect("a held edit");
    assert_eq!(edit["decision"], "pending");
    let proposal = edit["proposal"].as_str().unwrap().to_string();
    let applied = app.decide(&format!("/api/proposals/{proposal}/apply"), Auth::Bearer(&c.teacher), json!({})).await;
    assert_eq!(applied.status, StatusCode::OK, "{}", applied.body);
    // A tool outside the assistant's set: refused.
    reply(&app, &c.teacher, &c.chat, "call an unknown tool").await;
    // A student's turn with the tutor, and a message that raises a flag.
    let chat = app.post_json(&format!("/api/lessons/{}/chats", c.lesson), Auth::Bearer(&pupil), json!({})).await.json()["id"].as_str().unwrap().to_string();
    assert_eq!(ask_tutor(&app, &pupil, &chat, "Explain this lesson, please", true).await.status, StatusCode::OK);
    assert_eq!(ask_tutor(&app, &pupil, &chat, "my password is tulip42, can you remember it", true).await.status, StatusCode::OK);
    // An automatic turn: the class's wrong answers, told to the assistant.
    let r = app.send_json(Method::PATCH, "/api/account/reactions", Auth::Bearer(&c.teacher), json!({"tellWrongAnswers": true})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let base = format!("/api/learn/lessons/{}", c.lesson);
    let seen = app.get(&base, Auth::Bearer(&pupil)).await.json()["seen"].as_i64().unwrap();
    let r = app.put_json(&format!("{base}/answers"), Auth::Bearer(&pupil), json!({"seen": seen, "answers": {"b1": "es"}})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(app.post_json(&format!("{base}/check"), Auth::Bearer(&pupil), json!({})).await.status, StatusCode::OK);
    let before: i64 = sqlx::query_scalar(ENTRIES).fetch_one(&app.state.db).await.unwrap();
    advance(&app, DEBOUNCE_MS);
    until(&app, ENTRIES, before + 1).await;
    // The tutor turned off: the student is refused, and that is kept.
    let r = app.put_json(&format!("/api/lessons/{}/tutor", c.lesson), Auth::Bearer(&c.teacher), json!({"policy": "off"})).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.body);
    assert_eq!(ask_tutor(&app, &pupil, &chat, "Explain this lesson, please", true).await.status, StatusCode::FORBIDDEN);

    let all = log(&app, &c.teacher, "").await;
    let what: Vec<(&str, &str, &str)> = all.iter().rev().map(|e| (e["action"].as_str().unwrap(), e["actor"].as_str().unwrap(), e["outcome"].as_str().unwrap())).collect();
    assert_eq!(
        what,
        [
            ("reply", "teacher", "complete"),
            ("reply", "teacher", "complete"),
            ("reply", "teacher", "complete"),
            ("reply", "student", "complete"),
            ("flag", "student", "personal"),
            ("reply", "student", "complete"),
            ("reply", "automatic", "complete"),
            ("refusal", "student", "tutor_off"),
        ],
        "{all:#?}"
    );
    let oldest = &all[all.len() - 1];
    assert_eq!(oldest["personEmail"], "admin@a.org");
    assert_eq!(oldest["lessonId"], c.lesson.as_str());
    assert_eq!(oldest["lessonTitle"], "Verbs");
    assert!(!oldest["model"].as_str().unwrap().is_empty() && oldest["tokens"].as_i64().unwrap() > 0, "{oldest}");
    let edit = oldest["tools"].as_array().unwrap().iter().find(|t| t["tool"] == "edit_document").expect("the edit");
    assert_eq!((edit["status"].as_str(), edit["revision"].as_i64()), (Some("success"), Some(3)), "{oldest}");
    let held = all[all.len() - 2]["tools"].as_array().unwrap().iter().find(|t| t["tool"] == "edit_document").cloned().unwrap();
    assert_eq!((held["status"].as_str(), held["decision"].as_str(), held["appliedRevision"].as_i64()), (Some("proposed"), Some("applied"), Some(4)), "{held}");
    let refused = &all[all.len() - 3];
    assert!(refused["tools"].as_array().unwrap().iter().any(|t| t["refused"] == true), "{refused}");
    assert_eq!(all[all.len() - 4]["personEmail"], "pupil@a.org");

    // Never the words of a message, the student's or the teacher's.
    let raw = app.get("/api/school/audit?format=csv", Auth::Bearer(&c.teacher)).await;
    assert_eq!(raw.status, StatusCode::OK);
    let (_, headers, _) = app.get_bytes("/api/school/audit?format=csv", Auth::Bearer(&c.teacher)).await;
    assert_eq!(headers["cache-control"], "no-store");
    assert!(headers["content-disposition"].to_str().unwrap().starts_with("attachment; filename=\"margin-audit-"), "{headers:?}");
    let stored: Vec<(String,)> = sqlx::query_as("SELECT detail FROM audit_events").fetch_all(&app.state.db).await.unwrap();
    for text in [raw.body.clone(), serde_json::to_string(&all).unwrap(), format!("{stored:?}")] {
        for words in ["tulip42", "password", "Explain this lesson", "fill-in-the-blank"] {
            assert!(!text.contains(words), "{words} in {text}");
        }
    }
    // The CSV: a header and a row an entry.
    let lines: Vec<&str> = raw.body.lines().collect();
    assert_eq!(lines[0], "at,action,actor,person,person_id,lesson,lesson_id,model,tokens,outcome,tools");
    assert_eq!(lines.len(), 1 + all.len());
    assert!(raw.body.contains("edit_document proposed p=") && raw.body.contains(" applied r4"), "{}", raw.body);

    // Narrowed: a person, a lesson, days; a day that is not one is refused.
    let theirs = log(&app, &c.teacher, "?person=PUPIL@a.org").await;
    assert_eq!(theirs.len(), 4);
    assert!(theirs.iter().all(|e| e["personEmail"] == "pupil@a.org"));
    assert_eq!(log(&app, &c.teacher, &format!("?lesson={}", c.lesson)).await.len(), all.len());
    assert_eq!(log(&app, &c.teacher, "?lesson=nope").await.len(), 0);
    let today = OffsetDateTime::now_utc().date().to_string();
    assert_eq!(log(&app, &c.teacher, &format!("?from={today}&to={today}")).await.len(), all.len());
    assert_eq!(log(&app, &c.teacher, "?from=2099-01-01").await.len(), 0);
    assert_eq!(app.get("/api/school/audit?from=yesterday", Auth::Bearer(&c.teacher)).await.status, StatusCode::BAD_REQUEST);

    // The admin's page lists them; nobody else reads the log.
    let page = app.get("/school/audit?person=pupil%40a.org", Auth::Cookie(&c.teacher)).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.body.contains("What the AI did") && page.body.contains("Flag: Personal data shared") && page.body.contains("Download CSV"), "{}", page.body);
    assert!(!page.body.contains("Teacher: admin@a.org"), "narrowed to the pupil");
    assert!(page.body.contains("/api/school/audit?format=csv&amp;person=pupil%40a.org"), "the download keeps the filter: {}", page.body);
    assert_eq!(app.get("/api/school/audit", Auth::Bearer(&colleague)).await.status, StatusCode::FORBIDDEN);
    assert_eq!(app.get("/api/school/audit", Auth::Bearer(&pupil)).await.status, StatusCode::FORBIDDEN);
    let page = app.get("/school/audit", Auth::Cookie(&colleague)).await;
    assert!(!page.body.contains("admin@a.org") && !page.body.contains("pupil@a.org"), "{}", page.body);
    let theirs = log(&app, &hostile.teacher, "").await;
    assert_eq!(theirs.len(), 1, "the hostile school's own reply only");
    assert_eq!(theirs[0]["personEmail"], "admin@b.org");
    assert_eq!(log(&app, &hostile.teacher, &format!("?lesson={}", c.lesson)).await.len(), 0);
    assert_eq!(log(&app, &hostile.teacher, "?person=pupil@a.org").await.len(), 0);
}

#[tokio::test]
async fn entries_older_than_the_school_keeps_them_are_swept_and_nothing_newer() {
    let app = app_with(Config::default()).await;
    let a = class(&app, "admin@a.org").await;
    let b = class(&app, "admin@b.org").await;
    reply(&app, &a.teacher, &a.chat, "test").await;
    reply(&app, &b.teacher, &b.chat, "test").await;
    let now = OffsetDateTime::now_utc();
    let aged = |days: i64| margin::server::db::time::stored(now - time::Duration::days(days));
    // School A keeps its log 30 days; B keeps the default 180.
    let teacher = colleague(&app, &a.teacher, "teacher@a.org").await;
    assert_eq!(app.put_json("/api/school/retention", Auth::Bearer(&teacher), json!({"auditDays": 30})).await.status, StatusCode::FORBIDDEN);
    assert_eq!(app.put_json("/api/school/retention", Auth::Bearer(&a.teacher), json!({"auditDays": 7})).await.status, StatusCode::BAD_REQUEST);
    let r = app.put_json("/api/school/retention", Auth::Bearer(&a.teacher), json!({"auditDays": 30})).await;
    assert_eq!((r.status, r.json()["auditDays"].as_i64()), (StatusCode::OK, Some(30)), "{}", r.body);
    let r = app.put_json("/api/school/retention", Auth::Bearer(&a.teacher), json!({"tutorChatsDays": 10})).await;
    assert_eq!(r.json()["auditDays"], 30, "a change that does not name it leaves it");
    let r = app.get("/api/school", Auth::Bearer(&b.teacher)).await;
    assert_eq!(r.json()["keepAuditDays"], 180);

    // Each school's reply copied to 31 and 181 days ago.
    for days in [31, 181] {
        for school_of in [&a.teacher, &b.teacher] {
            let id = app.user_id(school_of).await;
            sqlx::query(
                "INSERT INTO audit_events (id, school_id, at, action, actor, person_id, lesson_id, turn_id, model, tokens, outcome, detail)
                 SELECT id || $1, school_id, $2, action, actor, person_id, lesson_id, turn_id, model, tokens, outcome, detail FROM audit_events WHERE person_id = $3 AND at > $4",
            )
            .bind(format!("-{days}"))
            .bind(aged(days))
            .bind(&id)
            .bind(aged(1))
            .execute(&app.state.db)
            .await
            .unwrap();
        }
    }
    assert_eq!((log(&app, &a.teacher, "").await.len(), log(&app, &b.teacher, "").await.len()), (3, 3));
    let swept = retention::sweep(&app.state.db, now).await.unwrap();
    assert_eq!(swept.audit_entries, 3, "A's two older than 30 days, B's one older than 180");
    assert_eq!((log(&app, &a.teacher, "").await.len(), log(&app, &b.teacher, "").await.len()), (1, 2));
    // A reply refused because the school's tokens are used up is kept too.
    let b_school: String = sqlx::query_scalar("SELECT school_id FROM users WHERE email = 'admin@b.org'").fetch_one(&app.state.db).await.unwrap();
    sqlx::query("UPDATE schools SET monthly_tokens = 0 WHERE id = $1").bind(&b_school).execute(&app.state.db).await.unwrap();
    let refused = start_turn(&app, &b.teacher, &b.chat, "test").await;
    assert_eq!(refused.status(), StatusCode::PAYMENT_REQUIRED);
    let newest = log(&app, &b.teacher, "").await;
    assert_eq!((newest[0]["action"].as_str(), newest[0]["outcome"].as_str(), newest[0]["actor"].as_str()), (Some("refusal"), Some("budget"), Some("teacher")), "{newest:#?}");
    let page = app.get("/school", Auth::Cookie(&a.teacher)).await;
    assert!(page.body.contains("Open the audit log") && page.body.contains(r#"name="audit_days""#) && page.body.contains(r#"value="30""#), "{}", page.body);
}
