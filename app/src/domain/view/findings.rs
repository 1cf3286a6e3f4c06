//! What the run and compare pages say — the run page's summary, where it saturates, why it
//! plateaus, the proposed annotations, the regression gate's line and capacity at the view's
//! SLO; the compare page's comparison (with the servers' differences and per-request tests),
//! anomalies, settings under test and capacities — computed on the server and sent in the
//! page's data. The pages only draw it, so the browser bundle carries no analysis.

use crate::domain::analysis::anomalies::{self, Anomaly};
use crate::domain::analysis::changes::{self, ChangeProposal};
use crate::domain::analysis::compare::{self, Comparison, RequestTest};
use crate::domain::analysis::knee::{saturation, DEFAULT_KNEE_THRESHOLD};
use crate::domain::analysis::regression::{self, CheckReport};
use crate::domain::analysis::scaling;
use crate::domain::analysis::slo::{self, Capacity, RunCapacity, Slo};
use crate::domain::analysis::why;
use crate::domain::analysis::why_signals::{self, StoredSignals, WhyParagraph};
use crate::domain::model::format::{load, shown};
use crate::domain::model::level::LevelKey;
use crate::domain::{LoadKind, Point, Run};
use serde::{Deserialize, Serialize};

/// What the run page says about one run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunFindings {
    /// One line: levels, peak and where it plateaus (the page's description too).
    pub summary: String,
    /// Where throughput saturates, in a sentence; `None` without a knee.
    pub saturation: Option<String>,
    /// Why it plateaus, with its evidence.
    pub why: Option<WhyParagraph>,
    /// Every finding proposed as an annotation (anomalies, the why rules' findings, the
    /// regression gate's, the history's change points), dismissed ones included.
    pub proposals: Vec<Anomaly>,
    /// The regression gate's verdict, when it judged anything: the run page's first line.
    pub history_line: Option<RegressionVerdict>,
    /// A change point of the history this run still stands on the worse side of (the gate's
    /// window may already hold only worse runs, so it says "no regression"): said beside
    /// the gate's verdict.
    pub since_change: Option<SinceChange>,
    /// Capacity at the view's SLO.
    pub capacity: Option<Capacity>,
    /// A concurrency sweep that has not plateaued yet: where it is expected to, or why
    /// that cannot be said, and the level to measure next.
    #[serde(default)]
    pub estimate: Option<EstimateFinding>,
    /// The levels where the load generator could not keep up (late sends, a busy CPU), said
    /// once: left out where "why it plateaus" already says the plateau is the client's.
    #[serde(default)]
    pub client_limited: Option<String>,
    /// How close each level comes to the hardware's roofs, or what to enter to see it;
    /// `None` where the hardware tables could not be read (or on a frozen page).
    #[serde(default)]
    pub roofline: Option<RooflineFinding>,
}

/// A run against its hardware ([`crate::domain::analysis::roofline`]), formatted on the
/// server: the sentence, each level's row and every assumption; or, where a fact is
/// missing, what to enter and where (`rows` empty).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RooflineFinding {
    pub sentence: String,
    /// "8× RTX PRO 6000 Blackwell Server Edition · Kimi-K2.5 NVFP4".
    pub summary: String,
    /// level, batch, measured tok/s, memory roof, compute roof, share of the lower roof.
    pub rows: Vec<[String; 6]>,
    pub assumptions: Vec<String>,
    /// The hardware page with the run's model and GPU type filled in (a gap only).
    pub enter_href: Option<String>,
}

impl RooflineFinding {
    /// The run against `gpus` (the table in force) and `models`.
    pub fn of(
        run: &Run,
        gpus: &[crate::domain::analysis::roofline::GpuSpec],
        models: &[crate::domain::analysis::roofline::ModelFacts],
    ) -> Self {
        use crate::domain::analysis::roofline;
        match roofline::roofline(run, gpus, models) {
            Ok(roof) => RooflineFinding {
                summary: format!("{}× {} · {}", roof.gpu_count, roof.gpu.name, roof.model.model),
                rows: roof
                    .levels
                    .iter()
                    .map(|l| {
                        [
                            crate::domain::model::level::load_label(l.load_kind, l.load),
                            shown(Some(l.batch), if l.batch.fract() == 0.0 { 0 } else { 1 }),
                            shown(Some(l.measured_tok_s), 1),
                            shown(Some(l.memory_roof_tok_s), 0),
                            shown(l.compute_roof_tok_s, 0),
                            roofline::percent(l.fraction),
                        ]
                    })
                    .collect(),
                assumptions: roof.assumptions,
                sentence: roof.sentence,
                enter_href: None,
            },
            Err(gap) => {
                let enc = crate::domain::model::text::percent_encode;
                let mut q = Vec::new();
                if let Some(m) = &run.facts.model {
                    q.push(format!("model={}", enc(m)));
                }
                if let Some(g) = &run.facts.gpu_type {
                    q.push(format!("gpu={}", enc(g)));
                }
                q.push(format!("back={}", enc(&format!("/runs/{}", run.id))));
                RooflineFinding {
                    sentence: gap.sentence,
                    enter_href: Some(format!("{}?{}", roofline::HARDWARE_PATH, q.join("&"))),
                    ..Default::default()
                }
            }
        }
    }
}

/// Where a run that has not plateaued yet is expected to ([`crate::domain::analysis::predict`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EstimateFinding {
    pub sentence: String,
    /// The concurrency to measure next, where one is proposed.
    pub next_load: Option<f64>,
    /// The New sweep form with that level (and the run's model) filled in, and its label
    /// ("Sweep C=120"); empty without a next level.
    pub next_href: String,
    pub next_label: String,
    /// The New sweep form as an adaptive search from the estimate (its first level a
    /// quarter of where 95 % of the plateau is expected); empty without an estimate.
    #[serde(default)]
    pub search_href: String,
}

impl EstimateFinding {
    fn new(run: &Run, sentence: String, next_load: Option<f64>) -> Self {
        let (next_href, next_label) = next_load.map_or_else(Default::default, |n| {
            (format!("/sweeps/new?load=concurrency&concurrency={n:.0}{}", model_param(run)), format!("Sweep C={n:.0}"))
        });
        Self { sentence, next_load, next_href, next_label, search_href: String::new() }
    }

    /// With the adaptive search from `guess` offered too.
    fn searching_from(mut self, run: &Run, guess: f64) -> Self {
        self.search_href = format!("/sweeps/new?load=adaptive&guess={:.0}{}", guess.round().max(1.0), model_param(run));
        self
    }
}

/// The New sweep form's `&model=` for `run`'s model (empty without one).
fn model_param(run: &Run) -> String {
    run.facts
        .model
        .as_deref()
        .map(|m| format!("&model={}", crate::domain::model::text::percent_encode(m)))
        .unwrap_or_default()
}

/// The estimate of a concurrency run with no measured plateau; `None` for a run that
/// plateaued (its plateau is measured, said once), a rate sweep or one without throughput.
fn estimate(run: &Run, signals: &why::RunSignals) -> Option<EstimateFinding> {
    use crate::domain::analysis::predict::{self, NoPrediction};
    let sat = signals.saturation.as_ref()?;
    if sat.knee.is_some() || sat.load_kind != LoadKind::Concurrency {
        return None;
    }
    let twice = predict::nice_load(2.0 * sat.highest.load);
    match predict::predict(&run.points) {
        Ok(p) => {
            let mut sentence = p.sentence();
            // A hard batch or memory limit is invisible from below it: where requests
            // already queue at the last level, it may cap the curve sooner.
            let last = signals.levels.iter().rev().find(|l| l.load == sat.highest.load);
            if let Some(w) = last.and_then(|l| l.waiting_mean).filter(|w| *w >= crate::domain::analysis::why::MIN_QUEUE)
            {
                sentence.push_str(&format!(
                    " Requests already waited at {} (on average {}): a batch or memory limit there caps throughput sooner than a fit of the levels below it can show.",
                    crate::domain::model::level::load_label(LoadKind::Concurrency, sat.highest.load),
                    shown(Some(w), 1)
                ));
            }
            Some(EstimateFinding::new(run, sentence, Some(p.next_load)).searching_from(run, p.near_load))
        }
        Err(NoPrediction::NotConcurrency) => None,
        Err(e @ (NoPrediction::StillLinear | NoPrediction::TooFar { .. } | NoPrediction::TooFewLevels { .. })) => {
            Some(EstimateFinding::new(run, e.sentence(), Some(twice)))
        }
        Err(e) => Some(EstimateFinding::new(run, e.sentence(), None)),
    }
}

/// A change point of the history whose worse side a later run still stands on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SinceChange {
    /// [`changes::HistoryChange::still_worse_sentence`].
    pub sentence: String,
    /// The history page showing that series.
    pub history_href: String,
}

/// The findings of `run` with the server metrics stored beside it, its history check,
/// the change points that start at it and the one it still stands on the worse side of
/// (live page only), judged at `slo`.
pub fn run_findings(
    run: &Run,
    stored: Option<&StoredSignals>,
    history: Option<&CheckReport>,
    changes: &[ChangeProposal],
    still_worse: Option<&changes::HistoryChange>,
    slo: Option<&Slo>,
) -> RunFindings {
    let signals = why_signals::run_signals(run, stored);
    let mut proposals = anomalies::detect_run(0, run);
    proposals.extend(anomalies::why_findings(0, run, &signals));
    if let Some(h) = history {
        proposals.extend(regression::proposals(h, 0, &run.id));
    }
    proposals.extend(changes::proposals(changes, 0, &run.id));
    let history_line = history.filter(|h| !h.findings.is_empty() || h.curve_regressed()).map(RegressionVerdict::of);
    let why = why_signals::why_paragraph(&signals);
    RunFindings {
        summary: run_summary(run),
        saturation: saturation(&run.points, DEFAULT_KNEE_THRESHOLD).map(|s| s.sentence()),
        why: why.clone(),
        proposals,
        history_line,
        since_change: still_worse.map(|c| SinceChange {
            sentence: c.still_worse_sentence(),
            history_href: format!("/runs/{}/history?{}", run.id, c.history_query),
        }),
        capacity: slo.map(|slo| slo::capacity(slo, &run.points)),
        estimate: estimate(run, &signals),
        client_limited: why::client_limited_levels(&signals)
            .filter(|_| !why.as_ref().is_some_and(|w| w.kind == Some(why::WhyKind::ClientBound))),
        roofline: None,
    }
}

/// The regression gate's verdict on a run, said first on its page: regressed or not, by how
/// much at worst, and the runs it was judged against.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RegressionVerdict {
    pub regressed: bool,
    /// "Regressed: output throughput at C=64 −23 % (650.1 → 500.3 tok/s) against the mean of
    /// 5 runs — the largest of 19 regressions (worse by more than 10 % and 2 standard
    /// deviations than the history of …), each proposed under Anomalies."
    pub sentence: String,
    /// (link, name and date) of each run it was judged against, newest first.
    pub against: Vec<(String, String)>,
}

impl RegressionVerdict {
    pub fn of(h: &CheckReport) -> Self {
        use crate::domain::analysis::thresholds::metric_label;
        use crate::domain::model::format::fig_in;
        let n = h.regressions();
        let rule =
            format!("worse by more than {} % and {} standard deviations", h.thresholds.max_worse_pct, h.thresholds.z);
        let sentence = if n == 0 {
            format!("No regression against the {}: nothing is {rule}.", h.against)
        } else {
            let worst = match h.worst() {
                Some(f) => format!(
                    "{} at {} {} ({} → {} {})",
                    metric_label(f.metric, f.stat),
                    f.level.label(),
                    crate::domain::analysis::noise::pct(f.change_pct),
                    fig_in(f.reference, f.metric.unit().label()),
                    fig_in(f.value, f.metric.unit().label()),
                    f.metric.unit().label()
                ),
                None => h
                    .curve
                    .as_ref()
                    .map_or_else(|| "the curve".to_owned(), |c| c.headline.trim_end_matches('.').to_owned()),
            };
            let of_n = if n == 1 { "the one regression".to_owned() } else { format!("the largest of {n} regressions") };
            format!("Regressed: {worst} against the {} — {of_n} ({rule}), proposed under Anomalies.", h.against)
        };
        let against = h
            .judged_against
            .iter()
            .map(|r| {
                let when = crate::domain::model::format::when_short(&r.created_at);
                (format!("/runs/{}", r.id), format!("{} ({when})", r.name))
            })
            .collect();
        Self { regressed: n > 0, sentence, against }
    }
}

/// Whether no request of a level completed (and some were sent).
fn all_failed(p: &Point) -> bool {
    p.requests_ok == Some(0) && p.requests_failed.is_some_and(|n| n > 0)
}

/// One-line summary of a run: its levels, its peak and where it plateaus — or, where every
/// request failed, that (a run that produced nothing has no peak to speak of).
pub fn run_summary(run: &Run) -> String {
    let kind = run.points.first().map_or(LoadKind::Concurrency, |p| p.load_kind);
    let levels = format!("{} level{}", run.points.len(), if run.points.len() == 1 { "" } else { "s" });
    let failing: Vec<&Point> = run.points.iter().filter(|p| all_failed(p)).collect();
    if !run.points.is_empty() && failing.len() == run.points.len() {
        let failed: i64 = failing.iter().filter_map(|p| p.requests_failed).sum();
        let kinds = crate::domain::Failure::tally(failing.iter().flat_map(|p| p.failures.iter().cloned()));
        let most = kinds.first().map(|f| format!(", most often {}", f.kind)).unwrap_or_default();
        return format!("{levels}: every request failed ({failed} requests{most})");
    }
    let failed_at = if failing.is_empty() {
        String::new()
    } else {
        let labels: Vec<String> =
            failing.iter().map(|p| LevelKey { load_kind: p.load_kind, load_value: p.load_value }.label()).collect();
        format!("; every request failed at {}", labels.join(", "))
    };
    let knee = saturation(&run.points, DEFAULT_KNEE_THRESHOLD)
        .and_then(|s| s.knee)
        .map(|k| {
            format!(
                "; plateaus from {} ({} tok/s)",
                LevelKey { load_kind: kind, load_value: k.load }.label(),
                shown(Some(k.tok_s), 1)
            )
        })
        .unwrap_or_default();
    let head = match scaling::peak(&run.points) {
        Some((c, t)) => format!(
            "{levels}, peak {} output tok/s at {}",
            shown(Some(t), 1),
            if kind == LoadKind::RequestRate { format!("{} req/s", load(c)) } else { format!("C={}", load(c)) },
        ),
        None => levels,
    };
    format!("{head}{knee}{failed_at}")
}

/// What the compare page says about its runs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CompareFindings {
    /// The comparison against the baseline, with what the servers did differently and the
    /// per-request tests applied; `None` without runs.
    pub comparison: Option<Comparison>,
    /// Each run's saturation sentence, indexed like the runs.
    pub saturations: Vec<Option<String>>,
    /// Each run's one-line summary, indexed like the runs.
    pub summaries: Vec<String>,
    /// The anomalies across the runs, proposed as annotations.
    pub proposals: Vec<Anomaly>,
    /// The settings under test (`key=value` tags that differ), each run's value.
    pub varied: Vec<(String, Vec<Option<String>>)>,
    /// Capacity at the view's SLO per run and its change from the baseline (empty
    /// without an SLO).
    pub capacities: Vec<RunCapacity>,
}

/// The findings of a comparison of `runs` against `baseline`, with the server metrics
/// stored beside each run (indexed like `runs`), the per-request tests and the view's SLO.
pub fn compare_findings(
    runs: &[Run],
    baseline: usize,
    stored: &[StoredSignals],
    request_tests: &[RequestTest],
    slo: Option<&Slo>,
) -> CompareFindings {
    let comparison = compare::compare(runs, baseline).map(|mut cmp| {
        let signals: Vec<_> =
            runs.iter().enumerate().map(|(i, r)| why_signals::run_signals(r, stored.get(i))).collect();
        why::add_server_differences(&mut cmp, &signals);
        compare::apply_request_tests(&mut cmp, request_tests);
        cmp
    });
    let points: Vec<&[Point]> = runs.iter().map(|r| r.points.as_slice()).collect();
    CompareFindings {
        comparison,
        saturations: runs.iter().map(|r| saturation(&r.points, DEFAULT_KNEE_THRESHOLD).map(|s| s.sentence())).collect(),
        summaries: runs.iter().map(run_summary).collect(),
        proposals: anomalies::detect(runs),
        varied: compare::varied_settings(runs),
        capacities: slo.map(|slo| slo::across(slo, &points, baseline)).unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::model::metrics::{Metric, Stat};
    use crate::domain::Failure;

    fn run(points: Vec<Point>) -> Run {
        crate::domain::analysis::compare::tests::run("aaaa1", "r", crate::domain::RunFacts::default(), points)
    }

    fn level(c: f64, ok: i64, failed: i64, tok_s: f64) -> Point {
        let mut p = Point::at(LoadKind::Concurrency, c);
        (p.requests_ok, p.requests_failed) = (Some(ok), Some(failed));
        p.set(Metric::OutputThroughput, Stat::Mean, tok_s);
        p
    }

    /// Said once: a run that plateaued has its measured plateau and no estimate; one still
    /// rising gets the estimate and the next level; one whose server queued at its last
    /// level is told a limit there may come sooner than the fit.
    #[test]
    fn only_a_run_still_rising_gets_an_estimate() {
        let flat: Vec<Point> = [(1.0, 100.0), (2.0, 200.0), (4.0, 400.0), (8.0, 800.0), (16.0, 810.0), (32.0, 805.0)]
            .iter()
            .map(|&(c, x)| level(c, 10, 0, x))
            .collect();
        let f = run_findings(&run(flat), None, None, &[], None, None);
        assert!(f.saturation.as_deref().is_some_and(|s| s.starts_with("Plateau from")), "{:?}", f.saturation);
        assert_eq!(f.estimate, None);
        let rising: Vec<Point> = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0]
            .iter()
            .map(|&c| level(c, 10, 0, 100.0 * c / (1.0 + 0.01 * (c - 1.0))))
            .collect();
        let f = run_findings(&run(rising.clone()), None, None, &[], None, None);
        let e = f.estimate.unwrap();
        // λ/σ = 100 ÷ 0.01 = 10,000 tok/s; 95 % of it at N = 19 × 0.99 ÷ 0.01 = 1,881.
        assert!(e.sentence.starts_with("Estimated plateau: 10,000.0 tok/s"), "{}", e.sentence);
        assert!(e.sentence.contains("95 % of it from about C=1,881"), "{}", e.sentence);
        assert_eq!(e.next_load, Some(1900.0));
        let stored = crate::domain::analysis::why_signals::StoredSignals {
            engine: Some("vllm".into()),
            has_server_metrics: true,
            levels: vec![why::LevelSignals {
                load_kind: Some(LoadKind::Concurrency),
                load: 32.0,
                waiting_mean: Some(6.0),
                ..why::LevelSignals::default()
            }],
            source_names: Vec::new(),
        };
        let f = run_findings(&run(rising.clone()), Some(&stored), None, &[], None, None);
        assert_eq!(f.client_limited, None, "the generator kept up (nothing says otherwise)");
        // The generator fell behind at C=16 (not a plateau level: the run still rises): the
        // page flags the level.
        let mut late = stored.clone();
        late.levels.push(why::LevelSignals {
            load_kind: Some(LoadKind::Concurrency),
            load: 16.0,
            late_send_fraction: Some(0.2),
            ..why::LevelSignals::default()
        });
        let g = run_findings(&run(rising), Some(&late), None, &[], None, None);
        assert!(
            g.client_limited.as_deref().is_some_and(|c| c.starts_with(
                "At C=16 the load generator sent 20 % of its requests late: that level measures the client"
            )),
            "{:?}",
            g.client_limited
        );
        assert!(f.estimate.unwrap().sentence.ends_with(
            "Requests already waited at C=32 (on average 6.0): a batch or memory limit there caps throughput sooner than a fit of the levels below it can show."
        ));
    }

    #[test]
    fn a_run_where_every_request_failed_says_so_and_names_no_peak() {
        let mut a = level(4.0, 0, 40, 0.0);
        a.failures = vec![Failure::new("HTTP 503 Service Unavailable", 40, None)];
        let b = level(8.0, 0, 80, 0.0);
        let s = run_summary(&run(vec![a, b]));
        assert_eq!(s, "2 levels: every request failed (120 requests, most often HTTP 503 Service Unavailable)");
        assert!(!s.contains("peak"));
        let s = run_summary(&run(vec![level(4.0, 40, 0, 100.0), level(8.0, 0, 80, 0.0)]));
        assert!(
            s.starts_with("2 levels, peak 100.0 output tok/s at C=4") && s.ends_with("; every request failed at C=8"),
            "{s}"
        );
    }

    #[test]
    fn a_regressed_run_says_so_first_with_its_size_and_the_runs_it_was_judged_against() {
        use crate::domain::analysis::compare::tests::{level as lvl, run as mk};
        let night = |id: &str, day: u32, t: f64| {
            let mut r =
                mk(id, "sim nightly", Default::default(), vec![lvl(16.0, 600.0, Some(1.3)), lvl(48.0, t, Some(2.9))]);
            r.created_at = format!("2026-12-0{day}T02:00:00Z");
            r
        };
        let history = [night("night00003", 3, 660.0), night("night00002", 2, 655.0), night("night00001", 1, 662.0)];
        let this = night("night00004", 4, 500.0);
        let t = crate::domain::analysis::thresholds::Thresholds::default();
        let report = regression::against_history(&this, &history, &t);
        let f = run_findings(&this, None, Some(&report), &[], None, None);
        let v = f.history_line.expect("judged");
        assert!(v.regressed);
        assert!(
            v.sentence
                .starts_with("Regressed: output tok/s at C=48 −24 % (659.0 → 500.0 tok/s) against the history of "),
            "{}",
            v.sentence
        );
        assert!(v.sentence.contains("(worse by more than 5 % and 3 standard deviations)"), "{}", v.sentence);
        assert_eq!(
            v.against,
            [
                ("/runs/night00003".to_owned(), "sim nightly (2026-12-03 02:00)".to_owned()),
                ("/runs/night00002".to_owned(), "sim nightly (2026-12-02 02:00)".to_owned()),
                ("/runs/night00001".to_owned(), "sim nightly (2026-12-01 02:00)".to_owned()),
            ]
        );
        // The same run without the loss: no regression, said as plainly.
        let fine = night("night00005", 5, 661.0);
        let report = regression::against_history(&fine, &history, &t);
        let v = run_findings(&fine, None, Some(&report), &[], None, None).history_line.expect("judged");
        assert!(!v.regressed);
        assert!(v.sentence.starts_with("No regression against the history of "), "{}", v.sentence);
    }
}
