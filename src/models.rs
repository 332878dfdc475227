//! Plain data shared by the server and the browser: what a page shows of a
//! teacher and their lessons. Database access for these lives in `server`.

use serde::{Deserialize, Serialize};

use crate::lesson::LessonHtml;

/// The signed-in teacher, as the pages see them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(sqlx::FromRow))]
pub struct UserInfo {
    pub id: String,
    pub email: String,
}

/// The body of every failed API call: a sentence for the teacher and a
/// stable code for programs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorReply {
    pub error: String,
    pub code: String,
}

/// One row of the lessons list.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(sqlx::FromRow))]
pub struct LessonSummary {
    pub id: String,
    pub title: String,
    pub updated_at: String,
}

/// A lesson with its current document.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(sqlx::FromRow))]
pub struct Lesson {
    pub id: String,
    pub title: String,
    pub document_xml: String,
    /// Number of the latest revision; saving on top of an older one is a conflict.
    pub revision: i64,
    pub updated_at: String,
}

/// Who wrote a revision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Author {
    Teacher,
    Agent,
}

impl Author {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Teacher => "teacher",
            Self::Agent => "agent",
        }
    }

    pub fn from_str(s: &str) -> Self {
        if s == "agent" { Self::Agent } else { Self::Teacher }
    }
}

/// One saved version of a lesson, without its document.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RevisionSummary {
    pub number: i64,
    pub author: Author,
    pub summary: String,
    pub created_at: String,
}

/// One saved version of a lesson, with its document.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Revision {
    pub number: i64,
    pub author: Author,
    pub summary: String,
    pub created_at: String,
    pub document_xml: String,
}

/// The lesson API's answer to a save or a restore: the outcome, and the new
/// document rendered when one was stored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SaveReply {
    pub outcome: SaveOutcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub html: Option<LessonHtml>,
}

impl SaveReply {
    pub fn new(outcome: SaveOutcome) -> Self {
        let html = match &outcome {
            SaveOutcome::Saved { document_xml, .. } => Some(crate::lesson::render_both(document_xml)),
            _ => None,
        };
        Self { outcome, html }
    }
}

/// The body of `PUT /api/lessons/{id}/document`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SaveRequest {
    pub xml: String,
    /// The version the teacher's text was started from.
    pub base_revision: i64,
}

/// The body of `POST /api/lessons/{id}/revisions/{n}/restore`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RestoreRequest {
    /// The version the page shows as current.
    pub base_revision: i64,
}

/// The lesson API's answer when a version is opened: it, and its document rendered.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RevisionReply {
    pub revision: Revision,
    pub html: LessonHtml,
}

/// What became of a save. Invalid documents and conflicts are ordinary
/// outcomes the page shows, not failures.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum SaveOutcome {
    /// Stored as revision `revision`; `document_xml` is the tidied document with ids.
    Saved { revision: i64, document_xml: String },
    /// Nothing was stored; these are the problems to fix.
    Invalid { errors: Vec<crate::lesson::LessonError> },
    /// Nothing was stored: someone saved revision `current` since the base was loaded.
    Conflict { current: i64 },
}
