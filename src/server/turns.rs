//! Chat turns that survive the client. A turn runs in its own task, detached
//! from the HTTP request that started it. Every event it produces is numbered
//! and kept in the turn's log, so any number of readers (the first response, a
//! client that reconnects with `Last-Event-ID`, a reloaded page) can read from
//! any point, each event exactly once, and then follow the live turn. The
//! assistant message is written to the database as the turn goes and finished
//! when it ends, whatever happened to the readers.

use std::{
    collections::HashMap,
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc, Mutex,
    },
    time::Duration,
};

use futures::future::BoxFuture;
use sqlx::SqlitePool;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::{
    chats::{self, Finished},
    error::AppError,
    lessons,
};
use crate::{
    agent::{
        prompt::PastMessage,
        run::{Agent, TurnOutcome, TurnRequest},
        tools::{DocumentStore, ToolContext},
    },
    chat::{
        events::{ChatEvent, DoneData, ErrorData},
        message::{MessageStatus, ToolCallRecord},
    },
    models::{Author, SaveOutcome},
};

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
    interrupted: AtomicBool,
}

impl TurnLog {
    fn push(&self, event: ChatEvent) {
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

    fn ended(self: &Arc<Self>, log: &TurnLog) {
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

/// What a turn needs to run.
pub struct TurnJob {
    pub db: SqlitePool,
    pub agent: Arc<Agent>,
    pub hub: Arc<TurnHub>,
    pub log: Arc<TurnLog>,
    pub lesson_id: String,
    /// The lesson as the turn starts, and its revision.
    pub document: (String, i64),
    pub history: Vec<PastMessage>,
    pub user_text: String,
    pub stored: Stored,
}

/// Whether the turn's two messages are in the database. The model call does
/// not wait for them (storing them is on the way to the first word of the
/// reply), but everything the turn writes does: its progress, the lesson
/// revisions of its edits, its end. If they could not be stored, the turn is
/// cancelled and leaves no trace.
#[derive(Clone)]
pub struct Stored(watch::Receiver<Option<bool>>);

/// Set once by whoever stores the messages.
pub struct StoredSender(watch::Sender<Option<bool>>);

pub fn stored_gate() -> (StoredSender, Stored) {
    let (tx, rx) = watch::channel(None);
    (StoredSender(tx), Stored(rx))
}

impl StoredSender {
    pub fn set(self, stored: bool) {
        self.0.send_replace(Some(stored));
    }
}

impl Stored {
    /// Waits until the messages are stored (true) or could not be (false).
    pub async fn wait(&self) -> bool {
        let mut rx = self.0.clone();
        let stored = rx.wait_for(Option::is_some).await.map(|v| *v == Some(true));
        stored.unwrap_or(false)
    }
}

/// Runs a turn to its end and stores its result. Spawned as soon as the
/// request is checked, beside the storing of its messages; never panics on
/// failure.
pub async fn run(job: TurnJob) {
    let TurnJob { db, agent, hub, log, lesson_id, document: (xml, revision), history, user_text, stored } = job;
    let document = Arc::new(DbDocument {
        db: db.clone(),
        owner_id: log.owner_id.clone(),
        lesson_id,
        state: Mutex::new((xml, revision)),
        stored: stored.clone(),
    });

    let (tx, mut rx) = mpsc::unbounded_channel::<ChatEvent>();
    let forwarder = {
        let log = log.clone();
        let db = db.clone();
        let stored = stored.clone();
        tokio::spawn(async move {
            let mut text = String::new();
            let mut calls: Vec<ToolCallRecord> = Vec::new();
            let mut pending_text = 0usize;
            while let Some(event) = rx.recv().await {
                let checkpoint = match &event {
                    ChatEvent::Text(t) => {
                        text.push_str(&t.content);
                        pending_text += t.content.len();
                        pending_text >= 512
                    }
                    ChatEvent::ToolStart(s) => {
                        calls.push(ToolCallRecord {
                            id: s.id.clone(),
                            tool: s.tool.clone(),
                            args: s.args.clone(),
                            display_text: s.display_text.clone(),
                            status: crate::chat::events::ToolStatus::Error,
                            error: Some("did not finish".into()),
                            summary: None,
                        });
                        false
                    }
                    ChatEvent::ToolEnd(end) => {
                        if let Some(c) = calls.iter_mut().rev().find(|c| c.id == end.id) {
                            c.status = end.status;
                            c.error = end.error.clone();
                            c.summary = end.summary.clone();
                        }
                        true
                    }
                    ChatEvent::RoundFinished(_) => true,
                    _ => false,
                };
                log.push(event);
                if checkpoint && stored.wait().await {
                    pending_text = 0;
                    if let Err(e) = chats::save_progress(&db, &log.message_id, &text, &calls).await {
                        tracing::warn!(error = %e, "could not save a turn's progress");
                    }
                }
            }
        })
    };

    let ctx = ToolContext { document: document.clone() };
    let result = agent.run_turn(TurnRequest { history, user_text }, &ctx, &tx, &log.cancel).await;
    drop(tx);
    let _ = forwarder.await;
    if !stored.wait().await {
        return; // abandoned by the request that started it; nothing was stored
    }

    let (status, error) = match &result.outcome {
        TurnOutcome::Complete => (MessageStatus::Complete, None),
        TurnOutcome::Cancelled if log.interrupted.load(Ordering::SeqCst) => (
            MessageStatus::Interrupted,
            Some(ErrorData { code: "interrupted".into(), message: "The server restarted before this reply was finished.".into() }),
        ),
        TurnOutcome::Cancelled => (MessageStatus::Cancelled, None),
        TurnOutcome::Failed(e) => (MessageStatus::Error, Some(ErrorData { code: e.code.into(), message: e.message.clone() })),
    };
    if let Some(e) = &error {
        tracing::warn!(turn = %log.turn_id, code = %e.code, "turn ended with an error");
    }
    let stored = chats::finish_turn(
        &db,
        &log.message_id,
        Finished {
            text: &result.text,
            tool_calls: &result.tool_calls,
            document_xml: result.document_xml.as_deref(),
            status,
            error: error.as_ref(),
            usage: result.usage,
        },
    )
    .await;
    if let Err(e) = stored {
        tracing::error!(error = %e, turn = %log.turn_id, "could not store a finished turn");
    }
    log.push(terminal(&log, status, error));
    hub.ended(&log);
}

fn terminal(log: &TurnLog, status: MessageStatus, error: Option<ErrorData>) -> ChatEvent {
    match (status, error) {
        (MessageStatus::Cancelled, _) => ChatEvent::Cancelled(DoneData { message_id: log.message_id.clone() }),
        (_, Some(e)) => ChatEvent::Error(Box::new(e)),
        _ => ChatEvent::Done(DoneData { message_id: log.message_id.clone() }),
    }
}

/// The lesson, as the agent edits it: every successful edit becomes a
/// revision by the agent at once, on top of the revision the turn last saw.
struct DbDocument {
    db: SqlitePool,
    owner_id: String,
    lesson_id: String,
    state: Mutex<(String, i64)>,
    stored: Stored,
}

impl DbDocument {
    fn set(&self, xml: String, revision: i64) {
        *self.state.lock().unwrap_or_else(|p| p.into_inner()) = (xml, revision);
    }
}

impl DocumentStore for DbDocument {
    fn current(&self) -> String {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).0.clone()
    }

    fn save(&self, xml: String, summary: String) -> BoxFuture<'_, Result<i64, String>> {
        Box::pin(async move {
            if !self.stored.wait().await {
                return Err("this conversation could not be saved, so the lesson was left as it was.".into());
            }
            let base = self.state.lock().unwrap_or_else(|p| p.into_inner()).1;
            let saved = lessons::save_document(&self.db, &self.owner_id, &self.lesson_id, &xml, base, Author::Agent, &summary).await;
            match saved {
                Ok(SaveOutcome::Saved { revision, document_xml }) => {
                    self.set(document_xml, revision);
                    Ok(revision)
                }
                Ok(SaveOutcome::Conflict { current }) => {
                    let latest = lessons::get_owned(&self.db, &self.owner_id, &self.lesson_id).await.map_err(|e| e.to_string())?;
                    let message = format!(
                        "The teacher saved a new version of the lesson (version {current}) while you were working, so your edit was not applied. The lesson now reads:\n```xml\n{}```\nMake your change on this version.",
                        latest.document_xml
                    );
                    self.set(latest.document_xml, latest.revision);
                    Err(message)
                }
                Ok(SaveOutcome::Invalid { errors }) => Err(crate::lesson::describe_errors(&errors)),
                Err(e) => {
                    tracing::error!(error = ?e, "could not store the agent's edit");
                    Err("the lesson could not be stored; try again.".into())
                }
            }
        })
    }
}
