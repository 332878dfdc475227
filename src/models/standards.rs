//! Standards frameworks and how a lesson or a class covers them, as the
//! School page, the lesson's Standards page and the API show them.

use serde::{Deserialize, Serialize};

/// One framework a school may tag lessons with.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Framework {
    pub id: String,
    pub title: String,
    pub creator: String,
    /// Its coded statements.
    pub items: i64,
    /// Loaded by whoever runs the server, for every school (the school's
    /// admin cannot remove it).
    pub shared: bool,
}

/// One standard found by a search.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StandardHit {
    pub code: String,
    pub statement: String,
    pub framework: String,
}

/// One standard a lesson (or a class's lessons) names, with what names it
/// and, once students have answered, how they did on those exercises.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Coverage {
    pub code: String,
    /// What it asks; empty when the code is no longer in any framework.
    pub statement: String,
    /// "The lesson" or "Exercise 2: Writing", prefixed with the lesson's
    /// title in a class's view.
    pub tagged_by: Vec<String>,
    /// Checked answers to the exercises that name it (a code on the lesson
    /// counts every exercise): right and marked in all.
    pub right: i64,
    pub marked: i64,
}

/// A lesson's Standards page: what it covers, and a search of the school's
/// frameworks to align it to one more.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LessonStandards {
    pub lesson_id: String,
    pub title: String,
    pub coverage: Vec<Coverage>,
    /// The school has at least one framework.
    pub has_frameworks: bool,
    /// What was searched for, and what was found.
    pub query: String,
    pub hits: Vec<StandardHit>,
}
