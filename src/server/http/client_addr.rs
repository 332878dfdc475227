//! Which client a request comes from, for per-client limits. It is the
//! socket's peer address; `X-Forwarded-For` is believed only when that peer
//! is one of `MARGIN_TRUSTED_PROXIES`, and then only as far back as the
//! proxies go (the rightmost address a trusted proxy did not add). A client
//! that writes its own `X-Forwarded-For` therefore changes nothing.

use std::net::{IpAddr, SocketAddr};

use axum::{
    extract::{ConnectInfo, FromRef, FromRequestParts},
    http::{request::Parts, HeaderMap},
};

use crate::server::config::{
    ip_range::{canonical, IpRange},
    Config,
};

/// The client's address, given the socket's peer and the request's headers.
pub fn resolve(peer: IpAddr, headers: &HeaderMap, trusted: &[IpRange]) -> IpAddr {
    let peer = canonical(peer);
    if !trusted.iter().any(|r| r.contains(peer)) {
        return peer;
    }
    // Walk the forwarded chain from the nearest hop; the first address no
    // trusted proxy accounts for is the client.
    let listed: Vec<&str> = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .collect();
    let hops = listed.into_iter().rev().map_while(|h| h.parse::<IpAddr>().ok().map(canonical));
    let mut client = peer;
    for hop in hops {
        client = hop;
        if !trusted.iter().any(|r| r.contains(hop)) {
            break;
        }
    }
    client
}

/// The address that stands for one client when clients are counted: an
/// IPv4 address as it is (an IPv4-mapped IPv6 one too), and for IPv6 its
/// /64, which one household or one attacker usually holds whole (counting
/// each address of it would give them 2⁶⁴ clients).
pub fn counted_as(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let bits = u128::from(v6) & !((1u128 << 64) - 1);
                IpAddr::V6(std::net::Ipv6Addr::from(bits))
            }
        },
    }
}

/// The client a request comes from. Without a socket address (a request
/// handed to the router in-process, as tests do) every request counts as one
/// client, the unspecified address: stricter, never looser.
pub struct ClientAddr(pub IpAddr);

/// Any state the configuration can be read from (the server's `AppState`):
/// the floor does not know the state that stands on it.
impl<S> FromRequestParts<S> for ClientAddr
where
    S: Send + Sync,
    std::sync::Arc<Config>: FromRef<S>,
{
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let config = std::sync::Arc::<Config>::from_ref(state);
        let peer = parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map(|ConnectInfo(addr)| addr.ip())
            .unwrap_or(IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED));
        Ok(Self(resolve(peer, &parts.headers, &config.trusted_proxies)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv6_clients_are_counted_by_their_64() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:ffff:eeee:dddd:cccc".parse().unwrap();
        let other: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(counted_as(a), counted_as(b));
        assert_ne!(counted_as(a), counted_as(other));
        assert_eq!(counted_as(a), "2001:db8:1:2::".parse::<IpAddr>().unwrap());
        let v4: IpAddr = "203.0.113.9".parse().unwrap();
        assert_eq!(counted_as(v4), v4);
        assert_eq!(counted_as("::ffff:203.0.113.9".parse().unwrap()), v4);
    }

    fn headers(xff: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert("x-forwarded-for", xff.parse().unwrap());
        h
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn ranges_parse_and_match() {
        let r = IpRange::parse("10.1.0.0/16").unwrap();
        assert!(r.contains(ip("10.1.200.3")) && !r.contains(ip("10.2.0.1")));
        assert!(IpRange::parse("10.0.0.1").unwrap().contains(ip("::ffff:10.0.0.1")));
        assert!(IpRange::parse("fd00::/8").unwrap().contains(ip("fd12::1")));
        assert!(IpRange::parse("10.0.0.0/33").is_none() && IpRange::parse("proxy").is_none());
        assert!(IpRange::parse("10.0.0.0/12").unwrap().contains(ip("10.15.255.255")));
        assert!(!IpRange::parse("10.0.0.0/12").unwrap().contains(ip("10.16.0.0")));
        assert_eq!(IpRange::parse_list("127.0.0.1, bad, ::1").len(), 2);
    }

    #[test]
    fn a_forwarded_header_from_a_stranger_is_ignored() {
        assert_eq!(resolve(ip("198.51.100.7"), &headers("1.2.3.4"), &[]), ip("198.51.100.7"));
        let trusted = IpRange::parse_list("127.0.0.1");
        assert_eq!(resolve(ip("198.51.100.7"), &headers("1.2.3.4"), &trusted), ip("198.51.100.7"));
    }

    #[test]
    fn behind_a_trusted_proxy_the_client_is_the_last_address_it_did_not_add() {
        let trusted = IpRange::parse_list("127.0.0.1, 10.0.0.0/8");
        // The client forged the first entry; the proxy appended the real one.
        assert_eq!(resolve(ip("127.0.0.1"), &headers("6.6.6.6, 203.0.113.9"), &trusted), ip("203.0.113.9"));
        // Two proxies deep.
        assert_eq!(resolve(ip("127.0.0.1"), &headers("6.6.6.6, 203.0.113.9, 10.0.0.5"), &trusted), ip("203.0.113.9"));
        // A trusted proxy that sent no header is the client.
        assert_eq!(resolve(ip("127.0.0.1"), &HeaderMap::new(), &trusted), ip("127.0.0.1"));
        // Garbage in the chain stops the walk at the last good hop.
        assert_eq!(resolve(ip("127.0.0.1"), &headers("203.0.113.9, junk"), &trusted), ip("127.0.0.1"));
    }
}
