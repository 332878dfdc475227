//! Waiting on stored states, not on time: the app's reaction clock is
//! manual in tests (nothing fires until a test moves it), and a test waits
//! for the count it expects, with a deadline only against a hang.

use std::time::{Duration, Instant};

use super::TestApp;

/// Waits until `sql`, a count, says `want` (a deadline only against a hang).
pub async fn until(app: &TestApp, sql: &str, want: i64) {
    let waiting = Instant::now();
    loop {
        let n: i64 = sqlx::query_scalar(sql).fetch_one(&app.state.db).await.unwrap();
        if n == want {
            return;
        }
        if waiting.elapsed() > Duration::from_secs(60) {
            let messages: Vec<(String, String, String)> = sqlx::query_as("SELECT role, status, content FROM chat_messages ORDER BY seq").fetch_all(&app.state.db).await.unwrap();
            let gates: Vec<(String, Option<i64>, Option<i64>)> = sqlx::query_as("SELECT lesson_id, due_ms, last_fired_ms FROM lesson_event_gates").fetch_all(&app.state.db).await.unwrap();
            let waiting: i64 = count(app, "SELECT COUNT(*) FROM lesson_pending_events").await;
            panic!("{sql}: {n}, not {want}; messages {messages:?}, gates {gates:?}, {waiting} events waiting");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

pub async fn count(app: &TestApp, sql: &str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(&app.state.db).await.unwrap()
}

/// Lets the tasks woken by the clock run as far as they can.
pub async fn settle() {
    for _ in 0..50 {
        tokio::task::yield_now().await;
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
}

pub fn advance(app: &TestApp, ms: i64) {
    app.state.reactions.advance(Duration::from_millis(ms as u64));
}

