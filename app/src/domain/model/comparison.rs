//! What makes a comparison, the two rules every edge of one applies (the compare page, its
//! server function, the exports, saved views, comparison notes): it holds [`MIN_RUNS`] to
//! [`MAX_RUNS`] runs ([`check_run_count`]), and its baseline is the run the view names, else
//! the earliest ([`baseline_index`], [`baseline_is_compared`]).

use super::ids::RunId;
use super::run::Run;

/// The fewest runs a comparison holds.
pub const MIN_RUNS: usize = 2;
/// The most runs a comparison holds (charts and tables stay readable; one page load
/// stays cheap).
pub const MAX_RUNS: usize = 10;

/// The run-count rule in words, for messages: `2 to 10 runs`.
pub fn run_count_rule() -> String {
    format!("{MIN_RUNS} to {MAX_RUNS} runs")
}

/// A number of runs that makes no comparison (fewer than [`MIN_RUNS`] or more than
/// [`MAX_RUNS`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("compare {MIN_RUNS} to {MAX_RUNS} runs; {given} were given")]
pub struct RunCountError {
    /// How many runs were asked for.
    pub given: usize,
}

/// Whether `given` runs make a comparison: [`MIN_RUNS`] to [`MAX_RUNS`].
pub fn check_run_count(given: usize) -> Result<(), RunCountError> {
    if (MIN_RUNS..=MAX_RUNS).contains(&given) {
        Ok(())
    } else {
        Err(RunCountError { given })
    }
}

/// The index of the baseline among `runs`: the one `chosen` names, else the earliest run
/// (by `created_at`), so changes read forward in time. `0` for no runs.
pub fn baseline_index(runs: &[Run], chosen: Option<&RunId>) -> usize {
    let earliest = runs.iter().enumerate().min_by(|a, b| a.1.created_at.cmp(&b.1.created_at)).map_or(0, |(i, _)| i);
    chosen.and_then(|b| runs.iter().position(|r| &r.id == b)).unwrap_or(earliest)
}

/// Whether a named baseline may stand with these compared runs: it must be one of them
/// (with no runs named yet, any id may stand).
pub fn baseline_is_compared(runs: &[RunId], baseline: &RunId) -> bool {
    runs.is_empty() || runs.contains(baseline)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::analysis::compare::tests::{chat_run, completions_run};

    #[test]
    fn a_comparison_holds_two_to_ten_runs() {
        assert_eq!(check_run_count(1), Err(RunCountError { given: 1 }));
        assert!(check_run_count(MIN_RUNS).is_ok() && check_run_count(MAX_RUNS).is_ok());
        assert_eq!(check_run_count(11).unwrap_err().to_string(), "compare 2 to 10 runs; 11 were given");
        assert!(check_run_count(0).is_err());
        assert_eq!(run_count_rule(), "2 to 10 runs");
    }

    #[test]
    fn the_baseline_is_the_named_run_else_the_earliest() {
        let mut early = completions_run();
        early.created_at = "2026-01-01T00:00:00Z".into();
        let mut late = chat_run();
        late.created_at = "2026-02-01T00:00:00Z".into();
        let runs = [late.clone(), early.clone()];
        assert_eq!(baseline_index(&runs, None), 1, "the earliest");
        assert_eq!(baseline_index(&runs, Some(&late.id)), 0, "the named one");
        let stranger = RunId::parse("zzzz9").unwrap();
        assert_eq!(baseline_index(&runs, Some(&stranger)), 1, "an unknown name falls back to the earliest");
        assert_eq!(baseline_index(&[], None), 0);
        let ids = [late.id.clone(), early.id.clone()];
        assert!(baseline_is_compared(&ids, &early.id));
        assert!(!baseline_is_compared(&ids, &stranger));
        assert!(baseline_is_compared(&[], &stranger), "no runs named yet");
    }
}
