//! A range of addresses such as `10.0.0.0/8`, as `MARGIN_TRUSTED_PROXIES`
//! lists them. It sits beside the configuration, which reads it, so the
//! configuration depends on nothing that depends on the state.
//!
//! No crate is used for the address ranges: parsing `addr/bits` and
//! comparing prefixes is a few lines, and `ipnet` would add a dependency for it.

use std::net::IpAddr;

/// A range of addresses such as `10.0.0.0/8`, or one address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IpRange {
    addr: IpAddr,
    bits: u8,
}

impl IpRange {
    pub fn parse(s: &str) -> Option<Self> {
        let (addr, bits) = match s.trim().split_once('/') {
            Some((a, b)) => (a.parse::<IpAddr>().ok()?, b.parse::<u8>().ok()?),
            None => {
                let a = s.trim().parse::<IpAddr>().ok()?;
                (a, if a.is_ipv4() { 32 } else { 128 })
            }
        };
        let max = if addr.is_ipv4() { 32 } else { 128 };
        (bits <= max).then_some(Self { addr, bits })
    }

    /// A comma-separated list; entries that do not parse are reported and skipped.
    pub fn parse_list(s: &str) -> Vec<Self> {
        s.split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .filter_map(|p| {
                let r = Self::parse(p);
                if r.is_none() {
                    tracing::warn!(entry = p, "MARGIN_TRUSTED_PROXIES: not an address or range, ignored");
                }
                r
            })
            .collect()
    }

    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        match (self.addr, ip) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => prefix_eq(&net.octets(), &ip.octets(), self.bits),
            (IpAddr::V6(net), IpAddr::V6(ip)) => prefix_eq(&net.octets(), &ip.octets(), self.bits),
            _ => false,
        }
    }
}

pub fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(ip),
        v4 => v4,
    }
}

fn prefix_eq(a: &[u8], b: &[u8], bits: u8) -> bool {
    let whole = usize::from(bits / 8);
    let rest = bits % 8;
    if a[..whole] != b[..whole] {
        return false;
    }
    rest == 0 || {
        let mask = 0xffu8 << (8 - rest);
        a[whole] & mask == b[whole] & mask
    }
}
