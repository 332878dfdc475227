//! Plain data shared by the server and the browser: what a page shows of a
//! teacher and their lessons. Database access for these lives in `server`.

use serde::{Deserialize, Serialize};

/// The signed-in teacher, as the pages see them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserInfo {
    pub id: String,
    pub email: String,
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
