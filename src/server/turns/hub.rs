//! The turns of this process: each running or recently finished turn's log
//! of numbered events, and which chat each running turn holds.

use std::{
    collections::HashMap,
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc, Mutex,
    },
    time::Duration,
};

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::{chat::events::ChatEvent, server::error::AppError};

/// How long a finished turn's events stay available for late readers.
const KEEP_FINISHED: Duration = Duration::from_secs(600);

/// Every event of one turn, numbered from 1.
pub struct TurnLog {
    pub turn_id: String,
    pub owner_id: String,
    pub session_id: String,
    pub message_id: String,
    events: Mutex<Vec<ChatEvent>>,
    latest: watch::Sender<u64>,
    pub cancel: CancellationToken,
    /// Set when the server, not the teacher, stopped the turn.
    pub(super) interrupted: AtomicBool,
}

impl TurnLog {
    pub(super) fn push(&self, event: ChatEvent) {
        let seq = {
            let mut events = self.events.lock().unwrap_or_else(|p| p.into_inner());
            events.push(event);
            events.len() as u64
        };
        self.latest.send_replace(seq);
    }

    /// Events after `after`, with their numbers, and whether the turn is over.
    pub fn since(&self, after: u64) -> (Vec<(u64, ChatEvent)>, bool) {
        let events = self.events.lock().unwrap_or_else(|p| p.into_inner());
        let finished = events.last().is_some_and(ChatEvent::is_terminal);
        let from = (after as usize).min(events.len());
        let batch = events[from..].iter().enumerate().map(|(i, e)| ((from + i + 1) as u64, e.clone())).collect();
        (batch, finished)
    }

    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.latest.subscribe()
    }

    pub fn is_finished(&self) -> bool {
        self.since(u64::MAX).1
    }
}

/// The turns of this process.
#[derive(Default)]
pub struct TurnHub {
    turns: Mutex<HashMap<String, Arc<TurnLog>>>,
    /// session id → its running turn.
    running: Mutex<HashMap<String, Arc<TurnLog>>>,
    closing: AtomicBool,
}

impl TurnHub {
    /// Reserves the session for a new turn; a second turn in the same session is a conflict.
    pub fn begin(&self, turn_id: &str, owner_id: &str, session_id: &str, message_id: &str) -> Result<Arc<TurnLog>, AppError> {
        if self.closing.load(Ordering::SeqCst) {
            return Err(AppError::Unavailable("The server is restarting. Try again in a moment.".into()));
        }
        let mut running = self.running.lock().unwrap_or_else(|p| p.into_inner());
        if running.contains_key(session_id) {
            return Err(AppError::Conflict(
                "A reply is still being written in this chat. Wait for it to finish or stop it first.".into(),
            ));
        }
        let log = Arc::new(TurnLog {
            turn_id: turn_id.to_string(),
            owner_id: owner_id.to_string(),
            session_id: session_id.to_string(),
            message_id: message_id.to_string(),
            events: Mutex::new(Vec::new()),
            latest: watch::channel(0).0,
            cancel: CancellationToken::new(),
            interrupted: AtomicBool::new(false),
        });
        running.insert(session_id.to_string(), log.clone());
        self.turns.lock().unwrap_or_else(|p| p.into_inner()).insert(turn_id.to_string(), log.clone());
        Ok(log)
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

    pub(super) fn ended(self: &Arc<Self>, log: &TurnLog) {
        self.running.lock().unwrap_or_else(|p| p.into_inner()).remove(&log.session_id);
        let hub = self.clone();
        let turn_id = log.turn_id.clone();
        tokio::spawn(async move {
            tokio::time::sleep(KEEP_FINISHED).await;
            hub.turns.lock().unwrap_or_else(|p| p.into_inner()).remove(&turn_id);
        });
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
                let mut rx = log.subscribe();
                while !log.is_finished() {
                    if rx.changed().await.is_err() {
                        break;
                    }
                }
            }
        };
        if tokio::time::timeout(grace, wait).await.is_err() {
            tracing::warn!("some turns did not finish before shutdown");
        }
    }
}
