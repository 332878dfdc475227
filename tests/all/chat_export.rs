//! A chat taken away as Markdown or JSON: the owner's only (a teacher's or
//! a student's own), with the reply's steps and changes in the Markdown,
//! and every message in the JSON.
#![cfg(feature = "ssr")]

use crate::common;

use axum::http::{header, StatusCode};
use common::{
    classes::{class, student},
    teacher,
    waits::until,
    Auth,
};
use serde_json::json;

const DONE_REPLIES: &str = "SELECT COUNT(*) FROM chat_messages WHERE role = 'assistant' AND status = 'complete'";

#[tokio::test]
async fn a_chat_exports_as_markdown_and_json_to_its_owner_only() {
    let app = common::app().await;
    let t = teacher(&app, "export@x.org").await;
    let r = app.post_json("/api/chat/stream", Auth::Bearer(&t.token), json!({"sessionId": t.session_id, "content": "Add a fill-in-the-blank exercise about French verbs"})).await;
    assert!(r.status.is_success(), "{}", r.body);
    until(&app, DONE_REPLIES, 1).await;

    let r = app.get(&format!("/api/chats/{}/export", t.session_id), Auth::Cookie(&t.token)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.headers[header::CONTENT_TYPE], "text/markdown; charset=utf-8");
    assert_eq!(r.headers[header::CONTENT_DISPOSITION], "attachment; filename=\"First chat.md\"");
    let md = &r.body;
    assert!(md.starts_with("# First chat\n\nA chat about the lesson “Verbs”"), "{md}");
    assert!(md.contains("## You · ") && md.contains("Add a fill-in-the-blank exercise about French verbs"), "{md}");
    assert!(md.contains("## Assistant · ") && md.contains("I added a fill-in-the-blank exercise"), "{md}");
    assert!(md.contains("(done). Added a fill-in-the-blank exercise on être and avoir, saved as version 2\n  - Added exercise 1 (Fill in the blanks"), "{md}");

    let r = app.get(&format!("/api/chats/{}/export?format=json", t.session_id), Auth::Bearer(&t.token)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.headers[header::CONTENT_DISPOSITION], "attachment; filename=\"First chat.json\"");
    let j = r.json();
    assert_eq!(j["chat"]["title"], "First chat");
    assert_eq!(j["lessonTitle"], "Verbs");
    let messages = j["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[0]["content"], "Add a fill-in-the-blank exercise about French verbs");
    assert!(messages[1]["toolCalls"].as_array().is_some_and(|c| c.iter().any(|s| s["tool"] == "edit_document")), "{}", r.body);

    let r = app.get(&format!("/api/chats/{}/export?format=pdf", t.session_id), Auth::Bearer(&t.token)).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    let stranger = teacher(&app, "other@y.org").await;
    for format in ["md", "json"] {
        let r = app.get(&format!("/api/chats/{}/export?format={format}", t.session_id), Auth::Bearer(&stranger.token)).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);
    }
    let r = app.get(&format!("/api/chats/{}/export", t.session_id), Auth::None).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{}", r.body);
}

#[tokio::test]
async fn a_student_exports_their_own_tutor_chat_and_not_their_teachers() {
    let app = common::app().await;
    let c = class(&app, "t@x.org").await;
    let s = student(&app, "s@x.org", &c.code).await;
    let r = app.post_json(&format!("/api/lessons/{}/chats", c.lesson), Auth::Bearer(&s), json!({})).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let mine = r.json()["id"].as_str().unwrap().to_string();
    let r = app.post_json("/api/chat/stream", Auth::Bearer(&s), json!({"sessionId": mine, "content": "Explain this lesson"})).await;
    assert!(r.status.is_success(), "{}", r.body);
    until(&app, DONE_REPLIES, 1).await;
    let r = app.get(&format!("/api/chats/{mine}/export"), Auth::Bearer(&s)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert!(r.body.contains("## You · ") && r.body.contains("Explain this lesson") && r.body.contains("## Assistant · "), "{}", r.body);
    // Nothing of the teacher's: no key, no note.
    assert!(!r.body.contains("Secret: spend ten minutes") && !r.body.contains("Model answer kept secret"), "{}", r.body);
    let r = app.get(&format!("/api/chats/{mine}/export?format=json"), Auth::Bearer(&s)).await;
    assert!(!r.body.contains("Secret: spend ten minutes") && !r.body.contains("Model answer kept secret") && !r.body.contains("serais"), "{}", r.body);
    let r = app.get(&format!("/api/chats/{}/export", c.chat), Auth::Bearer(&s)).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);
}
