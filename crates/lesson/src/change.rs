//! One change between two versions of a lesson, worded for teachers. Shared by
//! the server, which finds the changes (`changes`), and the browser, which
//! only shows them: the list reaches the page already worded, so no diff code
//! enters the bundle.

use serde::{Deserialize, Serialize};

/// What happened to the part of the lesson a change is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChangeKind {
    Added,
    Removed,
    Edited,
    Moved,
}

/// One line of a change list, such as "Exercise 2 (Fill in the blanks),
/// blank 3: answer “ran” → “run”".
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    pub kind: ChangeKind,
    /// The id of the block (heading, paragraph, exercise…) the change is in,
    /// for the lesson view to highlight (a removed block's id is no longer in
    /// the lesson, so nothing is highlighted for it); none for the lesson's
    /// own title and language.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block: Option<String>,
    /// The change in a teacher's words.
    pub text: String,
}

crate::wire_enum!(ChangeKind { Added => "added", Removed => "removed", Edited => "edited", Moved => "moved" });
