//! What a turn paused on a held edit needs to go on later, perhaps in
//! another process: the conversation as the model will be sent it, the
//! round's calls from the paused one on, and how much of the reply's time
//! is left. The server stores it (`Approvals::pause`) so that a pause
//! survives a restart of the instance running the reply; any instance can
//! then resume the turn from it (`Agent::resume_turn`).

use async_openai::types::chat::ChatCompletionRequestMessage;
use serde::{Deserialize, Serialize};

use crate::{agent::assemble::AssembledCall, chat::events::ToolEndData};

/// A turn waiting for the teacher's decision, as it can be stored.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PausedTurn {
    /// The conversation after the system prompt, up to and with the tool
    /// results of the round's calls before the paused one.
    pub messages: Vec<ChatCompletionRequestMessage>,
    /// The turn's reasoning to send back, by the index of the message it led to.
    pub thoughts: Vec<(usize, String)>,
    /// The round the pause is in (from 1).
    pub round: u32,
    /// The round's calls from the paused one on (the paused one first).
    pub calls: Vec<PausedCall>,
    /// The round was cut off by the output cap (its calls are not run).
    pub cut_off: bool,
    /// Every call of the round so far only offered what to do next.
    pub last_word: bool,
    /// The held edit's proposal.
    pub proposal_id: String,
    /// The paused call's end as it stood before the decision.
    pub end: ToolEndData,
    /// What the model is told if no decision comes in time.
    pub answer: String,
    /// What is left of the reply's time limit, in milliseconds.
    pub left_ms: u64,
    /// The call ids the turn has used so far.
    pub ids: Vec<String>,
}

/// A tool call as the model made it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PausedCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

impl From<&AssembledCall> for PausedCall {
    fn from(c: &AssembledCall) -> Self {
        Self { id: c.id.clone(), name: c.name.clone(), arguments: c.arguments.clone() }
    }
}

impl From<PausedCall> for AssembledCall {
    fn from(c: PausedCall) -> Self {
        Self { id: c.id, name: c.name, arguments: c.arguments }
    }
}
