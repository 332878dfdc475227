//! Retention (issue #70), on both databases: a school that keeps its
//! students' chats with the tutor for 30 days loses the older ones at the
//! daily sweep, and nothing newer; its teachers' chats, and a second
//! school that set nothing, keep everything; one instance sweeps a day;
//! only the school's admin sets the periods; `/metrics` counts what went.

use axum::http::StatusCode;
use margin::server::{config::Config, ops::retention};
use serde_json::json;
use time::OffsetDateTime;

use crate::common::{app_with, classes::{ask_tutor, class, student}, colleague, Auth, TestApp};

const METRICS: &str = "scrape-retention-5b1d";

/// A chat of `token`'s on `lesson`, its last message `days` ago.
async fn chat_aged(app: &TestApp, token: &str, lesson: &str, days: i64, now: OffsetDateTime) -> String {
    let r = app.post_json(&format!("/api/lessons/{lesson}/chats"), Auth::Bearer(token), json!({})).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let id = r.json()["id"].as_str().unwrap().to_string();
    let at = margin::server::db::time::stored(now - time::Duration::days(days));
    sqlx::query("UPDATE chat_sessions SET updated_at = $1 WHERE id = $2").bind(at).bind(&id).execute(&app.state.db).await.unwrap();
    id
}

async fn exists(app: &TestApp, chat: &str) -> bool {
    sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM chat_sessions WHERE id = $1").bind(chat).fetch_one(&app.state.db).await.unwrap() == 1
}

#[tokio::test]
async fn the_daily_sweep_deletes_the_chats_a_school_keeps_no_longer_and_nothing_else() {
    let app = app_with(Config { metrics_token: Some(METRICS.into()), ..Config::default() }).await;
    let now = OffsetDateTime::now_utc();
    // School A keeps tutor chats 30 days; school B set nothing.
    let a = class(&app, "admin@a.org").await;
    let s = student(&app, "pupil@a.org", &a.code).await;
    let b = class(&app, "admin@b.org").await;
    let sb = student(&app, "pupil@b.org", &b.code).await;

    // Only the admin sets it, within bounds.
    let teacher = colleague(&app, &a.teacher, "teacher@a.org").await;
    let body = json!({"tutorChatsDays": 30, "teacherChatsDays": null});
    assert_eq!(app.put_json("/api/school/retention", Auth::Bearer(&teacher), body.clone()).await.status, StatusCode::FORBIDDEN);
    assert_eq!(app.put_json("/api/school/retention", Auth::Bearer(&s), body.clone()).await.status, StatusCode::FORBIDDEN);
    assert_eq!(app.put_json("/api/school/retention", Auth::Bearer(&a.teacher), json!({"tutorChatsDays": 0})).await.status, StatusCode::BAD_REQUEST);
    let r = app.put_json("/api/school/retention", Auth::Bearer(&a.teacher), body).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.json()["tutorChatsDays"], 30);

    let old_tutor = chat_aged(&app, &s, &a.lesson, 31, now).await;
    let new_tutor = chat_aged(&app, &s, &a.lesson, 29, now).await;
    let old_teacher = chat_aged(&app, &a.teacher, &a.lesson, 400, now).await;
    let other_school = chat_aged(&app, &sb, &b.lesson, 400, now).await;
    // A conversation in the old chat goes with it.
    let r = ask_tutor(&app, &s, &old_tutor, "Explain this lesson", true).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let at = margin::server::db::time::stored(now - time::Duration::days(31));
    sqlx::query("UPDATE chat_sessions SET updated_at = $1 WHERE id = $2").bind(at).bind(&old_tutor).execute(&app.state.db).await.unwrap();
    let messages = || async { sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM chat_messages WHERE session_id = $1").bind(&old_tutor).fetch_one(&app.state.db).await.unwrap() };
    assert_eq!(messages().await, 2);

    // One instance sweeps a day: the first to claim it.
    assert!(retention::claim(&app.state.db, "instance-1", now).await.unwrap());
    assert!(!retention::claim(&app.state.db, "instance-2", now).await.unwrap());
    assert_eq!(retention::daily(&app.state.db, "instance-2", now).await.unwrap(), None, "the day is taken");
    let next_day = now + time::Duration::days(1);
    let swept = retention::daily(&app.state.db, "instance-2", next_day).await.unwrap().expect("the next day is free");
    assert_eq!((swept.tutor_chats, swept.teacher_chats), (1, 0));
    assert!(!exists(&app, &old_tutor).await);
    assert_eq!(messages().await, 0, "its messages went with it");
    // The tutor chat of 29 days was 30 days old by the next day's sweep: kept until it is older.
    assert!(exists(&app, &new_tutor).await);
    assert!(exists(&app, &old_teacher).await, "teachers' chats are kept: the school set nothing for them");
    assert!(exists(&app, &other_school).await, "another school's chats follow its own setting");

    // /metrics counts it, by what it was.
    let scraped = app.get("/metrics", Auth::Bearer(METRICS)).await.body;
    let line = scraped.lines().find(|l| l.starts_with("margin_retention_deleted_total{what=\"tutor_chats\"}")).unwrap_or_else(|| panic!("{scraped}"));
    assert!(line.rsplit(' ').next().unwrap().parse::<f64>().unwrap() >= 1.0, "{line}");

    // The School page shows and sets it.
    let page = app.get("/school", Auth::Cookie(&a.teacher)).await;
    assert!(page.body.contains("How long chats are kept") && page.body.contains(r#"value="30""#), "{}", page.body);
    let r = app.post_form("/school/retention", Auth::Cookie(&a.teacher), &[("tutor_chats_days", ""), ("teacher_chats_days", "365")]).await;
    assert_eq!((r.status, r.location()), (StatusCode::SEE_OTHER, "/school?done=retention"), "{}", r.body);
    let k = margin::server::accounts::keeping::of_school(&app.state.db, &school_of(&app, &a.teacher).await).await.unwrap();
    assert_eq!((k.tutor_chats_days, k.teacher_chats_days), (None, Some(365)));
    let swept = retention::sweep(&app.state.db, next_day).await.unwrap();
    assert_eq!((swept.tutor_chats, swept.teacher_chats), (0, 1));
    assert!(!exists(&app, &old_teacher).await && exists(&app, &new_tutor).await && exists(&app, &other_school).await);
}

async fn school_of(app: &TestApp, token: &str) -> String {
    let id = app.user_id(token).await;
    sqlx::query_scalar("SELECT school_id FROM users WHERE id = $1").bind(id).fetch_one(&app.state.db).await.unwrap()
}
