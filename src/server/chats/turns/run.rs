//! Running a turn to its end: the agent's events go to the turn's log at once
//! and into the stored message at checkpoints; the end is stored, then said.
//!
//! Checkpoints are by time, not by size, and append: a reply's text and its
//! reasoning are added to the stored message at most once per
//! `CHECKPOINT_EVERY` (and its steps whenever they change), so a long reply costs a bounded number of small
//! writes instead of ever-growing rewrites. Writing never holds up the
//! readers: events reach the log while a checkpoint is being written.

use super::store;
use std::{
    sync::{atomic::Ordering, Arc},
    time::Duration,
};

use futures::future::BoxFuture;
use crate::server::{bus::Bus, db::Db};
use tokio::{sync::mpsc, time::Instant};

use super::{
    pause::{Parked, PauseSlot},
    relay::Progress,
};

use super::{
    document::{DbDocument, DocumentTarget},
    gate::Stored,
    hub::{TurnHub, TurnLog},
};
use crate::{
    agent::{
        pause::PausedTurn,
        prompt,
        run::{Agent, TurnOutcome, TurnRequest, TurnResult},
        tools::ToolContext,
    },
    chat::{
        events::{ChatEvent, ErrorData},
        message::{MessageStatus, StoredMessage},
        turn::{terminal_event, TurnRecord, INTERRUPTED},
    },
    models::LessonEvent,
    server::{lessons::events, metrics::METRICS},
};

/// How often a running reply's new text is written to its message.
const CHECKPOINT_EVERY: Duration = Duration::from_millis(500);
/// The same when the turn's events are also stored for other instances
/// (`remote`), which keep every word anyway: fewer writes per turn.
const CHECKPOINT_EVERY_SHARED: Duration = Duration::from_secs(1);

/// What a turn needs to run.
pub struct TurnJob {
    pub db: Db,
    pub agent: Arc<Agent>,
    pub hub: Arc<TurnHub>,
    pub bus: Arc<Bus>,
    pub log: Arc<TurnLog>,
    pub lesson_id: String,
    /// The lesson as the turn starts, and its revision.
    pub document: (String, i64),
    /// How the assistant's edits reach the lesson.
    pub edit_mode: crate::models::EditMode,
    /// The lesson's sources, as the turn starts.
    pub sources: Vec<crate::models::SourceSummary>,
    pub history: Vec<StoredMessage>,
    pub user_text: String,
    pub stored: Stored,
    /// What the turn's model calls spend.
    pub meter: super::meter::SchoolMeter,
    /// Whom it answers (see `NewTurn::kind`).
    pub kind: super::kind::TurnKind,
    /// Started by Margin, not by the person it answers (see `NewTurn::attachments`).
    pub automatic: bool,
    /// A student's turn: what their safety asks of it (see `NewTurn::safety`).
    pub safety: Option<Box<crate::server::safety::StudentSafety>>,
    /// A paused turn this process adopted, to go on from its pause
    /// (`resume`); `history` and `user_text` are not read then. Boxed: it
    /// is rare, and inline it would be part of every open reply's task.
    pub resumed: Option<Box<Resumed>>,
}

/// What a turn resumed after its pause goes on from.
pub struct Resumed {
    pub paused: PausedTurn,
    /// Its record as stored at the pause.
    pub record: TurnRecord,
    /// What is left of the wait for the teacher's decision.
    pub wait: Duration,
    /// The number of the event before the first of its log's.
    pub written: u64,
}


/// Runs a turn to its end and stores its result. Spawned as soon as the
/// request is checked, beside the storing of its messages; never panics on
/// failure.
pub async fn run(job: TurnJob) {
    let TurnJob { db, agent, hub, bus, log, lesson_id, document, edit_mode, sources, history, mut user_text, stored, meter, kind, automatic, mut safety, mut resumed } = job;
    // Readers on other instances follow the events stored for them (a
    // resumed turn's from its first: the ones stored before may be gone).
    let relay = hub.relay().cloned();
    let followed = relay.as_ref().map(|r| r.follow(log.clone(), resumed.as_ref().map_or(0, |r| r.written)));
    let slot = PauseSlot::default();
    let lesson = lesson_id.clone();
    let student = kind == super::kind::TurnKind::Student;
    let ctx = if student {
        let desk = super::desk::DbDesk::open(db.clone(), log.owner_id.clone(), lesson_id, document.0).await;
        ToolContext { document: Arc::new(super::desk::StudentDocument::new(&desk.key_xml)), student: Some(Arc::new(desk)), approvals: None }
    } else {
        let review_edits = edit_mode == crate::models::EditMode::Every || kind.holds_edits();
        let suggest_only = kind == super::kind::TurnKind::Suggest;
        let target = DocumentTarget { owner_id: log.owner_id.clone(), lesson_id, message_id: log.message_id.clone(), document, review_edits, suggest_only, sources };
        // A held edit pauses the reply unless the teacher lets edits come as they come.
        // (A resumed turn waits on, whatever the lesson's setting is now.)
        let pauses = (edit_mode != crate::models::EditMode::Auto || resumed.is_some()) && kind.may_pause();
        let approvals: Option<Arc<dyn crate::agent::tools::Approvals>> = pauses.then(|| {
            Arc::new(super::approval::DbApprovals {
                db: db.clone(),
                bus: bus.clone(),
                owner_id: log.owner_id.clone(),
                wait: resumed.as_ref().map_or(hub.approval_wait, |r| r.wait),
                hub: hub.clone(),
                slot: slot.clone(),
            }) as _
        });
        ToolContext { document: Arc::new(DbDocument::new(db.clone(), bus.clone(), target, stored.clone(), hub.shown.clone())), student: None, approvals }
    };
    let (tx, rx) = mpsc::unbounded_channel::<ChatEvent>();
    let every = if bus.shared() { CHECKPOINT_EVERY_SHARED } else { CHECKPOINT_EVERY };
    let start = resumed.as_ref().map(|r| r.record.clone());
    let writer = Writer { db: db.clone(), relay, slot, kind, automatic };
    let forwarder = tokio::spawn(forward(rx, log.clone(), writer, stored.clone(), every, start));

    // What the task holds while the reply streams is its largest state, for
    // every open reply: the rare resume and the ending (its statements and
    // notes) are boxed, so that they are held only while they run.
    if let Some(s) = safety.as_mut() {
        s.settle_unsure(&db, &agent, &log.owner_id, &meter).await;
        if s.help.is_some() {
            // The model hears why it must answer with care; the stored
            // message is the student's words only.
            user_text.push_str("\n\n");
            user_text.push_str(crate::server::safety::CARE_NOTE);
        }
    }
    // A student's reply passes their safety's filter on its way out
    // (`student_reply`): held answers, the help sentence.
    let filter = safety.as_ref().filter(|s| s.guard.is_some() || s.help.is_some()).map(|s| {
        let (agent_tx, agent_rx) = mpsc::unbounded_channel::<ChatEvent>();
        let guard = s.guard.clone().map(crate::server::safety::guard::AnswerGuard::new);
        (agent_tx, tokio::spawn(student_reply(agent_rx, tx.clone(), guard, s.help.clone())))
    });
    let agent_tx = filter.as_ref().map_or(&tx, |(t, _)| t);
    let mut result = match resumed.take() {
        Some(resumed) => Box::pin(agent.resume_turn(resumed.paused, resumed.record, &ctx, agent_tx, &log.cancel, &meter)).await,
        None => agent.run_turn(TurnRequest { history: prompt::past_messages(history), user_text }, &ctx, agent_tx, &log.cancel, &meter).await,
    };
    drop(ctx);
    if let Some((agent_tx, filtered)) = filter {
        drop(agent_tx);
        match filtered.await {
            Ok(Shown { text, reasoning_hidden }) => {
                result.record.text = text;
                if reasoning_hidden {
                    result.record.reasoning.clear();
                }
                let len = u32::try_from(result.record.text.len()).unwrap_or(u32::MAX);
                for call in &mut result.record.tool_calls {
                    call.at = call.at.min(len);
                }
            }
            Err(e) => tracing::error!(error = %e, "a student's reply filter failed"),
        }
    }
    if let Some(s) = &safety {
        crate::server::safety::after_student_turn(&db, s, &log.owner_id, &result.record.text).await;
    }
    Box::pin(end(Ending { db, agent, hub, bus, log, lesson, kind, automatic, stored, meter, tx, forwarder, followed, result })).await;
}

/// A student's reply as they were shown it.
struct Shown {
    text: String,
    /// Whether the model's reasoning was kept from them ("hints only").
    reasoning_hidden: bool,
}

/// Passes a student's reply on to `tx` as their safety asks: under "hints
/// only" its text goes through the answer guard (and its reasoning is not
/// shown); after a message about harm or abuse it ends with the school's
/// help sentence. Returns the text as shown, which is what is stored.
async fn student_reply(
    mut rx: mpsc::UnboundedReceiver<ChatEvent>,
    tx: mpsc::UnboundedSender<ChatEvent>,
    mut guard: Option<crate::server::safety::guard::AnswerGuard>,
    help: Option<String>,
) -> Shown {
    use crate::chat::events::TextData;
    let mut text = String::new();
    let mut round = 0;
    let mut this_round = String::new();
    let send_text = |tx: &mpsc::UnboundedSender<ChatEvent>, text: &mut String, this_round: &mut String, content: String, round: u32| {
        if !content.is_empty() {
            text.push_str(&content);
            this_round.push_str(&content);
            let _ = tx.send(ChatEvent::Text(TextData { content, round_index: round }));
        }
    };
    while let Some(event) = rx.recv().await {
        match (event, guard.as_mut()) {
            (ChatEvent::Text(t), Some(g)) => {
                round = t.round_index;
                let out = g.push(&t.content);
                send_text(&tx, &mut text, &mut this_round, out, round);
            }
            (ChatEvent::Text(t), None) => {
                round = t.round_index;
                send_text(&tx, &mut text, &mut this_round, t.content, round);
            }
            (ChatEvent::Reasoning(_), Some(_)) => {}
            (ChatEvent::AssistantTextDone(mut done), g) => {
                if let Some(g) = g {
                    let out = g.flush();
                    send_text(&tx, &mut text, &mut this_round, out, round);
                }
                done.full_text = std::mem::take(&mut this_round);
                let _ = tx.send(ChatEvent::AssistantTextDone(done));
            }
            (event @ (ChatEvent::ToolStart(_) | ChatEvent::RoundFinished(_)), Some(g)) => {
                let out = g.flush();
                send_text(&tx, &mut text, &mut this_round, out, round);
                let _ = tx.send(event);
            }
            (event, _) => {
                let _ = tx.send(event);
            }
        }
    }
    if let Some(g) = guard.as_mut() {
        let out = g.finish();
        send_text(&tx, &mut text, &mut this_round, out, round);
    }
    if let Some(help) = help {
        let gap = if text.is_empty() { "" } else { "\n\n" };
        send_text(&tx, &mut text, &mut this_round, format!("{gap}{help}"), round);
    }
    Shown { text, reasoning_hidden: guard.is_some() }
}

/// What a turn's ending needs, handed over from `run`.
struct Ending {
    db: Db,
    agent: Arc<Agent>,
    hub: Arc<TurnHub>,
    bus: Arc<Bus>,
    log: Arc<TurnLog>,
    lesson: String,
    kind: super::kind::TurnKind,
    automatic: bool,
    stored: Stored,
    meter: super::meter::SchoolMeter,
    tx: mpsc::UnboundedSender<ChatEvent>,
    forwarder: tokio::task::JoinHandle<()>,
    followed: Option<super::relay::Followed>,
    result: TurnResult,
}

/// Ends a turn whose agent is done: settles its meter, waits for its last
/// checkpoint, stores its result and says it ended.
async fn end(ending: Ending) {
    let Ending { db, agent, hub, bus, log, lesson, kind, automatic, stored, meter, tx, forwarder, followed, result } = ending;
    let student = kind == super::kind::TurnKind::Student;
    meter.close().await;
    drop(tx);
    let _ = forwarder.await;
    if !stored.wait().await {
        return; // abandoned by the request that started it; nothing was stored
    }

    let (status, error) = match &result.outcome {
        TurnOutcome::Complete => (MessageStatus::Complete, None),
        TurnOutcome::Cancelled if log.interrupted.load(Ordering::SeqCst) => (
            MessageStatus::Interrupted,
            Some(ErrorData { code: INTERRUPTED.into(), message: "The server restarted before this reply was finished.".into() }),
        ),
        TurnOutcome::Cancelled => (MessageStatus::Cancelled, None),
        TurnOutcome::Failed(e) => (MessageStatus::Error, Some(ErrorData { code: e.code.into(), message: e.message.clone() })),
        TurnOutcome::Parked => {
            // Paused as the process stops: stored as it is, for any instance to adopt.
            if let Err(e) = store::park(&db, &log.message_id).await {
                tracing::warn!(error = %e, turn = %log.turn_id, "could not put a paused reply aside; it is adopted when its lease runs out");
            }
            hub.parked(&log);
            return;
        }
    };
    if let Some(e) = &error {
        tracing::warn!(turn = %log.turn_id, code = %e.code, "turn ended with an error");
        if matches!(result.outcome, TurnOutcome::Failed(_)) {
            METRICS.failed(&e.code);
        }
    }
    let mut record = result.record;
    record.apply(&terminal_event(status, error.clone(), &log.message_id, None));
    // The same end, now with the record it closes as its `final`.
    let last = terminal_event(status, error, &log.message_id, Some(&record));
    // Calls of tools outside the agent's set were refused as unknown tools;
    // they are kept too (a student's tutor asked to edit is one).
    let allowed = agent.tool_names();
    for call in record.tool_calls.iter().filter(|c| !allowed.contains(&c.call.tool.as_str())) {
        record_refused(&db, &log.owner_id, &lesson, &log.turn_id, &call.call.tool).await;
    }
    if let Err(e) = store::finish_turn(&db, &log.message_id, &record).await {
        tracing::error!(error = %e, turn = %log.turn_id, "could not store a finished turn");
    }
    audit(&db, &log, &lesson, kind, automatic, meter.school_id(), agent.model(), &record, &allowed).await;
    hub.release(&log);
    log.push(last);
    if let Some(followed) = followed {
        // Its last batch is written before `ended` (readers elsewhere see
        // the end), and never holds the turn's end for long.
        if !followed.finished(Duration::from_secs(5)).await {
            tracing::warn!(turn = %log.turn_id, "the turn's last events were not stored for other instances in time");
        }
    }
    hub.ended(&log);
    if student {
        return;
    }
    let ended = LessonEvent::Turn { chat_id: log.session_id.clone(), turn_id: log.turn_id.clone(), running: false, automatic: false };
    events::tell(&bus, &db, &lesson, ended).await;
}

/// Keeps the reply in its school's audit log (`server::audit`): who it
/// was for, the model, its tokens, the tools it ran and what each changed.
#[allow(clippy::too_many_arguments)]
async fn audit(db: &Db, log: &TurnLog, lesson: &str, kind: super::kind::TurnKind, automatic: bool, school: &str, model: &str, record: &TurnRecord, allowed: &[&str]) {
    use crate::models::{AuditAction, AuditActor};
    let actor = match kind {
        super::kind::TurnKind::Student => AuditActor::Student,
        super::kind::TurnKind::Suggest | super::kind::TurnKind::CoreChange => AuditActor::Automatic,
        _ if automatic => AuditActor::Automatic,
        _ => AuditActor::Teacher,
    };
    let entry = crate::server::audit::NewEntry {
        school_id: school,
        action: AuditAction::Reply,
        actor,
        person_id: &log.owner_id,
        lesson_id: Some(lesson),
        turn_id: Some(&log.turn_id),
        model,
        tokens: i64::from(record.usage.total_tokens),
        outcome: record.status.as_str(),
        tools: crate::server::audit::record::tools_of(record, allowed),
    };
    crate::server::audit::record(db, entry).await;
}

/// Keeps a call the agent refused because the tool is not one of its own,
/// so that a teacher or an admin can see that someone or something tried.
async fn record_refused(db: &Db, user_id: &str, lesson_id: &str, turn_id: &str, tool: &str) {
    tracing::warn!(user = %user_id, lesson = %lesson_id, turn = %turn_id, tool = %tool, "refused a call of a tool outside the agent's set");
    let stored = sqlx::query("INSERT INTO refused_tool_calls (id, user_id, lesson_id, turn_id, tool, created_at) VALUES ($1, $2, $3, $4, $5, $6)")
        .bind(crate::server::ids::new_id())
        .bind(user_id)
        .bind(lesson_id)
        .bind(turn_id)
        .bind(tool)
        .bind(crate::server::db::time::now())
        .execute(db)
        .await;
    if let Err(e) = stored {
        tracing::error!(error = %e, "could not record a refused tool call");
    }
}

/// How much of a record's text and reasoning is stored: what a checkpoint
/// still has to append is everything past these offsets.
#[derive(Clone, Copy, Default)]
struct Saved {
    text: usize,
    reasoning: usize,
}

impl Saved {
    fn of(record: &TurnRecord) -> Self {
        Self { text: record.text.len(), reasoning: record.reasoning.len() }
    }

    fn behind(self, record: &TurnRecord) -> bool {
        record.text.len() > self.text || record.reasoning.len() > self.reasoning
    }
}

/// A checkpoint being written. It answers what to take back if it failed:
/// where its text and reasoning began, and whether it carried the steps.
type Writing = BoxFuture<'static, Option<(Saved, bool)>>;

/// Passes the agent's events on to the turn's log and checkpoints them. The
/// text and reasoning still to store are the record's past `saved`.
/// A resumed turn starts from its record as stored at the pause (`start`).
///
/// A pause (`awaiting_approval`) is stored at once, after any checkpoint
/// under way: the whole record and what resuming needs (the agent left it
/// in the writer's slot just before). The next event unpauses the stored
/// reply before anything else is written to it.
async fn forward(mut rx: mpsc::UnboundedReceiver<ChatEvent>, log: Arc<TurnLog>, writer: Writer, stored: Stored, every: Duration, start: Option<TurnRecord>) {
    let started = Instant::now();
    let mut first = true;
    let mut paused = start.is_some();
    let mut record = start.unwrap_or_default();
    let mut saved = Saved::of(&record);
    let mut steps_changed = false;
    let mut writing: Option<Writing> = None;
    // When the next checkpoint is due. One timer, moved as needed: a new one
    // per event would be timer work on every delta.
    let mut due = false;
    let timer = tokio::time::sleep(Duration::ZERO);
    tokio::pin!(timer);
    loop {
        tokio::select! {
            event = rx.recv() => {
                let Some(event) = event else { break };
                if std::mem::take(&mut first) {
                    METRICS.provider_first_event.observe(started.elapsed().as_secs_f64());
                }
                // Pausing and going on are rare: boxed, they are not part of
                // what every open reply's task holds.
                if std::mem::take(&mut paused) {
                    Box::pin(writer.unpause(&log.message_id, &stored)).await;
                }
                record.apply(&event);
                if matches!(event, ChatEvent::AwaitingApproval(_)) {
                    log.push(event);
                    // What a checkpoint under way failed to write is in the
                    // whole record stored now.
                    let failed = match writing.take() {
                        Some(w) => w.await,
                        None => None,
                    };
                    paused = Box::pin(writer.pause(&log, &record, &stored)).await;
                    if paused {
                        saved = Saved::of(&record);
                        (steps_changed, due) = (false, false);
                    } else if let Some((from, steps)) = failed {
                        saved = from;
                        steps_changed |= steps;
                        timer.as_mut().reset(Instant::now() + every);
                        due = true;
                    }
                    continue;
                }
                steps_changed |= matches!(event, ChatEvent::ToolStart(_) | ChatEvent::ToolInput(_) | ChatEvent::ToolEnd(_));
                // Steps are saved as soon as they end; text once per period.
                let now_please = steps_changed && matches!(event, ChatEvent::ToolEnd(_) | ChatEvent::RoundFinished(_));
                log.push(event);
                if now_please {
                    timer.as_mut().reset(Instant::now());
                    due = true;
                } else if !due && saved.behind(&record) {
                    timer.as_mut().reset(Instant::now() + every);
                    due = true;
                }
            }
            failed = async { writing.as_mut().expect("guarded").await }, if writing.is_some() => {
                writing = None;
                if let Some((from, steps)) = failed {
                    // Taken back, for the next checkpoint to carry again.
                    saved = from;
                    steps_changed |= steps;
                    if !due {
                        timer.as_mut().reset(Instant::now() + every);
                        due = true;
                    }
                }
            }
            _ = &mut timer, if due && writing.is_none() => {
                due = false;
                let steps = std::mem::take(&mut steps_changed).then(|| record.tool_calls.clone());
                let added = Progress {
                    text: record.text[saved.text..].to_string(),
                    reasoning: record.reasoning[saved.reasoning..].to_string(),
                    steps,
                };
                writing = Some(checkpoint(writer.clone(), log.message_id.clone(), stored.clone(), saved, added));
                saved = Saved::of(&record);
            }
        }
    }
    // The end of the turn stores the whole record; a checkpoint still being
    // written finishes first, so it cannot land after the end.
    if let Some(w) = writing {
        w.await;
    }
}

/// Where checkpoints go: the database directly, or through the instance's
/// relay, which writes every reply's in one statement (shared database).
#[derive(Clone)]
struct Writer {
    db: Db,
    relay: Option<Arc<super::relay::Relay>>,
    /// A pausing turn's state, from the agent (`DbApprovals::pause`).
    slot: PauseSlot,
    /// What the turn is, kept with it when it pauses.
    kind: super::kind::TurnKind,
    automatic: bool,
}

impl Writer {
    /// Stores the turn as it pauses; whether it was.
    async fn pause(&self, log: &TurnLog, record: &TurnRecord, stored: &Stored) -> bool {
        let Some(turn) = self.slot.lock().unwrap_or_else(|p| p.into_inner()).take() else { return false };
        if !stored.wait().await {
            return false;
        }
        let parked = Parked { turn: *turn, seq: log.latest(), paused_at: crate::server::db::time::now(), kind: self.kind, automatic: self.automatic };
        let state = match serde_json::to_string(&parked) {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(error = %e, "could not write down a paused turn");
                return false;
            }
        };
        match store::pause_turn(&self.db, &log.message_id, record, &state).await {
            Ok(()) => true,
            Err(e) => {
                tracing::warn!(error = %e, turn = %log.turn_id, "could not store a paused turn; it does not outlive this process");
                false
            }
        }
    }

    async fn unpause(&self, message_id: &str, stored: &Stored) {
        if !stored.wait().await {
            return;
        }
        if let Err(e) = store::unpause(&self.db, message_id).await {
            tracing::warn!(error = %e, "could not mark a paused turn as going on");
        }
    }
}

fn checkpoint(writer: Writer, message_id: String, stored: Stored, from: Saved, added: Progress) -> Writing {
    Box::pin(async move {
        if !stored.wait().await {
            return None; // abandoned: there is nothing to write to
        }
        let had_steps = added.steps.is_some();
        let saved = match &writer.relay {
            Some(relay) => relay.checkpoint(message_id, added).await,
            None => {
                let steps = added.steps.as_deref().unwrap_or_default();
                match store::save_progress(&writer.db, &message_id, &added.text, &added.reasoning, steps).await {
                    Ok(()) => true,
                    Err(e) => {
                        tracing::warn!(error = %e, "could not save a turn's progress");
                        false
                    }
                }
            }
        };
        (!saved).then_some((from, had_steps))
    })
}
