//! Versions of a lesson: "Make a version" copies the lesson into a new one
//! linked to it, keeping its ids, and the assistant brings the copy to the
//! level asked for, measured; the core's Versions page lists each version
//! with its measured level.
#![cfg(feature = "ssr")]

mod common;

use axum::http::StatusCode;
use common::{classes::save_xml, teacher, waits::until, Auth};
use margin::lesson;
use serde_json::{json, Value};

const HARD: &str = "Photosynthesis transforms electromagnetic radiation into chemical potential energy, facilitating carbohydrate biosynthesis within chloroplast organelles of photosynthetic eukaryotic organisms.";

fn lesson_of(paragraph: &str) -> String {
    format!("<lesson lang=\"en\">\n  <h1 id=\"h1\">Plants</h1>\n  <p id=\"p1\">{paragraph}</p>\n  <p id=\"p2\">{paragraph}</p>\n  <p id=\"p3\">{paragraph}</p>\n  <exercise id=\"e1\" type=\"true-false\"><statement id=\"s1\" answer=\"true\">Plants need light.</statement></exercise>\n</lesson>")
}

const DONE_REPLIES: &str = "SELECT COUNT(*) FROM chat_messages WHERE role = 'assistant' AND status = 'complete'";

#[tokio::test]
async fn a_version_at_a_grade_is_a_linked_copy_the_assistant_brings_into_the_band() {
    let app = common::app().await;
    let t = teacher(&app, "t@x.org").await;
    save_xml(&app, &t.token, &t.lesson_id, &lesson_of(HARD)).await;
    let plain = lesson::reading::of_lesson(&lesson::parse(&lesson_of(margin::scripted::PLAIN_SENTENCES)).unwrap()).unwrap().grade.unwrap();
    let target = plain.round();

    let r = app.post_json(&format!("/api/lessons/{}/versions", t.lesson_id), Auth::Bearer(&t.token), json!({"kind": "grade", "grade": target})).await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.body);
    let version = r.json()["lessonId"].as_str().unwrap().to_string();
    until(&app, DONE_REPLIES, 1).await;

    let v = app.get(&format!("/api/lessons/{version}"), Auth::Bearer(&t.token)).await.json();
    assert_eq!(v["title"], format!("Verbs (grade {target})"));
    let xml = v["documentXml"].as_str().unwrap();
    for id in ["h1", "p1", "p2", "p3", "e1", "s1"] {
        assert!(xml.contains(&format!("id=\"{id}\"")), "{id} kept: {xml}");
    }
    let level = lesson::reading::of_lesson(&lesson::parse(xml).unwrap()).unwrap().grade.unwrap();
    assert!((level - target).abs() <= 0.5, "landed at {level}, asked {target}");
    // The core is as it was.
    let core = app.get(&format!("/api/lessons/{}", t.lesson_id), Auth::Bearer(&t.token)).await.json();
    assert!(core["documentXml"].as_str().unwrap().contains("Photosynthesis transforms"));
    // The reply ran in the version's own chat, its note saying what it was.
    let note: String = sqlx::query_scalar("SELECT m.content FROM chat_messages m JOIN chat_sessions s ON s.id = m.session_id WHERE s.lesson_id = $1 AND m.role = 'user'")
        .bind(&version)
        .fetch_one(&app.state.db)
        .await
        .unwrap();
    assert!(note.contains(&format!("reading level for grade {target}")), "{note}");

    // Listed on the core with its measured level; the version names its core.
    let page = app.get(&format!("/api/lessons/{}/versions", t.lesson_id), Auth::Bearer(&t.token)).await.json();
    assert_eq!(page["versions"][0]["id"], Value::String(version.clone()));
    assert_eq!(page["versions"][0]["label"], format!("grade {target}"));
    assert_eq!(page["versions"][0]["level"], format!("grade {level:.1}"));
    let of = app.get(&format!("/api/lessons/{version}/versions"), Auth::Bearer(&t.token)).await.json();
    assert_eq!(of["core"], json!([t.lesson_id, "Verbs", format!("grade {target}")]));
    let html = app.get(&format!("/lessons/{}/versions", t.lesson_id), Auth::Cookie(&t.token)).await;
    assert!(html.body.contains(&format!("measured grade {level:.1}")), "{}", html.body);

    // A version's versions come from its core; bad requests and strangers are refused.
    let r = app.post_json(&format!("/api/lessons/{version}/versions"), Auth::Bearer(&t.token), json!({"kind": "learners"})).await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.body);
    let r = app.post_json(&format!("/api/lessons/{}/versions", t.lesson_id), Auth::Bearer(&t.token), json!({"kind": "grade", "grade": 40})).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    let r = app.post_json(&format!("/api/lessons/{}/versions", t.lesson_id), Auth::Bearer(&t.token), json!({"kind": "language", "language": "es\"><script>"})).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    let stranger = teacher(&app, "s@y.org").await;
    let r = app.post_json(&format!("/api/lessons/{}/versions", t.lesson_id), Auth::Bearer(&stranger.token), json!({"kind": "learners"})).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);
    let r = app.get(&format!("/api/lessons/{}/versions", t.lesson_id), Auth::Bearer(&stranger.token)).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);

    // A translation is listed by its language.
    let r = app.post_json(&format!("/api/lessons/{}/versions", t.lesson_id), Auth::Bearer(&t.token), json!({"kind": "language", "language": "es"})).await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.body);
    until(&app, DONE_REPLIES, 2).await;
    let page = app.get(&format!("/api/lessons/{}/versions", t.lesson_id), Auth::Bearer(&t.token)).await.json();
    assert_eq!(page["versions"][1]["label"], "Spanish");
    assert_eq!(page["versions"][1]["title"], "Verbs (Spanish)");
}
