//! The instance's one writer for its running replies, when the database is
//! shared (PostgreSQL): every `TICK` it gathers every running reply's new
//! events into one multi-row insert into `turn_events`, every reply's due
//! checkpoint into one update of `chat_messages`, and sends one note naming
//! the turns another instance is reading, all in one transaction. What the
//! database does per second then grows with the instances, not the replies
//! (`make bench-scale`).
//!
//! A reply nobody on another instance reads is written only every
//! `QUIET_TICKS`th tick while it streams (the same ticks for all such
//! replies): its events are then kept only for a reader who comes later,
//! and that reader asks (below). Once it stops (its end, a pause for the
//! teacher) what it has is written at the next tick.
//!
//! Notes go only where someone listens: a reader on another instance says
//! which turn it follows (`want`, a note of its own, renewed while it
//! reads), and the relay that runs the turn names it in its next note. A
//! reader that misses a note still reads on its own every `bus::POLL`.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, Weak},
    time::{Duration, Instant},
};

use tokio::sync::{broadcast, oneshot};

use super::compact::Compacted;
use crate::{
    chat::turn::ToolCallRecord,
    server::{
        bus::{self, Bus, Note},
        db::{time, Db},
        metrics::METRICS,
    },
};

/// How often the relay writes: also the most an event of a reply read
/// elsewhere waits before that reader can have it. 150 ms keeps a reply's
/// rows under one per 100 ms (`make bench`), and a second tab or a
/// reconnect a step behind the first tab's live text, no more.
pub const TICK: Duration = Duration::from_millis(150);
/// How often a streaming reply that no other instance reads is written, in
/// ticks (450 ms).
pub const QUIET_TICKS: u64 = 3;
/// How long a reader's interest lasts unless renewed; readers renew it every `RENEW`.
const WANTED_FOR: Duration = Duration::from_secs(15);
pub const RENEW: Duration = Duration::from_secs(5);
/// The prefix of a reader's note saying which turn it follows.
const WANT: &str = "want:";
/// The prefix of the relay's note naming turns with new events.
const WRITTEN: &str = "turns:";
/// A note carries at most 8,000 bytes; the relay's stay well under.
const NOTE_BYTES: usize = 7_000;
/// Rows per insert (PostgreSQL takes at most 65,535 parameters per statement).
const ROWS_PER_STATEMENT: usize = 1_000;

/// What one checkpoint appends: new text, new reasoning, and the steps when
/// they changed.
pub struct Progress {
    pub text: String,
    pub reasoning: String,
    pub steps: Option<Vec<ToolCallRecord>>,
}

/// A running reply's events, as the relay reads them: the turn's log
/// (`hub::TurnLog`), which holds the relay, so the relay knows it only
/// through this.
pub trait Numbered: Send + Sync {
    fn turn_id(&self) -> &str;
    /// Events after `after`, with their numbers, and whether the turn is over.
    fn since(&self, after: u64) -> (Vec<(u64, crate::chat::events::ChatEvent)>, bool);
    /// The number of the latest event (cheap: no events are copied).
    fn latest(&self) -> u64;
    /// Whether the turn is over.
    fn is_over(&self) -> bool {
        self.since(u64::MAX).1
    }
}

struct Following {
    log: Arc<dyn Numbered>,
    /// The last event number written.
    written: u64,
    /// The last event number seen at the previous tick.
    seen: u64,
    /// Told once the turn's last event is written.
    finished: Option<oneshot::Sender<()>>,
}

struct Checkpoint {
    message_id: String,
    progress: Progress,
    done: oneshot::Sender<bool>,
}

#[derive(Default)]
struct Pending {
    turns: HashMap<String, Following>,
    checkpoints: Vec<Checkpoint>,
    /// Turns another instance reads, until when.
    wanted: HashMap<String, Instant>,
    /// Ticks so far.
    ticks: u64,
}

/// The relay of one instance.
pub struct Relay {
    pending: Mutex<Pending>,
}

/// A reply the relay follows until it is dropped.
pub struct Followed {
    relay: Weak<Relay>,
    turn_id: String,
}

impl Drop for Followed {
    fn drop(&mut self) {
        if let Some(relay) = self.relay.upgrade() {
            relay.lock().turns.remove(&self.turn_id);
        }
    }
}

impl Followed {
    /// Waits (up to `within`) until the turn's last event is written.
    pub async fn finished(&self, within: Duration) -> bool {
        let Some(relay) = self.relay.upgrade() else { return true };
        let rx = {
            let mut p = relay.lock();
            let Some(f) = p.turns.get_mut(&self.turn_id) else { return true };
            let (tx, rx) = oneshot::channel();
            f.finished = Some(tx);
            rx
        };
        drop(relay);
        tokio::time::timeout(within, rx).await.is_ok()
    }
}

impl Relay {
    /// Starts the relay of an instance on `db`, writing every `TICK`.
    pub fn start(db: Db, bus: Arc<Bus>) -> Arc<Self> {
        let relay = Arc::new(Self { pending: Mutex::default() });
        tokio::spawn(listen(Arc::downgrade(&relay), bus.subscribe()));
        tokio::spawn(run(Arc::downgrade(&relay), db));
        relay
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Follows a running reply: its events after `written` (those already
    /// stored: none for a new reply, those before the pause for a resumed
    /// one) are written as they come.
    pub fn follow(self: &Arc<Self>, log: Arc<dyn Numbered>, written: u64) -> Followed {
        let turn_id = log.turn_id().to_string();
        self.lock().turns.insert(turn_id.clone(), Following { log, written, seen: written, finished: None });
        Followed { relay: Arc::downgrade(self), turn_id }
    }

    /// Appends `progress` to the message at the next write; answers whether it was stored.
    pub async fn checkpoint(&self, message_id: String, progress: Progress) -> bool {
        let (done, rx) = oneshot::channel();
        self.lock().checkpoints.push(Checkpoint { message_id, progress, done });
        rx.await.unwrap_or(false)
    }
}

/// Tells the instance running `turn_id` that a reader here follows it.
pub async fn want(bus: &Bus, db: &Db, turn_id: &str) {
    bus.publish(db, bus::TURNS, &format!("{WANT}{turn_id}")).await;
}

/// Whether a note says that `turn_id` has new events stored.
pub fn names(note: &Note, turn_id: &str) -> bool {
    note.channel == bus::TURNS && note.payload.strip_prefix(WRITTEN).is_some_and(|ids| ids.split(',').any(|id| id == turn_id))
}

/// Keeps the readers' interest that other instances announce.
async fn listen(relay: Weak<Relay>, mut notes: broadcast::Receiver<Note>) {
    loop {
        let note = match notes.recv().await {
            Ok(note) => note,
            Err(broadcast::error::RecvError::Lagged(_)) => continue,
            Err(broadcast::error::RecvError::Closed) => return,
        };
        let Some(relay) = relay.upgrade() else { return };
        if note.channel == bus::TURNS {
            if let Some(turn) = note.payload.strip_prefix(WANT) {
                relay.lock().wanted.insert(turn.to_string(), Instant::now() + WANTED_FOR);
            }
        }
    }
}

async fn run(relay: Weak<Relay>, db: Db) {
    let mut every = tokio::time::interval(TICK);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        every.tick().await;
        let Some(relay) = relay.upgrade() else { return };
        relay.write(&db).await;
    }
}

/// One turn's batch: its id, its last event number, the events, whether it is over.
struct Batch {
    turn_id: String,
    last: u64,
    entries: String,
    finished: bool,
}

impl Relay {
    /// One tick: everything new, in one transaction.
    async fn write(&self, db: &Db) {
        let (batches, checkpoints, wanted) = {
            let mut p = self.lock();
            let now = Instant::now();
            p.wanted.retain(|_, until| *until > now);
            let mut batches = Vec::new();
            p.ticks += 1;
            let quiet_due = p.ticks % QUIET_TICKS == 0;
            let Pending { turns, wanted, .. } = &mut *p;
            for (id, f) in turns.iter_mut() {
                // Still streaming, read by nobody elsewhere, written lately: at a later tick.
                let latest = f.log.latest();
                let streaming = latest != f.seen;
                f.seen = latest;
                if streaming && !quiet_due && !wanted.contains_key(id) && !f.log.is_over() {
                    continue;
                }
                let (events, finished) = f.log.since(f.written);
                let Some(&(last, _)) = events.last() else { continue };
                let entries = Compacted::starting_at(f.written + 1, events.into_iter().map(|(_, e)| e).collect()).to_json();
                batches.push(Batch { turn_id: id.clone(), last, entries, finished });
            }
            let wanted: Vec<String> = batches.iter().filter(|b| p.wanted.contains_key(&b.turn_id)).map(|b| b.turn_id.clone()).collect();
            (batches, std::mem::take(&mut p.checkpoints), wanted)
        };
        if batches.is_empty() && checkpoints.is_empty() {
            return;
        }
        let stored = store(db, &batches, &checkpoints, &wanted).await;
        if let Err(e) = &stored {
            tracing::warn!(error = %e, replies = batches.len(), checkpoints = checkpoints.len(), "could not store running replies' events for other instances");
        }
        for c in checkpoints {
            let _ = c.done.send(stored.is_ok());
        }
        if stored.is_err() {
            return; // the same events are written at the next tick
        }
        let mut p = self.lock();
        for b in batches {
            let Some(f) = p.turns.get_mut(&b.turn_id) else { continue };
            f.written = f.written.max(b.last);
            if b.finished {
                if let Some(f) = p.turns.remove(&b.turn_id) {
                    if let Some(tx) = f.finished {
                        let _ = tx.send(());
                    }
                }
            }
        }
    }
}

/// The notes naming `turns`, each under PostgreSQL's limit.
fn notes(turns: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for id in turns {
        match out.last_mut() {
            Some(note) if note.len() + id.len() + 1 <= NOTE_BYTES => {
                note.push(',');
                note.push_str(id);
            }
            _ => out.push(format!("{WRITTEN}{id}")),
        }
    }
    out
}

/// A row of `turn_events`, as the relay's statement reads it.
#[derive(serde::Serialize)]
struct EventRow<'a> {
    turn_id: &'a str,
    last_seq: u64,
    entries: &'a str,
}

/// A checkpoint, as the relay's statement reads it.
#[derive(serde::Serialize)]
struct CheckpointRow<'a> {
    id: &'a str,
    text: &'a str,
    reasoning: &'a str,
    steps: Option<String>,
}

async fn store(db: &Db, batches: &[Batch], checkpoints: &[Checkpoint], wanted: &[String]) -> Result<(), sqlx::Error> {
    let waited = Instant::now();
    let mut tx = db.begin().await?;
    METRICS.pool_wait.observe(waited.elapsed().as_secs_f64());
    let now = time::now();
    // The rows go as one JSON parameter to one statement whose text never
    // changes: prepared once per connection, and PostgreSQL sets up one
    // function scan, where a `VALUES` list of parameters was a new statement
    // for every count of rows, its every row's expressions set up again on
    // every run (what its CPU went to at a thousand replies).
    for chunk in batches.chunks(ROWS_PER_STATEMENT) {
        let rows: Vec<EventRow<'_>> = chunk.iter().map(|b| EventRow { turn_id: &b.turn_id, last_seq: b.last, entries: &b.entries }).collect();
        sqlx::query(
            "INSERT INTO turn_events (turn_id, last_seq, entries, created_at)
             SELECT v.turn_id, v.last_seq, v.entries, $2 FROM json_to_recordset(CAST($1 AS json)) AS v(turn_id text, last_seq bigint, entries text)",
        )
        .bind(serde_json::to_string(&rows).unwrap_or_default())
        .bind(&now)
        .execute(&mut *tx)
        .await?;
    }
    for chunk in checkpoints.chunks(ROWS_PER_STATEMENT) {
        // The same as `store::save_progress`, for many messages at once.
        let rows: Vec<CheckpointRow<'_>> = chunk
            .iter()
            .map(|c| CheckpointRow {
                id: &c.message_id,
                text: &c.progress.text,
                reasoning: &c.progress.reasoning,
                steps: c.progress.steps.as_ref().filter(|s| !s.is_empty()).map(|s| serde_json::to_string(s).unwrap_or_else(|_| "[]".into())),
            })
            .collect();
        sqlx::query(
            "UPDATE chat_messages AS m SET content = m.content || v.text, reasoning = m.reasoning || v.reasoning,
                    tool_calls = COALESCE(v.steps, m.tool_calls)
             FROM json_to_recordset(CAST($1 AS json)) AS v(id text, text text, reasoning text, steps text)
             WHERE m.id = v.id AND m.status = 'running' AND m.resume_state IS NULL",
        )
        .bind(serde_json::to_string(&rows).unwrap_or_default())
        .execute(&mut *tx)
        .await?;
    }
    // Sent when the transaction commits, after what they announce.
    for note in notes(wanted) {
        sqlx::query("SELECT pg_notify($1, $2)").bind(bus::TURNS).bind(note).execute(&mut *tx).await?;
    }
    tx.commit().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_name_every_turn_and_stay_under_the_limit() {
        let turns: Vec<String> = (0..500).map(|i| format!("{i:032x}")).collect();
        let notes = notes(&turns);
        assert!(notes.len() > 1);
        assert!(notes.iter().all(|n| n.len() <= NOTE_BYTES));
        for t in &turns {
            let n = notes.iter().filter(|n| names(&Note { channel: bus::TURNS.into(), payload: (*n).clone() }, t)).count();
            assert_eq!(n, 1, "{t}");
        }
        assert!(!names(&Note { channel: bus::TURNS.into(), payload: notes[0].clone() }, "0000"));
        assert!(!names(&Note { channel: bus::LESSONS.into(), payload: notes[0].clone() }, &turns[0]));
    }
}
