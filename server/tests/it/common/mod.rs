//! Set-up shared by the integration tests: where the fixture files are, and [`TestApp`], the
//! real router on a random loopback port over a fresh database.
//!
//! Every HTTP test runs on every backend: `for app in TestApp::each().await { … }` (or
//! `TestApp::builder()…each()`) starts one app over a fresh SQLite file and one over a fresh
//! PostgreSQL schema (`app::db::testing`: `PLATEAU_TEST_PG`, which `.ci/pg start` exports;
//! with `CI` set and no `PLATEAU_TEST_PG` the test fails instead of skipping PostgreSQL).
//! Checks and set-ups that go around the app use `Db`'s functions or the backend-neutral
//! helpers of `app::db::testing` (`count`, `row_counts`, `execute`), never a backend's pool.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test set-up stops at the first failure")]

use app::db::testing::{self, TestDb};
use server::auth::hosts::AllowedHosts;
use server::auth::AuthMode;
use server::routes::{router, AppState};
use std::path::PathBuf;
use std::sync::Arc;

/// The shared fixture files: `PLATEAU_FIXTURES`, else `../shared/fixtures` beside the checkout.
pub fn fixtures() -> PathBuf {
    PathBuf::from(
        std::env::var("PLATEAU_FIXTURES")
            .unwrap_or_else(|_| format!("{}/../../shared/fixtures", env!("CARGO_MANIFEST_DIR"))),
    )
}

/// Every fixture file below [`fixtures`], as its path inside it (`/`-separated, sorted);
/// the notes (SOURCE.txt, README.md) left out.
pub fn fixture_files() -> Vec<String> {
    fn visit(dir: &std::path::Path, prefix: &str, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let rel = if prefix.is_empty() { name.clone() } else { format!("{prefix}/{name}") };
            if path.is_dir() {
                visit(&path, &rel, out);
            } else if name != "SOURCE.txt" && name != "README.md" && !prefix.is_empty() {
                out.push(rel);
            }
        }
    }
    let mut out = Vec::new();
    visit(&fixtures(), "", &mut out);
    out.sort();
    out
}

/// The fixture files Plateau does not import on their own, of one kind (`unread`, `refused`,
/// `extra`: attached to a result file of the same import), as
/// `server/tests/fixtures_unread.txt` lists them.
pub fn not_imported(kind: &str) -> Vec<String> {
    let text = std::fs::read_to_string(format!("{}/tests/fixtures_unread.txt", env!("CARGO_MANIFEST_DIR"))).unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once(' '))
        .filter(|(k, _)| *k == kind)
        .map(|(_, p)| p.trim().to_owned())
        .collect()
}

/// The fixture files Plateau imports on their own: all of them but [`not_imported`]'s.
pub fn imported_fixture_files() -> Vec<String> {
    let mut skip = not_imported("unread");
    skip.extend(not_imported("refused"));
    skip.extend(not_imported("extra"));
    fixture_files().into_iter().filter(|f| !skip.contains(f)).collect()
}

/// The load the user gives for a fixture file that does not record its own, as the form's
/// `concurrency` field does: LLMPerf's individual responses (5, from the matching summary),
/// AIPerf's per-request records (2, from the folder they were written in) and the CSV
/// exports of GenAI-Perf and AIPerf (not known: 10 and 4 stand in).
pub fn concurrency_for(rel: &str) -> Option<f64> {
    if rel.contains("individual") {
        Some(5.0)
    } else if rel.ends_with("genai_perf.csv") {
        Some(10.0)
    } else if rel.ends_with("profile_export_aiperf.csv") {
        Some(4.0)
    } else if rel.ends_with("concurrency2_profile_export.jsonl") {
        Some(2.0)
    } else if rel == "trtllm-bench/v0_statistics.log" || rel == "trtllm-bench/throughput_trt_tabs.log" {
        // trtllm-bench up to 0.17 wrote neither its concurrency nor the mean in flight.
        Some(128.0)
    } else {
        None
    }
}

/// Serves the real router with the real listener (`server::listener`: its timeouts and
/// connection bounds) on a fresh loopback port, on the calling test's runtime: the one
/// place the tests start a Plateau server (`state` gets the address, which the Leptos
/// options need); its base URL.
pub async fn serve(state: impl FnOnce(std::net::SocketAddr) -> AppState) -> (String, std::net::SocketAddr) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let state = state(addr);
    tokio::spawn(async move {
        let limits = server::listener::ServeLimits::default();
        server::listener::serve(listener, router(state), limits, std::future::pending()).await.unwrap()
    });
    (format!("http://{addr}"), addr)
}

/// The default state of a test server over `pool`: site files in `dir`, 1 MiB uploads.
pub fn state(pool: app::db::Db, dir: &std::path::Path, addr: std::net::SocketAddr) -> AppState {
    AppState::new(pool, server::startup::leptos_options(dir, addr), 1 << 20)
}

/// A running app: its address, its database (the same one the server uses) and a client
/// that does not follow redirects (tests assert them).
pub struct TestApp {
    pub base: String,
    pub addr: std::net::SocketAddr,
    pub dir: tempfile::TempDir,
    pub pool: app::db::Db,
    /// `sqlite` or `postgres`: which backend this app stores in.
    pub backend: &'static str,
    pub store: TestDb,
    pub client: reqwest::Client,
    /// The app's alerting (none unless the builder named webhooks).
    pub alerts: Arc<server::alerts::Alerts>,
}

impl TestApp {
    /// An app with the defaults (auth off, 1 MiB uploads, answering to loopback names) on
    /// each backend, one after the other: `for app in TestApp::each().await { … }`.
    pub async fn each() -> Vec<TestApp> {
        Self::builder().each().await
    }

    pub fn builder() -> AppBuilder {
        AppBuilder {
            max_upload_bytes: 1 << 20,
            auth: AuthMode::Off,
            allowed_hosts: Vec::new(),
            public_url: None,
            metrics: false,
            alert_webhooks: Vec::new(),
            alert_retry: server::alerts::RetryPolicy::default(),
        }
    }

    /// `GET path`: its status and body as text.
    pub async fn text(&self, path: &str) -> (reqwest::StatusCode, String) {
        let resp = self.client.get(self.url(path)).send().await.unwrap();
        (resp.status(), resp.text().await.unwrap())
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// The number of rows of `table`.
    pub async fn count(&self, table: &str) -> i64 {
        testing::count(&self.pool, table).await
    }
}

/// What differs between the tests' apps.
#[derive(Clone)]
pub struct AppBuilder {
    max_upload_bytes: usize,
    auth: AuthMode,
    allowed_hosts: Vec<String>,
    public_url: Option<String>,
    metrics: bool,
    alert_webhooks: Vec<String>,
    alert_retry: server::alerts::RetryPolicy,
}

impl AppBuilder {
    pub fn max_upload_bytes(mut self, bytes: usize) -> Self {
        self.max_upload_bytes = bytes;
        self
    }

    pub fn auth(mut self, auth: AuthMode) -> Self {
        self.auth = auth;
        self
    }

    /// Host names the app answers to besides loopback (`--allowed-host`).
    pub fn allowed_hosts(mut self, names: &[&str]) -> Self {
        self.allowed_hosts = names.iter().map(|n| (*n).to_owned()).collect();
        self
    }

    /// Plateau's own metrics at `/metrics` (`--metrics on`).
    pub fn metrics(mut self) -> Self {
        self.metrics = true;
        self
    }

    /// The public address of the app (`--public-url`).
    pub fn public_url(mut self, url: Option<&str>) -> Self {
        self.public_url = url.map(str::to_owned);
        self
    }

    /// Alert webhooks (`--alert-webhook`; loopback only) retried with `retry`.
    pub fn alert_webhooks(mut self, urls: &[String], retry: server::alerts::RetryPolicy) -> Self {
        self.alert_webhooks = urls.to_vec();
        self.alert_retry = retry;
        self
    }

    /// One app per backend (a fresh SQLite file, a fresh PostgreSQL schema), each on the
    /// calling test's runtime; the test runs its body on each in turn.
    pub async fn each(self) -> Vec<TestApp> {
        let mut apps = Vec::new();
        for store in testing::backends().await {
            apps.push(self.clone().spawn_on(store).await);
        }
        apps
    }

    /// Starts the app over `store` on the calling test's runtime.
    pub async fn spawn_on(self, store: TestDb) -> TestApp {
        let dir = tempfile::tempdir().unwrap();
        let pool = store.db.clone();
        let backend = store.name;
        let allow = server::sweeps::AllowList::loopback();
        let alerts = Arc::new(if self.alert_webhooks.is_empty() {
            server::alerts::Alerts::none(pool.clone())
        } else {
            let public = self.public_url.clone();
            server::alerts::Alerts::new(pool.clone(), &self.alert_webhooks, allow.clone(), public, self.alert_retry)
                .unwrap()
        });
        let (base, addr) = serve(|addr| {
            let mut state =
                AppState::new(pool.clone(), server::startup::leptos_options(dir.path(), addr), self.max_upload_bytes);
            state.auth = self.auth;
            if self.metrics {
                state.metrics = Some(Arc::new(server::observability::metrics::Metrics::new()));
            }
            state.cookies = server::auth::CookieMode::for_public_url(self.public_url.as_deref());
            if !self.allowed_hosts.is_empty() || self.public_url.is_some() {
                state.hosts =
                    Arc::new(AllowedHosts::new(addr, &self.allowed_hosts, self.public_url.as_deref()).unwrap());
            }
            state.with_alerts(alerts.clone(), allow)
        })
        .await;
        let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
        // Shown with a failing test's output: which backend it failed on.
        eprintln!("[{backend}] app at http://{addr}");
        TestApp { base, addr, dir, pool, backend, store, client, alerts }
    }
}
