//! Lessons as pages and the JSON API see them: the list, the trash, a
//! lesson and its versions, saves and their outcomes, proposals, and what
//! listeners hear when a lesson changes.

use serde::{Deserialize, Serialize};

use crate::lesson::LessonHtml;

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
/// each with its line. Or, when `made` names the lesson it became (a quiz
/// package brought in as far as Margin has its kinds of question), what
/// could not be brought in.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImportReport {
    pub file: String,
    pub problems: Vec<String>,
    /// The lesson made, as (id, title).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub made: Option<(String, String)>,
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
    /// How the assistant's edits reach the lesson (`review_edits` is `Every`).
    #[serde(default)]
    #[cfg_attr(feature = "ssr", sqlx(try_from = "String"))]
    pub edit_mode: EditMode,
}

/// How the assistant's edits reach a lesson, the teacher's choice per lesson.
/// Whatever it is, an edit that removes an exercise or much of the lesson is
/// held for review (the guard in `edit_document`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EditMode {
    /// Edits land as they come; one held by the guard waits for later
    /// while the reply goes on.
    Auto,
    /// Edits land as they come; one held by the guard pauses the reply
    /// until the teacher decides.
    #[default]
    Destructive,
    /// Every edit is held, and pauses the reply until the teacher decides.
    Every,
}

impl From<String> for EditMode {
    /// As the database keeps it (anything unknown: the default).
    fn from(s: String) -> Self {
        Self::from_wire(&s).unwrap_or_default()
    }
}

crate::wire_enum::wire_enum!(EditMode { Auto => "auto", Destructive => "destructive", Every => "every" });

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
    /// Who made it (saved it, or whose chat the assistant's edit came
    /// from), when it was not the reader: a colleague who edits the lesson
    /// too, or its owner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
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
    /// outcome and its problems was about 11 KB of the bundle. Field order
    /// does not matter; a test checks this against serde's writer.
    pub fn from_json(json: &str) -> Result<Self, String> {
        use crate::chat::json_fields::{array_objects, int_field, string_field};
        let unreadable = || "The server's answer could not be read.".to_string();
        let parts: ShownParts = serde_json::from_str(json).map_err(|_| unreadable())?;
        // Wherever the object puts it: the outcome is the one object whose
        // key is a variant's name (no lesson text can hold `{"Saved":{`
        // unescaped; a quote in a string is written `\"`).
        let kind = ["Saved", "Conflict", "Invalid"].into_iter().find(|k| json.contains(&format!("\"outcome\":{{\"{k}\":"))).ok_or_else(unreadable)?;
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
    /// The lesson editor's saves: when the lesson moved on since
    /// `base_revision`, the teacher's changes are merged into it block by
    /// block, and only a block changed on both sides is a conflict. The XML
    /// tab leaves it off: its text is saved as written, or not at all.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub merge: bool,
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
    /// The older form: on is `Every`, off is `Destructive`.
    #[serde(default)]
    pub review_edits: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edit_mode: Option<EditMode>,
}

impl ReviewSetting {
    /// The mode asked for.
    pub fn mode(&self) -> EditMode {
        self.edit_mode.unwrap_or(if self.review_edits { EditMode::Every } else { EditMode::Destructive })
    }

    pub fn of(mode: EditMode) -> Self {
        Self { review_edits: mode == EditMode::Every, edit_mode: Some(mode) }
    }
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
    /// While it waits: a fresh digest, which a decision on it names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
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
    /// A proposal's fresh digest, while it waits.
    #[serde(default)]
    pub digest: Option<String>,
}

/// The body of `POST /api/proposals/{id}/discard`: why, if the teacher says
/// (empty or left out: no reason).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiscardRequest {
    #[serde(default)]
    pub reason: String,
    /// The digest the teacher was shown with the change.
    #[serde(default)]
    pub digest: String,
}

/// The body of `POST /api/proposals/{id}/apply`: the digest the teacher was
/// shown with the change.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApplyRequest {
    #[serde(default)]
    pub digest: String,
}

/// The answer of `GET /api/lessons/{id}/changes`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangesReply {
    pub from: i64,
    pub to: i64,
    pub changes: Vec<crate::lesson::Change>,
}

crate::wire_enum::wire_enum!(Author { Teacher => "teacher", Agent => "agent" });

#[cfg(test)]
mod tests {
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
        // The fields in another order read the same.
        let moved = r#"{"html":null,"changes":[],"outcome":{"Conflict":{"current":7}}}"#;
        assert_eq!(SaveReply::from_json(moved), Ok(SaveReply::new(SaveOutcome::Conflict { current: 7 })));
        assert!(SaveReply::from_json(r#"{"outcome":{"Lost":{}}}"#).is_err());
        assert!(SaveReply::from_json("null").is_err());
    }
}

/// One version of a lesson, as its core's Versions page lists it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VersionSummary {
    pub id: String,
    pub title: String,
    /// "grade 4", "English learners", "Spanish".
    pub label: String,
    /// Its measured reading level ("grade 4.2"), when it can be measured.
    pub level: Option<String>,
    /// The assistant's changes waiting for the teacher in it (those carried
    /// from the core among them).
    #[serde(default)]
    pub waiting: i64,
}

/// A lesson's Versions page: the versions made of it, or, for a version,
/// its core.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LessonVersions {
    pub lesson_id: String,
    pub title: String,
    /// This lesson's own measured level.
    pub level: Option<String>,
    /// (id, title, this version's label) when this lesson is a version.
    pub core: Option<(String, String, String)>,
    pub versions: Vec<VersionSummary>,
}

/// Grades a lesson may be shared under: kindergarten, then 1 to 12.
pub const SHARE_GRADES: [&str; 13] = ["K", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12"];

/// A lesson shared with the school, as the School library lists it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SharedLesson {
    pub id: String,
    pub title: String,
    /// What the teacher said when sharing ("" when they said nothing).
    pub subject: String,
    pub grade: String,
    /// The teacher who shared it (their email: colleagues know each other by it).
    pub teacher: String,
    pub shared_at: String,
    /// The reader's own.
    pub mine: bool,
}

/// The School library: the lessons the school's teachers share, with the
/// subjects and grades they were shared under, for its filters.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SchoolLibrary {
    pub lessons: Vec<SharedLesson>,
    pub subjects: Vec<String>,
    pub grades: Vec<String>,
}

/// A shared lesson opened to read, drawn for both audiences (colleagues
/// read the teacher's view, answers and notes included).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SharedLessonView {
    pub lesson: SharedLesson,
    pub html: crate::lesson::LessonHtml,
}

/// Whether one of the teacher's lessons is shared with their school.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Sharing {
    pub lesson_id: String,
    pub title: String,
    pub shared: bool,
    pub subject: String,
    pub grade: String,
    /// Colleagues who edit the lesson with its owner.
    #[serde(default)]
    pub editors: Vec<Editor>,
}

/// A colleague who edits a lesson with its owner.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Editor {
    pub user_id: String,
    pub email: String,
}

/// A colleague's lesson the reader was invited to edit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CoEditedLesson {
    pub id: String,
    pub title: String,
    /// The owner's email.
    pub owner: String,
    pub updated_at: String,
}
