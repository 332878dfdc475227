//! Versions of a lesson: "Make a version" copies the lesson into a new one
//! linked to it, keeping its ids, and the assistant brings the copy to the
//! level asked for, measured; the core's Versions page lists each version
//! with its measured level.
#![cfg(feature = "ssr")]

use crate::common;

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

    // A version that cannot be linked to its core is not made at all (not
    // left behind as a lesson of its own).
    let count = |body: Value| body["lessons"].as_array().map(Vec::len);
    let before = count(app.get("/api/lessons", Auth::Bearer(&t.token)).await.json());
    app.refuse_updates("lessons").await;
    let r = app.post_json(&format!("/api/lessons/{}/versions", t.lesson_id), Auth::Bearer(&t.token), json!({"kind": "learners"})).await;
    assert_eq!(r.status, StatusCode::INTERNAL_SERVER_ERROR, "{}", r.body);
    app.allow_updates("lessons").await;
    assert_eq!(count(app.get("/api/lessons", Auth::Bearer(&t.token)).await.json()), before);

    // A translation is listed by its language.
    let r = app.post_json(&format!("/api/lessons/{}/versions", t.lesson_id), Auth::Bearer(&t.token), json!({"kind": "language", "language": "es"})).await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.body);
    until(&app, DONE_REPLIES, 2).await;
    let page = app.get(&format!("/api/lessons/{}/versions", t.lesson_id), Auth::Bearer(&t.token)).await.json();
    assert_eq!(page["versions"][1]["label"], "Spanish");
    assert_eq!(page["versions"][1]["title"], "Verbs (Spanish)");
}

/// `xml` with the block `id` holding `text` alone (added at the end when it
/// has no such block).
fn with_text(xml: &str, id: &str, text: &str) -> String {
    let mut root = lesson::parse(xml).unwrap();
    let block = root.children.iter_mut().find_map(|n| match n {
        lesson::Node::Element(e) if e.id() == Some(id) => Some(e),
        _ => None,
    });
    match block {
        Some(e) => e.children = vec![lesson::Node::Text(text.into())],
        None => {
            let mut p = lesson::Element::new("p");
            p.set_attr("id", id);
            p.children = vec![lesson::Node::Text(text.into())];
            root.children.push(lesson::Node::Element(p));
        }
    }
    root.to_xml()
}

async fn document_of(app: &common::TestApp, token: &str, id: &str) -> String {
    app.get(&format!("/api/lessons/{id}"), Auth::Bearer(token)).await.json()["documentXml"].as_str().unwrap().to_string()
}

async fn make(app: &common::TestApp, token: &str, core: &str, kind: Value) -> String {
    let r = app.post_json(&format!("/api/lessons/{core}/versions"), Auth::Bearer(token), kind).await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.body);
    r.json()["lessonId"].as_str().unwrap().to_string()
}

async fn pending_proposal(app: &common::TestApp, lesson: &str) -> String {
    sqlx::query_scalar("SELECT id FROM proposals WHERE lesson_id = $1 AND status = 'pending'").bind(lesson).fetch_one(&app.state.db).await.unwrap()
}

const CARRIED: &str = "SELECT COUNT(*) FROM proposals WHERE status = 'pending'";
const WAITING: &str = "SELECT COUNT(*) FROM lesson_pending_events WHERE intent = 'coreChanged'";

#[tokio::test]
async fn a_core_edit_reaches_each_version_as_a_change_to_review_and_the_versions_own_edits_stay() {
    use common::waits::{advance, count, settle};
    use margin::server::reactions::gate::{DEBOUNCE_MS, SPACING_MS};
    let app = common::app().await;
    let t = teacher(&app, "core@x.org").await;
    let core_xml = lesson_of(HARD);
    save_xml(&app, &t.token, &t.lesson_id, &core_xml).await;

    // A grade version and a Spanish one.
    let grade = make(&app, &t.token, &t.lesson_id, json!({"kind": "grade", "grade": 6})).await;
    until(&app, DONE_REPLIES, 1).await;
    let spanish = make(&app, &t.token, &t.lesson_id, json!({"kind": "language", "language": "es"})).await;
    until(&app, DONE_REPLIES, 2).await;
    let es = document_of(&app, &t.token, &spanish).await;
    assert!(es.contains("lang=\"es\"") && es.contains(margin::scripted::SPANISH_SENTENCES), "translated: {es}");
    for id in ["h1", "p1", "p2", "p3", "e1", "s1"] {
        assert!(es.contains(&format!("id=\"{id}\"")), "{id} kept: {es}");
    }
    let page = app.get(&format!("/api/lessons/{}/versions", t.lesson_id), Auth::Bearer(&t.token)).await.json();
    assert!(page["versions"][1]["level"].as_str().unwrap().starts_with("LIX "), "{page}");

    // The teacher's own edit in the grade version.
    let mine = with_text(&document_of(&app, &t.token, &grade).await, "p3", "Our class garden grows beans by the window.");
    save_xml(&app, &t.token, &grade, &mine).await;
    let grade_before = document_of(&app, &t.token, &grade).await;
    settle().await;
    assert_eq!(count(&app, WAITING).await, 0, "a version's own edit asks nothing of anyone");

    // The core changes twice in a burst: each version waits once at its gate.
    let edited = with_text(&core_xml, "p2", "Roots take in water and minerals from the soil around them.");
    save_xml(&app, &t.token, &t.lesson_id, &edited).await;
    let edited = with_text(&edited, "p4", "Stems carry the water up to every leaf of the plant.");
    save_xml(&app, &t.token, &t.lesson_id, &edited).await;
    assert_eq!(count(&app, WAITING).await, 2, "one event per version, however many saves");
    advance(&app, DEBOUNCE_MS - 1);
    settle().await;
    assert_eq!(count(&app, CARRIED).await, 0, "the burst is still gathering");
    advance(&app, 1);
    until(&app, CARRIED, 2).await;
    until(&app, DONE_REPLIES, 4).await;

    // The model was told the changes and the core's blocks as they are
    // now, not the blocks that did not change.
    let requests = app.state.ai.scripted().unwrap().requests();
    let told: Vec<String> = requests
        .iter()
        .filter_map(|r| r["messages"].as_array()?.last()?["content"].as_str().map(str::to_string))
        .filter(|m| m.contains("Carry the same changes into this version"))
        .collect();
    assert_eq!(told.len(), 2, "one turn per version");
    assert!(told.iter().any(|m| m.contains("version for grade 6")) && told.iter().any(|m| m.contains("version for Spanish")), "{told:?}");
    for m in &told {
        assert!(m.contains("Roots take in water") && m.contains("Stems carry the water"), "{m}");
        assert!(!m.contains("<p id=\"p1\">"), "unchanged blocks are not quoted: {m}");
    }
    // Nothing landed yet: the changes wait in each version for the teacher.
    assert_eq!(document_of(&app, &t.token, &grade).await, grade_before);
    let page = app.get(&format!("/api/lessons/{}/versions", t.lesson_id), Auth::Bearer(&t.token)).await.json();
    assert_eq!(page["versions"][0]["waiting"], 1, "{page}");
    assert_eq!(page["versions"][1]["waiting"], 1, "{page}");
    let html = app.get(&format!("/lessons/{}/versions", t.lesson_id), Auth::Cookie(&t.token)).await;
    assert!(html.body.contains("1 change waits for you"), "{}", html.body);

    // The teacher edits the grade version again while the change waits,
    // then applies it: both of the version's own edits stay.
    let mine = with_text(&document_of(&app, &t.token, &grade).await, "h1", "Plants, our way");
    save_xml(&app, &t.token, &grade, &mine).await;
    let proposal = pending_proposal(&app, &grade).await;
    let r = app.decide(&format!("/api/proposals/{proposal}/apply"), Auth::Bearer(&t.token), json!({})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let now = document_of(&app, &t.token, &grade).await;
    for kept in ["Roots take in water", "Stems carry the water", "Our class garden grows beans", "Plants, our way", margin::scripted::PLAIN_SENTENCES] {
        assert!(now.contains(kept), "{kept}: {now}");
    }
    // The Spanish one is discarded: it stays as it was.
    let proposal = pending_proposal(&app, &spanish).await;
    let r = app.decide(&format!("/api/proposals/{proposal}/discard"), Auth::Bearer(&t.token), json!({"reason": "I will translate it myself"})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(document_of(&app, &t.token, &spanish).await, es);
    // Applying in a version asks nothing of anyone.
    settle().await;
    assert_eq!(count(&app, WAITING).await, 0);

    // A save that changes nothing starts no turn; the next real change
    // brings only what is new, the discarded change not offered again.
    save_xml(&app, &t.token, &t.lesson_id, &edited).await;
    advance(&app, SPACING_MS);
    settle().await;
    until(&app, WAITING, 0).await;
    assert_eq!(count(&app, "SELECT COUNT(*) FROM chat_messages WHERE role = 'user'").await, 4, "no turn for no change");
    let edited = with_text(&edited, "p1", "Leaves catch the light of the sun.");
    save_xml(&app, &t.token, &t.lesson_id, &edited).await;
    advance(&app, SPACING_MS);
    until(&app, CARRIED, 2).await;
    until(&app, DONE_REPLIES, 6).await;
    let requests = app.state.ai.scripted().unwrap().requests();
    let last = requests
        .iter()
        .filter_map(|r| r["messages"].as_array()?.last()?["content"].as_str().map(str::to_string))
        .filter(|m| m.contains("Carry the same changes into this version") && m.contains("version for Spanish"))
        .last()
        .unwrap();
    assert!(last.contains("Leaves catch the light") && !last.contains("Roots take in water"), "only what is new: {last}");

    // A stranger cannot see or decide a version's change.
    let stranger = teacher(&app, "other@y.org").await;
    let proposal = pending_proposal(&app, &spanish).await;
    let r = app.decide(&format!("/api/proposals/{proposal}/apply"), Auth::Bearer(&stranger.token), json!({})).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);
    let r = app.get(&format!("/api/lessons/{}/versions", t.lesson_id), Auth::Bearer(&stranger.token)).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);
}

#[tokio::test]
async fn a_reply_that_edits_the_core_reaches_its_versions_when_it_ends() {
    use common::waits::advance;
    use margin::server::reactions::gate::DEBOUNCE_MS;
    let app = common::app().await;
    let t = teacher(&app, "reply@x.org").await;
    save_xml(&app, &t.token, &t.lesson_id, &lesson_of(HARD)).await;
    let version = make(&app, &t.token, &t.lesson_id, json!({"kind": "learners"})).await;
    until(&app, DONE_REPLIES, 1).await;
    // The assistant adds an exercise to the core, in the teacher's chat.
    let r = app.post_json("/api/chat/stream", Auth::Bearer(&t.token), json!({"sessionId": t.session_id, "content": "Add a fill-in-the-blank exercise about French verbs"})).await;
    assert!(r.status.is_success(), "{}", r.body);
    until(&app, DONE_REPLIES, 2).await;
    until(&app, WAITING, 1).await;
    advance(&app, DEBOUNCE_MS);
    until(&app, CARRIED, 1).await;
    let proposal = pending_proposal(&app, &version).await;
    let opened = app.get(&format!("/api/proposals/{proposal}"), Auth::Bearer(&t.token)).await.json();
    assert!(opened["changes"].as_array().is_some_and(|c| !c.is_empty()), "{opened}");
    assert_eq!(opened["lessonId"], Value::String(version));
}

/// The id of the paragraph of `doc` that reads `text`.
fn id_of_paragraph(doc: &str, text: &str) -> String {
    let root = lesson::parse(doc).unwrap();
    let p = root.elements().find(|e| e.name == "p" && e.text().contains(text)).unwrap_or_else(|| panic!("no paragraph reads {text:?}: {doc}"));
    p.id().unwrap().to_string()
}

#[tokio::test]
async fn a_block_the_teacher_adds_to_a_version_and_one_added_to_the_core_never_share_an_id_and_both_stay() {
    use common::waits::{advance, settle};
    use margin::server::reactions::gate::DEBOUNCE_MS;
    let app = common::app().await;
    let t = teacher(&app, "kin@x.org").await;
    let core_xml = lesson_of(HARD);
    save_xml(&app, &t.token, &t.lesson_id, &core_xml).await;
    let grade = make(&app, &t.token, &t.lesson_id, json!({"kind": "grade", "grade": 6})).await;
    until(&app, DONE_REPLIES, 1).await;

    // The teacher adds a paragraph of their own to the version, and later
    // one to the core: each new, without an id, given one at the save.
    let mine = document_of(&app, &t.token, &grade).await.replace("</lesson>", "  <p>Our class garden grows beans.</p>\n</lesson>");
    save_xml(&app, &t.token, &grade, &mine).await;
    settle().await;
    let theirs = core_xml.replace("</lesson>", "  <p>Roots drink water from the soil.</p>\n</lesson>");
    save_xml(&app, &t.token, &t.lesson_id, &theirs).await;
    let mine_id = id_of_paragraph(&document_of(&app, &t.token, &grade).await, "Our class garden");
    let core_id = id_of_paragraph(&document_of(&app, &t.token, &t.lesson_id).await, "Roots drink water");
    assert_ne!(mine_id, core_id, "the core's new block takes no id the version uses");

    // The core's change is carried by its id: as a block to add, not onto the teacher's.
    advance(&app, DEBOUNCE_MS);
    until(&app, CARRIED, 1).await;
    until(&app, DONE_REPLIES, 2).await;
    let told = app.state.ai.scripted().unwrap().requests().iter().filter_map(|r| r["messages"].as_array()?.last()?["content"].as_str().map(str::to_string)).filter(|m| m.contains("Carry the same changes into this version")).last().unwrap();
    assert!(told.contains(&format!("<p id=\"{core_id}\">Roots drink water")), "{told}");
    let proposal = pending_proposal(&app, &grade).await;
    let r = app.decide(&format!("/api/proposals/{proposal}/apply"), Auth::Bearer(&t.token), json!({})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let now = document_of(&app, &t.token, &grade).await;
    assert_eq!(id_of_paragraph(&now, "Our class garden"), mine_id, "the teacher's own paragraph stays as it was: {now}");
    assert_eq!(id_of_paragraph(&now, "Roots drink water"), core_id, "{now}");
}
