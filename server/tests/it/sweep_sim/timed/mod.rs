//! The simulator tests whose figures are timings: throughput against the model, the
//! adaptive and capacity searches, arrivals on their clock, repeats within noise. They run
//! one at a time ([`timing_lock`](super::support::timing_lock)), and `.ci/test` runs them
//! (`sweep_sim::timed::`) after every other suite, alone on the cores: another sweep's load
//! beside them would be measured with theirs. Every other simulator test runs beside the
//! other suites.

mod capacity;
mod rates;
mod repeats;
