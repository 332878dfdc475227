//! What goes out compressed: pages and JSON when the client accepts brotli
//! or gzip; never an event stream (a reply's stream and a lesson's live
//! updates must reach the reader as they are written).
#![cfg(feature = "ssr")]

use crate::common;

use axum::{
    body::Body,
    http::{header, Method, Request, Response},
};
use tower::ServiceExt;

async fn send(app: &common::TestApp, req: Request<Body>) -> Response<Body> {
    app.router.clone().oneshot(req).await.expect("response")
}

fn encoding(res: &Response<Body>) -> Option<String> {
    res.headers().get(header::CONTENT_ENCODING).map(|v| v.to_str().unwrap().to_string())
}

fn content_type(res: &Response<Body>) -> String {
    res.headers().get(header::CONTENT_TYPE).map(|v| v.to_str().unwrap().to_string()).unwrap_or_default()
}

#[tokio::test]
async fn pages_and_json_are_compressed_and_event_streams_are_not() {
    let app = common::app().await;
    let t = common::teacher(&app, "zip@school.org").await;
    let bearer = format!("Bearer {}", t.token);
    let get = |uri: &str, accept: &str| {
        Request::builder().uri(uri).header(header::AUTHORIZATION, &bearer).header(header::ACCEPT_ENCODING, accept).header(header::ACCEPT, "*/*").body(Body::empty()).unwrap()
    };

    // JSON and a page: brotli when offered, gzip when only that is, plain otherwise.
    let res = send(&app, get("/api/lessons", "br, gzip")).await;
    assert_eq!(encoding(&res).as_deref(), Some("br"));
    let res = send(&app, get("/api/lessons", "gzip")).await;
    assert_eq!(encoding(&res).as_deref(), Some("gzip"));
    let res = send(&app, get("/api/lessons", "identity")).await;
    assert_eq!(encoding(&res), None);
    let page = Request::builder().uri("/signin").header(header::ACCEPT_ENCODING, "br, gzip").body(Body::empty()).unwrap();
    let res = send(&app, page).await;
    assert_eq!(encoding(&res).as_deref(), Some("br"));
    assert!(content_type(&res).starts_with("text/html"));

    // A lesson's live updates: an event stream, sent as it is.
    let res = send(&app, get(&format!("/api/lessons/{}/events", t.lesson_id), "br, gzip")).await;
    assert!(content_type(&res).starts_with("text/event-stream"), "{}", content_type(&res));
    assert_eq!(encoding(&res), None);

    // A reply's stream too.
    let req = Request::builder()
        .method(Method::POST)
        .uri("/api/chat/stream")
        .header(header::AUTHORIZATION, &bearer)
        .header(header::ACCEPT_ENCODING, "br, gzip")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(serde_json::json!({"sessionId": t.session_id, "content": "hello"}).to_string()))
        .unwrap();
    let res = send(&app, req).await;
    assert!(content_type(&res).starts_with("text/event-stream"), "{}", content_type(&res));
    assert_eq!(encoding(&res), None);
    // Kept out of compression, the streams still pass every request's checks
    // and get every response's headers.
    assert_eq!(res.headers().get(header::X_CONTENT_TYPE_OPTIONS).map(|v| v.to_str().unwrap()), Some("nosniff"));
    assert!(res.headers().contains_key(header::CONTENT_SECURITY_POLICY));
    let turn = res.headers()["x-turn-id"].to_str().unwrap().to_string();
    let res = send(&app, get(&format!("/api/chat/turns/{turn}/events"), "br, gzip")).await;
    assert!(content_type(&res).starts_with("text/event-stream"), "{}", content_type(&res));
    assert_eq!(encoding(&res), None);
    // A wrong method on them answers in JSON, as everywhere under /api/.
    let res = send(&app, get("/api/chat/stream", "br, gzip")).await;
    assert_eq!(res.status(), 405);
    assert!(content_type(&res).starts_with("application/json"), "{}", content_type(&res));
    // A stream asked for without an account is refused before anything is read.
    let anonymous = Request::builder().uri(format!("/api/lessons/{}/events", t.lesson_id)).body(Body::empty()).unwrap();
    assert_eq!(send(&app, anonymous).await.status(), 401);
}
