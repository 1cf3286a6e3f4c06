//! Where a sweep's run and levels go: [`RunSink`] is written to by the one sweep loop,
//! whether the run lives in the local SQLite file (a `Db`) or on a running Plateau
//! server ([`HttpSink`], the `/api/v1/live-runs` API, level by level).

use super::client::clip;
use super::error::LoadgenError;
use super::read::read_bounded;
use super::target::Secret;
use app::db;
use app::db::Db;
use app::domain::model::annotations::AnnotationInput;
use app::domain::{NewLevel, NewRun, RunId, RunStatus};
use reqwest::header::{HeaderValue, AUTHORIZATION};
use serde_json::{json, Value};
use std::future::Future;
use std::time::Duration;

/// The store of a live run: create it, append finished levels, set the final status.
pub trait RunSink: Sync {
    /// Creates the run (status `running`, no levels) and returns its id.
    fn create(&self, run: &NewRun) -> impl Future<Output = Result<RunId, LoadgenError>> + Send;
    /// Stores one finished level after the previous ones, whole or not at all.
    fn append(&self, id: &RunId, level: &NewLevel) -> impl Future<Output = Result<(), LoadgenError>> + Send;
    /// Sets the final status; `note` (a finding, such as the plateau) is added to the notes.
    fn finish(
        &self,
        id: &RunId,
        status: RunStatus,
        note: Option<&str>,
    ) -> impl Future<Output = Result<(), LoadgenError>> + Send;
    /// Adds an annotation written by the sweep itself (the plateau it found).
    fn annotate(&self, id: &RunId, note: &AnnotationInput) -> impl Future<Output = Result<(), LoadgenError>> + Send;
    /// Renews the run's lease: the sweep is alive (sent every [`super::spec::HEARTBEAT`]; a run
    /// without one for `app::db::SWEEP_LEASE` counts as interrupted).
    fn heartbeat(&self, _id: &RunId) -> impl Future<Output = Result<(), LoadgenError>> + Send {
        async { Ok(()) }
    }
}

/// The most of a Plateau server's answer to one sink request read (the answers are a run
/// id or a few fields; an error's message is clipped to 300 characters). A longer answer
/// is not read further: its request fails.
pub const MAX_ANSWER_BYTES: usize = 1024 * 1024;

/// The author of the annotations a sweep writes about its own run.
pub const SWEEP_AUTHOR: &str = "plateau sweep";

impl RunSink for Db {
    async fn create(&self, run: &NewRun) -> Result<RunId, LoadgenError> {
        Ok(db::create_live_run(self, run).await?)
    }

    async fn append(&self, id: &RunId, level: &NewLevel) -> Result<(), LoadgenError> {
        Ok(db::append_level(self, id, level).await?)
    }

    async fn finish(&self, id: &RunId, status: RunStatus, note: Option<&str>) -> Result<(), LoadgenError> {
        if let Some(line) = note {
            db::append_run_note(self, id, line).await?;
        }
        Ok(db::set_run_status(self, id, status).await?)
    }

    async fn annotate(&self, id: &RunId, note: &AnnotationInput) -> Result<(), LoadgenError> {
        db::insert_annotation(self, id, note, SWEEP_AUTHOR).await?;
        Ok(())
    }

    async fn heartbeat(&self, id: &RunId) -> Result<(), LoadgenError> {
        db::heartbeat_run(self, id).await?;
        Ok(())
    }
}

/// A running Plateau server, reached over HTTP (`plateau sweep --server URL`).
#[derive(Clone, Debug)]
pub struct HttpSink {
    client: reqwest::Client,
    /// e.g. `http://127.0.0.1:3000`, without a trailing slash.
    base: String,
    /// Sent as `Authorization: Bearer …` when the server wants one.
    token: Option<HeaderValue>,
}

impl HttpSink {
    pub fn new(base_url: &str, token: Option<&Secret>) -> Result<Self, LoadgenError> {
        let base = base_url.trim().trim_end_matches('/').to_owned();
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(LoadgenError::InvalidSpec("--server must start with http:// or https://".into()));
        }
        let token = match token {
            None => None,
            Some(t) => {
                let mut v = HeaderValue::from_str(&format!("Bearer {}", t.expose())).map_err(|_| {
                    LoadgenError::InvalidSpec("the server token has characters a header cannot carry".into())
                })?;
                v.set_sensitive(true);
                Some(v)
            }
        };
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .timeout(Duration::from_secs(120))
            // A redirect would re-send the run (and the token) somewhere else: refuse it.
            .redirect(reqwest::redirect::Policy::none())
            // A Plateau server closes a connection idle for 5 s (`listener::HEADER_READ_TIMEOUT`):
            // give it up first, so a level posted after a long one never races that close.
            .pool_idle_timeout(Duration::from_secs(2))
            .build()
            .map_err(|e| LoadgenError::Client(e.to_string()))?;
        Ok(Self { client, base, token })
    }

    async fn post(&self, path: &str, body: &impl serde::Serialize) -> Result<Value, LoadgenError> {
        let url = format!("{}/api/v1{path}", self.base);
        let mut request = self.client.post(&url).json(body);
        if let Some(t) = &self.token {
            request = request.header(AUTHORIZATION, t.clone());
        }
        let response = request.send().await.map_err(|e| LoadgenError::Sink(format!("POST {url}: {e}")))?;
        let status = response.status();
        let answer = read_bounded(response, MAX_ANSWER_BYTES).await.unwrap_or_default();
        let text = answer.text_lossy();
        if !status.is_success() {
            let message = serde_json::from_str::<Value>(&text)
                .ok()
                .and_then(|v| v.get("error").and_then(Value::as_str).map(str::to_owned))
                .unwrap_or_else(|| clip(text.trim(), 300));
            return Err(LoadgenError::Sink(format!("POST {url}: HTTP {}: {message}", status.as_u16())));
        }
        if answer.truncated {
            return Err(LoadgenError::Sink(format!("POST {url}: the answer is longer than {MAX_ANSWER_BYTES} bytes")));
        }
        Ok(serde_json::from_str(&text).unwrap_or(Value::Null))
    }
}

impl RunSink for HttpSink {
    async fn create(&self, run: &NewRun) -> Result<RunId, LoadgenError> {
        let v = self.post("/live-runs", run).await?;
        v.get("id")
            .and_then(Value::as_str)
            .and_then(RunId::parse)
            .ok_or_else(|| LoadgenError::Sink(format!("the server answered without a run id: {v}")))
    }

    async fn append(&self, id: &RunId, level: &NewLevel) -> Result<(), LoadgenError> {
        self.post(&format!("/live-runs/{id}/levels"), level).await.map(|_| ())
    }

    async fn finish(&self, id: &RunId, status: RunStatus, note: Option<&str>) -> Result<(), LoadgenError> {
        let body = json!({ "status": status.as_str(), "note": note });
        self.post(&format!("/live-runs/{id}/status"), &body).await.map(|_| ())
    }

    async fn annotate(&self, id: &RunId, note: &AnnotationInput) -> Result<(), LoadgenError> {
        // The server records the token's user (or `local`) as the author.
        let body = serde_json::to_value(note).map_err(|e| LoadgenError::InvalidSpec(e.to_string()))?;
        self.post(&format!("/runs/{id}/annotations"), &body).await.map(|_| ())
    }

    async fn heartbeat(&self, id: &RunId) -> Result<(), LoadgenError> {
        self.post(&format!("/live-runs/{id}/heartbeat"), &json!({})).await.map(|_| ())
    }
}
