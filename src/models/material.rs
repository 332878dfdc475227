//! A lesson's material (the teacher's sources) as its page shows it.

use serde::{Deserialize, Serialize};

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
