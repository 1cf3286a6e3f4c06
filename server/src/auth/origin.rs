//! Cross-site request forgery defence for cookie-authenticated writes: the request's
//! `Origin` (or, failing that, its `Referer`) must name this very server, i.e. the same
//! host and port as its `Host` header. Pure functions over header values.
//!
//! The scheme is not compared with anything: behind a TLS proxy this server sees plain
//! HTTP while the browser says `https://`. It still takes part: `http`/`https` only, and
//! it decides the default port when the `Host` header has none. Browsers send `Origin` on
//! every cross-site POST, so a forged form never passes; `Origin: null` never does.

use axum::http::HeaderMap;

/// A URL's or a `Host` header's host (lower case, IPv6 with brackets) and explicit port.
pub(crate) fn split_authority(authority: &str) -> Option<(String, Option<u16>)> {
    if authority.is_empty() || authority.contains('@') {
        return None;
    }
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let (inside, after) = rest.split_once(']')?;
        let port = match after {
            "" => None,
            p => Some(p.strip_prefix(':')?),
        };
        (format!("[{}]", inside.to_ascii_lowercase()), port)
    } else {
        match authority.split_once(':') {
            Some((h, p)) => (h.to_ascii_lowercase(), Some(p)),
            None => (authority.to_ascii_lowercase(), None),
        }
    };
    if host.is_empty() || host.contains(|c: char| c.is_whitespace() || c == '/') {
        return None;
    }
    let port = match port {
        Some(p) => Some(p.parse::<u16>().ok()?),
        None => None,
    };
    Some((host, port))
}

/// Whether `url` (an `Origin` value like `https://host:port`, or a full `Referer` URL) is
/// on the server that received a request with this `Host` header.
pub fn same_origin(url: &str, host_header: &str) -> bool {
    let Some((scheme, rest)) = url.split_once("://") else { return false };
    let default_port = match scheme.to_ascii_lowercase().as_str() {
        "http" => 80,
        "https" => 443,
        _ => return false,
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let (Some((url_host, url_port)), Some((host, host_port))) =
        (split_authority(authority), split_authority(host_header))
    else {
        return false;
    };
    url_host == host && url_port.unwrap_or(default_port) == host_port.unwrap_or(default_port)
}

/// Whether a request's headers show it was sent by a page of this server: `Origin` if
/// present, else `Referer`; neither (or no `Host`) fails.
pub fn request_is_same_origin(headers: &HeaderMap) -> bool {
    let Some(host) = header(headers, "host") else { return false };
    match header(headers, "origin").or_else(|| header(headers, "referer")) {
        Some(url) => same_origin(url, host),
        None => false,
    }
}

/// Whether a request names a *foreign* origin (`Origin`, else `Referer`), or the browser
/// says it comes from another site (`Sec-Fetch-Site: cross-site`). A request naming none
/// is not foreign: a script (curl) sends neither. Used for `POST /login` and, with auth
/// off, for every write.
pub fn request_is_cross_site(headers: &HeaderMap) -> bool {
    if header(headers, "sec-fetch-site").is_some_and(|v| v.eq_ignore_ascii_case("cross-site")) {
        return true;
    }
    match header(headers, "origin").or_else(|| header(headers, "referer")) {
        Some(url) => !header(headers, "host").is_some_and(|host| same_origin(url, host)),
        None => false,
    }
}

/// The path and query of a same-origin `Referer`: where a refused form was sent from.
pub fn referer_path(headers: &HeaderMap) -> Option<String> {
    let referer = header(headers, "referer")?;
    if !same_origin(referer, header(headers, "host")?) {
        return None;
    }
    let rest = referer.split_once("://")?.1;
    let path = &rest[rest.find('/')?..];
    Some(path.split('#').next().unwrap_or("/").to_owned())
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// The value of cookie `name` in the request's `Cookie` headers.
pub fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all("cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_host_and_port_match() {
        assert!(same_origin("http://127.0.0.1:3000", "127.0.0.1:3000"));
        assert!(same_origin("http://LOCALHOST:3000", "localhost:3000"), "host case");
        assert!(same_origin("http://127.0.0.1:3000/runs?x=1#top", "127.0.0.1:3000"), "a referer");
        assert!(same_origin("https://plateau.example", "plateau.example"), "default ports");
        assert!(same_origin("http://plateau.example:80", "plateau.example"));
        assert!(same_origin("https://plateau.example", "plateau.example:443"));
        assert!(same_origin("http://[::1]:3000", "[::1]:3000"));
    }

    #[test]
    fn anything_else_does_not() {
        assert!(!same_origin("http://evil.example:3000", "127.0.0.1:3000"));
        assert!(!same_origin("http://127.0.0.1:3001", "127.0.0.1:3000"), "port");
        assert!(!same_origin("http://127.0.0.1", "127.0.0.1:3000"), "implied port 80");
        assert!(!same_origin("https://plateau.example", "plateau.example:80"), "https is 443");
        assert!(!same_origin("null", "127.0.0.1:3000"));
        assert!(!same_origin("", "127.0.0.1:3000"));
        assert!(!same_origin("ftp://127.0.0.1:3000", "127.0.0.1:3000"), "scheme");
        assert!(!same_origin("http://127.0.0.1:3000.evil.example", "127.0.0.1:3000"));
        assert!(!same_origin("http://127.0.0.1:3000@evil.example", "127.0.0.1:3000"));
        assert!(!same_origin("http://127.0.0.1.evil.example:3000", "127.0.0.1:3000"));
        assert!(!same_origin("http://[::1]:3000", "[::2]:3000"));
        assert!(!same_origin("http://127.0.0.1:3000", ""), "no host");
        assert!(!same_origin("http://127.0.0.1:99999", "127.0.0.1:99999"), "not a port");
    }

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, v.parse().unwrap());
        }
        h
    }

    #[test]
    fn origin_wins_over_referer_and_one_is_needed() {
        let host = ("host", "127.0.0.1:3000");
        assert!(request_is_same_origin(&headers(&[host, ("origin", "http://127.0.0.1:3000")])));
        assert!(request_is_same_origin(&headers(&[host, ("referer", "http://127.0.0.1:3000/upload")])));
        assert!(!request_is_same_origin(&headers(&[
            host,
            ("origin", "http://evil.example"),
            ("referer", "http://127.0.0.1:3000/upload")
        ])));
        assert!(!request_is_same_origin(&headers(&[host])), "neither header");
        assert!(!request_is_same_origin(&headers(&[("origin", "http://127.0.0.1:3000")])), "no host");
        assert!(!request_is_cross_site(&headers(&[host])));
        assert!(request_is_cross_site(&headers(&[host, ("origin", "http://evil.example")])));
        assert!(!request_is_cross_site(&headers(&[host, ("origin", "http://127.0.0.1:3000")])));
        assert!(request_is_cross_site(&headers(&[host, ("sec-fetch-site", "cross-site")])));
        assert!(request_is_cross_site(&headers(&[host, ("origin", "null")])));
        assert!(!request_is_cross_site(&headers(&[host, ("sec-fetch-site", "same-origin")])));
    }

    #[test]
    fn referer_path_only_from_this_server() {
        let host = ("host", "127.0.0.1:3000");
        let from = |r| referer_path(&headers(&[host, ("referer", r)]));
        assert_eq!(from("http://127.0.0.1:3000/upload?x=1#f").as_deref(), Some("/upload?x=1"));
        assert_eq!(from("http://127.0.0.1:3000").as_deref(), None);
        assert_eq!(from("http://evil.example/upload"), None);
    }

    #[test]
    fn cookies_are_found_among_others() {
        let h = headers(&[("cookie", "a=1; plateau_session=abc"), ("cookie", "b=2")]);
        assert_eq!(cookie(&h, "plateau_session"), Some("abc"));
        assert_eq!(cookie(&h, "b"), Some("2"));
        assert_eq!(cookie(&h, "plateau"), None);
    }
}
