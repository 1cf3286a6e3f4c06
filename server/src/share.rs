//! The services behind annotations, saved reports and snapshots. Handlers call these;
//! these validate, then call `app::db`.
//!
//! - An annotation is validated against the run's stored levels (all of them, whatever
//!   other annotations hide), and its author is the requester; with auth on only its
//!   author may edit or delete it ([`Requester`]).
//! - A report is a titled view path under a short random slug; the view's parameters are
//!   checked with the same strict parser the pages use, so a saved link always opens.
//! - A snapshot freezes the runs of a view (levels and annotations, effects applied) as
//!   JSON; its id is derived from that content (SHA-256), so the same data always gets the
//!   same id and later edits, which change the live data, never change a snapshot.

use app::db::Db;
use app::db::{self, DbError, StoredSnapshot};
use app::domain::analysis::cost::RunCost;
use app::domain::analysis::slo::{NamedSlo, Slo};
use app::domain::analysis::why_signals::StoredSignals;
use app::domain::model::annotations::{AnnotationId, AnnotationInput};
use app::domain::model::text::{self, TextError};
use app::domain::view::state::SavedReport;
use app::domain::view::state::{query_pairs, ViewState};
use app::domain::{Run, RunId};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Why a share or annotation request failed.
#[derive(Debug, thiserror::Error)]
pub enum ShareError {
    /// The request is wrong; the message names the field.
    #[error("{0}")]
    Invalid(String),
    #[error("{0} was not found")]
    NotFound(String),
    /// The requester may not change this (another user's annotation).
    #[error("{0}")]
    Forbidden(String),
    #[error(transparent)]
    Db(DbError),
}

impl From<TextError> for ShareError {
    fn from(e: TextError) -> Self {
        ShareError::Invalid(e.to_string())
    }
}

impl From<DbError> for ShareError {
    fn from(e: DbError) -> Self {
        match e {
            DbError::NotFound(what) => ShareError::NotFound(what),
            DbError::Text(t) => ShareError::Invalid(t.to_string()),
            e @ DbError::Slo { .. } => ShareError::Invalid(e.to_string()),
            other => ShareError::Db(other),
        }
    }
}

/// Creates an annotation on `run` by `author`.
pub async fn annotate(
    pool: &Db,
    run: &RunId,
    input: &AnnotationInput,
    author: &str,
) -> Result<AnnotationId, ShareError> {
    let stored = db::get_run_raw(pool, run).await?;
    input.validate(&stored).map_err(ShareError::Invalid)?;
    // A comparison names runs that exist: an id that is not one (or names no run) would be
    // kept as a comparison of fewer runs than it says.
    if let app::domain::model::annotations::Anchor::Comparison { runs } = &input.anchor {
        for other in runs.iter().filter(|r| *r != run) {
            let shown: String = other.as_str().chars().take(40).collect();
            if RunId::parse(other.as_str()).is_none() {
                return Err(ShareError::Invalid(format!("comparison: {shown:?} is not a run id")));
            }
            match db::get_run_raw(pool, other).await {
                Ok(_) => {}
                Err(DbError::NotFound(_)) => {
                    return Err(ShareError::Invalid(format!("comparison: there is no run {shown}")))
                }
                Err(e) => return Err(e.into()),
            }
        }
    }
    Ok(db::insert_annotation(pool, run, input, author).await?)
}

/// Acknowledges alert `key` of `run` by `author`, saying why: it stops alerting.
pub async fn acknowledge_alert(
    pool: &Db,
    run: &RunId,
    key: &str,
    reason: &str,
    author: &str,
) -> Result<(), ShareError> {
    app::domain::analysis::alerts::check_key(key.trim()).map_err(ShareError::Invalid)?;
    Ok(db::acknowledge_alert(pool, run, key.trim(), author, reason).await?)
}

/// Edits an annotation's text, kind, effect (the anchor stays), keeping the old version.
pub async fn edit(
    pool: &Db,
    id: AnnotationId,
    input: &AnnotationInput,
    who: &Requester<'_>,
) -> Result<RunId, ShareError> {
    let current = db::get_annotation(pool, id).await?;
    who.may_change(&current.author)?;
    let stored = db::get_run_raw(pool, &current.run_id).await?;
    let input = AnnotationInput { anchor: current.anchor.clone(), ..input.clone() };
    input.validate(&stored).map_err(ShareError::Invalid)?;
    db::update_annotation(pool, id, &input, who.name).await?;
    Ok(current.run_id)
}

/// Deletes an annotation; returns the run it was on.
pub async fn delete(pool: &Db, id: AnnotationId, who: &Requester<'_>) -> Result<RunId, ShareError> {
    let current = db::get_annotation(pool, id).await?;
    who.may_change(&current.author)?;
    db::delete_annotation(pool, id).await?;
    Ok(current.run_id)
}

/// Who asks to change an annotation. An annotation is its author's: with auth on, only
/// its author may edit or delete it (as in Grafana; Plateau has no admin role on the web,
/// the operator deletes from the command line). With auth off everyone is the one local
/// user, who may change everything.
#[derive(Debug, Clone, Copy)]
pub struct Requester<'a> {
    pub name: &'a str,
    /// May change what others wrote: the local user of a server without auth, the CLI.
    pub any_author: bool,
}

impl Requester<'_> {
    fn may_change(&self, author: &str) -> Result<(), ShareError> {
        if self.any_author || self.name == author {
            Ok(())
        } else {
            Err(ShareError::Forbidden(format!("only its author ({author}) may change this annotation")))
        }
    }
}

/// Which page a view path shows.
#[derive(Clone, Debug, PartialEq)]
pub enum ViewTarget {
    Run(RunId),
    Compare,
}

/// Checks a view path (`/runs/<id>?…` or `/compare?…`) and returns what it shows and its
/// parsed state. The error says what is wrong with it.
pub fn parse_view_path(path: &str) -> Result<(ViewTarget, ViewState), ShareError> {
    let (page, query) = path.split_once('?').unwrap_or((path, ""));
    let pairs = query_pairs(query);
    let state = ViewState::parse(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str()))).map_err(|problems| {
        ShareError::Invalid(format!(
            "view: {}",
            problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
        ))
    })?;
    if page == "/compare" {
        if app::domain::model::comparison::check_run_count(state.runs.len()).is_err() {
            let rule = app::domain::model::comparison::run_count_rule();
            return Err(ShareError::Invalid(format!("view: a comparison needs {rule}")));
        }
        return Ok((ViewTarget::Compare, state));
    }
    if let Some(id) = page.strip_prefix("/runs/").and_then(RunId::parse) {
        return Ok((ViewTarget::Run(id), state));
    }
    Err(ShareError::Invalid(format!("view: {page:?} is not a run or compare page")))
}

/// The runs a view shows, with their annotations and effects applied.
pub async fn runs_of_view(pool: &Db, target: &ViewTarget, state: &ViewState) -> Result<Vec<Run>, ShareError> {
    let ids: Vec<RunId> = match target {
        ViewTarget::Run(id) => vec![id.clone()],
        ViewTarget::Compare => state.runs.clone(),
    };
    let mut runs = Vec::with_capacity(ids.len());
    for id in &ids {
        runs.push(db::get_run(pool, id).await?);
    }
    Ok(runs)
}

const SLUG_ALPHABET: &[u8] = b"abcdefghijkmnpqrstuvwxyz23456789";

fn new_slug() -> String {
    use rand::Rng;
    let mut rng = rand::thread_rng();
    (0..8)
        .map(|_| char::from(SLUG_ALPHABET.get(rng.gen_range(0..SLUG_ALPHABET.len())).copied().unwrap_or(b'a')))
        .collect()
}

/// Stores the SLO `text` under `name` (replacing the one of that name), by `author`. The
/// text is read by `Slo::parse`: a bad one is refused naming the part at fault.
pub async fn save_slo(pool: &Db, name: &str, text: &str, author: &str) -> Result<NamedSlo, ShareError> {
    let slo = Slo::parse(text).map_err(|e| ShareError::Invalid(format!("slo: {e}")))?;
    let named = NamedSlo {
        name: name.trim().to_owned(),
        slo,
        author: author.to_owned(),
        created_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    };
    db::put_slo(pool, &named).await?;
    Ok(named)
}

/// Where a demand comes from: the demand syntax as typed, a day's CSV of
/// `time,requests_per_s` (with the request mix given beside it, as the CSV has none), or a
/// request trace (Mooncake JSONL or CSV, as `plateau sweep --trace` replays: each hour's
/// busiest minute and the trace's mean prompt and output tokens).
pub enum DemandSource<'a> {
    Spec(&'a str),
    Csv { text: &'a str, prompt_tokens: Option<f64>, output_tokens: Option<f64> },
    Trace { file_name: &'a str, bytes: &'a [u8] },
}

impl DemandSource<'_> {
    /// The field a refusal names.
    fn field(&self) -> &'static str {
        match self {
            DemandSource::Spec(_) => "demand",
            DemandSource::Csv { .. } => "csv",
            DemandSource::Trace { .. } => "trace",
        }
    }

    /// The demand it gives; refused naming the part (the CSV's line, the trace's request).
    pub fn demand(&self) -> Result<app::domain::analysis::plan::Demand, DbError> {
        use app::domain::analysis::plan::{Demand, DemandError};
        let field = self.field();
        let refused = |error: DemandError| DbError::Demand { field, error };
        match self {
            DemandSource::Spec(text) => Demand::parse(text).map_err(refused),
            DemandSource::Csv { text, prompt_tokens, output_tokens } => {
                let mut d = Demand::from_csv(text).map_err(refused)?;
                // The mix as the demand syntax reads it (bounds and rounding included).
                let mix: Vec<String> = [("prompt", prompt_tokens), ("output", output_tokens)]
                    .into_iter()
                    .filter_map(|(k, v)| v.map(|v| format!("{k}={v}")))
                    .collect();
                if !mix.is_empty() {
                    let m = Demand::parse(&format!("rate=1; {}", mix.join("; "))).map_err(refused)?;
                    d.prompt_tokens = m.prompt_tokens;
                    d.output_tokens = m.output_tokens;
                }
                Ok(d)
            }
            DemandSource::Trace { file_name, bytes } => {
                use crate::loadgen::trace::{Trace, TraceBounds};
                // A week of arrivals at most, as a demand holds.
                let bounds = TraceBounds { max_duration_s: 168.0 * 3600.0, ..TraceBounds::default() };
                let trace = Trace::parse(file_name, bytes, crate::sweeps::workload::DEFAULT_BLOCK_TOKENS, &bounds)
                    .map_err(|problem| refused(DemandError { part: "trace".into(), problem }))?;
                let n = trace.requests.len().max(1) as f64;
                let mean = |f: fn(&crate::loadgen::trace::TraceRequest) -> u32| {
                    trace.requests.iter().map(|r| f64::from(f(r))).sum::<f64>() / n
                };
                let arrivals: Vec<f64> = trace.requests.iter().map(|r| r.timestamp_ms).collect();
                Demand::from_arrivals(&arrivals, Some(mean(|r| r.input_length)), Some(mean(|r| r.output_length)))
                    .map_err(refused)
            }
        }
    }
}

/// Stores the demand of `source` under `name` (replacing the one of that name), by
/// `author`. Refused naming the field and the part at fault; nothing is stored then.
pub async fn save_demand(
    pool: &Db,
    name: &str,
    source: &DemandSource<'_>,
    author: &str,
) -> Result<app::domain::analysis::plan::NamedDemand, DbError> {
    use app::domain::analysis::plan::NamedDemand;
    let demand = source.demand()?;
    let named = NamedDemand {
        name: name.trim().to_owned(),
        demand,
        author: author.to_owned(),
        created_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    };
    db::put_demand(pool, &named).await?;
    Ok(named)
}

/// Saves a titled view under a fresh slug.
pub async fn save_report(
    pool: &Db,
    title: &str,
    description: &str,
    view_path: &str,
    author: &str,
) -> Result<String, ShareError> {
    let (title, description) = (title.trim().to_owned(), description.trim().to_owned());
    if title.is_empty() {
        return Err(ShareError::Invalid("title: give the report a title".into()));
    }
    text::check_report(&title, &description, view_path)?;
    let (target, state) = parse_view_path(view_path)?;
    // The runs must exist now; a report of nothing is a mistake.
    runs_of_view(pool, &target, &state).await?;
    for _ in 0..8 {
        let report = SavedReport {
            slug: new_slug(),
            title: title.clone(),
            description: description.clone(),
            view_path: view_path.to_owned(),
            author: author.to_owned(),
            created_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        };
        if db::insert_report(pool, &report).await? {
            return Ok(report.slug);
        }
    }
    Err(ShareError::Invalid("could not find a free slug; try again".into()))
}

/// What a snapshot freezes: the runs, and what is stored beside them (the server's metrics
/// per level, open-loop send lags) as the "why" rules and the telemetry panels read it,
/// indexed like `runs`. Left out when no run has any, so such a payload is as before.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SnapshotPayload {
    pub view_path: String,
    pub runs: Vec<Run>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub signals: Vec<StoredSignals>,
    /// Each run's cost as it is now — the prices that applied, each level's $/M tokens and
    /// energy per token — so the snapshot keeps them when a price later changes; left out
    /// when no run has a price or GPU telemetry.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub costs: Vec<app::domain::analysis::cost::RunCost>,
    /// A plan's demand and SLO as resolved when it was frozen (a stored one's content, not
    /// its name); the runs are its candidates. Absent for a run or a comparison.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<app::page_data::FrozenPlan>,
}

/// The content-derived id of a payload: the first 20 hex digits of its SHA-256.
pub fn snapshot_id(payload_json: &str) -> String {
    let digest = Sha256::digest(payload_json.as_bytes());
    digest.iter().take(10).map(|b| format!("{b:02x}")).collect()
}

/// Freezes the data of a view; returns the snapshot id.
pub async fn snapshot(pool: &Db, title: &str, view_path: &str, author: &str) -> Result<String, ShareError> {
    let title = title.trim().to_owned();
    text::check_snapshot_title(&title, view_path)?;
    let (runs, mut signals, mut costs, plan) = match view_path.strip_prefix("/plan?") {
        Some(query) => frozen_plan(pool, query).await?,
        None => {
            let (target, state) = parse_view_path(view_path)?;
            let runs = runs_of_view(pool, &target, &state).await?;
            let mut signals = Vec::with_capacity(runs.len());
            for run in &runs {
                signals.push(db::stored_signals(pool, &run.id).await?);
            }
            let costs = app::page_data::costs(pool, &runs, &signals).await?;
            (runs, signals, costs, None)
        }
    };
    if costs.iter().all(|c| c.basis.is_err() && !c.has_energy()) {
        costs.clear();
    }
    if signals.iter().all(StoredSignals::is_empty) {
        signals.clear();
    }
    let payload = SnapshotPayload { view_path: view_path.to_owned(), runs, signals, costs, plan };
    let json = serde_json::to_string(&payload).map_err(|e| ShareError::Invalid(format!("snapshot: {e}")))?;
    let id = snapshot_id(&json);
    let title = if title.is_empty() {
        // Derived from the runs' names: cut to the bound, never refused.
        text::truncate(
            &payload.runs.iter().map(|r| r.name.as_str()).collect::<Vec<_>>().join(" vs "),
            text::MAX_TITLE_CHARS,
        )
    } else {
        title
    };
    db::insert_snapshot(
        pool,
        &StoredSnapshot {
            id: id.clone(),
            title,
            view_path: view_path.to_owned(),
            payload: json,
            author: author.to_owned(),
            created_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        },
    )
    .await?;
    Ok(id)
}

/// What a plan's snapshot freezes: its candidates, what is stored beside them, their costs
/// with today's prices, and the demand and SLO resolved.
async fn frozen_plan(
    pool: &Db,
    query: &str,
) -> Result<(Vec<Run>, Vec<StoredSignals>, Vec<RunCost>, Option<app::page_data::FrozenPlan>), ShareError> {
    let query =
        app::domain::view::plan::PlanQuery::from_query(query).map_err(|e| ShareError::Invalid(format!("view: {e}")))?;
    let (outcome, inputs) = app::page_data::plan_inputs(pool, &query).await.map_err(|e| match e {
        app::error::AppError::NotFound(what) => ShareError::NotFound(what),
        other => ShareError::Invalid(format!("view: {other}")),
    })?;
    let Some(inputs) = inputs else {
        return Err(ShareError::Invalid("view: a plan's snapshot needs its demand (demand=…)".into()));
    };
    let frozen = app::page_data::FrozenPlan { demand: inputs.demand, slo: inputs.slo, experiment: outcome.experiment };
    Ok((inputs.runs, inputs.stored, inputs.costs, Some(frozen)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn view_paths_are_checked() {
        assert!(matches!(parse_view_path("/runs/chat1?scale=linear"), Ok((ViewTarget::Run(_), _))));
        assert!(matches!(parse_view_path("/compare?runs=aaaa1,bbbb2&baseline=bbbb2"), Ok((ViewTarget::Compare, _))));
        let e = parse_view_path("/compare?runs=aaaa1").unwrap_err().to_string();
        assert!(e.contains("2 to 10"), "{e}");
        let e = parse_view_path("/runs/chat1?scale=cubic").unwrap_err().to_string();
        assert!(e.contains("scale") && e.contains("log or linear"), "{e}");
        assert!(parse_view_path("https://evil.example/").is_err());
        assert!(parse_view_path("/upload").is_err());
    }

    #[test]
    fn snapshot_ids_follow_the_content() {
        let a = snapshot_id("{\"runs\":[1]}");
        assert_eq!(a.len(), 20);
        assert_eq!(a, snapshot_id("{\"runs\":[1]}"));
        assert_ne!(a, snapshot_id("{\"runs\":[2]}"));
        assert!(new_slug().chars().all(|c| c.is_ascii_alphanumeric()) && new_slug().len() == 8);
    }
}
