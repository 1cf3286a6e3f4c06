//! The command-line interface.
//!
//! - [`args`]: the commands and flags (clap).
//! - [`commands`]: what each command does ([`run`]).
//! - [`sweep`]: `plateau sweep`, with [`progress`] on the terminal.

pub mod args;
mod commands;
mod progress;
mod sweep;

pub use args::*;
pub use commands::{run, MAX_CHECK_ANSWER_BYTES};
