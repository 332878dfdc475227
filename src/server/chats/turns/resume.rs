//! Paused turns that outlive their process. A reply paused on a held edit
//! is stored with what resuming it needs (`pause`); when its process stops
//! (put aside at shutdown, or killed: its lease runs out) the reply is not
//! interrupted. Any instance's lease tick adopts it (`store::adopt_paused`,
//! one instance wins each) and goes on with it here: a log that starts with
//! the events it had, numbered as its readers knew them, and the agent
//! waiting again for the teacher's decision (`Agent::resume_turn`), which
//! may already have come.

use std::{sync::Arc, time::Duration};

use super::{
    gate::stored_gate,
    hub::TurnHub,
    meter,
    pause::Parked,
    run::{run, Resumed, TurnJob},
    store,
};
use crate::{
    agent::run::Agent,
    chat::{
        events::{AwaitingData, ChatEvent},
        message::MessageStatus,
    },
    server::{
        bus::Bus,
        chats,
        clock::MonthClock,
        db::{time, Db},
        error::{AppError, Result},
    },
};

/// What resuming turns here needs.
pub struct Resumer {
    /// Where turns write (the state's `turn_writer`).
    pub db: Db,
    /// Where their calls reserve and settle (the state's `budget_writer`).
    pub budget: Db,
    pub hub: Arc<TurnHub>,
    pub bus: Arc<Bus>,
    /// The teacher's agent, when the assistant is configured.
    pub agent: Option<Arc<Agent>>,
    /// The agent of "Draft feedback" turns (`TurnKind::Feedback`).
    pub feedback: Option<Arc<Agent>>,
    /// The server's allowance for schools without their own.
    pub default: i64,
    pub clock: MonthClock,
}

impl Resumer {
    /// Adopts the paused replies nobody holds (with `all`, every paused
    /// one: SQLite at start-up) and resumes each here. One that cannot be
    /// resumed ends as interrupted. Returns how many were adopted.
    pub async fn adopt(&self, all: bool) -> Result<usize> {
        if self.hub.is_closing() {
            return Ok(0);
        }
        let now = time::now();
        let until = time::shifted(&now, self.hub.lease, true).unwrap_or_else(|| time::from_now(self.hub.lease));
        let turns = store::adopt_paused(&self.db, &self.hub.instance, &now, &until, all).await?;
        for turn in &turns {
            if let Err(e) = self.resume(turn, &now).await {
                tracing::warn!(error = %e, turn = %turn, "could not resume a paused reply; it ends as interrupted");
                if let Err(e) = store::give_up(&self.db, turn).await {
                    tracing::error!(error = %e, turn = %turn, "could not end a paused reply that cannot be resumed");
                }
            }
        }
        Ok(turns.len())
    }

    async fn resume(&self, turn_id: &str, now: &str) -> Result<()> {
        let (message_id, session_id, owner_id, state) = store::paused(&self.db, turn_id).await?.ok_or(AppError::NotFound)?;
        let parked: Parked = serde_json::from_str(&state).map_err(|e| AppError::Internal(format!("a paused turn's stored state: {e}")))?;
        let kind = parked.kind;
        let agent = if kind == super::kind::TurnKind::Feedback { &self.feedback } else { &self.agent };
        let agent = agent.clone().ok_or_else(|| AppError::Unavailable("The assistant is not configured.".into()))?;
        // The chat and its lesson as they are now (gone: nothing to resume).
        let (user, chat) = store::owner_and_chat(&self.db, &owner_id, &session_id, 0).await?.ok_or(AppError::NotFound)?;
        let chat = chat.ok_or(AppError::NotFound)?;
        let mut record = chats::turn_message(&self.db, &owner_id, turn_id).await?.record();
        record.status = MessageStatus::Running;
        let paused = &parked.turn;
        if let Some(step) = record.tool_calls.iter_mut().rev().find(|c| c.call.id == paused.end.id) {
            step.reopen();
        }
        // The events it had, the pause last, numbered to end where they ended.
        let mut before = record.events(&message_id);
        before.push(ChatEvent::AwaitingApproval(Box::new(AwaitingData {
            id: paused.end.id.clone(),
            proposal_id: paused.proposal_id.clone(),
            changes: paused.end.changes.clone(),
            // A digest good from now: the page that follows the resumed turn shows it now.
            digest: crate::server::lessons::proposals::fresh_digest(&self.db, &paused.proposal_id, &self.hub.shown).await?.or_else(|| paused.end.digest.clone()),
            decisions: paused.end.decisions.clone(),
            round_index: paused.round,
        })));
        let written = parked.seq.saturating_sub(before.len() as u64);
        let log = self.hub.adopt(turn_id, &owner_id, &session_id, &message_id, before, parked.seq)?;
        // The wait for the teacher counts from the pause, not from here.
        let waited = match (time::epoch_millis(now), time::epoch_millis(&parked.paused_at)) {
            (Some(now), Some(then)) => Duration::from_millis(u64::try_from(now - then).unwrap_or(0)),
            _ => Duration::ZERO,
        };
        let wait = self.hub.approval_wait.saturating_sub(waited);
        let (stored_tx, stored) = stored_gate();
        stored_tx.set(true);
        let meter = meter::unreserved((self.budget.clone(), user.school_id, owner_id), self.default, self.clock.clone(), turn_id, agent.model(), stored.clone());
        tracing::info!(turn = %turn_id, "resuming a paused reply");
        tokio::spawn(run(TurnJob {
            db: self.db.clone(),
            agent,
            hub: self.hub.clone(),
            bus: self.bus.clone(),
            log,
            lesson_id: chat.session.lesson_id,
            document: (chat.document_xml, chat.revision),
            edit_mode: chat.edit_mode,
            sources: chat.sources,
            history: Vec::new(),
            user_text: String::new(),
            stored,
            meter,
            kind,
            automatic: parked.automatic,
            safety: None,
            resumed: Some(Box::new(Resumed { paused: parked.turn, record, wait, written })),
        }));
        Ok(())
    }
}
