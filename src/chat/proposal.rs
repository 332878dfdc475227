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

/// How the teacher may decide a held call. Each tool that holds a call
/// says which of these it takes (`agent::tools`); a held edit takes both.
/// Changing an edit's arguments is not one: the teacher applies it and
/// changes the lesson itself, in the editor, or discards it and says why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecisionKind {
    /// `POST /api/proposals/{id}/apply`.
    Apply,
    /// `POST /api/proposals/{id}/discard`, with a reason if the teacher gives one.
    Discard,
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
    /// While it waits: the server's digest of what it would change, which a
    /// decision names (`server::lessons::shown`). It is good for a while
    /// (the time a paused reply waits); an older one is refused and the
    /// change is shown again with a new one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// While it waits: how it may be decided (the page offers both).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "hydrate", serde(skip_deserializing))]
    pub decisions: Vec<DecisionKind>,
}

impl ProposalMark {
    /// A proposal waiting for the teacher, with the digest a decision on it names.
    pub fn held(id: impl Into<String>, digest: Option<String>, decisions: Vec<DecisionKind>) -> Self {
        Self { id: id.into(), status: ProposalStatus::Pending, revision: None, reason: None, digest, decisions }
    }

    /// Where a proposal stands once decided (or replaced).
    pub fn decided(id: impl Into<String>, status: ProposalStatus, revision: Option<i64>, reason: Option<String>) -> Self {
        Self { id: id.into(), status, revision, reason, digest: None, decisions: Vec::new() }
    }
}

crate::wire_enum::wire_enum!(DecisionKind { Apply => "apply", Discard => "discard" });
crate::wire_enum::wire_enum!(ProposalStatus { Pending => "pending", Applied => "applied", Discarded => "discarded", Replaced => "replaced" });
