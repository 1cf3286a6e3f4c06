//! Start-up: open the database, load the demo if asked, bind, and serve until Ctrl-C.

use crate::demo;
use crate::routes::{self, AppState};
use anyhow::Context;
use leptos::config::LeptosOptions;
use std::net::SocketAddr;
use std::path::PathBuf;

/// What `plateau serve` needs.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    pub addr: SocketAddr,
    pub db: PathBuf,
    pub site_root: PathBuf,
    pub demo: bool,
    pub fixtures: PathBuf,
    pub max_upload_bytes: usize,
    /// Hosts server-started sweeps may target.
    pub sweep_allow: crate::sweeps::AllowList,
}

/// The Leptos options for a site root; the output name matches what `.ci/build` writes.
pub fn leptos_options(site_root: &std::path::Path, addr: SocketAddr) -> LeptosOptions {
    LeptosOptions::builder()
        .output_name("plateau")
        .site_root(site_root.to_string_lossy().into_owned())
        .site_pkg_dir("pkg")
        .site_addr(addr)
        .build()
}

pub async fn serve(cfg: ServeConfig) -> anyhow::Result<()> {
    let pool = app::db::connect(&cfg.db)
        .await
        .with_context(|| format!("opening database {}", cfg.db.display()))?;
    tracing::info!(db = %cfg.db.display(), "database ready");
    let stale = app::db::interrupt_stale_sweeps(&pool).await?;
    if stale > 0 {
        tracing::warn!(runs = stale, "sweeps left running by a previous process are marked interrupted");
    }
    if cfg.demo {
        demo::load(&pool, &cfg.fixtures).await.context("loading the demo runs")?;
    }
    if !cfg.site_root.join("pkg").exists() {
        tracing::warn!(site_root = %cfg.site_root.display(), "no built site here: pages render, but without styles, charts or hydration; run .ci/build");
    }
    let state = AppState::with_allow_list(
        pool,
        leptos_options(&cfg.site_root, cfg.addr),
        cfg.max_upload_bytes,
        cfg.sweep_allow.clone(),
    );
    let listener = tokio::net::TcpListener::bind(cfg.addr)
        .await
        .with_context(|| format!("binding {}", cfg.addr))?;
    let local = listener.local_addr()?;
    tracing::info!("Plateau is serving http://{local}");
    axum::serve(listener, routes::router(state))
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    Ok(())
}
