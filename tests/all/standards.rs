//! Standards as data: a school's admin loads CASE frameworks (the server's
//! folder loads them for every school), every write of a lesson checks its
//! codes against them with near matches (the model corrects itself from the
//! error), "Align to a standard" asks the assistant to tag an exercise, and
//! coverage says which standards, by which exercises, and how the class did.
#![cfg(feature = "ssr")]

use crate::common;

use axum::http::{Method, StatusCode};
use common::{
    classes::{class, save_xml, student},
    teacher,
    waits::until,
    Auth, TestApp,
};
use margin::server::standards::folder;
use serde_json::{json, Value};

/// A small framework of our own, as a CASE package.
fn package(identifier: &str, title: &str, items: &[(&str, &str)]) -> Value {
    let mut list = vec![json!({"identifier": format!("{identifier}-grade"), "fullStatement": "Grade 4", "CFItemType": "Grade"})];
    list.extend(items.iter().enumerate().map(|(n, (code, statement))| {
        json!({"identifier": format!("{identifier}-{n}"), "humanCodingScheme": code, "fullStatement": statement, "CFItemType": "Standard"})
    }));
    json!({
        "CFDocument": {"identifier": identifier, "uri": format!("https://example.test/{identifier}"), "title": title, "creator": "Test state", "lastChangeDateTime": "2026-01-01T00:00:00Z"},
        "CFItems": list,
        "CFAssociations": []
    })
}

fn reading() -> Value {
    package(
        "doc-reading",
        "Reading, grade 4",
        &[
            ("RL.4.1", "Refer to details and examples in a text when explaining what the text says explicitly."),
            ("RL.4.2", "Determine a theme of a story, drama, or poem from details in the text."),
            ("RL.4.3", "Describe in depth a character, setting, or event in a story or drama."),
        ],
    )
}

async fn upload(app: &TestApp, token: &str, package: Value) -> Value {
    let r = app.post_json("/api/school/frameworks", Auth::Bearer(token), package).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    r.json()
}

/// A teacher invited into the school of `admin`; their token.
async fn invited(app: &TestApp, admin: &str, email: &str) -> String {
    let invite = app.post_json("/api/school/invites", Auth::Bearer(admin), json!({})).await.json();
    let r = app.post_json("/api/auth/signup", Auth::None, json!({"email": email, "password": "correct horse", "invite": invite["token"]})).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    r.json()["token"].as_str().unwrap().to_string()
}

async fn put_xml(app: &TestApp, token: &str, lesson: &str, xml: &str) -> (StatusCode, Value) {
    let revision: i64 = sqlx::query_scalar("SELECT revision FROM lessons WHERE id = $1").bind(lesson).fetch_one(&app.state.db).await.unwrap();
    let r = app.put_json(&format!("/api/lessons/{lesson}/document"), Auth::Bearer(token), json!({"xml": xml, "baseRevision": revision})).await;
    let body = serde_json::from_str(&r.body).unwrap_or(Value::Null);
    (r.status, body)
}

const TAGGED: &str = r#"<lesson title="Stories" standards="RL.4.1"><p id="p1">Read the story.</p><exercise id="e1" type="writing" standards="RL.4.12"><prompt>What is its theme?</prompt></exercise></lesson>"#;

#[tokio::test]
async fn a_school_admin_loads_frameworks_and_what_is_not_one_is_refused_whole() {
    let app = common::app().await;
    let admin = teacher(&app, "admin@x.org").await;
    let done = upload(&app, &admin.token, reading()).await;
    assert_eq!(done["framework"]["items"], 3, "the grade heading has no code and is left out: {done}");
    assert_eq!(done["framework"]["title"], "Reading, grade 4");
    assert_eq!(done["skipped"], 0);

    // Loading the same framework again replaces it.
    upload(&app, &admin.token, reading()).await;
    let list = app.get("/api/school/frameworks", Auth::Bearer(&admin.token)).await.json();
    assert_eq!(list.as_array().unwrap().len(), 1, "{list}");

    // Not JSON, not CASE, no codes, too many items: 400 with why; nothing added.
    for (body, why) in [
        (json!({"CFItems": []}), "no CFDocument"),
        (json!({"CFDocument": {"identifier": "x", "title": "Empty"}, "CFItems": [{"fullStatement": "no code"}]}), "no items with a code"),
        (json!([1, 2, 3]), "not a CASE package"),
    ] {
        let r = app.post_json("/api/school/frameworks", Auth::Bearer(&admin.token), body).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
        assert!(r.json()["error"].as_str().unwrap().contains(why), "{}", r.body);
    }
    let many: Vec<(String, String)> = (0..=margin::server::standards::case::MAX_ITEMS).map(|n| (format!("C.{n}"), "s".to_string())).collect();
    let many: Vec<(&str, &str)> = many.iter().map(|(c, s)| (c.as_str(), s.as_str())).collect();
    let r = app.post_json("/api/school/frameworks", Auth::Bearer(&admin.token), package("doc-huge", "Huge", &many)).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    assert!(r.json()["error"].as_str().unwrap().contains("more than 50000"), "{}", r.body);
    // Larger than an upload may be: refused before it is read whole.
    let huge = json!({"CFDocument": {"identifier": "big"}, "CFItems": [], "padding": "x".repeat(margin::server::standards::routes::FRAMEWORK_BODY)});
    let r = app.post_json("/api/school/frameworks", Auth::Bearer(&admin.token), huge).await;
    assert_eq!(r.status, StatusCode::PAYLOAD_TOO_LARGE, "{}", r.body);
    assert_eq!(app.get("/api/school/frameworks", Auth::Bearer(&admin.token)).await.json().as_array().unwrap().len(), 1);

    // Only the admin loads or removes; a teacher of the school sees the list.
    let colleague = invited(&app, &admin.token, "t@x.org").await;
    let r = app.post_json("/api/school/frameworks", Auth::Bearer(&colleague), reading()).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    let list = app.get("/api/school/frameworks", Auth::Bearer(&colleague)).await.json();
    let id = list[0]["id"].as_str().unwrap().to_string();
    let r = app.send_json(Method::DELETE, &format!("/api/school/frameworks/{id}"), Auth::Bearer(&colleague), json!({})).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    // Another school's admin finds nothing to remove.
    let other = teacher(&app, "other@y.org").await;
    let r = app.send_json(Method::DELETE, &format!("/api/school/frameworks/{id}"), Auth::Bearer(&other.token), json!({})).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);
    assert!(app.get("/api/school/frameworks", Auth::Bearer(&other.token)).await.json().as_array().unwrap().is_empty());
    // The School page shows it, with Remove.
    let page = app.get("/school", Auth::Cookie(&admin.token)).await;
    assert!(page.body.contains("Reading, grade 4") && page.body.contains(&format!("/school/frameworks/{id}/remove")), "{}", page.body);
    let r = app.send_json(Method::DELETE, &format!("/api/school/frameworks/{id}"), Auth::Bearer(&admin.token), json!({})).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.body);
    assert_eq!(sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM framework_items").fetch_one(&app.state.db).await.unwrap(), 0);
}

#[tokio::test]
async fn every_write_checks_the_codes_against_the_schools_frameworks_with_near_matches() {
    let app = common::app().await;
    let t = teacher(&app, "t@x.org").await;
    // No framework yet: a code cannot be named at all.
    let (status, body) = put_xml(&app, &t.token, &t.lesson_id, TAGGED).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body["outcome"]["Invalid"]["errors"][0]["message"].as_str().unwrap().contains("no standards frameworks loaded"), "{body}");

    upload(&app, &t.token, reading()).await;
    let (status, body) = put_xml(&app, &t.token, &t.lesson_id, TAGGED).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let errors = body["outcome"]["Invalid"]["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{body}");
    assert_eq!(errors[0]["path"], "exercise#e1");
    let text = errors[0]["message"].as_str().unwrap().to_string();
    assert!(text.starts_with("`RL.4.12` is not a code in this school's frameworks. Nearest: RL.4.1 (Refer to details"), "{text}");
    let saved = save_xml(&app, &t.token, &t.lesson_id, &TAGGED.replace("RL.4.12", "RL.4.2 RL.4.3")).await;
    assert!(saved > 1);

    // The teacher sees the codes; students never do.
    let page = app.get(&format!("/lessons/{}", t.lesson_id), Auth::Cookie(&t.token)).await;
    assert!(page.body.contains("Standards: RL.4.1") && page.body.contains("RL.4.2 · RL.4.3"), "{}", page.body);
    let xml = app.get(&format!("/api/lessons/{}", t.lesson_id), Auth::Bearer(&t.token)).await.json()["documentXml"].as_str().unwrap().to_string();
    let shown = margin::lesson::render_both(&xml);
    assert!(shown.teacher.contains("RL.4.2") && !shown.student.contains("RL.4"), "{}", shown.student);

    // Importing a lesson is checked the same way.
    let r = common::upload(&app, "/lessons/import", Auth::Cookie(&t.token), &[("stories.xml", TAGGED.as_bytes())]).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.body);
    assert!(r.location().starts_with("/?import="), "{}", r.location());
    let lessons: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM lessons").fetch_one(&app.state.db).await.unwrap();
    assert_eq!(lessons, 1, "nothing was imported");

    // Another school's codes are not this one's.
    let other = teacher(&app, "o@y.org").await;
    let (status, body) = put_xml(&app, &other.token, &other.lesson_id, &TAGGED.replace("RL.4.12", "RL.4.2")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body["outcome"]["Invalid"]["errors"][0]["message"].as_str().unwrap().contains("no standards frameworks loaded"), "{body}");
}

#[tokio::test]
async fn a_code_the_model_wrote_from_memory_is_refused_and_it_takes_the_nearest_from_the_error() {
    let app = common::app().await;
    let t = teacher(&app, "t@x.org").await;
    upload(&app, &t.token, reading()).await;
    save_xml(&app, &t.token, &t.lesson_id, r#"<lesson><p id="p1">Read.</p><exercise id="e1" type="writing"><prompt>What is its theme?</prompt></exercise></lesson>"#).await;
    let res = common::start_turn(&app, &t.token, &t.session_id, "Tag it from memory with RL.4.12 please").await;
    let events = common::read_events(&mut res.into_body(), &mut margin::chat::sse::SseParser::new(), usize::MAX).await;
    let ends: Vec<Value> = events.iter().filter(|e| e.event == "tool_end").map(|e| serde_json::from_str(&e.data).unwrap()).collect();
    assert_eq!(ends.len(), 2, "{events:?}");
    assert!(ends[0].to_string().contains("Nearest: RL.4.1"), "{}", ends[0]);
    let done: Value = serde_json::from_str(&events.iter().find(|e| e.event == "done").unwrap().data).unwrap();
    assert!(done["final"]["text"].as_str().unwrap().contains("used the nearest one"), "{done}");
    let xml = app.get(&format!("/api/lessons/{}", t.lesson_id), Auth::Bearer(&t.token)).await.json()["documentXml"].as_str().unwrap().to_string();
    assert!(xml.contains(r#"standards="RL.4.1""#), "{xml}");
    assert!(ends[1]["changes"].to_string().contains("now names standard RL.4.1"), "{}", ends[1]);
}

const DONE_REPLIES: &str = "SELECT COUNT(*) FROM chat_messages WHERE role = 'assistant' AND status = 'complete'";

#[tokio::test]
async fn align_to_a_standard_tags_an_exercise_and_coverage_says_how_the_class_did() {
    let app = common::app().await;
    let c = class(&app, "t@x.org").await;
    upload(&app, &c.teacher, reading()).await;

    // Search, as the Standards page does.
    let hits = app.get("/api/standards?q=theme%20story", Auth::Bearer(&c.teacher)).await.json();
    assert_eq!(hits.as_array().unwrap().len(), 1, "{hits}");
    assert_eq!(hits[0]["code"], "RL.4.2");
    let page = app.get(&format!("/lessons/{}/standards?q=RL.4", c.lesson), Auth::Cookie(&c.teacher)).await;
    assert!(page.body.contains("This lesson names no standards yet.") && page.body.contains("Align to RL.4.3"), "{}", page.body);

    // Align: a code the school does not have is refused; another teacher's lesson is not found.
    let r = app.post_json(&format!("/api/lessons/{}/align", c.lesson), Auth::Bearer(&c.teacher), json!({"code": "RL.9.9"})).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    let stranger = teacher(&app, "s@y.org").await;
    let r = app.post_json(&format!("/api/lessons/{}/align", c.lesson), Auth::Bearer(&stranger.token), json!({"code": "RL.4.2"})).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);
    let r = app.post_json(&format!("/api/lessons/{}/align", c.lesson), Auth::Bearer(&c.teacher), json!({"code": "RL.4.2"})).await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.body);
    until(&app, DONE_REPLIES, 1).await;
    let xml = app.get(&format!("/api/lessons/{}", c.lesson), Auth::Bearer(&c.teacher)).await.json()["documentXml"].as_str().unwrap().to_string();
    let root = margin::lesson::parse(&xml).unwrap();
    let tagged: Vec<(Option<&str>, Option<&str>)> = root.elements().filter(|e| e.name == "exercise").map(|e| (e.id(), e.attr("standards"))).collect();
    assert_eq!(tagged[0], (Some("e1"), Some("RL.4.2")), "{xml}");
    assert!(tagged[1..].iter().all(|(_, codes)| codes.is_none()), "only the first exercise is tagged: {xml}");
    let said: String = sqlx::query_scalar("SELECT content FROM chat_messages WHERE role = 'assistant' ORDER BY seq DESC LIMIT 1").fetch_one(&app.state.db).await.unwrap();
    assert_eq!(said, "I tagged exercise 1 with RL.4.2.");
    let note: String = sqlx::query_scalar("SELECT content FROM chat_messages WHERE role = 'user' ORDER BY seq DESC LIMIT 1").fetch_one(&app.state.db).await.unwrap();
    assert!(note.contains("Determine a theme of a story"), "the standard's words went to the model: {note}");

    // Two students answer blank b1 (exercise 1): one right, one wrong.
    for (email, answer) in [("ana@x.org", "serai"), ("ben@x.org", "es")] {
        let token = student(&app, email, &c.code).await;
        let base = format!("/api/learn/lessons/{}", c.lesson);
        let seen = app.get(&base, Auth::Bearer(&token)).await.json()["seen"].as_i64().unwrap();
        let r = app.put_json(&format!("{base}/answers"), Auth::Bearer(&token), json!({"seen": seen, "answers": {"b1": answer, "s1": "false"}})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    }
    let coverage = app.get(&format!("/api/lessons/{}/standards", c.lesson), Auth::Bearer(&c.teacher)).await.json();
    assert_eq!(
        coverage,
        json!([{"code": "RL.4.2", "statement": "Determine a theme of a story, drama, or poem from details in the text.", "taggedBy": ["Exercise 1: Fill in the blanks"], "right": 1, "marked": 2}])
    );
    let by_class = app.get(&format!("/api/classes/{}/standards", c.class), Auth::Bearer(&c.teacher)).await.json();
    assert_eq!(by_class[0]["taggedBy"], json!(["Verbs, Exercise 1: Fill in the blanks"]), "{by_class}");
    assert_eq!((by_class[0]["right"].clone(), by_class[0]["marked"].clone()), (json!(1), json!(2)));
    let r = app.get(&format!("/api/classes/{}/standards", c.class), Auth::Bearer(&stranger.token)).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    let page = app.get(&format!("/lessons/{}/standards", c.lesson), Auth::Cookie(&c.teacher)).await;
    assert!(page.body.contains("1 of 2 right") && page.body.contains("Exercise 1: Fill in the blanks"), "{}", page.body);
}

#[tokio::test]
async fn the_servers_folder_offers_its_frameworks_to_every_school_and_loads_a_file_once() {
    let app = common::app().await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a-reading.json"), reading().to_string()).unwrap();
    std::fs::write(dir.path().join("b-writing.json"), package("doc-writing", "Writing, grade 4", &[("W.4.1", "Write opinion pieces.")]).to_string()).unwrap();
    std::fs::write(dir.path().join("c-broken.json"), "{ not json").unwrap();
    std::fs::write(dir.path().join("notes.txt"), "not a package").unwrap();
    let done = folder::load(&app.state.db, dir.path()).await.unwrap();
    assert_eq!((done.loaded, done.unchanged), (2, 0));
    assert_eq!(done.refused.len(), 1);
    assert_eq!(done.refused[0].0, "c-broken.json");
    assert!(done.refused[0].1.starts_with("The file is not JSON"), "{:?}", done.refused);
    let again = folder::load(&app.state.db, dir.path()).await.unwrap();
    assert_eq!((again.loaded, again.unchanged), (0, 2));

    // Every school may name them; no school's admin removes them.
    let t = teacher(&app, "t@x.org").await;
    let list = app.get("/api/school/frameworks", Auth::Bearer(&t.token)).await.json();
    assert_eq!(list.as_array().unwrap().len(), 2, "{list}");
    assert_eq!(list[0]["shared"], true);
    let r = app.send_json(Method::DELETE, &format!("/api/school/frameworks/{}", list[0]["id"].as_str().unwrap()), Auth::Bearer(&t.token), json!({})).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    save_xml(&app, &t.token, &t.lesson_id, r#"<lesson standards="W.4.1 RL.4.3"><p id="p1">Write.</p></lesson>"#).await;

    // A changed file replaces its framework.
    std::fs::write(dir.path().join("b-writing.json"), package("doc-writing", "Writing, grade 4", &[("W.4.1", "Write opinion pieces."), ("W.4.2", "Write to inform.")]).to_string()).unwrap();
    let third = folder::load(&app.state.db, dir.path()).await.unwrap();
    assert_eq!((third.loaded, third.unchanged), (1, 1));
    let list = app.get("/api/school/frameworks", Auth::Bearer(&t.token)).await.json();
    assert_eq!(list.as_array().unwrap().iter().map(|f| f["items"].as_i64().unwrap()).sum::<i64>(), 5, "{list}");
}
