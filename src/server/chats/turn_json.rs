//! A turn for a script that asked for JSON (`Accept: application/json`):
//! one object, answered when the reply ends or as soon as it pauses on an
//! edit held for the teacher's decision (`status: "awaiting"`, with the
//! calls waiting in `pending`), never held open for the pause's length.
//! Deciding (`POST /api/proposals/{id}/apply` or `…/discard`) goes on with
//! the same turn, exactly as for a page following its events; asking the
//! turn again (`GET /api/chat/turns/{id}/events`, as JSON) answers at its
//! next pause or its end. A turn running on another instance is read from
//! the database until it pauses or ends.

use std::{collections::BTreeMap, time::Duration};

use axum::{
    response::{IntoResponse, Response},
    Json,
};
use serde::Serialize;

use super::turns::TurnLog;
use crate::{
    chat::{
        events::{AwaitingData, ChatEvent, ErrorData, UsageData},
        message::ChatMessage,
        proposal::{DecisionKind, ProposalMark, ProposalStatus},
        turn::{MessageStatus, ToolCallRecord, TurnFinal, TurnRecord},
    },
    lesson::Change,
    server::{chats, error::Result, lessons::proposals, state::AppState},
};

/// How often a turn on another instance is looked at.
const LOOK_EVERY: Duration = Duration::from_millis(250);

/// Which words a JSON answer is in: Margin's (`TurnAnswer`), or the
/// design's `FinalResult` (`?protocol=004`, `chats::design`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Margin,
    Design,
}

/// A turn as JSON: ended, or paused with what waits for the teacher.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TurnAnswer {
    turn_id: String,
    message_id: String,
    /// `complete`, `error`, `cancelled`, `interrupted`, or `awaiting` (paused).
    status: MessageStatus,
    text: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    reasoning: String,
    /// Each tool call: what it was asked, how it ended, what it changed.
    steps: Vec<ToolCallRecord>,
    usage: UsageData,
    /// The calls waiting for the teacher's decision (a pause only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pending: Vec<Pending>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<ErrorData>,
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<String>,
    /// The turn's record, as `done` gives it (so far, on a pause).
    #[serde(rename = "final")]
    record: TurnFinal,
}

/// A call waiting for the teacher: decide it with its proposal's id and
/// the digest given with it, in one of the ways its tool allows.
#[derive(Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct Pending {
    id: String,
    proposal_id: String,
    changes: Vec<Change>,
    digest: Option<String>,
    decisions: Vec<DecisionKind>,
}

impl Pending {
    fn of(a: &AwaitingData) -> Self {
        Self { id: a.id.clone(), proposal_id: a.proposal_id.clone(), changes: a.changes.clone(), digest: a.digest.clone(), decisions: a.decisions.clone() }
    }
}

/// Answers `log`'s turn when it ends or pauses, whichever comes first.
/// Each wake-up reads only the events after the last it read (a reply is
/// one event a delta), keeping which calls wait; the whole log is read
/// once, for the answer of a pause.
pub async fn answer_live(state: &AppState, user_id: &str, log: &TurnLog, shape: Shape) -> Result<Response> {
    let mut changed = log.subscribe();
    let (mut cursor, mut waiting) = (0, Waiting::default());
    loop {
        changed.borrow_and_update();
        let (events, over) = log.since(cursor);
        if let Some(&(last, _)) = events.last() {
            cursor = last;
        }
        waiting.read(&events);
        if over || log.is_parked() {
            break;
        }
        let mut pending = waiting.calls();
        if !pending.is_empty() {
            // Decided already (the turn has not said its end yet): not what waits.
            let marks = proposals::marks_for_message(&state.db, &log.message_id).await?;
            pending.retain(|p| marks.get(&p.proposal_id).is_none_or(|m| m.status == ProposalStatus::Pending));
        }
        if !pending.is_empty() {
            let mut record = TurnRecord::default();
            for (_, e) in &log.since(0).0 {
                record.apply(e);
            }
            let m = chats::turn_message(&state.db, user_id, &log.turn_id).await?;
            return Ok(answer(&m, record, MessageStatus::Awaiting, pending, shape));
        }
        if changed.changed().await.is_err() {
            break;
        }
    }
    log.finished().await;
    answer_stored(state, user_id, &log.turn_id, shape).await
}

/// Answers a turn this process does not hold (another instance's, or
/// over) from the database, once it has paused or ended.
pub async fn answer_stored(state: &AppState, user_id: &str, turn_id: &str, shape: Shape) -> Result<Response> {
    loop {
        let m = chats::turn_message(&state.db, user_id, turn_id).await?;
        match m.status {
            MessageStatus::Awaiting => {
                let record = m.record();
                let waiting: Vec<Pending> = record
                    .tool_calls
                    .iter()
                    .filter(|c| c.proposal.as_ref().is_some_and(|p| p.status == ProposalStatus::Pending))
                    .map(|c| {
                        let p = c.proposal.clone().unwrap_or_else(|| ProposalMark::held("", None, Vec::new()));
                        Pending { id: c.call.id.clone(), proposal_id: p.id, changes: c.changes.clone(), digest: p.digest, decisions: p.decisions }
                    })
                    .collect();
                if waiting.is_empty() {
                    // Decided, and not taken on again yet.
                    tokio::time::sleep(LOOK_EVERY).await;
                    continue;
                }
                // Shown now: with digests good from now.
                let mut waiting = waiting;
                for p in &mut waiting {
                    p.digest = proposals::fresh_digest(&state.db, &p.proposal_id, &state.shown).await?.or(p.digest.take());
                }
                return Ok(answer(&m, record, MessageStatus::Awaiting, waiting, shape));
            }
            MessageStatus::Running => tokio::time::sleep(LOOK_EVERY).await,
            status => return Ok(answer(&m, m.record(), status, Vec::new(), shape)),
        }
    }
}

/// The calls a paused turn waits on: announced as awaiting and not ended
/// yet, by call id, with the number of their announcement.
#[derive(Default)]
struct Waiting(BTreeMap<String, (u64, Pending)>);

impl Waiting {
    /// Takes in the next events of the turn.
    fn read(&mut self, events: &[(u64, ChatEvent)]) {
        for (n, e) in events {
            match e {
                ChatEvent::AwaitingApproval(a) => {
                    self.0.insert(a.id.clone(), (*n, Pending::of(a)));
                }
                ChatEvent::ToolEnd(end) => {
                    self.0.remove(&end.id);
                }
                _ => {}
            }
        }
    }

    /// The calls waiting, in the order they were announced.
    fn calls(&self) -> Vec<Pending> {
        let mut waiting: Vec<&(u64, Pending)> = self.0.values().collect();
        waiting.sort_by_key(|(n, _)| *n);
        waiting.into_iter().map(|(_, p)| p.clone()).collect()
    }
}

fn answer(m: &ChatMessage, record: TurnRecord, status: MessageStatus, pending: Vec<Pending>, shape: Shape) -> Response {
    if shape == Shape::Design {
        let waiting = pending
            .into_iter()
            .map(|p| super::design::Waiting { id: p.id, proposal_id: p.proposal_id, changes: serde_json::json!(p.changes), digest: p.digest, decisions: p.decisions })
            .collect();
        let turn_id = m.turn_id.clone().unwrap_or_default();
        return Json(super::design::Design::final_of_record(&record, status, waiting, &turn_id, &m.id)).into_response();
    }
    let reply = TurnAnswer {
        turn_id: m.turn_id.clone().unwrap_or_default(),
        message_id: m.id.clone(),
        status,
        text: record.text.clone(),
        reasoning: record.reasoning.clone(),
        steps: record.tool_calls.clone(),
        usage: record.usage,
        pending,
        error: m.error.clone(),
        model: m.model.clone(),
        record: record.final_record(),
    };
    Json(reply).into_response()
}
