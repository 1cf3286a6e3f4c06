//! The state every handler shares ([`AppState`]), cloned cheaply per request; the auth gate
//! gets its part, `auth::AuthState`, through `FromRef`.

use crate::ingest::pending::PendingImports;
use app::api::ImportPreviews;
use app::db::Db;
use axum::extract::FromRef;
use leptos::prelude::*;
use std::sync::Arc;

/// Everything a handler may need, cloned cheaply per request.
#[derive(Clone, FromRef)]
pub struct AppState {
    pub pool: Db,
    pub leptos_options: LeptosOptions,
    /// Largest accepted upload, in bytes (per file).
    pub max_upload_bytes: usize,
    /// Uploads waiting on their preview page.
    pub pending: Arc<PendingImports>,
    /// Sweeps started through the server.
    pub sweeps: Arc<crate::sweeps::Sweeps>,
    /// Who may read and write.
    pub auth: crate::auth::AuthMode,
    /// Failed sign-ins per user name (password guessing is slowed down), in the database.
    pub login_throttle: Arc<crate::auth::throttle::LoginThrottle>,
    /// The names this server answers to (`Host`); others get 421.
    pub hosts: Arc<crate::auth::hosts::AllowedHosts>,
    /// Which session cookie is set and read (`__Host-` behind an `https://` public address).
    pub cookies: crate::auth::CookieMode,
    /// Where the browser assets are read from (the binary, or `--site-root`).
    pub site: crate::site::Site,
    /// Plateau's own metrics, when `serve --metrics on` (`None`: no `/metrics`, nothing counted).
    pub metrics: Option<Arc<crate::observability::metrics::Metrics>>,
    /// The webhooks told about landed runs (none unless `serve --alert-webhook`).
    pub alerts: Arc<crate::alerts::Alerts>,
}

impl AppState {
    /// State with sweeps allowed against loopback only.
    pub fn new(pool: Db, leptos_options: LeptosOptions, max_upload_bytes: usize) -> Self {
        Self::with_allow_list(pool, leptos_options, max_upload_bytes, crate::sweeps::AllowList::loopback())
    }

    pub fn with_allow_list(
        pool: Db,
        leptos_options: LeptosOptions,
        max_upload_bytes: usize,
        allow: crate::sweeps::AllowList,
    ) -> Self {
        // Tests and benches build the site into a folder; `plateau serve` chooses (startup).
        let site = crate::site::Site::Dir(std::path::PathBuf::from(leptos_options.site_root.as_ref()));
        Self {
            sweeps: Arc::new(crate::sweeps::Sweeps::new(pool.clone(), allow)),
            alerts: Arc::new(crate::alerts::Alerts::none(pool.clone())),
            login_throttle: Arc::new(crate::auth::throttle::LoginThrottle::new(pool.clone())),
            pool,
            leptos_options,
            max_upload_bytes,
            pending: Arc::new(PendingImports::new(max_upload_bytes)),
            auth: crate::auth::AuthMode::Off,
            hosts: Arc::new(crate::auth::hosts::AllowedHosts::loopback()),
            cookies: crate::auth::CookieMode::Plain,
            site,
            metrics: None,
        }
    }

    /// Tells `alerts`' webhooks about landed runs, sweeps' included (at start-up: no sweep
    /// is running yet).
    pub fn with_alerts(mut self, alerts: Arc<crate::alerts::Alerts>, allow: crate::sweeps::AllowList) -> Self {
        self.sweeps = Arc::new(crate::sweeps::Sweeps::new(self.pool.clone(), allow).with_alerts(alerts.clone()));
        self.alerts = alerts;
        self
    }

    /// What server functions find in their context.
    pub(super) fn provide(&self) {
        super::headers::provide_request_nonce();
        provide_context(self.pool.clone());
        let previews: Arc<dyn ImportPreviews> = self.pending.clone();
        provide_context(previews);
    }
}
