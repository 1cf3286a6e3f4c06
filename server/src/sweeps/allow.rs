//! Which hosts a server-started sweep (or an alert's webhook) may reach: the allow-list
//! (loopback only by default, so the app cannot be used to probe a network), checked after
//! the name is resolved, and the addresses a sweep is then pinned to.

use super::error::{MetricsRefused, SweepError, GPU_METRICS_FIELD, METRICS_FIELD};
use crate::loadgen::{MetricsSpec, Pin, SpecError};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

/// Which hosts a server-started sweep may target.
///
/// The URL is parsed by a real URL parser (`url`), must be `http://`, and must not carry
/// a user name or password. Its host is resolved once; every address it resolves to must
/// be allowed, and the sweep then connects only to those addresses ([`Pin`]):
/// - loopback (`127.0.0.0/8`, `::1`) is allowed; `localhost` is resolved and must be loopback;
/// - other names and addresses only when `--sweep-allow` names them (an unlisted name is
///   refused without even being looked up);
/// - unspecified (`0.0.0.0`, `::`), link-local (`169.254.0.0/16`, `fe80::/10`), cloud
///   metadata addresses, multicast and broadcast are refused even behind a listed name:
///   only `--sweep-allow` naming the address itself allows one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AllowList {
    /// Extra host names or IP addresses allowed besides loopback.
    pub hosts: Vec<String>,
}

/// Longest a target's DNS look-up may take.
const LOOKUP_TIMEOUT: Duration = Duration::from_secs(10);

/// Cloud metadata services (AWS, GCP, Azure; AWS ECS and IPv6; Alibaba).
const METADATA: [&str; 4] = ["169.254.169.254", "169.254.170.2", "fd00:ec2::254", "100.100.100.200"];

/// The IPv4 addresses an IPv6 address reaches through a NAT64 translator, if it is in a
/// NAT64 prefix: the well-known `64:ff9b::/96` (RFC 6052) embeds one in its last 32 bits;
/// the local-use `64:ff9b:1::/48` (RFC 8215) may be used with a prefix of /48, /56, /64
/// or /96, each placing the IPv4 address elsewhere (RFC 6052 §2.2, skipping the `u`
/// octet), and the prefix length is the network's, unknown here: every placement counts.
fn nat64_embedded(ip: Ipv6Addr) -> Vec<Ipv4Addr> {
    let o = ip.octets();
    let at = |i: [usize; 4]| Ipv4Addr::new(o[i[0]], o[i[1]], o[i[2]], o[i[3]]);
    match ip.segments() {
        [0x64, 0xff9b, 0, 0, 0, 0, _, _] => vec![at([12, 13, 14, 15])],
        [0x64, 0xff9b, 1, ..] => {
            vec![at([6, 7, 9, 10]), at([7, 9, 10, 11]), at([9, 10, 11, 12]), at([12, 13, 14, 15])]
        }
        _ => Vec::new(),
    }
}

/// Why an address is never a sweep target unless named explicitly, if it is one of those.
/// IPv4-mapped (`::ffff:a.b.c.d`) and NAT64 addresses are judged by the IPv4 address they
/// reach. A NAT64 address of a loopback address is refused too: unlike `::ffff:127.0.0.1`
/// it is routed off this host, to the translator, whose own loopback it would reach.
pub fn never_class(ip: IpAddr) -> Option<&'static str> {
    let ip = ip.to_canonical();
    if let IpAddr::V6(v6) = ip {
        let embedded = nat64_embedded(v6);
        // A placement that reads all zeros is the prefix's padding, not an address
        // (unless every placement does: then the address is the prefix itself).
        let padding = embedded.iter().any(|v4| !v4.is_unspecified());
        for v4 in embedded {
            if padding && v4.is_unspecified() {
                continue;
            }
            if v4.is_loopback() {
                return Some("a NAT64 address of a loopback address (another host's loopback)");
            }
            if let Some(class) = never_class(IpAddr::V4(v4)) {
                return Some(class);
            }
        }
    }
    if METADATA.iter().any(|m| m.parse::<IpAddr>().is_ok_and(|m| m == ip)) {
        return Some("a cloud metadata address");
    }
    match ip {
        _ if ip.is_unspecified() => Some("the unspecified address"),
        _ if ip.is_multicast() => Some("a multicast address"),
        IpAddr::V4(v4) if v4.is_link_local() => Some("a link-local address"),
        IpAddr::V4(v4) if v4.is_broadcast() => Some("the broadcast address"),
        IpAddr::V6(v6) if v6.is_unicast_link_local() => Some("a link-local address"),
        _ => None,
    }
}

/// A target URL that passed the checks that need no look-up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// The host as the URL has it (lower case; IPv6 in brackets).
    pub host: String,
    pub port: u16,
    /// The address itself, when the host is an IP address (nothing to resolve).
    pub ip: Option<IpAddr>,
    /// The host is a name that `--sweep-allow` lists.
    pub listed_name: bool,
}

impl AllowList {
    /// Loopback only.
    pub fn loopback() -> Self {
        Self { hosts: Vec::new() }
    }

    fn lists_ip(&self, ip: IpAddr) -> bool {
        let ip = ip.to_canonical();
        self.hosts.iter().any(|h| {
            let h = h.trim();
            let h = h.strip_prefix('[').and_then(|x| x.strip_suffix(']')).unwrap_or(h);
            h.parse::<IpAddr>().is_ok_and(|l| l.to_canonical() == ip)
        })
    }

    fn lists_name(&self, name: &str) -> bool {
        let name = name.trim_end_matches('.');
        self.hosts.iter().any(|h| h.trim().trim_end_matches('.').eq_ignore_ascii_case(name))
    }

    /// The checks that need no DNS: URL syntax, scheme, no user info, and for a name,
    /// whether it may be looked up at all (`localhost` or listed).
    pub fn candidate(&self, base_url: &str) -> Result<Candidate, SweepError> {
        let url = url::Url::parse(base_url.trim())
            .map_err(|e| SweepError::Invalid(format!("the URL {base_url:?} is not valid: {e}")))?;
        if url.scheme() != "http" {
            return Err(SweepError::Invalid("the URL must start with http://".into()));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(SweepError::Invalid(
                "the URL must not carry a user name or password (`user@host`): give the key as api_key".into(),
            ));
        }
        let port = url.port_or_known_default().unwrap_or(80);
        match url.host() {
            None => Err(SweepError::Invalid("the URL has no host".into())),
            Some(url::Host::Ipv4(ip)) => {
                Ok(Candidate { host: ip.to_string(), port, ip: Some(ip.into()), listed_name: false })
            }
            Some(url::Host::Ipv6(ip)) => {
                Ok(Candidate { host: format!("[{ip}]"), port, ip: Some(ip.into()), listed_name: false })
            }
            Some(url::Host::Domain(name)) => {
                let name = name.to_ascii_lowercase();
                if name.is_empty() {
                    return Err(SweepError::Invalid("the URL has no host".into()));
                }
                let listed_name = self.lists_name(&name);
                if !listed_name && name.trim_end_matches('.') != "localhost" {
                    return Err(SweepError::NotAllowed(name));
                }
                Ok(Candidate { host: name, port, ip: None, listed_name })
            }
        }
    }

    /// Whether every address `c`'s host resolved to may be targeted.
    pub fn check_addrs(&self, c: &Candidate, addrs: &[SocketAddr]) -> Result<(), SweepError> {
        if addrs.is_empty() {
            return Err(SweepError::Invalid(format!("host {} resolves to no address", c.host)));
        }
        for a in addrs {
            let ip = a.ip().to_canonical();
            let shown = if c.ip.is_some() { c.host.clone() } else { format!("{} → {ip}", c.host) };
            if self.lists_ip(ip) {
                continue;
            }
            if let Some(class) = never_class(ip) {
                return Err(SweepError::NotAllowed(format!("{shown} ({class})")));
            }
            if !(ip.is_loopback() || c.listed_name) {
                return Err(SweepError::NotAllowed(shown));
            }
        }
        Ok(())
    }

    /// Checks `base_url` and resolves its host once; the sweep connects only to the
    /// returned addresses (see the type's comment for the rules).
    pub async fn check(&self, base_url: &str) -> Result<Pin, SweepError> {
        let c = self.candidate(base_url)?;
        let addrs: Vec<SocketAddr> = match c.ip {
            Some(ip) => vec![SocketAddr::new(ip, c.port)],
            None => tokio::time::timeout(LOOKUP_TIMEOUT, tokio::net::lookup_host((c.host.as_str(), c.port)))
                .await
                .map_err(|_| SweepError::Invalid(format!("cannot resolve host {}: no answer within 10 s", c.host)))?
                .map_err(|e| SweepError::Invalid(format!("cannot resolve host {}: {e}", c.host)))?
                .collect(),
        };
        self.check_addrs(&c, &addrs)?;
        Ok(Pin { host: c.host, addrs })
    }
}

/// A metrics endpoint is user input like the target: each of `metrics` (the engine's and
/// the GPU exporters') gets the same check and is pinned to the addresses checked; a
/// refusal names its field. (None given: the target's own `/metrics`, on the target's
/// checked addresses.)
pub async fn pin_metrics(allow: &AllowList, metrics: &mut MetricsSpec) -> Result<(), SweepError> {
    for (field, urls) in [(METRICS_FIELD, &mut metrics.urls), (GPU_METRICS_FIELD, &mut metrics.gpu_urls)] {
        for m in urls.iter_mut() {
            m.pin = Some(allow.check(&m.url).await.map_err(|e| match e {
                SweepError::Invalid(msg) => SweepError::Field(SpecError::new(field, msg)),
                SweepError::NotAllowed(host) => SweepError::MetricsNotAllowed(MetricsRefused { field, host }),
                other => other,
            })?);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loadgen::MetricsUrl;
    use crate::sweeps::error::SweepError;

    fn addr(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[tokio::test]
    async fn only_loopback_and_listed_hosts() {
        let a = AllowList::loopback();
        assert_eq!(a.check("http://127.0.0.1:8090").await.unwrap().addrs, [addr("127.0.0.1:8090")]);
        assert!(a.check("http://localhost:8000/v1").await.unwrap().addrs.iter().all(|a| a.ip().is_loopback()));
        assert!(a.check("http://[::1]:8000").await.is_ok());
        // the URL parser reads every spelling of an address the way a client would
        assert_eq!(a.check("http://0x7f.1:9/").await.unwrap().addrs, [addr("127.0.0.1:9")]);
        assert!(matches!(a.check("http://10.0.0.5:8000").await, Err(SweepError::NotAllowed(h)) if h == "10.0.0.5"));
        assert!(matches!(a.check("http://example.com").await, Err(SweepError::NotAllowed(_))));
        assert!(matches!(a.check("https://127.0.0.1").await, Err(SweepError::Invalid(_))));
        assert!(matches!(a.check("http://").await, Err(SweepError::Invalid(_))));
        let b = AllowList { hosts: vec!["gpu-box".into()] };
        let c = b.candidate("http://GPU-box:8000").unwrap();
        assert!(c.listed_name && c.host == "gpu-box" && c.port == 8000);
        assert!(b.check_addrs(&c, &[addr("10.0.0.5:8000")]).is_ok(), "a listed name may be anywhere");
    }

    /// GPU exporters' URLs get the target's checks, are pinned, and a refusal names
    /// `gpu_metrics_urls` (the engine's URLs keep naming `metrics_urls`).
    #[tokio::test]
    async fn gpu_metrics_urls_are_checked_like_the_target_and_named() {
        let a = AllowList::loopback();
        let with = |engine: &str, gpu: &str| MetricsSpec {
            urls: vec![MetricsUrl { url: engine.into(), pin: None }],
            gpu_urls: vec![MetricsUrl { url: gpu.into(), pin: None }],
            ..MetricsSpec::default()
        };
        let mut m = with("http://127.0.0.1:8000/metrics", "http://localhost:9400/metrics");
        pin_metrics(&a, &mut m).await.unwrap();
        let pin = m.gpu_urls[0].pin.as_ref().unwrap();
        assert!(!pin.addrs.is_empty() && pin.addrs.iter().all(|x| x.ip().is_loopback()), "{pin:?}");
        assert_eq!(m.urls[0].pin.as_ref().unwrap().addrs, [addr("127.0.0.1:8000")]);
        for (url, forbidden) in [
            // addresses that are (or reach) somewhere never allowed
            ("http://169.254.169.254/metrics", true),
            ("http://[::ffff:169.254.169.254]/metrics", true),
            ("http://[64:ff9b::a9fe:a9fe]:9400/metrics", true),
            ("http://0.0.0.0:9400/metrics", true),
            // not loopback and not listed; a name not listed is not even looked up
            ("http://10.1.2.3:9400/metrics", true),
            ("http://dcgm.example:9400/metrics", true),
            // not a URL the target could be
            ("http://127.0.0.1:3205@evil.example/metrics", false),
            ("https://127.0.0.1:9400/metrics", false),
        ] {
            let e = pin_metrics(&a, &mut with("http://127.0.0.1:8000/metrics", url)).await.unwrap_err();
            assert_eq!(e.field(), Some(GPU_METRICS_FIELD), "{url}: {e}");
            assert_eq!(matches!(e, SweepError::MetricsNotAllowed(_)), forbidden, "{url}: {e}");
            if forbidden {
                assert!(e.to_string().starts_with("GPU metrics endpoint host "), "{e}");
            }
            // The same URL as an engine endpoint names its own field.
            let e = pin_metrics(&a, &mut with(url, "http://127.0.0.1:9400/metrics")).await.unwrap_err();
            assert_eq!(e.field(), Some(METRICS_FIELD), "{url}: {e}");
        }
    }

    #[tokio::test]
    async fn user_info_and_tricky_hosts_are_refused_before_any_connection() {
        let a = AllowList::loopback();
        for url in [
            // the host is evil.example: `127.0.0.1:3205` is a user name and password
            "http://127.0.0.1:3205@evil.example/",
            "http://[::1]@0.0.0.0:3208/",
            "http://localhost@169.254.169.254/",
            "http://user:pw@127.0.0.1:9/",
        ] {
            let e = a.check(url).await.unwrap_err();
            assert!(matches!(e, SweepError::Invalid(ref m) if m.contains("user name")), "{url}: {e}");
        }
        for (url, class) in [
            ("http://0.0.0.0:3208/", "unspecified"),
            ("http://0:3208/", "unspecified"),
            ("http://[::]:3208/", "unspecified"),
            ("http://169.254.169.254/latest/meta-data", "metadata"),
            ("http://[::ffff:169.254.169.254]/", "metadata"),
            ("http://[fd00:ec2::254]/", "metadata"),
            ("http://169.254.1.1/", "link-local"),
            ("http://[fe80::1]/", "link-local"),
            ("http://224.0.0.1/", "multicast"),
            ("http://[ff02::1]/", "multicast"),
            ("http://255.255.255.255/", "broadcast"),
            // NAT64 (RFC 6052 well-known prefix; RFC 8215 local-use prefix at /96 and /48)
            ("http://[64:ff9b::a9fe:a9fe]/", "metadata"),
            ("http://[64:ff9b::169.254.170.2]/", "metadata"),
            ("http://[64:ff9b:1::a9fe:a9fe]/", "metadata"),
            ("http://[64:ff9b:1:a9fe:a9:fe00::]/", "metadata"),
            ("http://[64:ff9b::a9fe:101]/", "link-local"),
            ("http://[64:ff9b::]/", "unspecified"),
            ("http://[64:ff9b::e000:1]/", "multicast"),
            ("http://[64:ff9b::7f00:1]/", "loopback"),
            ("http://[64:ff9b:1::7f00:1]/", "loopback"),
        ] {
            let e = a.check(url).await.unwrap_err();
            assert!(matches!(e, SweepError::NotAllowed(ref m) if m.contains(class)), "{url}: {e}");
        }
        // a listed name cannot lead to one of those either…
        let b = AllowList { hosts: vec!["gpu-box".into()] };
        let c = b.candidate("http://gpu-box/").unwrap();
        for bad in
            ["169.254.169.254:80", "0.0.0.0:80", "[fe80::1]:80", "[64:ff9b::a9fe:a9fe]:80", "[64:ff9b::7f00:1]:80"]
        {
            assert!(
                matches!(b.check_addrs(&c, &[addr("10.0.0.5:80"), addr(bad)]), Err(SweepError::NotAllowed(_))),
                "{bad}"
            );
        }
        // …nor `localhost` to anything but loopback
        let l = a.candidate("http://localhost:9/").unwrap();
        assert!(a.check_addrs(&l, &[addr("127.0.0.1:9"), addr("[::1]:9")]).is_ok());
        assert!(a.check_addrs(&l, &[addr("127.0.0.1:9"), addr("10.0.0.5:9")]).is_err());
        assert!(a.check_addrs(&l, &[addr("0.0.0.0:9")]).is_err());
        // a NAT64 address of an ordinary address is like any other address: listed or not
        assert!(
            matches!(a.check("http://[64:ff9b::a00:5]/").await, Err(SweepError::NotAllowed(h)) if h == "[64:ff9b::a00:5]")
        );
        assert_eq!(never_class("64:ff9b::a00:5".parse().unwrap()), None);
        assert_eq!(never_class("64:ff9b:2::a9fe:a9fe".parse().unwrap()), None, "outside the NAT64 prefixes");
        // only naming the address itself allows one
        let m = AllowList { hosts: vec!["169.254.169.254".into(), "[fe80::1]".into()] };
        assert!(m.check("http://169.254.169.254/").await.is_ok());
        assert!(m.check("http://[fe80::1]:8000/").await.is_ok());
        assert!(m.check("http://169.254.1.1/").await.is_err());
        // an unlisted name is not even looked up
        assert!(matches!(a.candidate("http://rebind.example:9/"), Err(SweepError::NotAllowed(_))));
    }
}
