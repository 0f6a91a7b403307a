//! The source addresses a listener admits (`--directip-allow`): addresses or networks in
//! CIDR notation, parsed with `ipnet`. An empty list admits every source.

use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

use ipnet::IpNet;

/// An address, or a network in CIDR notation (`192.0.2.0/24`, `2001:db8::/32`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AllowedSource(IpNet);

impl AllowedSource {
    /// Whether `address` is this address or inside this network (an IPv4 peer seen as
    /// an IPv4-mapped IPv6 address on a dual-stack listener counts as IPv4).
    pub fn contains(&self, address: IpAddr) -> bool {
        self.0.contains(&address.to_canonical())
    }
}

/// Whether `sources` admits `address`: every address when empty.
pub fn admits(sources: &[AllowedSource], address: IpAddr) -> bool {
    sources.is_empty() || sources.iter().any(|source| source.contains(address))
}

impl FromStr for AllowedSource {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let text = text.trim();
        if let Ok(address) = text.parse::<IpAddr>() {
            return Ok(Self(IpNet::from(address.to_canonical())));
        }
        // Host bits set (`10.1.2.3/8`) name the network they are in.
        text.parse::<IpNet>()
            .map(|net| Self(net.trunc()))
            .map_err(|_| {
                format!(
                    "'{text}' is neither an IP address nor a network in CIDR notation \
                 (such as 192.0.2.10, 192.0.2.0/24 or 2001:db8::/32)"
                )
            })
    }
}

impl fmt::Display for AllowedSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(text: &str) -> AllowedSource {
        text.parse().expect("a valid source")
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().expect("an address")
    }

    #[test]
    fn addresses_and_networks_are_parsed() {
        assert_eq!(source("192.0.2.10").to_string(), "192.0.2.10/32");
        assert_eq!(source(" 192.0.2.0/24 ").to_string(), "192.0.2.0/24");
        assert_eq!(source("10.1.2.3/8").to_string(), "10.0.0.0/8");
        assert_eq!(source("2001:db8::/32").to_string(), "2001:db8::/32");
        assert_eq!(source("::1").to_string(), "::1/128");
    }

    #[test]
    fn bad_sources_are_refused_with_their_text() {
        for bad in [
            "",
            "10.0.0.0/33",
            "2001:db8::/129",
            "300.1.1.1",
            "example.com",
            "10.0.0.0/",
            "10.0.0.0/8/8",
        ] {
            let error = bad.parse::<AllowedSource>().expect_err(bad);
            assert!(error.contains(&format!("'{bad}'")), "{error}");
        }
    }

    #[test]
    fn membership() {
        let sources = [source("192.0.2.0/24"), source("2001:db8::1")];
        assert!(admits(&sources, ip("192.0.2.200")));
        assert!(admits(&sources, ip("::ffff:192.0.2.7")));
        assert!(admits(&sources, ip("2001:db8::1")));
        assert!(!admits(&sources, ip("192.0.3.1")));
        assert!(!admits(&sources, ip("2001:db8::2")));
        assert!(!admits(&sources, ip("127.0.0.1")));
        assert!(admits(&[], ip("127.0.0.1")));
    }
}
