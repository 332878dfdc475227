//! The turns of this process: each running or recently finished turn's log
//! of numbered events, and which chat each running turn holds.

use std::{
    collections::{HashMap, VecDeque},
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc, Mutex,
    },
    time::Duration,
};

use tokio::sync::{watch, Notify};
use tokio_util::sync::CancellationToken;

use super::{compact::Compacted, relay::Relay, stored_reads::StoredReads};
use crate::{chat::events::ChatEvent, server::error::AppError};

/// How long a finished turn's events stay available for late readers.
const KEEP_FINISHED: Duration = Duration::from_secs(600);
/// The most memory finished turns may hold together; past it the oldest are
/// dropped, and a reader of one gets its stored record (`sse::replay_response`).
pub const FINISHED_BUDGET: usize = 64 * 1024 * 1024;

/// How many of a running turn's latest events are kept one per delta; older
/// ones are folded into runs of text (`Compacted`), so a live turn's log
/// holds about its text and a few bytes a delta however long it runs.
pub const LIVE_EVENTS: usize = 2_048;

/// A turn's events: one per delta while it runs (the older ones folded,
/// past `LIVE_EVENTS`), compacted whole once it is over.
enum Events {
    Live(Live),
    Finished(Compacted),
}

/// A running turn's log: events `1..tail_first` folded, the rest as they came.
#[derive(Default)]
struct Live {
    folded: Option<Compacted>,
    tail: Vec<ChatEvent>,
    /// The number of `tail[0]` (1 while nothing is folded).
    tail_first: u64,
    /// The last number of the events a resumed turn starts with (folded
    /// from the start: no reader of them is behind); 0 for a new turn.
    resumed_at: u64,
}

impl Live {
    fn new() -> Self {
        Self { folded: None, tail: Vec::new(), tail_first: 1, resumed_at: 0 }
    }

    /// The log of a turn resumed after a pause: its events so far
    /// (`before`, rebuilt from its stored record), numbered to end at
    /// `last`, the number of the last event the turn had sent, so that a
    /// reader that had read up to there goes on exactly from there.
    fn resumed(before: Vec<ChatEvent>, last: u64) -> Self {
        let last = last.max(before.len() as u64);
        let first = last + 1 - before.len() as u64;
        let folded = (!before.is_empty()).then(|| Compacted::starting_at(first, before));
        Self { folded, tail: Vec::new(), tail_first: last + 1, resumed_at: last }
    }

    /// Adds an event; returns its number. Past `keep`, the older half of
    /// the events held one by one is folded and the newer half stays: a
    /// reader that keeps up is never among those the fold left behind.
    fn push(&mut self, event: ChatEvent, keep: usize) -> u64 {
        self.tail.push(event);
        let seq = self.tail_first + self.tail.len() as u64 - 1;
        if self.tail.len() > keep {
            let stays = self.tail.split_off(self.tail.len() - keep / 2);
            let events = std::mem::replace(&mut self.tail, stays);
            let first = self.tail_first;
            self.tail_first = first + events.len() as u64;
            match &mut self.folded {
                Some(f) => f.extend(first, events),
                None => self.folded = Some(Compacted::starting_at(first, events)),
            }
        }
        seq
    }

    /// Events after `after`, whether the turn is over, and whether some of
    /// them came from the folded part (merged: the reader was far behind).
    fn since(&self, after: u64) -> (Vec<(u64, ChatEvent)>, bool, bool) {
        let finished = match self.tail.last() {
            Some(e) => e.is_terminal(),
            None => self.folded.as_ref().is_some_and(Compacted::is_finished),
        };
        let mut batch = Vec::new();
        // Behind: some of the events it has not read were folded while the
        // turn ran (not those a resumed turn started with).
        let behind = self.tail_first - 1 > after.max(self.resumed_at);
        if after.saturating_add(1) < self.tail_first {
            if let Some(f) = &self.folded {
                batch = f.since(after);
            }
        }
        let from = after.saturating_sub(self.tail_first - 1).min(self.tail.len() as u64) as usize;
        batch.extend(self.tail[from..].iter().enumerate().map(|(i, e)| (self.tail_first + (from + i) as u64, e.clone())));
        (batch, finished, behind)
    }

    fn into_compacted(self) -> Compacted {
        match self.folded {
            Some(mut f) => {
                f.extend(self.tail_first, self.tail);
                f
            }
            None => Compacted::starting_at(self.tail_first, self.tail),
        }
    }
}

/// Every event of one turn, numbered from 1.
pub struct TurnLog {
    pub turn_id: String,
    pub owner_id: String,
    pub session_id: String,
    pub message_id: String,
    events: Mutex<Events>,
    latest: watch::Sender<u64>,
    pub cancel: CancellationToken,
    /// Set when the server, not the teacher, stopped the turn.
    pub(super) interrupted: AtomicBool,
    /// How many of the latest events stay one per delta (`LIVE_EVENTS`).
    keep: usize,
    /// Paused when its process stopped, and put aside for another to
    /// resume: its readers end without a last event (and reconnect).
    parked: AtomicBool,
    /// Told once the turn has ended or was put aside (`finished`): those
    /// who wait only for that are not woken by every delta, as readers are.
    over: Notify,
}

impl TurnLog {
    pub(super) fn push(&self, event: ChatEvent) {
        let terminal = event.is_terminal();
        let seq = {
            let mut events = self.events.lock().unwrap_or_else(|p| p.into_inner());
            let Events::Live(live) = &mut *events else {
                tracing::warn!(turn = %self.turn_id, "an event after the turn ended was dropped");
                return;
            };
            live.push(event, self.keep)
        };
        self.latest.send_replace(seq);
        if terminal {
            self.over.notify_waiters();
        }
    }

    /// The number of the latest event.
    pub fn latest(&self) -> u64 {
        *self.latest.borrow()
    }

    /// Whether the turn was put aside for another process (`TurnHub::parked`).
    pub fn is_parked(&self) -> bool {
        self.parked.load(Ordering::SeqCst)
    }

    /// Events after `after`, with their numbers, and whether the turn is over.
    pub fn since(&self, after: u64) -> (Vec<(u64, ChatEvent)>, bool) {
        let (batch, finished, _) = self.since_marked(after);
        (batch, finished)
    }

    /// As `since`, and whether the reader was so far behind a running turn
    /// that it gets its older text merged (`sse::follow` tells it so).
    pub fn since_marked(&self, after: u64) -> (Vec<(u64, ChatEvent)>, bool, bool) {
        match &*self.events.lock().unwrap_or_else(|p| p.into_inner()) {
            Events::Live(live) => live.since(after),
            Events::Finished(c) => (c.since(after), c.is_finished(), false),
        }
    }

    /// Events held one per delta now (at most `LIVE_EVENTS` and one).
    pub fn unfolded(&self) -> usize {
        match &*self.events.lock().unwrap_or_else(|p| p.into_inner()) {
            Events::Live(live) => live.tail.len(),
            Events::Finished(_) => 0,
        }
    }

    /// Keeps only what a late reader needs; returns the bytes it still holds.
    fn compact(&self) -> usize {
        let mut events = self.events.lock().unwrap_or_else(|p| p.into_inner());
        let live = match &mut *events {
            Events::Live(live) => std::mem::take(live),
            Events::Finished(c) => return c.bytes,
        };
        let c = live.into_compacted();
        let bytes = c.bytes;
        *events = Events::Finished(c);
        bytes
    }

    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.latest.subscribe()
    }

    pub fn is_finished(&self) -> bool {
        self.since(u64::MAX).1
    }

    /// Waits until the turn has ended (its last event is in the log) or
    /// was put aside.
    pub async fn finished(&self) {
        loop {
            // Registered before the look, so that an end between the two is not missed.
            let told = self.over.notified();
            tokio::pin!(told);
            told.as_mut().enable();
            if self.is_finished() || self.is_parked() {
                return;
            }
            told.await;
        }
    }
}

impl super::relay::Numbered for TurnLog {
    fn turn_id(&self) -> &str {
        &self.turn_id
    }

    fn since(&self, after: u64) -> (Vec<(u64, ChatEvent)>, bool) {
        TurnLog::since(self, after)
    }

    fn latest(&self) -> u64 {
        TurnLog::latest(self)
    }
}

/// The turns of this process.
pub struct TurnHub {
    turns: Mutex<HashMap<String, Arc<TurnLog>>>,
    /// session id → its running turn.
    running: Mutex<HashMap<String, Arc<TurnLog>>>,
    closing: AtomicBool,
    /// Finished turns still kept, oldest first, with what each holds.
    finished: Mutex<Finished>,
    finished_budget: usize,
    /// This process among the instances sharing the database: the running
    /// replies it writes carry it, with a lease it renews (`leases`).
    pub instance: String,
    /// How long a running reply's lease lasts unrenewed.
    pub lease: Duration,
    /// Writes the running replies' events for other instances, when the
    /// database is shared (`relay`).
    relay: std::sync::OnceLock<Arc<Relay>>,
    /// Reads the events other instances stored, for this instance's
    /// readers, gathered (`stored_reads`).
    reads: std::sync::OnceLock<Arc<StoredReads>>,
    /// How many of a running turn's latest events stay one per delta.
    live_events: usize,
    /// How long a turn paused on a held edit waits for the teacher
    /// (`MARGIN_APPROVAL_WAIT_SECS`).
    pub approval_wait: Duration,
    /// How long the digest of a held edit shown to the teacher stays good:
    /// as long as a paused turn waits.
    pub shown: crate::server::clock::ShownClock,
}

/// How long a paused turn waits for the teacher's decision unless configured.
pub const APPROVAL_WAIT: Duration = Duration::from_secs(30 * 60);

/// How long a running reply's lease lasts unless renewed (`MARGIN_TURN_LEASE_SECS`).
pub const LEASE: Duration = Duration::from_secs(crate::server::config::TURN_LEASE_SECS);

#[derive(Default)]
struct Finished {
    order: VecDeque<(String, usize)>,
    bytes: usize,
}

impl Default for TurnHub {
    fn default() -> Self {
        Self::with_finished_budget(FINISHED_BUDGET)
    }
}

impl TurnHub {
    /// A hub whose finished turns hold at most `bytes` together.
    pub fn with_finished_budget(bytes: usize) -> Self {
        Self {
            turns: Mutex::default(),
            running: Mutex::default(),
            closing: AtomicBool::new(false),
            finished: Mutex::default(),
            finished_budget: bytes,
            instance: crate::server::ids::new_id(),
            lease: LEASE,
            relay: std::sync::OnceLock::new(),
            reads: std::sync::OnceLock::new(),
            live_events: LIVE_EVENTS,
            approval_wait: APPROVAL_WAIT,
            shown: crate::server::clock::ShownClock::real(APPROVAL_WAIT),
        }
    }

    /// The same hub with paused turns waiting at most `wait` for the teacher.
    pub fn with_approval_wait(mut self, wait: Duration) -> Self {
        self.approval_wait = wait;
        self.shown.lasts = wait;
        self
    }

    /// The same hub keeping `n` events of a running turn one per delta.
    pub fn with_live_events(mut self, n: usize) -> Self {
        self.live_events = n.max(1);
        self
    }

    /// The same hub with running replies leased for `lease`.
    pub fn with_lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
        self
    }

    /// Starts writing running replies' events for other instances, and
    /// reading theirs (once).
    pub fn start_relay(&self, db: crate::server::db::Db, bus: Arc<crate::server::bus::Bus>) {
        self.reads.get_or_init(|| StoredReads::start(db.clone()));
        self.relay.get_or_init(|| Relay::start(db, bus));
    }

    /// The gathered reads of other instances' replies, when the database is shared.
    pub fn stored_reads(&self) -> Option<&Arc<StoredReads>> {
        self.reads.get()
    }

    /// The relay, when the database is shared.
    pub fn relay(&self) -> Option<&Arc<Relay>> {
        self.relay.get()
    }

    /// Whether the instance is stopping (no new turns).
    pub fn is_closing(&self) -> bool {
        self.closing.load(Ordering::SeqCst)
    }

    /// The turns running here.
    pub fn running(&self) -> Vec<Arc<TurnLog>> {
        self.running.lock().unwrap_or_else(|p| p.into_inner()).values().cloned().collect()
    }

    /// How many finished turns are kept, and the bytes they hold.
    pub fn finished_held(&self) -> (usize, usize) {
        let f = self.finished.lock().unwrap_or_else(|p| p.into_inner());
        (f.order.len(), f.bytes)
    }

    /// Reserves the session for a new turn; a second turn in the same session is a conflict.
    pub fn begin(&self, turn_id: &str, owner_id: &str, session_id: &str, message_id: &str) -> Result<Arc<TurnLog>, AppError> {
        if self.closing.load(Ordering::SeqCst) {
            return Err(AppError::Unavailable("The server is restarting. Try again in a moment.".into()));
        }
        let mut running = self.running.lock().unwrap_or_else(|p| p.into_inner());
        if running.contains_key(session_id) {
            return Err(AppError::Conflict(super::store::TURN_IN_CHAT.into()));
        }
        let log = self.new_log(turn_id, owner_id, session_id, message_id, Live::new());
        running.insert(session_id.to_string(), log.clone());
        self.turns.lock().unwrap_or_else(|p| p.into_inner()).insert(turn_id.to_string(), log.clone());
        Ok(log)
    }

    fn new_log(&self, turn_id: &str, owner_id: &str, session_id: &str, message_id: &str, live: Live) -> Arc<TurnLog> {
        let latest = live.tail_first - 1;
        Arc::new(TurnLog {
            turn_id: turn_id.to_string(),
            owner_id: owner_id.to_string(),
            session_id: session_id.to_string(),
            message_id: message_id.to_string(),
            events: Mutex::new(Events::Live(live)),
            latest: watch::channel(latest).0,
            cancel: CancellationToken::new(),
            interrupted: AtomicBool::new(false),
            keep: self.live_events,
            parked: AtomicBool::new(false),
            over: Notify::new(),
        })
    }

    /// Takes on a paused turn that this process adopted: its log starts
    /// with the events it had (`before`, ending with event number `last`).
    /// Refused while the instance is stopping, or if it is already here.
    pub fn adopt(&self, turn_id: &str, owner_id: &str, session_id: &str, message_id: &str, before: Vec<ChatEvent>, last: u64) -> Result<Arc<TurnLog>, AppError> {
        if self.closing.load(Ordering::SeqCst) {
            return Err(AppError::Unavailable("The server is restarting.".into()));
        }
        let mut running = self.running.lock().unwrap_or_else(|p| p.into_inner());
        if running.contains_key(session_id) {
            return Err(AppError::Conflict(super::store::TURN_IN_CHAT.into()));
        }
        let log = self.new_log(turn_id, owner_id, session_id, message_id, Live::resumed(before, last));
        running.insert(session_id.to_string(), log.clone());
        self.turns.lock().unwrap_or_else(|p| p.into_inner()).insert(turn_id.to_string(), log.clone());
        Ok(log)
    }

    /// A paused turn put aside as its process stops: it leaves this
    /// process, and its readers end (they reconnect, to whichever instance
    /// adopts it).
    pub(super) fn parked(&self, log: &TurnLog) {
        log.parked.store(true, Ordering::SeqCst);
        self.abandon(log);
        log.latest.send_modify(|_| {});
        log.over.notify_waiters();
    }

    /// Gives the session back when a turn could not start after all.
    pub fn abandon(&self, log: &TurnLog) {
        self.running.lock().unwrap_or_else(|p| p.into_inner()).remove(&log.session_id);
        self.turns.lock().unwrap_or_else(|p| p.into_inner()).remove(&log.turn_id);
    }

    pub fn get(&self, turn_id: &str) -> Option<Arc<TurnLog>> {
        self.turns.lock().unwrap_or_else(|p| p.into_inner()).get(turn_id).cloned()
    }

    pub fn running_in(&self, session_id: &str) -> Option<Arc<TurnLog>> {
        self.running.lock().unwrap_or_else(|p| p.into_inner()).get(session_id).cloned()
    }

    /// Frees the turn's chat for the next turn (before its last event is
    /// said, so that a client that has read it can start another at once).
    pub(super) fn release(&self, log: &TurnLog) {
        self.running.lock().unwrap_or_else(|p| p.into_inner()).remove(&log.session_id);
    }

    pub(super) fn ended(self: &Arc<Self>, log: &TurnLog) {
        self.release(log);
        let bytes = log.compact();
        let evicted: Vec<String> = {
            let mut f = self.finished.lock().unwrap_or_else(|p| p.into_inner());
            f.order.push_back((log.turn_id.clone(), bytes));
            f.bytes += bytes;
            let mut out = Vec::new();
            while f.bytes > self.finished_budget {
                let Some((id, b)) = f.order.pop_front() else { break };
                f.bytes -= b;
                out.push(id);
            }
            out
        };
        if !evicted.is_empty() {
            let mut turns = self.turns.lock().unwrap_or_else(|p| p.into_inner());
            for id in &evicted {
                turns.remove(id);
            }
        }
        let hub = self.clone();
        let turn_id = log.turn_id.clone();
        tokio::spawn(async move {
            tokio::time::sleep(KEEP_FINISHED).await;
            hub.forget(&turn_id);
        });
    }

    fn forget(&self, turn_id: &str) {
        self.turns.lock().unwrap_or_else(|p| p.into_inner()).remove(turn_id);
        let mut f = self.finished.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(at) = f.order.iter().position(|(id, _)| id == turn_id) {
            if let Some((_, b)) = f.order.remove(at) {
                f.bytes -= b;
            }
        }
    }

    /// Stops taking turns, interrupts the running ones and waits (up to
    /// `grace`) until each has saved its partial reply and closed its streams.
    pub async fn shutdown(&self, grace: Duration) {
        self.closing.store(true, Ordering::SeqCst);
        let running: Vec<Arc<TurnLog>> = self.running.lock().unwrap_or_else(|p| p.into_inner()).values().cloned().collect();
        for log in &running {
            log.interrupted.store(true, Ordering::SeqCst);
            log.cancel.cancel();
        }
        let wait = async {
            for log in &running {
                log.finished().await;
            }
        };
        if tokio::time::timeout(grace, wait).await.is_err() {
            tracing::warn!("some turns did not finish before shutdown");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::events::DoneData;

    fn finish(hub: &Arc<TurnHub>, turn: &str, text: &str) {
        let log = hub.begin(turn, "owner", &format!("chat-{turn}"), &format!("msg-{turn}")).unwrap();
        for _ in 0..100 {
            log.push(ChatEvent::text(text));
        }
        log.push(ChatEvent::Done(DoneData::of(log.message_id.clone())));
        hub.ended(&log);
    }

    #[tokio::test]
    async fn a_long_running_turn_folds_its_older_events_and_every_reader_still_gets_exactly_the_rest() {
        use crate::chat::events::{ToolEndData, ToolStatus};
        let hub = Arc::new(TurnHub::default().with_live_events(4));
        let log = hub.begin("t", "owner", "chat", "msg").unwrap();
        let mut pieces = Vec::new();
        for i in 0..30 {
            if i == 12 {
                let end = ToolEndData { document_xml: Some("<lesson/>".into()), ..ToolEndData::bare("c".into(), ToolStatus::Success) };
                log.push(ChatEvent::ToolEnd(Box::new(end)));
                pieces.push(String::new());
            }
            log.push(ChatEvent::text(format!("p{i} ")));
            pieces.push(format!("p{i} "));
            assert!(log.unfolded() <= 4);
        }
        let total = pieces.len() as u64;
        let text_after = |after: u64| pieces[after as usize..].concat();
        for after in 0..=total {
            let (batch, finished, behind) = log.since_marked(after);
            assert!(!finished);
            assert_eq!(behind, after + 1 < total - log.unfolded() as u64 + 1, "after {after}");
            let text: String = batch.iter().filter_map(|(_, e)| match e { ChatEvent::Text(t) => Some(t.content.as_str()), _ => None }).collect();
            assert_eq!(text, text_after(after), "after {after}");
            assert_eq!(batch.last().map(|(n, _)| *n), (after < total).then_some(total), "after {after}");
            // The edit's document is still there for a reader from before it.
            let edits = batch.iter().filter(|(_, e)| matches!(e, ChatEvent::ToolEnd(end) if end.document_xml.is_some())).count();
            assert_eq!(edits, usize::from(after < 13), "after {after}");
        }
        log.push(ChatEvent::Done(DoneData::of("msg")));
        assert!(log.is_finished());
        hub.ended(&log);
        let (batch, finished) = log.since(0);
        assert!(finished);
        let text: String = batch.iter().filter_map(|(_, e)| match e { ChatEvent::Text(t) => Some(t.content.as_str()), _ => None }).collect();
        assert_eq!(text, text_after(0));
    }

    /// A reader that keeps pace with a long reply (5,000 pieces, far past
    /// what is kept one by one) is never told it fell behind, and gets
    /// every piece with its own number.
    #[tokio::test]
    async fn a_reader_keeping_pace_with_a_long_reply_is_never_told_it_fell_behind() {
        let hub = Arc::new(TurnHub::default());
        let log = hub.begin("t", "owner", "chat", "msg").unwrap();
        let mut cursor = 0;
        let mut text = String::new();
        for i in 0..5_000u64 {
            log.push(ChatEvent::text(format!("{} ", i % 10)));
            // Every few pieces, as a reader woken by them reads.
            if i % 7 == 0 || i == 4_999 {
                let (batch, _, behind) = log.since_marked(cursor);
                assert!(!behind, "told it fell behind after {cursor} at piece {i}");
                for (n, e) in batch {
                    assert_eq!(n, cursor + 1, "one number each, in order");
                    cursor = n;
                    if let ChatEvent::Text(t) = e {
                        text.push_str(&t.content);
                    }
                }
            }
            assert!(log.unfolded() <= LIVE_EVENTS);
        }
        assert_eq!(cursor, 5_000);
        assert_eq!(text, (0..5_000).map(|i| format!("{} ", i % 10)).collect::<String>());
        // One that stopped reading long ago is behind, and is told.
        assert!(log.since_marked(10).2);
    }

    /// A task waiting for a turn's end (`finished`) returns at its last
    /// event or when it is put aside, not before, and deltas do not end it.
    #[tokio::test(start_paused = true)]
    async fn waiting_for_the_end_returns_at_the_last_event_or_the_pause_and_not_before() {
        let hub = Arc::new(TurnHub::default());
        let log = hub.begin("t", "owner", "chat", "msg").unwrap();
        // How often the waiting task was woken to look.
        let polls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let waiter = tokio::spawn({
            let (log, polls) = (log.clone(), polls.clone());
            async move {
                let mut end = std::pin::pin!(log.finished());
                std::future::poll_fn(|cx| {
                    polls.fetch_add(1, Ordering::SeqCst);
                    std::future::Future::poll(end.as_mut(), cx)
                })
                .await
            }
        });
        tokio::task::yield_now().await;
        for i in 0..50 {
            log.push(ChatEvent::text(format!("p{i}")));
            tokio::task::yield_now().await;
        }
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        assert!(!waiter.is_finished(), "the turn is still running");
        assert_eq!(polls.load(Ordering::SeqCst), 1, "woken by deltas");
        log.push(ChatEvent::Done(DoneData::of("msg")));
        tokio::time::timeout(std::time::Duration::from_secs(1), waiter).await.expect("ended at its last event").unwrap();
        // Already over: returns at once.
        tokio::time::timeout(std::time::Duration::from_millis(1), log.finished()).await.expect("over already");

        let paused = hub.begin("p", "owner", "chat-p", "msg-p").unwrap();
        let waiter = tokio::spawn({
            let paused = paused.clone();
            async move { paused.finished().await }
        });
        tokio::task::yield_now().await;
        paused.push(ChatEvent::text("before the pause"));
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        assert!(!waiter.is_finished());
        hub.parked(&paused);
        tokio::time::timeout(std::time::Duration::from_secs(1), waiter).await.expect("ended when put aside").unwrap();
    }

    #[tokio::test]
    async fn finished_turns_are_compacted_and_the_oldest_dropped_past_the_budget() {
        let hub = Arc::new(TurnHub::with_finished_budget(3_000));
        finish(&hub, "t1", "0123456789");
        let (kept, bytes) = hub.finished_held();
        assert_eq!(kept, 1);
        assert!(bytes < 2_000, "{bytes}");
        // A reader of a finished turn still gets every word, from any point.
        let (batch, done) = hub.get("t1").unwrap().since(50);
        assert!(done);
        assert_eq!(batch[0], (100, ChatEvent::text("0123456789".repeat(50))));
        finish(&hub, "t2", "0123456789");
        finish(&hub, "t3", "0123456789");
        assert!(hub.get("t1").is_none(), "the oldest is dropped past the budget");
        assert!(hub.get("t3").is_some());
        assert!(hub.finished_held().1 <= 3_000);
    }
}
