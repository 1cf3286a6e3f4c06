//! One parser per source format, and the registry that detects which one a file is.
//!
//! Detection looks at content, never the file name: a vLLM result saved as `.txt` is still
//! a vLLM result. Order matters where formats nest (InferenceX's per-level files are vLLM
//! results with extra keys), so the more specific format comes first.

pub mod aiperf;
pub mod genai_perf;
pub mod guidellm;
pub mod inference_benchmarker;
pub mod inferencex;
pub mod llmd_report;
pub mod llmperf;
pub mod plateau;
pub mod sglang;
pub mod vllm;

use super::model::Format;
use app::domain::SourceFormat;

/// Every format, most specific first.
pub fn registry() -> Vec<Format> {
    vec![
        plateau::FORMAT,
        inferencex::FORMAT,
        sglang::FORMAT,
        vllm::FORMAT,
        guidellm::FORMAT,
        aiperf::FORMAT,
        genai_perf::FORMAT,
        llmperf::FORMAT,
        inference_benchmarker::FORMAT,
        llmd_report::FORMAT,
        super::benchmark_py_format(),
    ]
}

/// The format of `text`, if any parser claims it.
pub fn detect(text: &str) -> Option<SourceFormat> {
    registry().into_iter().find(|f| (f.sniff)(text)).map(|f| f.format)
}

/// The parser of a format.
pub fn get(format: SourceFormat) -> Option<Format> {
    registry().into_iter().find(|f| f.format == format)
}
