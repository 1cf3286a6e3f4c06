//! Why a run plateaus: rules that read the client's and the inference server's signals at
//! the levels of the plateau and say, in one sentence with its evidence numbers, what caps
//! throughput — the engine's batch limit, a full KV cache, prefill, decode speed, or the
//! load generator itself — or that the cause cannot be seen because no server metrics were
//! scraped. Also the trust check (server-counted generated tokens against the client's
//! usage counts) and the server-side difference between two runs at a shared level.
//!
//! Pure functions, no IO, compiles to wasm. Input is this module's own [`RunSignals`]
//! (one [`LevelSignals`] per load level): [`RunSignals::from_run`] fills the client side
//! from any stored [`Run`](crate::domain::Run); the server side (scraped Prometheus metrics) is `None` until
//! [`super::why_signals`] fills it from the stored telemetry. Unknown is `None`, never 0.
//!
//! The plateau's region comes from [`super::knee::saturation`]: rules look at the levels
//! from the knee up. [`super::anomalies`] turns findings into proposed annotations; this
//! module must not import it (it imports this one).
//!
//! Rule order is deliberate ([`explain`]): the client first (when the generator could not
//! keep up, the server's numbers describe a load that was never offered), then "no server
//! metrics", then the server-side causes from the most specific (memory) to the most
//! general (decode speed).

mod cutoffs;
mod finding;
mod rules;
mod signals;
#[cfg(test)]
mod tests;
mod trust;

pub use cutoffs::*;
pub use finding::*;
pub use rules::*;
pub use signals::*;
pub use trust::*;
