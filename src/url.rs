//! Percent-encoding for the few addresses and headers built by hand (the
//! lessons list's page links, a download's file name). Shared by server and
//! browser code; small enough not to need a crate.

/// Every byte but the unreserved ones (RFC 3986) as `%XX`.
pub fn percent_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// `a=1&b=2` from pairs, leaving out empty values.
pub fn query(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| format!("{k}={}", percent_encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_what_must_be() {
        assert_eq!(percent_encode("français 1&x"), "fran%C3%A7ais%201%26x");
        assert_eq!(query(&[("q", "a b"), ("sort", ""), ("offset", "50")]), "q=a%20b&offset=50");
    }
}
