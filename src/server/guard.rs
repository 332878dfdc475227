//! The gate in front of every page: pages need a signed-in teacher (others go
//! to sign-in and come back afterwards), and a lesson page needs a lesson the
//! teacher owns (anything else is a plain 404). API routes and server functions
//! check the session themselves and answer 401 as JSON instead of redirecting.

use axum::{
    body::Body,
    extract::{Request, State},
    http::{Method, StatusCode},
    middleware::Next,
    response::{Html, IntoResponse, Redirect, Response},
};

use super::{auth, lesson_forms::NEW_LESSON_PATH, lessons, state::AppState};

/// Paths anyone may load.
fn is_public(path: &str) -> bool {
    matches!(path, "/signin" | "/signup" | "/healthz" | "/favicon.ico")
        || path.starts_with("/pkg/")
        || path.starts_with("/api/")
        || path.starts_with("/auth/")
}

pub async fn pages(State(state): State<AppState>, req: Request<Body>, next: Next) -> Response {
    let path = req.uri().path().to_string();
    if req.method() != Method::GET || is_public(&path) {
        if path == "/signin" || path == "/signup" {
            // Already signed in: nothing to do on these pages.
            if let Ok(Some(_)) = auth::user_from_headers(&state.db, req.headers()).await {
                return Redirect::to("/").into_response();
            }
        }
        return next.run(req).await;
    }
    let user = match auth::user_from_headers(&state.db, req.headers()).await {
        Ok(Some(user)) => user,
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
    if let Some(id) = path.strip_prefix("/lessons/").filter(|_| path != NEW_LESSON_PATH) {
        let id = id.trim_end_matches('/');
        match lessons::is_owned(&state.db, &user.id, id).await {
            Ok(true) => {}
            Ok(false) => return not_found_page(),
            Err(e) => return e.into_response(),
        }
    }
    next.run(req).await
}

/// A small, self-contained 404 page (the app's stylesheet, a way back).
fn not_found_page() -> Response {
    let html = r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Lesson not found · Margin</title><link rel="stylesheet" href="/pkg/margin.css"></head>
<body><main class="page narrow"><h1>Lesson not found</h1>
<p>This lesson does not exist, or it belongs to another teacher.</p>
<p><a href="/">Back to your lessons</a></p></main></body></html>"#;
    (StatusCode::NOT_FOUND, Html(html)).into_response()
}

#[cfg(test)]
mod tests {
    use super::is_public;

    #[test]
    fn only_entry_pages_and_assets_are_public() {
        for p in ["/signin", "/signup", "/healthz", "/pkg/margin.js", "/api/auth/login", "/auth/signin"] {
            assert!(is_public(p), "{p}");
        }
        for p in ["/", "/lessons/abc", "/signin/x", "/settings"] {
            assert!(!is_public(p), "{p}");
        }
    }
}
