//! The server under test ([`Target`]) and how a sweep reaches it: its API key ([`Secret`],
//! never printed), its connections, and the addresses its host was pinned to ([`Pin`]).

use app::domain::EndpointKind;
use std::fmt;
use std::net::SocketAddr;

/// An API key, held in memory for one sweep only. Prints as `***`, has no serde
/// implementation, and is sent nowhere but the `Authorization: Bearer` header.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The key itself; only the request builder and the redaction of error texts read it.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// The server under test and what each request asks of it.
#[derive(Clone, Debug)]
pub struct Target {
    /// e.g. `http://127.0.0.1:8080` (a trailing `/v1` is accepted). Plain HTTP only.
    pub base_url: String,
    pub model: String,
    pub api_key: Option<Secret>,
    pub endpoint: EndpointKind,
    pub max_tokens: u32,
    pub temperature: Option<f64>,
    /// Ask the server to generate exactly `max_tokens` (llama.cpp, vLLM, SGLang).
    pub ignore_eos: bool,
    /// Extra fields merged into every request body (they cannot turn streaming off).
    pub extra_body: serde_json::Map<String, serde_json::Value>,
    /// Kept-alive, pre-opened connections (the default) or a new one per request.
    pub connections: Connections,
    /// Where the host was resolved when the target was checked (server-started sweeps):
    /// requests connect there and nowhere else. `None`: the client resolves the name
    /// itself (CLI sweeps, which may target anything).
    pub pin: Option<Pin>,
}

/// How requests reach the target.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Connections {
    /// Connections are kept alive and reused, and opened before each level's clock starts
    /// (as many as the level will have in flight): a request's TTFT holds no TCP set-up,
    /// and a burst of C connects cannot overflow the server's listen queue (at C ≥ 256 it
    /// did, and SYN retries added a second to hundreds of TTFTs the server never saw).
    #[default]
    KeepAlive,
    /// A new connection for every request (`--new-connection-per-request`): to measure
    /// connection set-up on purpose.
    NewPerRequest,
}

impl Connections {
    pub fn describe(self) -> &'static str {
        match self {
            Self::KeepAlive => "connections kept alive, opened before each level",
            Self::NewPerRequest => "a new connection per request",
        }
    }
}

/// The addresses a target's host resolved to when the allow-list checked them. The
/// sweep's client connects only to these (no second DNS look-up, so an answer that
/// changes between the check and the connection changes nothing) and bypasses proxies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pin {
    /// The URL's host, as the client sees it (a name, or an IP address).
    pub host: String,
    pub addrs: Vec<SocketAddr>,
}

impl Target {
    /// The full URL of the endpoint.
    pub fn url(&self) -> String {
        let base = self.base_url.trim_end_matches('/');
        let base = base.strip_suffix("/v1").unwrap_or(base);
        format!("{base}{}", self.endpoint.path())
    }

    /// `GET /v1/models` of the same server: what opens connections before a level (every
    /// OpenAI-compatible server answers it without running the model).
    pub fn models_url(&self) -> String {
        let base = self.base_url.trim_end_matches('/');
        let base = base.strip_suffix("/v1").unwrap_or(base);
        format!("{base}/v1/models")
    }
}

/// `text` with every occurrence of the key replaced by `***`.
pub(crate) fn redact(text: &str, key: Option<&Secret>) -> String {
    match key {
        Some(k) if !k.expose().is_empty() => text.replace(k.expose(), "***"),
        _ => text.to_owned(),
    }
}
