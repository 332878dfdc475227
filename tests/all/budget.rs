//! Cost control (issue #21): schools, their monthly allowance and credits,
//! reservations that parallel turns cannot spend past, usage per model call,
//! the per-school reply limit, and who may see and change what.

#![cfg(feature = "ssr")]

use crate::common;

use axum::{
    body::Body,
    http::{header, Method, Request, StatusCode},
};
use common::{app_with, app_with_still_clock, teacher, Auth, TestApp};
use margin::server::{
    accounts::budget::{self, CallRecord},
    clock::MonthClock,
    config::Config,
};
use serde_json::{json, Value};

fn at(year: i32, month: u8, day: u8) -> time::OffsetDateTime {
    time::Date::from_calendar_date(year, time::Month::try_from(month).unwrap(), day).unwrap().midnight().assume_utc()
}

/// Replies unlimited per account and school: these tests are about budgets.
fn unlimited() -> Config {
    Config { turns_per_minute_user: 0, turns_per_minute_school: 0, ..Config::default() }
}

async fn school_of(app: &TestApp, token: &str) -> String {
    let id = app.user_id(token).await;
    sqlx::query_scalar("SELECT school_id FROM users WHERE id = $1").bind(id).fetch_one(&app.state.db).await.unwrap()
}

async fn ask(app: &TestApp, token: &str, session: &str, content: &str) -> common::Reply {
    app.post_json("/api/chat/stream", Auth::Bearer(token), json!({"sessionId": session, "content": content})).await
}

async fn spent(app: &TestApp, school: &str) -> i64 {
    sqlx::query_scalar("SELECT COALESCE(CAST(SUM(total_tokens) AS BIGINT), 0) FROM ai_calls WHERE school_id = $1")
        .bind(school)
        .fetch_one(&app.state.db)
        .await
        .unwrap()
}

async fn reserved(app: &TestApp, school: &str) -> i64 {
    sqlx::query_scalar("SELECT reserved FROM schools WHERE id = $1").bind(school).fetch_one(&app.state.db).await.unwrap()
}

fn call(school: &str, tokens: i64) -> CallRecord {
    CallRecord {
        school_id: school.into(),
        user_id: "u".into(),
        turn_id: "t".into(),
        model: "m".into(),
        prompt_tokens: tokens,
        completion_tokens: 0,
        estimated: false,
        outcome: "complete".into(),
    }
}

#[tokio::test]
async fn parallel_turns_cannot_spend_past_the_budget() {
    // A small output cap, so that "one call's maximum" is a tight bound.
    let llm = margin::scripted::ScriptedLlm::start().await.unwrap();
    let mut ai = margin::agent::config::AiConfig::scripted(llm.base_url.clone(), common::prompts());
    ai.limits.max_tokens = Some(200);
    let app = common::app_with_ai(unlimited(), margin::server::chats::ai::AiRuntime::with_scripted(ai, llm)).await;
    // One reply's real cost, measured in a school of its own.
    let probe = teacher(&app, "probe@x.org").await;
    let r = ask(&app, &probe.token, &probe.session_id, "test").await;
    assert!(r.body.contains("event: done"), "{}", r.body);
    let one_call = spent(&app, &school_of(&app, &probe.token).await).await;
    assert!(one_call > 0, "the call was recorded");

    // A school with room for about three replies starts twenty at once.
    let ana = teacher(&app, "ana@x.org").await;
    let school = school_of(&app, &ana.token).await;
    let budget = one_call * 3;
    budget::set_allowance(&app.state.db, &school, Some(budget)).await.unwrap();
    let mut chats = Vec::new();
    for i in 0..20 {
        let r = app.post_json(&format!("/api/lessons/{}/chats", ana.lesson_id), Auth::Bearer(&ana.token), json!({"title": format!("c{i}")})).await;
        chats.push(r.json()["id"].as_str().unwrap().to_string());
    }
    let replies = futures::future::join_all(chats.iter().map(|c| ask(&app, &ana.token, c, "test"))).await;
    let (mut done, mut refused) = (0, 0);
    for r in &replies {
        match r.status {
            StatusCode::OK => {
                assert!(r.body.contains("event: done"), "{}", r.body);
                done += 1;
            }
            StatusCode::PAYMENT_REQUIRED => {
                let body = r.json();
                assert_eq!(body["code"], "budget_exhausted");
                assert!(body["message"].as_str().unwrap().starts_with("Your school's AI allowance for this month is used up."), "{body}");
                assert!(body["resetsAt"].as_str().unwrap().ends_with("-01T00:00:00.000Z"), "{body}");
                refused += 1;
            }
            other => panic!("unexpected {other}: {}", r.body),
        }
    }
    assert!(done >= 1 && refused >= 1, "{done} ran, {refused} refused");
    assert_eq!(done + refused, 20);
    eprintln!("{done} replies ran, {refused} were refused");
    // The most a school can go over is one call's reservation: its prompt
    // plus AI_MAX_TOKENS.
    let total = spent(&app, &school).await;
    let max_call = one_call + i64::from(app.state.ai.config().limits.max_tokens.unwrap());
    assert!(total <= budget + max_call, "spent {total} of {budget} (one call at most {max_call})");
    let calls: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM ai_calls WHERE school_id = $1").bind(&school).fetch_one(&app.state.db).await.unwrap();
    assert_eq!(calls, done, "every reply that ran was recorded once");
    assert_eq!(reserved(&app, &school).await, 0, "every reservation was settled");
    // A refused turn stored nothing: no question without a reply.
    let questions: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM chat_messages WHERE role = 'user' AND session_id IN (SELECT id FROM chat_sessions WHERE owner_id = $1)")
        .bind(app.user_id(&ana.token).await)
        .fetch_one(&app.state.db)
        .await
        .unwrap();
    assert_eq!(questions, done);
}

#[tokio::test]
async fn the_allowance_is_spent_before_credits_and_comes_back_each_month() {
    let app = app_with(unlimited()).await;
    app.state.clock.set(at(2026, 11, 15));
    let clock: &MonthClock = &app.state.clock;
    assert_eq!(budget::month_of(clock.now()), "2026-11");
    let ana = teacher(&app, "ana@x.org").await;
    let school = school_of(&app, &ana.token).await;
    let db = &app.state.db;
    budget::set_allowance(db, &school, Some(1000)).await.unwrap();
    budget::add_credits(db, &school, 5000, None, at(2026, 11, 15)).await.unwrap();

    let summary = |t| budget::summary(db, &school, -1, t);
    budget::settle(db, &call(&school, 800), 0, false, -1, at(2026, 11, 15)).await.unwrap();
    let s = summary(at(2026, 11, 15)).await.unwrap();
    assert_eq!((s.used, s.credits, s.remaining), (800, 5000, Some(200 + 5000)));
    // 200 left of the allowance, the other 600 from credits.
    budget::settle(db, &call(&school, 800), 0, false, -1, at(2026, 11, 20)).await.unwrap();
    let s = summary(at(2026, 11, 20)).await.unwrap();
    assert_eq!((s.used, s.credits, s.remaining), (1000, 4400, Some(4400)));
    assert_eq!(s.meter().unwrap(), "1,000 of 1,000 tokens used this month, 4,400 credits left");
    // A new month: the allowance is whole again, the credits stay.
    let s = summary(at(2026, 12, 1)).await.unwrap();
    assert_eq!((s.used, s.credits, s.remaining), (0, 4400, Some(5400)));
    assert_eq!(s.resets_at, "2027-01-01T00:00:00.000Z");
    budget::settle(db, &call(&school, 300), 0, false, -1, at(2026, 12, 2)).await.unwrap();
    let s = summary(at(2026, 12, 2)).await.unwrap();
    assert_eq!((s.used, s.credits), (300, 4400), "December's allowance first");
    // Spent to the last token: a turn is refused before the model is asked.
    budget::settle(db, &call(&school, 700 + 4400), 0, false, -1, at(2026, 12, 3)).await.unwrap();
    app.state.clock.set(at(2026, 12, 3));
    let before = app.state.ai.scripted().unwrap().requests().len();
    let r = ask(&app, &ana.token, &ana.session_id, "test").await;
    assert_eq!(r.status, StatusCode::PAYMENT_REQUIRED, "{}", r.body);
    assert_eq!(r.json()["message"], "Your school's AI allowance for this month is used up. It resets on 1 January.");
    // Each call is recorded with what it took from credits.
    let taken: Vec<i64> = sqlx::query_scalar("SELECT from_credits FROM ai_calls WHERE school_id = $1 ORDER BY created_at")
        .bind(&school)
        .fetch_all(db)
        .await
        .unwrap();
    assert_eq!(taken, vec![0, 600, 0, 4400]);
    assert_eq!(r.json()["resetsAt"], "2027-01-01T00:00:00.000Z");
    assert_eq!(app.state.ai.scripted().unwrap().requests().len(), before, "the provider was not called");
    let status = app.get("/api/ai/status", Auth::Bearer(&ana.token)).await.json();
    assert_eq!(status["blocked"], "Your school's AI allowance for this month is used up. It resets on 1 January.");
    assert_eq!(status["usage"]["remaining"], 0);
    assert_eq!(status["role"], "admin");
    // Credits let the school go on at once. Only whoever runs the server
    // adds them: the school's admin is refused until named an operator.
    let r = app.post_json("/api/school/credits", Auth::Bearer(&ana.token), json!({"tokens": 50_000})).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    assert!(margin::server::accounts::operators::add(&app.state.db, "ana@x.org").await.unwrap());
    let r = app.post_json("/api/school/credits", Auth::Bearer(&ana.token), json!({"tokens": 50_000})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.json()["credits"], 50_000);
    let r = ask(&app, &ana.token, &ana.session_id, "test").await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert!(r.body.contains("event: done"));
    // And January starts afresh.
    app.state.clock.set(at(2027, 1, 1));
    let status = app.get("/api/ai/status", Auth::Bearer(&ana.token)).await.json();
    assert_eq!(status["usage"]["used"], 0);
    assert!(status["blocked"].is_null());
    assert!(status["usage"]["credits"].as_i64().unwrap() < 50_000, "December's reply was paid from credits");
    assert_eq!(status["meter"], format!("0 of 1,000 tokens used this month, {} credits left", budget_credits(&status)));
}

/// The credits a status shows, written as the meter writes them.
fn budget_credits(status: &Value) -> String {
    margin::chat::message::thousands(status["usage"]["credits"].as_i64().unwrap())
}

#[tokio::test]
async fn a_running_turn_stops_when_its_next_call_finds_the_budget_spent() {
    let app = app_with(unlimited()).await;
    const EDIT: &str = "Add a fill-in-the-blank exercise about French verbs";
    // What the edit's first call costs, in a school of its own.
    let probe = teacher(&app, "probe@x.org").await;
    let r = ask(&app, &probe.token, &probe.session_id, EDIT).await;
    assert!(r.body.contains("event: done"), "{}", r.body);
    let probe_school = school_of(&app, &probe.token).await;
    let calls: Vec<i64> = sqlx::query_scalar("SELECT total_tokens FROM ai_calls WHERE school_id = $1 ORDER BY created_at")
        .bind(&probe_school)
        .fetch_all(&app.state.db)
        .await
        .unwrap();
    assert!(calls.len() >= 2, "the edit takes more than one call: {calls:?}");

    // Half of that: the first call may start, the next finds nothing left.
    let ana = teacher(&app, "ana@x.org").await;
    let school = school_of(&app, &ana.token).await;
    budget::set_allowance(&app.state.db, &school, Some(calls[0] / 2)).await.unwrap();
    let r = ask(&app, &ana.token, &ana.session_id, EDIT).await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(r.body.contains("event: error"), "{}", r.body);
    assert!(r.body.contains("budget_exhausted"), "{}", r.body);
    let recorded: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM ai_calls WHERE school_id = $1").bind(&school).fetch_one(&app.state.db).await.unwrap();
    assert_eq!(recorded, 1, "only the first call was made");
    assert_eq!(reserved(&app, &school).await, 0);
    let m = app.get(&format!("/api/chats/{}/messages", ana.session_id), Auth::Bearer(&ana.token)).await.json();
    let last = m["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["status"], "error");
    assert_eq!(last["error"]["code"], "budget_exhausted");
}

#[tokio::test]
async fn usage_is_recorded_for_failed_and_cancelled_calls_too() {
    let app = app_with(unlimited()).await;
    let ana = teacher(&app, "ana@x.org").await;
    let school = school_of(&app, &ana.token).await;
    // The provider drops the connection mid-reply: it never says what the
    // call used, so it is counted from what was sent and received.
    let r = ask(&app, &ana.token, &ana.session_id, "drop the connection").await;
    assert!(r.body.contains("event: error"), "{}", r.body);
    let (outcome, estimated, total): (String, margin::server::db::Flag, i64) =
        sqlx::query_as("SELECT outcome, estimated, total_tokens FROM ai_calls WHERE school_id = $1")
            .bind(&school)
            .fetch_one(&app.state.db)
            .await
            .unwrap();
    assert_eq!(outcome, "failed");
    assert!(estimated.0);
    assert!(total > 0);
    // A provider that refuses outright costs nothing, but the call is on record.
    let r = ask(&app, &ana.token, &ana.session_id, "bad key").await;
    assert!(r.body.contains("event: error"), "{}", r.body);
    let rows: Vec<(String, i64)> = sqlx::query_as("SELECT outcome, total_tokens FROM ai_calls WHERE school_id = $1 ORDER BY created_at")
        .bind(&school)
        .fetch_all(&app.state.db)
        .await
        .unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1], ("failed".to_string(), 0));
    assert_eq!(reserved(&app, &school).await, 0, "a failed call gives its reservation back");
}

#[tokio::test]
async fn invitations_bring_teachers_into_the_school_once() {
    let app = app_with(Config { allow_signup: false, ..unlimited() }).await;
    let admin = app.sign_up("head@x.org").await;
    let me = app.get("/api/auth/me", Auth::Bearer(&admin)).await.json();
    assert_eq!(me["user"]["role"], "admin", "the first account runs its school");
    // Sign-up is closed, but an invitation opens it once.
    let refused = app.post_json("/api/auth/signup", Auth::None, json!({"email": "t@x.org", "password": "correct horse"})).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    let invite = app.post_json("/api/school/invites", Auth::Bearer(&admin), json!({})).await;
    assert_eq!(invite.status, StatusCode::CREATED, "{}", invite.body);
    let token = invite.json()["token"].as_str().unwrap().to_string();
    assert_eq!(invite.json()["path"], format!("/signup?invite={token}"));
    let joined = app.post_json("/api/auth/signup", Auth::None, json!({"email": "t@x.org", "password": "correct horse", "invite": token})).await;
    assert_eq!(joined.status, StatusCode::CREATED, "{}", joined.body);
    let user = &joined.json()["user"];
    assert_eq!(user["role"], "teacher");
    assert_eq!(user["school_id"].as_str(), Some(school_of(&app, &admin).await.as_str()));
    let again = app.post_json("/api/auth/signup", Auth::None, json!({"email": "u@x.org", "password": "correct horse", "invite": token})).await;
    assert_eq!(again.status, StatusCode::FORBIDDEN);
    assert_eq!(again.json()["error"], "This invitation link has been used or has expired. Ask your school's admin for a new one.");
    // A revoked invitation is dead too.
    let second = app.post_json("/api/school/invites", Auth::Bearer(&admin), json!({})).await.json();
    let r = app.send_json(Method::DELETE, &format!("/api/school/invites/{}", second["invite"]["id"].as_str().unwrap()), Auth::Bearer(&admin), json!({})).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    let late = app.post_json("/api/auth/signup", Auth::None, json!({"email": "v@x.org", "password": "correct horse", "invite": second["token"]})).await;
    assert_eq!(late.status, StatusCode::FORBIDDEN);
    // The admin sees the school with both accounts.
    let school = app.get("/api/school", Auth::Bearer(&admin)).await;
    assert_eq!(school.status, StatusCode::OK, "{}", school.body);
    let emails: Vec<String> = school.json()["members"].as_array().unwrap().iter().map(|m| m["email"].as_str().unwrap().to_string()).collect();
    assert_eq!(emails, ["head@x.org", "t@x.org"]);
}

#[tokio::test]
async fn teachers_cannot_add_credits_or_see_each_others_usage() {
    let app = app_with(unlimited()).await;
    let head = teacher(&app, "head@x.org").await;
    let token = app.post_json("/api/school/invites", Auth::Bearer(&head.token), json!({})).await.json()["token"].as_str().unwrap().to_string();
    let joined = app.post_json("/api/auth/signup", Auth::None, json!({"email": "t@x.org", "password": "correct horse", "invite": token})).await;
    let t = joined.json()["token"].as_str().unwrap().to_string();
    let t_id = app.user_id(&t).await;
    let head_id = app.user_id(&head.token).await;
    // The head teacher uses the assistant; the teacher does not.
    assert!(ask(&app, &head.token, &head.session_id, "test").await.body.contains("event: done"));

    for (method, path, body) in [
        (Method::POST, "/api/school/credits", json!({"tokens": 1000})),
        (Method::POST, "/api/school/invites", json!({})),
        (Method::PATCH, "/api/school", json!({"monthlyTokens": 5})),
        (Method::GET, "/api/school", json!(null)),
    ] {
        let r = if method == Method::GET { app.get(path, Auth::Bearer(&t)).await } else { app.send_json(method.clone(), path, Auth::Bearer(&t), body).await };
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{method} {path}: {}", r.body);
        assert_eq!(r.json()["code"], "forbidden");
    }
    let credits: i64 = sqlx::query_scalar("SELECT credits FROM schools WHERE id = $1").bind(school_of(&app, &t).await).fetch_one(&app.state.db).await.unwrap();
    assert_eq!(credits, 0);
    // The form door refuses too (back to the page, nothing added).
    let r = app.post_form("/school/credits", Auth::Cookie(&t), &[("tokens", "1000")]).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER);
    assert_eq!(r.location(), "/school");

    let others = app.get(&format!("/api/ai/usage?user={head_id}"), Auth::Bearer(&t)).await;
    assert_eq!(others.status, StatusCode::FORBIDDEN);
    let own = app.get("/api/ai/usage", Auth::Bearer(&t)).await.json();
    assert_eq!(own["total"], 0, "a teacher sees their own usage: {own}");
    assert!(own["byTeacher"].as_array().unwrap().is_empty());
    let all = app.get("/api/ai/usage", Auth::Bearer(&head.token)).await.json();
    let teachers = all["byTeacher"].as_array().unwrap();
    assert_eq!(teachers.len(), 1);
    assert_eq!(teachers[0]["userId"], head_id.as_str());
    assert!(all["total"].as_i64().unwrap() > 0);
    assert_eq!(all["byDay"].as_array().unwrap().len(), 1);
    let one = app.get(&format!("/api/ai/usage?user={t_id}"), Auth::Bearer(&head.token)).await.json();
    assert_eq!(one["total"], 0, "the admin may look at one teacher");
    // Nor does another school's admin see this school.
    let other = teacher(&app, "other@x.org").await;
    let theirs = app.get("/api/ai/usage", Auth::Bearer(&other.token)).await.json();
    assert_eq!(theirs["total"], 0);
    // The School page's credits form is an operator's: the admin is sent
    // back to the page, which says whom to ask; named an operator, it works.
    let r = app.post_form("/school/credits", Auth::Cookie(&head.token), &[("tokens", "12,000")]).await;
    assert_eq!(r.location(), "/school?error=operator#credits");
    assert!(margin::server::accounts::operators::add(&app.state.db, "head@x.org").await.unwrap());
    let r = app.post_form("/school/credits", Auth::Cookie(&head.token), &[("tokens", "12,000")]).await;
    assert_eq!(r.location(), "/school?done=credits");
    let status = app.get("/api/ai/status", Auth::Bearer(&head.token)).await.json();
    assert_eq!(status["usage"]["credits"], 12_000);
    assert!(status["meter"].is_null(), "no meter while the allowance is unlimited");
}

#[tokio::test]
async fn replies_are_limited_per_school_whatever_the_client_says() {
    let (app, clock) = app_with_still_clock(Config { turns_per_minute_user: 0, turns_per_minute_school: 2, ..Config::default() }).await;
    let head = teacher(&app, "head@x.org").await;
    let token = app.post_json("/api/school/invites", Auth::Bearer(&head.token), json!({})).await.json()["token"].as_str().unwrap().to_string();
    let t = app.post_json("/api/auth/signup", Auth::None, json!({"email": "t@x.org", "password": "correct horse", "invite": token})).await.json()["token"]
        .as_str()
        .unwrap()
        .to_string();
    let t_id = app.user_id(&t).await;
    let lesson = margin::server::lessons::create(&app.state.db, &t_id, "Verbs").await.unwrap();
    let chat = app.post_json(&format!("/api/lessons/{}/chats", lesson.id), Auth::Bearer(&t), json!({})).await.json()["id"].as_str().unwrap().to_string();
    let other = teacher(&app, "other@x.org").await;
    let turn = |token: &str, session: &str, xff: &str| {
        let req = Request::builder()
            .method(Method::POST)
            .uri("/api/chat/stream")
            .header(header::AUTHORIZATION, format!("Bearer {token}"))
            .header(header::CONTENT_TYPE, "application/json")
            .header("x-forwarded-for", xff)
            .body(Body::from(json!({"sessionId": session, "content": "test"}).to_string()))
            .unwrap();
        app.send(req)
    };
    assert_eq!(turn(&head.token, &head.session_id, "10.0.0.1").await.status, StatusCode::OK);
    assert_eq!(turn(&t, &chat, "10.0.0.2").await.status, StatusCode::OK);
    // The school's two are used, whoever asks and from wherever they say.
    let refused = turn(&t, &chat, "10.0.0.3").await;
    assert_eq!(refused.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(refused.headers[header::RETRY_AFTER], "30");
    assert_eq!(refused.json()["error"], "Your school has started a lot of replies in the last minute. Try again in 30 seconds.");
    assert_eq!(turn(&head.token, &head.session_id, "192.168.1.1").await.status, StatusCode::TOO_MANY_REQUESTS);
    // Another school is not held up.
    assert_eq!(turn(&other.token, &other.session_id, "10.0.0.1").await.status, StatusCode::OK);
    clock.advance(std::time::Duration::from_secs(30));
    assert_eq!(turn(&t, &chat, "10.0.0.1").await.status, StatusCode::OK);
}

#[tokio::test]
async fn the_command_line_adds_credits() {
    let app = app_with(unlimited()).await;
    let ana = teacher(&app, "ana@x.org").await;
    let school = school_of(&app, &ana.token).await;
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_margin"))
        .args(["credits", "add", "--school", &school, "--tokens", "25,000"])
        .env("DATABASE_URL", &app.database.url)
        .output()
        .expect("the binary runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "Added 25,000 tokens to My school. It now has 25,000 credits.");
    let status = app.get("/api/ai/status", Auth::Bearer(&ana.token)).await.json();
    assert_eq!(status["usage"]["credits"], 25_000);
    let wrong = std::process::Command::new(env!("CARGO_BIN_EXE_margin"))
        .args(["credits", "add", "--school", "Nowhere High", "--tokens", "5"])
        .env("DATABASE_URL", &app.database.url)
        .output()
        .unwrap();
    assert!(!wrong.status.success());
    assert!(String::from_utf8_lossy(&wrong.stderr).contains("No school has the id or name \"Nowhere High\""));
}

#[tokio::test]
async fn a_request_refused_after_reserving_keeps_nothing_reserved() {
    let app = app_with(Config { turns_per_minute_user: 1, turns_per_minute_school: 0, ..Config::default() }).await;
    let ana = teacher(&app, "ana@x.org").await;
    let school = school_of(&app, &ana.token).await;
    // Each of these is refused after the first call was reserved beside the
    // lookup of the chat: the reservation goes back.
    assert_eq!(ask(&app, &ana.token, "no-such-chat", "test").await.status, StatusCode::NOT_FOUND);
    assert_eq!(ask(&app, &ana.token, &ana.session_id, "   ").await.status, StatusCode::BAD_REQUEST);
    assert_eq!(ask(&app, &ana.token, &ana.session_id, "test").await.status, StatusCode::OK);
    assert_eq!(ask(&app, &ana.token, &ana.session_id, "test").await.status, StatusCode::TOO_MANY_REQUESTS);
    // Given back by a task of its own: wait until it has run.
    let mut left = reserved(&app, &school).await;
    for _ in 0..500 {
        if left == 0 {
            break;
        }
        tokio::task::yield_now().await;
        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
        left = reserved(&app, &school).await;
    }
    assert_eq!(left, 0, "every reservation was given back or settled");
}

#[tokio::test]
async fn a_teachers_share_keeps_them_from_spending_the_schools_month_and_comes_back_next_month() {
    let app = app_with(unlimited()).await;
    app.state.clock.set(at(2026, 11, 10));
    let head = teacher(&app, "head@x.org").await;
    // An invited colleague, with a lesson and a chat of their own.
    let invite = app.post_json("/api/school/invites", Auth::Bearer(&head.token), json!({})).await.json()["token"].as_str().unwrap().to_string();
    let colleague = app.post_json("/api/auth/signup", Auth::None, json!({"email": "t@x.org", "password": "correct horse", "invite": invite})).await.json()["token"]
        .as_str()
        .unwrap()
        .to_string();
    let lesson = app.post_json("/api/lessons", Auth::Bearer(&colleague), json!({"title": "Rivers"})).await.json()["id"].as_str().unwrap().to_string();
    let chat = app.post_json(&format!("/api/lessons/{lesson}/chats"), Auth::Bearer(&colleague), json!({})).await.json()["id"].as_str().unwrap().to_string();

    // The admin divides: each teacher may use 1 token a month (a single reply uses more).
    let r = app.send_json(Method::PATCH, "/api/school", Auth::Bearer(&head.token), json!({"teacherShare": 1})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.json()["school"]["teacherShare"], 1);
    // A teacher cannot change the shares.
    let r = app.send_json(Method::PATCH, "/api/school", Auth::Bearer(&colleague), json!({"teacherShare": null})).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);

    // The share lets one reply through (something was left), then stops the admin's next.
    assert!(ask(&app, &head.token, &head.session_id, "test").await.body.contains("event: done"));
    let r = ask(&app, &head.token, &head.session_id, "test").await;
    assert_eq!(r.status, StatusCode::PAYMENT_REQUIRED, "{}", r.body);
    assert_eq!(r.json()["message"], "Your share of your school's AI for this month is used up. It comes back on 1 December.");
    let status = app.get("/api/ai/status", Auth::Bearer(&head.token)).await.json();
    assert_eq!(status["blocked"], "Your share of your school's AI for this month is used up. It comes back on 1 December.");
    // The colleague still has theirs; nothing is held once the replies are done.
    assert!(ask(&app, &colleague, &chat, "test").await.body.contains("event: done"));
    let held: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM chat_messages WHERE reserved_tokens > 0").fetch_one(&app.state.db).await.unwrap();
    assert_eq!(held, 0);
    assert_eq!(reserved(&app, &school_of(&app, &head.token).await).await, 0);
    // December: the share is whole again.
    app.state.clock.set(at(2026, 12, 1));
    assert!(ask(&app, &head.token, &head.session_id, "test").await.body.contains("event: done"));
    // No share: the school's budget alone.
    let r = app.send_json(Method::PATCH, "/api/school", Auth::Bearer(&head.token), json!({"teacherShare": null})).await;
    assert!(r.json()["school"]["teacherShare"].is_null());
    assert!(ask(&app, &head.token, &head.session_id, "test").await.body.contains("event: done"));
    // The School page's form sets them too.
    let r = app.post_form("/school/settings", Auth::Cookie(&head.token), &[("name", "Hill School"), ("monthly_tokens", ""), ("teacher_share", "50,000"), ("student_share", "5,000")]).await;
    assert_eq!(r.location(), "/school?done=settings");
    let school = app.get("/api/school", Auth::Bearer(&head.token)).await.json();
    assert_eq!((school["school"]["teacherShare"].as_i64(), school["school"]["studentShare"].as_i64()), (Some(50_000), Some(5_000)));
    let r = app.send_json(Method::PATCH, "/api/school", Auth::Bearer(&head.token), json!({"studentShare": -5})).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn budget_writes_alone_commit_without_waiting_for_the_disk() {
    let app = app_with(unlimited()).await;
    if !common::database::postgres() {
        // SQLite: budgets queue with the turn engine's writes on one connection.
        assert_eq!(app.state.budget_writer.options().get_max_connections(), 1);
        return;
    }
    async fn setting(db: &margin::server::db::Db) -> String {
        sqlx::query_scalar("SELECT current_setting('synchronous_commit')").fetch_one(db).await.unwrap()
    }
    assert_eq!(setting(&app.state.budget_writer).await, "off", "a school's reservations do not wait, one by one, for the disk");
    assert_eq!(setting(&app.state.db).await, "on", "lessons, chats and everything else still do");
    assert_eq!(setting(&app.state.turn_writer).await, "on");
    // And they still count: a reservation and its settling, seen from the main pool.
    let ana = teacher(&app, "ana@x.org").await;
    let school = school_of(&app, &ana.token).await;
    let month = budget::month_of(time::OffsetDateTime::now_utc());
    let user = app.user_id(&ana.token).await;
    assert!(budget::reserve(&app.state.budget_writer, &school, &user, 500, -1, &month).await.unwrap());
    assert_eq!(reserved(&app, &school).await, 500);
    budget::settle(&app.state.budget_writer, &CallRecord { user_id: user, ..call(&school, 120) }, 500, false, -1, time::OffsetDateTime::now_utc()).await.unwrap();
    assert_eq!(reserved(&app, &school).await, 0);
    assert_eq!(spent(&app, &school).await, 120);
}

#[tokio::test]
async fn a_call_takes_from_credits_only_what_the_allowance_cannot_cover_and_no_more_than_there_are() {
    let app = app_with(unlimited()).await;
    let ana = teacher(&app, "ana@x.org").await;
    let school = school_of(&app, &ana.token).await;
    let db = &app.state.db;
    let summary = |t| budget::summary(db, &school, -1, t);
    budget::set_allowance(db, &school, Some(1000)).await.unwrap();
    budget::settle(db, &call(&school, 1050), 0, false, -1, at(2026, 12, 3)).await.unwrap();
    let s = summary(at(2026, 12, 3)).await.unwrap();
    assert_eq!((s.used, s.credits), (1050, 0), "without credits, the month's use goes past the allowance");
    // Past the credits there are, a call takes what is left of them and no more.
    budget::add_credits(db, &school, 100, None, at(2026, 12, 4)).await.unwrap();
    budget::settle(db, &call(&school, 250), 0, false, -1, at(2026, 12, 4)).await.unwrap();
    let s = summary(at(2026, 12, 4)).await.unwrap();
    assert_eq!((s.used, s.credits), (1200, 0), "100 of the 250 from credits");
    // Unlimited: nothing from credits.
    budget::add_credits(db, &school, 100, None, at(2026, 12, 5)).await.unwrap();
    budget::set_allowance(db, &school, Some(-1)).await.unwrap();
    budget::settle(db, &call(&school, 250), 0, false, -1, at(2026, 12, 5)).await.unwrap();
    let s = summary(at(2026, 12, 5)).await.unwrap();
    assert_eq!((s.used, s.credits), (1450, 100));
    let taken: Vec<i64> = sqlx::query_scalar("SELECT from_credits FROM ai_calls WHERE school_id = $1 ORDER BY created_at")
        .bind(&school)
        .fetch_all(db)
        .await
        .unwrap();
    assert_eq!(taken, vec![0, 100, 0]);
}
