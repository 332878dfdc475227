//! Requests Margin makes to the outside on a person's behalf: a school
//! account's provider (`accounts::sso`) and an LMS platform (`lti`). No
//! redirects followed, ten seconds at most, an answer read to 1 MiB; a party
//! that breaks any of these fails that one request, nothing else. Shaped as
//! the HTTP client openidconnect calls (its own clients are left out, so
//! nothing but the server's reqwest is built).

use std::{
    collections::HashMap,
    future::Future,
    pin::Pin,
    sync::Mutex,
    time::{Duration, Instant},
};

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

/// What another party publishes (a provider's discovery, a platform's
/// keys) or hands out (an access token), kept by name for an hour or until
/// it expires, so a request does not fetch it again; whoever finds it stale
/// or lacking fetches it and keeps the new one.
pub struct Kept<T> {
    /// By name: until when, and what.
    kept: Mutex<HashMap<String, (Instant, T)>>,
}

impl<T: Clone> Default for Kept<T> {
    fn default() -> Self {
        Self { kept: Mutex::new(HashMap::new()) }
    }
}

impl<T: Clone> Kept<T> {
    const FOR: Duration = Duration::from_secs(3600);

    /// What was kept under `name`, unless its time is up.
    pub fn get(&self, name: &str) -> Option<T> {
        self.kept.lock().unwrap_or_else(|e| e.into_inner()).get(name).filter(|(until, _)| Instant::now() < *until).map(|(_, v)| v.clone())
    }

    /// Keeps `value` for an hour.
    pub fn keep(&self, name: &str, value: T) {
        self.keep_until(name, Instant::now() + Self::FOR, value);
    }

    /// Keeps `value` until `until` (a token that says when it expires).
    pub fn keep_until(&self, name: &str, until: Instant, value: T) {
        self.kept.lock().unwrap_or_else(|e| e.into_inner()).insert(name.to_string(), (until, value));
    }
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
    let answer = http
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
    let bytes = read_capped(answer, MAX_ANSWER).await.map_err(Failure)?;
    built.body(bytes).map_err(|e| Failure(e.to_string()))
}

/// An answer's body, read chunk by chunk and given up as soon as it passes
/// `limit` bytes, so a party that answers without end costs one refused
/// request and never the server's memory.
pub async fn read_capped(mut answer: reqwest::Response, limit: usize) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    while let Some(chunk) = answer.chunk().await.map_err(|e| e.without_url().to_string())? {
        if bytes.len() + chunk.len() > limit {
            return Err(format!("the answer is larger than {}", readable(limit)));
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes)
}

fn readable(bytes: usize) -> String {
    if bytes >= 1024 * 1024 && bytes % (1024 * 1024) == 0 {
        format!("{} MiB", bytes / (1024 * 1024))
    } else if bytes >= 1024 && bytes % 1024 == 0 {
        format!("{} KB", bytes / 1024)
    } else {
        format!("{bytes} bytes")
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_values_are_given_until_their_time_is_up() {
        let kept = Kept::<String>::default();
        assert_eq!(kept.get("a"), None);
        kept.keep("a", "discovery".into());
        assert_eq!(kept.get("a").as_deref(), Some("discovery"));
        kept.keep_until("token", Instant::now() + Duration::from_secs(60), "fresh".into());
        assert_eq!(kept.get("token").as_deref(), Some("fresh"));
        kept.keep_until("token", Instant::now() - Duration::from_millis(1), "stale".into());
        assert_eq!(kept.get("token"), None, "a token past its time is not given");
        assert_eq!(kept.get("a").as_deref(), Some("discovery"), "names are kept apart");
    }

    /// A local server whose answer is `size` bytes, sent in 64 KB pieces.
    async fn answering(size: usize) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let at = listener.local_addr().unwrap();
        let app = axum::Router::new().route(
            "/",
            axum::routing::get(move || async move {
                let pieces = (0..size.div_ceil(64 * 1024)).map(move |i| {
                    let n = (size - i * 64 * 1024).min(64 * 1024);
                    Ok::<_, std::convert::Infallible>(vec![b'x'; n])
                });
                axum::body::Body::from_stream(futures::stream::iter(pieces))
            }),
        );
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        format!("http://{at}/")
    }

    #[tokio::test]
    async fn an_answer_past_the_limit_is_refused_and_one_within_is_read() {
        let client = http();
        let big = answering(3 * 1024 * 1024).await;
        let refused = read_capped(client.get(&big).send().await.unwrap(), 1024 * 1024).await;
        assert_eq!(refused, Err("the answer is larger than 1 MiB".to_string()));
        let small = answering(100 * 1024).await;
        let read = read_capped(client.get(&small).send().await.unwrap(), 1024 * 1024).await.unwrap();
        assert_eq!(read.len(), 100 * 1024);
        let refused = read_capped(client.get(&small).send().await.unwrap(), 64 * 1024).await;
        assert_eq!(refused, Err("the answer is larger than 64 KB".to_string()));
    }
}
