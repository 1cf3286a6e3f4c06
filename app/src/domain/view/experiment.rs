//! An experiment as its page says it: the settings that vary between its runs as columns,
//! one row per setting (a run, its trials inside its levels), each labelled by those
//! settings only, and the best setting — by peak output throughput, or by capacity at the
//! chosen SLO — with whether it beats the runner-up beyond noise.

use super::list_figures::{list_figures, CapacityCell, ListFigures};
use crate::domain::analysis::compare::{self, Quantity};
use crate::domain::analysis::noise::Significance;
use crate::domain::analysis::slo::Slo;
use crate::domain::model::format::{tok_s, UNKNOWN};
use crate::domain::model::level::LevelKey;
use crate::domain::model::metrics::{Metric, Stat};
use crate::domain::Run;
use serde::{Deserialize, Serialize};

/// One setting of the experiment: one of its runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SettingRow {
    /// Index into the experiment's runs.
    pub run: usize,
    /// The varied settings only, `key=value, …`; the run's name when no setting varies.
    pub label: String,
    /// The value of each varied setting (`keys` order), `—` where the run has none.
    pub values: Vec<String>,
    /// The most measurements at one level (1: single measurements, noise unknown).
    pub trials: usize,
    pub peak_tok_s: Option<f64>,
    /// `C=64`: where the peak was measured.
    pub peak_at: Option<String>,
    /// Plateau and capacity at the view's SLO, as the runs list says them.
    pub figures: ListFigures,
}

/// The experiment's rows and its verdict.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ExperimentSummary {
    /// The settings that vary, as `key=value` tags name them.
    pub keys: Vec<String>,
    pub rows: Vec<SettingRow>,
    /// Index into `rows` of the best setting, when one can be named.
    pub best: Option<usize>,
    /// "Best setting: max_num_seqs=128, peak 1,234 tok/s at C=64; vs max_num_seqs=256 at
    /// C=64: +1.9 % (95 % CI +0.7 % … +3.2 %): real."
    pub verdict: Option<String>,
}

/// The label of a run among the experiment's: its varied settings, or its name.
fn label(keys: &[String], values: &[String], name: &str) -> String {
    if keys.is_empty() {
        return name.to_owned();
    }
    keys.iter().zip(values).map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(", ")
}

/// The experiment's rows, best setting and verdict; capacity at `slo` when given (then
/// the best setting is the one of highest capacity, ties by peak).
pub fn summarize(runs: &[Run], slo: Option<&Slo>) -> ExperimentSummary {
    let varied = compare::varied_settings(runs);
    let keys: Vec<String> = varied.iter().map(|(k, _)| k.clone()).collect();
    let rows: Vec<SettingRow> = runs
        .iter()
        .enumerate()
        .map(|(i, run)| {
            let values: Vec<String> = varied
                .iter()
                .map(|(_, vs)| vs.get(i).cloned().flatten().unwrap_or_else(|| UNKNOWN.to_owned()))
                .collect();
            let peak = run
                .points
                .iter()
                .filter_map(|p| Some((p, p.output_tok_s().filter(|t| t.is_finite())?)))
                .max_by(|a, b| a.1.total_cmp(&b.1));
            SettingRow {
                run: i,
                label: label(&keys, &values, &run.name),
                values,
                trials: run
                    .points
                    .iter()
                    .map(|p| p.trials.iter().filter(|t| !t.warmup).count().max(1))
                    .max()
                    .unwrap_or(0),
                peak_tok_s: peak.map(|(_, t)| t),
                peak_at: peak.map(|(p, _)| LevelKey::of(p).label()),
                figures: list_figures(&run.points, peak.map(|(_, t)| t), run.facts.gpu_count, slo),
            }
        })
        .collect();
    let (best, verdict) = best_of(runs, &rows, slo);
    ExperimentSummary { keys, rows, best, verdict }
}

/// The capacity's load when the SLO is met somewhere (for ranking).
fn capacity_load(r: &SettingRow) -> Option<f64> {
    match r.figures.capacity {
        Some(CapacityCell::At { load, .. }) => Some(load),
        _ => None,
    }
}

/// The best row and the sentence that names it against the runner-up.
fn best_of(runs: &[Run], rows: &[SettingRow], slo: Option<&Slo>) -> (Option<usize>, Option<String>) {
    let mut ranked: Vec<&SettingRow> = rows.iter().filter(|r| r.peak_tok_s.is_some()).collect();
    let key = |r: &SettingRow| {
        (capacity_load(r).filter(|_| slo.is_some()).unwrap_or(f64::NEG_INFINITY), r.peak_tok_s.unwrap_or(0.0))
    };
    ranked.sort_by(|a, b| {
        let (ka, kb) = (key(a), key(b));
        kb.0.total_cmp(&ka.0).then(kb.1.total_cmp(&ka.1))
    });
    let Some(best) = ranked.first() else { return (None, None) };
    let at_slo = match (slo, capacity_load(best)) {
        (Some(s), Some(_)) => {
            let cap = best.figures.capacity.as_ref().map(CapacityCell::label).unwrap_or_default();
            Some(format!("highest capacity at {}: {cap}", s.spaced()))
        }
        (Some(s), None) => Some(format!("no setting meets {}", s.spaced())),
        (None, _) => None,
    };
    let peak = format!(
        "peak {}{}",
        best.peak_tok_s.map(tok_s).unwrap_or_default(),
        best.peak_at.as_ref().map(|l| format!(" at {l}")).unwrap_or_default()
    );
    let head = match &at_slo {
        Some(s) => format!("Best setting: {} — {s}; {peak}", best.label),
        None => format!("Best setting: {}, {peak}", best.label),
    };
    let Some(second) = ranked.get(1) else {
        return (Some(best.run), Some(format!("{head}.")));
    };
    let against = versus(runs, best, second);
    (Some(best.run), Some(format!("{head}; {against}.")))
}

/// The best setting's output throughput at its peak level against the runner-up's at the
/// same level, with the noise verdict from their trials.
fn versus(runs: &[Run], best: &SettingRow, second: &SettingRow) -> String {
    let pair = [runs[second.run].clone(), runs[best.run].clone()];
    let level = runs[best.run]
        .points
        .iter()
        .filter(|p| p.output_tok_s().is_some_and(f64::is_finite))
        .max_by(|a, b| a.output_tok_s().unwrap_or(0.0).total_cmp(&b.output_tok_s().unwrap_or(0.0)))
        .map(LevelKey::of);
    let change = compare::compare(&pair, 0).and_then(|cmp| {
        let l = cmp.levels.into_iter().find(|l| Some(l.key) == level)?;
        let d = l.deltas.into_iter().find(|d| d.run == 1)?;
        d.changes
            .into_iter()
            .find(|c| c.quantity == Quantity::Measure { metric: Metric::OutputThroughput, stat: Stat::Mean })
    });
    let at = level.map(|l| l.label()).unwrap_or_default();
    match change.and_then(|c| Some((c.change_pct?, c.significance))) {
        Some((pct, sig)) => {
            format!("vs {} at {at}: {}", second.label, sig.unwrap_or_else(Significance::single).phrase(pct))
        }
        None => format!("{} measured no level at {at}: the two cannot be compared there", second.label),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::analysis::compare::tests::{level, run as make_run};
    use crate::domain::{Point, RunFacts};

    /// Each level measured once per value of `trials`.
    fn run(id: &str, tags: &[&str], levels: &[(f64, &[f64])]) -> Run {
        let points = levels
            .iter()
            .filter_map(|(c, trials)| Point::from_trials(trials.iter().map(|t| level(*c, *t, None)).collect()))
            .collect();
        let facts = RunFacts { tags: tags.iter().map(|t| (*t).to_owned()).collect(), ..RunFacts::default() };
        make_run(id, &format!("SERVE--{}", tags.join("-")), facts, points)
    }

    #[test]
    fn the_varied_setting_labels_each_row_and_the_best_is_judged_against_the_noise() {
        let runs = [
            run(
                "exp00001",
                &["max_num_seqs=128", "block=16"],
                &[(32.0, &[1000.0, 1010.0, 990.0]), (64.0, &[1500.0, 1510.0, 1490.0])],
            ),
            run(
                "exp00002",
                &["max_num_seqs=256", "block=16"],
                &[(32.0, &[1000.0, 1005.0, 995.0]), (64.0, &[1700.0, 1710.0, 1690.0])],
            ),
        ];
        let s = summarize(&runs, None);
        assert_eq!(s.keys, vec!["max_num_seqs".to_owned()], "block is the same everywhere: not a column");
        assert_eq!(s.rows[0].label, "max_num_seqs=128");
        assert_eq!(s.rows[1].values, vec!["256".to_owned()]);
        assert_eq!(s.rows[1].trials, 3);
        assert_eq!(s.best, Some(1));
        let v = s.verdict.expect("a verdict");
        assert!(v.starts_with("Best setting: max_num_seqs=256, peak 1,700 tok/s at C=64; vs max_num_seqs=128 at C=64: +13 % (95 % CI +12 % … +15 %): real."), "{v}");
    }

    #[test]
    fn single_measurements_cannot_tell_and_an_slo_ranks_by_capacity() {
        let runs = [
            run("exp00003", &["tp=1"], &[(1.0, &[100.0]), (2.0, &[150.0])]),
            run("exp00004", &["tp=2"], &[(1.0, &[101.0]), (2.0, &[152.0])]),
        ];
        let v = summarize(&runs, None).verdict.expect("a verdict");
        assert!(v.ends_with("vs tp=1 at C=2: +1.3 %: single measurement: cannot tell."), "{v}");
        // No run reports TTFT: the SLO judges nothing, and says so rather than rank by it.
        let slo = Slo::parse("ttft:p99<=2s").expect("an SLO");
        let s = summarize(&runs, Some(&slo));
        assert_eq!(s.best, Some(1), "peak decides when no capacity is known");
        let v = s.verdict.expect("a verdict");
        assert!(v.starts_with("Best setting: tp=2 — no setting meets ttft:p99"), "{v}");
    }
}
