//! A turn's events for readers on other instances: a second tab, or a
//! reconnect that the load balancer sent elsewhere. The instance running the
//! turn writes its events to `turn_events` in batches (its `relay`, for all
//! its replies at once: every 150 ms for those read elsewhere, every 450 ms
//! for the others; numbered as the turn numbered them,
//! runs of text kept with the end of every delta: `Compacted`) and names the
//! turn in a note (`bus`) when a reader elsewhere said it follows it; that
//! reader reads the batches after its cursor (with every other reader of
//! its instance, in one statement: `stored_reads`), so it continues exactly
//! where it was, with the same event ids, whichever instance it asked.
//!
//! Only when the database is shared (PostgreSQL): with SQLite there is one
//! instance and every reader follows the turn's log in memory.

use super::store;
use std::{
    convert::Infallible,
    sync::Arc,
    time::{Duration, Instant},
};

use axum::response::{
    sse::{KeepAlive, Sse},
    IntoResponse, Response,
};
use futures::{Stream, StreamExt};
use tokio::sync::broadcast;

use super::{
    relay,
    sse::{sse_event, with_turn_headers},
    stored_reads::StoredReads,
};
use crate::{
    chat::{events::ChatEvent, turn::terminal_event},
    server::{
        bus::{self, Bus, Note},
        chats,
        db::{time, Db},
        error::Result,
        metrics::{self, ReaderGuard, METRICS},
    },
};

/// How long stored events are kept for late readers.
pub const KEEP: Duration = Duration::from_secs(600);

/// Whether any of a turn's events are stored.
pub async fn has_stored(db: &Db, turn_id: &str) -> Result<bool> {
    let found: Option<i64> = sqlx::query_scalar("SELECT last_seq FROM turn_events WHERE turn_id = $1 LIMIT 1").bind(turn_id).fetch_optional(db).await?;
    Ok(found.is_some())
}

/// Forgets events written before `now` minus `KEEP`, except those of
/// replies still running: a reply paused on a held edit can wait longer
/// than that, and a reader that opens it from the start elsewhere needs its
/// events from before the pause.
pub async fn purge(db: &Db, now: &str) -> Result<u64> {
    let Some(before) = time::shifted(now, KEEP, false) else { return Ok(0) };
    let gone = sqlx::query(
        "DELETE FROM turn_events WHERE created_at < $1
           AND NOT EXISTS (SELECT 1 FROM chat_messages m WHERE m.turn_id = turn_events.turn_id AND m.status = 'running')",
    )
    .bind(before)
    .execute(db)
    .await?;
    Ok(gone.rows_affected())
}

/// A turn running (or run) on another instance, after `after`, as SSE.
pub fn remote_response(db: Db, bus: &Arc<Bus>, reads: Arc<StoredReads>, owner: &str, turn_id: &str, message_id: &str, after: u64, keepalive: Duration) -> Response {
    let stream = remote_batches(db, bus.clone(), reads, owner.to_string(), turn_id.to_string(), after)
        .flat_map(|batch| futures::stream::iter(batch.into_iter().map(|(n, e)| Ok::<_, Infallible>(sse_event(n, &e))).collect::<Vec<_>>()));
    let body = Sse::new(stream).keep_alive(KeepAlive::new().interval(keepalive).text("keepalive"));
    with_turn_headers(body.into_response(), turn_id, message_id)
}

struct Reader {
    db: Db,
    bus: Arc<Bus>,
    reads: Arc<StoredReads>,
    notes: broadcast::Receiver<Note>,
    /// When the running instance was last told that this reader follows the turn.
    wanted: Option<Instant>,
    _open: ReaderGuard,
    owner: String,
    turn_id: String,
    cursor: u64,
    done: bool,
}

/// An edit's document goes with its event only while it is still the
/// lesson's current version (as in `sse::replay_response`): a page following
/// the turn must never be shown an older document than the lesson has now,
/// nor save on top of one.
async fn current_documents_only(r: &Reader, mut events: Vec<(u64, ChatEvent)>) -> Vec<(u64, ChatEvent)> {
    let edits = |e: &ChatEvent| matches!(e, ChatEvent::ToolEnd(end) if end.revision.is_some());
    if !events.iter().any(|(_, e)| edits(e)) {
        return events;
    }
    let now = chats::turn_lesson(&r.db, &r.owner, &r.turn_id).await.ok().flatten().map(|(_, revision)| revision);
    for (_, e) in &mut events {
        if let ChatEvent::ToolEnd(end) = e {
            if end.revision.is_some() && end.revision != now {
                end.document_xml = None;
                end.document_html = None;
                end.revision = None;
            }
        }
    }
    events
}

/// Reads the stored batches from `after` on, waiting for notes (or `POLL`)
/// between reads. A turn that ended without its last event stored (its
/// instance died, and a lease ended it) ends with the end its message has.
pub fn remote_batches(db: Db, bus: Arc<Bus>, reads: Arc<StoredReads>, owner: String, turn_id: String, after: u64) -> impl Stream<Item = Vec<(u64, ChatEvent)>> + Send + 'static {
    let notes = bus.subscribe();
    let reader = Reader { db, bus, reads, notes, wanted: None, _open: metrics::reader_opened(), owner, turn_id, cursor: after, done: false };
    futures::stream::unfold(reader, |mut r| async move {
        if r.done {
            return None;
        }
        loop {
            // Said before reading, so that a batch written after the read
            // is announced; until the relay surely heard it (its note may
            // cross a batch), the reader also looks on its own, often.
            if r.wanted.is_none_or(|at| at.elapsed() >= relay::RENEW) {
                relay::want(&r.bus, &r.db, &r.turn_id).await;
                r.wanted = Some(Instant::now());
            }
            let settling = r.wanted.is_some_and(|at| at.elapsed() < relay::TICK * 5);
            let events = match r.reads.since(&r.turn_id, r.cursor).await {
                Ok((events, written)) => {
                    if let Some(ms) = written.as_deref().and_then(time::epoch_millis).filter(|_| !events.is_empty()) {
                        let lag = (time::epoch_millis(&time::now()).unwrap_or(ms) - ms).max(0);
                        METRICS.event_lag.observe(lag as f64 / 1e3);
                    }
                    current_documents_only(&r, events).await
                }
                Err(e) => {
                    tracing::warn!(error = %e, turn = %r.turn_id, "could not read a turn's stored events");
                    return None; // the client reconnects from its last id
                }
            };
            if let Some((last, event)) = events.last() {
                (r.cursor, r.done) = (*last, event.is_terminal());
                return Some((events, r));
            }
            match store::turn_end(&r.db, &r.turn_id).await {
                Ok(Some(store::TurnEnd { status, error, message_id, lease_until })) if !status.is_running() => {
                    // Over, with nothing more stored: one last look (its last
                    // batch may have landed meanwhile).
                    if let Ok((late, _)) = r.reads.since(&r.turn_id, r.cursor).await {
                        if !late.is_empty() {
                            continue;
                        }
                    }
                    // Its instance stores the end before its relay writes the
                    // last batch: while that instance's lease holds, the batch
                    // is on its way (announced to this reader, which wants it).
                    // Only a reply whose instance stopped holding it ends here
                    // with the end its message has.
                    if lease_until.is_some_and(|until| until > time::now()) {
                        r.wait_for_note(relay::TICK * 2).await;
                        continue;
                    }
                    r.done = true;
                    // Told only when the turn's own last batch never came:
                    // its `final` is the record as stored.
                    let record = chats::turn_message(&r.db, &r.owner, &r.turn_id).await.ok().map(|m| m.record());
                    let end = (r.cursor + 1, terminal_event(status, error, &message_id, record.as_ref()));
                    return Some((vec![end], r));
                }
                Ok(Some(_)) => {}
                Ok(None) => return None,
                Err(e) => tracing::warn!(error = %e, turn = %r.turn_id, "could not check on a turn"),
            }
            r.wait_for_note(if settling { relay::TICK * 2 } else { bus::POLL }).await;
        }
    })
}

impl Reader {
    /// Waits (up to `wait`) for a note saying that the turn has new events stored.
    async fn wait_for_note(&mut self, wait: Duration) {
        let _ = tokio::time::timeout(wait, async {
            loop {
                match self.notes.recv().await {
                    Ok(note) if relay::names(&note, &self.turn_id) => return,
                    Ok(_) => {}
                    Err(broadcast::error::RecvError::Lagged(_)) => return,
                    Err(broadcast::error::RecvError::Closed) => std::future::pending::<()>().await,
                }
            }
        })
        .await;
    }
}
