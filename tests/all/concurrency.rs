//! Many teachers at once on one SQLite file: 200 concurrent lesson saves,
//! chat creations and turns over 20 accounts. No request fails with a 500 or
//! "database is locked", and every write that was answered as done is there.

use crate::common;

use axum::{
    body::Body,
    http::{header, Method, Request, StatusCode},
};
use common::{app, Auth, Reply, TestApp};
use futures::future::join_all;
use http_body_util::BodyExt;
use serde_json::json;
use tower::ServiceExt;

const TEACHERS: usize = 20;

struct Account {
    token: String,
    lesson: String,
    chats: Vec<String>,
}

async fn account(app: &TestApp, i: usize) -> Account {
    let user = margin::server::accounts::auth::create_user(&app.state.db, &app.state.hash_gate, true, &format!("t{i}@x.org"), "correct horse", None, None)
        .await
        .unwrap();
    let token = margin::server::accounts::auth::create_session(&app.state.db, &user.id, 1).await.unwrap();
    let lesson = margin::server::lessons::create(&app.state.db, &user.id, &format!("Lesson {i}")).await.unwrap().id;
    let mut chats = Vec::new();
    for _ in 0..3 {
        chats.push(margin::server::chats::create_session(&app.state.db, &user.id, &lesson, "").await.unwrap().id);
    }
    Account { token, lesson, chats }
}

/// What one of the 200 requests was and how it was answered.
enum Done {
    Save(Reply),
    NewChat(Reply),
    Turn(StatusCode, String),
}

async fn turn(app: &TestApp, token: &str, chat: &str) -> Done {
    let req = Request::builder()
        .method(Method::POST)
        .uri("/api/chat/stream")
        .header(header::AUTHORIZATION, format!("Bearer {token}"))
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(json!({"sessionId": chat, "content": "hello"}).to_string()))
        .unwrap();
    let res = app.router.clone().oneshot(req).await.unwrap();
    let status = res.status();
    let body = res.into_body().collect().await.unwrap().to_bytes();
    Done::Turn(status, String::from_utf8_lossy(&body).into_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_hundred_concurrent_writes_over_twenty_accounts_all_land() {
    let app = app().await;
    let mut accounts = Vec::new();
    for i in 0..TEACHERS {
        accounts.push(account(&app, i).await);
    }
    let xml = |i: usize, n: usize| {
        format!(r#"<lesson title="Lesson {i}" lang="en"><p>Saved by writer {n}.</p></lesson>"#)
    };
    let mut work: Vec<std::pin::Pin<Box<dyn std::future::Future<Output = Done> + Send + '_>>> = Vec::new();
    for (i, a) in accounts.iter().enumerate() {
        let bearer = a.token.as_str();
        // Four saves racing on the same base revision: one wins, the others
        // are told the lesson moved on (or are merged, if they do not overlap).
        for n in 0..4 {
            let app = &app;
            let path = format!("/api/lessons/{}/document", a.lesson);
            let body = json!({"xml": xml(i, n), "baseRevision": 1});
            work.push(Box::pin(async move { Done::Save(app.put_json(&path, Auth::Bearer(bearer), body).await) }));
        }
        for _ in 0..3 {
            let app = &app;
            let path = format!("/api/lessons/{}/chats", a.lesson);
            work.push(Box::pin(async move { Done::NewChat(app.post_json(&path, Auth::Bearer(bearer), json!({"title": "Parallel"})).await) }));
        }
        for chat in &a.chats {
            let app = &app;
            work.push(Box::pin(turn(app, bearer, chat)));
        }
    }
    assert_eq!(work.len(), 200);
    let done = join_all(work).await;

    let (mut saved, mut chats, mut turns) = (vec![0usize; TEACHERS], 0usize, 0usize);
    for (k, d) in done.into_iter().enumerate() {
        let teacher = k / 10;
        match d {
            Done::Save(r) => {
                assert!(!r.body.contains("locked"), "{}", r.body);
                assert_eq!(r.status, StatusCode::OK, "{}", r.body);
                // Saves racing from the same base: the rest are told someone saved first.
                let outcome = &r.json()["outcome"];
                if outcome.get("Saved").is_some() {
                    saved[teacher] += 1;
                } else {
                    assert!(outcome.get("Conflict").is_some(), "{}", r.body);
                }
            }
            Done::NewChat(r) => {
                assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
                chats += 1;
            }
            Done::Turn(status, body) => {
                assert_eq!(status, StatusCode::OK, "{body}");
                assert!(body.contains("event: done"), "turn did not finish: {body}");
                assert!(!body.contains("locked") && !body.contains("event: error"), "{body}");
                turns += 1;
            }
        }
    }
    assert_eq!((chats, turns), (60, 60));

    // Every write answered as done is stored.
    for (i, a) in accounts.iter().enumerate() {
        assert!(saved[i] >= 1, "teacher {i}: no save won");
        let revisions: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM lesson_revisions WHERE lesson_id = $1")
            .bind(&a.lesson)
            .fetch_one(&app.state.db)
            .await
            .unwrap();
        assert_eq!(revisions as usize, 1 + saved[i], "teacher {i}: revisions");
        let chat_count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM chat_sessions WHERE lesson_id = $1")
            .bind(&a.lesson)
            .fetch_one(&app.state.db)
            .await
            .unwrap();
        assert_eq!(chat_count, 6, "teacher {i}: chats");
    }
    let complete: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM chat_messages WHERE role = 'assistant' AND status = 'complete'")
        .fetch_one(&app.state.db)
        .await
        .unwrap();
    assert_eq!(complete, 60);
    let questions: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM chat_messages WHERE role = 'user'")
        .fetch_one(&app.state.db)
        .await
        .unwrap();
    assert_eq!(questions, 60);
}
