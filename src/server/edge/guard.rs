//! The gate in front of every page: pages need a signed-in teacher (others go
//! to sign-in and come back afterwards). API routes and server functions
//! check the session themselves and answer 401 as JSON instead of redirecting.
//! Whether a lesson is the teacher's is checked where it is read
//! (`lessons::get_editable`); the lesson page shows the app's one "not found"
//! page (`components::not_found`) for anything else.

use axum::{
    body::Body,
    extract::{Request, State},
    http::Method,
    middleware::Next,
    response::{IntoResponse, Redirect, Response},
};

use crate::server::{accounts::current_user::Member, state::AppState};

/// Pages a student may open; every other page sends them to their classes.
fn for_students(path: &str) -> bool {
    path == "/learn" || path.starts_with("/learn/") || path.starts_with("/join/") || path == "/account"
}

/// Pages anyone may open, signed in or not (a join link says what to do).
fn open_to_all(path: &str) -> bool {
    path.starts_with("/join/")
}

/// Paths anyone may load.
fn is_public(path: &str) -> bool {
    matches!(path, "/signin" | "/signup" | "/healthz" | "/readyz" | "/metrics" | "/favicon.ico")
        || path.starts_with("/pkg/")
        || path.starts_with("/api/")
        || path.starts_with("/auth/")
        || path.starts_with("/lti/")
        // A refused sign-in's sentence, for whoever the browser is.
        || path.starts_with("/refused/")
}

pub async fn pages(State(state): State<AppState>, req: Request<Body>, next: Next) -> Response {
    let path = req.uri().path().to_string();
    if req.method() != Method::GET || is_public(&path) {
        if path == "/signin" || path == "/signup" {
            // Already signed in: nothing to do on these pages.
            if let Ok(Some(Member(u))) = Member::find(&state, req.headers()).await {
                return Redirect::to(if u.is_student() { "/learn" } else { "/" }).into_response();
            }
        }
        return next.run(req).await;
    }
    match Member::find(&state, req.headers()).await {
        Ok(Some(Member(u))) if u.is_student() && !for_students(&path) => return Redirect::to("/learn").into_response(),
        Ok(Some(_)) => {}
        Ok(None) if open_to_all(&path) => {}
        Ok(None) => {
            let target = req.uri().path_and_query().map(|p| p.as_str()).unwrap_or("/");
            let to = if target == "/" {
                "/signin".to_string()
            } else {
                format!("/signin?{}", serde_urlencoded::to_string([("next", target)]).unwrap_or_default())
            };
            return Redirect::to(&to).into_response();
        }
        Err(e) => return e.into_response(),
    };
    next.run(req).await
}

#[cfg(test)]
mod tests {
    use super::is_public;

    #[test]
    fn only_entry_pages_and_assets_are_public() {
        for p in ["/signin", "/signup", "/healthz", "/pkg/margin.js", "/api/auth/login", "/auth/signin", "/refused/sso"] {
            assert!(is_public(p), "{p}");
        }
        for p in ["/", "/lessons/abc", "/signin/x", "/settings"] {
            assert!(!is_public(p), "{p}");
        }
    }
}
