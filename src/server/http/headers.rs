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

/// A response that posts a form to another site on purpose (the answer to
/// an LMS's Deep Linking request): that origin joins `form-action`.
#[derive(Clone, Debug)]
pub struct FormActionAlso(pub String);

/// A response an LMS shows in its own page on purpose (LTI Dynamic
/// Registration's step): that origin may frame it, and only that one.
#[derive(Clone, Debug)]
pub struct FramedBy(pub String);

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

    /// The security headers, with this nonce in the policy (and the one
    /// other origin a response may post its form to, when it says so).
    pub fn apply(&self, h: &mut HeaderMap, form_action_also: Option<&FormActionAlso>) {
        self.apply_framed(h, form_action_also, None)
    }

    /// As `apply`, and a page framed by the one origin `framed_by` names.
    pub fn apply_framed(&self, h: &mut HeaderMap, form_action_also: Option<&FormActionAlso>, framed_by: Option<&FramedBy>) {
        let mut policy = content_security_policy(&self.0);
        // Only an origin's own characters: nothing that could end the directive.
        let clean = |url: &str| {
            crate::server::config::origin_of(url)
                .filter(|o| o.split_once("://").is_some_and(|(_, host)| host.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']'))))
        };
        if let Some(origin) = form_action_also.and_then(|f| clean(&f.0)) {
            policy.push(' ');
            policy.push_str(&origin);
        }
        let framer = framed_by.and_then(|f| clean(&f.0));
        if let Some(framer) = &framer {
            policy = policy.replace("frame-ancestors 'none'", &format!("frame-ancestors {framer}"));
        }
        if let Ok(csp) = HeaderValue::from_str(&policy) {
            h.insert(header::CONTENT_SECURITY_POLICY, csp);
        }
        h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
        h.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
        if framer.is_none() {
            h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn csp(h: &HeaderMap) -> &str {
        h.get(header::CONTENT_SECURITY_POLICY).unwrap().to_str().unwrap()
    }

    #[test]
    fn a_form_target_joins_form_action_and_nothing_else_does() {
        let nonce = CspNonce("n".into());
        let mut h = HeaderMap::new();
        nonce.apply(&mut h, None);
        assert!(csp(&h).ends_with("form-action 'self'"));
        nonce.apply(&mut h, Some(&FormActionAlso("https://lms.example.org/deep/return?x=1".into())));
        assert!(csp(&h).ends_with("form-action 'self' https://lms.example.org"), "{}", csp(&h));
        nonce.apply(&mut h, Some(&FormActionAlso("https://evil.example;script-src *".into())));
        assert!(csp(&h).ends_with("form-action 'self'"), "{}", csp(&h));
    }
}
