//! A turn as `text/event-stream`: following a live turn from any event on,
//! and replaying a finished one from its stored record.

use std::{convert::Infallible, pin::Pin, sync::Arc, time::Duration};

use axum::{
    http::HeaderValue,
    response::{
        sse::{Event, KeepAlive, Sse},
        IntoResponse, Response,
    },
};
use futures::{Stream, StreamExt};
use tokio::time::{Instant, Sleep};

use super::hub::TurnLog;
use crate::chat::{
    events::ChatEvent,
    message::{ChatMessage, MessageStatus},
    turn::terminal_event,
};

/// The turn's events after `after` as SSE, following the live turn to its end.
pub fn live_response(log: Arc<TurnLog>, after: u64, keepalive: Duration) -> Response {
    let (turn_id, message_id) = (log.turn_id.clone(), log.message_id.clone());
    let body = Sse::new(follow(log, after)).keep_alive(KeepAlive::new().interval(keepalive).text("keepalive"));
    with_turn_headers(body.into_response(), &turn_id, &message_id)
}

/// A turn no longer in this process, after `after`, from its stored message.
/// `lesson_now` is the lesson's current document and revision.
pub fn replay_response(turn_id: &str, message: &ChatMessage, lesson_now: Option<(String, i64)>, after: u64) -> Response {
    let events: Vec<Result<Event, Infallible>> = replay(message, lesson_now)
        .into_iter()
        .enumerate()
        .map(|(i, e)| (i as u64 + 1, e))
        .filter(|(seq, _)| *seq > after)
        .map(|(seq, e)| Ok(sse_event(seq, &e)))
        .collect();
    with_turn_headers(Sse::new(futures::stream::iter(events)).into_response(), turn_id, &message.id)
}

/// The events a turn no longer running stands for, rebuilt from its stored
/// message. A message still marked running here belongs to no live turn: it
/// did not finish.
///
/// The turn's last edit carries the document only while it is still the
/// lesson's current one (`lesson_now`, with its revision): a page following
/// the replay must never be shown an older document than the lesson has now,
/// nor save on top of one.
pub fn replay(m: &ChatMessage, lesson_now: Option<(String, i64)>) -> Vec<ChatEvent> {
    let mut record = m.record();
    if !record.is_over() {
        record.apply(&terminal_event(MessageStatus::Interrupted, None, &m.id, None));
    }
    let mut events = record.events(&m.id);
    let current = match (&record.document_xml, lesson_now) {
        (Some(edited), Some((xml, revision))) if *edited == xml => Some((xml, revision)),
        _ => None,
    };
    let last_edit = record.tool_calls.iter().rev().find(|c| c.tool == "edit_document" && c.succeeded()).map(|c| c.id.clone());
    if let (Some((xml, revision)), Some(id)) = (current, last_edit) {
        let end = events.iter_mut().rev().find_map(|e| match e {
            ChatEvent::ToolEnd(end) if end.id == id => Some(end),
            _ => None,
        });
        if let Some(end) = end {
            end.document_html = Some(crate::lesson::render_both(&xml));
            end.document_xml = Some(xml);
            end.revision = Some(revision);
        }
    }
    events
}

pub(super) fn sse_event(seq: u64, e: &ChatEvent) -> Event {
    Event::default().event(e.name()).id(seq.to_string()).data(e.data_json())
}

pub fn with_turn_headers(mut res: Response, turn_id: &str, message_id: &str) -> Response {
    let h = res.headers_mut();
    for (name, value) in [("x-turn-id", turn_id), ("x-message-id", message_id)] {
        if let Ok(v) = HeaderValue::from_str(value) {
            h.insert(name, v);
        }
    }
    h.insert("cache-control", HeaderValue::from_static("no-cache"));
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    res
}

/// How often a reader is sent new text while text is all that comes. A
/// model writes a piece every few milliseconds; a page cannot show them
/// faster than it draws, and every event written (and every wake-up of the
/// reader) is work for the server, the network and the page. Text that
/// follows text sent less than a frame ago waits for the rest of the frame,
/// with whatever else comes during it, and goes as one event; the first
/// text, and anything that comes outside such a wait (a step, an edit, the
/// end), goes at once.
pub const TEXT_FRAME: Duration = Duration::from_millis(50);

/// Where a reader of the log is.
struct Reader {
    log: Arc<TurnLog>,
    cursor: u64,
    rx: tokio::sync::watch::Receiver<u64>,
    done: bool,
    warned: bool,
    /// When text was last sent, while the latest sent was text.
    text_sent: Option<Instant>,
    /// The end of the text frame being waited out; made once the reader
    /// first waits, then moved (boxed: readers that never wait hold none).
    frame: Option<Pin<Box<Sleep>>>,
}

/// Reads the log from `after` on. When the reader falls behind, the text
/// pieces waiting for it are sent as one event (numbered as the last of them),
/// never out of order with the other events; text is sent at most once a
/// `TEXT_FRAME` while nothing else comes.
pub fn follow(log: Arc<TurnLog>, after: u64) -> impl Stream<Item = Result<Event, Infallible>> {
    let rx = log.subscribe();
    let reader = Reader { log, cursor: after, rx, done: false, warned: false, text_sent: None, frame: None };
    futures::stream::unfold(reader, |mut r| async move {
        if r.done {
            return None;
        }
        loop {
            // Seen now: what comes after this read is a change to wait for.
            r.rx.borrow_and_update();
            let (batch, finished, behind) = r.log.since_marked(r.cursor);
            if let Some((last, event)) = batch.last() {
                let frame_end = r.text_sent.map(|at| at + TEXT_FRAME).filter(|end| *end > Instant::now());
                if let Some(end) = frame_end.filter(|_| batch.iter().all(|(_, e)| matches!(e, ChatEvent::Text(_)))) {
                    let frame = r.frame.get_or_insert_with(|| Box::pin(tokio::time::sleep_until(end)));
                    if frame.deadline() != end {
                        frame.as_mut().reset(end);
                    }
                    // Only the frame's end wakes the reader: the pieces that
                    // come meanwhile are not a wake-up each.
                    frame.as_mut().await;
                    continue;
                }
                let (last, terminal, text) = (*last, event.is_terminal(), matches!(event, ChatEvent::Text(_)));
                // A reader that fell behind the events a running turn keeps
                // one by one is told once, then gets what it missed merged.
                let warn = behind && !r.warned;
                let warning = warn.then(|| {
                    let w = ChatEvent::slow_reader();
                    Event::default().event(w.name()).data(w.data_json())
                });
                let events: Vec<Result<Event, Infallible>> = warning.into_iter().chain(merge_text(batch)).map(Ok).collect();
                r.cursor = last;
                r.done = terminal;
                r.warned |= warn;
                r.text_sent = text.then(Instant::now);
                return Some((futures::stream::iter(events), r));
            }
            // A turn put aside for another process ends here without its
            // last event: the reader reconnects and finds it there.
            if finished || r.log.is_parked() || r.rx.changed().await.is_err() {
                return None;
            }
        }
    })
    .flatten()
}

fn merge_text(batch: Vec<(u64, ChatEvent)>) -> Vec<Event> {
    let mut out = Vec::new();
    // The text gathered so far: the number of its last event, its round, the text.
    let mut text: Option<(u64, u32, String)> = None;
    for (seq, e) in batch {
        match e {
            ChatEvent::Text(t) => match &mut text {
                Some((last, round, s)) if *round == t.round_index => {
                    *last = seq;
                    s.push_str(&t.content);
                }
                _ => {
                    if let Some((last, round, s)) = text.replace((seq, t.round_index, t.content)) {
                        out.push(sse_event(last, &ChatEvent::text_in(round, s)));
                    }
                }
            },
            other => {
                if let Some((last, round, s)) = text.take() {
                    out.push(sse_event(last, &ChatEvent::text_in(round, s)));
                }
                out.push(sse_event(seq, &other));
            }
        }
    }
    if let Some((last, round, s)) = text {
        out.push(sse_event(last, &ChatEvent::text_in(round, s)));
    }
    out
}

#[cfg(test)]
mod tests;
