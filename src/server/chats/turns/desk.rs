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

    fn propose(&self, _xml: String, _summary: String, _changes: Vec<crate::lesson::Change>) -> BoxFuture<'_, Result<String, SaveRejection>> {
        Box::pin(async { Err(SaveRejection::Unavailable) })
    }
}

pub struct DbDesk {
    pub db: Db,
    pub student_id: String,
    pub lesson_id: String,
    pub key_xml: String,
}

fn unavailable(e: impl std::fmt::Display) -> String {
    tracing::error!(error = %e, "a tutor's tool could not read the database");
    "That could not be read just now. Try again in a moment.".to_string()
}

impl StudentDesk for DbDesk {
    fn key_xml(&self) -> &str {
        &self.key_xml
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
