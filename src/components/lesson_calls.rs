//! The workspace's calls to the lesson API (`/api/lessons/…`, see
//! `server::lessons::routes`). Errors come back as the sentence to show. They are
//! made from the browser only: when a page is rendered on the server, no
//! event handler or effect runs, so nothing calls them there.

use serde::Serialize;

use crate::{
    chat::client::ClientError,
    lesson::Change,
    models::{ApplyRequest, DiscardRequest, RestoreRequest, ShownParts, ReviewSetting, RevisionReply, RevisionSummary, SaveReply, SaveRequest},
};

async fn call<T: serde::de::DeserializeOwned>(method: &str, url: &str, body: Option<&impl Serialize>) -> Result<T, String> {
    crate::chat::client::json(method, url, body).await.map_err(|e| e.message())
}

/// A call without a body.
const NO_BODY: Option<&()> = None;

/// A call answered with a `SaveReply`, read by its own reader (see
/// `SaveReply::from_json`).
async fn saving(method: &str, url: &str, body: Option<String>) -> Result<SaveReply, ClientError> {
    let text = crate::chat::client::answer_text(method, url, body).await?;
    SaveReply::from_json(&text).map_err(ClientError::Network)
}

/// Saves the teacher's XML on top of `base_revision`.
pub async fn save(id: &str, xml: String, base_revision: i64) -> Result<SaveReply, String> {
    let body = serde_json::to_string(&SaveRequest { xml, base_revision, merge: false }).unwrap_or_default();
    saving("PUT", &format!("/api/lessons/{id}/document"), Some(body)).await.map_err(|e| e.message())
}

/// Saves the editor's document, merged into anything saved since
/// `base_revision` (`SaveRequest::merge`). A network failure is kept apart
/// from a refusal: the editor tries it again.
pub async fn save_edits(id: &str, xml: String, base_revision: i64) -> Result<SaveReply, ClientError> {
    let body = serde_json::to_string(&SaveRequest { xml, base_revision, merge: true }).unwrap_or_default();
    saving("PUT", &format!("/api/lessons/{id}/document"), Some(body)).await
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
    let body = serde_json::to_string(&RestoreRequest { base_revision }).unwrap_or_default();
    saving("POST", &format!("/api/lessons/{id}/revisions/{number}/restore"), Some(body)).await.map_err(|e| e.message())
}

/// What changed from version `from` to version `to`.
pub async fn changes(id: &str, from: i64, to: i64) -> Result<Vec<Change>, String> {
    call::<ShownParts>("GET", &format!("/api/lessons/{id}/changes?from={from}&to={to}"), NO_BODY).await.map(|p| p.changes)
}

/// Takes back what version `number` changed. A refusal keeps the changes
/// that collide with later edits.
pub async fn undo(id: &str, number: i64) -> Result<SaveReply, ClientError> {
    saving("POST", &format!("/api/lessons/{id}/revisions/{number}/undo"), None).await
}

/// Renames the lesson.
pub async fn rename(id: &str, title: String) -> Result<(), String> {
    let _: serde::de::IgnoredAny = call("PATCH", &format!("/api/lessons/{id}"), Some(&crate::chat::message::TitleRequest { title })).await?;
    Ok(())
}

/// Sets how the assistant's edits reach the lesson.
pub async fn set_review(id: &str, mode: crate::models::EditMode) -> Result<(), String> {
    let _: serde::de::IgnoredAny = call("PUT", &format!("/api/lessons/{id}/review"), Some(&ReviewSetting::of(mode))).await?;
    Ok(())
}

/// A proposed edit as it stands: the lesson it would make, rendered (for
/// its preview), what it would change, and while it waits a fresh digest.
pub async fn proposal_now(id: &str) -> Result<ShownParts, String> {
    call::<ShownParts>("GET", &format!("/api/proposals/{id}"), NO_BODY).await
}

/// Applies a proposed edit, naming the digest shown with it. A refusal
/// keeps the changes that collide.
pub async fn apply_proposal(id: &str, digest: String) -> Result<SaveReply, ClientError> {
    let body = serde_json::to_string(&ApplyRequest { digest }).unwrap_or_default();
    saving("POST", &format!("/api/proposals/{id}/apply"), Some(body)).await
}

/// Discards a proposed edit, naming the digest shown with it, with the
/// teacher's reason if they gave one.
pub async fn discard_proposal(id: &str, reason: Option<String>, digest: String) -> Result<(), ClientError> {
    let reason = reason.unwrap_or_default();
    let _: serde::de::IgnoredAny = crate::chat::client::json("POST", &format!("/api/proposals/{id}/discard"), Some(&DiscardRequest { reason, digest })).await?;
    Ok(())
}
