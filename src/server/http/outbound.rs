//! Requests Margin makes to the outside on a person's behalf: a school
//! account's provider (`accounts::sso`) and an LMS platform (`lti`). No
//! redirects followed, ten seconds at most, an answer read to 1 MiB; a party
//! that breaks any of these fails that one request, nothing else. Shaped as
//! the HTTP client openidconnect calls (its own clients are left out, so
//! nothing but the server's reqwest is built).

use std::{future::Future, pin::Pin, time::Duration};

use openidconnect::{http, HttpRequest, HttpResponse};

/// The largest answer read.
const MAX_ANSWER: usize = 1024 * 1024;

/// A client with these rules.
pub fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap_or_else(|_| reqwest::Client::new())
}

/// A request under way.
pub type Pending = Pin<Box<dyn Future<Output = Result<HttpResponse, Failure>> + Send>>;

/// The function openidconnect calls for each request.
pub fn client(http: &reqwest::Client) -> impl Fn(HttpRequest) -> Pending + '_ {
    move |request| Box::pin(send(http.clone(), request))
}

/// A request that failed.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Failure(String);

pub async fn send(http: reqwest::Client, request: HttpRequest) -> Result<HttpResponse, Failure> {
    let (parts, body) = request.into_parts();
    let mut answer = http
        .request(parts.method, parts.uri.to_string())
        .headers(parts.headers)
        .body(body)
        .send()
        .await
        .map_err(|e| Failure(e.without_url().to_string()))?;
    let mut built = http::Response::builder().status(answer.status());
    if let Some(headers) = built.headers_mut() {
        *headers = answer.headers().clone();
    }
    let mut bytes = Vec::new();
    while let Some(chunk) = answer.chunk().await.map_err(|e| Failure(e.without_url().to_string()))? {
        if bytes.len() + chunk.len() > MAX_ANSWER {
            return Err(Failure("the answer is larger than 1 MiB".into()));
        }
        bytes.extend_from_slice(&chunk);
    }
    built.body(bytes).map_err(|e| Failure(e.to_string()))
}

/// An error with its causes, for the log.
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// The claims of a JWT whose signature was verified already (openidconnect
/// reads only the standard ones; LTI's and a tenant claim are read here).
pub fn verified_claims(jwt: &str) -> Option<serde_json::Value> {
    use base64::Engine;
    let part = jwt.trim().split('.').nth(1)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(part.trim_end_matches('=')).ok()?;
    serde_json::from_slice(&bytes).ok()
}
