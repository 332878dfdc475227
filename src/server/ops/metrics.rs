//! `GET /metrics`: what an operator's Prometheus scrapes, in the OpenMetrics
//! text format. Off unless `MARGIN_METRICS_TOKEN` is set, and then only for
//! a request that carries it (`Authorization: Bearer …`): the numbers name
//! schools and show load, which is nobody else's business. What is counted
//! is in `server::metrics`; this reads the instance's state beside it.

use axum::{
    extract::State,
    http::{header, HeaderMap, StatusCode},
    response::{IntoResponse, Response},
};

use crate::server::{
    error::AppError,
    ids,
    metrics::{Now, METRICS},
    state::AppState,
};

/// Whether `headers` carry the metrics token.
fn allowed(token: &str, headers: &HeaderMap) -> bool {
    let given = headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Bearer ")).unwrap_or("");
    // Compared as hashes, so the time taken says nothing about the token.
    ids::token_hash(given.trim()) == ids::token_hash(token)
}

pub async fn metrics(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let Some(token) = state.config.metrics_token.as_deref() else { return AppError::NotFound.into_response() };
    if !allowed(token, &headers) {
        return AppError::Unauthorized.into_response();
    }
    let now = Now {
        replies_running: state.turns.running().len(),
        lesson_pages: state.lesson_pages.counts().0,
        pool_size: state.db.size(),
        pool_idle: state.db.num_idle(),
    };
    let Some(body) = METRICS.encode(now) else { return StatusCode::INTERNAL_SERVER_ERROR.into_response() };
    ([(header::CONTENT_TYPE, "application/openmetrics-text; version=1.0.0; charset=utf-8"), (header::CACHE_CONTROL, "no-store")], body).into_response()
}
