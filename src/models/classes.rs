//! Classes as their pages show them: the teacher's classes, one class, a
//! lesson's results and one student's work; a student's classes and the
//! page a join link opens. Written by `server::classes`, read by the pages
//! in `components::classes`.

use serde::{Deserialize, Serialize};

use super::UserInfo;

/// A class as its teacher sees it in a list.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(sqlx::FromRow))]
#[serde(rename_all = "camelCase")]
pub struct ClassSummary {
    pub id: String,
    pub name: String,
    pub join_code: String,
    pub created_at: String,
    pub students: i64,
    pub lessons: i64,
}

/// A lesson of a class: whether students see it, and which version.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(sqlx::FromRow))]
#[serde(rename_all = "camelCase")]
pub struct ClassLesson {
    pub id: String,
    pub title: String,
    pub revision: i64,
    pub published_revision: Option<i64>,
}

/// A student of a class.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(sqlx::FromRow))]
#[serde(rename_all = "camelCase")]
pub struct ClassStudent {
    pub id: String,
    pub email: String,
    pub joined_at: String,
}

/// One class, whole.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClassDetail {
    pub id: String,
    pub name: String,
    pub join_code: String,
    pub lessons: Vec<ClassLesson>,
    pub students: Vec<ClassStudent>,
}

/// A class's page: the class, the teacher's lessons it could be given
/// (id and title), and the link students join with.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClassPage {
    pub class: ClassDetail,
    pub own_lessons: Vec<(String, String)>,
    pub join_link: String,
    /// The standards its lessons name, and how its students did on them.
    #[serde(default)]
    pub coverage: Vec<crate::models::Coverage>,
}

/// A class as a student sees it: its name and its published lessons.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StudentClass {
    pub id: String,
    pub name: String,
    pub lessons: Vec<StudentLessonSummary>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StudentLessonSummary {
    pub id: String,
    pub title: String,
}

/// "My classes": the student's classes, and the score of each lesson they
/// checked (lesson id → "3 of 4 right").
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StudentHome {
    pub classes: Vec<StudentClass>,
    pub scores: Vec<(String, String)>,
}

/// One student's line in a lesson's results.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResultRow {
    pub student_id: String,
    pub email: String,
    /// Items with an answer, of `total`.
    pub answered: i64,
    pub total: i64,
    pub right: Option<i64>,
    pub graded: Option<i64>,
    pub checked_at: Option<String>,
    /// No longer in a class of the teacher's that has the lesson (taken
    /// out, or the class deleted): their answers are kept.
    #[serde(default)]
    pub former: bool,
}

/// A lesson's results page.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LessonResults {
    pub lesson_id: String,
    pub title: String,
    pub rows: Vec<ResultRow>,
    /// The teacher's "Tell the assistant when students get answers wrong".
    pub tell_wrong_answers: bool,
    /// The lesson's open items (short answers, writing): (id, prompt).
    pub open_items: Vec<(String, String)>,
    /// Feedback the assistant drafted, waiting for the teacher.
    pub drafts: Vec<FeedbackDraft>,
    /// Students who answered and whose accounts were deleted since, with
    /// their answers (`server::ops::deletion`).
    #[serde(default)]
    pub deleted_students: i64,
}

/// Feedback on one student's open answer drafted by the assistant, for the
/// teacher to approve, edit then approve, or discard (`GET
/// /api/lessons/{id}/feedback`, and the Results page's review queue). Never
/// sent to a student.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FeedbackDraft {
    pub student_id: String,
    pub email: String,
    pub item_id: String,
    /// The question or task.
    pub prompt: String,
    /// What the student answered, as they have it now.
    pub answer: String,
    /// The student changed their answer after the draft was written.
    pub answer_changed: bool,
    pub feedback: String,
    pub points: Option<i64>,
    /// The most the item's rubric gives (none: no rubric, no points).
    pub max_points: Option<i64>,
}

/// One student's work on a lesson, for their teacher: the sheet as they
/// filled it in (rendered by the server, read only, with the key), the
/// score line, and their chats with the tutor.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StudentWork {
    pub lesson_id: String,
    pub title: String,
    pub email: String,
    pub sheet_html: String,
    pub score: String,
    pub chats: Vec<TutorChat>,
}

/// A chat of a student with the tutor, read only: what the student typed
/// as text, the tutor's replies rendered (inert markdown).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TutorChat {
    pub title: String,
    pub messages: Vec<TutorLine>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum TutorLine {
    Student(String),
    /// The tutor's reply as HTML (`chat::markdown::render`).
    Tutor(String),
}

/// What a join link opens: the class's name (none when the code no longer
/// works), and who is looking.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JoinView {
    pub code: String,
    pub class_name: Option<String>,
    pub user: Option<UserInfo>,
    /// School accounts a student may join with (`server::accounts::sso`).
    #[serde(default)]
    pub sso: Vec<crate::models::SsoButton>,
}
