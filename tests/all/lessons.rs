//! Lessons belong to their teacher: listing, creating and opening them, and
//! another teacher's lesson answering 404 like one that does not exist.
#![cfg(feature = "ssr")]

use crate::common;

use axum::http::StatusCode;
use common::{app, Auth};
use serde_json::json;
use leptos::server_fn::ServerFn;
use margin::{
    api::lessons::{GetLesson, ListLessons},
    server::lessons,
};

#[tokio::test]
async fn a_teacher_sees_only_their_own_lessons() {
    let app = app().await;
    let ana = app.sign_up("ana@x.org").await;
    let ben = app.sign_up("ben@x.org").await;
    let ana_id = app.user_id(&ana).await;
    let lesson = lessons::create(&app.state.db, &ana_id, "  French   verbs ").await.unwrap();
    assert_eq!(lesson.title, "French verbs");
    assert_eq!(lesson.revision, 1);

    let own = app.get(&format!("/lessons/{}", lesson.id), Auth::Cookie(&ana)).await;
    assert_eq!(own.status, StatusCode::OK);
    assert!(own.body.contains("French verbs"));

    let other = app.get(&format!("/lessons/{}", lesson.id), Auth::Cookie(&ben)).await;
    assert_eq!(other.status, StatusCode::NOT_FOUND);
    assert!(other.body.contains("Lesson not found"));
    assert!(!other.body.contains("French verbs"));
    let missing = app.get("/lessons/does-not-exist", Auth::Cookie(&ben)).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    // Every page carries a fresh random nonce for its scripts; apart from
    // that, the two pages must be the same to the byte.
    assert_eq!(without_nonce(&missing.body), without_nonce(&other.body), "another's lesson must look exactly like a missing one");
}

/// A page with its script nonce (a random value, new on every response) blanked out.
fn without_nonce(page: &str) -> String {
    let nonce = page.split("nonce=\"").nth(1).and_then(|rest| rest.split('"').next()).unwrap_or("");
    assert!(nonce.len() >= 16, "every page has a nonce: {page}");
    page.replace(nonce, "NONCE")
}

#[tokio::test]
async fn server_functions_check_the_session_and_the_owner() {
    let app = app().await;
    let ana = app.sign_up("ana@x.org").await;
    let ben = app.sign_up("ben@x.org").await;

    let all: &[(&str, &str)] = &[("query", ""), ("sort", ""), ("offset", "0")];
    let anon = app.post_form(ListLessons::PATH, Auth::None, all).await;
    assert_eq!(anon.status, StatusCode::UNAUTHORIZED, "{}", anon.body);

    // Lessons are created by the plain form (tested below), not a server function.
    let ana_id = app.user_id(&ana).await;
    let id = lessons::create(&app.state.db, &ana_id, "Fractions").await.unwrap().id;

    let list = app.post_form(ListLessons::PATH, Auth::Cookie(&ana), all).await;
    let list: serde_json::Value = serde_json::from_str(&list.body).unwrap();
    assert_eq!(list["total"], 1);
    assert_eq!(list["lessons"][0]["title"], "Fractions");

    let bens = app.post_form(ListLessons::PATH, Auth::Cookie(&ben), all).await;
    assert_eq!(bens.body, r#"{"lessons":[],"total":0}"#);
    let stolen = app.post_form(GetLesson::PATH, Auth::Cookie(&ben), &[("id", id.as_str())]).await;
    assert_eq!(stolen.status, StatusCode::NOT_FOUND);

    let mine = app.post_form(GetLesson::PATH, Auth::Cookie(&ana), &[("id", id.as_str())]).await;
    assert_eq!(mine.status, StatusCode::OK);
    let mine: serde_json::Value = serde_json::from_str(&mine.body).unwrap();
    assert!(mine["document_xml"].as_str().unwrap().contains("<h1 id=\"b1\">Fractions</h1>"));
}

#[tokio::test]
async fn creating_a_lesson_stores_its_first_revision() {
    let app = app().await;
    let ana = app.sign_up("ana@x.org").await;
    let ana_id = app.user_id(&ana).await;
    let lesson = lessons::create(&app.state.db, &ana_id, "Plants").await.unwrap();
    let (n, author, doc): (i64, String, String) =
        sqlx::query_as("SELECT number, author, document_xml FROM lesson_revisions WHERE lesson_id = $1")
            .bind(&lesson.id)
            .fetch_one(&app.state.db)
            .await
            .unwrap();
    assert_eq!((n, author.as_str()), (1, "teacher"));
    assert_eq!(doc, lesson.document_xml);
}

const VALID: &str = r#"<lesson><h1>Plants</h1><exercise type="true-false"><statement answer="true">Plants need light.</statement></exercise></lesson>"#;

#[tokio::test]
async fn saving_validates_assigns_ids_and_records_a_revision() {
    use margin::models::{Author, SaveOutcome};
    let app = app().await;
    let ana = app.sign_up("ana@x.org").await;
    let owner = app.user_id(&ana).await;
    let lesson = lessons::create(&app.state.db, &owner, "Plants").await.unwrap();

    let bad = lessons::save_document(&app.state.db, &owner, &lesson.id, "<lesson><p>x</lesson>", 1, Author::Teacher, "x")
        .await
        .unwrap();
    let SaveOutcome::Invalid { errors } = bad else { panic!("expected invalid, got {bad:?}") };
    assert_eq!(errors[0].line, 1);
    let unchanged = lessons::get_editable(&app.state.db, &owner, &lesson.id).await.unwrap();
    assert_eq!((unchanged.revision, unchanged.document_xml.as_str()), (1, lesson.document_xml.as_str()));

    let ok = lessons::save_document(&app.state.db, &owner, &lesson.id, VALID, 1, Author::Agent, "Added a true/false exercise")
        .await
        .unwrap();
    let SaveOutcome::Saved { revision, document_xml } = ok else { panic!("expected saved, got {ok:?}") };
    assert_eq!(revision, 2);
    assert!(document_xml.contains(r#"<statement id="st-1" answer="true">Plants need light.</statement>"#), "{document_xml}");
    let now = lessons::get_editable(&app.state.db, &owner, &lesson.id).await.unwrap();
    assert_eq!((now.revision, now.document_xml), (2, document_xml));

    let history = lessons::list_revisions(&app.state.db, &owner, &lesson.id).await.unwrap();
    assert_eq!(history.iter().map(|r| r.number).collect::<Vec<_>>(), vec![2, 1]);
    assert_eq!((history[0].author, history[0].summary.as_str()), (Author::Agent, "Added a true/false exercise"));
}

#[tokio::test]
async fn saving_on_top_of_an_old_revision_is_a_conflict() {
    use margin::models::{Author, SaveOutcome};
    let app = app().await;
    let ana = app.sign_up("ana@x.org").await;
    let owner = app.user_id(&ana).await;
    let lesson = lessons::create(&app.state.db, &owner, "Plants").await.unwrap();
    let first = lessons::save_document(&app.state.db, &owner, &lesson.id, VALID, 1, Author::Teacher, "one").await.unwrap();
    assert!(matches!(first, SaveOutcome::Saved { revision: 2, .. }));
    let stale = lessons::save_document(&app.state.db, &owner, &lesson.id, VALID, 1, Author::Teacher, "two").await.unwrap();
    assert_eq!(stale, SaveOutcome::Conflict { current: 2 });
    assert_eq!(lessons::list_revisions(&app.state.db, &owner, &lesson.id).await.unwrap().len(), 2);
}

#[tokio::test]
async fn restoring_makes_an_old_revision_current_as_a_new_one() {
    use margin::models::{Author, SaveOutcome};
    let app = app().await;
    let ana = app.sign_up("ana@x.org").await;
    let owner = app.user_id(&ana).await;
    let lesson = lessons::create(&app.state.db, &owner, "Plants").await.unwrap();
    lessons::save_document(&app.state.db, &owner, &lesson.id, VALID, 1, Author::Teacher, "one").await.unwrap();
    let restored = lessons::restore_revision(&app.state.db, &owner, &lesson.id, 1, 2).await.unwrap();
    let SaveOutcome::Saved { revision: 3, document_xml } = restored else { panic!("{restored:?}") };
    assert_eq!(document_xml, lesson.document_xml);
    let history = lessons::list_revisions(&app.state.db, &owner, &lesson.id).await.unwrap();
    assert_eq!(history[0].summary, "Restored version 1");
    // Another teacher can neither read nor restore it.
    let ben = app.sign_up("ben@x.org").await;
    let ben_id = app.user_id(&ben).await;
    assert!(lessons::list_revisions(&app.state.db, &ben_id, &lesson.id).await.is_err());
    assert!(lessons::get_revision(&app.state.db, &ben_id, &lesson.id, 1).await.is_err());
    assert!(lessons::restore_revision(&app.state.db, &ben_id, &lesson.id, 1, 3).await.is_err());
}

#[tokio::test]
async fn the_lesson_api_saves_lists_opens_and_restores_versions_for_the_owner_only() {
    let app = app().await;
    let ana = app.sign_up("ana@x.org").await;
    let owner = app.user_id(&ana).await;
    let lesson = lessons::create(&app.state.db, &owner, "Plants").await.unwrap();
    let doc = format!("/api/lessons/{}/document", lesson.id);

    let invalid = app.put_json(&doc, Auth::Cookie(&ana), json!({ "xml": "<lesson><div/></lesson>", "baseRevision": 1 })).await;
    assert_eq!(invalid.status, StatusCode::OK, "{}", invalid.body);
    let errors = &invalid.json()["outcome"]["Invalid"]["errors"];
    assert!(errors[0]["message"].as_str().unwrap().contains("<div> is not a lesson element"), "{}", invalid.body);
    assert!(invalid.json().get("html").is_none(), "nothing stored, nothing to show");

    let saved = app.put_json(&doc, Auth::Cookie(&ana), json!({ "xml": VALID, "baseRevision": 1 })).await.json();
    assert_eq!(saved["outcome"]["Saved"]["revision"], 2, "{saved}");
    // The new document comes rendered for both audiences: the teacher sees
    // the answer, the student preview does not.
    let (teacher, student) = (saved["html"]["teacher"].as_str().unwrap(), saved["html"]["student"].as_str().unwrap());
    assert!(teacher.contains("Plants need light."), "{teacher}");
    assert!(student.contains("Plants need light."), "{student}");
    assert_ne!(teacher, student);
    let stale = app.put_json(&doc, Auth::Cookie(&ana), json!({ "xml": VALID, "baseRevision": 1 })).await;
    assert_eq!(stale.json()["outcome"]["Conflict"]["current"], 2, "{}", stale.body);

    let list = app.get(&format!("/api/lessons/{}/revisions", lesson.id), Auth::Cookie(&ana)).await.json();
    let numbers: Vec<i64> = list.as_array().unwrap().iter().map(|r| r["number"].as_i64().unwrap()).collect();
    assert_eq!(numbers, [2, 1]);
    let first = app.get(&format!("/api/lessons/{}/revisions/1", lesson.id), Auth::Cookie(&ana)).await.json();
    assert!(first["revision"]["document_xml"].as_str().unwrap().contains("Plants"));
    assert!(first["html"]["teacher"].as_str().unwrap().contains("<h1"), "{first}");

    let restore = format!("/api/lessons/{}/revisions/1/restore", lesson.id);
    let restored = app.post_json(&restore, Auth::Cookie(&ana), json!({ "baseRevision": 2 })).await;
    assert_eq!(restored.json()["outcome"]["Saved"]["revision"], 3, "{}", restored.body);
    assert!(!restored.json()["html"]["teacher"].as_str().unwrap().contains("Plants need light."), "version 1 has no exercise");

    // Another teacher, or nobody: the lesson does not exist for them.
    let ben = app.sign_up("ben@x.org").await;
    for (reply, what) in [
        (app.put_json(&doc, Auth::Cookie(&ben), json!({ "xml": VALID, "baseRevision": 3 })).await, "save"),
        (app.get(&format!("/api/lessons/{}/revisions", lesson.id), Auth::Cookie(&ben)).await, "list"),
        (app.get(&format!("/api/lessons/{}/revisions/1", lesson.id), Auth::Cookie(&ben)).await, "open"),
        (app.post_json(&restore, Auth::Cookie(&ben), json!({ "baseRevision": 3 })).await, "restore"),
    ] {
        assert_eq!(reply.status, StatusCode::NOT_FOUND, "{what}: {}", reply.body);
        assert!(reply.json()["error"].is_string(), "{what}: {}", reply.body);
    }
    let anon = app.put_json(&doc, Auth::None, json!({ "xml": VALID, "baseRevision": 3 })).await;
    assert_eq!(anon.status, StatusCode::UNAUTHORIZED);
    assert_eq!(lessons::list_revisions(&app.state.db, &owner, &lesson.id).await.unwrap().len(), 3, "nothing else was stored");
}

#[tokio::test]
async fn the_new_lesson_form_redirects_to_the_lesson_or_back_with_what_was_typed() {
    let app = app().await;
    let ana = app.sign_up("ana@x.org").await;

    let made = app.post_form("/lessons/new", Auth::Cookie(&ana), &[("title", " Fractions ")]).await;
    assert!(made.status.is_redirection(), "{}", made.status);
    let id = made.location().strip_prefix("/lessons/").expect("sent to the new lesson").to_string();
    let page = app.get(made.location(), Auth::Cookie(&ana)).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.body.contains("Fractions"));
    // The workspace is an island and carries the lesson as its props.
    assert!(page.body.contains("<leptos-island"), "{}", page.body);
    assert!(page.body.contains(&id));

    let blank = app.post_form("/lessons/new", Auth::Cookie(&ana), &[("title", "   ")]).await;
    assert!(blank.status.is_redirection());
    assert_eq!(blank.location(), "/?error=title&title=+++");
    let list = app.get(blank.location(), Auth::Cookie(&ana)).await;
    assert!(list.body.contains("Give the lesson a title."), "{}", list.body);

    let long = "x".repeat(201);
    let too_long = app.post_form("/lessons/new", Auth::Cookie(&ana), &[("title", long.as_str())]).await;
    assert!(too_long.location().starts_with("/?error=title-long&title=xxx"), "{}", too_long.location());
    let list = app.get(too_long.location(), Auth::Cookie(&ana)).await;
    assert!(list.body.contains("Keep the title under 200 characters."));
    assert!(list.body.contains(&long), "the typed title is kept in the form");

    // Typed into the address bar, the form's address leads to the form.
    let visit = app.get("/lessons/new", Auth::Cookie(&ana)).await;
    assert!(visit.status.is_redirection(), "{}", visit.status);
    assert_eq!(visit.location(), "/");

    let anon = app.post_form("/lessons/new", Auth::None, &[("title", "Sneaky")]).await;
    assert_eq!(anon.location(), "/signin");
    let ana_id = app.user_id(&ana).await;
    assert_eq!(margin::server::lessons::library::find(&app.state.db, &ana_id, "", margin::server::lessons::library::Sort::Edited, 50, 0).await.unwrap().total, 1, "only the valid form made a lesson");
}

#[tokio::test]
async fn an_address_that_leads_nowhere_is_the_one_not_found_page() {
    let app = app().await;
    let ana = app.sign_up("ana@x.org").await;
    let page = app.get("/no/such/page", Auth::Cookie(&ana)).await;
    assert_eq!(page.status, StatusCode::NOT_FOUND);
    assert!(page.body.contains("<h1>Page not found</h1>"), "{}", page.body);
    assert!(page.body.contains("Back to your lessons"));
}

/// The lesson editor's saves (`merge: true`): made on the version the
/// editor had, merged into anything saved since block by block, a conflict
/// only where both changed the same block; and nobody else's door.
#[tokio::test]
async fn the_editors_saves_merge_into_later_versions_and_stay_the_owners() {
    let app = app().await;
    let ana = app.sign_up("ana@lincoln.example").await;
    let owner = app.user_id(&ana).await;
    let lesson = lessons::create(&app.state.db, &owner, "Tides").await.unwrap();
    assert_eq!(lesson.document_xml, "<lesson>\n  <h1 id=\"b1\">Tides</h1>\n  <p id=\"b2\"/>\n</lesson>\n", "no words the teacher did not write");
    let doc = format!("/api/lessons/{}/document", lesson.id);
    let v1 = lesson.document_xml.clone();

    // Another tab renames the heading (version 2)…
    let other = app.put_json(&doc, Auth::Cookie(&ana), json!({ "xml": v1.replace(">Tides<", ">Tides and waves<"), "baseRevision": 1 })).await.json();
    assert_eq!(other["outcome"]["Saved"]["revision"], 2, "{other}");
    // …while the editor, still on version 1, writes the paragraph.
    let typed = v1.replace(r#"<p id="b2"/>"#, r#"<p id="b2">The moon pulls the sea.</p>"#);
    let merged = app.put_json(&doc, Auth::Cookie(&ana), json!({ "xml": typed, "baseRevision": 1, "merge": true })).await.json();
    assert_eq!(merged["outcome"]["Saved"]["revision"], 3, "{merged}");
    let now = merged["outcome"]["Saved"]["document_xml"].as_str().unwrap();
    assert!(now.contains(">Tides and waves<") && now.contains(">The moon pulls the sea.<"), "{now}");
    // Without `merge` (the XML tab) the same stale save is refused.
    let xml_tab = app.put_json(&doc, Auth::Cookie(&ana), json!({ "xml": typed, "baseRevision": 1 })).await.json();
    assert_eq!(xml_tab["outcome"]["Conflict"]["current"], 3, "{xml_tab}");
    // The same block changed on both sides: a conflict, nothing saved.
    let refused = app.put_json(&doc, Auth::Cookie(&ana), json!({ "xml": v1.replace(">Tides<", ">Tides today<").replace(r#"<p id="b2"/>"#, r#"<p id="b2">x</p>"#), "baseRevision": 1, "merge": true })).await.json();
    assert_eq!(refused["outcome"]["Conflict"]["current"], 3, "{refused}");
    let (rev, xml): (i64, String) = sqlx::query_as("SELECT revision, document_xml FROM lessons WHERE id = $1").bind(&lesson.id).fetch_one(&app.state.db).await.unwrap();
    assert_eq!((rev, xml.as_str()), (3, now));
    let history = app.get(&format!("/api/lessons/{}/revisions", lesson.id), Auth::Cookie(&ana)).await.json();
    assert_eq!(history[0]["summary"], "Edited the lesson", "{history}");

    // A teacher of another school, saving into it with `merge`: no such lesson.
    let eve = app.sign_up("eve@hostile.example").await;
    let hostile = app.put_json(&doc, Auth::Cookie(&eve), json!({ "xml": typed.replace("moon", "eve"), "baseRevision": 1, "merge": true })).await;
    assert_eq!(hostile.status, StatusCode::NOT_FOUND, "{}", hostile.body);
    let (after, _): (i64, String) = sqlx::query_as("SELECT revision, document_xml FROM lessons WHERE id = $1").bind(&lesson.id).fetch_one(&app.state.db).await.unwrap();
    assert_eq!(after, 3);
}

/// The teacher types while the assistant writes an edit: the edit, made on
/// the version the reply began with, lands merged into what the teacher
/// saved meanwhile, and neither loses a word.
#[tokio::test]
async fn an_assistants_edit_is_merged_into_what_the_teacher_typed_while_it_was_written() {
    let app = app().await;
    let t = common::teacher(&app, "ana@lincoln.example").await;
    let res = common::start_turn(&app, &t.token, &t.session_id, "Add a fill-in-the-blank exercise about French verbs").await;
    assert_eq!(res.status(), StatusCode::OK);
    let (mut body, mut parser) = (res.into_body(), margin::chat::sse::SseParser::new());
    // The first step (reading the skill) is done: the edit is being written now.
    let mut seen = Vec::new();
    while !seen.iter().any(|e: &margin::chat::sse::SseMessage| e.event == "tool_end") {
        let more = common::read_events(&mut body, &mut parser, 1).await;
        assert!(!more.is_empty(), "the reply ended early: {seen:?}");
        seen.extend(more);
    }
    let doc = format!("/api/lessons/{}/document", t.lesson_id);
    let v1 = app.get(&format!("/api/lessons/{}", t.lesson_id), Auth::Bearer(&t.token)).await.json()["documentXml"].as_str().unwrap().to_string();
    let typed = v1.replace(r#"<p id="b2"/>"#, r#"<p id="b2">Today: être and avoir.</p>"#);
    let saved = app.put_json(&doc, Auth::Bearer(&t.token), json!({ "xml": typed, "baseRevision": 1, "merge": true })).await.json();
    assert_eq!(saved["outcome"]["Saved"]["revision"], 2, "the teacher's words were saved before the edit: {saved}");
    while !seen.iter().any(|e| e.event == "done") {
        let more = common::read_events(&mut body, &mut parser, 1).await;
        assert!(!more.is_empty(), "the reply ended without `done`: {seen:?}");
        seen.extend(more);
    }
    let edit = seen.iter().filter(|e| e.event == "tool_end").map(|e| e.data.clone()).collect::<Vec<_>>().join("\n");
    assert!(edit.contains("Saved as version 3"), "the edit was saved, not sent back: {edit}");
    let now = app.get(&format!("/api/lessons/{}", t.lesson_id), Auth::Bearer(&t.token)).await.json();
    let xml = now["documentXml"].as_str().unwrap();
    assert!(xml.contains(r#"<p id="b2">Today: être and avoir.</p>"#) && xml.contains(r#"type="fill-blanks""#), "{xml}");
    assert!(edit.contains("Today: être and avoir."), "the assistant is told the lesson as it now reads: {edit}");
    let history = app.get(&format!("/api/lessons/{}/revisions", t.lesson_id), Auth::Bearer(&t.token)).await.json();
    assert_eq!(history[0]["author"], "agent", "{history}");
    assert_eq!(history[1]["summary"], "Edited the lesson", "{history}");
}
