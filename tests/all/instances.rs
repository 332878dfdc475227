//! Two real server processes on one PostgreSQL database, as behind a load
//! balancer: a chat busy on one is busy on the other, a stop sent to either
//! stops the reply, and a reply whose instance was killed is marked
//! interrupted by the other once its lease runs out.
//!
//! These run in the PostgreSQL pass of `make test` (`MARGIN_TEST_DATABASE=postgres`);
//! SQLite is one process's file, so the SQLite pass says so and returns.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::database;
use crate::common::server;

use server::{until_at_least, until_count, Server};

/// A short lease, so a killed instance's reply is ended soon.
const LEASE_SECS: u64 = 3;

struct Two {
    a: Server,
    b: Server,
    db: margin::server::db::Db,
    url: String,
    auth: String,
    lesson: String,
    http: reqwest::Client,
    _dir: tempfile::TempDir,
    _database: database::TestDatabase,
}

async fn two_instances() -> Option<Two> {
    if !database::postgres() {
        eprintln!("two instances need PostgreSQL: this test runs in the PostgreSQL pass (make cargo-test-postgres)");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let database = database::TestDatabase::new(dir.path()).await;
    let lease = LEASE_SECS.to_string();
    let env = [("MARGIN_TURN_LEASE_SECS", lease.as_str())];
    let a = Server::start(&database.url, dir.path(), &env).await;
    let b = Server::start(&database.url, dir.path(), &env).await;
    let http = reqwest::Client::new();
    let auth = a.sign_up(&http, "two@school.org").await;
    // Made on B, used on A: the session and the lesson are the database's.
    let lesson: Value =
        http.post(format!("{}/api/lessons", b.base)).header("authorization", &auth).json(&json!({"title": "Shared"})).send().await.unwrap().json().await.unwrap();
    let lesson = lesson["id"].as_str().expect("lesson made on B").to_string();
    let db = margin::server::db::connect(&database.url).await.unwrap();
    Some(Two { a, b, db, url: database.url.clone(), auth, lesson, http, _dir: dir, _database: database })
}

impl Two {
    async fn chat(&self, on: &Server) -> String {
        let chat: Value = self
            .http
            .post(format!("{}/api/lessons/{}/chats", on.base, self.lesson))
            .header("authorization", &self.auth)
            .json(&json!({}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        chat["id"].as_str().unwrap().to_string()
    }

    /// A turn started on `on`, once it is accepted: its stream and its id.
    async fn started(&self, on: &Server, chat: &str, content: &str) -> (reqwest::Response, String) {
        let res = self.turn(on, chat, content).await;
        assert_eq!(res.status(), 200);
        let turn = turn_id(&res);
        (res, turn)
    }

    async fn turn(&self, on: &Server, chat: &str, content: &str) -> reqwest::Response {
        self.http
            .post(format!("{}/api/chat/stream", on.base))
            .header("authorization", &self.auth)
            .json(&json!({"sessionId": chat, "content": content}))
            .send()
            .await
            .unwrap()
    }

    /// `GET path` on `on`, as the teacher (an event stream, usually).
    async fn get(&self, on: &Server, path: &str, last_event_id: Option<u64>) -> reqwest::Response {
        let mut req = self.http.get(format!("{}{path}", on.base)).header("authorization", &self.auth);
        if let Some(id) = last_event_id {
            req = req.header("last-event-id", id.to_string());
        }
        req.send().await.unwrap()
    }

    /// Applies a proposal through `on`, or discards it with `reason`, as
    /// the teacher does from what `on` shows them: naming the digest it gives.
    async fn decide(&self, on: &Server, proposal: &str, discard: Option<&str>) {
        let shown: Value = self.http.get(format!("{}/api/proposals/{proposal}", on.base)).header("authorization", &self.auth).send().await.unwrap().json().await.unwrap();
        let digest = shown["digest"].clone();
        assert!(digest.is_string(), "{shown}");
        let (what, body) = match discard {
            Some(reason) => ("discard", json!({"reason": reason, "digest": digest})),
            None => ("apply", json!({"digest": digest})),
        };
        let r = self.http.post(format!("{}/api/proposals/{proposal}/{what}", on.base)).header("authorization", &self.auth).json(&body).send().await.unwrap();
        assert_eq!(r.status(), 200, "{}", r.text().await.unwrap());
    }

    /// Waits until the turn's first words are stored (so it is surely running).
    async fn until_writing(&self, turn: &str) {
        let sql = format!("SELECT COUNT(*) FROM chat_messages WHERE turn_id = '{turn}' AND status = 'running' AND content LIKE 'Thinking%'");
        until_count(&self.db, &sql, 1).await;
    }
}

fn turn_id(res: &reqwest::Response) -> String {
    res.headers()["x-turn-id"].to_str().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_chat_is_busy_on_both_and_a_stop_sent_to_the_other_instance_stops_the_reply() {
    let Some(two) = two_instances().await else { return };
    let chat = two.chat(&two.b).await;
    let (mut res, turn) = two.started(&two.a, &chat, "hold on").await;
    two.until_writing(&turn).await;

    // B knows the chat is busy, though the reply is A's.
    let second = two.turn(&two.b, &chat, "and another thing").await;
    assert_eq!(second.status(), 409, "{}", second.text().await.unwrap());

    // Stopped through B.
    let stop = two.http.post(format!("{}/api/chat/turns/{turn}/cancel", two.b.base)).header("authorization", &two.auth).send().await.unwrap();
    assert_eq!(stop.status(), 202);
    assert_eq!(stop.json::<Value>().await.unwrap()["status"], "cancelling");

    // A's stream ends with the stop, and the reply is stored as stopped with its words.
    let mut seen = String::new();
    while let Some(chunk) = res.chunk().await.unwrap() {
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    assert!(seen.contains("event: cancelled"), "{seen}");
    let (status, content): (String, String) =
        sqlx::query_as("SELECT status, content FROM chat_messages WHERE turn_id = $1").bind(&turn).fetch_one(&two.db).await.unwrap();
    assert_eq!(status, "cancelled");
    assert!(content.starts_with("Thinking"), "{content}");

    // A stop sent to either once it is over says so.
    let again = two.http.post(format!("{}/api/chat/turns/{turn}/cancel", two.b.base)).header("authorization", &two.auth).send().await.unwrap();
    assert_eq!(again.status(), 200);
    // And the chat takes a new turn on B.
    let next = two.turn(&two.b, &chat, "test").await;
    assert_eq!(next.status(), 200);
    assert!(next.text().await.unwrap().contains("event: done"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_whose_instance_was_killed_is_interrupted_by_the_other_after_its_lease() {
    let Some(mut two) = two_instances().await else { return };
    let chat = two.chat(&two.a).await;
    let (res, turn) = two.started(&two.a, &chat, "hold on").await;
    two.until_writing(&turn).await;

    // A second tab, following the reply through B.
    let mut follower = two.get(&two.b, &format!("/api/chat/turns/{turn}/events"), None).await;
    let mut parser = margin::chat::sse::SseParser::new();
    let seen = read_until(&mut follower, &mut parser, |got| text_of(got).starts_with("Thinking")).await;
    assert!(text_of(&seen).starts_with("Thinking"));

    let killed = Instant::now();
    two.a.signal("-KILL");
    two.a.wait();
    drop(res);
    // B is still up and ends the reply once the lease has run out, keeping its words.
    let sql = format!("SELECT COUNT(*) FROM chat_messages WHERE turn_id = '{turn}' AND status = 'interrupted' AND content LIKE 'Thinking%'");
    until_count(&two.db, &sql, 1).await;
    let took = killed.elapsed();
    eprintln!("interrupted {took:?} after the kill, with a {LEASE_SECS} s lease");
    assert!(took >= Duration::from_secs(LEASE_SECS) - Duration::from_millis(1500), "not before the lease ran out: {took:?}");

    // The second tab is told how it ended.
    let end = read_until(&mut follower, &mut parser, |got| got.iter().any(|m| m.event == "error")).await;
    let error: Value = serde_json::from_str(&end.iter().find(|m| m.event == "error").expect("an end").data).unwrap();
    assert_eq!(error["code"], "interrupted");

    // The chat is free again, on B.
    let next = two.turn(&two.b, &chat, "test").await;
    let status = next.status();
    assert_eq!(status, 200, "{}", next.text().await.unwrap_or_default());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replies_on_one_instance_are_written_together_and_announced_only_while_someone_elsewhere_reads() {
    let Some(two) = two_instances().await else { return };
    // Every note the instances send each other about replies.
    let mut listener = sqlx::postgres::PgListener::connect(&two.url).await.unwrap();
    listener.listen("margin_turns").await.unwrap();
    let notes = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let heard = notes.clone();
    tokio::spawn(async move {
        while let Ok(n) = listener.recv().await {
            heard.lock().unwrap().push(n.payload().to_string());
        }
    });

    let mut turns = Vec::new();
    let mut streams = Vec::new();
    for _ in 0..8 {
        let chat = two.chat(&two.a).await;
        let (res, turn) = two.started(&two.a, &chat, "benchmark paced").await;
        turns.push(turn);
        streams.push(res);
    }
    // Well under way (three batches each), with nobody on B reading: no note names them.
    let ids = turns.iter().map(|t| format!("'{t}'")).collect::<Vec<_>>().join(", ");
    until_at_least(&two.db, &format!("SELECT COUNT(*) FROM turn_events WHERE turn_id IN ({ids})"), 24).await;
    let named = |notes: &[String], turn: &str| notes.iter().any(|n| n.strip_prefix("turns:").is_some_and(|l| l.split(',').any(|t| t == turn)));
    assert!(!turns.iter().any(|t| named(&notes.lock().unwrap(), t)), "no reader, no note: {:?}", notes.lock().unwrap());

    // A reader on B follows the first to its end, every word of it.
    let mut on_b = two.get(&two.b, &format!("/api/chat/turns/{}/events", turns[0]), None).await;
    let rest = read_until(&mut on_b, &mut margin::chat::sse::SseParser::new(), |got| got.iter().any(|m| m.event == "done")).await;
    assert_eq!(text_of(&rest), "abcdefghij".repeat(600));
    {
        let notes = notes.lock().unwrap();
        assert!(notes.iter().any(|n| n == &format!("want:{}", turns[0])), "the reader said what it follows");
        assert!(named(&notes, &turns[0]), "its batches were announced");
        assert!(!turns[1..].iter().any(|t| named(&notes, t)), "the others, unread, never were");
    }
    for s in streams {
        assert!(s.text().await.unwrap().contains("event: done"));
    }
    // One write for all of A's replies at a time: the seven nobody read
    // share their moments (the read one is written alone at the ticks in
    // between), so there are many more of their batches than moments.
    let unread = turns[1..].iter().map(|t| format!("'{t}'")).collect::<Vec<_>>().join(", ");
    let (rows, moments): (i64, i64) =
        sqlx::query_as(&format!("SELECT COUNT(*), COUNT(DISTINCT created_at) FROM turn_events WHERE turn_id IN ({unread})")).fetch_one(&two.db).await.unwrap();
    assert!(rows >= 4 * moments, "{rows} batches written at {moments} moments");
    // A streaming reply nobody elsewhere reads is written every few ticks;
    // the one read on B at every tick from then on.
    use margin::server::chats::turns::relay::{QUIET_TICKS, TICK};
    let quiet = (TICK * QUIET_TICKS as u32).as_secs_f64();
    let written = |turn: String| {
        let db = two.db.clone();
        async move {
            let (rows, span): (i64, f64) = sqlx::query_as(
                "SELECT COUNT(*), EXTRACT(EPOCH FROM MAX(created_at::timestamptz) - MIN(created_at::timestamptz))::float8 FROM turn_events WHERE turn_id = $1",
            )
            .bind(&turn)
            .fetch_one(&db)
            .await
            .unwrap();
            (rows, span)
        }
    };
    let (read_rows, _) = written(turns[0].clone()).await;
    for t in &turns[1..] {
        let (rows, span) = written(t.clone()).await;
        assert!(rows as f64 <= span / quiet + 2.0, "{rows} batches over {span} s for a reply nobody read");
        assert!(read_rows > rows, "the reply read on B was written more often ({read_rows} batches) than one nobody read ({rows})");
    }
}

/// Reads SSE messages from `res` until `enough` says so (or the stream ends).
async fn read_until(res: &mut reqwest::Response, parser: &mut margin::chat::sse::SseParser, enough: impl Fn(&[margin::chat::sse::SseMessage]) -> bool) -> Vec<margin::chat::sse::SseMessage> {
    let mut got = Vec::new();
    while !enough(&got) {
        match res.chunk().await.unwrap() {
            Some(chunk) => got.extend(parser.push(&chunk)),
            None => break,
        }
    }
    got
}

fn text_of(messages: &[margin::chat::sse::SseMessage]) -> String {
    messages
        .iter()
        .filter(|m| m.event == "text")
        .map(|m| serde_json::from_str::<Value>(&m.data).unwrap()["content"].as_str().unwrap().to_string())
        .collect()
}

fn ids(messages: &[margin::chat::sse::SseMessage]) -> Vec<u64> {
    messages.iter().filter_map(|m| m.id.as_deref()?.parse().ok()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_running_on_one_instance_is_resumed_on_the_other_exactly_once_with_the_same_ids() {
    let Some(two) = two_instances().await else { return };
    let chat = two.chat(&two.a).await;
    // Six seconds of text, a delta every 10 ms.
    let (mut on_a, turn) = two.started(&two.a, &chat, "benchmark paced").await;

    // A reader on A gets the first part, then its connection "moves" to B.
    let mut parser = margin::chat::sse::SseParser::new();
    let first = read_until(&mut on_a, &mut parser, |got| text_of(got).len() >= 500).await;
    let cursor = *ids(&first).last().unwrap();
    let mut on_b = two.get(&two.b, &format!("/api/chat/turns/{turn}/events"), Some(cursor)).await;
    assert_eq!(on_b.status(), 200);
    assert_eq!(on_b.headers()["x-turn-id"], turn.as_str());
    let rest = read_until(&mut on_b, &mut margin::chat::sse::SseParser::new(), |got| got.iter().any(|m| m.event == "done")).await;

    // Exactly once: A's part and B's part make the reply, nothing repeated or lost.
    let reply = "abcdefghij".repeat(600);
    assert_eq!(format!("{}{}", text_of(&first), text_of(&rest)), reply);
    let later = ids(&rest);
    assert!(later.first().is_some_and(|&n| n > cursor), "B starts after the cursor: {cursor} then {later:?}");
    assert!(later.windows(2).all(|w| w[0] < w[1]), "ids rise");

    // The same ids as A: A's own reader, to the end, ends on the same number.
    let a_rest = read_until(&mut on_a, &mut parser, |got| got.iter().any(|m| m.event == "done")).await;
    assert_eq!(ids(&a_rest).last(), later.last(), "the last event has one number on both instances");

    // Once it is over, B still serves it from the stored events, from the same cursor.
    let replay = two.get(&two.b, &format!("/api/chat/turns/{turn}/events?after={cursor}"), None).await.text().await.unwrap();
    let replayed = margin::chat::sse::SseParser::new().push(replay.as_bytes());
    assert_eq!(text_of(&replayed), text_of(&rest));
    assert_eq!(replayed.last().unwrap().event, "done");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_saved_through_one_instance_is_told_to_a_page_on_the_other() {
    let Some(two) = two_instances().await else { return };
    let mut on_a = two.get(&two.a, &format!("/api/lessons/{}/events", two.lesson), None).await;
    assert_eq!(on_a.status(), 200);
    let mut parser = margin::chat::sse::SseParser::new();
    let first = read_until(&mut on_a, &mut parser, |got| !got.is_empty()).await;
    assert_eq!(first[0].event, "revision");
    assert_eq!(serde_json::from_str::<Value>(&first[0].data).unwrap()["revision"], 1);

    let xml = "<lesson>\n  <h1 id=\"b1\">Shared</h1>\n  <p id=\"b2\">Saved through B.</p>\n</lesson>\n";
    let saved = two
        .http
        .put(format!("{}/api/lessons/{}/document", two.b.base, two.lesson))
        .header("authorization", &two.auth)
        .json(&json!({"xml": xml, "baseRevision": 1}))
        .send()
        .await
        .unwrap();
    assert_eq!(saved.status(), 200);
    let told = read_until(&mut on_a, &mut parser, |got| got.iter().any(|m| m.event == "revision")).await;
    let revision = told.iter().find(|m| m.event == "revision").unwrap();
    assert_eq!(serde_json::from_str::<Value>(&revision.data).unwrap()["revision"], 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sign_in_tries_count_across_instances() {
    let Some(two) = two_instances().await else { return };
    let try_on = |server: &Server| {
        two.http.post(format!("{}/api/auth/login", server.base)).json(&json!({"email": "two@school.org", "password": "not it"})).send()
    };
    // Five wrong tries from one client for one email, spread over both
    // instances, are all the limit allows; the sixth is refused wherever it lands.
    for i in 0..5 {
        let server = if i % 2 == 0 { &two.a } else { &two.b };
        assert_eq!(try_on(server).await.unwrap().status(), 400, "try {i}: wrong password");
    }
    for server in [&two.a, &two.b] {
        let refused = try_on(server).await.unwrap();
        assert_eq!(refused.status(), 429);
        assert!(refused.headers().contains_key("retry-after"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_sent_to_both_instances_at_once_start_one_automatic_turn() {
    let Some(two) = two_instances().await else { return };
    let chat = two.chat(&two.a).await;
    let event = json!({"lessonId": two.lesson, "sessionId": chat, "intent": "sessionStart"});
    let post = |on: &Server| two.http.post(format!("{}/api/chat/events", on.base)).header("authorization", &two.auth).json(&event).send();
    let (a, b) = tokio::join!(post(&two.a), post(&two.b));
    assert_eq!((a.unwrap().status().as_u16(), b.unwrap().status().as_u16()), (202, 202));
    // Each instance waits for the lesson's gate; one opens it.
    until_count(&two.db, "SELECT COUNT(*) FROM chat_messages WHERE role = 'assistant' AND status = 'complete'", 1).await;
    until_count(&two.db, "SELECT COUNT(*) FROM lesson_pending_events", 0).await;
    until_count(&two.db, "SELECT COUNT(*) FROM lesson_event_gates WHERE due_ms IS NULL", 1).await;
    // With nothing waiting and the gate closed, no second turn can start.
    let users: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM chat_messages WHERE role = 'user'").fetch_one(&two.db).await.unwrap();
    assert_eq!(users, 1);
    let note: String = sqlx::query_scalar("SELECT attachments FROM chat_messages WHERE role = 'user'").fetch_one(&two.db).await.unwrap();
    assert!(note.contains("You opened this lesson"), "{note}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_queued_on_an_instance_that_stopped_are_taken_up_by_the_next_to_start() {
    let Some(mut two) = two_instances().await else { return };
    // B stops: only A is left, and A queues the event.
    two.b.signal("-KILL");
    two.b.wait();
    let chat = two.chat(&two.a).await;
    let event = json!({"lessonId": two.lesson, "sessionId": chat, "intent": "sessionStart"});
    let r = two.http.post(format!("{}/api/chat/events", two.a.base)).header("authorization", &two.auth).json(&event).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 202);
    // A is killed before the lesson is due (2 s): its waker dies with it.
    two.a.signal("-KILL");
    two.a.wait();
    let users = "SELECT COUNT(*) FROM chat_messages WHERE role = 'user'";
    // The next instance to start waits for the lesson's gate again.
    let _c = Server::start(&two._database.url, two._dir.path(), &[]).await;
    until_count(&two.db, "SELECT COUNT(*) FROM chat_messages WHERE role = 'assistant' AND status = 'complete'", 1).await;
    until_count(&two.db, "SELECT COUNT(*) FROM lesson_pending_events", 0).await;
    assert_eq!(sqlx::query_scalar::<_, i64>(users).fetch_one(&two.db).await.unwrap(), 1);
}

/// The tokens a running reply has reserved: on its school, and on the reply.
async fn reserved(db: &margin::server::db::Db, turn: &str) -> (i64, i64) {
    let school: i64 = sqlx::query_scalar("SELECT CAST(SUM(reserved) AS BIGINT) FROM schools").fetch_one(db).await.unwrap();
    let on_reply: i64 = sqlx::query_scalar("SELECT reserved_tokens FROM chat_messages WHERE turn_id = $1").bind(turn).fetch_one(db).await.unwrap();
    (school, on_reply)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_killed_instance_had_reserved_goes_back_to_the_school() {
    let Some(mut two) = two_instances().await else { return };
    let chat = two.chat(&two.a).await;
    let (res, turn) = two.started(&two.a, &chat, "hold on").await;
    two.until_writing(&turn).await;
    // The model call under way holds a reservation, on the school and on the reply.
    let (school, on_reply) = reserved(&two.db, &turn).await;
    assert!(school > 0 && school == on_reply, "school {school}, reply {on_reply}");

    two.a.signal("-KILL");
    two.a.wait();
    drop(res);
    // B ends the reply once its lease has run out, and gives the reservation back.
    until_count(&two.db, &format!("SELECT COUNT(*) FROM chat_messages WHERE turn_id = '{turn}' AND status = 'interrupted' AND reserved_tokens = 0"), 1).await;
    until_count(&two.db, "SELECT COUNT(*) FROM schools WHERE reserved = 0", 1).await;
    // And the school's next reply reserves and settles as before.
    let next = two.turn(&two.b, &chat, "test").await;
    assert_eq!(next.status(), 200);
    assert!(next.text().await.unwrap().contains("event: done"));
    until_count(&two.db, "SELECT COUNT(*) FROM schools WHERE reserved = 0", 1).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_paused_on_one_instance_goes_on_when_the_teacher_decides_on_the_other() {
    let Some(two) = two_instances().await else { return };
    let on = two.http.put(format!("{}/api/lessons/{}/review", two.a.base, two.lesson)).header("authorization", &two.auth).json(&json!({"reviewEdits": true})).send().await.unwrap();
    assert_eq!(on.status(), 200);
    let chat = two.chat(&two.a).await;
    let (mut res, _turn) = two.started(&two.a, &chat, "Add an exercise and then its answer key").await;
    let pending = |n: i64| format!("SELECT COUNT(*) FROM proposals WHERE lesson_id = '{}' AND status = 'pending' AND changes LIKE '%{}%'", two.lesson, if n == 1 { "exercise" } else { "Answer key" });
    let id_of = |n: i64| {
        let sql = format!("SELECT id FROM proposals WHERE lesson_id = '{}' AND status = 'pending' AND changes LIKE '%{}%'", two.lesson, if n == 1 { "exercise" } else { "Answer key" });
        let db = two.db.clone();
        async move { sqlx::query_scalar::<_, String>(&sql).fetch_one(&db).await.unwrap() }
    };

    // A's reply waits on the exercise; B applies it.
    until_count(&two.db, &pending(1), 1).await;
    let first = id_of(1).await;
    two.decide(&two.b, &first, None).await;
    // A's reply goes on to the key; B discards it with a reason.
    until_count(&two.db, &pending(2), 1).await;
    let second = id_of(2).await;
    two.decide(&two.b, &second, Some("Not in the lesson")).await;

    let mut seen = String::new();
    while let Some(chunk) = res.chunk().await.unwrap() {
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    assert!(seen.contains("event: done"), "{seen}");
    assert!(seen.contains("Now the answer key") && seen.contains("Not in the lesson"), "{seen}");
    assert_eq!(seen.matches("event: awaiting_approval").count(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_paused_on_an_instance_that_was_killed_is_taken_on_by_the_other_and_goes_on_with_the_decisions_made_there() {
    let Some(mut two) = two_instances().await else { return };
    let every = two.http.put(format!("{}/api/lessons/{}/review", two.a.base, two.lesson)).header("authorization", &two.auth).json(&json!({"editMode": "every"})).send().await.unwrap();
    assert_eq!(every.status(), 200);
    let chat = two.chat(&two.a).await;
    let (res, turn) = two.started(&two.a, &chat, "Add an exercise and then its answer key").await;
    // A second tab follows the reply through B.
    let mut follower = two.get(&two.b, &format!("/api/chat/turns/{turn}/events"), None).await;
    let mut parser = margin::chat::sse::SseParser::new();
    let paused = |got: &[margin::chat::sse::SseMessage]| got.iter().any(|m| m.event == "awaiting_approval");
    let before = read_until(&mut follower, &mut parser, paused).await;
    let proposal = |got: &[margin::chat::sse::SseMessage]| {
        let data: Value = serde_json::from_str(&got.iter().rev().find(|m| m.event == "awaiting_approval").expect("a pause").data).unwrap();
        data["proposalId"].as_str().unwrap().to_string()
    };
    let p1 = proposal(&before);
    until_count(&two.db, &format!("SELECT COUNT(*) FROM chat_messages WHERE turn_id = '{turn}' AND resume_state IS NOT NULL"), 1).await;

    // A dies in the pause. Applied on B (before or after B has taken the
    // reply on), the same reply goes on, on B, to its next pause.
    two.a.signal("-KILL");
    two.a.wait();
    drop(res);
    two.decide(&two.b, &p1, None).await;
    let between = read_until(&mut follower, &mut parser, paused).await;
    let p2 = proposal(&between);
    assert_ne!(p1, p2);
    assert!(text_of(&between).contains("Now the answer key") && !text_of(&between).contains("First the exercise"), "{between:?}");
    assert!(ids(&between).windows(2).all(|w| w[0] < w[1]), "{between:?}");
    assert_eq!(ids(&between).first().copied(), ids(&before).last().map(|n| n + 1), "goes on from the last event read");

    two.decide(&two.b, &p2, Some("Not in the lesson")).await;
    let end = read_until(&mut follower, &mut parser, |got| got.iter().any(|m| m.event == "done")).await;
    assert!(text_of(&end).contains("Not in the lesson"), "{end:?}");
    let stored: (String, String) = sqlx::query_as(&format!("SELECT status, content FROM chat_messages WHERE turn_id = '{turn}'")).fetch_one(&two.db).await.unwrap();
    assert_eq!(stored.0, "complete");
    assert_eq!(stored.1.matches("First the exercise.").count(), 1, "{}", stored.1);
    assert!(stored.1.contains("Now the answer key"), "{}", stored.1);
}

#[tokio::test]
async fn readers_of_many_replies_are_answered_by_one_statement_each_in_order() {
    if !database::postgres() {
        return;
    }
    use margin::{chat::events::ChatEvent, server::chats::turns::stored_reads::StoredReads};
    let dir = tempfile::tempdir().unwrap();
    let database = database::TestDatabase::new(dir.path()).await;
    let db = margin::server::db::connect(&database.url).await.unwrap();
    // Forty turns, each with two stored batches of text: "t<i>-a" (events 1-2), "t<i>-b" (3-4).
    for i in 0..40 {
        let turn = format!("turn-{i}");
        for (last, text) in [(2, format!("t{i}-a")), (4, format!("t{i}-b"))] {
            let events = vec![ChatEvent::text(&text[..2]), ChatEvent::text(&text[2..])];
            let entries = margin::server::chats::turns::stored_reads::batch_json(last - 1, events);
            sqlx::query("INSERT INTO turn_events (turn_id, last_seq, entries, created_at) VALUES ($1, $2, $3, '2026-01-01T00:00:00.000Z')")
                .bind(&turn)
                .bind(last as i64)
                .bind(entries)
                .execute(&db)
                .await
                .unwrap();
        }
    }
    let reads = StoredReads::start(db.clone());
    // Every reader asks at once (from its first event, or after the second;
    // two follow turn-0 from different places; one follows a turn with nothing stored).
    let asks: Vec<(String, u64)> =
        (0..40).map(|i| (format!("turn-{i}"), if i % 2 == 0 { 0 } else { 2 })).chain([("turn-0".to_string(), 3), ("turn-none".to_string(), 0)]).collect();
    let answers = futures::future::join_all(asks.iter().map(|(t, after)| reads.since(t, *after))).await;
    assert_eq!(reads.statements(), 1, "one statement for every reader waiting");
    let text = |events: &[(u64, ChatEvent)]| {
        events.iter().map(|(_, e)| if let ChatEvent::Text(t) = e { t.content.clone() } else { panic!("only text was stored: {e:?}") }).collect::<String>()
    };
    for (i, ((turn, after), answer)) in asks.iter().zip(&answers).enumerate() {
        let (events, _) = answer.as_ref().unwrap();
        let ids: Vec<u64> = events.iter().map(|(n, _)| *n).collect();
        let expected = match (turn.as_str(), after) {
            ("turn-none", _) => String::new(),
            (_, 0) => format!("t{i}-at{i}-b"),
            ("turn-0", 3) => "-b".to_string(),
            _ => format!("t{i}-b"),
        };
        assert_eq!(text(events), expected, "{turn} after {after}");
        // Runs of text come merged, numbered as their last event: after the cursor, rising, up to the last stored.
        assert!(ids.windows(2).all(|w| w[0] < w[1]) && ids.iter().all(|n| n > after), "{turn} after {after}: {ids:?}");
        assert_eq!(ids.last().copied(), (turn != "turn-none").then_some(4), "{turn}");
    }
    // Asked again one by one: one statement each.
    reads.since("turn-1", 0).await.unwrap();
    assert_eq!(reads.statements(), 2);
}

/// Issue #66, item 7, across instances: a reader leaves a reply paused on
/// A, the stored events are purged as if hours had passed, the teacher
/// decides on B, and the reader comes back on B from its last id: it gets
/// exactly the rest of that turn, numbered on; the whole turn is still
/// readable from its start; the chat's next turn has its own id and events.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_back_on_the_other_instance_after_a_purge_gets_the_rest_of_that_turn_only() {
    use margin::server::{chats::turns::remote, db::time};
    let Some(two) = two_instances().await else { return };
    let on = two.http.put(format!("{}/api/lessons/{}/review", two.a.base, two.lesson)).header("authorization", &two.auth).json(&json!({"reviewEdits": true})).send().await.unwrap();
    assert_eq!(on.status(), 200);
    let chat = two.chat(&two.a).await;
    let (mut on_a, turn) = two.started(&two.a, &chat, "Add an exercise and then its answer key").await;
    let awaiting = |got: &[margin::chat::sse::SseMessage], n: usize| got.iter().filter(|m| m.event == "awaiting_approval").count() >= n;
    let seen = read_until(&mut on_a, &mut margin::chat::sse::SseParser::new(), |got| awaiting(got, 1)).await;
    let cursor = *ids(&seen).last().unwrap();
    let proposal = |m: &margin::chat::sse::SseMessage| serde_json::from_str::<Value>(&m.data).unwrap()["proposalId"].as_str().unwrap().to_string();
    let first = proposal(seen.iter().rfind(|m| m.event == "awaiting_approval").unwrap());
    drop(on_a); // the reader leaves during the pause

    // Purged as if two hours had passed; the teacher decides on B.
    let later = time::shifted(&time::now(), Duration::from_secs(7_200), true).unwrap();
    remote::purge(&two.db, &later).await.unwrap();
    two.decide(&two.b, &first, None).await;

    // Back on B, from its last id: the rest, numbered on from there.
    let mut on_b = two.get(&two.b, &format!("/api/chat/turns/{turn}/events"), Some(cursor)).await;
    assert_eq!(on_b.status(), 200);
    let mut parser = margin::chat::sse::SseParser::new();
    let mut rest = read_until(&mut on_b, &mut parser, |got| awaiting(got, 1)).await;
    let second = proposal(rest.iter().rfind(|m| m.event == "awaiting_approval").unwrap());
    two.decide(&two.b, &second, Some("No keys")).await;
    rest.extend(read_until(&mut on_b, &mut parser, |got| got.iter().any(|m| m.event == "done")).await);
    let later_ids = ids(&rest);
    assert_eq!(later_ids.first(), Some(&(cursor + 1)), "on from {cursor}: {later_ids:?}");
    assert!(later_ids.windows(2).all(|w| w[0] < w[1]), "{later_ids:?}");
    let ends: Vec<Value> = rest.iter().filter(|e| e.event == "tool_end").map(|e| serde_json::from_str(&e.data).unwrap()).collect();
    assert_eq!(ends[0]["decided"]["status"], "applied", "the decision made while nobody read: {ends:?}");
    assert_eq!(rest.last().unwrap().event, "done");

    // The whole turn from its start, on either instance: the first part and the rest.
    let whole = format!("{}{}", text_of(&seen), text_of(&rest));
    for on in [&two.a, &two.b] {
        let all = two.get(on, &format!("/api/chat/turns/{turn}/events"), None).await.text().await.unwrap();
        let all = margin::chat::sse::SseParser::new().push(all.as_bytes());
        assert_eq!(text_of(&all), whole, "the whole turn on {}", on.base);
        assert_eq!(all.iter().filter(|m| m.event == "done").count(), 1);
    }

    // The chat's next turn, on B: its own id, only its own events.
    let (next_res, next) = two.started(&two.b, &chat, "test").await;
    assert_ne!(next, turn);
    let next_text = text_of(&margin::chat::sse::SseParser::new().push(next_res.text().await.unwrap().as_bytes()));
    assert!(next_text.starts_with("Hello!") && !next_text.contains("First the exercise."), "{next_text}");
    let old = two.get(&two.a, &format!("/api/chat/turns/{turn}/events"), None).await.text().await.unwrap();
    let old = text_of(&margin::chat::sse::SseParser::new().push(old.as_bytes()));
    assert!(old.starts_with("First the exercise.") && !old.contains("Hello!"), "{old}");
}
