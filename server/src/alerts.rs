//! Alerts to webhooks (`plateau serve --alert-webhook URL`, repeatable): when a run lands
//! (an import, a sweep that completes, a live run finished through the API) that the
//! regression gate fails against its configuration's history, or whose landing reveals a
//! new change point in that history, each webhook gets a JSON POST
//! (`app::domain::analysis::alerts::Alert::payload`, Slack-compatible `text` included).
//!
//! - Never in the way: [`Alerts::landed`] spawns the work and returns; the import or the
//!   sweep has already answered.
//! - Checked like sweep targets: a webhook's host must pass the sweep allow-list
//!   (`--sweep-allow`; loopback by default; metadata, link-local and unspecified
//!   addresses refused), at start-up and again at each delivery, which connects only to
//!   the addresses checked then (DNS pinned), through no proxy of the environment, and
//!   follows no redirect. `http` and `https`.
//! - Each webhook on its own: an alert goes to all of them at once, so one that hangs or
//!   retries delays no other.
//! - Retried with back-off ([`RetryPolicy`]: 4 attempts, 1 s, 4 s, 16 s apart, 10 s per
//!   attempt); each delivery and its outcome recorded (`db::alerts`) and shown on the run
//!   page, where a person acknowledges it; an acknowledged or already delivered alert is
//!   not sent again.
//! - A webhook's URL is a secret (Slack's path is its key): only its origin and a short
//!   digest of the whole URL (to tell two webhooks of one origin apart) are logged, stored
//!   or shown.

use crate::sweeps::allow::AllowList;
use crate::sweeps::error::SweepError;
use app::db::{self, Db};
use app::domain::analysis::alerts::{Alert, DeliveryStatus};
use app::domain::analysis::changepoint::Settings;
use app::domain::analysis::regression::against_history;
use app::domain::analysis::thresholds::Thresholds;
use app::domain::RunId;
use sha2::Digest;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// Most webhooks one server posts to.
pub const MAX_WEBHOOKS: usize = 8;

/// Runs of a configuration read to look for change points when a run lands.
pub const CHANGE_RUNS: usize = 100;

/// How a delivery is retried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all (the first included).
    pub attempts: u32,
    /// Wait before the second attempt; each later wait is `factor` times the one before.
    pub first_delay: Duration,
    pub factor: u32,
    /// Longest one attempt may take (connect, send, answer).
    pub timeout: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self { attempts: 4, first_delay: Duration::from_secs(1), factor: 4, timeout: Duration::from_secs(10) }
    }
}

/// A webhook: its URL (secret) and its origin (shown).
#[derive(Clone)]
pub struct Webhook {
    url: url::Url,
    origin: String,
}

impl std::fmt::Debug for Webhook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the path or the query: they often carry the webhook's key.
        f.debug_struct("Webhook").field("origin", &self.origin).finish()
    }
}

/// Why a webhook was refused.
#[derive(Debug, thiserror::Error)]
pub enum AlertError {
    #[error("--alert-webhook: {0}")]
    Invalid(String),
    #[error("--alert-webhook: {0}")]
    NotAllowed(String),
}

impl Webhook {
    /// Parses and checks what needs no look-up: `http` or `https`, no user name or
    /// password, a host the allow-list may resolve.
    pub fn parse(text: &str, allow: &AllowList) -> Result<Self, AlertError> {
        let url = url::Url::parse(text.trim()).map_err(|e| AlertError::Invalid(format!("not a valid URL: {e}")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(AlertError::Invalid("the URL must start with http:// or https://".into()));
        }
        // Several webhooks often share an origin (one per Slack channel): a short digest of
        // the whole URL tells them apart without saying anything of its secret.
        let digest = sha2::Sha256::digest(url.as_str().as_bytes());
        let tag: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
        let origin = format!("{} #{tag}", url.origin().ascii_serialization());
        // The host rules are the sweep targets' (`AllowList::candidate` wants http).
        let mut as_http = url.clone();
        as_http.set_scheme("http").map_err(|()| AlertError::Invalid("the URL has no host".into()))?;
        if url.port().is_none() {
            let port = url.port_or_known_default();
            as_http.set_port(port).map_err(|()| AlertError::Invalid("the URL has no host".into()))?;
        }
        let refused = |e: SweepError| match e {
            SweepError::NotAllowed(h) => AlertError::NotAllowed(format!(
                "host {h} is not in the allow-list (loopback only unless --sweep-allow names it)"
            )),
            other => AlertError::Invalid(other.to_string().replace("give the key as api_key", "remove it")),
        };
        let c = allow.candidate(as_http.as_str()).map_err(refused)?;
        // An address needs no look-up: judged now (a name is judged at each delivery).
        if let Some(ip) = c.ip {
            allow.check_addrs(&c, &[SocketAddr::new(ip, c.port)]).map_err(refused)?;
        }
        Ok(Self { url, origin })
    }

    /// What is stored and shown: the origin and a digest of the URL
    /// (`https://hooks.slack.com #1a2b3c4d`).
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// Resolves the host and checks every address against the allow-list.
    async fn pin(&self, allow: &AllowList) -> Result<(String, Vec<SocketAddr>), String> {
        let mut as_http = self.url.clone();
        let _ = as_http.set_scheme("http");
        let _ = as_http.set_port(self.url.port_or_known_default());
        let pin = allow.check(as_http.as_str()).await.map_err(|e| e.to_string())?;
        Ok((pin.host, pin.addrs))
    }
}

/// The server's alerting: its webhooks and what it needs to judge a landed run.
pub struct Alerts {
    pool: Db,
    hooks: Vec<Webhook>,
    allow: AllowList,
    /// The server's public address, for the alert's link (a path without one).
    public_url: Option<String>,
    retry: RetryPolicy,
}

impl std::fmt::Debug for Alerts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Alerts").field("hooks", &self.hooks).finish_non_exhaustive()
    }
}

impl Alerts {
    /// No webhooks: [`Alerts::landed`] does nothing.
    pub fn none(pool: Db) -> Self {
        Self { pool, hooks: Vec::new(), allow: AllowList::loopback(), public_url: None, retry: RetryPolicy::default() }
    }

    /// The webhooks `urls`, each checked against `allow` (a refused one stops the server
    /// from starting: an alert that silently never arrives is worse).
    pub fn new(
        pool: Db,
        urls: &[String],
        allow: AllowList,
        public_url: Option<String>,
        retry: RetryPolicy,
    ) -> Result<Self, AlertError> {
        if urls.len() > MAX_WEBHOOKS {
            return Err(AlertError::Invalid(format!("{} webhooks given; at most {MAX_WEBHOOKS}", urls.len())));
        }
        let hooks = urls.iter().map(|u| Webhook::parse(u, &allow)).collect::<Result<Vec<_>, _>>()?;
        Ok(Self { pool, hooks, allow, public_url, retry })
    }

    /// The webhooks' origins.
    pub fn origins(&self) -> Vec<&str> {
        self.hooks.iter().map(Webhook::origin).collect()
    }

    /// Runs just stored: judged and alerted in the background (the caller does not wait).
    /// Returns the task, for tests that wait for the deliveries.
    pub fn landed(self: &Arc<Self>, runs: Vec<RunId>) -> Option<tokio::task::JoinHandle<()>> {
        if self.hooks.is_empty() || runs.is_empty() {
            return None;
        }
        let this = Arc::clone(self);
        Some(tokio::spawn(async move {
            for run in runs {
                match this.alerts_for(&run).await {
                    Ok(alerts) => {
                        for a in alerts {
                            this.deliver(&a).await;
                        }
                    }
                    Err(e) => tracing::warn!(run = %run, error = %e, "could not judge the run for alerts"),
                }
            }
        }))
    }

    /// What `run` alerts: the gate's failure against its history, and the change points
    /// that its landing reveals (found with it, not without it).
    pub async fn alerts_for(&self, run: &RunId) -> Result<Vec<Alert>, db::DbError> {
        let run = db::get_run(&self.pool, run).await?;
        let t = Thresholds::default();
        let history = db::history(&self.pool, &run, t.window).await?;
        let mut out: Vec<Alert> = Alert::from_check(&against_history(&run, &history, &t), &run).into_iter().collect();
        let series = db::series(&self.pool, &run, CHANGE_RUNS).await?;
        let slos = db::list_slos(&self.pool).await?;
        let settings = Settings::default();
        let with = app::domain::analysis::changes::history_changes(&series, &run, &slos, &settings);
        let without: Vec<app::domain::Run> = series.iter().filter(|r| r.id != run.id).cloned().collect();
        let before: Vec<String> = app::domain::analysis::changes::history_changes(&without, &run, &slos, &settings)
            .iter()
            .map(|c| c.key())
            .collect();
        out.extend(with.iter().filter(|c| !before.contains(&c.key())).map(|c| Alert::from_change(c, &run)));
        Ok(out)
    }

    /// Sends `alert` to every webhook that has not had it (and unless acknowledged),
    /// recording each attempt. The webhooks are sent to at once: one that hangs or retries
    /// for half a minute delays no other.
    pub async fn deliver(&self, alert: &Alert) {
        let body = alert.payload(self.public_url.as_deref());
        futures_util::future::join_all(self.hooks.iter().map(|hook| self.deliver_to(hook, alert, &body))).await;
    }

    async fn deliver_to(&self, hook: &Webhook, alert: &Alert, body: &serde_json::Value) {
        match db::alert_settled(&self.pool, &alert.key, hook.origin()).await {
            Ok(true) => return,
            Ok(false) => {}
            Err(e) => {
                tracing::warn!(error = %e, "alert state could not be read; not sending");
                return;
            }
        }
        let id = match db::start_delivery(&self.pool, &alert.run_id, &alert.key, hook.origin(), &alert.summary).await {
            Ok(id) => id,
            Err(e) => {
                tracing::warn!(error = %e, "alert delivery could not be recorded; not sending");
                return;
            }
        };
        let (status, attempts, error) = self.send(hook, body).await;
        if let Some(e) = &error {
            tracing::warn!(webhook = hook.origin(), key = %alert.key, attempts, error = %e, "alert not delivered");
        } else {
            tracing::info!(webhook = hook.origin(), key = %alert.key, attempts, "alert delivered");
        }
        if let Err(e) = db::record_attempt(&self.pool, id, status, i64::from(attempts), error.as_deref()).await {
            tracing::warn!(error = %e, "alert delivery outcome could not be recorded");
        }
    }

    /// Posts `body` with retries: (status, attempts made, last error).
    async fn send(&self, hook: &Webhook, body: &serde_json::Value) -> (DeliveryStatus, u32, Option<String>) {
        let mut delay = self.retry.first_delay;
        let mut last = None;
        for attempt in 1..=self.retry.attempts.max(1) {
            match self.attempt(hook, body).await {
                Ok(()) => return (DeliveryStatus::Delivered, attempt, None),
                Err(e) => last = Some(e),
            }
            if attempt < self.retry.attempts {
                tokio::time::sleep(delay).await;
                delay = delay.saturating_mul(self.retry.factor.max(1));
            }
        }
        (DeliveryStatus::Failed, self.retry.attempts.max(1), last)
    }

    async fn attempt(&self, hook: &Webhook, body: &serde_json::Value) -> Result<(), String> {
        let (host, addrs) = hook.pin(&self.allow).await?;
        let host = host.trim_start_matches('[').trim_end_matches(']').to_owned();
        // No proxy from the environment (`HTTP_PROXY`, `ALL_PROXY`): a proxy would connect
        // to an address nobody checked, and be handed the secret URL.
        let client = reqwest::Client::builder()
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(self.retry.timeout)
            .connect_timeout(self.retry.timeout)
            .resolve_to_addrs(&host, &addrs)
            .build()
            .map_err(|e| format!("client: {e}"))?;
        let sent = client.post(hook.url.clone()).json(body).send().await;
        match sent {
            Ok(r) if r.status().is_success() => Ok(()),
            Ok(r) => Err(format!("HTTP {}", r.status().as_u16())),
            Err(e) if e.is_timeout() => Err(format!("no answer within {} s", self.retry.timeout.as_secs_f64())),
            // reqwest's error text can carry the URL: say only what kind of failure.
            Err(e) if e.is_connect() => Err("could not connect".into()),
            Err(e) if e.is_request() => Err("request failed".into()),
            Err(_) => Err("failed".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn webhooks_follow_the_sweep_allow_list_and_keep_their_path_secret() {
        let loopback = AllowList::loopback();
        let ok = Webhook::parse("http://127.0.0.1:9/hooks/T000/B000/secret", &loopback).unwrap();
        assert!(ok.origin().starts_with("http://127.0.0.1:9 #"), "{}", ok.origin());
        let other = Webhook::parse("http://127.0.0.1:9/hooks/T000/B001/secret", &loopback).unwrap();
        assert_ne!(ok.origin(), other.origin(), "two webhooks of one origin are told apart");
        assert!(!format!("{ok:?}").contains("secret"));
        assert!(matches!(
            Webhook::parse("https://hooks.slack.com/services/x", &loopback),
            Err(AlertError::NotAllowed(_))
        ));
        let listed = AllowList { hosts: vec!["hooks.slack.com".into()] };
        let slack = Webhook::parse("https://hooks.slack.com/services/x", &listed).unwrap();
        assert!(slack.origin().starts_with("https://hooks.slack.com #"));
        for bad in ["ftp://127.0.0.1/", "http://user:pw@127.0.0.1/", "not a url", "http://169.254.169.254/latest"] {
            assert!(Webhook::parse(bad, &listed).is_err(), "{bad}");
        }
        let err = Webhook::parse("http://metadata.google.internal/", &loopback).unwrap_err().to_string();
        assert!(err.starts_with("--alert-webhook: host metadata.google.internal"), "{err}");
    }
}
