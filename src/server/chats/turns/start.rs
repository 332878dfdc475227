//! Starting a turn, and stopping one. Starting is one function because its
//! parts must agree: the chat is reserved, the turn starts at once (calling
//! the model) while its two messages are stored, nothing is written or sent
//! until they are, and a turn whose messages could not be stored is
//! abandoned without a trace.

use std::sync::Arc;

use serde::Serialize;

use super::{
    gate::stored_gate,
    hub::{TurnHub, TurnLog},
    kind::TurnKind,
    meter::Spending,
    run::{run, TurnJob},
};
use crate::{
    agent::run::Agent,
    chat::message::{model_text, Attachments},
    models::LessonEvent,
    server::{
        bus::Bus,
        chats::{
            self,
            turns::store::{self, ChatStart},
        },
        lessons::events,
        db::{time, Db},
        error::{AppError, Result},
        ids,
    },
};

/// A checked request for a turn: whose it is, the chat it runs in, what the
/// teacher wrote.
pub struct NewTurn {
    pub owner_id: String,
    pub chat: ChatStart,
    pub content: String,
    /// Run again in place of the chat's last reply, which did not finish
    /// (the question is already stored).
    pub retry: bool,
    /// The school budget it spends, its first call reserved.
    pub spending: Spending,
    /// What travels with the message: a selection asked about, or (for an
    /// automatic turn) the note of what started it.
    pub attachments: Option<Attachments>,
    /// Whom it answers, and so what it may do.
    pub kind: TurnKind,
    /// A student's turn: what their safety asks of it (`server::safety`).
    pub safety: Option<Box<crate::server::safety::StudentSafety>>,
}

/// Starts a turn; returns its log once its messages are stored (a client that
/// leaves meanwhile does not stop it). `db` is where the turn writes (the
/// state's `turn_writer`).
pub async fn start(db: &Db, hub: &Arc<TurnHub>, bus: &Arc<Bus>, agent: Arc<Agent>, turn: NewTurn) -> Result<Arc<TurnLog>> {
    let NewTurn { owner_id, chat: ChatStart { session, document_xml, revision, edit_mode, history, sources }, content, retry, spending, attachments, kind, safety } = turn;
    let automatic = attachments.as_ref().is_some_and(|a| a.trigger.is_some());
    // Refused here, the spending is dropped, which gives its reservation back.
    let log = hub.begin(&ids::new_id(), &owner_id, &session.id, &ids::new_id())?;
    let (stored_tx, stored) = stored_gate();
    let model = agent.model().to_string();
    let reserved = (spending.school_id.clone(), spending.first);
    let meter = spending.meter(&log.turn_id, &model, stored.clone());
    let lesson_id = session.lesson_id.clone();
    tokio::spawn(run(TurnJob {
        db: db.clone(),
        agent,
        hub: hub.clone(),
        bus: bus.clone(),
        log: log.clone(),
        lesson_id: session.lesson_id.clone(),
        document: (document_xml, revision),
        edit_mode,
        sources,
        history,
        user_text: model_text(&content, attachments.as_ref()),
        stored,
        meter,
        kind,
        automatic,
        safety,
        resumed: None,
    }));
    // Stored in a task of its own: a client that leaves now cannot leave the
    // turn half-begun (running, but with its messages unsaved or its chat
    // marked busy for good).
    let storing = {
        let (db, hub, bus, log) = (db.clone(), hub.clone(), bus.clone(), log.clone());
        tokio::spawn(async move {
            let user_message = ids::new_id();
            let lease = store::Lease { instance: &hub.instance, until: time::from_now(hub.lease) };
            let ids = store::TurnIds {
                turn: &log.turn_id,
                user_message: &user_message,
                assistant_message: &log.message_id,
                lease,
                reserved: (&reserved.0, reserved.1),
            };
            let stored = if retry {
                store::restart_turn(&db, &session.id, &ids, &model).await
            } else {
                store::start_turn_with(&db, &session.id, &content, attachments.as_ref(), &ids, &model).await
            };
            if stored.is_err() {
                log.cancel.cancel();
                hub.abandon(&log);
            } else if kind != TurnKind::Student {
                // Told before the turn may go on, so its end is always told after.
                let started = LessonEvent::Turn { chat_id: log.session_id.clone(), turn_id: log.turn_id.clone(), running: true, automatic };
                events::tell(&bus, &db, &lesson_id, started).await;
            }
            stored_tx.set(stored.is_ok());
            stored
        })
    };
    match storing.await {
        Ok(Ok(())) => Ok(log),
        Ok(Err(e)) => Err(e),
        Err(e) => Err(AppError::Internal(format!("storing the turn's messages failed: {e}"))),
    }
}

/// What a request to stop a turn found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CancelStatus {
    /// The turn was running and is stopping now.
    Cancelling,
    /// The turn had already ended.
    Finished,
}

/// Stops one of `owner_id`'s turns. Another teacher's turn is `NotFound`.
/// A turn running on another instance is asked to stop through the
/// database; that instance sees it within `leases::TICK`.
pub async fn cancel(db: &Db, hub: &TurnHub, owner_id: &str, turn_id: &str) -> Result<CancelStatus> {
    if let Some(log) = hub.get(turn_id) {
        if log.owner_id != owner_id {
            return Err(AppError::NotFound);
        }
        if log.is_finished() {
            return Ok(CancelStatus::Finished);
        }
        log.cancel.cancel();
        return Ok(CancelStatus::Cancelling);
    }
    if store::request_cancel(db, owner_id, turn_id).await? {
        return Ok(CancelStatus::Cancelling);
    }
    chats::turn_message(db, owner_id, turn_id).await?;
    Ok(CancelStatus::Finished)
}

/// Once the reply `log` in `lesson_id` has ended, the lesson announces the
/// edits it made (all at once, not one by one as they landed): its versions
/// hear of them (`lessons::events::changed`).
pub fn tell_lesson_when_done(state: &crate::server::state::AppState, lesson_id: String, log: Arc<TurnLog>) {
    let state = state.clone();
    tokio::spawn(async move {
        log.finished().await;
        // Boxed: the task waits as long as the reply runs, holding only
        // what it waits with, not the queries that follow (with them
        // inline its cell was 1.8 KB a running reply: heaptrack of `make
        // bench` at 1,000 open streams).
        Box::pin(events::changed(&state, &lesson_id)).await;
    });
}
