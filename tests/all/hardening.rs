//! What a stranger can make the server do before signing in, and what a page
//! on another site can make a teacher's browser do: bounded limits on
//! signing in and up (per client address, not per forged header), JSON
//! errors for malformed or oversized requests (never 500, never plain text),
//! and no writes from other origins.

use crate::common;

use std::net::SocketAddr;

use axum::{
    body::Body,
    extract::ConnectInfo,
    http::{header, Method, Request, StatusCode},
};
use common::{app, app_with_still_clock, teacher, Auth, Reply, TestApp, OWN_ORIGIN};
use margin::server::config::Config;
use futures::StreamExt;
use serde_json::json;

/// A sign-in or sign-up from `peer`, with an optional forged `X-Forwarded-For`.
async fn account_post(app: &TestApp, path: &str, peer: &str, xff: Option<&str>, email: &str) -> Reply {
    let mut b = Request::builder().method(Method::POST).uri(path).header(header::CONTENT_TYPE, "application/json");
    if let Some(xff) = xff {
        b = b.header("x-forwarded-for", xff);
    }
    let mut req = b.body(Body::from(json!({"email": email, "password": "wrong password"}).to_string())).unwrap();
    req.extensions_mut().insert(ConnectInfo(peer.parse::<SocketAddr>().unwrap()));
    app.send(req).await
}

fn assert_json_error(r: &Reply, status: StatusCode) {
    assert_eq!(r.status, status, "{}", r.body);
    let ct = r.headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    assert!(ct.starts_with("application/json"), "{status}: content type {ct:?}, body {}", r.body);
    let body = r.json();
    assert!(body["error"].as_str().is_some_and(|e| !e.is_empty()), "{}", r.body);
    assert!(body["code"].as_str().is_some(), "{}", r.body);
}

#[tokio::test]
async fn a_fresh_email_per_try_does_not_buy_more_sign_ins_from_one_address() {
    let (app, _) = app_with_still_clock(Config::default()).await;
    let mut limited = None;
    for i in 0..80 {
        let r = account_post(&app, "/api/auth/login", "198.51.100.7:5000", None, &format!("guess{i}@x.org")).await;
        if r.status == StatusCode::TOO_MANY_REQUESTS {
            limited = Some((i, r));
            break;
        }
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    }
    let (i, r) = limited.expect("sign-ins from one address were never limited");
    assert_eq!(i, 60);
    assert!(r.headers.get(header::RETRY_AFTER).is_some());
    assert_json_error(&r, StatusCode::TOO_MANY_REQUESTS);
    // A forged X-Forwarded-For from an untrusted peer changes nothing.
    let forged = account_post(&app, "/api/auth/login", "198.51.100.7:5001", Some("203.0.113.1"), "new@x.org").await;
    assert_eq!(forged.status, StatusCode::TOO_MANY_REQUESTS);
    // Another address is not affected.
    let other = account_post(&app, "/api/auth/login", "198.51.100.8:5000", None, "new@x.org").await;
    assert_eq!(other.status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn sign_ups_are_limited_per_address() {
    let config = Config { signups_per_client_hour: 20, ..Config::default() };
    let (app, clock) = app_with_still_clock(config).await;
    for i in 0..20 {
        let r = account_post(&app, "/api/auth/signup", "198.51.100.9:1", None, &format!("t{i}@x.org")).await;
        assert_eq!(r.status, StatusCode::CREATED, "sign-up {i}: {}", r.body);
    }
    let r = account_post(&app, "/api/auth/signup", "198.51.100.9:2", None, "t20@x.org").await;
    assert_json_error(&r, StatusCode::TOO_MANY_REQUESTS);
    let r = account_post(&app, "/api/auth/signup", "198.51.100.10:1", None, "t20@x.org").await;
    assert_eq!(r.status, StatusCode::CREATED);
    // Later, the first address may sign up again.
    clock.advance(std::time::Duration::from_secs(180));
    let r = account_post(&app, "/api/auth/signup", "198.51.100.9:3", None, "t21@x.org").await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
}

#[tokio::test]
async fn behind_a_trusted_proxy_the_forwarded_client_is_limited_not_the_proxy() {
    let config = Config { trusted_proxies: margin::server::config::ip_range::IpRange::parse_list("10.0.0.1"), ..Config::default() };
    let (app, _) = app_with_still_clock(config).await;
    for i in 0..60 {
        let r = account_post(&app, "/api/auth/login", "10.0.0.1:1", Some(&format!("6.6.6.{i}, 203.0.113.5")), &format!("g{i}@x.org")).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{i}");
    }
    // The forged first entries rotated; the client the proxy saw did not.
    let r = account_post(&app, "/api/auth/login", "10.0.0.1:1", Some("7.7.7.7, 203.0.113.5"), "g@x.org").await;
    assert_eq!(r.status, StatusCode::TOO_MANY_REQUESTS);
    // Another client behind the same proxy goes on.
    let r = account_post(&app, "/api/auth/login", "10.0.0.1:1", Some("203.0.113.6"), "g@x.org").await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn overlong_credentials_are_refused_before_anything_else() {
    let app = app().await;
    let long_email = format!("{}@x.org", "a".repeat(300));
    let r = app.post_json("/api/auth/login", Auth::None, json!({"email": long_email, "password": "whatever"})).await;
    assert_json_error(&r, StatusCode::BAD_REQUEST);
    let r = app.post_json("/api/auth/login", Auth::None, json!({"email": "a@x.org", "password": "p".repeat(2000)})).await;
    assert_json_error(&r, StatusCode::BAD_REQUEST);
    // Neither was counted against the limits.
    assert!(app.state.limits.is_empty());
}

#[tokio::test]
async fn malformed_json_answers_400_in_the_api_shape() {
    let app = app().await;
    let t = teacher(&app, "m@x.org").await;
    let raw = |method: Method, path: String, ct: Option<&str>, body: &str| {
        let mut b = Request::builder().method(method).uri(path).header(header::AUTHORIZATION, format!("Bearer {}", t.token));
        if let Some(ct) = ct {
            b = b.header(header::CONTENT_TYPE, ct);
        }
        b.body(Body::from(body.to_string())).unwrap()
    };
    let json_ct = Some("application/json");
    let doc = format!("/api/lessons/{}/document", t.lesson_id);
    for (req, status) in [
        (raw(Method::PUT, doc.clone(), json_ct, "{not json"), StatusCode::BAD_REQUEST),
        (raw(Method::PUT, doc.clone(), json_ct, "{\"unexpected\": 1}"), StatusCode::BAD_REQUEST),
        (raw(Method::PUT, doc.clone(), Some("text/plain"), "{}"), StatusCode::UNSUPPORTED_MEDIA_TYPE),
        (raw(Method::PUT, doc.clone(), None, "{}"), StatusCode::UNSUPPORTED_MEDIA_TYPE),
        (raw(Method::POST, "/api/auth/login".into(), json_ct, "[1,2"), StatusCode::BAD_REQUEST),
        (raw(Method::POST, "/api/chat/stream".into(), Some("text/plain"), "{}"), StatusCode::UNSUPPORTED_MEDIA_TYPE),
        (raw(Method::POST, "/api/chat/stream".into(), json_ct, "{\"sessionId\": 5}"), StatusCode::BAD_REQUEST),
        (raw(Method::GET, format!("/api/lessons/{}/revisions/abc", t.lesson_id), None, ""), StatusCode::BAD_REQUEST),
        (raw(Method::GET, format!("/api/lessons/{}/changes?from=x&to=1", t.lesson_id), None, ""), StatusCode::BAD_REQUEST),
        (raw(Method::PATCH, format!("/api/chats/{}", t.session_id), json_ct, "{\"title\": [1]}"), StatusCode::BAD_REQUEST),
    ] {
        let what = format!("{} {}", req.method(), req.uri());
        let r = app.send(req).await;
        assert_eq!(r.status, status, "{what}: {}", r.body);
        assert_json_error(&r, status);
    }
}

#[tokio::test]
async fn every_route_has_a_body_limit_answered_as_json() {
    let app = app().await;
    let t = teacher(&app, "big@x.org").await;
    let big = |limit: usize| "x".repeat(limit + 1);
    let bearer = Auth::Bearer(&t.token);
    // Declared too large: refused before the body is read.
    let r = app.post_json("/api/auth/login", Auth::None, json!({"email": big(8 * 1024), "password": "x"})).await;
    assert_json_error(&r, StatusCode::PAYLOAD_TOO_LARGE);
    let r = app.post_json(&format!("/api/lessons/{}/chats", t.lesson_id), bearer, json!({"title": big(64 * 1024)})).await;
    assert_json_error(&r, StatusCode::PAYLOAD_TOO_LARGE);
    // Sent without a length (chunked): refused when it overflows.
    let chunks = futures::stream::iter((0..20).map(|_| Ok::<_, std::io::Error>(bytes::Bytes::from(vec![b'x'; 8 * 1024]))));
    let req = Request::builder()
        .method(Method::PATCH)
        .uri(format!("/api/chats/{}", t.session_id))
        .header(header::AUTHORIZATION, format!("Bearer {}", t.token))
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from_stream(chunks))
        .unwrap();
    assert_json_error(&app.send(req).await, StatusCode::PAYLOAD_TOO_LARGE);
}

#[tokio::test]
async fn server_functions_answer_malformed_or_oversized_input_without_500() {
    let app = app().await;
    let t = teacher(&app, "sf@x.org").await;
    // The server functions' addresses, as the router registered them.
    let pages = app.get(&format!("/lessons/{}", t.lesson_id), Auth::Cookie(&t.token)).await;
    assert_eq!(pages.status, StatusCode::OK);
    let path = <margin::api::lessons::GetLesson as leptos::server_fn::ServerFn>::PATH;
    let form = |body: String| {
        Request::builder()
            .method(Method::POST)
            .uri(path)
            .header(header::AUTHORIZATION, format!("Bearer {}", t.token))
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(Body::from(body))
            .unwrap()
    };
    let r = app.send(form(String::new())).await;
    assert_json_error(&r, StatusCode::BAD_REQUEST);
    let r = app.send(form(format!("id={}", "x".repeat(70 * 1024)))).await;
    assert_json_error(&r, StatusCode::PAYLOAD_TOO_LARGE);
    let r = app.send(form(format!("id={}", t.lesson_id))).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
}

#[tokio::test]
async fn writes_from_another_site_change_nothing() {
    let app = app().await;
    let t = teacher(&app, "x@x.org").await;
    let cross = |method: Method, path: String, body: serde_json::Value, origin: &str| {
        Request::builder()
            .method(method)
            .uri(path)
            .header(header::COOKIE, format!("margin_session={}", t.token))
            .header(header::ORIGIN, origin)
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(body.to_string()))
            .unwrap()
    };
    let rename = format!("/api/chats/{}", t.session_id);
    let r = app.send(cross(Method::PATCH, rename.clone(), json!({"title": "Pwned"}), "https://evil.example")).await;
    assert_json_error(&r, StatusCode::FORBIDDEN);
    let r = app.send(cross(Method::DELETE, rename.clone(), json!({}), "https://evil.example")).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    let chats = app.get(&format!("/api/lessons/{}/chats", t.lesson_id), Auth::Bearer(&t.token)).await;
    assert_eq!(chats.json()[0]["title"], "First chat");
    // The same from Margin's own page goes through.
    let r = app.send(cross(Method::PATCH, rename, json!({"title": "Renamed"}), OWN_ORIGIN)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    // A form sign-in posted from another site is refused too.
    let req = Request::builder()
        .method(Method::POST)
        .uri("/auth/signin")
        .header(header::ORIGIN, "https://evil.example")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Body::from("email=x%40x.org&password=correct+horse"))
        .unwrap();
    let r = app.send(req).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    assert!(r.headers.get(header::SET_COOKIE).is_none());
}

#[tokio::test]
async fn an_upload_that_stalls_is_answered_408_and_let_go() {
    let app = app().await;
    let t = teacher(&app, "slow@x.org").await;
    // One piece of the body, then nothing more, ever.
    let stalled = futures::stream::iter([Ok::<_, std::io::Error>(bytes::Bytes::from_static(b"{\"title\":"))])
        .chain(futures::stream::pending());
    let req = Request::builder()
        .method(Method::PATCH)
        .uri(format!("/api/chats/{}", t.session_id))
        .header(header::AUTHORIZATION, format!("Bearer {}", t.token))
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from_stream(stalled))
        .unwrap();
    // The server's clock runs ahead while nothing else is going on.
    tokio::time::pause();
    let r = app.send(req).await;
    assert_json_error(&r, StatusCode::REQUEST_TIMEOUT);
}

#[tokio::test]
async fn a_wrong_api_address_or_method_answers_in_json() {
    let app = app().await;
    let t = teacher(&app, "wrong@x.org").await;
    let r = app.get("/api/no/such/thing", Auth::Bearer(&t.token)).await;
    assert_json_error(&r, StatusCode::NOT_FOUND);
    let r = app.send_json(Method::DELETE, "/api/auth/me", Auth::Bearer(&t.token), json!({})).await;
    assert_json_error(&r, StatusCode::METHOD_NOT_ALLOWED);
    let r = app.get(&format!("/api/chats/{}/messages", t.session_id), Auth::Bearer(&t.token)).await;
    assert_eq!(r.status, StatusCode::OK);
}

#[tokio::test]
async fn replies_are_limited_per_account_whatever_the_client_says() {
    let (app, clock) = app_with_still_clock(Config { turns_per_minute_user: 3, ..Config::default() }).await;
    let ana = teacher(&app, "ana@x.org").await;
    let ben = teacher(&app, "ben@x.org").await;
    let turn = |who: &common::Teacher, xff: String| {
        let req = Request::builder()
            .method(Method::POST)
            .uri("/api/chat/stream")
            .header(header::AUTHORIZATION, format!("Bearer {}", who.token))
            .header(header::CONTENT_TYPE, "application/json")
            .header("x-forwarded-for", xff)
            .body(Body::from(json!({"sessionId": who.session_id, "content": "test"}).to_string()))
            .unwrap();
        app.send(req)
    };
    // Three a minute: all at once, then one every 20 s. A new forged
    // address per try changes nothing; the account is what counts.
    for i in 0..3 {
        let r = turn(&ana, format!("10.0.0.{i}")).await;
        assert_eq!(r.status, StatusCode::OK, "turn {i}: {}", r.body);
        assert!(r.body.contains("event: done"));
    }
    let refused = turn(&ana, "10.9.9.9".into()).await;
    assert_eq!(refused.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(refused.headers[header::RETRY_AFTER], "20");
    assert_eq!(refused.json()["code"], "rate_limited");
    assert_eq!(refused.json()["error"], "You have started a lot of replies in the last minute. Try again in 20 seconds.");
    // Another teacher is not held up, and the first may go on once it is time.
    assert_eq!(turn(&ben, "10.0.0.1".into()).await.status, StatusCode::OK);
    clock.advance(std::time::Duration::from_secs(20));
    assert_eq!(turn(&ana, "10.0.0.1".into()).await.status, StatusCode::OK);
    assert_eq!(turn(&ana, "10.0.0.1".into()).await.status, StatusCode::TOO_MANY_REQUESTS);
}
