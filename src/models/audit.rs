//! The school's audit log of what the AI did, as the admin's page and its
//! export see it (`server::audit` writes and reads it). Nothing here holds
//! the words of a message: who, which lesson, which model, how many tokens,
//! which tools ran and what each changed, refusals and flags by category.

use serde::{Deserialize, Serialize};

/// What an entry records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AuditAction {
    /// A reply of the assistant or the tutor, with the tools it ran.
    Reply,
    /// Something refused before or during a reply: a tutor that is off, a
    /// tool outside the agent's set.
    Refusal,
    /// A student's conversation raised a flag (its category only).
    Flag,
}

crate::wire_enum::wire_enum!(AuditAction { Reply => "reply", Refusal => "refusal", Flag => "flag" });

/// Who an entry's reply was for, and who started it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AuditActor {
    Teacher,
    Student,
    /// Started by Margin for a teacher (students' wrong answers, a core's
    /// change carried into a version, a source added).
    Automatic,
}

crate::wire_enum::wire_enum!(AuditActor { Teacher => "teacher", Student => "student", Automatic => "automatic" });

impl AuditActor {
    pub fn label(self) -> &'static str {
        match self {
            Self::Teacher => "Teacher",
            Self::Student => "Student",
            Self::Automatic => "Automatic",
        }
    }
}

/// One tool a reply ran, and what it changed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditTool {
    pub tool: String,
    /// "success", "error" or "proposed" (held for the teacher's review).
    pub status: String,
    /// The revision an edit saved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<i64>,
    /// An edit held for review: its id…
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposal: Option<String>,
    /// …and the teacher's decision as it stands ("pending", "applied",
    /// "discarded", "replaced"; "gone" with its lesson). Filled when read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<String>,
    /// The revision an applied proposal became.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applied_revision: Option<i64>,
    /// Refused: the tool is not one this agent may run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub refused: bool,
}

/// One entry of the log.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditEntry {
    pub id: String,
    /// When, in UTC (RFC 3339).
    pub at: String,
    pub action: AuditAction,
    pub actor: AuditActor,
    /// The account it was for; `None` once that account was deleted.
    pub person_id: Option<String>,
    pub person_email: Option<String>,
    pub lesson_id: Option<String>,
    pub lesson_title: Option<String>,
    pub turn_id: Option<String>,
    pub model: String,
    pub tokens: i64,
    /// How it ended ("complete", "cancelled", "error"), or the refusal's or
    /// the flag's word.
    pub outcome: String,
    pub tools: Vec<AuditTool>,
}

/// What the admin narrows the log to; empty fields do not narrow.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditFilter {
    /// An account's email (or id).
    #[serde(default)]
    pub person: String,
    /// A lesson's id.
    #[serde(default)]
    pub lesson: String,
    /// The first day shown (YYYY-MM-DD).
    #[serde(default)]
    pub from: String,
    /// The last day shown (YYYY-MM-DD).
    #[serde(default)]
    pub to: String,
}

/// The Audit page: the entries under its filter and what it offers to
/// narrow them by.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditView {
    pub entries: Vec<AuditEntry>,
    /// More entries matched than the page shows (the export has them all).
    pub more: bool,
    /// The lessons named in the log: (id, title).
    pub lessons: Vec<(String, String)>,
    /// The people named in the log, by email.
    pub people: Vec<String>,
    /// How long entries are kept, in days.
    pub keep_days: i64,
}
