//! Cross-site request forgery: a write that a browser sends with the
//! teacher's cookie must come from one of Margin's own pages.
//!
//! Every request that is not GET, HEAD or OPTIONS is checked, unless it
//! proves who it is with `Authorization: Bearer` (another site cannot make a
//! browser send that header to us). The browser says where a request comes
//! from in `Origin` and, in newer browsers, `Sec-Fetch-Site`; either must
//! say this site. A request with neither and no session cookie is from a
//! program, not a browser, and has nothing to forge, so it passes.
//!
//! "This site" is `MARGIN_PUBLIC_URL` when set. Unset, it is the listen
//! address or the host the request was sent to (which a page on another site
//! cannot change).

use axum::{
    extract::Request,
    http::{header, HeaderMap, Method},
    response::{IntoResponse, Response},
};

use crate::server::{accounts::auth, config::origin_of, error::AppError, state::AppState};

/// Whether `origin` (an `Origin` header's value) is this site.
pub fn is_own_origin(origin: &str, public: Option<&str>, listen: &str, host: Option<&str>) -> bool {
    let Some(origin) = origin_of(origin) else { return false };
    if let Some(public) = public {
        return origin == public;
    }
    let host_part = origin.split_once("://").map(|(_, h)| h).unwrap_or("");
    host_part == listen.to_ascii_lowercase() || host.is_some_and(|h| host_part == h.trim().to_ascii_lowercase())
}

/// Whether a write may go ahead.
pub fn allowed(method: &Method, headers: &HeaderMap, public: Option<&str>, listen: &str) -> bool {
    if matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS) {
        return true;
    }
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("Bearer "));
    if bearer {
        return true;
    }
    let host = headers.get(header::HOST).and_then(|v| v.to_str().ok());
    if let Some(origin) = headers.get(header::ORIGIN) {
        return origin.to_str().is_ok_and(|o| is_own_origin(o, public, listen, host));
    }
    if let Some(site) = headers.get("sec-fetch-site") {
        return matches!(site.to_str(), Ok("same-origin" | "none"));
    }
    auth::token_from_headers(headers).is_none()
}

/// `None` when `req` may go ahead, else the refusal to send.
pub fn check(state: &AppState, req: &Request) -> Option<Response> {
    if crate::server::lti::routes::posted_by_platforms(req.uri().path()) {
        // An LMS posts these from its own site by design; each proves
        // itself with a signed token and a one-use state instead.
        return None;
    }
    let listen = state.leptos_options.site_addr.to_string();
    if allowed(req.method(), req.headers(), state.config.public_origin.as_deref(), &listen) {
        return None;
    }
    tracing::warn!(path = %req.uri().path(), "refused a write from another site");
    Some(AppError::Forbidden("This request came from another website, so nothing was changed.".into()).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(axum::http::HeaderName::from_bytes(k.as_bytes()).unwrap(), v.parse().unwrap());
        }
        h
    }

    const LISTEN: &str = "127.0.0.1:3000";
    const COOKIE: (&str, &str) = ("cookie", "margin_session=abc");

    #[test]
    fn reads_pass_and_bearer_writes_pass() {
        assert!(allowed(&Method::GET, &headers(&[COOKIE, ("origin", "https://evil.example")]), None, LISTEN));
        assert!(allowed(&Method::POST, &headers(&[("authorization", "Bearer t"), ("origin", "https://evil.example")]), None, LISTEN));
    }

    #[test]
    fn cookie_writes_must_come_from_this_site() {
        let post = |h: &[(&str, &str)]| allowed(&Method::POST, &headers(h), None, LISTEN);
        assert!(post(&[COOKIE, ("origin", "http://127.0.0.1:3000")]));
        assert!(post(&[COOKIE, ("origin", "http://margin.local:8080"), ("host", "margin.local:8080")]));
        assert!(!post(&[COOKIE, ("origin", "https://evil.example"), ("host", "127.0.0.1:3000")]));
        assert!(!post(&[COOKIE, ("origin", "null")]));
        assert!(post(&[COOKIE, ("sec-fetch-site", "same-origin")]));
        assert!(!post(&[COOKIE, ("sec-fetch-site", "cross-site")]));
        assert!(!post(&[COOKIE, ("sec-fetch-site", "same-site")]));
        // A cookie with no word on where the request came from: refused.
        assert!(!post(&[COOKIE]));
        // No cookie and no browser headers: a program with nothing to forge.
        assert!(post(&[]));
        // A sign-in form posted from another site (login CSRF).
        assert!(!post(&[("origin", "https://evil.example")]));
    }

    #[test]
    fn a_configured_public_url_is_the_only_origin() {
        let public = Some("https://margin.school.org");
        let h = headers(&[COOKIE, ("origin", "https://margin.school.org")]);
        assert!(allowed(&Method::DELETE, &h, public, LISTEN));
        let h = headers(&[COOKIE, ("origin", "http://127.0.0.1:3000"), ("host", "127.0.0.1:3000")]);
        assert!(!allowed(&Method::DELETE, &h, public, LISTEN));
    }
}
