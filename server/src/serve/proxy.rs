//! The client's address behind a reverse proxy (`[server] trusted_proxies`).
//!
//! Behind nginx every TCP connection comes from the proxy, so the per-address limits and the
//! logs would see one address for all clients. The proxy names the client in a header
//! (`X-Forwarded-For` or `X-Real-IP`); anyone can send that header, so it is believed only when
//! the TCP peer is one of the configured trusted proxies. From anyone else it is ignored.
//!
//! `X-Forwarded-For` is a list that each proxy appends its peer to; only the entries added by
//! trusted proxies can be believed. The client is therefore the rightmost entry that is not
//! itself a trusted proxy: what a client writes into the header lands to the left of what the
//! first trusted proxy appended, and is never read.

use std::fmt;
use std::net::{IpAddr, SocketAddr};

/// The header a trusted proxy names the client in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientHeader {
    /// `X-Forwarded-For: client, proxy1, proxy2` (every proxy appends its peer).
    XForwardedFor,
    /// `X-Real-IP: client` (one address, set by the proxy).
    XRealIp,
}

impl ClientHeader {
    /// The header's name in lower case, as [`super::http::RequestHead`] keeps it.
    pub fn name(self) -> &'static str {
        match self {
            ClientHeader::XForwardedFor => "x-forwarded-for",
            ClientHeader::XRealIp => "x-real-ip",
        }
    }
}

/// An address block: an address and a prefix length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Net {
    addr: IpAddr,
    prefix: u8,
}

impl Net {
    fn parse(text: &str) -> Result<Net, String> {
        let (addr, prefix) = match text.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (text, None),
        };
        let addr: IpAddr = addr.trim().parse().map_err(|_| format!("'{text}' is not an IP address or a block like 10.0.0.0/8"))?;
        let addr = canonical(addr);
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => max,
            Some(p) => p.trim().parse::<u8>().ok().filter(|&p| p <= max).ok_or_else(|| format!("'{text}': the prefix length must be 0 to {max}"))?,
        };
        Ok(Net { addr, prefix })
    }

    fn contains(&self, ip: IpAddr) -> bool {
        match (self.addr, canonical(ip)) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => mask(u128::from(u32::from(net)), 32, self.prefix) == mask(u128::from(u32::from(ip)), 32, self.prefix),
            (IpAddr::V6(net), IpAddr::V6(ip)) => mask(u128::from(net), 128, self.prefix) == mask(u128::from(ip), 128, self.prefix),
            _ => false,
        }
    }
}

/// The top `prefix` bits of a `bits`-bit number.
fn mask(value: u128, bits: u8, prefix: u8) -> u128 {
    if prefix == 0 {
        0
    } else {
        value >> (bits - prefix)
    }
}

/// IPv4-mapped IPv6 addresses (`::ffff:a.b.c.d`, what a dual-stack socket reports) as IPv4.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(ip),
        v4 => v4,
    }
}

/// One entry of a forwarding header: a bare address, or one with a port (`1.2.3.4:5678`,
/// `[::1]:5678`), as some proxies write them.
fn parse_entry(entry: &str) -> Option<IpAddr> {
    let entry = entry.trim();
    if let Ok(ip) = entry.parse::<IpAddr>() {
        return Some(canonical(ip));
    }
    entry.parse::<SocketAddr>().ok().map(|s| canonical(s.ip()))
}

/// Which peers may name the client, and in which header.
#[derive(Clone, Debug)]
pub struct TrustedProxies {
    nets: Vec<Net>,
    header: ClientHeader,
}

impl TrustedProxies {
    /// From the configuration: addresses or blocks (`127.0.0.1`, `10.0.0.0/8`, `::1`), and the
    /// header's name (`X-Forwarded-For` or `X-Real-IP`, any case).
    pub fn new(proxies: &[String], header: &str) -> Result<TrustedProxies, String> {
        let nets = proxies.iter().map(|p| Net::parse(p).map_err(|e| format!("server.trusted_proxies: {e}"))).collect::<Result<_, _>>()?;
        let header = match header.to_ascii_lowercase().as_str() {
            "x-forwarded-for" => ClientHeader::XForwardedFor,
            "x-real-ip" => ClientHeader::XRealIp,
            _ => return Err(format!("server.client_address_header = '{header}': use \"X-Forwarded-For\" or \"X-Real-IP\"")),
        };
        Ok(TrustedProxies { nets, header })
    }

    pub fn header(&self) -> ClientHeader {
        self.header
    }

    /// Whether `ip` is a trusted proxy.
    pub fn trusts(&self, ip: IpAddr) -> bool {
        self.nets.iter().any(|n| n.contains(ip))
    }

    /// Who is at the other end of a connection from `tcp`, whose request carried `values` of
    /// the client header (in the order received; a header sent twice counts as one list).
    pub fn peer<'a>(&self, tcp: SocketAddr, values: impl IntoIterator<Item = &'a str>) -> Peer {
        let direct = Peer { client: canonical(tcp.ip()), tcp, forwarded: false };
        if !self.trusts(tcp.ip()) {
            return direct;
        }
        let forwarded = |client| Peer { client, tcp, forwarded: true };
        match self.header {
            // A proxy that sets it replaces what the client sent: one value. Sent twice, the
            // last is the one nearest to us.
            ClientHeader::XRealIp => match values.into_iter().last().and_then(parse_entry) {
                Some(client) => forwarded(client),
                None => direct,
            },
            ClientHeader::XForwardedFor => {
                let entries: Vec<&str> = values.into_iter().flat_map(|v| v.split(',')).collect();
                // From the right: the entries trusted proxies appended, until the first
                // address that is not a trusted proxy's. An entry that is no address stops the
                // walk at the nearest address known (what wrote it is broken or hostile).
                let mut nearest = None;
                for entry in entries.iter().rev() {
                    match parse_entry(entry) {
                        Some(ip) if self.trusts(ip) => nearest = Some(ip),
                        Some(ip) => return forwarded(ip),
                        None => break,
                    }
                }
                // Every entry is a trusted proxy (or none could be read): the leftmost such.
                nearest.map(forwarded).unwrap_or(direct)
            }
        }
    }
}

/// The other end of a connection: the client's address, and the TCP peer it came through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Peer {
    /// The address the per-address limits count: the TCP peer's, or the one a trusted proxy
    /// named.
    pub client: IpAddr,
    /// The TCP peer (the proxy, when forwarded).
    pub tcp: SocketAddr,
    /// Whether `client` came from a trusted proxy's header.
    pub forwarded: bool,
}

/// `203.0.113.7 via 127.0.0.1:41234` behind a proxy, else the TCP peer (`203.0.113.7:5555`).
impl fmt::Display for Peer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.forwarded {
            write!(f, "{} via {}", self.client, self.tcp)
        } else {
            write!(f, "{}", self.tcp)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proxies(list: &[&str], header: &str) -> TrustedProxies {
        TrustedProxies::new(&list.iter().map(|s| s.to_string()).collect::<Vec<_>>(), header).unwrap()
    }

    fn tcp(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn blocks_and_addresses() {
        let p = proxies(&["127.0.0.1", "10.0.0.0/8", "fd00::/8", "::1"], "X-Forwarded-For");
        for trusted in ["127.0.0.1", "10.1.2.3", "10.255.255.255", "fd12::1", "::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1"] {
            assert!(p.trusts(ip(trusted)), "{trusted}");
        }
        for untrusted in ["127.0.0.2", "11.0.0.1", "9.255.255.255", "fe80::1", "::2", "::ffff:127.0.0.2"] {
            assert!(!p.trusts(ip(untrusted)), "{untrusted}");
        }
        assert!(proxies(&["0.0.0.0/0"], "x-real-ip").trusts(ip("203.0.113.7")));
        assert!(!proxies(&["0.0.0.0/0"], "x-real-ip").trusts(ip("::2")));
        assert!(!proxies(&[], "x-real-ip").trusts(ip("127.0.0.1")));
    }

    #[test]
    fn configuration_errors() {
        let err = |list: &[&str], header: &str| TrustedProxies::new(&list.iter().map(|s| s.to_string()).collect::<Vec<_>>(), header).unwrap_err();
        assert!(err(&["localhost"], "x-forwarded-for").contains("'localhost' is not an IP address"));
        assert!(err(&["10.0.0.0/33"], "x-forwarded-for").contains("0 to 32"));
        assert!(err(&["::/129"], "x-forwarded-for").contains("0 to 128"));
        assert!(err(&["10.0.0.0/x"], "x-forwarded-for").contains("prefix length"));
        assert!(err(&[], "Forwarded").contains("X-Forwarded-For"));
    }

    #[test]
    fn forwarded_for_from_a_trusted_proxy_names_the_client() {
        let p = proxies(&["127.0.0.1", "10.0.0.0/8"], "X-Forwarded-For");
        let peer = p.peer(tcp("127.0.0.1:40000"), ["203.0.113.7"]);
        assert_eq!(peer, Peer { client: ip("203.0.113.7"), tcp: tcp("127.0.0.1:40000"), forwarded: true });
        assert_eq!(peer.to_string(), "203.0.113.7 via 127.0.0.1:40000");
        // Through two trusted proxies: the client is left of both.
        assert_eq!(p.peer(tcp("127.0.0.1:1"), ["203.0.113.7, 10.0.0.5"]).client, ip("203.0.113.7"));
        // Spaces, ports and IPv6.
        assert_eq!(p.peer(tcp("127.0.0.1:1"), [" 2001:db8::7 "]).client, ip("2001:db8::7"));
        assert_eq!(p.peer(tcp("127.0.0.1:1"), ["[2001:db8::7]:443"]).client, ip("2001:db8::7"));
        assert_eq!(p.peer(tcp("127.0.0.1:1"), ["203.0.113.7:5555"]).client, ip("203.0.113.7"));
        // A dual-stack socket's IPv4-mapped peer is the same proxy.
        assert!(p.peer(tcp("[::ffff:127.0.0.1]:1"), ["203.0.113.7"]).forwarded);
    }

    #[test]
    fn a_spoofed_header_through_a_trusted_proxy_is_not_believed() {
        let p = proxies(&["127.0.0.1", "10.0.0.0/8"], "x-forwarded-for");
        // The client sent "X-Forwarded-For: 6.6.6.6"; the proxy appended its real address.
        assert_eq!(p.peer(tcp("127.0.0.1:1"), ["6.6.6.6, 203.0.113.7"]).client, ip("203.0.113.7"));
        // …also when it claims to be a trusted proxy itself, or sends the header twice.
        assert_eq!(p.peer(tcp("127.0.0.1:1"), ["10.0.0.1, 203.0.113.7, 10.0.0.5"]).client, ip("203.0.113.7"));
        assert_eq!(p.peer(tcp("127.0.0.1:1"), ["6.6.6.6", "203.0.113.7"]).client, ip("203.0.113.7"));
        // Garbage left of the real entry is never read; garbage a trusted proxy passed on stops
        // the walk at the nearest address known.
        assert_eq!(p.peer(tcp("127.0.0.1:1"), ["not an address, 203.0.113.7"]).client, ip("203.0.113.7"));
        let broken = p.peer(tcp("127.0.0.1:1"), ["203.0.113.7, junk, 10.0.0.5"]);
        assert_eq!((broken.client, broken.forwarded), (ip("10.0.0.5"), true));
        // Only trusted proxies in the list: the leftmost.
        assert_eq!(p.peer(tcp("127.0.0.1:1"), ["10.0.0.1, 10.0.0.2"]).client, ip("10.0.0.1"));
    }

    #[test]
    fn headers_from_untrusted_peers_are_ignored() {
        let p = proxies(&["127.0.0.1"], "x-forwarded-for");
        for values in [vec!["6.6.6.6"], vec!["6.6.6.6, 127.0.0.1"], vec!["127.0.0.1"], vec![]] {
            let peer = p.peer(tcp("198.51.100.9:5555"), values.clone());
            assert_eq!(peer, Peer { client: ip("198.51.100.9"), tcp: tcp("198.51.100.9:5555"), forwarded: false }, "{values:?}");
            assert_eq!(peer.to_string(), "198.51.100.9:5555");
        }
        // No proxies configured: nobody is believed, loopback included.
        let none = proxies(&[], "x-forwarded-for");
        assert_eq!(none.peer(tcp("127.0.0.1:1"), ["6.6.6.6"]).client, ip("127.0.0.1"));
    }

    #[test]
    fn a_trusted_proxy_that_names_nobody_is_the_client() {
        let p = proxies(&["127.0.0.1"], "x-forwarded-for");
        for values in [vec![], vec![""], vec!["unknown"], vec![" , "]] {
            let peer = p.peer(tcp("127.0.0.1:1"), values.clone());
            assert_eq!((peer.client, peer.forwarded), (ip("127.0.0.1"), false), "{values:?}");
        }
    }

    #[test]
    fn real_ip() {
        let p = proxies(&["127.0.0.1"], "X-Real-IP");
        assert_eq!(p.header().name(), "x-real-ip");
        assert_eq!(p.peer(tcp("127.0.0.1:1"), ["203.0.113.7"]).client, ip("203.0.113.7"));
        // One address, not a list: a list is not an address.
        assert!(!p.peer(tcp("127.0.0.1:1"), ["6.6.6.6, 203.0.113.7"]).forwarded);
        assert_eq!(p.peer(tcp("127.0.0.1:1"), ["6.6.6.6", "203.0.113.7"]).client, ip("203.0.113.7"));
        assert_eq!(p.peer(tcp("198.51.100.9:1"), ["203.0.113.7"]).client, ip("198.51.100.9"));
    }
}
