//! The class loop: students' answers flowing back to the teacher's
//! assistant. Wrong answers are told to it only when the teacher asked (off
//! by default), a class checking together is one turn that suggests and
//! never edits; "Improve with these results" starts a turn whose changes
//! carry their evidence and wait for the teacher, whoever else asks.
#![cfg(feature = "ssr")]

use crate::common;

use axum::{
    body::Body,
    http::{header, Method, Request, StatusCode},
};
use common::{
    classes::{class, student, Class},
    teacher,
    waits::{advance, count, settle, until},
    Auth, TestApp,
};
use margin::{
    chat::sse::{SseMessage, SseParser},
    server::reactions::gate::DEBOUNCE_MS,
};
use serde_json::{json, Value};
use tower::ServiceExt;

const WAITING: &str = "SELECT COUNT(*) FROM lesson_pending_events";
const DONE_REPLIES: &str = "SELECT COUNT(*) FROM chat_messages WHERE role = 'assistant' AND status = 'complete'";
const USER_MESSAGES: &str = "SELECT COUNT(*) FROM chat_messages WHERE role = 'user'";

/// A student of the class answers blank b1 with `b1` and checks their sheet.
async fn answer_and_check(app: &TestApp, c: &Class, token: &str, b1: &str) {
    let base = format!("/api/learn/lessons/{}", c.lesson);
    let seen = app.get(&base, Auth::Bearer(token)).await.json()["seen"].as_i64().unwrap();
    let r = app.put_json(&format!("{base}/answers"), Auth::Bearer(token), json!({"seen": seen, "answers": {"b1": b1, "s1": "false"}})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let r = app.post_json(&format!("{base}/check"), Auth::Bearer(token), json!({})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
}

async fn document(app: &TestApp, c: &Class) -> String {
    app.get(&format!("/api/lessons/{}", c.lesson), Auth::Bearer(&c.teacher)).await.json()["documentXml"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn wrong_answers_reach_the_assistant_only_when_asked_and_a_class_checking_together_is_one_turn_that_suggests() {
    let app = common::app().await;
    let c = class(&app, "t@x.org").await;
    let students = [student(&app, "ana@x.org", &c.code).await, student(&app, "ben@x.org", &c.code).await, student(&app, "cy@x.org", &c.code).await];

    // Off until the teacher switches it on: wrong answers queue nothing.
    assert_eq!(app.get("/api/account/reactions", Auth::Bearer(&c.teacher)).await.json()["tellWrongAnswers"], false);
    answer_and_check(&app, &c, &students[0], "es").await;
    assert_eq!(count(&app, WAITING).await, 0);
    advance(&app, DEBOUNCE_MS * 10);
    settle().await;
    assert_eq!(count(&app, USER_MESSAGES).await, 0);

    // Switched on (a student cannot switch it for them).
    let r = app.send_json(Method::PATCH, "/api/account/reactions", Auth::Bearer(&students[0]), json!({"tellWrongAnswers": true})).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    let r = app.send_json(Method::PATCH, "/api/account/reactions", Auth::Bearer(&c.teacher), json!({"tellWrongAnswers": true})).await;
    assert_eq!((r.status, r.json()), (StatusCode::OK, json!({"reactToEvents": true, "tellWrongAnswers": true})));
    let before = document(&app, &c).await;

    // The class checks within the debounce: three events, one turn.
    answer_and_check(&app, &c, &students[0], "es").await;
    answer_and_check(&app, &c, &students[1], " ES ").await;
    answer_and_check(&app, &c, &students[2], "serai").await; // right: not told
    assert_eq!(count(&app, WAITING).await, 2);
    advance(&app, DEBOUNCE_MS);
    until(&app, DONE_REPLIES, 1).await;
    settle().await;
    assert_eq!(count(&app, USER_MESSAGES).await, 1, "one turn for the class");
    assert_eq!(count(&app, WAITING).await, 0);

    // The model read each check: the item, the quoted answer, the key, and
    // which check it was; never who.
    let requests = app.state.ai.scripted().unwrap().requests();
    let asked = requests.last().unwrap().to_string();
    assert!(asked.contains(r#"blank \"b1\": gave \"es\" (right: \"serai (also accepted: serais)\")"#), "{asked}");
    assert!(asked.contains("their second check"), "ana's second check: {asked}");
    assert!(asked.contains("their first check"), "ben's first: {asked}");
    for who in ["ana@x.org", "ben@x.org", "cy@x.org"] {
        assert!(!requests.iter().any(|r| r.to_string().contains(who)), "{who} reached the model");
    }

    // It tried to edit, was refused, and suggested instead: the lesson is as
    // it was, with no proposal waiting.
    let messages = app.get(&format!("/api/chats/{}/messages", c.chat), Auth::Bearer(&c.teacher)).await.json();
    let all = messages.to_string();
    assert!(all.contains("Students got answers wrong"), "the note shows in the chat: {all}");
    assert!(all.contains("I left the lesson as it is. Suggestion: add a hint"), "{all}");
    assert!(all.contains("started by the app, not by the teacher"), "the refusal is a step: {all}");
    assert_eq!(document(&app, &c).await, before);
    assert_eq!(count(&app, "SELECT COUNT(*) FROM proposals").await, 0);

    // Switched off, what waits is dropped and nothing more is queued; the
    // other switch ("react to new material") leaves wrong answers alone.
    answer_and_check(&app, &c, &students[1], "es").await;
    assert_eq!(count(&app, WAITING).await, 1);
    let r = app.send_json(Method::PATCH, "/api/account/reactions", Auth::Bearer(&c.teacher), json!({"reactToEvents": false})).await;
    assert_eq!(r.json()["tellWrongAnswers"], true);
    assert_eq!(count(&app, WAITING).await, 1);
    let r = app.post_form("/settings/wrong-answers", Auth::Cookie(&c.teacher), &[("lesson", &c.lesson)]).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.body);
    assert_eq!(r.headers[header::LOCATION], format!("/lessons/{}/results", c.lesson));
    assert_eq!(count(&app, WAITING).await, 0);
    answer_and_check(&app, &c, &students[1], "es").await;
    assert_eq!(count(&app, WAITING).await, 0);
    assert_eq!(app.get("/api/account/reactions", Auth::Bearer(&c.teacher)).await.json()["tellWrongAnswers"], false);
}

/// Follows a turn's events until it waits for the teacher or ends.
async fn follow(app: &TestApp, token: &str, turn: &str) -> Vec<SseMessage> {
    let req = Request::builder().uri(format!("/api/chat/turns/{turn}/events")).header(header::AUTHORIZATION, format!("Bearer {token}")).body(Body::empty()).unwrap();
    let res = app.router.clone().oneshot(req).await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let mut body = res.into_body();
    let mut parser = SseParser::new();
    let mut events: Vec<SseMessage> = Vec::new();
    while !events.iter().any(|e| e.event == "awaiting_approval" || e.event == "done") {
        let more = common::read_events(&mut body, &mut parser, 1).await;
        assert!(!more.is_empty(), "the stream ended: {events:?}");
        events.extend(more);
    }
    events
}

fn data(events: &[SseMessage], name: &str) -> Vec<Value> {
    events.iter().filter(|e| e.event == name).map(|e| serde_json::from_str(&e.data).unwrap()).collect()
}

#[tokio::test]
async fn improve_with_these_results_proposes_with_the_evidence_and_holds_it_whatever_the_lessons_setting() {
    let app = common::app().await;
    let c = class(&app, "t@x.org").await;
    let path = format!("/api/lessons/{}/improve", c.lesson);

    // Nobody has answered: nothing to improve from (the form says why).
    let r = app.post_json(&path, Auth::Bearer(&c.teacher), json!({})).await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.body);
    let r = app.post_form(&format!("/lessons/{}/improve", c.lesson), Auth::Cookie(&c.teacher), &[]).await;
    assert_eq!(r.headers[header::LOCATION], format!("/lessons/{}/results?improve=empty", c.lesson));
    let page = app.get(&format!("/lessons/{}/results?improve=empty", c.lesson), Auth::Cookie(&c.teacher)).await;
    assert!(page.body.contains("No student has answered this lesson yet"), "{}", page.body);

    let mut tokens = Vec::new();
    for (email, b1) in [("ana@x.org", "es"), ("ben@x.org", "  ES "), ("cy@x.org", "serais")] {
        let s = student(&app, email, &c.code).await;
        let r = app.put_json(&format!("/api/learn/lessons/{}/answers", c.lesson), Auth::Bearer(&s), json!({"seen": 0, "answers": {"b1": b1}})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        tokens.push(s);
    }
    // Only the lesson's teacher may: a student is refused, another teacher
    // finds nothing, a chat of another lesson is not theirs to name.
    let r = app.post_json(&path, Auth::Bearer(&tokens[0]), json!({})).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    let other = teacher(&app, "other@x.org").await;
    let r = app.post_json(&path, Auth::Bearer(&other.token), json!({})).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);
    let r = app.post_json(&path, Auth::Bearer(&c.teacher), json!({"sessionId": other.session_id})).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);
    assert_eq!(count(&app, USER_MESSAGES).await, 0);

    // With edits applied as they come, a change from results still waits.
    let r = app.put_json(&format!("/api/lessons/{}/review", c.lesson), Auth::Bearer(&c.teacher), json!({"editMode": "auto"})).await;
    assert_eq!(r.status, StatusCode::OK);
    let before = document(&app, &c).await;
    let r = app.post_json(&path, Auth::Bearer(&c.teacher), json!({})).await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.body);
    let started = r.json();
    assert_eq!(started["chatId"], c.chat.as_str(), "in the lesson's latest chat");
    let events = follow(&app, &c.teacher, started["turnId"].as_str().unwrap()).await;
    // Announced as its name comes, then with its arguments before it runs.
    let edit = data(&events, "tool_input").into_iter().filter(|s| s["tool"] == "edit_document").last().unwrap_or_else(|| panic!("no edit proposed: {events:?}"));
    assert_eq!(edit["args"]["evidence"], "b1: 3 answered, 1 right; wrong: “es” ×2", "{edit}");
    let end = data(&events, "tool_end").into_iter().find(|e| e["tool"] == "edit_document").unwrap();
    assert_eq!(end["status"], "proposed", "{end}");
    assert_eq!(document(&app, &c).await, before, "nothing changed until the teacher applies");
    assert_eq!(count(&app, "SELECT COUNT(*) FROM proposals WHERE status = 'pending'").await, 1);

    // The chat shows the button's note, not the prompt; the teacher applies.
    until(&app, DONE_REPLIES, 1).await;
    let messages = app.get(&format!("/api/chats/{}/messages", c.chat), Auth::Bearer(&c.teacher)).await.json().to_string();
    assert!(messages.contains("Improve with these results"), "{messages}");
    let proposal = end["proposalId"].as_str().unwrap();
    let r = app.decide(&format!("/api/proposals/{proposal}/apply"), Auth::Bearer(&c.teacher), json!({})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert!(document(&app, &c).await.contains("Hint from the results"));

    // Held and pausing with the default setting, by the form as well.
    let r = app.put_json(&format!("/api/lessons/{}/review", c.lesson), Auth::Bearer(&c.teacher), json!({"editMode": "destructive"})).await;
    assert_eq!(r.status, StatusCode::OK);
    let r = app.post_form(&format!("/lessons/{}/improve", c.lesson), Auth::Cookie(&c.teacher), &[]).await;
    assert_eq!((r.status, r.headers[header::LOCATION].to_str().unwrap()), (StatusCode::SEE_OTHER, format!("/lessons/{}", c.lesson).as_str()));
    let turn: String = sqlx::query_scalar("SELECT turn_id FROM chat_messages WHERE role = 'assistant' ORDER BY seq DESC LIMIT 1").fetch_one(&app.state.db).await.unwrap();
    let events = follow(&app, &c.teacher, &turn).await;
    assert_eq!(data(&events, "awaiting_approval").len(), 1, "{events:?}");
    // Kept with the paused reply: resumed after a restart, it is still a
    // turn from results.
    until(&app, &format!("SELECT COUNT(*) FROM chat_messages WHERE turn_id = '{turn}' AND resume_state LIKE '%\"kind\":\"results\"%'"), 1).await;
}

/// The lesson with a rubric on its short-answer question (3 points).
fn with_rubric() -> String {
    common::classes::LESSON.replace(
        "<answer>Model answer kept secret</answer></question>",
        r#"<answer>Model answer kept secret</answer><rubric><criterion name="Reason"><level points="2">A clear reason.</level><level points="1">A vague reason.</level><level points="0">None.</level></criterion><criterion name="Sentence"><level points="1">A full sentence.</level><level points="0">Not a sentence.</level></criterion></rubric></question>"#,
    )
}

#[tokio::test]
async fn drafted_feedback_reaches_students_only_as_the_teacher_approved_it() {
    let app = common::app().await;
    let c = class(&app, "t@x.org").await;
    common::classes::save_xml(&app, &c.teacher, &c.lesson, &with_rubric()).await;
    let r = app.post_json(&format!("/api/lessons/{}/publish", c.lesson), Auth::Bearer(&c.teacher), json!({})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let draft = format!("/api/lessons/{}/feedback/draft", c.lesson);
    let r = app.post_json(&draft, Auth::Bearer(&c.teacher), json!({})).await;
    assert_eq!(r.status, StatusCode::CONFLICT, "nobody has answered: {}", r.body);

    let mut students = Vec::new();
    for (email, q3, w1) in [("ana@x.org", "Because it is everywhere.", "I am tall."), ("ben@x.org", "useful", ""), ("cy@x.org", "It helps.", "")] {
        let s = student(&app, email, &c.code).await;
        let r = app.put_json(&format!("/api/learn/lessons/{}/answers", c.lesson), Auth::Bearer(&s), json!({"seen": 0, "answers": {"q3": q3, "w1": w1}})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        students.push(s);
    }
    // Only the lesson's teacher may ask.
    assert_eq!(app.post_json(&draft, Auth::Bearer(&students[0]), json!({})).await.status, StatusCode::FORBIDDEN);
    let other = teacher(&app, "other@x.org").await;
    assert_eq!(app.post_json(&draft, Auth::Bearer(&other.token), json!({})).await.status, StatusCode::NOT_FOUND);
    assert_eq!(app.post_json(&draft, Auth::Bearer(&c.teacher), json!({"itemId": "b1"})).await.status, StatusCode::NOT_FOUND, "b1 is not an open item");

    let r = app.post_json(&draft, Auth::Bearer(&c.teacher), json!({})).await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.body);
    let events = follow(&app, &c.teacher, r.json()["turnId"].as_str().unwrap()).await;
    let ends = data(&events, "tool_end");
    let tools: Vec<&str> = ends.iter().map(|e| e["tool"].as_str().unwrap()).collect();
    assert_eq!(tools, ["read_open_answers", "draft_feedback", "read_open_answers", "draft_feedback"], "{ends:?}");
    assert!(ends.iter().all(|e| e["status"] != "error"), "{ends:?}");
    // Students reached the model by number only, and the tools are declared in this turn alone.
    let requests = app.state.ai.scripted().unwrap().requests();
    let sent = requests.last().unwrap().to_string();
    assert!(sent.contains("Student 1: “Because it is everywhere.”") && !sent.contains("ana@x.org"), "{sent}");

    // Three drafts wait: q3 for all three (with points by the rubric), w1 for the one who wrote.
    let queue = app.get(&format!("/api/lessons/{}/feedback", c.lesson), Auth::Bearer(&c.teacher)).await.json();
    let queue = queue.as_array().unwrap().clone();
    let found: Vec<(String, String, Option<i64>)> = queue.iter().map(|d| (d["email"].as_str().unwrap().into(), d["itemId"].as_str().unwrap().into(), d["points"].as_i64())).collect();
    assert_eq!(
        found,
        [
            ("ana@x.org".into(), "q3".into(), Some(2)),
            ("ana@x.org".into(), "w1".into(), None),
            ("ben@x.org".into(), "q3".into(), Some(2)),
            ("cy@x.org".into(), "q3".into(), Some(2)),
        ]
    );
    assert_eq!(queue[0]["maxPoints"], 3);
    let drafted = queue[2]["feedback"].as_str().unwrap().to_string();
    assert!(drafted.contains("Add a second reason"), "{drafted}");
    assert_eq!(app.get(&format!("/api/lessons/{}/feedback", c.lesson), Auth::Bearer(&other.token)).await.status, StatusCode::NOT_FOUND);
    assert_eq!(app.get(&format!("/api/lessons/{}/feedback", c.lesson), Auth::Bearer(&students[0])).await.status, StatusCode::FORBIDDEN);

    // No draft reaches a student: not their sheet, their page or their tutor.
    let seen_by = |token: &str| {
        let token = token.to_string();
        let app = &app;
        let lesson = c.lesson.clone();
        async move {
            let sheet = app.get(&format!("/api/learn/lessons/{lesson}"), Auth::Bearer(&token)).await.body;
            let page = app.get(&format!("/learn/lessons/{lesson}"), Auth::Cookie(&token)).await.body;
            let home = app.get("/api/learn", Auth::Bearer(&token)).await.body;
            format!("{sheet}\n{page}\n{home}")
        }
    };
    for s in &students {
        let everything = seen_by(s).await;
        assert!(!everything.contains("second reason") && !everything.contains("Feedback from your teacher"), "{everything}");
    }
    let r = app.post_json(&format!("/api/lessons/{}/chats", c.lesson), Auth::Bearer(&students[1]), json!({})).await;
    let chat = r.json()["id"].as_str().unwrap().to_string();
    let res = common::start_turn(&app, &students[1], &chat, "Help me with this exercise").await;
    common::read_events(&mut res.into_body(), &mut SseParser::new(), usize::MAX).await;
    let tutor = app.state.ai.scripted().unwrap().requests().last().unwrap().to_string();
    assert!(!tutor.contains("second reason"), "a draft reached the tutor: {tutor}");

    // Approve ana's as drafted, edit ben's, discard cy's; ana's writing waits.
    let ids = |n: usize| (queue[n]["studentId"].as_str().unwrap().to_string(), queue[n]["itemId"].as_str().unwrap().to_string());
    let (ana, _) = ids(0);
    let (ben, _) = ids(2);
    let (cy, _) = ids(3);
    let approve = format!("/api/lessons/{}/feedback/approve", c.lesson);
    let r = app.post_json(&approve, Auth::Bearer(&other.token), json!({"drafts": [{"studentId": ana, "itemId": "q3"}]})).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "another teacher cannot approve");
    let r = app.post_json(&approve, Auth::Bearer(&c.teacher), json!({"drafts": [{"studentId": ana, "itemId": "q3"}]})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let r = app.post_json(&approve, Auth::Bearer(&c.teacher), json!({"drafts": [{"studentId": ben, "itemId": "q3", "feedback": "A start: say why it is useful.", "points": 9}]})).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "beyond the rubric: {}", r.body);
    let r = app.post_json(&approve, Auth::Bearer(&c.teacher), json!({"drafts": [{"studentId": ben, "itemId": "q3", "feedback": "A start: say why it is useful.", "points": 1}]})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let r = app.post_json(&format!("/api/lessons/{}/feedback/discard", c.lesson), Auth::Bearer(&c.teacher), json!({"drafts": [{"studentId": cy, "itemId": "q3"}]})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let left = app.get(&format!("/api/lessons/{}/feedback", c.lesson), Auth::Bearer(&c.teacher)).await.json();
    assert_eq!(left.as_array().unwrap().len(), 1, "ana's writing still waits: {left}");

    // Each student sees exactly what was approved, with a notice once.
    let ana_sheet = app.get(&format!("/api/learn/lessons/{}", c.lesson), Auth::Bearer(&students[0])).await.json();
    assert_eq!(ana_sheet["feedbackNotice"], "Your teacher left feedback on one of your answers.");
    let html = ana_sheet["html"].as_str().unwrap();
    assert!(html.contains("Feedback from your teacher") && html.contains(&queue[0]["feedback"].as_str().unwrap().replace('\'', "&#39;")) && html.contains("2 of 3 points"), "{html}");
    assert!(!html.contains("I am tall.</textarea><div class=\"feedback\""), "the writing's draft is not shown: {html}");
    assert_eq!(app.get(&format!("/api/learn/lessons/{}", c.lesson), Auth::Bearer(&students[0])).await.json()["feedbackNotice"], Value::Null);
    let ben_sheet = seen_by(&students[1]).await;
    assert!(ben_sheet.contains("A start: say why it is useful.") && ben_sheet.contains("1 of 3 points") && !ben_sheet.contains("second reason"), "{ben_sheet}");
    let cy_sheet = seen_by(&students[2]).await;
    assert!(!cy_sheet.contains("Feedback from your teacher") && !cy_sheet.contains("second reason"), "{cy_sheet}");
    // Ana's remaining draft is still nowhere on her side.
    let ana_all = seen_by(&students[0]).await;
    assert_eq!(ana_all.matches("Feedback from your teacher").count(), 2, "the sheet JSON and the page, once each: {ana_all}");
    // The teacher sees the approved feedback on the student's work.
    let work = app.get(&format!("/lessons/{}/results/{ben}", c.lesson), Auth::Cookie(&c.teacher)).await;
    assert!(work.body.contains("A start: say why it is useful."), "{}", work.body);
}

#[tokio::test]
async fn a_draft_that_does_not_fit_the_item_is_refused_whole() {
    use margin::{agent::tools::FeedbackDraft, server::classes::feedback::save_drafts};
    let app = common::app().await;
    let c = class(&app, "t@x.org").await;
    let s = student(&app, "ana@x.org", &c.code).await;
    let r = app.put_json(&format!("/api/learn/lessons/{}/answers", c.lesson), Auth::Bearer(&s), json!({"seen": 0, "answers": {"q3": "Because."}})).await;
    assert_eq!(r.status, StatusCode::OK);
    let owner = app.user_id(&c.teacher).await;
    let draft = |student: usize, points: Option<u32>| FeedbackDraft { student, feedback: "Good.".into(), points };
    let db = &app.state.db;
    let said = save_drafts(db, &owner, &c.lesson, "q3", vec![draft(1, Some(1))]).await.unwrap().unwrap_err();
    assert!(said.contains("no rubric, so no points"), "{said}");
    let said = save_drafts(db, &owner, &c.lesson, "q3", vec![draft(1, None), draft(2, None)]).await.unwrap().unwrap_err();
    assert!(said.contains("There is no student 2"), "{said}");
    let said = save_drafts(db, &owner, &c.lesson, "w1", vec![draft(1, None)]).await.unwrap().unwrap_err();
    assert!(said.contains("Student 1 did not answer w1"), "{said}");
    let said = save_drafts(db, &owner, &c.lesson, "b1", vec![draft(1, None)]).await.unwrap().unwrap_err();
    assert!(said.contains("no open item \"b1\""), "{said}");
    assert_eq!(count(&app, "SELECT COUNT(*) FROM answer_feedback").await, 0, "nothing kept from a refused call");
    assert_eq!(save_drafts(db, &owner, &c.lesson, "q3", vec![draft(1, None)]).await.unwrap(), Ok(1));
}
