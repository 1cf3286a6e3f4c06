//! Importer for llama.cpp's own benchmarks:
//!
//! - `llama-bench` ([`mod@bench`]), every output it has: `-o json` (a list), `-o jsonl` (an
//!   object a line), `-o csv` and `-o md` (the table it prints by default). Its tests are
//!   `ppN` (prompt processing), `tgN` (generation) and `ppN+tgM`, at a depth `@ dN` (tokens
//!   already in the KV cache). It runs one sequence at a time, so each test is a run of one
//!   level at C=1 — a file of several tests is several runs, one experiment.
//! - `llama-batched-bench` ([`batched`]): its table `| PP | TG | B | N_KV | T_PP s | S_PP t/s |
//!   T_TG s | S_TG t/s | T s | S t/s |`. B sequences decoded together is a concurrency level:
//!   each prompt and generation length is a run whose levels are its B.
//!
//! Columns and keys are read by name: the schema drifts between builds (`flash_attn` a
//! boolean, then -1/0/1; `n_cpu_moe`, `devices`, `load_mode` appear), and what a build adds
//! is kept in the raw fields.

mod batched;
mod bench;

use crate::ingest::json::FieldError;
use crate::ingest::model::{Format, ParseOptions, ParsedFile};
use app::domain::{RunFacts, SourceFormat};

pub const FORMAT: Format = Format { format: SourceFormat::LlamaCpp, sniff, parse };

pub fn sniff(text: &str) -> bool {
    bench::sniff(text) || batched::sniff(text)
}

fn parse(text: &str, _opts: &ParseOptions) -> Result<ParsedFile, FieldError> {
    if bench::sniff(text) {
        bench::parse(text)
    } else {
        batched::parse(text)
    }
}

/// The GPUs of a `gpu_info` (`NVIDIA GeForce RTX 3090, NVIDIA GeForce RTX 3090`): the type
/// when every device is the same, and how many.
pub(crate) fn set_gpus(facts: &mut RunFacts, info: &str) {
    let devices: Vec<&str> = info.split(',').map(str::trim).filter(|d| !d.is_empty()).collect();
    let Some(first) = devices.first() else { return };
    if devices.iter().all(|d| d == first) {
        facts.gpu_type = Some((*first).to_owned());
        facts.gpu_count = i64::try_from(devices.len()).ok();
    } else {
        facts.gpu_type = Some(devices.join(", "));
        facts.gpu_count = i64::try_from(devices.len()).ok();
    }
}

/// A model's name from its file (`/models/Qwen3.5-35B-A3B-Q5_K_S.gguf` →
/// `Qwen3.5-35B-A3B-Q5_K_S`); a path with an unexpanded variable (`$MODELS/…`) keeps only its
/// last part, as here.
pub(crate) fn model_of_path(path: &str) -> Option<String> {
    let base = path.rsplit(['/', '\\']).next().unwrap_or(path).trim();
    let base = base.strip_suffix(".gguf").unwrap_or(base);
    (!base.is_empty()).then(|| base.to_owned())
}
