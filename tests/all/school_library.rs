//! The School library: a teacher shares a lesson with their school;
//! colleagues of that school find it (search, subject, grade), read it and
//! copy it with its material and without its chats; another school, a
//! student, or a colleague trying to share someone else's lesson gets
//! nothing; withdrawn, it is gone from the library and the copies stay.
#![cfg(feature = "ssr")]

use crate::common;

use axum::http::{Method, StatusCode};
use common::{
    classes::{save_xml, student, LESSON},
    teacher, Auth, TestApp,
};
use serde_json::{json, Value};

async fn library(app: &TestApp, token: &str, query: &str) -> Value {
    let r = app.get(&format!("/api/library{query}"), Auth::Bearer(token)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    r.json()
}

#[tokio::test]
async fn a_shared_lesson_is_found_read_and_copied_by_colleagues_only() {
    let app = common::app().await;
    let head = teacher(&app, "head@x.org").await;
    save_xml(&app, &head.token, &head.lesson_id, LESSON).await;
    let r = common::upload(&app, &format!("/api/lessons/{}/sources", head.lesson_id), Auth::Bearer(&head.token), &[("notes.txt", b"Etre is irregular in every tense.")]).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let colleague = common::colleague(&app, &head.token, "t@x.org").await;
    let outsider = teacher(&app, "o@y.org").await;
    let r = app.post_json("/api/classes", Auth::Bearer(&head.token), json!({"name": "7B"})).await;
    let pupil = student(&app, "s@x.org", r.json()["joinCode"].as_str().unwrap()).await;

    // Nothing is shared yet.
    assert_eq!(library(&app, &colleague, "").await["lessons"], json!([]));
    let share = format!("/api/lessons/{}/share", head.lesson_id);
    // Only its owner shares it.
    for who in [&colleague, &outsider.token] {
        let r = app.put_json(&share, Auth::Bearer(who), json!({"subject": "French", "grade": "5"})).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);
    }
    let r = app.put_json(&share, Auth::Bearer(&head.token), json!({"subject": "French", "grade": "13"})).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    let r = app.put_json(&share, Auth::Bearer(&head.token), json!({"subject": "  French ", "grade": "5"})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.json()["shared"], true);

    // A colleague finds it; filters and search narrow it.
    let found = library(&app, &colleague, "").await;
    assert_eq!(found["lessons"].as_array().unwrap().len(), 1, "{found}");
    let l = &found["lessons"][0];
    assert_eq!((l["title"].as_str(), l["subject"].as_str(), l["grade"].as_str(), l["teacher"].as_str(), l["mine"].as_bool()), (Some("Verbs"), Some("French"), Some("5"), Some("head@x.org"), Some(false)));
    assert_eq!((found["subjects"].clone(), found["grades"].clone()), (json!(["French"]), json!(["5"])));
    assert_eq!(library(&app, &head.token, "").await["lessons"][0]["mine"], true);
    for (query, n) in [("?q=verbs", 1), ("?q=irregular%20tense", 0), ("?q=content", 1), ("?q=%25", 0), ("?subject=Maths", 0), ("?subject=French&grade=5", 1), ("?grade=6", 0)] {
        assert_eq!(library(&app, &colleague, query).await["lessons"].as_array().unwrap().len(), n, "{query}");
    }
    let opened = app.get(&format!("/api/library/{}", head.lesson_id), Auth::Bearer(&colleague)).await;
    assert_eq!(opened.status, StatusCode::OK, "{}", opened.body);
    assert!(opened.json()["html"]["teacher"].as_str().unwrap().contains("Demain, je"), "{}", opened.body);

    // Another school, and students, see nothing of it.
    assert_eq!(library(&app, &outsider.token, "").await["lessons"], json!([]));
    for (method, path) in [(Method::GET, format!("/api/library/{}", head.lesson_id)), (Method::POST, format!("/api/library/{}/copy", head.lesson_id))] {
        let r = app.send_json(method, &path, Auth::Bearer(&outsider.token), json!({})).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{path}: {}", r.body);
    }
    let r = app.get("/api/library", Auth::Bearer(&pupil)).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    let page = app.get("/library", Auth::Cookie(&outsider.token)).await;
    assert!(page.body.contains("Nothing is shared with your school yet.") && !page.body.contains("Verbs"), "{}", page.body);
    let page = app.get(&format!("/library/{}", head.lesson_id), Auth::Cookie(&outsider.token)).await;
    assert!(!page.body.contains("Demain, je") && !page.body.contains("Copy to my lessons"), "{}", page.body);

    // A copy whose material cannot be written is not made at all.
    let count = |body: Value| body["lessons"].as_array().map(Vec::len);
    let before = count(app.get("/api/lessons", Auth::Bearer(&colleague)).await.json());
    app.refuse_inserts("lesson_sources").await;
    let r = app.post_json(&format!("/api/library/{}/copy", head.lesson_id), Auth::Bearer(&colleague), json!({})).await;
    assert_eq!(r.status, StatusCode::INTERNAL_SERVER_ERROR, "{}", r.body);
    app.allow_inserts("lesson_sources").await;
    assert_eq!(count(app.get("/api/lessons", Auth::Bearer(&colleague)).await.json()), before);

    // The colleague copies it: the document and its material, no chat.
    let r = app.post_json(&format!("/api/library/{}/copy", head.lesson_id), Auth::Bearer(&colleague), json!({})).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let copy = r.json()["id"].as_str().unwrap().to_string();
    let mine = app.get(&format!("/api/lessons/{copy}"), Auth::Bearer(&colleague)).await.json();
    let theirs = app.get(&format!("/api/lessons/{}", head.lesson_id), Auth::Bearer(&head.token)).await.json();
    assert_eq!(mine["documentXml"], theirs["documentXml"]);
    assert_eq!(mine["title"], "Verbs");
    let sources = app.get(&format!("/api/lessons/{copy}/sources"), Auth::Bearer(&colleague)).await.json();
    assert_eq!(sources.as_array().map(Vec::len), Some(1), "{sources}");
    let chats = app.get(&format!("/api/lessons/{copy}/chats"), Auth::Bearer(&colleague)).await.json();
    assert_eq!(chats, json!([]), "no chats come with a copy");
    // Through the pages too.
    let page = app.get("/library?q=verbs", Auth::Cookie(&colleague)).await;
    assert!(page.body.contains("French · Grade 5 · shared by head@x.org"), "{}", page.body);
    let page = app.get(&format!("/library/{}", head.lesson_id), Auth::Cookie(&colleague)).await;
    assert!(page.body.contains("Copy to my lessons") && page.body.contains("Demain, je"), "{}", page.body);
    let r = app.post_form(&format!("/library/{}/copy", head.lesson_id), Auth::Cookie(&colleague), &[]).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.body);
    assert!(r.location().starts_with("/lessons/") && !r.location().ends_with(&copy), "{}", r.location());

    // Withdrawn: gone from the library; the copies stay.
    let r = app.post_form(&format!("/lessons/{}/share", head.lesson_id), Auth::Cookie(&head.token), &[("action", "stop")]).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.body);
    assert_eq!(library(&app, &colleague, "").await["lessons"], json!([]));
    let r = app.get(&format!("/api/library/{}", head.lesson_id), Auth::Bearer(&colleague)).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);
    assert_eq!(app.get(&format!("/api/lessons/{copy}"), Auth::Bearer(&colleague)).await.status, StatusCode::OK);
    let page = app.get(&format!("/lessons/{}/share", head.lesson_id), Auth::Cookie(&head.token)).await;
    assert!(page.body.contains("Not shared: only you see this lesson."), "{}", page.body);

    // Shared again through the form, then trashed: gone too.
    let r = app.post_form(&format!("/lessons/{}/share", head.lesson_id), Auth::Cookie(&head.token), &[("action", "share"), ("subject", "French"), ("grade", "x")]).await;
    assert!(r.location().ends_with("/share?error=input"), "{}", r.location());
    let r = app.post_form(&format!("/lessons/{}/share", head.lesson_id), Auth::Cookie(&head.token), &[("action", "share"), ("subject", ""), ("grade", "")]).await;
    assert!(r.location().ends_with("/share"), "{}", r.location());
    assert_eq!(library(&app, &colleague, "").await["lessons"].as_array().unwrap().len(), 1);
    let r = app.send_json(Method::DELETE, &format!("/api/lessons/{}", head.lesson_id), Auth::Bearer(&head.token), json!({})).await;
    assert!(r.status.is_success(), "{}", r.body);
    assert_eq!(library(&app, &colleague, "").await["lessons"], json!([]));
}
