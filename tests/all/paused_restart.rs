//! A reply paused on a held edit outlives the process running it. With the
//! real server binary and a real database (SQLite, or PostgreSQL in its
//! pass), the scripted model, and "ask before every edit":
//! - stopped (SIGTERM) in the pause, the process ends the stream without
//!   an end (no error, no "interrupted"): the reply is stored paused, and
//!   reads as `awaiting` from the next process;
//! - the next process takes the reply on: a reader that reconnects from the
//!   last event it had goes on from there, Apply resumes the same reply,
//!   which goes on to its next edit and pauses again;
//! - killed (-9) in that pause, the next process takes it on again, and
//!   Discard with a reason ends the reply as the model answers it;
//! - the reply read afterwards has every word once, its two decisions as
//!   the edits' answers, and its three rounds.

use std::time::Duration;

use margin::chat::sse::{SseMessage, SseParser};
use serde_json::{json, Value};

use crate::common::database;
use crate::common::server;

use server::{until_count, Server};

/// A short lease (a killed process's pause is taken on soon on PostgreSQL).
const SERVER_ENV: [(&str, &str); 2] = [("MARGIN_TURN_LEASE_SECS", "3"), ("MARGIN_SHUTDOWN_SECS", "2")];
const ASK: &str = "Add an exercise and then its answer key";

struct Teacher {
    http: reqwest::Client,
    auth: String,
}

impl Teacher {
    async fn post(&self, on: &Server, path: &str, body: Value) -> reqwest::Response {
        self.http.post(format!("{}{path}", on.base)).header("authorization", &self.auth).json(&body).send().await.unwrap()
    }

    async fn get(&self, on: &Server, path: &str) -> Value {
        self.http.get(format!("{}{path}", on.base)).header("authorization", &self.auth).send().await.unwrap().json().await.unwrap()
    }

    /// The turn's events after `after`, as SSE.
    async fn follow(&self, on: &Server, turn: &str, after: u64) -> reqwest::Response {
        let res = self
            .http
            .get(format!("{}/api/chat/turns/{turn}/events", on.base))
            .header("authorization", &self.auth)
            .header("last-event-id", after.to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 200);
        res
    }
}

/// Reads until an event named `name` (returned with all read), or the end.
async fn until(res: &mut reqwest::Response, name: &str) -> Vec<SseMessage> {
    let mut parser = SseParser::new();
    let mut got: Vec<SseMessage> = Vec::new();
    while !got.iter().any(|m| m.event == name) {
        match tokio::time::timeout(Duration::from_secs(60), res.chunk()).await.expect("events within a minute") {
            Ok(Some(chunk)) => got.extend(parser.push(&chunk)),
            Ok(None) | Err(_) => break,
        }
    }
    got
}

fn data(messages: &[SseMessage], name: &str) -> Value {
    serde_json::from_str(&messages.iter().rev().find(|m| m.event == name).unwrap_or_else(|| panic!("no `{name}` in {messages:?}")).data).unwrap()
}

fn ids(messages: &[SseMessage]) -> Vec<u64> {
    messages.iter().filter_map(|m| m.id.as_deref()?.parse().ok()).collect()
}

fn text_of(messages: &[SseMessage]) -> String {
    messages.iter().filter(|m| m.event == "text").map(|m| serde_json::from_str::<Value>(&m.data).unwrap()["content"].as_str().unwrap().to_string()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_reply_outlives_a_restart_and_a_kill_and_goes_on_with_the_teachers_decisions() {
    let dir = tempfile::tempdir().unwrap();
    let database = database::TestDatabase::new(dir.path()).await;
    let db = margin::server::db::connect(&database.url).await.unwrap();
    let mut first = Server::start(&database.url, dir.path(), &SERVER_ENV).await;
    let http = reqwest::Client::new();
    let auth = first.sign_up(&http, "pause@school.org").await;
    let t = Teacher { http, auth };
    let lesson: Value = t.post(&first, "/api/lessons", json!({"title": "The sun"})).await.json().await.unwrap();
    let lesson = lesson["id"].as_str().unwrap().to_string();
    let every = t.http.put(format!("{}/api/lessons/{lesson}/review", first.base)).header("authorization", &t.auth).json(&json!({"editMode": "every"})).send().await.unwrap();
    assert_eq!(every.status(), 200);
    let chat: Value = t.post(&first, &format!("/api/lessons/{lesson}/chats"), json!({})).await.json().await.unwrap();
    let chat = chat["id"].as_str().unwrap().to_string();

    // The first edit pauses the reply.
    let mut res = t.post(&first, "/api/chat/stream", json!({"sessionId": chat, "content": ASK})).await;
    assert_eq!(res.status(), 200);
    let turn = res.headers()["x-turn-id"].to_str().unwrap().to_string();
    let before = until(&mut res, "awaiting_approval").await;
    let p1 = data(&before, "awaiting_approval")["proposalId"].as_str().unwrap().to_string();
    // The digest the first process gave with it; another process checks it.
    let d1 = data(&before, "awaiting_approval")["digest"].as_str().unwrap().to_string();
    let mut last = *ids(&before).last().unwrap();

    // Stopped in the pause: the stream ends with no end of the reply.
    first.signal("-TERM");
    let rest = until(&mut res, "done").await;
    assert!(first.wait().success());
    assert!(!rest.iter().any(|m| ["done", "error", "cancelled"].contains(&m.event.as_str())), "the reply was put aside, not ended: {rest:?}");
    let stored = format!("SELECT COUNT(*) FROM chat_messages WHERE turn_id = '{turn}' AND status = 'running' AND resume_state IS NOT NULL");
    until_count(&db, &stored, 1).await;

    // The next process has it, waiting; a reader goes on from its last event.
    let second = Server::start(&database.url, dir.path(), &SERVER_ENV).await;
    let messages = t.get(&second, &format!("/api/chats/{chat}/messages")).await;
    assert_eq!(messages["messages"][1]["status"], "awaiting", "{messages}");
    assert_eq!(messages["runningTurnId"].as_str(), Some(turn.as_str()));
    let mut follower = t.follow(&second, &turn, last).await;
    let applied = t.post(&second, &format!("/api/proposals/{p1}/apply"), json!({"digest": d1})).await;
    assert_eq!(applied.status(), 200, "{}", applied.text().await.unwrap());
    let between = until(&mut follower, "awaiting_approval").await;
    let p2 = data(&between, "awaiting_approval")["proposalId"].as_str().unwrap().to_string();
    let d2 = data(&between, "awaiting_approval")["digest"].as_str().unwrap().to_string();
    assert_ne!(p1, p2);
    let numbers = ids(&between);
    assert!(numbers.first().is_some_and(|n| *n == last + 1), "goes on from event {last}: {numbers:?}");
    assert!(numbers.windows(2).all(|w| w[0] < w[1]), "{numbers:?}");
    assert!(text_of(&between).contains("Now the answer key"), "{between:?}");
    assert!(!text_of(&between).contains("First the exercise"), "nothing twice: {between:?}");
    last = *numbers.last().unwrap();
    let paused_again = format!("SELECT COUNT(*) FROM chat_messages WHERE turn_id = '{turn}' AND resume_state LIKE '%{p2}%'");
    until_count(&db, &paused_again, 1).await;

    // Killed in the second pause: the next process takes it on again.
    let mut second = second;
    second.signal("-KILL");
    second.wait();
    drop(follower);
    let third = Server::start(&database.url, dir.path(), &SERVER_ENV).await;
    let mut follower = t.follow(&third, &turn, last).await;
    let discarded = t.post(&third, &format!("/api/proposals/{p2}/discard"), json!({"reason": "Keep keys out of the lesson", "digest": d2})).await;
    assert_eq!(discarded.status(), 200);
    let end = until(&mut follower, "done").await;
    let numbers = ids(&end);
    assert!(numbers.first().is_some_and(|n| *n == last + 1), "goes on from event {last}: {numbers:?}");
    assert!(text_of(&end).ends_with("You said: “Keep keys out of the lesson”. Tell me what to change and I will try again."), "{end:?}");
    let done = data(&end, "done");
    assert_eq!(done["final"]["rounds"], 3, "{done}");
    let steps = done["final"]["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2, "{done}");
    assert!(steps[0]["output"].as_str().unwrap().starts_with("The teacher applied this edit as version 2."), "{}", steps[0]);
    assert!(steps[1]["output"].as_str().unwrap().contains("discarded this edit, saying: “Keep keys out of the lesson”"), "{}", steps[1]);

    // Read afterwards, the reply has every word once.
    let mut whole = t.follow(&third, &turn, 0).await;
    let all = until(&mut whole, "done").await;
    let text = text_of(&all);
    assert_eq!(text.matches("First the exercise.").count(), 1, "{text}");
    assert_eq!(text.matches("Now the answer key").count(), 1, "{text}");
    let messages = t.get(&third, &format!("/api/chats/{chat}/messages")).await;
    let reply = &messages["messages"][1];
    assert_eq!(reply["status"], "complete", "{reply}");
    assert_eq!(reply["content"].as_str(), Some(text.as_str()));
    assert_eq!(reply["toolCalls"][0]["proposal"]["status"], "applied");
    assert_eq!(reply["toolCalls"][1]["proposal"]["status"], "discarded");
    let xml = t.get(&third, &format!("/api/lessons/{lesson}")).await["documentXml"].as_str().unwrap().to_string();
    assert!(xml.contains("The sun is a star.") && !xml.contains("Answer key"), "{xml}");
    // Nothing is left paused, and the chat takes the next question.
    until_count(&db, &format!("SELECT COUNT(*) FROM chat_messages WHERE turn_id = '{turn}' AND resume_state IS NULL"), 1).await;
    let next = t.post(&third, "/api/chat/stream", json!({"sessionId": chat, "content": "test"})).await;
    assert_eq!(next.status(), 200);
    assert!(next.text().await.unwrap().contains("event: done"));
}
