//! Comparing runs: which levels line up, how every shared number moved against a
//! baseline run, *why* throughput moved (delta attribution), and whether the two runs
//! measured the same thing at all (facts diff and comparability verdict).
//!
//! What makes a comparison (2 to 10 runs, which one is the baseline) is the model's rule,
//! [`crate::domain::model::comparison`]; this module judges the comparison once made.
//!
//! Pure functions of domain data: no IO, compiles to wasm. It reuses [`super::scaling`]
//! for implied tokens per request and lines levels up by their [`LevelKey`](crate::domain::model::level::LevelKey).
//!
//! The attribution rests on one identity. Output throughput is request rate × tokens per
//! request; in a closed loop the request rate is C ÷ mean latency (Little's law), so
//! `T = C × N ÷ L`. At the same C, `T₂/T₁ = (N₂/N₁) × (L₁/L₂)`: a throughput change splits
//! exactly into an output-length factor and a per-request-speed factor. The story's C=32
//! drop (799.9 → 464.4 tok/s) then reads "tokens per request unchanged at ≈510 (implied: …); requests
//! took 73 % longer", not "regression".

mod attribution;
mod facts;
mod levels;
mod runs;
#[cfg(test)]
pub(crate) mod tests;
mod words;

pub use attribution::*;
pub use facts::*;
pub use levels::*;
pub use runs::*;
pub(crate) use words::*;
