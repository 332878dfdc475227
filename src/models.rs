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
    /// The school the account belongs to (decided on the server, never by
    /// what a client sends).
    #[serde(default)]
    pub school_id: String,
    /// `admin` or `teacher` in that school.
    #[serde(default)]
    pub role: String,
}

/// An account's role in its school.
pub const ROLE_ADMIN: &str = "admin";
pub const ROLE_TEACHER: &str = "teacher";
/// An account made through a class's join link or code: it answers the
/// lessons published to its classes and talks to the tutor, nothing else.
pub const ROLE_STUDENT: &str = "student";

impl UserInfo {
    pub fn is_admin(&self) -> bool {
        self.role == ROLE_ADMIN
    }

    pub fn is_student(&self) -> bool {
        self.role == ROLE_STUDENT
    }
}

/// The body of every failed API call: a sentence for the teacher and a
/// stable code for programs; for an edit that collides with later changes
/// (`conflict`), the changes of that edit that collide.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorReply {
    pub error: String,
    pub code: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conflicts: Vec<crate::lesson::Change>,
}

/// One row of the lessons list.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(sqlx::FromRow))]
pub struct LessonSummary {
    pub id: String,
    pub title: String,
    pub updated_at: String,
}

/// One page of the lessons list, and how many lessons match in all.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LessonList {
    pub lessons: Vec<LessonSummary>,
    pub total: i64,
}

/// Why a lesson file could not be imported: its name and every problem,
/// each with its line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImportReport {
    pub file: String,
    pub problems: Vec<String>,
}

/// A lesson in the trash, and when it was put there.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(sqlx::FromRow))]
#[serde(rename_all = "camelCase")]
pub struct TrashedLesson {
    pub id: String,
    pub title: String,
    pub deleted_at: String,
}

/// What changed in a lesson, as `GET /api/lessons/{id}/events` tells every
/// page open on it (in any tab, served by any instance). The SSE event's name
/// is the kind; its data is this, as JSON.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum LessonEvent {
    /// A version was saved (by the teacher anywhere, or by the agent): the
    /// lesson's revision is now this.
    Revision { revision: i64 },
    /// A reply started (`running`) or ended in one of the lesson's chats;
    /// `automatic`: the server started it, for something that happened (the
    /// sidebar opens that chat for it).
    #[serde(rename_all = "camelCase")]
    Turn {
        chat_id: String,
        turn_id: String,
        running: bool,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        automatic: bool,
    },
    /// A chat was created, renamed or deleted.
    Chats,
    /// The lesson was renamed, or moved to the trash.
    Lesson,
}

impl LessonEvent {
    /// The SSE event name.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Revision { .. } => "revision",
            Self::Turn { .. } => "turn",
            Self::Chats => "chats",
            Self::Lesson => "lesson",
        }
    }
}

/// Where a lesson stands with students, for its page: the version they
/// see (none: not published), the classes that have it, and the teacher's
/// other classes it could be handed to.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Publication {
    pub published: Option<i64>,
    pub classes: Vec<String>,
    pub others: Vec<(String, String)>,
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
    #[cfg_attr(feature = "hydrate", serde(skip_deserializing))]
    pub updated_at: String,
    /// "Review edits before applying": the agent's edits wait for the teacher.
    #[serde(default)]
    #[cfg_attr(feature = "ssr", sqlx(try_from = "crate::server::db::Flag"))]
    pub review_edits: bool,
}

/// Who wrote a revision.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Author {
    #[default]
    Teacher,
    Agent,
}

impl Author {
    /// An author as the database stores it (anything unknown: the teacher).
    pub fn from_str(s: &str) -> Self {
        Self::from_wire(s).unwrap_or(Self::Teacher)
    }
}

/// One saved version of a lesson, without its document.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RevisionSummary {
    pub number: i64,
    pub author: Author,
    pub summary: String,
    pub created_at: String,
    /// An edit of the agent's that the teacher reviewed and applied.
    #[serde(default)]
    pub reviewed: bool,
}

/// One saved version of a lesson, with its document.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Revision {
    pub number: i64,
    // A version opened in the browser shows its number and document (the
    // list says the rest): it skips these.
    #[cfg_attr(feature = "hydrate", serde(skip_deserializing))]
    pub author: Author,
    #[cfg_attr(feature = "hydrate", serde(skip_deserializing))]
    pub summary: String,
    #[cfg_attr(feature = "hydrate", serde(skip_deserializing))]
    pub created_at: String,
    pub document_xml: String,
}

/// The lesson API's answer to every write of a lesson (a save, a restore,
/// an applied proposal, an undo): the outcome, the new document rendered
/// when one was stored, and for an applied proposal or an undo what it
/// changed (the page marks those blocks).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SaveReply {
    pub outcome: SaveOutcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub html: Option<LessonHtml>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<crate::lesson::Change>,
}

impl SaveReply {
    /// The reply read as the browser reads it: `html` and `changes` with
    /// the reader the browser has for them anyway (`ShownParts`), the
    /// outcome by hand (`chat::json_fields`). A derived reader for the
    /// outcome and its problems was about 11 KB of the bundle. The server
    /// writes `outcome` first; a test checks this against serde's reader.
    pub fn from_json(json: &str) -> Result<Self, String> {
        use crate::chat::json_fields::{array_objects, int_field, string_field};
        let unreadable = || "The server's answer could not be read.".to_string();
        let parts: ShownParts = serde_json::from_str(json).map_err(|_| unreadable())?;
        let kind = json.strip_prefix("{\"outcome\":{\"").and_then(|r| r.split('"').next()).ok_or_else(unreadable)?;
        let outcome = match kind {
            "Saved" => SaveOutcome::Saved {
                revision: int_field(json, "revision").ok_or_else(unreadable)?,
                document_xml: string_field(json, "document_xml").ok_or_else(unreadable)?,
            },
            "Conflict" => SaveOutcome::Conflict { current: int_field(json, "current").ok_or_else(unreadable)? },
            "Invalid" => SaveOutcome::Invalid {
                errors: array_objects(json, "errors")
                    .into_iter()
                    .map(|e| crate::lesson::LessonError {
                        line: int_field(e, "line").unwrap_or(0) as u32,
                        column: int_field(e, "column").unwrap_or(0) as u32,
                        path: string_field(e, "path").unwrap_or_default(),
                        message: string_field(e, "message").unwrap_or_default(),
                    })
                    .collect(),
            },
            _ => return Err(unreadable()),
        };
        Ok(Self { outcome, html: parts.html, changes: parts.changes })
    }

    pub fn new(outcome: SaveOutcome) -> Self {
        let html = match &outcome {
            SaveOutcome::Saved { document_xml, .. } => Some(crate::lesson::render_both(document_xml)),
            _ => None,
        };
        Self { outcome, html, changes: Vec::new() }
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

/// The body of `PUT /api/lessons/{id}/review` and its answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReviewSetting {
    pub review_edits: bool,
}

/// A proposed edit, as `GET /api/proposals/{id}` answers it: what it would
/// change and the lesson it would make, rendered for a preview.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProposalReply {
    pub id: String,
    pub lesson_id: String,
    pub status: crate::chat::proposal::ProposalStatus,
    pub summary: String,
    pub base_revision: i64,
    pub changes: Vec<crate::lesson::Change>,
    pub html: LessonHtml,
}

/// What the browser reads of the answers it only shows a part of: a
/// proposal's preview (`ProposalReply`: its `html`) and a comparison of two
/// versions (`ChangesReply`: its `changes`). One small type for both: each
/// type read is a deserialiser compiled into the browser bundle.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShownParts {
    #[serde(default)]
    pub html: Option<LessonHtml>,
    #[serde(default)]
    pub changes: Vec<crate::lesson::Change>,
}

/// The body of `POST /api/proposals/{id}/discard`: why, if the teacher says
/// (empty or left out: no reason).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiscardRequest {
    #[serde(default)]
    pub reason: String,
}

/// The answer of `GET /api/lessons/{id}/changes`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangesReply {
    pub from: i64,
    pub to: i64,
    pub changes: Vec<crate::lesson::Change>,
}

crate::wire_enum::wire_enum!(Author { Teacher => "teacher", Agent => "agent" });

/// A school's name and its own allowance (`None`: the server's).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[cfg_attr(feature = "ssr", derive(sqlx::FromRow))]
#[serde(rename_all = "camelCase")]
pub struct School {
    pub id: String,
    pub name: String,
    pub monthly_tokens: Option<i64>,
    /// What each teacher may use a month, set by the admin (`None`: no share of their own).
    #[serde(default)]
    pub teacher_share: Option<i64>,
    /// What each student may use a month through the tutor.
    #[serde(default)]
    pub student_share: Option<i64>,
}

/// A member of a school, with what they used this month.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[cfg_attr(feature = "ssr", derive(sqlx::FromRow))]
#[serde(rename_all = "camelCase")]
pub struct Member {
    pub id: String,
    pub email: String,
    pub role: String,
    pub created_at: String,
    pub tokens_this_month: i64,
    /// What the account keeps (lessons' versions, material), in bytes.
    #[serde(default)]
    pub stored_bytes: i64,
}

/// An invitation as the school page lists it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[cfg_attr(feature = "ssr", derive(sqlx::FromRow))]
#[serde(rename_all = "camelCase")]
pub struct Invite {
    pub id: String,
    pub created_at: String,
    pub expires_at: String,
}

/// Everything the School page shows its admin.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct SchoolOverview {
    pub school: School,
    pub usage: crate::chat::message::UsageSummary,
    /// The server's allowance for schools without their own (`None`: unlimited).
    pub server_allowance: Option<i64>,
    /// The viewer runs the server (`server::operators`): only they add
    /// credits or raise the allowance above the server's.
    #[serde(default)]
    pub operator: bool,
    /// What a teacher's account may keep, in bytes (`None`: no limit).
    #[serde(default)]
    pub storage_limit: Option<i64>,
    pub members: Vec<Member>,
    pub invites: Vec<Invite>,
}

/// "12.4 MB" for a number of bytes, as the School page shows it.
pub fn megabytes(bytes: i64) -> String {
    let mb = bytes.max(0) as f64 / (1024.0 * 1024.0);
    if mb < 10.0 {
        format!("{mb:.1} MB")
    } else {
        format!("{} MB", mb.round() as i64)
    }
}

/// The file endings "Add material" accepts (the page's file field, and the
/// server's reader, which refuses any other).
pub const MATERIAL_ENDINGS: &str = ".txt,.md,.markdown,.html,.htm,.docx,.pdf";

/// A lesson's material as its page shows it: the sources, and whether the
/// teacher lets the assistant react when they add some.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Material {
    pub sources: Vec<SourceSummary>,
    pub react_to_events: bool,
    /// Why the teacher's last "Add material" was refused, found on the
    /// server by the token the page's address carries.
    #[serde(default)]
    pub refused: Option<String>,
}

/// One source of a lesson: material the teacher added, as the assistant and
/// the lesson page list it (its text is read a page at a time).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(sqlx::FromRow))]
#[serde(rename_all = "camelCase")]
pub struct SourceSummary {
    pub id: String,
    /// The file's name as it was added.
    pub name: String,
    /// The file's size in bytes.
    pub size: i64,
    /// The length of its text, in characters.
    pub chars: i64,
    /// Its first line or two.
    pub opening: String,
}

#[cfg(test)]
mod save_reply_tests {
    use super::*;
    use crate::lesson::{Change, LessonError};

    #[test]
    fn the_browsers_reader_gives_what_the_server_wrote() {
        let mut saved = SaveReply::new(SaveOutcome::Saved { revision: 12, document_xml: "<lesson>\n  <p id=\"b1\">A \"quote\" } ]</p>\n</lesson>".into() });
        saved.changes = serde_json::from_str::<Vec<Change>>(r#"[{"kind":"edited","block":"b1","text":"Paragraph: “A” → “B”"}]"#).unwrap();
        let invalid = SaveReply::new(SaveOutcome::Invalid {
            errors: vec![LessonError::new(3, 7, "lesson > p", "A } brace and a \"quote\" ]"), LessonError::new(0, 0, "", "Whole document")],
        });
        let none = SaveReply::new(SaveOutcome::Invalid { errors: Vec::new() });
        let conflict = SaveReply::new(SaveOutcome::Conflict { current: 40 });
        for reply in [saved, invalid, none, conflict] {
            let json = serde_json::to_string(&reply).unwrap();
            assert_eq!(SaveReply::from_json(&json).as_ref(), Ok(&reply), "{json}");
        }
        assert!(SaveReply::from_json(r#"{"outcome":{"Lost":{}}}"#).is_err());
        assert!(SaveReply::from_json("null").is_err());
    }
}

#[cfg(test)]
mod storage_tests {
    #[test]
    fn sizes_read_as_megabytes() {
        assert_eq!(super::megabytes(0), "0.0 MB");
        assert_eq!(super::megabytes(1_300_000), "1.2 MB");
        assert_eq!(super::megabytes(500 * 1024 * 1024), "500 MB");
    }
}
