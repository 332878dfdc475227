//! What a paused turn leaves in the database so that it outlives its
//! process, and where the agent hands it over: the agent's state
//! (`agent::pause::PausedTurn`) goes into the turn's slot
//! (`approval::DbApprovals::pause`), and the turn's writer (`run`) stores
//! it with the record, in order with its other writes.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::agent::pause::PausedTurn;

/// What is stored of a paused turn (`chat_messages.resume_state`): what the
/// agent needs to go on, the number of the turn's last event then, and when
/// it paused.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Parked {
    pub turn: PausedTurn,
    pub seq: u64,
    pub paused_at: String,
    /// What the turn was (a reply paused before this was kept was the
    /// teacher's).
    #[serde(default)]
    pub kind: super::kind::TurnKind,
    /// Started by Margin rather than by its teacher (for the audit log).
    #[serde(default)]
    pub automatic: bool,
}

/// Where the agent leaves a pausing turn's state for the forwarder, which
/// stores it in order with the turn's other writes.
/// Boxed: every turn has a slot, few ever fill it.
pub type PauseSlot = Arc<std::sync::Mutex<Option<Box<PausedTurn>>>>;
