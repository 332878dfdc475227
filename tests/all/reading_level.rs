//! Reading levels in the product: the teacher's page says the lesson's
//! level, a change list says when an edit moved it, and a turn asked for a
//! grade measures, revises and measures again until the lesson is in the
//! band, or says why it cannot.
#![cfg(feature = "ssr")]

use crate::common;

use axum::http::StatusCode;
use common::{start_turn, teacher, Auth, TestApp};
use margin::{chat::sse::SseParser, lesson};
use serde_json::{json, Value};

const HARD: &str = "Photosynthesis transforms electromagnetic radiation into chemical potential energy, facilitating carbohydrate biosynthesis within chloroplast organelles of photosynthetic eukaryotic organisms.";

fn lesson_of(paragraph: &str) -> String {
    format!("<lesson lang=\"en\">\n  <h1 id=\"h1\">Plants</h1>\n  <p id=\"p1\">{paragraph}</p>\n  <p id=\"p2\">{paragraph}</p>\n  <p id=\"p3\">{paragraph}</p>\n</lesson>")
}

async fn save(app: &TestApp, token: &str, id: &str, xml: &str) -> Value {
    let revision: i64 = sqlx::query_scalar("SELECT revision FROM lessons WHERE id = $1").bind(id).fetch_one(&app.state.db).await.unwrap();
    let r = app.put_json(&format!("/api/lessons/{id}/document"), Auth::Bearer(token), json!({"xml": xml, "baseRevision": revision})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    r.json()
}

/// The reply's text, and what its edits changed (each change's words).
async fn reply(app: &TestApp, token: &str, chat: &str, asked: &str) -> (String, Vec<String>) {
    let res = start_turn(app, token, chat, asked).await;
    let events = common::read_events(&mut res.into_body(), &mut SseParser::new(), usize::MAX).await;
    let done = events.iter().find(|e| e.event == "done").unwrap_or_else(|| panic!("{events:?}"));
    let text = serde_json::from_str::<Value>(&done.data).unwrap()["final"]["text"].as_str().unwrap().to_string();
    let changes = events
        .iter()
        .filter(|e| e.event == "tool_end")
        .flat_map(|e| serde_json::from_str::<Value>(&e.data).unwrap()["changes"].as_array().cloned().unwrap_or_default())
        .map(|c| c["text"].as_str().unwrap_or_default().to_string())
        .collect();
    (text, changes)
}

#[tokio::test]
async fn a_turn_asked_for_a_grade_measures_revises_and_lands_in_the_band() {
    let app = common::app().await;
    let t = teacher(&app, "t@x.org").await;
    save(&app, &t.token, &t.lesson_id, &lesson_of(HARD)).await;
    // The grade the scripted model's plain rewrite reads at, measured the same way.
    let plain = lesson::reading::of_lesson(&lesson::parse(&lesson_of(margin::scripted::PLAIN_SENTENCES)).unwrap()).unwrap().grade.unwrap();
    let target = plain.round();
    let hard = lesson::reading::of_lesson(&lesson::parse(&lesson_of(HARD)).unwrap()).unwrap().grade.unwrap();
    assert!(hard - target > 0.5, "the hard text starts out of the band: {hard} vs {target}");

    // The teacher's page says the level.
    let page = app.get(&format!("/lessons/{}", t.lesson_id), Auth::Cookie(&t.token)).await;
    assert!(page.body.contains(&format!("Reading level: grade {hard:.1}")), "{}", page.body);

    let (said, changes) = reply(&app, &t.token, &t.session_id, &format!("Bring this lesson to the reading level for grade {target}.")).await;
    let xml = app.get(&format!("/api/lessons/{}", t.lesson_id), Auth::Bearer(&t.token)).await.json()["documentXml"].as_str().unwrap().to_string();
    let now = lesson::reading::of_lesson(&lesson::parse(&xml).unwrap()).unwrap().grade.unwrap();
    assert!((now - target).abs() <= 0.5, "landed at {now}, target {target}");
    assert!(said.contains(&format!("Reading level of the lesson: grade {now:.1}")) && said.contains("Within ±0.5"), "{said}");
    assert!(xml.contains("<p id=\"p1\">") && xml.contains("<h1 id=\"h1\">Plants</h1>"), "ids and heading kept: {xml}");
    // The edit's change list says how the level moved.
    assert!(changes.contains(&format!("Reading level: grade {hard:.1} → grade {now:.1}")), "{changes:?}");
}

#[tokio::test]
async fn a_lesson_too_short_to_measure_is_left_alone_and_the_reply_says_why() {
    let app = common::app().await;
    let t = teacher(&app, "t@x.org").await;
    save(&app, &t.token, &t.lesson_id, "<lesson><h1 id=\"h1\">Plants</h1><p id=\"p1\">Plants grow.</p></lesson>").await;
    let before = app.get(&format!("/api/lessons/{}", t.lesson_id), Auth::Bearer(&t.token)).await.json()["revision"].clone();
    let (said, changes) = reply(&app, &t.token, &t.session_id, "Bring this lesson to the reading level for grade 3.").await;
    assert!(changes.is_empty(), "{changes:?}");
    assert!(said.contains("I could not bring the lesson to grade 3") && said.contains("fewer than 30 words"), "{said}");
    assert_eq!(app.get(&format!("/api/lessons/{}", t.lesson_id), Auth::Bearer(&t.token)).await.json()["revision"], before);
}
