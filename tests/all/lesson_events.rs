//! `GET /api/lessons/{id}/events`: an open page hears of every change to its
//! lesson, in order, whoever made it, and only its owner may listen.
#![cfg(feature = "ssr")]

use crate::common;

use axum::{
    body::Body,
    http::{header, Method, Request, StatusCode},
};
use common::{app, read_events, teacher, Auth, TestApp};
use http_body_util::BodyExt;
use margin::chat::sse::SseParser;
use serde_json::{json, Value};
use tower::ServiceExt;

/// The lesson's event stream, open.
async fn listen(app: &TestApp, token: &str, lesson: &str) -> (StatusCode, Body) {
    let req = Request::builder()
        .uri(format!("/api/lessons/{lesson}/events"))
        .header(header::AUTHORIZATION, format!("Bearer {token}"))
        .body(Body::empty())
        .unwrap();
    let res = app.router.clone().oneshot(req).await.unwrap();
    (res.status(), res.into_body())
}

/// The next `n` events, with their data read.
async fn next(body: &mut Body, parser: &mut SseParser, n: usize) -> Vec<(String, Value)> {
    let got = read_events(body, parser, n).await;
    got.into_iter().map(|m| (m.event, serde_json::from_str(&m.data).unwrap())).collect()
}

#[tokio::test]
async fn an_open_lesson_hears_of_each_version_chat_and_reply_in_order() {
    let app = app().await;
    let t = teacher(&app, "ana@x.org").await;
    let bearer = Auth::Bearer(&t.token);
    // The notes of the set-up (a chat made) are behind us.
    app.state.bus.settle(&app.state.db).await;
    let (status, mut events) = listen(&app, &t.token, &t.lesson_id).await;
    assert_eq!(status, StatusCode::OK);
    let mut parser = SseParser::new();
    // First, where the lesson stands.
    assert_eq!(next(&mut events, &mut parser, 1).await, vec![("revision".into(), json!({"kind": "revision", "revision": 1}))]);

    // A version saved (as from another tab).
    let xml = "<lesson>\n  <h1 id=\"b1\">Verbs</h1>\n  <p id=\"b2\">Now with more.</p>\n</lesson>\n";
    let saved = app.put_json(&format!("/api/lessons/{}/document", t.lesson_id), bearer, json!({"xml": xml, "baseRevision": 1})).await;
    assert_eq!(saved.status, StatusCode::OK, "{}", saved.body);
    assert_eq!(next(&mut events, &mut parser, 1).await, vec![("revision".into(), json!({"kind": "revision", "revision": 2}))]);

    // Chats made and renamed.
    let chat = app.post_json(&format!("/api/lessons/{}/chats", t.lesson_id), bearer, json!({"title": "Second"})).await.json();
    let chat_id = chat["id"].as_str().unwrap();
    app.send_json(Method::PATCH, &format!("/api/chats/{chat_id}"), bearer, json!({"title": "Renamed"})).await;
    assert_eq!(next(&mut events, &mut parser, 2).await, vec![("chats".into(), json!({"kind": "chats"})), ("chats".into(), json!({"kind": "chats"}))]);

    // A reply that edits the lesson: it starts, its edit is a version, it ends.
    let req = Request::builder()
        .method(Method::POST)
        .uri("/api/chat/stream")
        .header(header::AUTHORIZATION, format!("Bearer {}", t.token))
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(json!({"sessionId": t.session_id, "content": "Add a fill-in-the-blank exercise about French verbs"}).to_string()))
        .unwrap();
    let res = app.router.clone().oneshot(req).await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let turn = res.headers()["x-turn-id"].to_str().unwrap().to_string();
    res.into_body().collect().await.unwrap();
    let told = next(&mut events, &mut parser, 3).await;
    let turn_told = |running: bool| ("turn".to_string(), json!({"kind": "turn", "chatId": t.session_id, "turnId": turn, "running": running}));
    assert_eq!(told, vec![turn_told(true), ("revision".into(), json!({"kind": "revision", "revision": 3})), turn_told(false)]);

    // A chat deleted, then the lesson trashed: the stream says so and ends.
    app.send_json(Method::DELETE, &format!("/api/chats/{chat_id}"), bearer, json!({})).await;
    app.send_json(Method::DELETE, &format!("/api/lessons/{}", t.lesson_id), bearer, json!({})).await;
    assert_eq!(next(&mut events, &mut parser, 2).await, vec![("chats".into(), json!({"kind": "chats"})), ("lesson".into(), json!({"kind": "lesson"}))]);
    assert!(events.frame().await.is_none(), "the stream ends with the lesson");
}

#[tokio::test]
async fn only_the_owner_may_listen() {
    let app = app().await;
    let t = teacher(&app, "ana@x.org").await;
    let other = teacher(&app, "ben@x.org").await;
    assert_eq!(listen(&app, &other.token, &t.lesson_id).await.0, StatusCode::NOT_FOUND);
    let req = Request::builder().uri(format!("/api/lessons/{}/events", t.lesson_id)).body(Body::empty()).unwrap();
    assert_eq!(app.router.clone().oneshot(req).await.unwrap().status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn a_change_whose_note_was_lost_reaches_the_page_by_the_instances_sweep() {
    // The sweep every 100 ms here (every 5 s by default).
    let app = common::app_with(margin::server::config::Config { lesson_sweep_ms: 100, ..Default::default() }).await;
    let t = teacher(&app, "lost@x.org").await;
    app.state.bus.settle(&app.state.db).await;
    let (status, mut events) = listen(&app, &t.token, &t.lesson_id).await;
    assert_eq!(status, StatusCode::OK);
    let mut parser = SseParser::new();
    assert_eq!(next(&mut events, &mut parser, 1).await, vec![("revision".into(), json!({"kind": "revision", "revision": 1}))]);

    // A change stored with no note sent (as when a note is lost while the bus reconnects).
    sqlx::query("UPDATE lessons SET revision = 2 WHERE id = $1").bind(&t.lesson_id).execute(&app.state.db).await.unwrap();
    assert_eq!(next(&mut events, &mut parser, 1).await, vec![("revision".into(), json!({"kind": "revision", "revision": 2}))]);

    // A lesson gone without a note: the page is told once, and its stream ends.
    sqlx::query("UPDATE lessons SET deleted_at = $2 WHERE id = $1").bind(&t.lesson_id).bind(margin::server::db::time::now()).execute(&app.state.db).await.unwrap();
    assert_eq!(next(&mut events, &mut parser, 1).await, vec![("lesson".into(), json!({"kind": "lesson"}))]);
    assert!(events.frame().await.is_none(), "the stream ends");
    assert_eq!(app.state.lesson_pages.counts(), (0, 0), "its slot is free again");
}

#[tokio::test]
async fn an_account_may_hold_only_so_many_live_lesson_pages_and_others_are_not_affected() {
    let app = common::app_with(margin::server::config::Config { lesson_streams_per_account: 2, ..Default::default() }).await;
    let t = teacher(&app, "tabs@x.org").await;
    let other = teacher(&app, "colleague@x.org").await;
    let (first, body_one) = listen(&app, &t.token, &t.lesson_id).await;
    let (second, _body_two) = listen(&app, &t.token, &t.lesson_id).await;
    assert_eq!((first, second), (StatusCode::OK, StatusCode::OK));
    let (third, refused) = listen(&app, &t.token, &t.lesson_id).await;
    assert_eq!(third, StatusCode::TOO_MANY_REQUESTS);
    let refused: Value = serde_json::from_slice(&refused.collect().await.unwrap().to_bytes()).unwrap();
    assert_eq!(refused["code"], "rate_limited", "{refused}");
    assert!(refused["error"].as_str().unwrap().contains("too many lesson pages open"), "{refused}");
    // A colleague's pages are their own.
    let (theirs, _their_body) = listen(&app, &other.token, &other.lesson_id).await;
    assert_eq!(theirs, StatusCode::OK);
    // A page closed gives its place back.
    drop(body_one);
    let (again, _) = listen(&app, &t.token, &t.lesson_id).await;
    assert_eq!(again, StatusCode::OK);
    // Asking for a lesson that is not yours takes no place for long.
    let (not_yours, _) = listen(&app, &t.token, &other.lesson_id).await;
    assert_eq!(not_yours, StatusCode::NOT_FOUND);
}
