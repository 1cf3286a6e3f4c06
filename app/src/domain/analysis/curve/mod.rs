//! Curve-level verdicts: a run judged against a baseline run (or its configuration's
//! history) as a *curve* — where the throughput curve bends (the knee), how high it
//! plateaus, and, with an SLO, how much load it serves within it — rather than as a list of
//! per-level percentages. The compare page says one [`CurveVerdict`] per run against the
//! baseline; the regression gate (`regression::CheckReport::curve`) carries one and counts
//! a knee that moved down or a plateau that fell, beyond noise, as a regression. Pure, and
//! compiled to wasm (the compare page computes it as it hydrates): no dependency beyond the
//! domain's own.
//!
//! Method:
//! - **The knee** is `knee::knee` of the run's level means at [`DEFAULT_KNEE_THRESHOLD`](crate::domain::analysis::knee::DEFAULT_KNEE_THRESHOLD)
//!   ([`KneeAt::Level`]), or, without a plateau, "above the highest level"
//!   ([`KneeAt::Above`]). Its *range* comes from the trials: where every level has the same
//!   number (≥ 2) of counted trials, trial k of every level is one sweep (as
//!   `slo::gate` judges per-trial capacities), each sweep's knee is found, and the range
//!   spans them and the means' knee. Knees live on the grid of measured levels, so this
//!   is a range of levels, not a t-interval.
//! - **The knee moved beyond noise** when both runs have ranges and they do not overlap
//!   (every trial of one run bends below every trial of the other); **within noise** when
//!   the ranges overlap. A run measured once has no range: the verdict is **cannot tell**.
//!   The move is still said, with how many measured levels it spans ("3 levels apart"),
//!   so a reader can weigh a large move, but the gate never fails on it (the per-level
//!   findings at those levels still judge the numbers on their percentage).
//! - **The plateau** is `knee::Saturation::saturation_tok_s` (the highest throughput from
//!   the knee on) and the level it was measured at. Its change is beyond noise when Welch's
//!   t-test over the two plateau levels' trials says so (both sides ≥ 2 trials), at
//!   [`noise::ALPHA`](crate::domain::analysis::noise::ALPHA): one question asked of the whole run, so not among the gate's
//!   Bonferroni family; else the percentage alone ("single measurement: noise unknown").
//! - **Against a history** ([`against_history`], the gate's `--history`): the knee is
//!   beyond noise when it lies outside the range of the earlier runs' knees *and* more
//!   than `z` standard deviations of their log₂ loads from their mean (no spread: any knee
//!   outside it); the plateau when it is more than `z` standard deviations from the
//!   earlier plateaus' mean (no spread: any change) — `regression::against_history`'s
//!   rule. Fewer than two earlier runs: the one there is, as a baseline.
//! - **Capacity at an SLO** is not recomputed here: the compare page's
//!   `slo::CapacityChange` and the gate's `slo::gate::CapacityFinding` are attached
//!   ([`CurveVerdict::with_capacity_change`], [`CurveVerdict::with_capacity_finding`]) and
//!   said as the headline's last clause.

mod baseline;
mod history;
mod knees;
#[cfg(test)]
mod tests;
mod verdict;

pub use baseline::*;
pub use history::*;
pub use verdict::*;
