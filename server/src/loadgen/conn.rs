//! The load generator's connections to the target: opened, kept and handed out by Plateau
//! itself ([`Conns`]), one HTTP/1.1 connection per request in flight.
//!
//! Why not reqwest's pool (as before): hyper-util's pool takes a connection back from a
//! task of its own once the response body has ended, and a request made the moment the
//! previous one ended races that hand-back; when it loses, it opens a new connection and
//! waits for it on its own clock (hyperium/hyper#4134). On a busy machine a level's
//! requests opened a new connection 7 times in 8. Here the request that read a body to
//! its end gives the connection back itself, before its task ends, so the next request
//! (of that slot or any other) always finds it: after the connections opened before a
//! level ([`Conns::fill`]), a closed-loop level opens none unless the server closed one.
//!
//! What stays the same: the addresses checked by the allow-list are the only ones
//! connected to ([`super::target::Pin`]); no proxy is ever used (a proxy would sit in
//! every measured latency); `https://` targets get rustls with the Mozilla roots; a
//! connection's set-up (TCP, TLS, HTTP handshake) is timed and charged to the request that
//! waited for it ([`super::phases`]).

use super::error::LoadgenError;
use super::phases::SentBody;
use super::target::{Connections, Target};
use hyper::client::conn::http1::{self, SendRequest};
use hyper_util::rt::TokioIo;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};
use tokio::net::TcpStream;
use tokio_rustls::rustls;

/// A connection that could not be opened: where to, and why.
#[derive(Debug)]
pub struct ConnectError(pub String);

/// One HTTP/1.1 connection, ready for a request.
pub struct Conn {
    sender: SendRequest<SentBody>,
    /// Taken from the idle set (opened for an earlier request or before the level).
    pub reused: bool,
}

impl Conn {
    /// Sends `request` on this connection; the answer's head, its body to be read.
    pub async fn send(
        &mut self,
        request: http::Request<SentBody>,
    ) -> Result<http::Response<hyper::body::Incoming>, hyper::Error> {
        self.sender.send_request(request).await
    }
}

/// The target's origin as requests reach it.
#[derive(Clone, Debug)]
struct Origin {
    /// The host for the TLS server name and the address look-up (no brackets).
    host: String,
    port: u16,
    /// The `Host` header: the URL's host and any explicit port.
    authority: String,
    tls: bool,
}

/// The connections of one sweep: idle ones kept (most recently used first) when
/// connections are kept alive, a new one per request otherwise.
pub struct Conns {
    origin: Origin,
    /// The checked addresses (server-started sweeps); `None`: looked up per connect.
    pinned: Option<Vec<SocketAddr>>,
    keep_alive: bool,
    connect_timeout: Duration,
    idle: Mutex<Vec<SendRequest<SentBody>>>,
}

impl std::fmt::Debug for Conns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Conns")
            .field("origin", &self.origin)
            .field("keep_alive", &self.keep_alive)
            .field("idle", &self.idle_count())
            .finish()
    }
}

impl Conns {
    /// The connections to `target`'s origin; nothing is opened yet.
    pub fn new(target: &Target, connect_timeout: Duration) -> Result<Self, LoadgenError> {
        let url = url::Url::parse(&target.url())
            .map_err(|e| LoadgenError::InvalidSpec(format!("the base URL cannot be read: {e}")))?;
        let tls = match url.scheme() {
            "http" => false,
            "https" => true,
            other => return Err(LoadgenError::InvalidSpec(format!("the base URL's scheme {other:?} is not http(s)"))),
        };
        let host = match url.host() {
            Some(url::Host::Domain(d)) => d.to_owned(),
            Some(url::Host::Ipv4(a)) => a.to_string(),
            Some(url::Host::Ipv6(a)) => a.to_string(),
            None => return Err(LoadgenError::InvalidSpec("the base URL has no host".into())),
        };
        let port = url.port_or_known_default().unwrap_or(if tls { 443 } else { 80 });
        let shown = url.host_str().unwrap_or(&host);
        let authority = match url.port() {
            Some(p) => format!("{shown}:{p}"),
            None => shown.to_owned(),
        };
        Ok(Self {
            origin: Origin { host, port, authority, tls },
            pinned: target.pin.as_ref().map(|p| p.addrs.clone()),
            keep_alive: target.connections == Connections::KeepAlive,
            connect_timeout,
            idle: Mutex::new(Vec::new()),
        })
    }

    /// The `Host` header of every request.
    pub fn authority(&self) -> &str {
        &self.origin.authority
    }

    /// Idle connections kept for the next requests.
    pub fn idle_count(&self) -> usize {
        self.idle.lock().map_or(0, |v| v.len())
    }

    /// A connection for one request: an idle one still open, else a new one, with how long
    /// opening it took (`None`: reused).
    pub async fn take(&self) -> Result<(Conn, Option<Duration>), ConnectError> {
        while let Some(mut sender) = self.pop_idle() {
            // Ready once the connection has finished with its last answer (the request
            // that gave it back read that body to its end); an error: the server closed it.
            if !sender.is_closed() && sender.ready().await.is_ok() {
                return Ok((Conn { sender, reused: true }, None));
            }
        }
        let started = Instant::now();
        let conn = self.open().await?;
        Ok((conn, Some(started.elapsed())))
    }

    /// A new connection, never an idle one, with how long opening it took: for a request
    /// sent again after a kept connection closed under it.
    pub async fn take_new(&self) -> Result<(Conn, Duration), ConnectError> {
        let started = Instant::now();
        let conn = self.open().await?;
        Ok((conn, started.elapsed()))
    }

    /// Keeps `conn` for the next request. Only a connection whose last answer was read to
    /// its end comes back here, and only when connections are kept alive (otherwise it is
    /// dropped, which closes it).
    pub fn give_back(&self, conn: Conn) {
        if !self.keep_alive || conn.sender.is_closed() {
            return;
        }
        if let Ok(mut idle) = self.idle.lock() {
            idle.push(conn.sender);
        }
    }

    /// Opens connections, all at once, until `n` are idle (kept alive only): the level that
    /// follows starts on open connections. A failure here is the level's to find.
    pub async fn fill(&self, n: usize) {
        if !self.keep_alive {
            return;
        }
        let missing = n.saturating_sub(self.idle_count());
        let opened = futures_util::future::join_all((0..missing).map(|_| self.open())).await;
        for conn in opened.into_iter().flatten() {
            self.give_back(conn);
        }
    }

    /// Closes every idle connection (a level has ended; see `Runner::end_telemetry`).
    pub fn close_idle(&self) {
        if let Ok(mut idle) = self.idle.lock() {
            idle.clear();
        }
    }

    fn pop_idle(&self) -> Option<SendRequest<SentBody>> {
        self.idle.lock().ok()?.pop()
    }

    /// TCP (to a checked address when pinned), TLS for `https://`, the HTTP/1.1 handshake;
    /// the connection's own task spawned. Bounded by the connect timeout.
    async fn open(&self) -> Result<Conn, ConnectError> {
        let o = &self.origin;
        let opening = async {
            let tcp = self.tcp().await?;
            let _ = tcp.set_nodelay(true);
            if o.tls {
                let name = rustls::pki_types::ServerName::try_from(o.host.clone())
                    .map_err(|e| ConnectError(format!("{} is not a TLS server name: {e}", o.host)))?;
                let stream = tokio_rustls::TlsConnector::from(tls_config())
                    .connect(name, tcp)
                    .await
                    .map_err(|e| ConnectError(format!("TLS with {}:{}: {e}", o.host, o.port)))?;
                handshake(TokioIo::new(stream)).await
            } else {
                handshake(TokioIo::new(tcp)).await
            }
        };
        let sender = tokio::time::timeout(self.connect_timeout, opening).await.map_err(|_| {
            ConnectError(format!(
                "no connection to {}:{} within {:.1} s",
                o.host,
                o.port,
                self.connect_timeout.as_secs_f64()
            ))
        })??;
        Ok(Conn { sender, reused: false })
    }

    async fn tcp(&self) -> Result<TcpStream, ConnectError> {
        let o = &self.origin;
        let addrs: Vec<SocketAddr> = match &self.pinned {
            Some(addrs) => addrs.clone(),
            None => tokio::net::lookup_host((o.host.as_str(), o.port))
                .await
                .map_err(|e| ConnectError(format!("looking up {}: {e}", o.host)))?
                .collect(),
        };
        let mut last = None;
        for addr in addrs {
            match TcpStream::connect(addr).await {
                Ok(s) => return Ok(s),
                Err(e) => last = Some(format!("connecting to {addr}: {e}")),
            }
        }
        Err(ConnectError(last.unwrap_or_else(|| format!("{} has no address", o.host))))
    }
}

async fn handshake<T>(io: TokioIo<T>) -> Result<SendRequest<SentBody>, ConnectError>
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (sender, connection) = http1::handshake(io).await.map_err(|e| ConnectError(format!("HTTP handshake: {e}")))?;
    // The connection's task ends when the server closes it, or when every sender is gone.
    tokio::spawn(async move {
        if let Err(e) = connection.await {
            tracing::debug!(error = %e, "target connection ended");
        }
    });
    Ok(sender)
}

/// rustls with the Mozilla roots (the same trust as the webhooks' client), HTTP/1.1.
fn tls_config() -> Arc<rustls::ClientConfig> {
    static CONFIG: OnceLock<Arc<rustls::ClientConfig>> = OnceLock::new();
    Arc::clone(CONFIG.get_or_init(|| {
        let roots = rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
        let mut config =
            rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
                .with_safe_default_protocol_versions()
                .map(|b| b.with_root_certificates(roots).with_no_client_auth())
                .unwrap_or_else(|_| {
                    rustls::ClientConfig::builder()
                        .with_root_certificates(rustls::RootCertStore::empty())
                        .with_no_client_auth()
                });
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Arc::new(config)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loadgen::target::Pin;
    use app::domain::EndpointKind;

    fn target(url: &str) -> Target {
        Target {
            base_url: url.into(),
            model: "m".into(),
            api_key: None,
            endpoint: EndpointKind::Chat,
            max_tokens: 8,
            temperature: None,
            ignore_eos: false,
            extra_body: serde_json::Map::new(),
            connections: Connections::KeepAlive,
            pin: None,
        }
    }

    #[test]
    fn the_origin_keeps_the_urls_host_and_port_for_the_host_header() {
        let c = Conns::new(&target("http://[::1]:8080/v1"), Duration::from_secs(1)).unwrap();
        assert_eq!((c.authority(), c.origin.host.as_str(), c.origin.port), ("[::1]:8080", "::1", 8080));
        let c = Conns::new(&target("https://api.example.com"), Duration::from_secs(1)).unwrap();
        assert_eq!((c.authority(), c.origin.port, c.origin.tls), ("api.example.com", 443, true));
        assert!(Conns::new(&target("ftp://x"), Duration::from_secs(1)).is_err());
    }

    #[tokio::test]
    async fn a_pinned_target_connects_to_its_checked_address_only() {
        // The name does not resolve; the pin is where the connection goes.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let mut t = target("http://sweep-target.invalid:1");
        t.pin = Some(Pin { host: "sweep-target.invalid".into(), addrs: vec![addr] });
        let conns = Conns::new(&t, Duration::from_secs(5)).unwrap();
        let accept = tokio::spawn(async move { listener.accept().await.map(|_| ()) });
        let (conn, took) = conns.take().await.unwrap();
        assert!(!conn.reused && took.is_some());
        accept.await.unwrap().unwrap();
        assert_eq!(conns.authority(), "sweep-target.invalid:1");
    }

    #[tokio::test]
    async fn a_refused_connection_names_the_address() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        drop(listener);
        let conns = Conns::new(&target(&format!("http://{addr}")), Duration::from_secs(5)).unwrap();
        let Err(ConnectError(message)) = conns.take().await else { panic!("nothing listens there") };
        assert!(message.starts_with(&format!("connecting to {addr}: ")), "{message}");
    }

    #[tokio::test]
    async fn tls_to_a_server_that_speaks_none_fails_as_a_connect_error() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            if let Ok((mut s, _)) = listener.accept().await {
                let _ = s.write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n").await;
            }
        });
        let conns = Conns::new(&target(&format!("https://localhost:{}", addr.port())), Duration::from_secs(5)).unwrap();
        let Err(ConnectError(message)) = conns.take().await else { panic!("no TLS there") };
        assert!(message.starts_with(&format!("TLS with localhost:{}: ", addr.port())), "{message}");
    }
}
