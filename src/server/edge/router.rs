//! The whole HTTP surface in one place: health, accounts, Leptos pages and
//! server functions, static files, and the layers around them.

use axum::{
    http::header,
    extract::{DefaultBodyLimit, Request, State},
    middleware::{self, Next},
    response::Response,
    routing::{any, get},
    Json, Router,
};
use leptos_axum::{generate_route_list, site_pkg_dir_service, site_pkg_dir_service_route_path, LeptosRoutes};
use tower::Layer;
use tower_http::{compression::CompressionLayer, set_header::SetResponseHeaderLayer};

pub use crate::net::no_delay;

use crate::server::{
    accounts, chats, classes,
    edge::{bodies, csrf, guard},
    error::{AppError, Result}, http::{
        assets,
        headers::CspNonce,
    },
    lessons, material, reactions, standards,
    state::AppState,
};
use crate::app::{shell, App};

pub fn build(state: AppState) -> Router {
    let routes = generate_route_list(App);
    assets::stylesheet(&state.leptos_options);
    let options = state.leptos_options.clone();
    let compressed = Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(crate::server::ops::ready::readyz))
        .route("/metrics", get(crate::server::ops::metrics::metrics))
        .merge(accounts::routes::router())
        .merge(accounts::school_routes::router())
        .merge(accounts::sso::routes::router())
        .merge(accounts::refused::router())
        .merge(crate::server::lti::routes::router())
        .merge(chats::routes::router())
        .merge(lessons::routes::router())
        .merge(lessons::library_routes::router())
        .merge(lessons::proposal_routes::router())
        .merge(lessons::forms::router())
        .merge(lessons::print::router())
        .merge(lessons::sharing::router())
        .merge(lessons::editors::router())
        .merge(material::routes::router())
        .merge(reactions::routes::router())
        .merge(classes::routes::router())
        .merge(classes::learn::router())
        .merge(classes::feedback_routes::router())
        .merge(standards::routes::router())
        .merge(crate::server::safety::routes::router())
        .merge(crate::server::ops::export::router())
        .merge(crate::server::ops::deletion_routes::router())
        .merge(crate::server::audit::routes::router())
        // The bundle's files, from a `ServeDir` of our own: leptos_axum's
        // fallback serves them too, but passes on only `Accept-Encoding`, so
        // a browser asking "changed since?" always got the whole file again.
        // This one answers `304` (and serves the precompressed `.br`/`.gz`),
        // and says how long the browser keeps them (`assets`).
        .route_service(
            &site_pkg_dir_service_route_path(&state.leptos_options),
            SetResponseHeaderLayer::if_not_present(header::CACHE_CONTROL, assets::cache_control(&state.leptos_options))
                .layer(site_pkg_dir_service(&state.leptos_options)),
        )
        .leptos_routes(&state, routes, move || shell(options.clone()))
        // Under /api/ even a wrong address or method answers in JSON.
        .route("/api/{*rest}", any(api_not_found))
        .method_not_allowed_fallback(method_not_allowed)
        .fallback(leptos_axum::file_and_error_handler::<AppState, _>(shell))
        .layer(middleware::from_fn_with_state(state.clone(), guard::pages))
        // Pages and JSON go out compressed when the browser accepts it
        // (brotli or gzip, tower-http's defaults), except what is already
        // compressed (the release build's `.br` and `.gz` assets, which
        // leptos_axum serves as they are).
        .layer(CompressionLayer::new());
    // Event streams are never compressed (they must reach the reader as they
    // are written), so they are kept out of the layer altogether: its body
    // wrapper is sized for a brotli encoder's state (about 4 KB), which every
    // open stream (a reply, a lesson page's updates) would otherwise hold
    // for as long as it is open (`make bench`, memory per open stream). Nor
    // do they pass the pages' guard: they are all under /api/, which it
    // lets through, and it would be one more future per request in flight.
    let streams = Router::new()
        .merge(chats::routes::streams())
        .merge(lessons::events::router())
        .method_not_allowed_fallback(method_not_allowed);
    compressed
        .merge(streams)
        // `edge` has read every body under its route's limit, so axum's own
        // default limit (2 MB for every route) has nothing to add.
        .layer(DefaultBodyLimit::disable())
        .layer(middleware::from_fn_with_state(state.clone(), edge))
        .with_state(state)
}

/// What every request passes first, in one layer (each layer is one more
/// future held by every request in flight): the security headers and the
/// CSP nonce (`headers`), the cross-site check (`csrf`, before the body is
/// read), a session before a large body (`bodies::session_first`), the body
/// under its limit (`bodies`).
async fn edge(State(state): State<AppState>, mut req: Request, next: Next) -> Response {
    let nonce = CspNonce::attach(&mut req);
    let refused = match csrf::check(&state, &req) {
        Some(refused) => Some(refused),
        None => bodies::session_first(&state, req.method(), req.uri().path(), req.headers()).await,
    };
    let mut res = match refused {
        Some(refused) => refused,
        None => match bodies::read(req).await {
            Ok(req) => bodies::server_fn_rejection(next.run(req).await).await,
            Err(refused) => refused,
        },
    };
    let also = res.extensions().get::<crate::server::http::headers::FormActionAlso>().cloned();
    let framed_by = res.extensions().get::<crate::server::http::headers::FramedBy>().cloned();
    nonce.apply_framed(res.headers_mut(), also.as_ref(), framed_by.as_ref());
    // Pages hold an account's lessons, classes and students' work: kept by
    // no cache, shared or the browser's own (the bundle's files say otherwise).
    let html = res.headers().get(header::CONTENT_TYPE).is_some_and(|v| v.as_bytes().starts_with(b"text/html"));
    if html {
        res.headers_mut().entry(header::CACHE_CONTROL).or_insert(axum::http::HeaderValue::from_static("no-store"));
    }
    res
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
