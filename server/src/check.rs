//! The regression gate as a service: `plateau check RUN --baseline RUN | --history` and
//! `GET /api/v1/runs/{id}/check` both build a [`CheckRequest`] and call [`check`], which
//! reads the runs and hands them to the pure rules of `app::domain::analysis::regression` (and, with
//! an SLO, of `app::domain::analysis::slo::gate`: capacity at the SLO as one more gated metric). The
//! report's curve verdict (`app::domain::analysis::curve`: the knee, the plateau, and capacity when an
//! SLO is given) is made by the same rules, against the same baseline or history.

use app::db::{self, Db, DbError};
use app::domain::analysis::regression::{against_baseline, against_history, CheckReport};
use app::domain::analysis::slo::{gate, Slo};
use app::domain::analysis::thresholds::Thresholds;
use app::domain::RunId;
use serde::Deserialize;

/// Most runs of a history window.
pub const MAX_WINDOW: usize = 100;

/// What a check compares a run with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Against {
    Baseline(String),
    History,
}

/// One check: the run (`latest` or an id), what it is checked against, the thresholds,
/// and the SLO whose capacity is gated too, if any.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckRequest {
    pub run: String,
    pub against: Against,
    pub thresholds: Thresholds,
    pub slo: Option<Slo>,
}

/// The API's query string: `?baseline=ID` or `?history=true`, and optional thresholds.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct CheckQuery {
    #[serde(default)]
    pub baseline: Option<String>,
    #[serde(default)]
    pub history: bool,
    #[serde(default)]
    pub max_worse_pct: Option<f64>,
    #[serde(default)]
    pub z: Option<f64>,
    #[serde(default)]
    pub window: Option<usize>,
    /// `ttft:p99<=2s,errors<=1%`: gate capacity at this SLO as well.
    #[serde(default)]
    pub slo: Option<String>,
}

/// Why a check could not run.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error("field `{field}`: {message}")]
    Field { field: &'static str, message: String },
    #[error(transparent)]
    Db(#[from] DbError),
}

impl CheckQuery {
    /// The one conversion into a [`CheckRequest`], every field checked.
    pub fn into_request(self, run: &str) -> Result<CheckRequest, CheckError> {
        let field = |field, message: &str| CheckError::Field { field, message: message.to_owned() };
        let against = match (self.baseline.filter(|b| !b.trim().is_empty()), self.history) {
            (Some(b), false) => Against::Baseline(b.trim().to_owned()),
            (None, true) => Against::History,
            (Some(_), true) => return Err(field("baseline", "give a baseline or the history, not both")),
            (None, false) => return Err(field("baseline", "give a baseline run, or history=true")),
        };
        let d = Thresholds::default();
        let max_worse_pct = self.max_worse_pct.unwrap_or(d.max_worse_pct);
        if !(max_worse_pct.is_finite() && (0.0..=1000.0).contains(&max_worse_pct)) {
            return Err(field("max_worse_pct", "must be a percentage between 0 and 1000"));
        }
        let z = self.z.unwrap_or(d.z);
        if !(z.is_finite() && (0.0..=100.0).contains(&z)) {
            return Err(field("z", "must be between 0 and 100"));
        }
        let window = self.window.unwrap_or(d.window);
        if !(2..=MAX_WINDOW).contains(&window) {
            return Err(field("window", &format!("must be between 2 and {MAX_WINDOW} runs")));
        }
        // The parser names the part at fault ("\"ttft:p99<=2\": a duration needs a unit").
        let slo = match self.slo.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
            Some(text) => Some(Slo::parse(text).map_err(|e| field("slo", &e.to_string()))?),
            None => None,
        };
        Ok(CheckRequest {
            run: run.trim().to_owned(),
            against,
            thresholds: Thresholds { max_worse_pct, z, window },
            slo,
        })
    }
}

fn id(field: &'static str, s: &str) -> Result<RunId, CheckError> {
    RunId::parse(s).ok_or_else(|| CheckError::Field { field, message: format!("{s:?} is not a run id") })
}

/// Runs the check.
pub async fn check(db: &Db, req: &CheckRequest) -> Result<CheckReport, CheckError> {
    let run_id = if req.run == "latest" { db::latest_run(db).await? } else { id("run", &req.run)? };
    let run = db::get_run(db, &run_id).await?;
    Ok(match &req.against {
        Against::Baseline(b) => {
            let base_id = if b == "previous" {
                // the run before this one of the same configuration
                let h = db::history(db, &run, 1).await?;
                match h.into_iter().next() {
                    Some(prev) => prev.id,
                    None => {
                        return Err(CheckError::Field {
                            field: "baseline",
                            message: "no earlier run of this configuration".into(),
                        })
                    }
                }
            } else {
                id("baseline", b)?
            };
            let base = db::get_run(db, &base_id).await?;
            let report = against_baseline(&run, &base, &req.thresholds);
            match &req.slo {
                Some(slo) => report.with_capacity(gate::against_baseline(slo, &run, &base, &req.thresholds)),
                None => report,
            }
        }
        Against::History => {
            let history = db::history(db, &run, req.thresholds.window).await?;
            let report = against_history(&run, &history, &req.thresholds);
            match &req.slo {
                Some(slo) => report.with_capacity(gate::against_history(slo, &run, &history, &req.thresholds)),
                None => report,
            }
        }
    })
}
