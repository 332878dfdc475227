//! Where a paused turn waits for the teacher's decision on its held edit.
//! It reads the proposal in the database, and reads it again on the note
//! every decision sends (`bus::PROPOSALS`), from this instance or any
//! other, so Apply or Discard on any instance resumes the turn; it also
//! looks every `RECHECK` in case a note was lost (a proposal replaced by a
//! newer one sends none). A wait lasts at most `TurnHub::approval_wait`:
//! then the edit stays for later, as it did before turns paused.

use std::{sync::Arc, time::Duration};

use futures::future::BoxFuture;
use tokio::sync::broadcast::error::RecvError;

use super::{hub::TurnHub, pause::PauseSlot};
use crate::{
    agent::{
        pause::PausedTurn,
        tools::{Approvals, Decision},
    },
    chat::proposal::ProposalStatus,
    server::{
        bus::{self, Bus},
        db::Db,
        lessons::proposals,
    },
};

/// How often a waiting turn reads its proposal with no note.
const RECHECK: Duration = Duration::from_secs(5);

pub struct DbApprovals {
    pub db: Db,
    pub bus: Arc<Bus>,
    pub owner_id: String,
    pub wait: Duration,
    /// Whether the process is stopping.
    pub hub: Arc<TurnHub>,
    /// Where a pausing turn's state goes, for the turn's writer to store.
    pub slot: PauseSlot,
}

impl Approvals for DbApprovals {
    fn pause(&self, state: &PausedTurn) {
        *self.slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(Box::new(state.clone()));
    }

    fn stopping(&self) -> bool {
        self.hub.is_closing()
    }

    fn decision<'a>(&'a self, proposal_id: &'a str) -> BoxFuture<'a, Decision> {
        Box::pin(async move {
            let mut notes = self.bus.subscribe();
            let until = tokio::time::Instant::now() + self.wait;
            loop {
                match proposals::mark(&self.db, &self.owner_id, proposal_id).await {
                    Ok(Some(mark)) => match mark.status {
                        ProposalStatus::Pending => {}
                        ProposalStatus::Applied => return Decision::Applied { revision: mark.revision },
                        ProposalStatus::Discarded => return Decision::Discarded { reason: mark.reason },
                        ProposalStatus::Replaced => return Decision::Replaced,
                    },
                    // Its lesson went to the trash: nothing to wait for.
                    Ok(None) => return Decision::NotYet,
                    Err(e) => tracing::warn!(error = %e, "could not read a proposal a turn waits on"),
                }
                let noted = async {
                    loop {
                        match notes.recv().await {
                            Ok(note) if note.channel == bus::PROPOSALS && note.payload == proposal_id => return,
                            Ok(_) => {}
                            Err(RecvError::Lagged(_)) => return,
                            Err(RecvError::Closed) => std::future::pending::<()>().await,
                        }
                    }
                };
                tokio::select! {
                    _ = tokio::time::sleep_until(until) => return Decision::NotYet,
                    _ = noted => {}
                    _ = tokio::time::sleep(RECHECK) => {}
                }
            }
        })
    }
}
