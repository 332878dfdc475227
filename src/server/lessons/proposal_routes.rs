//! Proposed edits: open one (with the lesson it would make, for a preview),
//! apply it, or discard it. JSON in and out, errors in the API's one shape; a
//! proposal of another teacher's is not found, one already decided is a
//! conflict, and one whose changes collide with later edits is a conflict
//! that names the colliding changes. Apply and Discard name the digest the
//! teacher was shown with the change (`lessons::shown`): without one the
//! request is refused, and one not given for this change as it stands, or
//! given too long ago, is a conflict; nothing is decided then.

use axum::{
    extract::State,
    routing::{get, post},
    Json, Router,
};

use crate::server::{
    accounts::current_user::CurrentUser,
    bus,
    error::Result,
    http::extractors::{ApiJson, ApiPath},
    lessons::events,
    lessons::proposals,
    state::AppState,
};
use crate::{
    chat::proposal::ProposalStatus,
    models::{ApplyRequest, DiscardRequest, ProposalReply, SaveReply},
};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/proposals/{id}", get(open))
        .route("/api/proposals/{id}/apply", post(apply))
        .route("/api/proposals/{id}/discard", post(discard))
}

async fn open(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath(id): ApiPath<String>) -> Result<Json<ProposalReply>> {
    proposals::open(&state.db, &user.id, &id, &state.shown).await.map(Json)
}

async fn apply(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    ApiPath(id): ApiPath<String>,
    body: Option<ApiJson<ApplyRequest>>,
) -> Result<Json<SaveReply>> {
    // Another teacher's proposal is not found, whatever the body says.
    let lesson_id = proposals::lesson_of(&state.db, &user.id, &id).await?;
    let digest = body.map(|ApiJson(b)| b.digest).unwrap_or_default();
    let reply = proposals::apply(&state.db, &user.id, &id, &digest, &state.shown).await;
    // A turn paused on it goes on (with what became of it, applied or not).
    state.bus.publish(&state.db, bus::PROPOSALS, &id).await;
    let reply = reply?;
    events::saved(&state, &lesson_id, &reply.outcome).await;
    Ok(Json(reply))
}

/// The answer to a discard: where the proposal stands now.
#[derive(serde::Serialize)]
struct Discarded {
    status: ProposalStatus,
}

async fn discard(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    ApiPath(id): ApiPath<String>,
    body: Option<ApiJson<DiscardRequest>>,
) -> Result<Json<Discarded>> {
    // Another teacher's proposal is not found (`discard` reads it first).
    let DiscardRequest { reason, digest } = body.map(|ApiJson(b)| b).unwrap_or_default();
    proposals::discard(&state.db, &user.id, &id, &reason, &digest, &state.shown).await?;
    state.bus.publish(&state.db, bus::PROPOSALS, &id).await;
    Ok(Json(Discarded { status: ProposalStatus::Discarded }))
}
