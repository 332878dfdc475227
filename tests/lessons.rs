//! Lessons belong to their teacher: listing, creating and opening them, and
//! another teacher's lesson answering 404 like one that does not exist.
#![cfg(feature = "ssr")]

mod common;

use axum::http::StatusCode;
use common::{app, Auth};
use leptos::server_fn::ServerFn;
use margin::{
    api::lessons::{CreateLesson, GetLesson, ListLessons},
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
    assert_eq!(missing.body, other.body, "another's lesson must look exactly like a missing one");
}

#[tokio::test]
async fn server_functions_check_the_session_and_the_owner() {
    let app = app().await;
    let ana = app.sign_up("ana@x.org").await;
    let ben = app.sign_up("ben@x.org").await;

    let anon = app.post_form(ListLessons::PATH, Auth::None, &[]).await;
    assert_eq!(anon.status, StatusCode::UNAUTHORIZED, "{}", anon.body);

    let created = app.post_form(CreateLesson::PATH, Auth::Cookie(&ana), &[("title", "Fractions")]).await;
    assert!(created.status.is_success(), "{} {}", created.status, created.body);
    let id: String = serde_json::from_str(&created.body).unwrap();

    let empty = app.post_form(CreateLesson::PATH, Auth::Cookie(&ana), &[("title", "   ")]).await;
    assert_eq!(empty.status, StatusCode::BAD_REQUEST);
    assert!(empty.body.contains("Give the lesson a title"), "{}", empty.body);

    let list = app.post_form(ListLessons::PATH, Auth::Cookie(&ana), &[]).await;
    let list: serde_json::Value = serde_json::from_str(&list.body).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 1);
    assert_eq!(list[0]["title"], "Fractions");

    let bens = app.post_form(ListLessons::PATH, Auth::Cookie(&ben), &[]).await;
    assert_eq!(bens.body, "[]");
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
        sqlx::query_as("SELECT number, author, document_xml FROM lesson_revisions WHERE lesson_id = ?")
            .bind(&lesson.id)
            .fetch_one(&app.state.db)
            .await
            .unwrap();
    assert_eq!((n, author.as_str()), (1, "teacher"));
    assert_eq!(doc, lesson.document_xml);
}
