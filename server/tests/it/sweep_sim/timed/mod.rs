//! The simulator tests whose figures are wall-clock timings: arrivals on their schedule,
//! queueing under overload, the capacity search on request rate, repeats within noise
//! (what is fixed by the model alone runs on its model clock: `sweep_sim::exact`). They run
//! one at a time ([`timing_lock`](super::support::timing_lock)), and `.ci/test` runs them
//! (`sweep_sim::timed::`) after every other suite, alone on the cores: another sweep's load
//! beside them would be measured with theirs. Every other simulator test runs beside the
//! other suites.

mod capacity;
mod rates;
mod repeats;
