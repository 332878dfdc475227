//! Seeing and controlling what the agent changes, over HTTP with a real
//! SQLite file and the scripted model: change lists, proposals with Apply and
//! Discard (made on top of later edits, or refused with the colliding
//! changes), the guard on destructive edits, Undo, and owners.
#![cfg(feature = "ssr")]

use crate::common;

use axum::{
    body::Body,
    http::{header, Method, Request, StatusCode},
};
use common::{teacher, Auth, Teacher, TestApp};
use http_body_util::BodyExt;
use margin::{
    chat::sse::{SseMessage, SseParser},
    server::lessons,
};
use serde_json::{json, Value};
use tower::ServiceExt;


/// Runs one turn to its end and gives back its events.
async fn turn(app: &TestApp, t: &Teacher, content: &str) -> Vec<SseMessage> {
    let req = Request::builder()
        .method(Method::POST)
        .uri("/api/chat/stream")
        .header(header::AUTHORIZATION, format!("Bearer {}", t.token))
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(json!({"sessionId": t.session_id, "content": content}).to_string()))
        .unwrap();
    let res = app.router.clone().oneshot(req).await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let bytes = res.into_body().collect().await.unwrap().to_bytes();
    let mut parser = SseParser::new();
    let events = parser.push(&bytes);
    assert_eq!(events.last().unwrap().event, "done", "{events:?}");
    events
}

/// The `tool_end` of the turn's edit.
fn edit_end(events: &[SseMessage]) -> Value {
    events
        .iter()
        .filter(|e| e.event == "tool_end")
        .map(|e| serde_json::from_str::<Value>(&e.data).unwrap())
        .find(|d| d["id"] == "call_edit")
        .expect("an edit")
}

async fn review(app: &TestApp, t: &Teacher, on: bool) {
    let r = app.put_json(&format!("/api/lessons/{}/review", t.lesson_id), Auth::Bearer(&t.token), json!({"reviewEdits": on})).await;
    assert_eq!((r.status, r.json()["reviewEdits"].as_bool()), (StatusCode::OK, Some(on)), "{}", r.body);
}

async fn lesson(app: &TestApp, t: &Teacher) -> (String, i64) {
    let owner = app.user_id(&t.token).await;
    let l = lessons::get_editable(&app.state.db, &owner, &t.lesson_id).await.unwrap();
    (l.document_xml, l.revision)
}

async fn save(app: &TestApp, t: &Teacher, xml: &str, base: i64) -> i64 {
    let r = app.put_json(&format!("/api/lessons/{}/document", t.lesson_id), Auth::Bearer(&t.token), json!({"xml": xml, "baseRevision": base})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    r.json()["outcome"]["Saved"]["revision"].as_i64().expect("saved")
}

const ASK: &str = "Add a fill-in-the-blank exercise about French verbs";

/// An app whose paused replies wait a second for the teacher: the turns of
/// these tests end with their edit still waiting, as a pause that runs out
/// leaves it (the teacher decides afterwards).
async fn waiting_briefly() -> TestApp {
    common::app_with(margin::server::config::Config { approval_wait_secs: 1, ..Default::default() }).await
}

#[tokio::test]
async fn a_landed_edit_lists_its_changes_and_the_api_answers_them() {
    let app = waiting_briefly().await;
    let t = teacher(&app, "ana@x.org").await;
    let end = edit_end(&turn(&app, &t, ASK).await);
    assert_eq!(end["status"], "success");
    assert_eq!(end["changes"], json!([{"kind": "added", "block": "ex-1", "text": "Added exercise 1 (Fill in the blanks, 3 blanks)"}]));
    let r = app.get(&format!("/api/lessons/{}/changes?from=1&to=2", t.lesson_id), Auth::Bearer(&t.token)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.json()["changes"], end["changes"]);
    // Without numbers: the current version against the one before.
    let r = app.get(&format!("/api/lessons/{}/changes", t.lesson_id), Auth::Bearer(&t.token)).await;
    assert_eq!((r.json()["from"].as_i64(), r.json()["to"].as_i64()), (Some(1), Some(2)));
    // The stored step keeps the list and the revision.
    let messages = app.get(&format!("/api/chats/{}/messages", t.session_id), Auth::Bearer(&t.token)).await.json();
    let step = &messages["messages"][1]["toolCalls"][1];
    assert_eq!((step["revision"].as_i64(), &step["changes"]), (Some(2), &end["changes"]));
    // Other teachers and missing versions.
    let ben = app.sign_up("ben@x.org").await;
    let r = app.get(&format!("/api/lessons/{}/changes?from=1&to=2", t.lesson_id), Auth::Bearer(&ben)).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    let r = app.get(&format!("/api/lessons/{}/changes?from=1&to=9", t.lesson_id), Auth::Bearer(&t.token)).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    let r = app.get(&format!("/api/lessons/{}/changes?from=0&to=1", t.lesson_id), Auth::Bearer(&t.token)).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn with_review_on_an_edit_waits_then_apply_saves_it_as_the_agents_reviewed_revision() {
    let app = waiting_briefly().await;
    let t = teacher(&app, "ana@x.org").await;
    review(&app, &t, true).await;
    let (before, rev) = lesson(&app, &t).await;
    let events = turn(&app, &t, ASK).await;
    // The reply paused on the edit; nobody decided in the time it waits, so
    // it went on and ended with the edit still waiting.
    let paused = events.iter().position(|e| e.event == "awaiting_approval").expect("a pause");
    assert!(paused < events.iter().rposition(|e| e.event == "tool_end").unwrap());
    let end = edit_end(&events);
    assert_eq!(end["status"], "proposed");
    assert!(end.get("documentXml").is_none() && end.get("revision").is_none(), "{end}");
    let id = end["proposalId"].as_str().unwrap().to_string();
    assert_eq!(lesson(&app, &t).await, (before.clone(), rev), "nothing saved yet");

    // The preview: the lesson it would make, rendered.
    let p = app.get(&format!("/api/proposals/{id}"), Auth::Bearer(&t.token)).await;
    assert_eq!(p.status, StatusCode::OK);
    assert_eq!(p.json()["status"], "pending");
    assert!(p.json()["html"]["teacher"].as_str().unwrap().contains("être"));

    // Another teacher can neither see nor apply it.
    let ben = app.sign_up("ben@x.org").await;
    for r in [
        app.get(&format!("/api/proposals/{id}"), Auth::Bearer(&ben)).await,
        app.decide(&format!("/api/proposals/{id}/apply"), Auth::Bearer(&ben), json!({})).await,
        app.decide(&format!("/api/proposals/{id}/discard"), Auth::Bearer(&ben), json!({})).await,
    ] {
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);
    }

    let applied = app.decide(&format!("/api/proposals/{id}/apply"), Auth::Bearer(&t.token), json!({})).await;
    assert_eq!(applied.status, StatusCode::OK, "{}", applied.body);
    let a = applied.json();
    assert_eq!(a["outcome"]["Saved"]["revision"], 2);
    assert!(a["html"]["teacher"].as_str().unwrap().contains("être"));
    assert_eq!(a["changes"][0]["text"], "Added exercise 1 (Fill in the blanks, 3 blanks)");
    let (now, rev) = lesson(&app, &t).await;
    assert_eq!(rev, 2);
    assert!(now.contains(r#"type="fill-blanks""#));
    let history = app.get(&format!("/api/lessons/{}/revisions", t.lesson_id), Auth::Bearer(&t.token)).await.json();
    assert_eq!((&history[0]["author"], &history[0]["reviewed"]), (&json!("agent"), &json!(true)));

    // Applied twice, or discarded after: a clear conflict, nothing changes.
    let again = app.decide(&format!("/api/proposals/{id}/apply"), Auth::Bearer(&t.token), json!({})).await;
    assert_eq!((again.status, again.json()["code"].as_str()), (StatusCode::CONFLICT, Some("conflict")));
    assert!(again.json()["error"].as_str().unwrap().contains("already applied"), "{}", again.body);
    let late = app.decide(&format!("/api/proposals/{id}/discard"), Auth::Bearer(&t.token), json!({})).await;
    assert_eq!(late.status, StatusCode::CONFLICT);
    assert_eq!(lesson(&app, &t).await.1, 2);

    // Reloaded, the step says it was applied.
    let messages = app.get(&format!("/api/chats/{}/messages", t.session_id), Auth::Bearer(&t.token)).await.json();
    let step = &messages["messages"][1]["toolCalls"][1];
    assert_eq!(step["status"], "proposed");
    assert_eq!(step["proposal"], json!({"id": id, "status": "applied", "revision": 2}));
}

/// Apply decides the proposal and saves the lesson in one transaction:
/// while the lesson's save waits, everyone else still reads the proposal
/// pending, never applied before the lesson is (nor without its version; a
/// paused reply that read it so told the model the edit had no version).
/// On PostgreSQL the test holds the lesson's row and waits until the apply
/// is stuck on it (taking the lesson's row before the proposal's, as a new
/// proposal does); SQLite has one writer, so there the apply waits at its start.
#[tokio::test]
async fn a_proposal_is_never_seen_applied_before_its_lesson_is_saved() {
    use margin::server::db::{begin_write, Backend};
    let app = waiting_briefly().await;
    let t = teacher(&app, "ana@x.org").await;
    review(&app, &t, true).await;
    let id = edit_end(&turn(&app, &t, ASK).await)["proposalId"].as_str().unwrap().to_string();
    let postgres = Backend::of(&app.state.db) == Backend::Postgres;
    let digest = app.get(&format!("/api/proposals/{id}"), Auth::Bearer(&t.token)).await.json()["digest"].clone();

    let mut holding = begin_write(&app.state.db).await.unwrap();
    if postgres {
        sqlx::query("SELECT id FROM lessons WHERE id = $1 FOR UPDATE").bind(&t.lesson_id).execute(&mut *holding).await.unwrap();
    }
    let req = Request::builder()
        .method(Method::POST)
        .uri(format!("/api/proposals/{id}/apply"))
        .header(header::AUTHORIZATION, format!("Bearer {}", t.token))
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(serde_json::json!({ "digest": digest }).to_string()))
        .unwrap();
    let applying = tokio::spawn(app.router.clone().oneshot(req));
    if postgres {
        // Waits for the state: the apply is blocked on the lesson's row.
        loop {
            let (stuck,): (i64,) = sqlx::query_as(
                "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
            )
            .fetch_one(&app.state.db)
            .await
            .unwrap();
            if stuck > 0 {
                break;
            }
            assert!(!applying.is_finished(), "the apply cannot end while the lesson is held");
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    }
    let p = app.get(&format!("/api/proposals/{id}"), Auth::Bearer(&t.token)).await.json();
    assert_eq!(p["status"], "pending", "{p}");
    if postgres {
        // It waits for the lesson holding nothing of the proposal's: a new
        // proposal for the lesson (which takes the lesson, then its pending
        // proposals) cannot be waiting on it while it waits on that.
        let mut other = app.state.db.begin().await.unwrap();
        let free = sqlx::query("SELECT id FROM proposals WHERE id = $1 FOR UPDATE NOWAIT").bind(&id).execute(&mut *other).await;
        assert!(free.is_ok(), "the waiting apply holds the proposal's row: {free:?}");
        other.rollback().await.unwrap();
    }
    let owner = app.user_id(&t.token).await;
    let mark = margin::server::lessons::proposals::mark(&app.state.db, &owner, &id).await.unwrap().unwrap();
    assert_eq!((mark.revision, mark.reason), (None, None));
    holding.rollback().await.unwrap();

    let res = applying.await.unwrap().unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let mark = margin::server::lessons::proposals::mark(&app.state.db, &owner, &id).await.unwrap().unwrap();
    assert_eq!(mark.revision, Some(2));
    assert_eq!(lesson(&app, &t).await.1, 2);
}

#[tokio::test]
async fn a_discard_is_remembered_and_the_next_turn_tells_the_model_why() {
    let app = waiting_briefly().await;
    let t = teacher(&app, "ana@x.org").await;
    review(&app, &t, true).await;
    let id = edit_end(&turn(&app, &t, ASK).await)["proposalId"].as_str().unwrap().to_string();
    let r = app.decide(&format!("/api/proposals/{id}/discard"), Auth::Bearer(&t.token), json!({"reason": "  Too hard   for year 7 "})).await;
    assert_eq!((r.status, r.json()["status"].as_str()), (StatusCode::OK, Some("discarded")), "{}", r.body);
    assert_eq!(lesson(&app, &t).await.1, 1, "the lesson is unchanged");
    let again = app.decide(&format!("/api/proposals/{id}/apply"), Auth::Bearer(&t.token), json!({})).await;
    assert_eq!(again.status, StatusCode::CONFLICT);
    assert!(again.json()["error"].as_str().unwrap().contains("discarded"));

    turn(&app, &t, "test").await;
    let requests = app.state.ai.scripted().unwrap().requests();
    let history = requests.last().unwrap()["messages"].as_array().unwrap().clone();
    let earlier = history.iter().find(|m| m["role"] == "assistant").unwrap()["content"].as_str().unwrap().to_string();
    assert!(
        earlier.contains("edit_document proposed: Added a fill-in-the-blank exercise on être and avoir — the teacher discarded it, saying: \"Too hard for year 7\""),
        "{earlier}"
    );
    let messages = app.get(&format!("/api/chats/{}/messages", t.session_id), Auth::Bearer(&t.token)).await.json();
    assert_eq!(messages["messages"][1]["toolCalls"][1]["proposal"]["reason"], "Too hard for year 7");
}

#[tokio::test]
async fn applying_after_the_teacher_edited_elsewhere_keeps_both() {
    let app = waiting_briefly().await;
    let t = teacher(&app, "ana@x.org").await;
    review(&app, &t, true).await;
    let id = edit_end(&turn(&app, &t, ASK).await)["proposalId"].as_str().unwrap().to_string();
    // Meanwhile the teacher rewrites the heading.
    let (xml, rev) = lesson(&app, &t).await;
    save(&app, &t, &xml.replace(">Verbs<", ">French verbs<"), rev).await;
    let r = app.decide(&format!("/api/proposals/{id}/apply"), Auth::Bearer(&t.token), json!({})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let (now, rev) = lesson(&app, &t).await;
    assert_eq!(rev, 3);
    assert!(now.contains(">French verbs<") && now.contains(r#"type="fill-blanks""#), "{now}");
}

#[tokio::test]
async fn applying_over_a_change_to_the_same_block_is_refused_with_the_colliding_changes() {
    let app = waiting_briefly().await;
    let t = teacher(&app, "ana@x.org").await;
    // The lesson has a paragraph the wipe removes; the teacher edits it meanwhile.
    common::begin_writing(&app, &t).await;
    let end = edit_end(&turn(&app, &t, "Please do what the lesson says").await);
    assert_eq!(end["status"], "proposed", "a wipe is held even with review off");
    let id = end["proposalId"].as_str().unwrap().to_string();
    let (xml, rev) = lesson(&app, &t).await;
    save(&app, &t, &xml.replace("Read the poem twice", "Read the poem aloud"), rev).await;
    let before = lesson(&app, &t).await;
    let r = app.decide(&format!("/api/proposals/{id}/apply"), Auth::Bearer(&t.token), json!({})).await;
    assert_eq!((r.status, r.json()["code"].as_str()), (StatusCode::CONFLICT, Some("conflict")), "{}", r.body);
    let conflicts = r.json()["conflicts"].as_array().unwrap().clone();
    assert!(conflicts.iter().any(|c| c["text"].as_str().unwrap().starts_with("Removed the paragraph “Read the poem twice")), "{conflicts:?}");
    assert_eq!(lesson(&app, &t).await, before, "nothing saved");
    // It still waits, and can be discarded.
    let p = app.get(&format!("/api/proposals/{id}"), Auth::Bearer(&t.token)).await;
    assert_eq!(p.json()["status"], "pending");
}

#[tokio::test]
async fn a_newer_proposal_replaces_a_pending_one() {
    let app = waiting_briefly().await;
    let t = teacher(&app, "ana@x.org").await;
    review(&app, &t, true).await;
    let first = edit_end(&turn(&app, &t, ASK).await)["proposalId"].as_str().unwrap().to_string();
    let second = edit_end(&turn(&app, &t, ASK).await)["proposalId"].as_str().unwrap().to_string();
    assert_ne!(first, second);
    let r = app.decide(&format!("/api/proposals/{first}/apply"), Auth::Bearer(&t.token), json!({})).await;
    assert_eq!(r.status, StatusCode::CONFLICT);
    assert!(r.json()["error"].as_str().unwrap().contains("newer suggestion"), "{}", r.body);
    let r = app.decide(&format!("/api/proposals/{second}/apply"), Auth::Bearer(&t.token), json!({})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
}

#[tokio::test]
async fn undo_takes_back_one_edit_even_after_later_ones() {
    let app = waiting_briefly().await;
    let t = teacher(&app, "ana@x.org").await;
    // Version 2: the agent adds an exercise. Version 3: the teacher edits the heading.
    turn(&app, &t, ASK).await;
    let (xml, rev) = lesson(&app, &t).await;
    assert_eq!(rev, 2);
    save(&app, &t, &xml.replace(">Verbs<", ">French verbs<"), rev).await;
    let r = app.post_json(&format!("/api/lessons/{}/revisions/2/undo", t.lesson_id), Auth::Bearer(&t.token), json!({})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.json()["outcome"]["Saved"]["revision"], 4);
    assert_eq!(r.json()["changes"][0]["text"], "Removed exercise 1 (Fill in the blanks, 3 blanks)");
    let (now, _) = lesson(&app, &t).await;
    assert!(now.contains(">French verbs<") && !now.contains("exercise"), "{now}");
    let history = app.get(&format!("/api/lessons/{}/revisions", t.lesson_id), Auth::Bearer(&t.token)).await.json();
    assert_eq!(history[0]["summary"], "Undid version 2 (Added a fill-in-the-blank exercise on être and avoir)");
    // Undone once: a second undo of it is refused, and nothing changes.
    let r = app.post_json(&format!("/api/lessons/{}/revisions/2/undo", t.lesson_id), Auth::Bearer(&t.token), json!({})).await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.body);
    assert!(r.json()["error"].as_str().unwrap().contains("already undone"), "{}", r.body);
    assert_eq!(lesson(&app, &t).await.1, 4);
    // The reply whose edit it was says so when the chat is read (a reload).
    let chat = app.get(&format!("/api/chats/{}/messages", t.session_id), Auth::Bearer(&t.token)).await.json();
    let edit = chat["messages"][1]["toolCalls"].as_array().unwrap().iter().find(|c| c["revision"] == 2).cloned().unwrap_or_default();
    assert_eq!(edit["undone"], 4, "{chat}");

    // Version 3 changed the heading and version 4 only the exercise, so
    // version 3 can be undone on its own too.
    let r = app.post_json(&format!("/api/lessons/{}/revisions/3/undo", t.lesson_id), Auth::Bearer(&t.token), json!({})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert!(lesson(&app, &t).await.0.contains(">Verbs<"));

    // Undoing a change whose block was changed again since is refused.
    let (xml, rev) = lesson(&app, &t).await;
    let a = save(&app, &t, &xml.replace(">Verbs<", ">Verbes<"), rev).await;
    let (xml, rev) = lesson(&app, &t).await;
    save(&app, &t, &xml.replace(">Verbes<", ">Les verbes<"), rev).await;
    let before = lesson(&app, &t).await;
    let r = app.post_json(&format!("/api/lessons/{}/revisions/{a}/undo", t.lesson_id), Auth::Bearer(&t.token), json!({})).await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.body);
    assert_eq!(r.json()["conflicts"][0]["text"], "The heading “Verbes”: “Verbes” → “Verbs”");
    assert_eq!(lesson(&app, &t).await, before);

    // The first version has nothing to go back to; others' lessons are not found.
    let r = app.post_json(&format!("/api/lessons/{}/revisions/1/undo", t.lesson_id), Auth::Bearer(&t.token), json!({})).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    let ben = app.sign_up("ben@x.org").await;
    let r = app.post_json(&format!("/api/lessons/{}/revisions/2/undo", t.lesson_id), Auth::Bearer(&ben), json!({})).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn review_is_a_setting_of_the_teachers_own_lesson() {
    let app = waiting_briefly().await;
    let t = teacher(&app, "ana@x.org").await;
    let ben = app.sign_up("ben@x.org").await;
    let r = app.put_json(&format!("/api/lessons/{}/review", t.lesson_id), Auth::Bearer(&ben), json!({"reviewEdits": true})).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    review(&app, &t, true).await;
    let owner = app.user_id(&t.token).await;
    assert!(lessons::get_editable(&app.state.db, &owner, &t.lesson_id).await.unwrap().review_edits);
    review(&app, &t, false).await;
    let end = edit_end(&turn(&app, &t, ASK).await);
    assert_eq!(end["status"], "success", "review off: edits land");
}

/// The text of a turn's reply.
fn reply_text(events: &[SseMessage]) -> String {
    events.iter().filter(|e| e.event == "text").map(|e| serde_json::from_str::<Value>(&e.data).unwrap()["content"].as_str().unwrap().to_string()).collect()
}

#[tokio::test]
async fn the_agent_reads_the_teachers_other_lessons_and_never_another_teachers() {
    let app = waiting_briefly().await;
    let ana = teacher(&app, "ana@example.com").await;
    let ben = teacher(&app, "ben@example.com").await;
    let ana_id = app.user_id(&ana.token).await;
    let other = lessons::create(&app.state.db, &ana_id, "Volcanoes").await.unwrap();
    lessons::save_document(
        &app.state.db,
        &ana_id,
        &other.id,
        "<lesson><h1 id=\"h-1\">Volcanoes</h1><p id=\"p-1\">Magma rises.</p></lesson>",
        other.revision,
        margin::models::Author::Teacher,
        "Wrote it",
    )
    .await
    .unwrap();

    // Her own other lesson, by its id: read whole.
    let events = turn(&app, &ana, &format!("Read lesson {}", other.id)).await;
    let end: Value = serde_json::from_str(&events.iter().find(|e| e.event == "tool_end").unwrap().data).unwrap();
    assert_eq!(end["status"], "success", "{end}");
    assert!(end["output"].as_str().unwrap().contains("Magma rises."), "{end}");
    assert!(reply_text(&events).contains("“Volcanoes”"), "{}", reply_text(&events));

    // Ben's agent, given Ana's lesson id: refused, and nothing of it shown.
    let events = turn(&app, &ben, &format!("Read lesson {}", other.id)).await;
    let end: Value = serde_json::from_str(&events.iter().find(|e| e.event == "tool_end").unwrap().data).unwrap();
    assert_eq!(end["status"], "error", "{end}");
    assert!(end["error"].as_str().unwrap().contains("There is no lesson"), "{end}");
    let all: String = events.iter().map(|e| e.data.as_str()).collect();
    assert!(!all.contains("Magma") && !all.contains("Volcanoes"), "{all}");
}

#[tokio::test]
async fn the_agent_makes_a_lesson_of_its_own_for_the_teacher_and_leaves_this_one_alone() {
    let app = waiting_briefly().await;
    let ana = teacher(&app, "ana@example.com").await;
    let ben = teacher(&app, "ben@example.com").await;
    let before = lesson(&app, &ana).await;

    // An invalid lesson goes back to the model, which corrects it: one lesson made.
    let events = turn(&app, &ana, "Make a quiz version as its own broken lesson").await;
    let ends: Vec<Value> = events.iter().filter(|e| e.event == "tool_end").map(|e| serde_json::from_str(&e.data).unwrap()).collect();
    assert_eq!(ends.len(), 2, "{ends:?}");
    assert_eq!(ends[0]["status"], "error");
    assert!(ends[0]["error"].as_str().unwrap().contains("The lesson was not made"), "{}", ends[0]);
    assert_eq!(ends[1]["status"], "success");
    let made = &ends[1]["lesson"];
    assert_eq!(made["title"], "Quiz: the sun and the moon");
    let id = made["id"].as_str().unwrap().to_string();

    // Ana's, its first version the assistant's; this lesson is untouched.
    let r = app.get(&format!("/api/lessons/{id}"), Auth::Bearer(&ana.token)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert!(r.json()["documentXml"].as_str().unwrap().contains("The sun is a star."), "{}", r.body);
    let author: String = sqlx::query_scalar("SELECT author FROM lesson_revisions WHERE lesson_id = $1 AND number = 1").bind(&id).fetch_one(&app.state.db).await.unwrap();
    assert_eq!(author, "agent");
    assert_eq!(lesson(&app, &ana).await, before);
    let list = app.get("/api/lessons", Auth::Bearer(&ana.token)).await;
    assert_eq!(list.body.matches("Quiz: the sun and the moon").count(), 1, "{}", list.body);
    // Nobody else's.
    assert_eq!(app.get(&format!("/api/lessons/{id}"), Auth::Bearer(&ben.token)).await.status, StatusCode::NOT_FOUND);

    // The stored reply keeps the card.
    let r = app.get(&format!("/api/chats/{}/messages", ana.session_id), Auth::Bearer(&ana.token)).await;
    let steps = r.json()["messages"][1]["toolCalls"].clone();
    assert_eq!(steps[1]["lesson"]["id"].as_str(), Some(id.as_str()), "{steps}");
}
