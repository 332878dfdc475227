//! The lesson as the agent edits it: every successful edit becomes a revision
//! by the agent at once, on top of the revision the turn last saw. Rejections
//! are said as `SaveRejection`s; the agent's tool words them for the model.

use std::sync::Mutex;

use futures::future::BoxFuture;
use sqlx::SqlitePool;

use super::gate::Stored;
use crate::{
    agent::tools::{DocumentStore, SaveRejection},
    models::{Author, SaveOutcome},
    server::lessons,
};

pub struct DbDocument {
    db: SqlitePool,
    owner_id: String,
    lesson_id: String,
    /// The document the turn works on, and its revision.
    state: Mutex<(String, i64)>,
    stored: Stored,
}

impl DbDocument {
    pub fn new(db: SqlitePool, owner_id: String, lesson_id: String, document: (String, i64), stored: Stored) -> Self {
        Self { db, owner_id, lesson_id, state: Mutex::new(document), stored }
    }

    fn set(&self, xml: String, revision: i64) {
        *self.state.lock().unwrap_or_else(|p| p.into_inner()) = (xml, revision);
    }
}

impl DocumentStore for DbDocument {
    fn current(&self) -> String {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).0.clone()
    }

    fn save(&self, xml: String, summary: String) -> BoxFuture<'_, Result<i64, SaveRejection>> {
        Box::pin(async move {
            if !self.stored.wait().await {
                return Err(SaveRejection::Unavailable);
            }
            let base = self.state.lock().unwrap_or_else(|p| p.into_inner()).1;
            let saved = lessons::save_document(&self.db, &self.owner_id, &self.lesson_id, &xml, base, Author::Agent, &summary).await;
            match saved {
                Ok(SaveOutcome::Saved { revision, document_xml }) => {
                    self.set(document_xml, revision);
                    Ok(revision)
                }
                Ok(SaveOutcome::Conflict { .. }) => {
                    let latest = lessons::get_owned(&self.db, &self.owner_id, &self.lesson_id).await.map_err(|e| {
                        tracing::error!(error = ?e, "could not read the lesson after a conflict");
                        SaveRejection::Unavailable
                    })?;
                    self.set(latest.document_xml.clone(), latest.revision);
                    Err(SaveRejection::Conflict { revision: latest.revision, current: latest.document_xml })
                }
                Ok(SaveOutcome::Invalid { errors }) => Err(SaveRejection::Invalid(errors)),
                Err(e) => {
                    tracing::error!(error = ?e, "could not store the agent's edit");
                    Err(SaveRejection::Unavailable)
                }
            }
        })
    }
}
