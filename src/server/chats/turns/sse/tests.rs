//! A live reader's pacing: text at most once a frame, nothing lost, nothing
//! out of order, and what is not text never held back behind a frame it
//! did not start in.

use std::{sync::Arc, time::Duration};

use http_body_util::BodyExt;
use tokio::time::{advance, Instant};

use super::{live_response, TEXT_FRAME};
use crate::chat::events::{ChatEvent, DoneData, UsageData};
use crate::server::chats::turns::hub::TurnHub;

/// The next event on the wire: its name, its number and its data.
async fn next(body: &mut axum::body::Body) -> (String, String, String) {
    let frame = body.frame().await.expect("an event").expect("no error");
    let text = String::from_utf8(frame.into_data().expect("data").to_vec()).unwrap();
    let field = |name: &str| text.lines().find_map(|l| l.strip_prefix(name)).unwrap_or_default().to_string();
    (field("event: "), field("id: "), field("data: "))
}

fn content(data: &str) -> String {
    serde_json::from_str::<serde_json::Value>(data).unwrap()["content"].as_str().unwrap().to_string()
}

#[tokio::test(start_paused = true)]
async fn text_goes_at_most_once_a_frame_and_the_rest_at_once() {
    let hub = Arc::new(TurnHub::default());
    let log = hub.begin("t", "owner", "chat", "msg").unwrap();
    let mut body = live_response(log.clone(), 0, Duration::from_secs(3600)).into_body();

    // The first text goes at once.
    log.push(ChatEvent::text("a"));
    let started = Instant::now();
    let (name, id, data) = next(&mut body).await;
    assert_eq!((name.as_str(), id.as_str(), content(&data).as_str()), ("text", "1", "a"));
    assert_eq!(started.elapsed(), Duration::ZERO);

    // Text right after it waits for the rest of the frame, and goes as one
    // event numbered as its last piece.
    advance(Duration::from_millis(10)).await;
    log.push(ChatEvent::text("b"));
    advance(Duration::from_millis(10)).await;
    log.push(ChatEvent::text("c"));
    let (name, id, data) = next(&mut body).await;
    assert_eq!((name.as_str(), id.as_str(), content(&data).as_str()), ("text", "3", "bc"));
    assert_eq!(started.elapsed(), TEXT_FRAME, "sent when the frame that began with the first text ended");

    // Past the frame, text goes at once again.
    advance(TEXT_FRAME * 2).await;
    log.push(ChatEvent::text("d"));
    let at = Instant::now();
    let (_, id, data) = next(&mut body).await;
    assert_eq!((id.as_str(), content(&data).as_str()), ("4", "d"));
    assert_eq!(at.elapsed(), Duration::ZERO);

    // What is not text goes at once, with the text before it, even inside a frame.
    log.push(ChatEvent::text("e"));
    log.push(ChatEvent::Usage(UsageData { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 }));
    let (name, id, data) = next(&mut body).await;
    assert_eq!((name.as_str(), id.as_str(), content(&data).as_str()), ("text", "5", "e"));
    let (name, id, _) = next(&mut body).await;
    assert_eq!((name.as_str(), id.as_str()), ("usage", "6"));
    assert_eq!(at.elapsed(), Duration::ZERO);

    // The end goes at once after text too, and the stream closes.
    log.push(ChatEvent::text("f"));
    let (_, _, data) = next(&mut body).await;
    assert_eq!(content(&data), "f");
    log.push(ChatEvent::text("g"));
    log.push(ChatEvent::Done(DoneData::of("msg")));
    let (name, id, data) = next(&mut body).await;
    assert_eq!((name.as_str(), id.as_str(), content(&data).as_str()), ("text", "8", "g"));
    let (name, id, _) = next(&mut body).await;
    assert_eq!((name.as_str(), id.as_str()), ("done", "9"));
    assert_eq!(at.elapsed(), Duration::ZERO);
    assert!(body.frame().await.is_none(), "the stream ends after the last event");
}
