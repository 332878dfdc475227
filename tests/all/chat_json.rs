//! A turn for scripts (issue #24): `POST /api/chat/stream` with
//! `Accept: application/json` runs the same turn and answers the finished
//! reply as one JSON object, with the same checks and errors.

#![cfg(feature = "ssr")]

use crate::common;

use axum::{
    body::Body,
    http::{header, Method, Request, StatusCode},
};
use common::{app, teacher, TestApp};
use serde_json::{json, Value};

async fn ask_json(app: &TestApp, token: &str, session: &str, content: &str) -> common::Reply {
    let req = Request::builder()
        .method(Method::POST)
        .uri("/api/chat/stream")
        .header(header::AUTHORIZATION, format!("Bearer {token}"))
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, "application/json")
        .body(Body::from(json!({"sessionId": session, "content": content}).to_string()))
        .unwrap();
    app.send(req).await
}

fn is_json(r: &common::Reply) -> Value {
    let ct = r.headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    assert!(ct.starts_with("application/json"), "{ct}: {}", r.body);
    r.json()
}

#[tokio::test]
async fn a_greeting_an_edit_and_a_provider_error_answer_as_json() {
    let app = app().await;
    let ana = teacher(&app, "ana@x.org").await;

    let r = ask_json(&app, &ana.token, &ana.session_id, "hello").await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let hello = is_json(&r);
    assert_eq!(hello["status"], "complete");
    assert!(hello["text"].as_str().unwrap().starts_with("Hello!"), "{hello}");
    assert_eq!(hello["steps"], json!([]));
    assert!(hello["usage"]["totalTokens"].as_u64().unwrap() > 0, "{hello}");
    assert!(hello.get("error").is_none());
    // The same reply is in the chat, under the same ids.
    let m = app.get(&format!("/api/chats/{}/messages", ana.session_id), common::Auth::Bearer(&ana.token)).await.json();
    let last = m["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!((last["id"].clone(), last["turnId"].clone()), (hello["messageId"].clone(), hello["turnId"].clone()));

    let r = ask_json(&app, &ana.token, &ana.session_id, "Add a fill-in-the-blank exercise about French verbs").await;
    let edit = is_json(&r);
    assert_eq!(edit["status"], "complete", "{edit}");
    let steps = edit["steps"].as_array().unwrap();
    let change = steps.iter().find(|s| s["tool"] == "edit_document").expect("an edit step");
    assert_eq!(change["status"], "success", "{change}");
    let revision = change["revision"].as_i64().unwrap();
    let lesson = app.get(&format!("/api/lessons/{}", ana.lesson_id), common::Auth::Bearer(&ana.token)).await.json();
    assert_eq!(lesson["revision"].as_i64(), Some(revision), "the lesson is at the edit's version");

    let r = ask_json(&app, &ana.token, &ana.session_id, "bad key").await;
    assert_eq!(r.status, StatusCode::OK, "a turn that ran answers its record: {}", r.body);
    let failed = is_json(&r);
    assert_eq!(failed["status"], "error");
    assert_eq!(failed["error"]["code"], "auth", "{failed}");

    // Errors before the turn are the API's usual ones.
    let r = ask_json(&app, &ana.token, "no-such-chat", "hello").await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert_eq!(is_json(&r)["code"], "not_found");
    // Without the Accept header, the same request streams events.
    let r = app.post_json("/api/chat/stream", common::Auth::Bearer(&ana.token), json!({"sessionId": ana.session_id, "content": "hello"})).await;
    assert!(r.headers[header::CONTENT_TYPE].to_str().unwrap().starts_with("text/event-stream"));
}

#[tokio::test]
async fn the_stream_ends_with_the_same_final_record_the_json_api_answers() {
    use margin::chat::sse::SseParser;
    let app = app().await;
    let ana = teacher(&app, "ana@x.org").await;
    let ben = teacher(&app, "ben@x.org").await;
    let ask = "Add a fill-in-the-blank exercise about French verbs";

    // Ana's turn streams; its `done` carries the record.
    let r = app.post_json("/api/chat/stream", common::Auth::Bearer(&ana.token), json!({"sessionId": ana.session_id, "content": ask})).await;
    let events = SseParser::new().push(r.body.as_bytes());
    let done = events.last().unwrap();
    assert_eq!(done.event, "done");
    let streamed: Value = serde_json::from_str(&done.data).unwrap();
    let record = &streamed["final"];
    assert_eq!(record["rounds"], 3, "{record}");
    assert!(record["text"].as_str().unwrap().starts_with("I added a fill-in-the-blank exercise"), "{record}");
    let tools: Vec<&str> = record["steps"].as_array().unwrap().iter().map(|s| s["tool"].as_str().unwrap()).collect();
    assert_eq!(tools, ["load_skill", "edit_document"]);
    assert_eq!(record["steps"][1]["roundIndex"], 2);

    // Ben asks the same as JSON: the same record, as `final`.
    let asked = is_json(&ask_json(&app, &ben.token, &ben.session_id, ask).await);
    let mut theirs = asked["final"].clone();
    let mut ours = record.clone();
    // Each lesson has its own revision numbers and proposals: compare what the turn did.
    for r in [&mut theirs, &mut ours] {
        for step in r["steps"].as_array_mut().unwrap() {
            step.as_object_mut().unwrap().remove("revision");
        }
    }
    assert_eq!(theirs, ours);
    assert_eq!(asked["final"]["text"], asked["text"]);
}

async fn again_json(app: &TestApp, token: &str, turn: &str) -> common::Reply {
    let req = Request::builder()
        .uri(format!("/api/chat/turns/{turn}/events"))
        .header(header::AUTHORIZATION, format!("Bearer {token}"))
        .header(header::ACCEPT, "application/json")
        .body(Body::empty())
        .unwrap();
    app.send(req).await
}

/// A pause answers at once with what waits; deciding goes on with the same
/// turn, and asking again answers at its next pause, then at its end. A
/// guard, not a measure: a request held for the pause's half hour fails here.
#[tokio::test]
async fn a_pause_answers_at_once_and_each_decision_goes_on_with_the_same_turn() {
    let guard = std::time::Duration::from_secs(60);
    let app = app().await;
    let ana = teacher(&app, "ana@x.org").await;
    let r = app.put_json(&format!("/api/lessons/{}/review", ana.lesson_id), common::Auth::Bearer(&ana.token), json!({"reviewEdits": true})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);

    let r = tokio::time::timeout(guard, ask_json(&app, &ana.token, &ana.session_id, "Add an exercise and then its answer key")).await.expect("answered at the pause");
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let paused = is_json(&r);
    assert_eq!(paused["status"], "awaiting", "{paused}");
    let turn = paused["turnId"].as_str().unwrap().to_string();
    assert_eq!(paused["pending"].as_array().unwrap().len(), 1, "{paused}");
    assert_eq!(paused["pending"][0]["id"], "call_edit");
    let p1 = paused["pending"][0]["proposalId"].as_str().unwrap().to_string();
    assert!(paused["pending"][0]["changes"][0]["text"].as_str().unwrap().starts_with("Added exercise 1"), "{paused}");
    assert_eq!(paused["final"]["steps"][0]["proposal"]["status"], "pending", "{paused}");
    assert!(paused["text"].as_str().unwrap().starts_with("First the exercise."), "{paused}");

    // Another school's teacher can neither read the turn nor decide for it.
    let bo = teacher(&app, "bo@y.org").await;
    assert_eq!(again_json(&app, &bo.token, &turn).await.status, StatusCode::NOT_FOUND);
    let r = app.decide(&format!("/api/proposals/{p1}/apply"), common::Auth::Bearer(&bo.token), json!({})).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);

    // Asked again before deciding: the same pause, at once.
    let same = is_json(&tokio::time::timeout(guard, again_json(&app, &ana.token, &turn)).await.expect("answered at the pause"));
    assert_eq!(same["pending"][0]["proposalId"].as_str(), Some(p1.as_str()));

    // Apply: the same turn goes on to its next pause.
    let r = app.decide(&format!("/api/proposals/{p1}/apply"), common::Auth::Bearer(&ana.token), json!({})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let next = is_json(&tokio::time::timeout(guard, again_json(&app, &ana.token, &turn)).await.expect("answered at the next pause"));
    assert_eq!(next["status"], "awaiting", "{next}");
    assert_eq!(next["turnId"].as_str(), Some(turn.as_str()));
    let p2 = next["pending"][0]["proposalId"].as_str().unwrap().to_string();
    assert_ne!(p1, p2);
    assert_eq!(next["final"]["steps"][0]["proposal"]["status"], "applied", "{next}");

    // Discard: the turn ends, and its answer is the stored reply's.
    let r = app.decide(&format!("/api/proposals/{p2}/discard"), common::Auth::Bearer(&ana.token), json!({"reason": "No keys"})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let done = is_json(&tokio::time::timeout(guard, again_json(&app, &ana.token, &turn)).await.expect("answered at the end"));
    assert_eq!(done["status"], "complete", "{done}");
    assert!(done.get("pending").is_none(), "{done}");
    assert_eq!(done["final"]["steps"][0]["proposal"]["status"], "applied");
    assert_eq!(done["final"]["steps"][1]["proposal"]["status"], "discarded");
    let m = app.get(&format!("/api/chats/{}/messages", ana.session_id), common::Auth::Bearer(&ana.token)).await.json();
    assert_eq!(done["steps"], m["messages"][1]["toolCalls"], "the stored reply");
    assert_eq!(done["text"], m["messages"][1]["content"]);
}
