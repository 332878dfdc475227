//! Where an edit held for review stands, as its step in the chat shows it
//! (both targets). The proposal itself (the lesson it would make, the
//! revision it was made on) lives on the server; see `server::lessons::proposals`.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProposalStatus {
    /// Waiting for the teacher.
    Pending,
    /// The teacher applied it.
    Applied,
    /// The teacher discarded it.
    Discarded,
    /// A newer proposal for the same lesson took its place.
    Replaced,
}

impl ProposalStatus {
    /// A status as the database stores it (anything unknown: pending).
    pub fn from_str(s: &str) -> Self {
        Self::from_wire(s).unwrap_or(Self::Pending)
    }
}

/// A proposal as a step records it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProposalMark {
    pub id: String,
    pub status: ProposalStatus,
    /// The revision it was applied as.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<i64>,
    /// Why the teacher discarded it, when they said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl ProposalMark {
    pub fn pending(id: impl Into<String>) -> Self {
        Self { id: id.into(), status: ProposalStatus::Pending, revision: None, reason: None }
    }
}

crate::wire_enum::wire_enum!(ProposalStatus { Pending => "pending", Applied => "applied", Discarded => "discarded", Replaced => "replaced" });
