//! The client's address, decided once per request: the TCP peer, or — only when the peer
//! is one of the operator's `--trusted-proxy` addresses — the nearest untrusted address
//! in `X-Forwarded-For`. Lockout and rate limiting key on it; a client cannot choose it
//! by sending a header to a server that does not sit behind a proxy.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::extract::{ConnectInfo, Request, State};
use axum::middleware::Next;
use axum::response::Response;

use crate::server::DirectTls;

/// The address a request is attributed to (a request extension).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientAddress(pub IpAddr);

/// The request came over HTTPS: directly (a TLS connection this process terminated,
/// `--tls-cert`), or through a trusted proxy saying so with `X-Forwarded-Proto: https` (a
/// request extension, decided here only; session cookies are `Secure` then).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OverHttps;

/// Proxies whose `X-Forwarded-For` is believed.
#[derive(Debug, Clone, Default)]
pub struct TrustedProxies(pub Arc<Vec<IpAddr>>);

impl TrustedProxies {
    fn trusts(&self, ip: IpAddr) -> bool {
        self.0.contains(&canonical(ip))
    }

    /// The client behind `peer`, given the `X-Forwarded-For` values in order.
    pub fn client(&self, peer: IpAddr, forwarded_for: &[&str]) -> IpAddr {
        if !self.trusts(peer) {
            return canonical(peer);
        }
        // Walk from the nearest hop outwards; the first address we do not trust is the
        // client. Anything unparsable ends the walk: the proxy before it is the client.
        let hops = forwarded_for
            .iter()
            .flat_map(|value| value.split(','))
            .map(str::trim)
            .rev();
        let mut client = canonical(peer);
        for hop in hops {
            let Ok(ip) = hop.parse::<IpAddr>() else { break };
            client = canonical(ip);
            if !self.trusts(client) {
                break;
            }
        }
        client
    }
}

/// `::ffff:127.0.0.1` and `127.0.0.1` are one client.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

pub async fn client_address(
    State(trusted): State<TrustedProxies>,
    mut request: Request,
    next: Next,
) -> Response {
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(addr)| addr.ip());
    if let Some(peer) = peer {
        let forwarded: Vec<&str> = request
            .headers()
            .get_all("x-forwarded-for")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .collect();
        let client = trusted.client(peer, &forwarded);
        request.extensions_mut().insert(ClientAddress(client));
        let forwarded_https = trusted.trusts(peer)
            && request
                .headers()
                .get("x-forwarded-proto")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.split(',').next())
                .is_some_and(|proto| proto.trim().eq_ignore_ascii_case("https"));
        if forwarded_https {
            request.extensions_mut().insert(OverHttps);
        }
    }
    // The connection's own TLS, never the request line: an absolute-form `https://` URI
    // sent over plain HTTP is only the client's word.
    if request.extensions().get::<DirectTls>().is_some() {
        request.extensions_mut().insert(OverHttps);
    }
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn forwarded_for_is_believed_only_from_trusted_proxies() {
        let none = TrustedProxies::default();
        assert_eq!(none.client(ip("10.0.0.1"), &["1.2.3.4"]), ip("10.0.0.1"));
        let proxy = TrustedProxies(Arc::new(vec![ip("10.0.0.1"), ip("10.0.0.2")]));
        assert_eq!(proxy.client(ip("10.0.0.1"), &["1.2.3.4"]), ip("1.2.3.4"));
        // A client-supplied first hop does not win over the address the proxy saw.
        assert_eq!(
            proxy.client(ip("10.0.0.1"), &["6.6.6.6, 1.2.3.4, 10.0.0.2"]),
            ip("1.2.3.4")
        );
        assert_eq!(proxy.client(ip("10.0.0.1"), &["junk"]), ip("10.0.0.1"));
        assert_eq!(proxy.client(ip("10.0.0.1"), &[]), ip("10.0.0.1"));
        assert_eq!(none.client(ip("::ffff:127.0.0.1"), &[]), ip("127.0.0.1"));
    }
}
