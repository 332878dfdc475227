//! Chat turns over HTTP with a real database and the scripted model: every
//! error status, the streamed events, persistence whatever the client does,
//! resume, cancel, crash recovery and ownership.
#![cfg(feature = "ssr")]

use crate::common;

use std::time::Duration;

use axum::{
    body::Body,
    http::{header, Method, Request, Response, StatusCode},
};
use common::{app, app_with_ai, read_events, teacher, Auth, Teacher, TestApp};
use http_body_util::BodyExt;
use margin::{
    agent::config::{AiConfig, ProviderKind},
    chat::sse::{SseMessage, SseParser},
    server::{chats::ai::AiRuntime, chats, config::Config, db::time, lessons},
};
use serde_json::{json, Value};
use tower::ServiceExt;

async fn post_turn(app: &TestApp, token: &str, body: Value) -> Response<Body> {
    let req = Request::builder()
        .method(Method::POST)
        .uri("/api/chat/stream")
        .header(header::AUTHORIZATION, format!("Bearer {token}"))
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_string()))
        .unwrap();
    app.router.clone().oneshot(req).await.unwrap()
}

async fn start(app: &TestApp, t: &Teacher, content: &str) -> Response<Body> {
    let res = post_turn(app, &t.token, json!({"sessionId": t.session_id, "content": content})).await;
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.headers()[header::CONTENT_TYPE], "text/event-stream");
    res
}

fn turn_id(res: &Response<Body>) -> String {
    res.headers()["x-turn-id"].to_str().unwrap().to_string()
}

async fn read_all(res: Response<Body>) -> Vec<SseMessage> {
    let mut body = res.into_body();
    read_events(&mut body, &mut SseParser::new(), usize::MAX).await
}

async fn json_error(res: Response<Body>) -> (StatusCode, Value) {
    let status = res.status();
    let bytes = res.into_body().collect().await.unwrap().to_bytes();
    (status, serde_json::from_slice(&bytes).unwrap_or_else(|_| panic!("not JSON: {}", String::from_utf8_lossy(&bytes))))
}

/// Waits until the turn has ended and been stored.
async fn finished(app: &TestApp, turn: &str) {
    let log = app.state.turns.get(turn).expect("turn in memory");
    let mut rx = log.subscribe();
    while !log.is_finished() {
        rx.changed().await.unwrap();
    }
}

fn text_of(events: &[SseMessage]) -> String {
    events
        .iter()
        .filter(|e| e.event == "text")
        .map(|e| serde_json::from_str::<Value>(&e.data).unwrap()["content"].as_str().unwrap().to_string())
        .collect()
}

/// `GET /api/chat/turns/{turn}/events` as the teacher, with `Last-Event-ID: last` when given.
async fn resume(app: &TestApp, t: &Teacher, turn: &str, last: Option<&str>) -> Response<Body> {
    let mut req = Request::builder().uri(format!("/api/chat/turns/{turn}/events")).header(header::AUTHORIZATION, format!("Bearer {}", t.token));
    if let Some(last) = last {
        req = req.header("last-event-id", last);
    }
    app.router.clone().oneshot(req.body(Body::empty()).unwrap()).await.unwrap()
}

async fn messages(app: &TestApp, t: &Teacher) -> Vec<Value> {
    let r = app.get(&format!("/api/chats/{}/messages", t.session_id), Auth::Bearer(&t.token)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    r.json()["messages"].as_array().unwrap().clone()
}

#[tokio::test]
async fn errors_before_streaming_are_json_with_the_right_status() {
    let app = app().await;
    let t = teacher(&app, "ana@x.org").await;
    let other = teacher(&app, "ben@x.org").await;

    let req = Request::builder().method(Method::POST).uri("/api/chat/stream").header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(json!({"sessionId": t.session_id, "content": "hi"}).to_string())).unwrap();
    let (status, body) = json_error(app.router.clone().oneshot(req).await.unwrap()).await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::UNAUTHORIZED, Some("unauthorized")));

    let (status, body) = json_error(post_turn(&app, &t.token, json!({"sessionId": t.session_id, "content": "   "})).await).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["error"], "Write a message first.");

    let (status, body) = json_error(post_turn(&app, &t.token, json!({"content": "hi"})).await).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body["error"].as_str().unwrap().contains("sessionId"));

    let (status, _) = json_error(post_turn(&app, &t.token, json!({"sessionId": other.session_id, "content": "hi"})).await).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = json_error(post_turn(&app, &t.token, json!({"sessionId": "nope", "content": "hi"})).await).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    let long = "a".repeat(margin::server::chats::routes::MAX_MESSAGE_CHARS + 1);
    let (status, body) = json_error(post_turn(&app, &t.token, json!({"sessionId": t.session_id, "content": long})).await).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert!(body["error"].as_str().unwrap().contains("too long"));
    let huge = "a".repeat(margin::server::chats::routes::MAX_TURN_BODY + 1);
    let (status, _) = json_error(post_turn(&app, &t.token, json!({"sessionId": t.session_id, "content": "x", "documentXml": huge})).await).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);

    // Nothing was stored by any of these.
    assert!(messages(&app, &t).await.is_empty());
}

#[tokio::test]
async fn a_second_turn_in_the_same_session_is_a_conflict() {
    let app = app().await;
    let t = teacher(&app, "ana@x.org").await;
    let first = start(&app, &t, "Hold on a second").await;
    let turn = turn_id(&first);
    let (status, body) = json_error(post_turn(&app, &t.token, json!({"sessionId": t.session_id, "content": "test"})).await).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert!(body["error"].as_str().unwrap().contains("still being written"));
    let r = app.post_json(&format!("/api/chat/turns/{turn}/cancel"), Auth::Bearer(&t.token), json!({})).await;
    assert_eq!(r.status, StatusCode::ACCEPTED);
    finished(&app, &turn).await;
    assert_eq!(start(&app, &t, "test").await.status(), StatusCode::OK);
}

#[tokio::test]
async fn no_provider_configured_is_a_503_that_says_how_to_fix_it() {
    let mut config = AiConfig::scripted("", common::prompts());
    config.provider = ProviderKind::OpenAi;
    let app = app_with_ai(Config::default(), AiRuntime::start(config).await).await;
    let t = teacher(&app, "ana@x.org").await;
    let (status, body) = json_error(post_turn(&app, &t.token, json!({"sessionId": t.session_id, "content": "hi"})).await).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(body["error"].as_str().unwrap().contains("AI_API_KEY"));
    let s = app.get("/api/ai/status", Auth::Bearer(&t.token)).await.json();
    assert_eq!((s["ready"].as_bool(), s["provider"].as_str()), (Some(false), Some("openai")));
}

#[tokio::test]
async fn a_turn_streams_numbered_events_and_is_stored() {
    let app = app().await;
    let t = teacher(&app, "ana@x.org").await;
    let res = start(&app, &t, "Add a fill-in-the-blank exercise about French verbs").await;
    let message_id = res.headers()["x-message-id"].to_str().unwrap().to_string();
    let events = read_all(res).await;
    let names: Vec<&str> = events.iter().map(|e| e.event.as_str()).filter(|n| *n != "usage" && *n != "round_finished").collect();
    assert_eq!(names.first(), Some(&"tool_start"));
    // Every call is announced once, as soon as its name comes, then says its arguments before it runs.
    assert_eq!(&names[..6], &["tool_start", "tool_input", "tool_end", "tool_start", "tool_input", "tool_end"]);
    assert_eq!(names.last(), Some(&"done"));
    assert_eq!(events.iter().filter(|e| e.event == "done").count(), 1);
    let ids: Vec<u64> = events.iter().map(|e| e.id.as_ref().unwrap().parse().unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "ids increase: {ids:?}");

    let start_data: Value = serde_json::from_str(&events.iter().find(|e| e.event == "tool_input").unwrap().data).unwrap();
    assert_eq!(start_data["displayText"], "Checking fill-blanks rules");
    let edit_end: Value = serde_json::from_str(&events.iter().filter(|e| e.event == "tool_end").nth(1).unwrap().data).unwrap();
    assert_eq!(edit_end["status"], "success");
    assert!(edit_end["documentXml"].as_str().unwrap().contains(r#"answer="suis""#));
    // The page's lesson view gets the edited lesson rendered by the server.
    let teacher = edit_end["documentHtml"]["teacher"].as_str().unwrap();
    let student = edit_end["documentHtml"]["student"].as_str().unwrap();
    assert!(teacher.contains("suis"), "the teacher sees the answer: {teacher}");
    assert!(student.contains("<input") && !student.contains("suis"), "the student fills it in: {student}");
    let done: Value = serde_json::from_str(&events.last().unwrap().data).unwrap();
    assert_eq!(done["messageId"], message_id.as_str());

    // The edit is a revision by the agent, with the tool's summary.
    let owner = app.user_id(&t.token).await;
    let history = lessons::list_revisions(&app.state.db, &owner, &t.lesson_id).await.unwrap();
    assert_eq!(history.len(), 2);
    assert_eq!(history[0].summary, "Added a fill-in-the-blank exercise on être and avoir");
    assert_eq!(history[0].author, margin::models::Author::Agent);

    let stored = messages(&app, &t).await;
    assert_eq!(stored.len(), 2);
    // A named chat keeps its name.
    let list = app.get(&format!("/api/lessons/{}/chats", t.lesson_id), Auth::Bearer(&t.token)).await.json();
    assert_eq!(list[0]["title"], "First chat");
    assert_eq!((stored[0]["role"].as_str(), stored[0]["content"].as_str()), (Some("user"), Some("Add a fill-in-the-blank exercise about French verbs")));
    assert_eq!(stored[1]["status"], "complete");
    assert_eq!(stored[1]["content"], text_of(&events).as_str());
    assert_eq!(stored[1]["toolCalls"].as_array().unwrap().len(), 2);
    assert!(stored[1]["documentXml"].as_str().unwrap().contains("être"));
    assert!(stored[1]["usage"]["totalTokens"].as_u64().unwrap() > 0);
    assert_eq!(stored[1]["model"], "margin-demo");
}

#[tokio::test]
async fn a_turn_whose_messages_cannot_be_stored_leaves_no_trace() {
    // The model call starts while the messages are being stored; when storing
    // fails, the teacher gets an error, and the turn neither edits the lesson
    // nor keeps the chat busy.
    let app = app().await;
    let t = teacher(&app, "ana@x.org").await;
    app.refuse_inserts("chat_messages").await;
    let res = post_turn(&app, &t.token, json!({"sessionId": t.session_id, "content": "Add a fill-in-the-blank exercise about French verbs"})).await;
    let (status, body) = json_error(res).await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::INTERNAL_SERVER_ERROR, Some("internal")));

    app.allow_inserts("chat_messages").await;
    assert!(messages(&app, &t).await.is_empty());
    let res = start(&app, &t, "test").await;
    let turn = turn_id(&res);
    let events = read_all(res).await;
    assert_eq!(events.last().unwrap().event, "done");
    finished(&app, &turn).await;
    let owner = app.user_id(&t.token).await;
    let revisions = lessons::list_revisions(&app.state.db, &owner, &t.lesson_id).await.unwrap();
    assert_eq!(revisions.len(), 1, "the abandoned turn must not edit the lesson");
    let stored = messages(&app, &t).await;
    assert_eq!(stored.len(), 2);
    assert_eq!(stored[0]["content"], "test");
}

#[tokio::test]
async fn a_client_that_goes_away_does_not_stop_the_turn() {
    let app = app().await;
    let t = teacher(&app, "ana@x.org").await;
    let res = start(&app, &t, "Answer slowly please").await;
    let turn = turn_id(&res);
    let mut body = res.into_body();
    let first = read_events(&mut body, &mut SseParser::new(), 1).await;
    assert_eq!(first[0].event, "text");
    drop(body);
    finished(&app, &turn).await;
    let stored = messages(&app, &t).await;
    assert_eq!(stored[1]["status"], "complete");
    assert_eq!(stored[1]["content"].as_str().unwrap(), "Here is a careful answer. ".repeat(12).trim_end());
}

#[tokio::test]
async fn resuming_replays_the_rest_exactly_once_then_follows_the_live_turn() {
    let app = app().await;
    let t = teacher(&app, "ana@x.org").await;
    let res = start(&app, &t, "Answer slowly please").await;
    let turn = turn_id(&res);
    let mut body = res.into_body();
    let mut parser = SseParser::new();
    let seen = read_events(&mut body, &mut parser, 3).await;
    drop(body);
    let last = parser.last_id.clone().unwrap();

    let rest = read_all(resume(&app, &t, &turn, Some(&last)).await).await;
    assert!(rest.iter().all(|e| e.id.as_ref().unwrap().parse::<u64>().unwrap() > last.parse::<u64>().unwrap()));
    assert_eq!(rest.last().unwrap().event, "done");
    let whole = format!("{}{}", text_of(&seen), text_of(&rest));
    assert_eq!(whole, "Here is a careful answer. ".repeat(12).trim_end(), "no text lost or repeated");

    // A finished turn replays everything after `after`, and then ends.
    let all = read_all(
        app.router.clone().oneshot(
            Request::builder().uri(format!("/api/chat/turns/{turn}/events?after=0")).header(header::AUTHORIZATION, format!("Bearer {}", t.token)).body(Body::empty()).unwrap(),
        ).await.unwrap(),
    ).await;
    assert_eq!(text_of(&all), whole);
    assert_eq!(all.last().unwrap().event, "done");
}

/// Replays a turn's events as a process that did not run it would (the turn
/// is not in memory; only the database has it).
async fn replay_elsewhere(app: &TestApp, t: &Teacher, turn: &str) -> Vec<Value> {
    let state = margin::server::state::AppState::new(
        app.state.leptos_options.clone(),
        app.state.db.clone(),
        Config::default(),
        common::scripted_ai().await,
        std::sync::Arc::new(margin::server::reactions::versions::Listener),
    );
    let router = margin::server::edge::router::build(state);
    let req = Request::builder()
        .uri(format!("/api/chat/turns/{turn}/events?after=0"))
        .header(header::AUTHORIZATION, format!("Bearer {}", t.token))
        .body(Body::empty())
        .unwrap();
    read_all(router.oneshot(req).await.unwrap())
        .await
        .into_iter()
        .filter(|e| e.event == "tool_end")
        .map(|e| serde_json::from_str(&e.data).unwrap())
        .collect()
}

#[tokio::test]
async fn a_replayed_edit_carries_its_revision_and_never_an_outdated_document() {
    let app = app().await;
    let t = teacher(&app, "ana@x.org").await;
    let res = start(&app, &t, "Add a fill-in-the-blank exercise about French verbs").await;
    let turn = turn_id(&res);
    let live: Vec<Value> = read_all(res).await.into_iter().filter(|e| e.event == "tool_end").map(|e| serde_json::from_str(&e.data).unwrap()).collect();
    let edit = live.iter().find(|e| e.get("documentXml").is_some()).expect("the edit's tool_end");
    let revision = edit["revision"].as_i64().unwrap();

    // Still the lesson's document: replayed with the same revision.
    let replayed = replay_elsewhere(&app, &t, &turn).await;
    let again = replayed.iter().find(|e| e.get("documentXml").is_some()).expect("the replayed edit");
    assert_eq!(again["documentXml"], edit["documentXml"]);
    assert_eq!(again["revision"], revision);
    assert!(again["documentHtml"]["teacher"].as_str().unwrap().contains("French verbs"));

    // The teacher saved a newer version since: the replay no longer offers the older document.
    let saved = app
        .put_json(
            &format!("/api/lessons/{}/document", t.lesson_id),
            Auth::Bearer(&t.token),
            json!({"xml": "<lesson><p>Rewritten by hand.</p></lesson>", "baseRevision": revision}),
        )
        .await;
    assert_eq!(saved.json()["outcome"]["Saved"]["revision"], revision + 1, "{}", saved.body);
    let replayed = replay_elsewhere(&app, &t, &turn).await;
    assert_eq!(replayed.len(), live.len(), "every step is still replayed");
    assert!(replayed.iter().all(|e| e.get("documentXml").is_none() && e.get("revision").is_none()), "{replayed:?}");
}

#[tokio::test]
async fn cancelling_mid_reply_keeps_the_partial_reply() {
    let app = app().await;
    let t = teacher(&app, "ana@x.org").await;
    let res = start(&app, &t, "Hold on a second").await;
    let turn = turn_id(&res);
    let mut body = res.into_body();
    let mut parser = SseParser::new();
    let mut seen = Vec::new();
    while !text_of(&seen).ends_with("one moment") {
        seen.extend(read_events(&mut body, &mut parser, 1).await);
    }
    let r = app.post_json(&format!("/api/chat/turns/{turn}/cancel"), Auth::Bearer(&t.token), json!({})).await;
    assert_eq!(r.status, StatusCode::ACCEPTED);
    let rest = read_events(&mut body, &mut parser, usize::MAX).await;
    assert_eq!(rest.last().unwrap().event, "cancelled");
    let stored = messages(&app, &t).await;
    assert_eq!(stored[1]["status"], "cancelled");
    assert_eq!(stored[1]["content"], "Thinking about this carefully, one moment");
    // Cancelling again is harmless.
    let again = app.post_json(&format!("/api/chat/turns/{turn}/cancel"), Auth::Bearer(&t.token), json!({})).await;
    assert_eq!(again.json()["status"], "finished");
    // The next turn works, with the stopped one in its history.
    let next = read_all(start(&app, &t, "test").await).await;
    assert_eq!(next.last().unwrap().event, "done");
    let requests = app.state.ai.scripted().unwrap().requests();
    let roles: Vec<&str> = requests.last().unwrap()["messages"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, vec!["system", "user", "assistant", "user"]);
}

#[tokio::test]
async fn stopping_a_resumed_stream_then_reloading_shows_the_text_once() {
    let app = app().await;
    let t = teacher(&app, "ana@x.org").await;
    let res = start(&app, &t, "Hold on a second").await;
    let turn = turn_id(&res);
    let mut body = res.into_body();
    let mut parser = SseParser::new();
    // One event, then the connection drops (the model then holds, so a
    // second would only come when the reply ends).
    let first = read_events(&mut body, &mut parser, 1).await;
    drop(body);
    let last = parser.last_id.clone().unwrap();

    // Resumed where the dropped stream ended, and followed until the model holds.
    let mut body = resume(&app, &t, &turn, Some(&last)).await.into_body();
    let mut parser = SseParser::new();
    let mut resumed = Vec::new();
    while !format!("{}{}", text_of(&first), text_of(&resumed)).ends_with("one moment") {
        let more = read_events(&mut body, &mut parser, 1).await;
        assert!(!more.is_empty(), "the resumed stream ended early");
        resumed.extend(more);
    }
    // Stopped from the resumed stream's page.
    let r = app.post_json(&format!("/api/chat/turns/{turn}/cancel"), Auth::Bearer(&t.token), json!({})).await;
    assert_eq!(r.status, StatusCode::ACCEPTED);
    resumed.extend(read_events(&mut body, &mut parser, usize::MAX).await);
    assert_eq!(resumed.last().unwrap().event, "cancelled");
    let said = "Thinking about this carefully, one moment";
    assert_eq!(format!("{}{}", text_of(&first), text_of(&resumed)), said, "nothing lost or repeated live");

    // A reload: the stored reply and the turn's replay hold the text once.
    let stored = messages(&app, &t).await;
    assert_eq!((stored.len(), stored[1]["status"].as_str(), stored[1]["content"].as_str()), (2, Some("cancelled"), Some(said)));
    let all = read_all(resume(&app, &t, &turn, Some("0")).await).await;
    assert_eq!(text_of(&all), said);
    assert_eq!(all.last().unwrap().event, "cancelled");
}

#[tokio::test]
async fn a_reader_that_stops_reading_costs_a_bounded_log_and_later_gets_the_rest_merged() {
    use margin::server::chats::turns::LIVE_EVENTS;
    let app = app().await;
    let t = teacher(&app, "ana@x.org").await;
    let res = start(&app, &t, "Ramble and hold").await;
    let turn = turn_id(&res);
    let mut body = res.into_body();
    let mut parser = SseParser::new();
    // The reader reads the first text, then stops reading while the reply
    // runs on to 3,000 pieces. (When it falls behind depends on how fast the
    // machine runs the reply: its next event after the first text waits for
    // the text's frame, 50 ms, and the reply may be far ahead by then.)
    let first = read_events(&mut body, &mut parser, 1).await;
    assert_eq!(first[0].event, "text");
    let log = app.state.turns.get(&turn).unwrap();
    let said: String = (0..3_000).map(|i| format!("w{i:04} ")).collect();
    let mut rx = log.subscribe();
    while *rx.borrow_and_update() < 3_000 {
        rx.changed().await.unwrap();
    }
    assert!(log.unfolded() <= LIVE_EVENTS, "the running turn keeps {} events one by one", log.unfolded());
    // Read again: told once that it fell behind, then the rest, merged, exactly once.
    let mut all = first;
    while !text_of(&all).ends_with("w2999 ") {
        let more = read_events(&mut body, &mut parser, 1).await;
        assert!(!more.is_empty(), "the stream ended early");
        all.extend(more);
    }
    let warned: Vec<usize> = all.iter().enumerate().filter(|(_, e)| e.event == "warning").map(|(i, _)| i).collect();
    assert_eq!(warned.len(), 1, "told once: {:?}", all.iter().map(|e| &e.event).collect::<Vec<_>>());
    // After the text it had read (the first event is that text).
    let w = warned[0];
    assert_eq!(all[w].id, all[w - 1].id, "a warning carries no event number of its own");
    assert_eq!(serde_json::from_str::<Value>(&all[w].data).unwrap()["code"], "slow_reader");
    let rest = &all[w + 1..];
    assert!(rest.len() < 100, "the missed text comes merged, not as {} events", rest.len());
    assert!(rest[0].id.as_deref().and_then(|id| id.parse::<u64>().ok()) > all[w].id.as_deref().and_then(|id| id.parse::<u64>().ok()));
    assert_eq!(text_of(&all), said);

    let r = app.post_json(&format!("/api/chat/turns/{turn}/cancel"), Auth::Bearer(&t.token), json!({})).await;
    assert_eq!(r.status, StatusCode::ACCEPTED);
    let end = read_events(&mut body, &mut parser, usize::MAX).await;
    assert_eq!(end.last().unwrap().event, "cancelled");
    assert_eq!(messages(&app, &t).await[1]["content"].as_str().map(str::trim_end), Some(said.trim_end()));
}

#[tokio::test]
async fn a_lease_is_written_again_only_once_it_has_run_down_and_stops_asked_are_still_seen() {
    use chats::turns::{leases, store};
    let app = app().await;
    let t = teacher(&app, "ana@x.org").await;
    let db = &app.state.db;
    let now = time::now();
    let at = |secs: u64| time::shifted(&now, Duration::from_secs(secs), true).unwrap();
    let ids = store::TurnIds { turn: "turn-1", user_message: "msg-0", assistant_message: "msg-1", lease: store::Lease { instance: "here", until: at(30) }, reserved: ("", 0) };
    store::start_turn(db, &t.session_id, "Write a lot", &ids, "m").await.unwrap();
    let lease_of = || async { sqlx::query_scalar::<_, String>("SELECT lease_until FROM chat_messages WHERE id = 'msg-1'").fetch_one(db).await.unwrap() };

    // The default lease (30 s) is renewed once it has 21 s left, not before;
    // the shortest (3 s) at every tick.
    assert_eq!(leases::renewal_due(Duration::from_secs(30)), Duration::from_secs(21));
    assert_eq!(leases::renewal_due(Duration::from_secs(3)), Duration::from_secs(3));
    // A fresh lease (30 s left) is not written at this tick...
    assert_eq!(store::renew_leases(db, "here", &at(31), &at(21)).await.unwrap(), 0);
    assert_eq!(lease_of().await, at(30));
    // ...one run down past the due mark is; another instance's never.
    assert_eq!(store::renew_leases(db, "elsewhere", &at(60), &at(40)).await.unwrap(), 0);
    assert_eq!(store::renew_leases(db, "here", &at(60), &at(40)).await.unwrap(), 1);
    assert_eq!(lease_of().await, at(60));

    // A stop asked on another instance is seen at the next tick, renewed or not.
    assert!(store::stops_asked(db, "here").await.unwrap().is_empty());
    let owner: String = sqlx::query_scalar("SELECT owner_id FROM chat_sessions WHERE id = $1").bind(&t.session_id).fetch_one(db).await.unwrap();
    assert!(store::request_cancel(db, &owner, "turn-1").await.unwrap());
    assert_eq!(store::stops_asked(db, "here").await.unwrap(), vec!["turn-1".to_string()]);
    assert!(store::stops_asked(db, "elsewhere").await.unwrap().is_empty());
}

#[tokio::test]
async fn turns_left_running_by_a_dead_process_become_interrupted() {
    let app = app().await;
    let t = teacher(&app, "ana@x.org").await;
    // Leased for a minute to an instance that then died.
    let now = time::now();
    let lease = chats::turns::store::Lease { instance: "gone", until: time::shifted(&now, Duration::from_secs(60), true).unwrap() };
    let ids = chats::turns::store::TurnIds { turn: "turn-1", user_message: "msg-0", assistant_message: "msg-1", lease, reserved: ("", 0) };
    chats::turns::store::start_turn(&app.state.db, &t.session_id, "Write a lot", &ids, "m").await.unwrap();
    chats::turns::store::save_progress(&app.state.db, "msg-1", "The first half of", "", &[]).await.unwrap();
    // Within its lease it is left alone (its instance may be alive), and the
    // chat is busy on every instance.
    assert_eq!(chats::turns::store::interrupt_abandoned(&app.state.db, &now, false).await.unwrap(), 0);
    let busy = chats::turns::store::TurnIds { turn: "turn-2", user_message: "msg-2", assistant_message: "msg-3", lease: chats::turns::store::Lease { instance: "other", until: now.clone() }, reserved: ("", 0) };
    let refused = chats::turns::store::start_turn(&app.state.db, &t.session_id, "Me too", &busy, "m").await.unwrap_err();
    assert!(matches!(refused, margin::server::error::AppError::Conflict(_)), "{refused:?}");
    // Past it, any instance ends it.
    let later = time::shifted(&now, Duration::from_secs(61), true).unwrap();
    assert_eq!(chats::turns::store::interrupt_abandoned(&app.state.db, &later, false).await.unwrap(), 1);
    let stored = messages(&app, &t).await;
    assert_eq!(stored[1]["status"], "interrupted");
    assert_eq!(stored[1]["content"], "The first half of");
    assert_eq!(stored[1]["error"]["code"], "interrupted");
    // Its events can still be read: what was saved, then the error.
    let replay = read_all(
        app.router.clone().oneshot(
            Request::builder().uri("/api/chat/turns/turn-1/events").header(header::AUTHORIZATION, format!("Bearer {}", t.token)).body(Body::empty()).unwrap(),
        ).await.unwrap(),
    ).await;
    assert_eq!(replay.iter().map(|e| e.event.as_str()).collect::<Vec<_>>(), vec!["text", "error"]);
}

#[tokio::test]
async fn a_running_turn_checkpoints_its_reasoning_so_a_dead_process_keeps_it() {
    let app = app().await;
    let t = teacher(&app, "ana@x.org").await;
    let res = start(&app, &t, "Think and hold, please").await;
    let turn = turn_id(&res);
    let mut body = res.into_body();
    let mut parser = SseParser::new();
    let mut seen = Vec::new();
    while !text_of(&seen).ends_with("Still working on it") {
        seen.extend(read_events(&mut body, &mut parser, 1).await);
    }
    // The model now says nothing more; the checkpoint stores what it thought.
    // (Waits on the stored state, and gives up rather than hang.)
    let thought = "The teacher asked me to wait; let me weigh the options first.";
    let checkpointed = async {
        loop {
            let stored = messages(&app, &t).await;
            if stored[1]["reasoning"] == thought && stored[1]["content"] == "Still working on it" {
                assert_eq!(stored[1]["status"], "running");
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(30), checkpointed).await.expect("the reasoning is checkpointed while the turn runs");
    // The process dies here: at the next start the turn becomes interrupted
    // with its thoughts and text as they were checkpointed.
    assert_eq!(chats::turns::store::interrupt_abandoned(&app.state.db, &margin::server::db::time::now(), true).await.unwrap(), 1);
    let stored = messages(&app, &t).await;
    assert_eq!(stored[1]["status"], "interrupted");
    assert_eq!(stored[1]["reasoning"], thought);
    assert_eq!(stored[1]["content"], "Still working on it");
    app.post_json(&format!("/api/chat/turns/{turn}/cancel"), Auth::Bearer(&t.token), json!({})).await;
    finished(&app, &turn).await;
}

#[tokio::test]
async fn two_sessions_stream_at_once() {
    let app = app().await;
    let t = teacher(&app, "ana@x.org").await;
    let r = app.post_json(&format!("/api/lessons/{}/chats", t.lesson_id), Auth::Bearer(&t.token), json!({})).await;
    let second = Teacher { token: t.token.clone(), lesson_id: t.lesson_id.clone(), session_id: r.json()["id"].as_str().unwrap().into() };
    assert_eq!(r.json()["title"], "New chat");
    let (a, b) = tokio::join!(start(&app, &t, "Answer slowly please"), start(&app, &second, "What types of exercises can you create?"));
    let (a, b) = tokio::join!(read_all(a), read_all(b));
    assert_eq!(text_of(&a), "Here is a careful answer. ".repeat(12).trim_end());
    assert!(text_of(&b).contains("**Multiple choice**"));
    assert_eq!(messages(&app, &second).await[1]["status"], "complete");
    // An unnamed chat is named after its first message.
    let list = app.get(&format!("/api/lessons/{}/chats", t.lesson_id), Auth::Bearer(&t.token)).await.json();
    let titles: Vec<&str> = list.as_array().unwrap().iter().map(|s| s["title"].as_str().unwrap()).collect();
    assert!(titles.contains(&"What types of exercises can you create?"), "{titles:?}");
}

#[tokio::test]
async fn another_teachers_session_turn_and_resume_answer_404() {
    let app = app().await;
    let t = teacher(&app, "ana@x.org").await;
    let other = teacher(&app, "ben@x.org").await;
    let res = start(&app, &t, "test").await;
    let turn = turn_id(&res);
    read_all(res).await;
    for path in [format!("/api/chat/turns/{turn}/events"), format!("/api/chats/{}/messages", t.session_id), format!("/api/lessons/{}/chats", t.lesson_id)] {
        assert_eq!(app.get(&path, Auth::Bearer(&other.token)).await.status, StatusCode::NOT_FOUND, "{path}");
    }
    let r = app.post_json(&format!("/api/chat/turns/{turn}/cancel"), Auth::Bearer(&other.token), json!({})).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    let r = app.post_json(&format!("/api/chat/turns/{turn}/cancel"), Auth::None, json!({})).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn sessions_can_be_listed_renamed_and_deleted() {
    let app = app().await;
    let t = teacher(&app, "ana@x.org").await;
    let list = app.get(&format!("/api/lessons/{}/chats", t.lesson_id), Auth::Bearer(&t.token)).await.json();
    assert_eq!(list[0]["title"], "First chat");
    let req = Request::builder().method(Method::PATCH).uri(format!("/api/chats/{}", t.session_id))
        .header(header::AUTHORIZATION, format!("Bearer {}", t.token)).header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(json!({"title": "  Verb   practice "}).to_string())).unwrap();
    let renamed = app.send(req).await;
    assert_eq!(renamed.json()["title"], "Verb practice");
    read_all(start(&app, &t, "test").await).await;
    let req = Request::builder().method(Method::DELETE).uri(format!("/api/chats/{}", t.session_id))
        .header(header::AUTHORIZATION, format!("Bearer {}", t.token)).body(Body::empty()).unwrap();
    assert_eq!(app.send(req).await.status, StatusCode::NO_CONTENT);
    assert_eq!(app.get(&format!("/api/chats/{}/messages", t.session_id), Auth::Bearer(&t.token)).await.status, StatusCode::NOT_FOUND);
    let (count,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM chat_messages").fetch_one(&app.state.db).await.unwrap();
    assert_eq!(count, 0, "messages go with their session");
}

#[tokio::test]
async fn a_provider_failure_is_an_error_event_and_a_stored_error() {
    let app = app().await;
    let t = teacher(&app, "ana@x.org").await;
    let events = read_all(start(&app, &t, "Use a bad key").await).await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].event, "error");
    let data: Value = serde_json::from_str(&events[0].data).unwrap();
    assert_eq!(data["code"], "auth");
    let stored = messages(&app, &t).await;
    assert_eq!((stored[1]["status"].as_str(), stored[1]["error"]["code"].as_str()), (Some("error"), Some("auth")));
    assert_eq!(stored[0]["content"], "Use a bad key", "the teacher's message is kept");
}

#[tokio::test]
async fn a_quiet_stream_sends_keepalive_comments() {
    let app = common::app_with(Config { keepalive_secs: 1, ..Config::default() }).await;
    let t = teacher(&app, "ana@x.org").await;
    let res = start(&app, &t, "Hold on a second").await;
    let turn = turn_id(&res);
    let mut body = res.into_body();
    let mut raw = String::new();
    // The model holds its reply: after the first words, only keepalives come.
    while !raw.contains("\n: keepalive\n\n") {
        let frame = body.frame().await.unwrap_or_else(|| panic!("the stream ended before a keepalive: {raw}")).unwrap();
        if let Some(data) = frame.data_ref() {
            raw.push_str(&String::from_utf8_lossy(data));
        }
    }
    assert!(raw.contains("one moment"), "{raw}");
    app.post_json(&format!("/api/chat/turns/{turn}/cancel"), Auth::Bearer(&t.token), json!({})).await;
    finished(&app, &turn).await;
}

#[tokio::test]
async fn shutting_down_saves_running_turns_as_interrupted() {
    let app = app().await;
    let t = teacher(&app, "ana@x.org").await;
    let res = start(&app, &t, "Hold on a second").await;
    let mut body = res.into_body();
    let mut parser = SseParser::new();
    let mut seen = Vec::new();
    while !text_of(&seen).ends_with("one moment") {
        seen.extend(read_events(&mut body, &mut parser, 1).await);
    }
    app.state.turns.shutdown(std::time::Duration::from_secs(5)).await;
    let rest = read_events(&mut body, &mut parser, usize::MAX).await;
    let last = rest.last().expect("a last event");
    assert_eq!(last.event, "error");
    assert!(last.data.contains("interrupted"), "{}", last.data);
    let stored = messages(&app, &t).await;
    assert_eq!(stored[1]["status"], "interrupted");
    assert_eq!(stored[1]["content"], "Thinking about this carefully, one moment");
    // No new turn starts while the server is going down.
    let (status, _) = json_error(post_turn(&app, &t.token, json!({"sessionId": t.session_id, "content": "test"})).await).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
}

async fn retry(app: &TestApp, t: &Teacher) -> Response<Body> {
    post_turn(app, &t.token, json!({"sessionId": t.session_id, "content": "", "retry": true})).await
}

#[tokio::test]
async fn retry_runs_the_failed_turn_again_in_its_place_and_asks_once() {
    let app = app().await;
    let t = teacher(&app, "retry@x.org").await;
    let failed = read_all(start(&app, &t, "Send a malformed chunk").await).await;
    assert_eq!(failed.last().unwrap().event, "error");
    let before = messages(&app, &t).await;
    assert_eq!(before.len(), 2);
    let failed_id = before[1]["id"].as_str().unwrap().to_string();

    let res = retry(&app, &t).await;
    assert_eq!(res.status(), StatusCode::OK);
    let again = read_all(res).await;
    assert!(matches!(again.last().unwrap().event.as_str(), "error" | "done"));
    let after = messages(&app, &t).await;
    // One question, one reply: the new one, in place of the failed one.
    assert_eq!(after.len(), 2, "{after:?}");
    assert_eq!(after[0]["role"], "user");
    assert_eq!(after[0]["content"], "Send a malformed chunk");
    assert_ne!(after[1]["id"], failed_id);
    // The model was asked the question once, with nothing of the failed reply.
    let requests = app.state.ai.scripted().unwrap().requests();
    let sent = requests.last().unwrap()["messages"].as_array().unwrap().clone();
    let roles: Vec<&str> = sent.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, vec!["system", "user"]);
}

#[tokio::test]
async fn retry_after_a_dead_process_shows_the_question_once() {
    let app = app().await;
    let t = teacher(&app, "dead@x.org").await;
    // What a process killed mid-turn leaves, and what the next one makes of it.
    let lease = chats::turns::store::Lease { instance: "gone", until: time::now() };
    let ids = chats::turns::store::TurnIds { turn: "turn-1", user_message: "msg-0", assistant_message: "msg-1", lease, reserved: ("", 0) };
    chats::turns::store::start_turn(&app.state.db, &t.session_id, "test", &ids, "m").await.unwrap();
    chats::turns::store::save_progress(&app.state.db, "msg-1", "Half a", "", &[]).await.unwrap();
    assert_eq!(chats::turns::store::interrupt_abandoned(&app.state.db, &margin::server::db::time::now(), true).await.unwrap(), 1);

    let done = read_all(retry(&app, &t).await).await;
    assert_eq!(done.last().unwrap().event, "done");
    let after = messages(&app, &t).await;
    let questions = after.iter().filter(|m| m["role"] == "user").count();
    assert_eq!((questions, after.len()), (1, 2), "{after:?}");
    assert_eq!(after[1]["status"], "complete");
    assert_ne!(after[1]["content"], "Half a");
}

#[tokio::test]
async fn only_the_last_reply_that_did_not_finish_can_be_retried() {
    let app = app().await;
    let t = teacher(&app, "noretry@x.org").await;
    // Nothing to retry in an empty chat, nor after a reply that finished.
    let (status, body) = json_error(retry(&app, &t).await).await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::CONFLICT, Some("conflict")));
    read_all(start(&app, &t, "test").await).await;
    let (status, _) = json_error(retry(&app, &t).await).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(messages(&app, &t).await.len(), 2);
}
