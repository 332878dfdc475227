//! `GET /readyz`: whether this instance should be sent traffic now. Unlike
//! `/healthz` (the process is up and reaches its database), it also says no
//! while the instance is stopping (its replies are being saved) and, when
//! instances share a database, until it hears the others' notes: an
//! instance that cannot hear them would serve pages that miss changes.

use std::time::Duration;

use axum::{
    extract::State,
    http::StatusCode,
    response::{IntoResponse, Response},
    Json,
};

use crate::server::state::AppState;

/// How long the database may take to answer before the instance is not ready.
const DATABASE_WAIT: Duration = Duration::from_secs(2);

#[derive(serde::Serialize)]
struct Readiness {
    ready: bool,
    /// Why not, in a sentence for whoever looks.
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'static str>,
}

pub async fn readyz(State(state): State<AppState>) -> Response {
    let reason = if state.turns.is_closing() {
        Some("The instance is stopping.")
    } else if !matches!(tokio::time::timeout(DATABASE_WAIT, sqlx::query("SELECT 1").execute(&state.db)).await, Ok(Ok(_))) {
        Some("The database does not answer.")
    } else if !*state.bus.listening().borrow() {
        Some("Not yet hearing the other instances' notes.")
    } else {
        None
    };
    let status = if reason.is_some() { StatusCode::SERVICE_UNAVAILABLE } else { StatusCode::OK };
    (status, [(axum::http::header::CACHE_CONTROL, "no-store")], Json(Readiness { ready: reason.is_none(), reason })).into_response()
}
