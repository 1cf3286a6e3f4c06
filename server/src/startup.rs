//! Start-up: open the database, load the demo if asked, bind, and serve until Ctrl-C or
//! SIGTERM (`crate::listener`).

use crate::demo;
use crate::routes::{self, AppState};
use anyhow::Context;
use leptos::config::LeptosOptions;
use std::net::SocketAddr;

/// How long stopping sweeps get to store the level in progress before they are marked
/// interrupted regardless.
const SWEEP_STOP_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

/// What `plateau serve` needs.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    pub addr: SocketAddr,
    /// The database: a SQLite file or a PostgreSQL URL (`--db`, `PLATEAU_DB`).
    pub db: app::db::DbTarget,
    /// Where the browser assets come from (the binary, or `--site-root`).
    pub site: crate::site::Site,
    pub demo: bool,
    pub max_upload_bytes: usize,
    /// Hosts server-started sweeps may target.
    pub sweep_allow: crate::sweeps::AllowList,
    /// Who may read and write.
    pub auth: crate::auth::AuthMode,
    /// Host names this server answers to besides loopback and its bind address.
    pub allowed_hosts: Vec<String>,
    /// The address users reach the server at (its host is allowed).
    pub public_url: Option<String>,
    /// Connections served at once (`--max-connections`), before the open-file limit's say.
    pub max_connections: usize,
    /// Whether `/metrics` serves Plateau's own metrics.
    pub metrics: crate::observability::metrics::MetricsSwitch,
    /// Webhooks told about landed runs that fail the gate or start a new segment.
    pub alert_webhooks: Vec<String>,
}

/// The Leptos options for a site folder (tests and benches build one).
pub fn leptos_options(site_root: &std::path::Path, addr: SocketAddr) -> LeptosOptions {
    site_options(&crate::site::Site::Dir(site_root.to_path_buf()), addr)
}

/// The Leptos options for a site: the output name is the build's (`pkg/build-id`, written
/// by `.ci/build`), so pages name the content-hashed assets.
pub fn site_options(site: &crate::site::Site, addr: SocketAddr) -> LeptosOptions {
    LeptosOptions::builder()
        .output_name(site.output_name())
        .site_root(site.leptos_root())
        .site_pkg_dir("pkg")
        .site_addr(addr)
        .build()
}

pub async fn serve(cfg: ServeConfig) -> anyhow::Result<()> {
    let pool = app::db::open(&cfg.db).await.with_context(|| format!("opening database {}", cfg.db))?;
    tracing::info!(db = %cfg.db, backend = pool.backend().name(), "database ready");
    let stale = app::db::interrupt_stale_sweeps(&pool).await?;
    if stale > 0 {
        tracing::warn!(runs = stale, "sweeps whose lease lapsed (no heartbeat) are marked interrupted");
    }
    if cfg.demo {
        demo::load(&pool).await.context("loading the demo runs")?;
    }
    if cfg.site.is_built() {
        tracing::info!(site = %cfg.site.describe(), "browser assets");
    } else {
        tracing::warn!(site = %cfg.site.describe(), "no built site: pages render, but without styles, charts or hydration; run .ci/build");
    }
    warn_about_auth(&pool, cfg.auth, cfg.addr).await?;
    let mut state = AppState::with_allow_list(
        pool,
        site_options(&cfg.site, cfg.addr),
        cfg.max_upload_bytes,
        cfg.sweep_allow.clone(),
    );
    state.site = cfg.site.clone();
    state.auth = cfg.auth;
    if !cfg.alert_webhooks.is_empty() {
        let alerts = crate::alerts::Alerts::new(
            state.pool.clone(),
            &cfg.alert_webhooks,
            cfg.sweep_allow.clone(),
            cfg.public_url.clone(),
            crate::alerts::RetryPolicy::default(),
        )?;
        tracing::info!(webhooks = ?alerts.origins(), "alerts are posted to these webhooks");
        state = state.with_alerts(std::sync::Arc::new(alerts), cfg.sweep_allow.clone());
    }
    if cfg.metrics == crate::observability::metrics::MetricsSwitch::On {
        state.metrics = Some(std::sync::Arc::new(crate::observability::metrics::Metrics::new()));
        tracing::info!("Plateau's own metrics are served at /metrics");
    }
    let hosts = crate::auth::hosts::AllowedHosts::new(cfg.addr, &cfg.allowed_hosts, cfg.public_url.as_deref())
        .map_err(anyhow::Error::msg)?;
    state.hosts = std::sync::Arc::new(hosts);
    state.cookies = crate::auth::CookieMode::for_public_url(cfg.public_url.as_deref());
    let open_files = crate::listener::raise_open_file_limit();
    let limits = crate::listener::ServeLimits {
        max_connections: crate::listener::connection_limit(cfg.max_connections, open_files),
    };
    if limits.max_connections < cfg.max_connections {
        tracing::warn!(
            asked = cfg.max_connections,
            open_files,
            max_connections = limits.max_connections,
            "the open-file limit allows fewer connections than --max-connections asks for"
        );
    }
    let listener = tokio::net::TcpListener::bind(cfg.addr).await.with_context(|| format!("binding {}", cfg.addr))?;
    let local = listener.local_addr()?;
    tracing::info!(max_connections = limits.max_connections, "Plateau is serving http://{local}");
    let sweeps = state.sweeps.clone();
    let pool = state.pool.clone();
    // On Ctrl-C or SIGTERM: sweeps are told to stop first (their followers' streams then
    // end with them), then requests in flight get their grace, then the sweeps' last
    // writes, then the database is closed.
    let stopping = {
        let sweeps = sweeps.clone();
        async move {
            crate::listener::stop_signal().await;
            let n = sweeps.cancel_all();
            if n > 0 {
                tracing::info!(sweeps = n, "stopping: running sweeps keep their finished levels and read interrupted");
            }
        }
    };
    crate::listener::serve(listener, routes::router(state), limits, stopping).await?;
    let forced = sweeps.wait_stopped(SWEEP_STOP_GRACE).await;
    if forced > 0 {
        tracing::warn!(sweeps = forced, "sweeps that did not stop in time were marked interrupted");
    }
    pool.close().await;
    tracing::info!("stopped");
    Ok(())
}

/// Says how the server guards writes, and warns when that looks like a mistake: auth off
/// on an address other hosts can reach, or auth on with nobody able to sign in.
async fn warn_about_auth(pool: &app::db::Db, auth: crate::auth::AuthMode, addr: SocketAddr) -> anyhow::Result<()> {
    use crate::auth::{AuthMode, ReadAccess};
    match auth {
        AuthMode::Off if !addr.ip().is_loopback() => tracing::warn!(
            %addr,
            "auth is off on an address other machines can reach: anyone who can connect may upload, start sweeps and change data; \
             use --auth on (PLATEAU_AUTH=on) with `plateau user add` / `plateau token create`"
        ),
        AuthMode::Off => tracing::info!("auth is off: no login, every visitor may write (as \"local\")"),
        AuthMode::On { read } => {
            let reads = match read {
                ReadAccess::Public => "anyone may read",
                ReadAccess::Login => "reading needs a login too",
            };
            tracing::info!("auth is on: writing needs a login or an API token; {reads}");
            if app::db::list_users(pool).await?.is_empty() {
                tracing::warn!("auth is on but there are no users yet: add one with `plateau user add NAME`");
            }
        }
    }
    Ok(())
}
