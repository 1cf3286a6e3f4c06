//! DNS-rebinding defence: the `Host` header of every request must be one of this server's
//! names, else the request is refused with `421 Misdirected Request` before anything else
//! looks at it.
//!
//! A page on `evil.example` whose name the attacker later points at 127.0.0.1 is, for the
//! browser, still `evil.example`: its requests reach a loopback server with
//! `Host: evil.example` and would pass every same-origin check. Refusing unknown names
//! closes that door. Allowed, with any port:
//! - loopback: `localhost`, any `127.x.x.x`, `[::1]`;
//! - the address the server is bound to; when bound to every interface (`0.0.0.0`, `::`),
//!   any IP address (a rebinding attack always arrives under a *name*);
//! - the host of `--public-url`, and every `--allowed-host` (`PLATEAU_ALLOWED_HOSTS`).

use super::origin::split_authority;
use super::AuthState;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;
use std::net::{IpAddr, SocketAddr};

/// The names this server answers to.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AllowedHosts {
    /// Lower-case host names (no port), IPv6 in brackets.
    names: Vec<String>,
    /// The bound address, when it is one address.
    bind_ip: Option<IpAddr>,
    /// Bound to every interface: any IP address is one of ours.
    any_ip: bool,
}

/// A host as configured: lower case, no port, no trailing dot, IPv6 in brackets.
fn normalise(name: &str) -> Option<String> {
    let name = name.trim();
    let (host, _) = split_authority(name)?;
    let host = host.trim_end_matches('.').to_owned();
    (!host.is_empty()).then_some(host)
}

fn ip_of(host: &str) -> Option<IpAddr> {
    let bare = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
    bare.parse::<IpAddr>().ok().map(|ip| ip.to_canonical())
}

impl AllowedHosts {
    /// Loopback names only (what tests and a default `serve` on 127.0.0.1 need).
    pub fn loopback() -> Self {
        Self::default()
    }

    /// The names of a server bound to `bind`, with `--allowed-host` names and the host of
    /// `--public-url`. A bad name or URL is an error naming it.
    pub fn new(bind: SocketAddr, allowed: &[String], public_url: Option<&str>) -> Result<Self, String> {
        let mut names = Vec::new();
        for a in allowed.iter().map(|a| a.trim()).filter(|a| !a.is_empty()) {
            names.push(normalise(a).ok_or_else(|| format!("--allowed-host {a:?} is not a host name"))?);
        }
        if let Some(u) = public_url.map(str::trim).filter(|u| !u.is_empty()) {
            let url = url::Url::parse(u).map_err(|e| format!("--public-url {u:?} is not a URL: {e}"))?;
            if !matches!(url.scheme(), "http" | "https") {
                return Err(format!("--public-url {u:?} must start with http:// or https://"));
            }
            let host = url.host_str().ok_or_else(|| format!("--public-url {u:?} has no host"))?;
            names.push(normalise(host).ok_or_else(|| format!("--public-url {u:?} has no usable host"))?);
        }
        let ip = bind.ip().to_canonical();
        Ok(Self { names, bind_ip: (!ip.is_unspecified()).then_some(ip), any_ip: ip.is_unspecified() })
    }

    /// Whether a request with this `Host` header value is for this server.
    pub fn allows(&self, host_header: &str) -> bool {
        let Some(host) = normalise(host_header) else {
            return false;
        };
        if host == "localhost" {
            return true;
        }
        if let Some(ip) = ip_of(&host) {
            return ip.is_loopback()
                || self.any_ip
                || self.bind_ip == Some(ip)
                || self.names.iter().any(|n| ip_of(n) == Some(ip));
        }
        self.names.contains(&host)
    }
}

/// The middleware: refuses a request whose `Host` (or HTTP/2 authority) is not allowed.
pub async fn check(State(state): State<AuthState>, req: Request<Body>, next: Next) -> Response {
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(str::to_owned)
        .or_else(|| req.uri().authority().map(|a| a.as_str().to_owned()));
    match host {
        Some(h) if state.hosts.allows(&h) => next.run(req).await,
        host => {
            let shown: String = host.as_deref().unwrap_or("").chars().filter(|c| !c.is_control()).take(200).collect();
            tracing::warn!(host = %shown, "request refused: the Host is not one of this server's names");
            let message = format!(
                "Host {shown:?} is not a name of this server. If it should be, start Plateau with \
                 --allowed-host {shown} (or --public-url); loopback names always work."
            );
            if req.uri().path().starts_with("/api/") || req.uri().path().starts_with("/_fn/") {
                (StatusCode::MISDIRECTED_REQUEST, Json(json!({ "error": message }))).into_response()
            } else {
                (StatusCode::MISDIRECTED_REQUEST, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], message)
                    .into_response()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_names_with_any_port() {
        let h = AllowedHosts::loopback();
        for ok in [
            "localhost",
            "localhost:3000",
            "LOCALHOST:1",
            "127.0.0.1",
            "127.0.0.1:3000",
            "127.1.2.3:80",
            "[::1]:3000",
            "[::1]",
            "localhost.",
        ] {
            assert!(h.allows(ok), "{ok}");
        }
        for bad in [
            "evil.example",
            "evil.example:3000",
            "10.0.0.5:3000",
            "",
            "127.0.0.1.evil.example",
            "localhost.evil.example",
            "a@localhost",
            "[::2]:3000",
            "0.0.0.0:3000",
        ] {
            assert!(!h.allows(bad), "{bad}");
        }
    }

    #[test]
    fn the_bind_address_public_url_and_allowed_hosts() {
        let h = AllowedHosts::new(
            "10.0.0.5:3000".parse().unwrap(),
            &["Plateau.Lan".into(), "gpu-box:8080".into()],
            Some("https://plateau.example/base"),
        )
        .unwrap();
        for ok in [
            "10.0.0.5:3000",
            "10.0.0.5",
            "plateau.lan:3000",
            "gpu-box",
            "plateau.example",
            "plateau.example:443",
            "localhost:3000",
        ] {
            assert!(h.allows(ok), "{ok}");
        }
        for bad in ["10.0.0.6:3000", "evil.example", "example"] {
            assert!(!h.allows(bad), "{bad}");
        }
        let any = AllowedHosts::new("0.0.0.0:3000".parse().unwrap(), &[], None).unwrap();
        assert!(any.allows("192.168.1.20:3000") && any.allows("[fd00::1]:3000"), "bound everywhere: any address");
        assert!(!any.allows("rebind.example:3000"), "…but no unknown name");
        assert!(AllowedHosts::new("127.0.0.1:1".parse().unwrap(), &["a/b".into()], None).is_err());
        assert!(AllowedHosts::new("127.0.0.1:1".parse().unwrap(), &[], Some("plateau.example")).is_err());
        assert!(AllowedHosts::new("127.0.0.1:1".parse().unwrap(), &[], Some("ftp://plateau.example")).is_err());
    }
}
