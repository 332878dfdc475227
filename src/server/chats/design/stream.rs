//! The design's words as a `text/event-stream`: the turn's events read
//! from the first (live, from another instance, or replayed), translated,
//! and sent after the reader's last id.

use std::{convert::Infallible, sync::Arc, time::Duration};

use axum::response::{
    sse::{Event, KeepAlive, Sse},
    IntoResponse, Response,
};
use futures::{Stream, StreamExt};
use serde_json::Value;

use super::Design;
use crate::{chat::events::ChatEvent, server::chats::turns::{self, TurnLog}};

/// A batch of a turn's events, numbered.
pub type Batch = Vec<(u64, ChatEvent)>;

/// A live turn's events from the first, a batch at each wake-up, to its
/// end (or to its being put aside for another process).
pub fn log_batches(log: Arc<TurnLog>) -> impl Stream<Item = Batch> + Send + 'static {
    let rx = log.subscribe();
    futures::stream::unfold((log, rx, 0u64, false), |(log, mut rx, cursor, done)| async move {
        if done {
            return None;
        }
        loop {
            rx.borrow_and_update();
            let (batch, finished) = log.since(cursor);
            if let Some((last, e)) = batch.last() {
                let (last, terminal) = (*last, e.is_terminal());
                return Some((batch, (log, rx, last, terminal)));
            }
            if finished || log.is_parked() || rx.changed().await.is_err() {
                return None;
            }
        }
    })
}

/// The turn's events from the first (`batches`), said in the design's
/// words after `after` (a resumed reader's last id): each event's id is the
/// number of the event of Margin's it comes from, on the last of those it
/// gives (a reader cut off inside them is given them again). The stream
/// ends at the turn's end, or at a pause after `after`.
pub fn response(batches: impl Stream<Item = Batch> + Send + 'static, after: u64, turn_id: String, message_id: String, keepalive: Duration) -> Response {
    let (t, m) = (turn_id.clone(), message_id.clone());
    let state = (Box::pin(batches), Design::new(), false);
    let events = futures::stream::unfold(state, move |(mut batches, mut d, over)| {
        let (turn_id, message_id) = (turn_id.clone(), message_id.clone());
        async move {
            if over {
                return None;
            }
            loop {
                let batch = batches.next().await?;
                let mut said: Vec<(u64, Value)> = Vec::new();
                for (seq, e) in &batch {
                    said.extend(d.feed(*seq, e).into_iter().map(|v| (*seq, v)));
                }
                let mut over = d.ended;
                if let Some(at) = d.paused_at().filter(|at| *at > after && !d.ended) {
                    said.push((at, d.pause_done(&turn_id, &message_id)));
                    over = true;
                }
                let out = sse_events(said.into_iter().filter(|(seq, _)| *seq > after).collect());
                if !out.is_empty() || over {
                    return Some((futures::stream::iter(out), (batches, d, over)));
                }
            }
        }
    })
    .flatten();
    let body = Sse::new(events).keep_alive(KeepAlive::new().interval(keepalive).text("keepalive"));
    turns::with_turn_headers(body.into_response(), &t, &m)
}

/// `data:` only, as the design sends them; an `id:` on the last of each
/// event's group.
fn sse_events(said: Vec<(u64, Value)>) -> Vec<Result<Event, Infallible>> {
    let n = said.len();
    said.iter()
        .enumerate()
        .map(|(i, (seq, v))| {
            let e = Event::default().data(v.to_string());
            let last_of_group = i + 1 == n || said[i + 1].0 != *seq;
            Ok(if last_of_group { e.id(seq.to_string()) } else { e })
        })
        .collect()
}

