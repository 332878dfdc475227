//! A student's turn: the lesson as the tutor reads it (the published
//! version without keys or notes, and no way to save anything), and the
//! student's desk behind the tutor's tools (their classes' lessons, their
//! saved answers, the key kept on this side).

use futures::future::BoxFuture;

use crate::{
    agent::tools::{DocumentStore, SaveRejection, StudentDesk},
    lesson::{self, answers},
    server::{classes, db::Db},
};

/// The published lesson, as the tutor's prompt shows it. It cannot be
/// saved: the tutor has no tool that writes, and this store refuses anyway.
pub struct StudentDocument {
    shown: String,
}

impl StudentDocument {
    /// The students' version of `key_xml` (the published lesson whole).
    pub fn new(key_xml: &str) -> Self {
        let shown = lesson::parse(key_xml).map(|r| answers::for_students(&r).to_xml()).unwrap_or_default();
        Self { shown }
    }
}

impl DocumentStore for StudentDocument {
    fn current(&self) -> String {
        self.shown.clone()
    }

    fn save(&self, _xml: String, _summary: String) -> BoxFuture<'_, Result<i64, SaveRejection>> {
        Box::pin(async { Err(SaveRejection::Unavailable) })
    }

    fn reviews_edits(&self) -> bool {
        true
    }

    fn propose(&self, _xml: String, _summary: String, _changes: Vec<crate::lesson::Change>) -> BoxFuture<'_, Result<crate::agent::tools::Proposed, SaveRejection>> {
        Box::pin(async { Err(SaveRejection::Unavailable) })
    }
}

pub struct DbDesk {
    pub db: Db,
    pub student_id: String,
    pub lesson_id: String,
    pub key_xml: String,
    /// The student's last check of this lesson, as the tutor is told it.
    pub last_check: Option<String>,
}

impl DbDesk {
    /// `student_id`'s desk for `lesson_id`, with their last check read (a
    /// failure to read it is logged: the tutor answers without it).
    pub async fn open(db: Db, student_id: String, lesson_id: String, key_xml: String) -> Self {
        let last_check = match classes::sheets::load(&db, &lesson_id, &student_id).await {
            Ok(sheet) => last_check(&sheet, &classes::sheets::items_of(&key_xml)),
            Err(e) => {
                tracing::warn!(error = %e, "a student's last check could not be read for their tutor");
                None
            }
        };
        Self { db, student_id, lesson_id, key_xml, last_check }
    }
}

/// The most items marked wrong the tutor is told of, and the longest
/// answer quoted.
const WRONG_TOLD: usize = 12;
const ANSWER_QUOTED: usize = 300;

/// What the tutor is told of the student's last check: the score, and each
/// item marked wrong with the student's own answer (never the key, which
/// stays on this side). `None` before a first check.
fn last_check(sheet: &classes::sheets::Sheet, items: &[answers::Item]) -> Option<String> {
    sheet.checked_at.as_ref()?;
    let wrong: Vec<String> = items
        .iter()
        .filter(|i| sheet.marks.get(&i.id) == Some(&false))
        .take(WRONG_TOLD)
        .map(|i| {
            let said: String = sheet.answers.get(&i.id).map(|a| a.chars().take(ANSWER_QUOTED).collect()).unwrap_or_default();
            format!("- {} {}: they answered {}", i.kind_word(), i.id, serde_json::Value::String(said))
        })
        .collect();
    let score = format!("{} of {} marked right.", sheet.right.unwrap_or(0), sheet.graded.unwrap_or(0));
    Some(if wrong.is_empty() { format!("{score} None marked wrong.") } else { format!("{score} Marked wrong:\n{}", wrong.join("\n")) })
}

fn unavailable(e: impl std::fmt::Display) -> String {
    tracing::error!(error = %e, "a tutor's tool could not read the database");
    "That could not be read just now. Try again in a moment.".to_string()
}

impl StudentDesk for DbDesk {
    fn key_xml(&self) -> &str {
        &self.key_xml
    }

    fn last_check(&self) -> Option<&str> {
        self.last_check.as_deref()
    }

    fn lessons(&self) -> BoxFuture<'_, Result<Vec<(String, String)>, String>> {
        Box::pin(async move {
            let classes = classes::student_classes(&self.db, &self.student_id).await.map_err(unavailable)?;
            let mut out: Vec<(String, String)> = Vec::new();
            for l in classes.into_iter().flat_map(|c| c.lessons) {
                if !out.iter().any(|(id, _)| *id == l.id) {
                    out.push((l.id, l.title));
                }
            }
            Ok(out)
        })
    }

    fn lesson(&self, id: &str) -> BoxFuture<'_, Result<Option<(String, String)>, String>> {
        let id = id.to_string();
        Box::pin(async move {
            match classes::student_lesson(&self.db, &self.student_id, &id).await {
                Ok(l) => Ok(Some((l.title, l.xml))),
                Err(crate::server::error::AppError::NotFound) => Ok(None),
                Err(e) => Err(unavailable(e)),
            }
        })
    }

    fn saved_answer(&self, item: &str) -> BoxFuture<'_, Result<Option<String>, String>> {
        let item = item.to_string();
        Box::pin(async move {
            let sheet = classes::sheets::load(&self.db, &self.lesson_id, &self.student_id).await.map_err(unavailable)?;
            Ok(sheet.answers.get(&item).cloned())
        })
    }
}
