//! The workspace's calls to the lesson API (`/api/lessons/…`, see
//! `server::lesson_api`). Errors come back as the sentence to show. They are
//! made from the browser only: when a page is rendered on the server, no
//! event handler or effect runs, so nothing calls them there.

use serde::Serialize;

use crate::models::{RestoreRequest, RevisionReply, RevisionSummary, SaveReply, SaveRequest};

async fn call<T: serde::de::DeserializeOwned>(method: &str, url: &str, body: Option<&impl Serialize>) -> Result<T, String> {
    crate::chat::client::json(method, url, body).await.map_err(|e| e.message())
}

/// A call without a body.
const NO_BODY: Option<&()> = None;

/// Saves the teacher's XML on top of `base_revision`.
pub async fn save(id: &str, xml: String, base_revision: i64) -> Result<SaveReply, String> {
    call("PUT", &format!("/api/lessons/{id}/document"), Some(&SaveRequest { xml, base_revision })).await
}

/// Every version, newest first.
pub async fn revisions(id: &str) -> Result<Vec<RevisionSummary>, String> {
    call("GET", &format!("/api/lessons/{id}/revisions"), NO_BODY).await
}

/// One version with its document.
pub async fn revision(id: &str, number: i64) -> Result<RevisionReply, String> {
    call("GET", &format!("/api/lessons/{id}/revisions/{number}"), NO_BODY).await
}

/// Makes version `number` the current document again, as a new version.
pub async fn restore(id: &str, number: i64, base_revision: i64) -> Result<SaveReply, String> {
    call("POST", &format!("/api/lessons/{id}/revisions/{number}/restore"), Some(&RestoreRequest { base_revision })).await
}
