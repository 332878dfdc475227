//! The whole HTTP surface in one place: health, accounts, Leptos pages and
//! server functions, static files, and the layers around them.

use axum::{
    extract::{DefaultBodyLimit, State},
    middleware,
    routing::{any, get},
    Json, Router,
};
use leptos_axum::{generate_route_list, LeptosRoutes};

pub use crate::net::no_delay;

use super::{
    auth_routes, bodies, chat_routes, csrf,
    error::{AppError, Result},
    guard, headers, lesson_api, lesson_forms, library_api, proposal_api,
    state::AppState,
};
use crate::app::{shell, App};

pub fn build(state: AppState) -> Router {
    let routes = generate_route_list(App);
    let options = state.leptos_options.clone();
    Router::new()
        .route("/healthz", get(healthz))
        .merge(auth_routes::router())
        .merge(chat_routes::router())
        .merge(lesson_api::router())
        .merge(library_api::router())
        .merge(proposal_api::router())
        .merge(lesson_forms::router())
        .leptos_routes(&state, routes, move || shell(options.clone()))
        // Under /api/ even a wrong address or method answers in JSON.
        .route("/api/{*rest}", any(api_not_found))
        .method_not_allowed_fallback(method_not_allowed)
        .fallback(leptos_axum::file_and_error_handler::<AppState, _>(shell))
        .layer(middleware::from_fn_with_state(state.clone(), guard::pages))
        // `bodies::limit` has read every body under its route's limit, so
        // axum's own default limit (2 MB for every route) has nothing to add.
        .layer(DefaultBodyLimit::disable())
        // Outermost last: a cross-site write is refused before its body is read.
        .layer(middleware::from_fn(bodies::limit))
        .layer(middleware::from_fn_with_state(state.clone(), csrf::same_origin))
        .layer(middleware::from_fn(headers::security))
        .with_state(state)
}

async fn api_not_found() -> AppError {
    AppError::NotFound
}

async fn method_not_allowed() -> AppError {
    AppError::MethodNotAllowed
}

/// Liveness and database reachability, for load balancers and `make run` checks.
async fn healthz(State(state): State<AppState>) -> Result<Json<Health>> {
    sqlx::query("SELECT 1").execute(&state.db).await?;
    Ok(Json(Health { status: "ok" }))
}

/// What `/healthz` answers when the server and its database are up.
#[derive(serde::Serialize)]
struct Health {
    status: &'static str,
}
