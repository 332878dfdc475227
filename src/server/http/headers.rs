//! Security headers on every response. The Content-Security-Policy lets
//! Margin's own pages run and nothing else: scripts only from this site or
//! inline with this response's nonce (Leptos puts it on the scripts that
//! start the islands), WebAssembly compiled from our own bundle, requests
//! only to this site, no framing, no `<base>`, forms only to this site.
//!
//! Styles allow inline: the markdown renderer aligns table cells with a
//! `style` attribute and the lesson page's change highlight is a `<style>`
//! the browser rewrites. Styles cannot run script, and every HTML fragment
//! we render is sanitised before it gets near the page.

use axum::{
    extract::Request,
    http::{header, HeaderMap, HeaderValue},
};

use crate::server::ids;

/// This response's script nonce, for the page's shell to put on its scripts.
#[derive(Clone, Debug)]
pub struct CspNonce(pub String);

/// The policy for a response whose inline scripts carry `nonce`.
pub fn content_security_policy(nonce: &str) -> String {
    format!(
        "default-src 'self'; script-src 'self' 'nonce-{nonce}' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; \
         img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; frame-ancestors 'none'; \
         base-uri 'none'; form-action 'self'"
    )
}

impl CspNonce {
    /// A fresh nonce, put on the request for the page's shell to find.
    pub fn attach(req: &mut Request) -> Self {
        let nonce = Self(ids::random_hex(16));
        req.extensions_mut().insert(nonce.clone());
        nonce
    }

    /// The security headers, with this nonce in the policy.
    pub fn apply(&self, h: &mut HeaderMap) {
        if let Ok(csp) = HeaderValue::from_str(&content_security_policy(&self.0)) {
            h.insert(header::CONTENT_SECURITY_POLICY, csp);
        }
        h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
        h.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
        h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    }
}
