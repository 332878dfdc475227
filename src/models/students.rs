//! A lesson as it reaches students: where it stands with classes, and a
//! student's own view of it.

use serde::{Deserialize, Serialize};

/// Where a lesson stands with students, for its page: the version they
/// see (none: not published), the classes that have it, and the teacher's
/// other classes it could be handed to.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Publication {
    pub published: Option<i64>,
    pub classes: Vec<String>,
    pub others: Vec<(String, String)>,
    /// How much the tutor helps on it.
    #[serde(default)]
    pub tutor: super::TutorPolicy,
}

/// A published lesson as its student sees it (`GET /api/learn/lessons/{id}`
/// and the student's page, which reads it on the server only): the answer
/// sheet drawn by the server (inputs named by item and filled in; no keys
/// or notes), the sheet's version, the last check's score ("3 of 5 right")
/// and the answers themselves.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StudentLessonView {
    pub id: String,
    pub title: String,
    /// The published version shown.
    pub revision: i64,
    pub html: String,
    pub seen: i64,
    pub score: Option<String>,
    pub answers: std::collections::HashMap<String, String>,
    /// Feedback the teacher approved since the student last opened the
    /// lesson: "Your teacher left feedback on 2 of your answers."
    #[serde(default)]
    pub feedback_notice: Option<String>,
    /// How much the tutor helps on this lesson (its sentence is shown).
    #[serde(default)]
    pub tutor: super::TutorPolicy,
}
