//! The turn in the design's own words (seed 004, `?protocol=004`, issue
//! #66): a client written to the design alone follows a turn, is told of a
//! pause with the calls waiting, decides, and follows the same turn to its
//! end, streaming or not. Margin's own events say each call's start once.

#![cfg(feature = "ssr")]

use crate::common;

use std::time::Duration;

use axum::{
    body::Body,
    http::{header, Method, Request, StatusCode},
};
use common::{app, teacher, TestApp};
use margin::chat::sse::{SseMessage, SseParser};
use serde_json::{json, Value};

const ASK: &str = "Take every kind of step";
/// A guard, not a measure: a request held for the pause's half hour fails here.
const GUARD: Duration = Duration::from_secs(60);

async fn ask(app: &TestApp, token: &str, session: &str, query: &str, accept: &str) -> common::Reply {
    let req = Request::builder()
        .method(Method::POST)
        .uri(format!("/api/chat/stream{query}"))
        .header(header::AUTHORIZATION, format!("Bearer {token}"))
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, accept)
        .body(Body::from(json!({"sessionId": session, "content": ASK}).to_string()))
        .unwrap();
    tokio::time::timeout(GUARD, app.send(req)).await.expect("answered, at the pause at the latest")
}

async fn again(app: &TestApp, token: &str, turn: &str, last_id: Option<&str>, accept: &str) -> common::Reply {
    let mut req = Request::builder()
        .uri(format!("/api/chat/turns/{turn}/events?protocol=004"))
        .header(header::AUTHORIZATION, format!("Bearer {token}"))
        .header(header::ACCEPT, accept);
    if let Some(id) = last_id {
        req = req.header("last-event-id", id);
    }
    tokio::time::timeout(GUARD, app.send(req.body(Body::empty()).unwrap())).await.expect("answered")
}

/// The design's events: `data:` only, each a JSON object with its `type`.
fn design_events(r: &common::Reply) -> (Vec<Value>, Option<String>) {
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let mut parser = SseParser::new();
    let messages: Vec<SseMessage> = parser.push(r.body.as_bytes());
    let values = messages
        .iter()
        .map(|m| {
            assert!(m.event.is_empty() || m.event == "message", "the design names no SSE event: {m:?}");
            serde_json::from_str(&m.data).unwrap_or_else(|e| panic!("{e}: {}", m.data))
        })
        .collect();
    (values, parser.last_id.clone())
}

/// The types in order, with runs of chunks said once.
fn shape(values: &[Value]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for v in values {
        let t = format!("{} {}", v["type"].as_str().unwrap(), v["round_index"].as_u64().map_or(String::new(), |r| r.to_string()));
        let t = t.trim().to_string();
        if t.contains("_chunk") && out.last() == Some(&t) {
            continue;
        }
        out.push(t);
    }
    out
}

#[tokio::test]
async fn a_client_written_to_the_design_follows_pauses_approves_and_finishes_a_turn_streaming() {
    let app = app().await;
    let ana = teacher(&app, "ana@x.org").await;
    let bo = teacher(&app, "bo@y.org").await;
    let r = app.put_json(&format!("/api/lessons/{}/review", ana.lesson_id), common::Auth::Bearer(&ana.token), json!({"reviewEdits": true})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);

    let r = ask(&app, &ana.token, &ana.session_id, "?protocol=004", "text/event-stream").await;
    let turn = r.headers["x-turn-id"].to_str().unwrap().to_string();
    let (first, last_id) = design_events(&r);
    assert_eq!(
        shape(&first),
        [
            "thinking_chunk 0", "thinking_done 0", "assistant_text_chunk 0", "assistant_text_done 0", "tool_calls 0",
            "tool_result 0", "tool_result 0", "round_executed 0",
            "assistant_text_chunk 1", "assistant_text_done 1", "tool_calls 1", "done",
        ],
        "{first:#?}"
    );
    // Past the chunks: the round's ends, its calls, their results, the round run.
    let from = first.iter().position(|v| v["type"] == "assistant_text_done").unwrap();
    let first = &first[from - 1..];
    let calls = &first[2]["tool_calls"];
    assert_eq!(calls[0], json!({"id": "call_rules", "name": "load_skill", "arguments": {"skill": "true-false"}}));
    assert_eq!(calls[1], json!({"id": "call_nope", "name": "load_skill", "arguments": {"skill": "no-such-skill"}}));
    assert_eq!((first[3]["call_id"].as_str(), first[3]["success"].as_bool()), (Some("call_rules"), Some(true)), "{}", first[3]);
    assert_eq!((first[4]["call_id"].as_str(), first[4]["success"].as_bool()), (Some("call_nope"), Some(false)), "{}", first[4]);
    assert!(first[4]["error"].as_str().unwrap().contains("no skill named"), "{}", first[4]);
    assert_eq!(first[5]["thinking"], "Two sets of rules first.");
    assert_eq!(first[5]["tool_calls"], *calls);
    assert_eq!(first[1]["full_text"], "Let me check the rules.");

    // The pause: `done` early, naming the turn and the call that waits.
    let paused = &first.last().unwrap()["final"];
    assert_eq!(paused["turn_id"].as_str(), Some(turn.as_str()), "{paused}");
    assert_eq!(paused["status"], "awaiting");
    let waiting = paused["tool_calls"].as_array().unwrap();
    assert_eq!(waiting.len(), 1, "{paused}");
    assert_eq!((waiting[0]["id"].as_str(), waiting[0]["name"].as_str()), (Some("call_edit"), Some("edit_document")));
    assert_eq!(waiting[0]["arguments"]["summary"], "Added a true/false exercise");
    let proposal = waiting[0]["proposal_id"].as_str().unwrap().to_string();
    assert_eq!(paused["executed_rounds"].as_array().unwrap().len(), 1, "{paused}");
    let so_far = paused["text"].as_str().unwrap();
    assert!(so_far.starts_with("Let me check the rules.") && so_far.ends_with("Here is the exercise."), "{so_far}");

    // Another school's teacher can neither follow the turn nor decide for it.
    assert_eq!(again(&app, &bo.token, &turn, None, "text/event-stream").await.status, StatusCode::NOT_FOUND);
    let r = app.decide(&format!("/api/proposals/{proposal}/apply"), common::Auth::Bearer(&bo.token), json!({})).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);

    // Approve; the same turn goes on from the pause's id, in the same words.
    let r = app.decide(&format!("/api/proposals/{proposal}/apply"), common::Auth::Bearer(&ana.token), json!({})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let (rest, _) = design_events(&again(&app, &ana.token, &turn, last_id.as_deref(), "text/event-stream").await);
    assert_eq!(shape(&rest), ["tool_result 1", "round_executed 1", "assistant_text_chunk 2", "assistant_text_done 2", "done"], "{rest:#?}");
    assert_eq!(rest[0]["call_id"], "call_edit");
    assert_eq!(rest[0]["success"], true);
    assert_eq!(rest[0]["decided"]["status"], "applied", "{}", rest[0]);
    let end = &rest.last().unwrap()["final"];
    assert_eq!(end["turn_id"], Value::Null, "nothing waits: {end}");
    assert_eq!(end["status"], "complete");
    assert_eq!(end["tool_calls"], json!([]));
    assert!(end["text"].as_str().unwrap().starts_with(so_far) && end["text"].as_str().unwrap().ends_with("The exercise is in the lesson."), "{end}");
    assert_eq!(end["thinking"], "Two sets of rules first.");
    let rounds = end["executed_rounds"].as_array().unwrap();
    assert_eq!(rounds.len(), 2, "{end}");
    assert_eq!(rounds[1]["tool_calls"][0]["name"], "edit_document");
    // The stored reply agrees.
    let m = app.get(&format!("/api/chats/{}/messages", ana.session_id), common::Auth::Bearer(&ana.token)).await.json();
    assert_eq!(m["messages"][1]["content"], end["text"]);

    // Read again from the start once it is over: the whole turn, one `done`.
    let (whole, _) = design_events(&again(&app, &ana.token, &turn, None, "text/event-stream").await);
    assert_eq!(whole.iter().filter(|v| v["type"] == "done").count(), 1, "{whole:#?}");
    assert_eq!(whole.last().unwrap()["final"]["text"], end["text"]);
    assert_eq!(whole.iter().filter(|v| v["type"] == "tool_calls").count(), 2);
}

#[tokio::test]
async fn the_same_turn_without_streaming_answers_at_the_pause_and_at_the_end() {
    let app = app().await;
    let cy = teacher(&app, "cy@x.org").await;
    let r = app.put_json(&format!("/api/lessons/{}/review", cy.lesson_id), common::Auth::Bearer(&cy.token), json!({"reviewEdits": true})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);

    let r = ask(&app, &cy.token, &cy.session_id, "?protocol=004", "application/json").await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let paused = r.json();
    let turn = paused["turn_id"].as_str().unwrap_or_else(|| panic!("paused: {paused}")).to_string();
    assert_eq!(paused["status"], "awaiting");
    assert_eq!(paused["tool_calls"][0]["name"], "edit_document", "{paused}");
    assert_eq!(paused["executed_rounds"][0]["tool_calls"][1]["arguments"]["skill"], "no-such-skill", "{paused}");
    let proposal = paused["tool_calls"][0]["proposal_id"].as_str().unwrap().to_string();

    let r = app.decide(&format!("/api/proposals/{proposal}/apply"), common::Auth::Bearer(&cy.token), json!({})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let end = again(&app, &cy.token, &turn, None, "application/json").await.json();
    assert_eq!(end["turn_id"], Value::Null, "{end}");
    assert_eq!(end["status"], "complete");
    let m = app.get(&format!("/api/chats/{}/messages", cy.session_id), common::Auth::Bearer(&cy.token)).await.json();
    assert_eq!(end["text"], m["messages"][1]["content"], "the stored reply's text");
    assert!(end["text"].as_str().unwrap().ends_with("The exercise is in the lesson."), "{end}");
    assert_eq!(end["executed_rounds"].as_array().map(Vec::len), Some(2), "{end}");

    // A protocol this server does not speak is refused before anything runs.
    let r = ask(&app, &cy.token, &cy.session_id, "?protocol=003", "text/event-stream").await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    let m = app.get(&format!("/api/chats/{}/messages", cy.session_id), common::Auth::Bearer(&cy.token)).await.json();
    assert_eq!(m["messages"].as_array().unwrap().len(), 2, "no message was stored for the refused request");
    // Without a sign-in, that is said first, whatever the protocol.
    let req = Request::builder()
        .method(Method::POST)
        .uri("/api/chat/stream?protocol=003")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(json!({"sessionId": cy.session_id, "content": ASK}).to_string()))
        .unwrap();
    assert_eq!(app.send(req).await.status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn margins_own_events_say_each_calls_start_once_and_every_argument_before_the_first_result() {
    let app = app().await;
    let di = teacher(&app, "di@x.org").await;
    let r = ask(&app, &di.token, &di.session_id, "", "text/event-stream").await;
    let events = SseParser::new().push(r.body.as_bytes());
    let ids = |name: &str| -> Vec<String> {
        events.iter().filter(|e| e.event == name).map(|e| serde_json::from_str::<Value>(&e.data).unwrap()["id"].as_str().unwrap().to_string()).collect()
    };
    let (starts, inputs) = (ids("tool_start"), ids("tool_input"));
    assert_eq!(starts, ["call_rules", "call_nope", "call_edit"], "one start per call");
    assert_eq!(inputs, starts, "one input per call");
    let at = |name: &str, id: &str| events.iter().position(|e| e.event == name && e.data.contains(&format!("\"id\":\"{id}\""))).unwrap();
    assert!(at("tool_input", "call_nope") < at("tool_end", "call_rules"), "both calls' arguments before the round's first result");
    let input: Value = serde_json::from_str(&events[at("tool_input", "call_rules")].data).unwrap();
    assert_eq!(input["args"], json!({"skill": "true-false"}));
}
