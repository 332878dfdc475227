//! Sign-up, sign-in, sign-out and session checks against a real SQLite file,
//! through the full router.
#![cfg(feature = "ssr")]

use crate::common;

use axum::http::{header, StatusCode};
use common::{app, app_with, Auth};
use margin::server::config::Config;
use serde_json::json;

#[tokio::test]
async fn sign_up_returns_a_token_that_works_as_bearer_and_cookie() {
    let app = app().await;
    let r = app
        .post_json("/api/auth/signup", Auth::None, json!({"email": "Ana@School.org", "password": "correct horse"}))
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let token = r.json()["token"].as_str().unwrap().to_string();
    assert_eq!(token.len(), 64);
    let cookie = r.set_cookie();
    assert!(cookie.starts_with(&format!("margin_session={token}")), "{cookie}");
    assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax"), "{cookie}");

    let me = app.get("/api/auth/me", Auth::Bearer(&token)).await;
    assert_eq!(me.status, StatusCode::OK);
    assert_eq!(me.json()["user"]["email"], "Ana@School.org");
    let me = app.get("/api/auth/me", Auth::Cookie(&token)).await;
    assert_eq!(me.status, StatusCode::OK);
    // The password hash never leaves the server.
    assert!(!me.body.contains("argon2"));
}

#[tokio::test]
async fn passwords_are_stored_as_argon2id_hashes_and_tokens_as_digests() {
    let app = app().await;
    let token = app.sign_up("b@school.org").await;
    let (hash,): (String,) = sqlx::query_as("SELECT password_hash FROM users").fetch_one(&app.state.db).await.unwrap();
    assert!(hash.starts_with("$argon2id$"), "{hash}");
    let (stored,): (String,) = sqlx::query_as("SELECT token_hash FROM sessions").fetch_one(&app.state.db).await.unwrap();
    assert_ne!(stored, token, "the raw token must not be stored");
}

#[tokio::test]
async fn sign_up_rejects_bad_input_and_duplicates() {
    let app = app().await;
    let bad_email = app.post_json("/api/auth/signup", Auth::None, json!({"email": "nope", "password": "correct horse"})).await;
    assert_eq!(bad_email.status, StatusCode::BAD_REQUEST);
    assert!(bad_email.json()["error"].as_str().unwrap().contains("valid email"));
    let short = app.post_json("/api/auth/signup", Auth::None, json!({"email": "c@x.org", "password": "short"})).await;
    assert_eq!(short.status, StatusCode::BAD_REQUEST);
    assert!(short.json()["error"].as_str().unwrap().contains("8 characters"));

    app.sign_up("c@x.org").await;
    let again = app.post_json("/api/auth/signup", Auth::None, json!({"email": "C@X.org", "password": "correct horse"})).await;
    assert_eq!(again.status, StatusCode::CONFLICT);
}

#[tokio::test]
async fn login_gives_no_hint_whether_the_account_exists() {
    let app = app().await;
    app.sign_up("d@x.org").await;
    let wrong_pw = app.post_json("/api/auth/login", Auth::None, json!({"email": "d@x.org", "password": "wrong password"})).await;
    let no_user = app.post_json("/api/auth/login", Auth::None, json!({"email": "nobody@x.org", "password": "wrong password"})).await;
    assert_eq!(wrong_pw.status, StatusCode::BAD_REQUEST);
    assert_eq!(wrong_pw.status, no_user.status);
    assert_eq!(wrong_pw.json(), no_user.json());

    let ok = app.post_json("/api/auth/login", Auth::None, json!({"email": "D@x.org", "password": "correct horse"})).await;
    assert_eq!(ok.status, StatusCode::OK, "{}", ok.body);
    let token = ok.json()["token"].as_str().unwrap().to_string();
    assert_eq!(app.get("/api/auth/me", Auth::Bearer(&token)).await.status, StatusCode::OK);
}

#[tokio::test]
async fn logout_ends_the_session() {
    let app = app().await;
    let token = app.sign_up("e@x.org").await;
    let out = app.post_json("/api/auth/logout", Auth::Bearer(&token), json!({})).await;
    assert_eq!(out.status, StatusCode::NO_CONTENT);
    assert!(out.set_cookie().contains("Max-Age=0"));
    assert_eq!(app.get("/api/auth/me", Auth::Bearer(&token)).await.status, StatusCode::UNAUTHORIZED);
    assert_eq!(app.get("/api/auth/me", Auth::Bearer("made-up")).await.status, StatusCode::UNAUTHORIZED);
    assert_eq!(app.get("/api/auth/me", Auth::None).await.status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn expired_sessions_are_refused() {
    let app = app().await;
    let token = app.sign_up("f@x.org").await;
    sqlx::query("UPDATE sessions SET expires_at = '2000-01-01T00:00:00.000Z'").execute(&app.state.db).await.unwrap();
    assert_eq!(app.get("/api/auth/me", Auth::Bearer(&token)).await.status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn repeated_failed_sign_ins_are_slowed_down() {
    let app = app().await;
    app.sign_up("g@x.org").await;
    for _ in 0..5 {
        let r = app.post_json("/api/auth/login", Auth::None, json!({"email": "g@x.org", "password": "guess guess"})).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST);
    }
    let limited = app.post_json("/api/auth/login", Auth::None, json!({"email": "G@x.org", "password": "correct horse"})).await;
    assert_eq!(limited.status, StatusCode::TOO_MANY_REQUESTS);
    assert!(limited.headers.get(header::RETRY_AFTER).is_some());
    assert!(limited.json()["error"].as_str().unwrap().contains("Wait"));
    // Another account is not affected.
    app.sign_up("h@x.org").await;
    let other = app.post_json("/api/auth/login", Auth::None, json!({"email": "h@x.org", "password": "correct horse"})).await;
    assert_eq!(other.status, StatusCode::OK);
}

#[tokio::test]
async fn the_first_teacher_can_always_sign_up_even_when_sign_up_is_closed() {
    let app = app_with(Config { allow_signup: false, ..Config::default() }).await;
    app.sign_up("first@x.org").await;
    let second = app.post_json("/api/auth/signup", Auth::None, json!({"email": "second@x.org", "password": "correct horse"})).await;
    assert_eq!(second.status, StatusCode::FORBIDDEN);
    assert!(second.json()["error"].as_str().unwrap().contains("closed"));
}

#[tokio::test]
async fn browser_forms_sign_in_and_out_with_redirects() {
    let app = app().await;
    let up = app.post_form("/auth/signup", Auth::None, &[("email", "i@x.org"), ("password", "correct horse"), ("next", "")]).await;
    assert_eq!(up.status, StatusCode::SEE_OTHER);
    assert_eq!(up.location(), "/");
    assert!(up.set_cookie().contains("HttpOnly"));

    let bad = app
        .post_form("/auth/signin", Auth::None, &[("email", "i@x.org"), ("password", "nope nope"), ("next", "/lessons/abc")])
        .await;
    assert_eq!(bad.status, StatusCode::SEE_OTHER);
    assert!(bad.location().starts_with("/signin?error=credentials&email=i%40x.org&next="), "{}", bad.location());
    assert!(bad.set_cookie().is_empty());

    let good = app
        .post_form("/auth/signin", Auth::None, &[("email", "i@x.org"), ("password", "correct horse"), ("next", "/lessons/abc")])
        .await;
    assert_eq!(good.location(), "/lessons/abc");
    let pair = good.cookie_pair();
    let token = pair.trim_start_matches("margin_session=");
    assert_eq!(app.get("/api/auth/me", Auth::Cookie(token)).await.status, StatusCode::OK);

    let evil = app
        .post_form("/auth/signin", Auth::None, &[("email", "i@x.org"), ("password", "correct horse"), ("next", "//evil.example")])
        .await;
    assert_eq!(evil.location(), "/");
    // A tab that browsers drop (making `//evil.example`), and a line break
    // that cannot go in a header: both go home, never a 500.
    for next in ["/\t/evil.example", "/lessons\r\nSet-Cookie: a=1"] {
        let odd = app.post_form("/auth/signin", Auth::None, &[("email", "i@x.org"), ("password", "correct horse"), ("next", next)]).await;
        assert_eq!((odd.status, odd.location()), (StatusCode::SEE_OTHER, "/"), "{next:?}: {}", odd.body);
    }

    let out = app.post_form("/auth/signout", Auth::Cookie(token), &[]).await;
    assert_eq!(out.location(), "/signin");
    assert_eq!(app.get("/api/auth/me", Auth::Cookie(token)).await.status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn pages_need_a_session() {
    let app = app().await;
    let home = app.get("/", Auth::None).await;
    assert_eq!(home.status, StatusCode::SEE_OTHER);
    assert_eq!(home.location(), "/signin");
    let lesson = app.get("/lessons/abc", Auth::None).await;
    assert_eq!(lesson.location(), "/signin?next=%2Flessons%2Fabc");

    let signin = app.get("/signin", Auth::None).await;
    assert_eq!(signin.status, StatusCode::OK);
    assert!(signin.body.contains("<label for=\"email\">Email</label>"), "{}", signin.body);

    let token = app.sign_up("j@x.org").await;
    assert_eq!(app.get("/", Auth::Cookie(&token)).await.status, StatusCode::OK);
    // Signed in: the sign-in page sends you home.
    assert_eq!(app.get("/signin", Auth::Cookie(&token)).await.location(), "/");
}

#[tokio::test]
async fn oversized_bodies_are_refused() {
    let app = app().await;
    let huge = "x".repeat(margin::server::edge::bodies::LESSON_BODY + 10);
    let r = app.post_json("/api/auth/login", Auth::None, json!({"email": huge, "password": "x"})).await;
    assert_eq!(r.status, StatusCode::PAYLOAD_TOO_LARGE);
}

#[tokio::test]
async fn health_reports_ok_and_the_database_is_set_up() {
    let app = app().await;
    let r = app.get("/healthz", Auth::None).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.json()["status"], "ok");
    let migrated: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM _sqlx_migrations WHERE success").fetch_one(&app.state.db).await.unwrap();
    assert!(migrated >= 1);
    if common::database::postgres() {
        return;
    }
    let (mode,): (String,) = sqlx::query_as("PRAGMA journal_mode").fetch_one(&app.state.db).await.unwrap();
    assert_eq!(mode, "wal");
    let (fk,): (i64,) = sqlx::query_as("PRAGMA foreign_keys").fetch_one(&app.state.db).await.unwrap();
    assert_eq!(fk, 1);
    let (sync,): (i64,) = sqlx::query_as("PRAGMA synchronous").fetch_one(&app.state.db).await.unwrap();
    assert_eq!(sync, 1, "NORMAL");
    assert!(app.dir.path().join("nested/margin.db").exists());
}
