//! Requests Margin makes to the outside on a person's behalf: a school
//! account's provider (`accounts::sso`) and an LMS platform (`lti`). No
//! redirects followed, ten seconds at most, an answer read to 1 MiB; a party
//! that breaks any of these fails that one request, nothing else. Shaped as
//! the HTTP client openidconnect calls (its own clients are left out, so
//! nothing but the server's reqwest is built).
//!
//! Every address such a request goes to was typed by a school's admin or
//! named in something a platform signed, so none may reach inside the
//! server's own network: an address that is, or resolves to, a loopback,
//! private, link-local (cloud metadata), shared or reserved address is
//! refused (`Outbound`), after DNS resolution, unless the operator allowed
//! it (`MARGIN_OUTBOUND_ALLOW`, ranges such as an identity provider's
//! `10.0.0.5`). Names are checked by the client's own resolver, so the
//! address checked is the address connected to; addresses written as IP
//! literals, which no resolver sees, are checked before each request.

use std::{
    collections::HashMap,
    future::Future,
    net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr},
    pin::Pin,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use openidconnect::{http, HttpRequest, HttpResponse};

use crate::server::config::ip_range::{canonical, IpRange};

/// The largest answer read.
const MAX_ANSWER: usize = 1024 * 1024;

/// A client with these rules, refusing addresses inside the server's
/// network but those in `allowed`.
#[derive(Clone)]
pub struct Outbound {
    http: reqwest::Client,
    allowed: Arc<[IpRange]>,
}

impl Default for Outbound {
    fn default() -> Self {
        Self::new(Vec::new())
    }
}

impl Outbound {
    pub fn new(allowed: Vec<IpRange>) -> Self {
        let allowed: Arc<[IpRange]> = allowed.into();
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(10))
            .dns_resolver(Arc::new(Outside { allowed: allowed.clone() }))
            .build()
            .unwrap_or_else(|_| reqwest::Client::new());
        Self { http, allowed }
    }

    /// A request to `url`, unless it names an address inside.
    pub fn request(&self, method: reqwest::Method, url: &str) -> Result<reqwest::RequestBuilder, String> {
        self.check(url)?;
        Ok(self.http.request(method, url))
    }

    /// Refuses a URL that is not http(s) or whose host is an IP literal
    /// inside the network (names are checked when resolved).
    pub fn check(&self, url: &str) -> Result<(), String> {
        let parsed = reqwest::Url::parse(url).map_err(|_| "not an address".to_string())?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err("only http and https addresses are fetched".into());
        }
        let host = parsed.host_str().ok_or("the address has no host")?;
        let Ok(ip) = host.trim_start_matches('[').trim_end_matches(']').parse::<IpAddr>() else { return Ok(()) };
        if allowed(ip, &self.allowed) {
            Ok(())
        } else {
            Err(inside(ip))
        }
    }
}

fn inside(ip: IpAddr) -> String {
    format!("{ip} is inside this server's network; Margin does not fetch from it")
}

/// Whether Margin may connect to `ip`: an address outside the server's
/// network, or one the operator allowed.
pub fn allowed(ip: IpAddr, allowed: &[IpRange]) -> bool {
    allowed.iter().any(|r| r.contains(ip)) || is_outside(ip)
}

/// Whether `ip` is a public unicast address: not loopback, private,
/// link-local (169.254.169.254 is the cloud's metadata service), shared
/// (carrier NAT), unspecified, broadcast, multicast or reserved.
pub fn is_outside(ip: IpAddr) -> bool {
    match canonical(ip) {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            !(v4.is_unspecified()
                || v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_broadcast()
                || v4.is_multicast()
                || v4.is_documentation()
                || a == 0
                || (a == 100 && (64..128).contains(&b))
                || (a == 192 && b == 0 && v4.octets()[2] == 0)
                || (a == 198 && (b == 18 || b == 19))
                || a >= 240)
        }
        IpAddr::V6(v6) => {
            let first = v6.segments()[0];
            // NAT64 (64:ff9b::/96) carries an IPv4 address: judge that one.
            if v6.segments()[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
                let [.., a, b, c, d] = v6.octets();
                return is_outside(IpAddr::V4(Ipv4Addr::new(a, b, c, d)));
            }
            !(v6.is_unspecified()
                || v6.is_loopback()
                || v6.is_multicast()
                || v6.is_unique_local()
                || v6.is_unicast_link_local()
                || (first & 0xffc0) == 0xfec0
                || v6.segments()[..6] == [0; 6]
                || v6 == Ipv6Addr::LOCALHOST)
        }
    }
}

/// The client's resolver: the system's, less every address inside.
struct Outside {
    allowed: Arc<[IpRange]>,
}

impl reqwest::dns::Resolve for Outside {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let allowed = self.allowed.clone();
        Box::pin(async move {
            let host = name.as_str().to_string();
            let found: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let outside: Vec<SocketAddr> = found.iter().copied().filter(|a| self::allowed(a.ip(), &allowed)).collect();
            if outside.is_empty() {
                let why = match found.first() {
                    Some(a) => format!("{host} resolves to {}", inside(a.ip())),
                    None => format!("{host} did not resolve"),
                };
                return Err(why.into());
            }
            Ok(Box::new(outside.into_iter()) as reqwest::dns::Addrs)
        })
    }
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
pub fn client(outbound: &Outbound) -> impl Fn(HttpRequest) -> Pending + '_ {
    move |request| Box::pin(send(outbound.clone(), request))
}

/// A request that failed.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Failure(String);

pub async fn send(outbound: Outbound, request: HttpRequest) -> Result<HttpResponse, Failure> {
    let (parts, body) = request.into_parts();
    let answer = outbound
        .request(parts.method, &parts.uri.to_string())
        .map_err(Failure)?
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

    #[test]
    fn addresses_inside_the_network_are_refused_and_the_rest_let_through() {
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        for inside in [
            "127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "255.255.255.255", "224.0.0.1",
            "::1", "::", "fd00:ec2::254", "fe80::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "64:ff9b::a9fe:a9fe", "::127.0.0.1",
        ] {
            assert!(!is_outside(ip(inside)), "{inside} is inside");
        }
        for outside in ["93.184.215.14", "8.8.8.8", "2606:4700::1111", "64:ff9b::808:808"] {
            assert!(is_outside(ip(outside)), "{outside} is outside");
        }
        let allowed = [IpRange::parse("10.0.0.5").unwrap()];
        assert!(super::allowed(ip("10.0.0.5"), &allowed), "an address the operator allowed");
        assert!(!super::allowed(ip("10.0.0.6"), &allowed), "and no other");
    }

    #[tokio::test]
    async fn a_request_inside_is_refused_whether_written_as_an_address_or_a_name() {
        let at = answering(10).await;
        let refusing = Outbound::default();
        let literal = refusing.request(reqwest::Method::GET, &at).err().expect("a loopback literal is refused");
        assert!(literal.contains("127.0.0.1 is inside"), "{literal}");
        assert!(refusing.request(reqwest::Method::GET, "http://[::1]:9/").is_err());
        assert!(refusing.request(reqwest::Method::GET, "file:///etc/passwd").is_err());
        // A name that resolves inside is refused by the resolver, before any connection.
        let by_name = at.replace("127.0.0.1", "localhost");
        let failed = refusing.request(reqwest::Method::GET, &by_name).unwrap().send().await.err().expect("localhost is refused");
        assert!(error_chain(&failed).contains("is inside this server's network"), "{}", error_chain(&failed));
        // Allowed by the operator, both go through.
        let allowing = Outbound::new(vec![IpRange::parse("127.0.0.0/8").unwrap(), IpRange::parse("::1").unwrap()]);
        assert!(allowing.request(reqwest::Method::GET, &at).unwrap().send().await.unwrap().status().is_success());
        assert!(allowing.request(reqwest::Method::GET, &by_name).unwrap().send().await.unwrap().status().is_success());
    }

    #[tokio::test]
    async fn an_answer_past_the_limit_is_refused_and_one_within_is_read() {
        let client = Outbound::new(vec![IpRange::parse("127.0.0.0/8").unwrap()]);
        let client = &client.http;
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
