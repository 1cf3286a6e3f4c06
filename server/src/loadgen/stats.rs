//! One level's request samples → the stored level: percentiles, throughput, per-request
//! records, and the level's own details (errors by kind, where token counts came from).

use super::client::RequestSample;
use app::domain::metrics::{Metric, Stat};
use app::domain::stats::Summary;
use app::domain::{LoadKind, NewLevel, Point, RequestRecord};
use serde_json::json;
use std::collections::BTreeMap;

/// The statistics stored for every latency-like metric.
pub const STATS: [Stat; 9] =
    [Stat::Mean, Stat::Std, Stat::Min, Stat::Max, Stat::P50, Stat::P90, Stat::P95, Stat::P99, Stat::P(999)];

fn put(p: &mut Point, metric: Metric, values: impl IntoIterator<Item = f64>) {
    if let Some(s) = Summary::of(values) {
        for stat in STATS {
            p.set(metric, stat, s.stat(stat));
        }
    }
}

fn as_f64(n: u64) -> f64 {
    n as f64
}

/// The level at concurrency `load` made of `records`, measured over `window_s` seconds
/// (first measured send → last response). Latency statistics are over successful
/// requests only; throughput counts the tokens of successful requests.
pub fn level_from_records(load: f64, records: &[RequestSample], window_s: f64) -> NewLevel {
    let mut p = Point::at(LoadKind::Concurrency, load);
    let ok: Vec<&RequestSample> = records.iter().filter(|r| r.ok()).collect();
    let ok_n = ok.len();
    p.requests_ok = Some(ok_n as i64);
    p.requests_failed = Some((records.len() - ok_n) as i64);
    let window = (window_s.is_finite() && window_s > 0.0).then_some(window_s);
    p.wall_s = window;

    put(&mut p, Metric::Ttft, ok.iter().filter_map(|r| r.ttft_ms));
    put(&mut p, Metric::TtftContent, ok.iter().filter_map(|r| r.ttft_content_ms));
    put(&mut p, Metric::Tpot, ok.iter().filter_map(|r| r.tpot_ms()));
    put(&mut p, Metric::ChunkGap, ok.iter().flat_map(|r| r.gaps_ms.iter().copied()));
    put(&mut p, Metric::E2e, ok.iter().filter_map(|r| r.e2e_ms));

    let outputs: Vec<u64> = ok.iter().filter_map(|r| r.output_tokens()).collect();
    let inputs: Vec<u64> = ok.iter().filter_map(|r| r.prompt_tokens).collect();
    let out_sum: u64 = outputs.iter().sum();
    let in_sum: u64 = inputs.iter().sum();
    if !outputs.is_empty() {
        p.set(Metric::OutputTokens, Stat::Mean, as_f64(out_sum) / outputs.len() as f64);
    }
    if !inputs.is_empty() {
        p.set(Metric::InputTokens, Stat::Mean, as_f64(in_sum) / inputs.len() as f64);
    }
    if let Some(w) = window {
        p.set(Metric::OutputThroughput, Stat::Mean, as_f64(out_sum) / w);
        // Only when every successful request reported its prompt length: a partial sum
        // would understate the total.
        if inputs.len() == ok_n {
            p.set(Metric::TotalThroughput, Stat::Mean, as_f64(in_sum + out_sum) / w);
        }
        p.set(Metric::RequestThroughput, Stat::Mean, ok_n as f64 / w);
    }

    let mut errors: BTreeMap<String, u64> = BTreeMap::new();
    let mut finish: BTreeMap<String, u64> = BTreeMap::new();
    for r in records {
        if let Some(e) = &r.error {
            *errors.entry(e.kind.key()).or_default() += 1;
        }
        if let Some(f) = &r.finish_reason {
            *finish.entry(f.clone()).or_default() += 1;
        }
    }
    let usage_n = ok.iter().filter(|r| r.completion_tokens.is_some()).count();
    let mismatched = ok
        .iter()
        .filter(|r| r.completion_tokens.is_some_and(|c| c != r.token_chunks))
        .count();
    let server_tpot = Summary::of(ok.iter().filter_map(|r| r.server_ms_per_token)).map(|s| s.mean);
    let raw = json!({
        "errors": errors,
        "finish_reasons": finish,
        "token_count": {
            "server_usage": usage_n,
            "streamed_chunks": ok_n - usage_n,
            "usage_differs_from_chunks": mismatched,
        },
        "reasoning_tokens": ok.iter().filter_map(|r| r.reasoning_tokens).sum::<u64>(),
        "server_ms_per_token_mean": server_tpot,
    });

    let requests = records
        .iter()
        .map(|r| RequestRecord {
            ok: r.ok(),
            ttft_ms: r.ttft_ms,
            e2e_ms: if r.ok() { r.e2e_ms } else { None },
            tpot_ms: if r.ok() { r.tpot_ms() } else { None },
            input_tokens: r.prompt_tokens.map(as_f64),
            output_tokens: r.output_tokens().map(as_f64),
            error: r.error.as_ref().map(ToString::to_string),
        })
        .collect();
    NewLevel { point: p, raw, requests }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loadgen::client::{ErrorKind, RequestError};

    fn req(ttft: f64, e2e: f64, out: u64) -> RequestSample {
        RequestSample {
            ttft_ms: Some(ttft),
            ttft_content_ms: Some(ttft + 1.0),
            e2e_ms: Some(e2e),
            gaps_ms: vec![ttft / 10.0; 2],
            prompt_tokens: Some(5),
            completion_tokens: Some(out),
            token_chunks: out,
            finish_reason: Some("length".into()),
            ..RequestSample::default()
        }
    }

    #[test]
    fn four_requests_hand_computed() {
        // TTFT 10, 20, 30, 40 ms; latency 100…400 ms; 10 output + 5 input tokens each;
        // plus one failure, which counts as failed and nowhere else.
        let mut records = vec![req(10.0, 100.0, 10), req(20.0, 200.0, 10), req(30.0, 300.0, 10), req(40.0, 400.0, 10)];
        records.push(RequestSample {
            error: Some(RequestError { kind: ErrorKind::HttpStatus(500), message: "boom".into() }),
            ttft_ms: Some(999.0),
            ..RequestSample::default()
        });
        let level = level_from_records(4.0, &records, 2.0);
        let p = &level.point;
        assert_eq!((p.requests_ok, p.requests_failed, p.wall_s), (Some(4), Some(1), Some(2.0)));
        let close = |m: Metric, s: Stat, want: f64| {
            let got = p.get(m, s).unwrap();
            assert!((got - want).abs() < 1e-9, "{m:?} {s:?}: {got} vs {want}");
        };
        // numpy.percentile([10,20,30,40], q): 50 → 25, 90 → 37, 95 → 38.5, 99 → 39.7, 99.9 → 39.97
        close(Metric::Ttft, Stat::P50, 25.0);
        close(Metric::Ttft, Stat::P90, 37.0);
        close(Metric::Ttft, Stat::P95, 38.5);
        close(Metric::Ttft, Stat::P99, 39.7);
        close(Metric::Ttft, Stat::P(999), 39.97);
        close(Metric::Ttft, Stat::Mean, 25.0);
        close(Metric::Ttft, Stat::Min, 10.0);
        close(Metric::Ttft, Stat::Max, 40.0);
        close(Metric::TtftContent, Stat::P50, 26.0);
        close(Metric::E2e, Stat::P50, 250.0);
        close(Metric::E2e, Stat::Max, 400.0);
        // TPOT = (e2e − TTFT) / 9 = 10, 20, 30, 40
        close(Metric::Tpot, Stat::Mean, 25.0);
        close(Metric::Tpot, Stat::P90, 37.0);
        // gaps 1,1,2,2,3,3,4,4 pooled
        close(Metric::ChunkGap, Stat::P50, 2.5);
        close(Metric::ChunkGap, Stat::Mean, 2.5);
        // 40 output tokens / 2 s; (20 + 40) / 2 s; 4 ok requests / 2 s
        close(Metric::OutputThroughput, Stat::Mean, 20.0);
        close(Metric::TotalThroughput, Stat::Mean, 30.0);
        close(Metric::RequestThroughput, Stat::Mean, 2.0);
        close(Metric::OutputTokens, Stat::Mean, 10.0);
        close(Metric::InputTokens, Stat::Mean, 5.0);

        assert_eq!(level.requests.len(), 5);
        assert_eq!(level.requests[1].tpot_ms, Some(20.0));
        assert!(!level.requests[4].ok);
        assert_eq!(level.requests[4].error.as_deref(), Some("HTTP 500: boom"));
        assert_eq!(level.raw["errors"]["http_500"], 1);
        assert_eq!(level.raw["token_count"]["server_usage"], 4);
        assert_eq!(level.raw["finish_reasons"]["length"], 4);
    }

    #[test]
    fn streamed_chunks_stand_in_for_missing_usage() {
        let mut r = req(10.0, 100.0, 0);
        r.completion_tokens = None;
        r.prompt_tokens = None;
        r.token_chunks = 7;
        let level = level_from_records(1.0, &[r], 1.0);
        assert_eq!(level.point.get(Metric::OutputThroughput, Stat::Mean), Some(7.0));
        assert_eq!(level.point.get(Metric::TotalThroughput, Stat::Mean), None, "prompt length unknown");
        assert_eq!(level.point.get(Metric::Tpot, Stat::Mean), Some(15.0));
        assert_eq!(level.raw["token_count"]["streamed_chunks"], 1);
    }

    #[test]
    fn all_failed_or_empty_levels_stay_unknown() {
        let failed = RequestSample {
            error: Some(RequestError { kind: ErrorKind::Connect, message: "refused".into() }),
            ..RequestSample::default()
        };
        let level = level_from_records(2.0, &[failed.clone(), failed], 0.5);
        assert_eq!(level.point.requests_ok, Some(0));
        assert_eq!(level.point.requests_failed, Some(2));
        assert_eq!(level.point.get(Metric::Ttft, Stat::P50), None);
        assert_eq!(level.point.get(Metric::OutputThroughput, Stat::Mean), Some(0.0));
        let empty = level_from_records(1.0, &[], 0.0);
        assert_eq!(empty.point.wall_s, None);
        assert_eq!(empty.point.get(Metric::RequestThroughput, Stat::Mean), None);
    }
}
