//! The regression gate: a run checked against a baseline run, or against its
//! configuration's history, with thresholds as Bencher has them — a percentage, a z-score
//! over a window of past runs, a t-test where there are trials — per metric and direction
//! (throughput lower is worse, latency higher is worse). Pure: the caller brings the runs
//! (`server/src/check.rs` reads them; `plateau check` and `GET /api/v1/runs/{id}/check`
//! print [`CheckReport::markdown`]).
//!
//! A run's configuration ([`ConfigKey`]) is what must match for two runs to be the same
//! test: model, engine, GPU type and count, endpoint, prompt and output lengths, load kind.
//! The engine *version* is left out on purpose: the history of one key is how a team sees
//! an engine upgrade move the numbers, and the gate exists to catch exactly that.

use super::curve::CurveVerdict;
use super::noise::{Significance, Verdict};
use super::slo::gate::{Basis, CapacityFinding};
use super::thresholds::{metric_label, ConfigKey, Test, Thresholds, CHECKED};
use crate::domain::model::format::fig;
use crate::domain::model::level::{load_label, LevelKey};
use crate::domain::model::metrics::{Metric, Stat};
use crate::domain::model::stats::mean_sd;
use crate::domain::{Point, Run};
use serde::{Deserialize, Serialize};

/// One number at one level, checked.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    pub level: LevelKey,
    pub metric: Metric,
    pub stat: Stat,
    /// The baseline's value, or the history's mean.
    pub reference: f64,
    pub value: f64,
    /// (value − reference) ÷ reference × 100.
    pub change_pct: f64,
    pub test: Test,
    /// The z-score against the history, or the t-test's verdict, where they apply.
    pub z: Option<f64>,
    pub significance: Option<Significance>,
    /// Worse by more than the thresholds allow.
    pub regression: bool,
    /// Evidence in words.
    pub detail: String,
}

/// A run checked against a baseline or a history.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckReport {
    pub run_id: String,
    pub run_name: String,
    /// "baseline run “A”", "history of 7 runs of llama-3 · vllm …".
    pub against: String,
    pub thresholds: Thresholds,
    pub findings: Vec<Finding>,
    /// Why nothing could be checked, when nothing was (no shared level, no history).
    pub note: Option<String>,
    /// Capacity at an SLO, when the check names one (`--slo`): a gated metric of its own
    /// (`slo::gate`). Its t-test, where trials allow one, is not among the Bonferroni
    /// family of the per-level findings: it is one question asked of the whole run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<CapacityFinding>,
    /// The run's curve against the same reference (`curve`): the knee, the plateau and,
    /// with an SLO, capacity in one sentence. A knee that moved to a lower load beyond
    /// noise, or a plateau that fell by more than `max_worse_pct` beyond noise, is one
    /// regression more (the plateau level's own finding may count as well: the curve is a
    /// question about the whole run, the finding about one level). Absent from reports
    /// written before curves were judged, and when there is nothing to judge against.
    /// (The browser never reads it — the run page words the check on the server — so the
    /// wasm build skips it and carries none of the verdict's serde code.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(not(feature = "ssr"), serde(skip))]
    pub curve: Option<CurveVerdict>,
    /// The runs the check read: the baseline, or the history's window, newest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub judged_against: Vec<JudgedRun>,
}

/// A run a check was judged against.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JudgedRun {
    pub id: String,
    pub name: String,
    pub created_at: String,
}

impl JudgedRun {
    fn of(run: &Run) -> Self {
        Self { id: run.id.to_string(), name: run.name.clone(), created_at: run.created_at.clone() }
    }
}

impl CheckReport {
    pub fn regressions(&self) -> usize {
        self.findings.iter().filter(|f| f.regression).count()
            + usize::from(self.capacity.as_ref().is_some_and(|c| c.regression))
            + usize::from(self.curve_regressed())
    }

    /// The curve verdict counts as a regression (see [`CheckReport::curve`]).
    pub fn curve_regressed(&self) -> bool {
        self.curve.as_ref().is_some_and(|c| c.regression(self.thresholds.max_worse_pct))
    }

    /// Capacity at an SLO gated too: the finding, and the curve verdict's last clause.
    pub fn with_capacity(mut self, capacity: CapacityFinding) -> Self {
        self.curve = self.curve.take().map(|c| c.with_capacity_finding(&capacity, &self.thresholds));
        self.capacity = Some(capacity);
        self
    }

    /// Something was judged: a per-level finding, or capacity at the SLO.
    fn judged_anything(&self) -> bool {
        !self.findings.is_empty()
            || self.capacity.as_ref().is_some_and(|c| c.not_judged.is_none())
            || self.curve.as_ref().is_some_and(CurveVerdict::judged)
    }

    /// The regressed finding that is furthest past its reference, in the worse direction.
    pub fn worst(&self) -> Option<&Finding> {
        self.findings
            .iter()
            .filter(|f| f.regression)
            .max_by(|a, b| worse_fraction(a.metric, a.change_pct).total_cmp(&worse_fraction(b.metric, b.change_pct)))
    }

    /// Passed: nothing worse beyond the thresholds (and something was checked).
    pub fn passed(&self) -> bool {
        self.regressions() == 0
    }

    /// A summary fit for a CI job's summary (GitHub's `$GITHUB_STEP_SUMMARY`): the verdict,
    /// then one table row per finding, regressions first. Text from runs (names) is
    /// escaped for Markdown tables.
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        let n = self.regressions();
        let head = if n > 0 {
            format!("❌ **{n} regression{}**", if n == 1 { "" } else { "s" })
        } else if !self.judged_anything() {
            "⚠️ **nothing to check**".to_owned()
        } else {
            "✅ **no regression**".to_owned()
        };
        out.push_str(&format!(
            "## Plateau check: {}\n\n{head} in run “{}” ({}) against the {}.\n\n",
            md(&self.run_name),
            md(&self.run_name),
            md(&self.run_id),
            md(&self.against)
        ));
        if let Some(c) = &self.curve {
            out.push_str(&curve_markdown(c, self.curve_regressed()));
        }
        out.push_str(&format!(
            "Thresholds: worse by more than {} %{}; throughput lower is worse, latency higher is worse.\n\n",
            self.thresholds.max_worse_pct,
            if self.findings.iter().any(|f| f.test == Test::ZScore) {
                format!(
                    " and beyond {} standard deviations of the last {} runs",
                    self.thresholds.z, self.thresholds.window
                )
            } else {
                " and, where both sides have trials, beyond noise (Welch's t-test, 95 %)".to_owned()
            }
        ));
        if let Some(note) = &self.note {
            out.push_str(&format!("{}\n\n", md(note)));
        }
        if let Some(c) = &self.capacity {
            out.push_str(&capacity_markdown(c));
        }
        if self.findings.is_empty() {
            return out;
        }
        out.push_str("| | level | metric | reference | this run | change | test | evidence |\n");
        out.push_str("|---|---|---|---:|---:|---:|---|---|\n");
        let mut rows: Vec<&Finding> = self.findings.iter().collect();
        rows.sort_by_key(|f| !f.regression);
        for f in rows {
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} | {} |\n",
                if f.regression { "❌" } else { "✅" },
                f.level.label(),
                metric_label(f.metric, f.stat),
                fig(f.reference),
                fig(f.value),
                super::noise::pct(f.change_pct),
                f.test.label(),
                md(&f.detail)
            ));
        }
        out
    }
}

/// The curve section of a check's summary, first after the verdict: the headline sentence,
/// then the knee's and the plateau's evidence.
fn curve_markdown(c: &CurveVerdict, regression: bool) -> String {
    let mark = if regression {
        "❌"
    } else if c.judged() {
        "✅"
    } else {
        "⚠️"
    };
    let mut out = format!("### Curve\n\n{mark} {}\n\n", md(&c.headline));
    out.push_str(&format!("- Knee: {}\n", md(&c.knee.detail)));
    out.push_str(&format!("- Plateau: {}\n\n", md(&c.plateau.detail)));
    out
}

/// The capacity section of a check's summary: the verdict and the change in one line, the
/// evidence, and each run's capacity in its sentence.
fn capacity_markdown(c: &CapacityFinding) -> String {
    let mark = match (&c.not_judged, c.regression) {
        (Some(_), _) => "⚠️ not judged:",
        (None, true) => "❌",
        (None, false) => "✅",
    };
    let mut out = format!("### Capacity at {}\n\n{mark} {}.\n\n", md(&c.slo.spaced()), md(&c.summary));
    let test = c.test.map(|t| format!("{}; ", t.label())).unwrap_or_default();
    out.push_str(&format!(
        "Compared: {} against {}. {test}{}.\n\n",
        match c.basis {
            Basis::Estimate => "interpolated capacities (≈)",
            Basis::Measured => "the highest measured levels that meet the SLO",
        },
        md(&c.reference_label),
        md(&c.detail)
    ));
    for (who, side) in [("This run", &c.value), ("Reference", &c.reference)] {
        if !side.sentence.is_empty() {
            out.push_str(&format!("- {who}: {}\n", md(&side.sentence)));
        }
    }
    if !c.value.sentence.is_empty() || !c.reference.sentence.is_empty() {
        out.push('\n');
    }
    out
}

/// Text safe inside a Markdown table cell and free of Markdown/HTML syntax.
fn md(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '|' | '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '#' | '!' | '~' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' => out.push(' '),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// Worse means lower for throughput, higher for latency.
fn worse_fraction(metric: Metric, change_pct: f64) -> f64 {
    if metric.higher_is_better() == Some(true) {
        -change_pct
    } else {
        change_pct
    }
}

fn level_of<'a>(run: &'a Run, key: &LevelKey) -> Option<&'a Point> {
    run.points.iter().find(|p| key.matches(p))
}

/// `run` against `baseline`, level by level.
pub fn against_baseline(run: &Run, baseline: &Run, t: &Thresholds) -> CheckReport {
    let mut findings = Vec::new();
    for p in &run.points {
        let key = LevelKey::of(p);
        let Some(b) = level_of(baseline, &key) else { continue };
        for (metric, stat) in CHECKED {
            let (Some(reference), Some(value)) = (b.get(metric, stat), p.get(metric, stat)) else { continue };
            if reference == 0.0 {
                continue;
            }
            let change_pct = (value - reference) / reference * 100.0;
            let worse = worse_fraction(metric, change_pct);
            let sig = Significance::welch(
                &b.trial_values(metric, stat).unwrap_or_default(),
                &p.trial_values(metric, stat).unwrap_or_default(),
            );
            let (test, regression, detail) = match sig {
                Some(s) => (
                    Test::TTest,
                    worse > t.max_worse_pct && s.verdict == Verdict::Real,
                    format!("{} trials vs {}: {}", s.n_other, s.n_baseline, s.phrase(change_pct)),
                ),
                None => (Test::Percentage, worse > t.max_worse_pct, "one measurement on a side".to_owned()),
            };
            findings.push(Finding {
                level: key,
                metric,
                stat,
                reference,
                value,
                change_pct,
                test,
                z: None,
                significance: sig,
                regression,
                detail,
            });
        }
    }
    // Many t-tests at once: at 95 % each, ten checked numbers of two identical runs would
    // call one "real" a third of the time. Bonferroni: each test must reach α ÷ the number
    // of t-tests, so the whole check keeps its 5 % chance of a false regression.
    let tests = findings.iter().filter(|f| f.test == Test::TTest).count().max(1);
    let alpha = super::noise::ALPHA / tests as f64;
    for f in findings.iter_mut().filter(|f| f.test == Test::TTest && f.regression) {
        let p = f.significance.as_ref().and_then(|s| s.p_value).unwrap_or(1.0);
        if p >= alpha {
            f.regression = false;
            f.detail.push_str(&format!(
                " — not beyond noise across the {tests} t-tests of this check (p {p:.3} ≥ {alpha:.4})"
            ));
        }
    }
    let note = findings.is_empty().then(|| "The runs share no level with the checked metrics.".to_owned());
    CheckReport {
        run_id: run.id.to_string(),
        run_name: run.name.clone(),
        against: format!("baseline run “{}” ({})", baseline.name, baseline.id),
        thresholds: *t,
        findings,
        note,
        capacity: None,
        curve: Some(super::curve::curve_verdict(baseline, run)),
        judged_against: vec![JudgedRun::of(baseline)],
    }
}

/// `run` against the runs before it of the same configuration (`history`: newest first,
/// `run` not among them; at most `t.window` are used). With fewer than two, it is checked
/// against the one there is as a baseline.
pub fn against_history(run: &Run, history: &[Run], t: &Thresholds) -> CheckReport {
    // An accepted "expected change: new baseline" restarts the window at its run.
    let history = super::thresholds::since_baseline(run, history);
    let window: Vec<&Run> = history.iter().filter(|h| h.id != run.id).take(t.window.max(1)).collect();
    let key = ConfigKey::of(run);
    if window.len() < 2 {
        return match window.first() {
            Some(only) => {
                let mut r = against_baseline(run, only, t);
                r.against =
                    format!("history of {} (one earlier run: “{}”, used as the baseline)", key.label(), only.name);
                r
            }
            None => CheckReport {
                run_id: run.id.to_string(),
                run_name: run.name.clone(),
                against: format!("history of {}", key.label()),
                thresholds: *t,
                findings: Vec::new(),
                note: Some(if super::thresholds::starts_baseline(run) {
                    "This run starts a new baseline (an annotation says so): nothing before it to check against."
                        .to_owned()
                } else {
                    "No earlier run of this configuration: nothing to check against.".to_owned()
                }),
                capacity: None,
                curve: None,
                judged_against: Vec::new(),
            },
        };
    }
    let mut findings = Vec::new();
    for p in &run.points {
        let level = LevelKey::of(p);
        for (metric, stat) in CHECKED {
            let Some(value) = p.get(metric, stat) else { continue };
            let past: Vec<f64> =
                window.iter().filter_map(|h| level_of(h, &level).and_then(|q| q.get(metric, stat))).collect();
            if past.len() < 2 {
                continue;
            }
            let (mean, sd) = mean_sd(&past);
            if mean == 0.0 {
                continue;
            }
            let change_pct = (value - mean) / mean * 100.0;
            let worse = worse_fraction(metric, change_pct);
            // z in the worse direction; a window without spread makes any worse change infinite.
            let z_worse = if sd > 0.0 {
                worse / 100.0 * mean.abs() / sd
            } else if worse > 0.0 {
                f64::INFINITY
            } else {
                0.0
            };
            let regression = worse > t.max_worse_pct && z_worse > t.z;
            let z_shown = if z_worse.is_finite() { format!("{z_worse:.1}") } else { "∞".to_owned() };
            findings.push(Finding {
                level,
                metric,
                stat,
                reference: mean,
                value,
                change_pct,
                test: Test::ZScore,
                z: z_worse.is_finite().then_some(z_worse),
                significance: None,
                regression,
                detail: format!(
                    "mean of {} runs {} (sd {}); z = {z_shown} in the worse direction",
                    past.len(),
                    fig(mean),
                    fig(sd)
                ),
            });
        }
    }
    let note = findings.is_empty().then(|| "No level of this run was measured by two earlier runs.".to_owned());
    CheckReport {
        run_id: run.id.to_string(),
        run_name: run.name.clone(),
        against: format!("history of {} ({} runs)", key.label(), window.len()),
        thresholds: *t,
        findings,
        note,
        capacity: None,
        curve: super::curve::against_history(run, history, t),
        judged_against: window.iter().map(|r| JudgedRun::of(r)).collect(),
    }
}

/// The regressions of a check as proposed annotations (the run page lists them with the
/// anomalies, Accept and Dismiss): `run` is the run's index among the page's runs.
pub fn proposals(report: &CheckReport, run: usize, run_id: &crate::domain::RunId) -> Vec<super::anomalies::Anomaly> {
    use super::anomalies::{Anomaly, AnomalyKind, ProposalStatus, Severity};
    report
        .findings
        .iter()
        .filter(|f| f.regression)
        .map(|f| Anomaly {
            kind: AnomalyKind::Regression,
            severity: Severity::Warning,
            run,
            run_id: run_id.clone(),
            level: Some(f.level),
            metric: Some(f.metric),
            other_run: None,
            other_run_id: None,
            evidence: format!("{} against the {}", proposal_text(f), report.against),
            proposed_annotation_text: proposal_text(f),
            status: ProposalStatus::Proposed,
            series: None,
            levels: Vec::new(),
        })
        .collect()
}

/// "Regression at C=16: output throughput −17 % against 601.25 (mean of 4 runs …)."
pub fn proposal_text(f: &Finding) -> String {
    format!(
        "Regression at {}: {} {} against {} ({}).",
        load_label(f.level.load_kind, f.level.load_value),
        metric_label(f.metric, f.stat),
        super::noise::pct(f.change_pct),
        fig(f.reference),
        f.detail
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::analysis::compare::tests::{level, run};
    use crate::domain::LoadKind;
    use crate::domain::RunFacts;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A run of closed-loop levels `(C, tok/s, mean latency s)`, each with its own id.
    fn run_with(name: &str, levels: &[(f64, f64, f64)]) -> Run {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let id = format!("run{:04}", NEXT.fetch_add(1, Ordering::Relaxed));
        run(&id, name, RunFacts::default(), levels.iter().map(|(c, t, s)| level(*c, *t, Some(*s))).collect())
    }

    fn tput(run: &Run, c: f64) -> f64 {
        run.points.iter().find(|p| p.load_value == c).and_then(Point::output_tok_s).unwrap_or(0.0)
    }

    #[test]
    fn a_drop_beyond_the_threshold_fails_against_a_baseline() {
        let base = run_with("a", &[(8.0, 400.0, 2.0), (16.0, 600.0, 3.0)]);
        let slow = run_with("b", &[(8.0, 400.0, 2.0), (16.0, 420.0, 4.0)]);
        let r = against_baseline(&slow, &base, &Thresholds::default());
        assert_eq!(r.regressions(), 1, "{r:#?}");
        let f = r.findings.iter().find(|f| f.regression).unwrap();
        assert_eq!((f.level.load_value, f.metric, f.test), (16.0, Metric::OutputThroughput, Test::Percentage));
        assert!((f.change_pct - -30.0).abs() < 1e-9);
        let md = r.markdown();
        assert!(md.contains("❌ **1 regression**"), "{md}");
        assert!(md.contains("| ❌ | C=16 | output tok/s | 600.0 | 420.0 | −30 % |"), "{md}");
        // the same run against itself passes
        assert!(against_baseline(&base, &base, &Thresholds::default()).passed());
        // a gain is never a regression
        assert!(against_baseline(&base, &slow, &Thresholds::default()).passed());
        assert_eq!(tput(&slow, 16.0), 420.0);
    }

    #[test]
    fn trials_within_noise_do_not_fail() {
        let mut base = run_with("a", &[(8.0, 400.0, 2.0)]);
        let mut other = run_with("b", &[(8.0, 376.0, 2.0)]);
        let trials = |vals: &[f64]| {
            Point::from_trials(
                vals.iter()
                    .map(|v| {
                        let mut p = Point::at(LoadKind::Concurrency, 8.0);
                        p.set(Metric::OutputThroughput, Stat::Mean, *v);
                        p
                    })
                    .collect(),
            )
            .unwrap()
        };
        // −6 % on average, but the trials scatter ±15 %: not beyond noise
        base.points = vec![trials(&[340.0, 460.0, 400.0, 350.0, 450.0])];
        other.points = vec![trials(&[320.0, 430.0, 376.0, 330.0, 424.0])];
        let r = against_baseline(&other, &base, &Thresholds::default());
        assert_eq!(r.findings.first().map(|f| f.test), Some(Test::TTest));
        assert!(r.passed(), "{}", r.markdown());
        // tight trials, the same −6 %: real
        base.points = vec![trials(&[399.0, 401.0, 400.0, 398.0, 402.0])];
        other.points = vec![trials(&[375.0, 377.0, 376.0, 374.0, 378.0])];
        assert_eq!(against_baseline(&other, &base, &Thresholds::default()).regressions(), 1);
    }

    #[test]
    fn history_uses_the_z_score_of_the_window() {
        let hist: Vec<Run> = [600.0, 610.0, 590.0, 605.0].iter().map(|v| run_with("h", &[(16.0, *v, 3.0)])).collect();
        let ok = run_with("ok", &[(16.0, 596.0, 3.0)]);
        let r = against_history(&ok, &hist, &Thresholds::default());
        assert!(r.passed(), "{}", r.markdown());
        assert!(r.against.contains("(4 runs)"), "{}", r.against);
        let bad = run_with("bad", &[(16.0, 500.0, 3.0)]);
        let r = against_history(&bad, &hist, &Thresholds::default());
        let f = r.findings.iter().find(|f| f.metric == Metric::OutputThroughput).unwrap();
        assert!(f.regression && f.test == Test::ZScore && f.z.unwrap() > 10.0, "{f:?}");
        assert!(
            proposal_text(f).starts_with("Regression at C=16: output tok/s −17 % against 601.2 (mean of 4 runs"),
            "{}",
            proposal_text(f)
        );
        let found = proposals(&r, 0, &bad.id);
        assert!(
            !found.is_empty()
                && found.iter().all(|a| a.kind == crate::domain::analysis::anomalies::AnomalyKind::Regression)
        );
        assert!(found[0].key().starts_with("regression/"), "{}", found[0].key());
        // one earlier run: it is the baseline
        let r = against_history(&bad, &hist[..1], &Thresholds::default());
        assert!(r.against.contains("used as the baseline") && r.regressions() == 1, "{r:?}");
        // none: nothing to check, said so
        let r = against_history(&bad, &[], &Thresholds::default());
        assert!(r.findings.is_empty() && r.note.is_some() && r.passed());
        assert!(r.markdown().contains("nothing to check"));
    }

    #[test]
    fn names_cannot_break_the_markdown() {
        let base = run_with("a | b", &[(8.0, 400.0, 2.0)]);
        let mut other = run_with("<img src=x onerror=alert(1)> | *x*", &[(8.0, 300.0, 2.0)]);
        other.name = "<img src=x onerror=alert(1)> | *x*\n# h".into();
        let md = against_baseline(&other, &base, &Thresholds::default()).markdown();
        // every markup character is backslash-escaped: shown as typed, never as markup
        for (i, c) in md.char_indices().filter(|(_, c)| matches!(c, '<' | '>' | '*' | '#' | '[')) {
            let escaped = md[..i].ends_with('\\');
            // Plateau's own markup: headings at a line's start, bold `**`
            let own = i == 0
                || md[..i].ends_with('\n')
                || md[..i].ends_with('#')
                || md[i..].starts_with("**")
                || (c == '*' && md[..i].ends_with('*') && !md[..i].ends_with("\\*"));
            assert!(escaped || own, "{c:?} at {i} in {md}");
        }
        assert!(md.contains("\\<img") && md.contains("\\| \\*x\\*"), "{md}");
        assert!(!md.contains("\n# h"), "{md}");
    }

    #[test]
    fn capacity_at_an_slo_is_gated_with_the_other_metrics() {
        let slo = crate::domain::analysis::slo::Slo::parse("ttft:p99<=2s").unwrap();
        let sweep = |name: &str, ttft_ms: [f64; 3]| {
            let mut r = run_with(name, &[(8.0, 400.0, 2.0), (16.0, 600.0, 3.0), (32.0, 800.0, 4.0)]);
            for (p, ms) in r.points.iter_mut().zip(ttft_ms) {
                p.set(Metric::Ttft, Stat::P50, ms / 2.0);
                p.set(Metric::Ttft, Stat::P99, ms);
            }
            r
        };
        let (base, slow) = (sweep("a", [500.0, 1000.0, 3000.0]), sweep("b", [500.0, 2500.0, 3000.0]));
        let mut r = against_baseline(&slow, &base, &Thresholds::default());
        let per_level = r.regressions();
        r.capacity =
            Some(crate::domain::analysis::slo::gate::against_baseline(&slo, &slow, &base, &Thresholds::default()));
        assert_eq!(r.regressions(), per_level + 1, "{r:#?}");
        let md = r.markdown();
        assert!(md.contains("### Capacity at ttft:p99\\<=2s\n\n❌ capacity at ttft:p99\\<=2s fell from C≈"), "{md}");
        assert!(md.contains("- This run: At ttft:p99\\<=2s"), "{md}");
        // No shared level, but capacity was judged: something was checked.
        let mut lone = against_baseline(&slow, &run_with("c", &[(64.0, 1.0, 1.0)]), &Thresholds::default());
        assert!(lone.markdown().contains("nothing to check"));
        lone.capacity =
            Some(crate::domain::analysis::slo::gate::against_baseline(&slo, &base, &slow, &Thresholds::default()));
        assert!(lone.passed() && lone.markdown().contains("✅ **no regression**"), "{}", lone.markdown());
    }

    /// A run whose knee moved from C=64 to C=32 (three trials a level): the curve is one
    /// regression more, said first in the summary; a report written before curves were
    /// judged still reads.
    #[test]
    fn a_knee_that_moved_down_beyond_noise_is_a_regression_said_first() {
        let sweep = |name: &str, levels: &[(f64, f64)]| {
            let mut r = run_with(name, &[]);
            r.points = levels
                .iter()
                .map(|(c, t)| {
                    Point::from_trials([0.99, 1.0, 1.01].iter().map(|f| level(*c, t * f, Some(2.0))).collect()).unwrap()
                })
                .collect();
            r
        };
        let base = sweep("a", &[(8.0, 400.0), (16.0, 760.0), (32.0, 1400.0), (64.0, 2400.0), (128.0, 2450.0)]);
        let bent = sweep("b", &[(8.0, 480.0), (16.0, 900.0), (32.0, 1500.0), (64.0, 1520.0), (128.0, 1530.0)]);
        let r = against_baseline(&bent, &base, &Thresholds::default());
        assert!(r.curve_regressed(), "{r:#?}");
        let per_level = r.findings.iter().filter(|f| f.regression).count();
        assert_eq!(r.regressions(), per_level + 1);
        let md = r.markdown();
        let curve = md.find("### Curve\n\n❌ The knee moved from C≈64 to C≈32 (beyond noise); the plateau fell 38 %");
        assert!(curve.is_some_and(|at| md.find("Thresholds:").is_some_and(|t| t > at)), "{md}");
        assert!(md.contains("- Knee: the baseline C≈64 (each of 3 trials: C≈64), this run C≈32"), "{md}");
        // The same run against itself: the curve held, within noise.
        let same = against_baseline(&base, &base, &Thresholds::default());
        assert!(same.passed() && same.markdown().contains("✅ The knee held at C≈64 (within noise)"));
        // Older JSON, without `curve`, reads; a report without one writes none.
        let mut old = serde_json::to_value(&same).unwrap();
        old.as_object_mut().unwrap().remove("curve");
        let back: CheckReport = serde_json::from_value(old).unwrap();
        assert!(back.curve.is_none() && !serde_json::to_string(&back).unwrap().contains("\"curve\""));
    }

    #[test]
    fn the_key_leaves_the_engine_version_out() {
        let mut a = run_with("a", &[(8.0, 400.0, 2.0)]);
        let mut b = a.clone();
        a.facts.engine = Some("vLLM".into());
        b.facts.engine = Some("vllm ".into());
        a.facts.engine_version = Some("0.10".into());
        b.facts.engine_version = Some("0.11".into());
        assert_eq!(ConfigKey::of(&a), ConfigKey::of(&b));
        b.facts.gpu_count = Some(4);
        assert_ne!(ConfigKey::of(&a), ConfigKey::of(&b));
    }
}
