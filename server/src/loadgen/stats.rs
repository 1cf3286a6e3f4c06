//! One level's request samples → the stored level: percentiles, throughput, per-request
//! records, and the level's own details (errors by kind, where token counts came from).

use super::client::RequestSample;
use app::domain::model::metrics::{Metric, Stat};
use app::domain::model::stats::Summary;
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

/// Microsecond precision is plenty for send times, and keeps the JSON short.
fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// How faithfully an open-loop level's schedule was kept: when each request was due and
/// when it went out, the distribution of send lags (p50, p99, max, mean), late sends (lag
/// over [`late_send_threshold_ms`]), the achieved send rate; and latency from the actual
/// send next to the stored latency (from the scheduled send).
fn open_loop(records: &[RequestSample]) -> serde_json::Value {
    let lags: Vec<f64> = records.iter().map(RequestSample::send_lag_ms).collect();
    let n = lags.len();
    let due: Vec<f64> = records.iter().filter_map(|r| r.scheduled_at_ms).collect();
    let threshold = late_send_threshold_ms(&due);
    let late = lags.iter().filter(|l| **l > threshold).count();
    let (first, last) =
        records.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), r| (a.min(r.sent_at_ms), b.max(r.sent_at_ms)));
    let achieved_rps = (n >= 2 && last > first).then(|| (n - 1) as f64 * 1000.0 / (last - first));
    let from_actual: Vec<f64> =
        records.iter().filter(|r| r.ok()).filter_map(|r| Some(r.e2e_ms? - r.send_lag_ms())).collect();
    let from_actual = Summary::of(from_actual);
    let lag = Summary::of(lags.iter().copied());
    json!({
        "scheduled_at_ms": records.iter().map(|r| r.scheduled_at_ms.map(round3)).collect::<Vec<_>>(),
        "late_sends": late,
        "late_send_threshold_ms": threshold,
        "late_send_rule": "lag over 10 % of the mean scheduled gap, at least 2 ms (Tokio's timer ticks in 1 ms) and at most 10 ms",
        "send_lag_ms_p50": lag.as_ref().map(|s| s.stat(Stat::P50)),
        "send_lag_ms_p99": lag.as_ref().map(|s| s.stat(Stat::P99)),
        "send_lag_ms_max": lag.as_ref().map(|s| s.max),
        "send_lag_ms_mean": lag.as_ref().map(|s| s.mean),
        "achieved_rate_rps": achieved_rps,
        "e2e_from_actual_send_ms": from_actual.map(|s| json!({
            "mean": s.mean, "p50": s.stat(Stat::P50), "p99": s.stat(Stat::P99), "max": s.max,
        })),
    })
}

/// Below this a send lag is timer noise, never "late" (Tokio's timer ticks in 1 ms).
pub const LATE_SEND_MIN_MS: f64 = 2.0;
/// A lag this long is late whatever the rate.
pub const LATE_SEND_MAX_MS: f64 = 10.0;

/// When a send counts as late on a schedule with these due times (ms): a lag over 10 % of
/// the mean gap between arrivals — a shift that changes what the server sees — within
/// [`LATE_SEND_MIN_MS`] … [`LATE_SEND_MAX_MS`]. A 1 ms lag is timer noise, not lateness.
pub fn late_send_threshold_ms(due_ms: &[f64]) -> f64 {
    let span =
        due_ms.iter().copied().fold(f64::NEG_INFINITY, f64::max) - due_ms.iter().copied().fold(f64::INFINITY, f64::min);
    let mean_gap = (due_ms.len() >= 2 && span.is_finite()).then(|| span / (due_ms.len() - 1) as f64);
    mean_gap.map_or(LATE_SEND_MIN_MS, |g| (0.1 * g).clamp(LATE_SEND_MIN_MS, LATE_SEND_MAX_MS))
}

/// The level at `load` (concurrency, or req/s for [`LoadKind::RequestRate`]) made of
/// `records`, measured over `window_s` seconds (first measured send → last response).
/// Latency statistics are over successful requests only; throughput counts the tokens of
/// successful requests.
pub fn level_from_records(kind: LoadKind, load: f64, records: &[RequestSample], window_s: f64) -> NewLevel {
    let mut p = Point::at(kind, load);
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
    // The phases before the first token: connect only for the requests that opened a
    // connection (none on kept-alive ones: not a zero), then sent and first byte.
    put(&mut p, Metric::Connect, ok.iter().filter_map(|r| r.connect_ms));
    put(&mut p, Metric::RequestSent, ok.iter().filter_map(|r| r.request_sent_ms));
    put(&mut p, Metric::FirstByte, ok.iter().filter_map(|r| r.first_byte_ms));

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

    // The failures by kind (`HTTP 500`, `timeout` …), each with its first message.
    p.failures = app::domain::Failure::tally(
        records
            .iter()
            .filter_map(|r| r.error.as_ref())
            .map(|e| app::domain::Failure::new(&e.kind.to_string(), 1, Some(&e.message))),
    );
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
    let mismatched = ok.iter().filter(|r| r.completion_tokens.is_some_and(|c| c != r.token_chunks)).count();
    let server_tpot = Summary::of(ok.iter().filter_map(|r| r.server_ms_per_token)).map(|s| s.mean);
    let mut raw = json!({
        "errors": errors,
        "finish_reasons": finish,
        "token_count": {
            "server_usage": usage_n,
            "streamed_chunks": ok_n - usage_n,
            "usage_differs_from_chunks": mismatched,
        },
        "reasoning_tokens": ok.iter().filter_map(|r| r.reasoning_tokens).sum::<u64>(),
        "server_ms_per_token_mean": server_tpot,
        // Per request, in the order of `requests`: when each went out (ms after the level began).
        "sent_at_ms": records.iter().map(|r| round3(r.sent_at_ms)).collect::<Vec<_>>(),
        // Per request, in the order of `requests`, what the request rows have no column for
        // (null where unknown): TTFT to the first content token, and reasoning tokens.
        "ttft_content_ms": records.iter().map(|r| r.ttft_content_ms.map(round3)).collect::<Vec<_>>(),
        "reasoning_tokens_per_request": records.iter().map(|r| r.reasoning_tokens).collect::<Vec<_>>(),
        // Per request: the phases before the first token (null: no connection opened, or
        // the request failed before that phase).
        "connect_ms": records.iter().map(|r| r.connect_ms.map(round3)).collect::<Vec<_>>(),
        "request_sent_ms": records.iter().map(|r| r.request_sent_ms.map(round3)).collect::<Vec<_>>(),
        "first_byte_ms": records.iter().map(|r| r.first_byte_ms.map(round3)).collect::<Vec<_>>(),
        // Connections opened during the level (warm-up excluded), by the requests that
        // waited for them.
        "connections_opened": records.iter().filter(|r| r.connect_ms.is_some()).count(),
    });
    if let serde_json::Value::Object(m) = &mut raw {
        if records.iter().any(|r| r.scheduled_at_ms.is_some()) {
            m.insert("open_loop".into(), open_loop(records));
        }
        // Our TTFT minus the server's own, where the server reports it (the simulator does).
        let ttft_error: Vec<f64> = ok.iter().filter_map(|r| Some(r.ttft_ms? - r.server_ttft_ms?)).collect();
        if let Some(s) = Summary::of(ttft_error) {
            m.insert(
                "ttft_minus_server_ttft_ms".into(),
                json!({ "mean": s.mean, "p50": s.stat(Stat::P50), "p99": s.stat(Stat::P99), "max": s.max }),
            );
        }
    }

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
            turn: r.turn,
            cached_tokens: r.cached_tokens.map(as_f64),
        })
        .collect();
    NewLevel { point: p, raw, requests, telemetry: None }
}

/// The steady-state window of a closed-loop level: the stretch during which the level kept
/// its C requests in flight, after the ramp-up and before the drain.
///
/// - It opens at the level's first response (`start_ms`): until then every request is in its
///   first round, started together with the others (a synchronised prefill, an engine
///   filling up).
/// - It closes at the (N − C + 1)-th response (`end_ms`), the first one no longer replaced
///   by a new request (the last send answers the (N − C)-th): from then on fewer than C are
///   in flight (the drain, with a short last round when N is not a multiple of C).
///
/// Output tokens are counted when their chunk arrived (TTFT, then each chunk gap; a chunk
/// carrying several tokens counts `output_tokens ÷ chunks` each), input tokens with the
/// request's first token, requests when they ended: each strictly after `start_ms` and no
/// later than `end_ms`. Latency statistics still count every request of the level.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SteadyWindow {
    /// ms after the level began.
    pub start_ms: f64,
    pub end_ms: f64,
    /// Output tokens of successful requests that arrived in the window.
    pub output_tokens: f64,
    /// Prompt tokens of successful requests whose first token arrived in the window; `None`
    /// when some successful request did not report its prompt length.
    pub input_tokens: Option<f64>,
    /// Successful requests that ended in the window.
    pub requests: u64,
}

impl SteadyWindow {
    pub fn seconds(&self) -> f64 {
        (self.end_ms - self.start_ms) / 1000.0
    }

    /// The window of a closed-loop level run with `in_flight` requests at a time; `None` when
    /// the level never replaced a finished request (a wave: all requests at once) or the
    /// window is empty.
    pub fn of(records: &[RequestSample], in_flight: usize) -> Option<Self> {
        if records.len() <= in_flight || records.iter().any(|r| r.scheduled_at_ms.is_some()) {
            return None;
        }
        // Request k (k ≥ C) goes out when the (k − C + 1)-th request ends: the last one, when
        // the (N − C)-th ends, so the (N − C + 1)-th end is the first not replaced. Counted by
        // end times, not by when the generator got round to sending (it may lag a little).
        let mut ends: Vec<f64> = records.iter().map(|r| r.sent_at_ms + r.elapsed_ms).collect();
        ends.sort_by(f64::total_cmp);
        let start_ms = ends.first().copied().unwrap_or(f64::NAN);
        let end_ms = ends.get(records.len() - in_flight).copied().unwrap_or(f64::NAN);
        if !(start_ms.is_finite() && end_ms.is_finite() && end_ms > start_ms) {
            return None;
        }
        let inside = |t: f64| t > start_ms && t <= end_ms;
        let mut output_tokens = 0.0;
        let mut input_tokens = Some(0.0);
        let mut requests = 0;
        for r in records.iter().filter(|r| r.ok()) {
            if r.e2e_ms.is_some_and(|e| inside(r.sent_at_ms + e)) {
                requests += 1;
            }
            let Some(ttft) = r.ttft_ms else { continue };
            let first = r.sent_at_ms + ttft;
            if inside(first) {
                input_tokens = match (input_tokens, r.prompt_tokens) {
                    (Some(sum), Some(n)) => Some(sum + as_f64(n)),
                    _ => None,
                };
            }
            let chunks = r.token_chunks.max(1);
            let per_chunk = r.output_tokens().map_or(0.0, |n| as_f64(n) / as_f64(chunks));
            let mut t = first;
            let mut n = u64::from(inside(t));
            for g in &r.gaps_ms {
                t += g;
                n += u64::from(inside(t));
            }
            output_tokens += as_f64(n) * per_chunk;
        }
        Some(Self { start_ms, end_ms, output_tokens, input_tokens, requests })
    }
}

/// A closed-loop level's throughputs measured over its [`SteadyWindow`] (when it has one),
/// replacing the whole-level ones; `raw.steady_window` says which was used and keeps both.
pub fn apply_steady_window(level: &mut NewLevel, records: &[RequestSample], in_flight: usize) {
    let whole = json!({
        "output_tok_s": level.point.get(Metric::OutputThroughput, Stat::Mean),
        "total_tok_s": level.point.get(Metric::TotalThroughput, Stat::Mean),
        "requests_s": level.point.get(Metric::RequestThroughput, Stat::Mean),
        "wall_s": level.point.wall_s,
    });
    let Some(w) = SteadyWindow::of(records, in_flight).filter(|w| w.seconds() > 0.0) else {
        if let serde_json::Value::Object(m) = &mut level.raw {
            m.insert(
                "steady_window".into(),
                json!({
                    "used": false,
                    "reason": "no finished request was replaced (a wave, or no more requests than C): throughput over the whole level",
                    "whole_level": whole,
                }),
            );
        }
        return;
    };
    let secs = w.seconds();
    let p = &mut level.point;
    p.set(Metric::OutputThroughput, Stat::Mean, w.output_tokens / secs);
    match w.input_tokens {
        Some(i) => p.set(Metric::TotalThroughput, Stat::Mean, (i + w.output_tokens) / secs),
        None => p.measures.retain(|m| !(m.metric == Metric::TotalThroughput && m.stat == Stat::Mean)),
    }
    p.set(Metric::RequestThroughput, Stat::Mean, as_f64(w.requests) / secs);
    if let serde_json::Value::Object(m) = &mut level.raw {
        m.insert(
            "steady_window".into(),
            json!({
                "used": true,
                "in_flight": in_flight,
                "start_ms": round3(w.start_ms),
                "end_ms": round3(w.end_ms),
                "output_tokens": w.output_tokens,
                "input_tokens": w.input_tokens,
                "requests_ended": w.requests,
                "definition": "first response → (N − C + 1)-th response, the first not replaced by a new request; tokens counted at arrival, requests at their end",
                "whole_level": whole,
            }),
        );
    }
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
        let level = level_from_records(LoadKind::Concurrency, 4.0, &records, 2.0);
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
        assert_eq!(level.raw["ttft_content_ms"], json!([11.0, 21.0, 31.0, 41.0, null]));
        assert_eq!(level.raw["reasoning_tokens_per_request"], json!([null, null, null, null, null]));
    }

    #[test]
    fn phases_are_stored_per_level_and_per_request_and_unknown_stays_unknown() {
        // Two requests opened a connection (1 ms, 1,003 ms: a SYN retried), two went out on
        // kept-alive ones; the failed one opened none.
        let mut records: Vec<RequestSample> = (0..4).map(|i| req(10.0 + f64::from(i), 100.0, 10)).collect();
        records[0].connect_ms = Some(1.0);
        records[1].connect_ms = Some(1003.0);
        for (i, r) in records.iter_mut().enumerate() {
            r.request_sent_ms = Some(r.connect_ms.unwrap_or(0.0) + 0.1);
            r.first_byte_ms = Some(r.connect_ms.unwrap_or(0.0) + 2.0 + i as f64);
        }
        records.push(RequestSample {
            error: Some(RequestError { kind: ErrorKind::Connect, message: "refused".into() }),
            ..RequestSample::default()
        });
        let level = level_from_records(LoadKind::Concurrency, 4.0, &records, 2.0);
        let p = &level.point;
        assert_eq!(p.get(Metric::Connect, Stat::Mean), Some(502.0), "over the two that opened one only");
        assert_eq!(p.get(Metric::Connect, Stat::Max), Some(1003.0));
        assert_eq!(p.get(Metric::RequestSent, Stat::Min), Some(0.1));
        assert_eq!(p.get(Metric::FirstByte, Stat::P50), Some(4.5), "3, 1006, 4, 5 → median 4.5");
        assert_eq!(level.raw["connections_opened"], 2);
        assert_eq!(level.raw["connect_ms"], json!([1.0, 1003.0, null, null, null]));
        assert_eq!(level.raw["first_byte_ms"][4], serde_json::Value::Null, "the failed request has no first byte");

        // No request opened a connection: the metric is absent, not 0.
        let kept: Vec<RequestSample> = (0..3).map(|_| req(10.0, 100.0, 10)).collect();
        let level = level_from_records(LoadKind::Concurrency, 3.0, &kept, 1.0);
        assert_eq!(level.point.get(Metric::Connect, Stat::Mean), None);
        assert_eq!(level.raw["connections_opened"], 0);
    }

    #[test]
    fn streamed_chunks_stand_in_for_missing_usage() {
        let mut r = req(10.0, 100.0, 0);
        r.completion_tokens = None;
        r.prompt_tokens = None;
        r.token_chunks = 7;
        let level = level_from_records(LoadKind::Concurrency, 1.0, &[r], 1.0);
        assert_eq!(level.point.get(Metric::OutputThroughput, Stat::Mean), Some(7.0));
        assert_eq!(level.point.get(Metric::TotalThroughput, Stat::Mean), None, "prompt length unknown");
        assert_eq!(level.point.get(Metric::Tpot, Stat::Mean), Some(15.0));
        assert_eq!(level.raw["token_count"]["streamed_chunks"], 1);
    }

    #[test]
    fn open_loop_levels_record_the_schedule_and_lateness() {
        // due at 0, 100, 200 ms; sent on time, 5 ms late, 0.5 ms late; e2e from the due time
        let mut rs = vec![req(10.0, 100.0, 10), req(10.0, 100.0, 10), req(10.0, 100.0, 10)];
        for (r, (due, sent)) in rs.iter_mut().zip([(0.0, 0.0), (100.0, 105.0), (200.0, 200.5)]) {
            r.scheduled_at_ms = Some(due);
            r.sent_at_ms = sent;
            r.server_ttft_ms = Some(8.0);
        }
        let level = level_from_records(LoadKind::RequestRate, 10.0, &rs, 0.3);
        assert_eq!(level.point.load_kind, LoadKind::RequestRate);
        assert_eq!(level.point.load_value, 10.0);
        let o = &level.raw["open_loop"];
        assert_eq!(o["scheduled_at_ms"], json!([0.0, 100.0, 200.0]));
        assert_eq!(level.raw["sent_at_ms"], json!([0.0, 105.0, 200.5]));
        // A 1 ms threshold counted timer noise as late. Arrivals 100 ms apart: a
        // send is late past 10 ms (10 % of the gap, at most 10 ms); 5 ms is not.
        assert_eq!(o["late_send_threshold_ms"], 10.0);
        assert_eq!(o["late_sends"], 0);
        assert_eq!(o["send_lag_ms_p50"], 0.5);
        assert_eq!(o["send_lag_ms_max"], 5.0);
        assert!((o["send_lag_ms_p99"].as_f64().unwrap() - 4.91).abs() < 1e-9);
        assert_eq!(o["send_lag_ms_mean"], 5.5 / 3.0);
        assert_eq!(o["achieved_rate_rps"], 2.0 * 1000.0 / 200.5);
        // latency from the actual send is the stored one minus the lag: 100, 95, 99.5
        assert_eq!(o["e2e_from_actual_send_ms"]["max"], 100.0);
        assert_eq!(o["e2e_from_actual_send_ms"]["mean"], 294.5 / 3.0);
        assert_eq!(level.point.latency_ms(Stat::Max), Some(100.0));
        assert_eq!(level.raw["ttft_minus_server_ttft_ms"]["mean"], 2.0);
    }

    /// A request sent at `sent` ms, 10 tokens: first at +10 ms, then one every `step` ms.
    fn timed(sent: f64, step: f64) -> RequestSample {
        let e2e = 10.0 + 9.0 * step;
        RequestSample {
            sent_at_ms: sent,
            ttft_ms: Some(10.0),
            ttft_content_ms: Some(10.0),
            gaps_ms: vec![step; 9],
            e2e_ms: Some(e2e),
            elapsed_ms: e2e,
            prompt_tokens: Some(5),
            completion_tokens: Some(10),
            token_chunks: 10,
            ..RequestSample::default()
        }
    }

    #[test]
    fn closed_loop_throughput_is_measured_while_c_requests_are_in_flight() {
        // C = 2, 5 requests: rounds of 2, 2 and a short last round of 1.
        // Round 1 sent at 0 ends at 100; round 2 sent at 100 and 100.25 ends at 200 and
        // 200.25; the fifth goes out at 200.125 (after the first of round 2 ended), ends at 300.125.
        let records =
            vec![timed(0.0, 10.0), timed(0.0, 10.0), timed(100.0, 10.0), timed(100.25, 10.0), timed(200.125, 10.0)];
        let w = SteadyWindow::of(&records, 2).unwrap();
        // Opens at the first response (100), closes at the fourth (N − C + 1 = 4: 200.25),
        // the first not replaced: only round 2, both requests in flight all along.
        assert_eq!((w.start_ms, w.end_ms), (100.0, 200.25));
        assert!((w.output_tokens - 20.0).abs() < 1e-9, "{w:?}"); // round 2's tokens, and only them
        assert_eq!(w.input_tokens, Some(10.0));
        assert_eq!(w.requests, 2);
        let mut level = level_from_records(LoadKind::Concurrency, 2.0, &records, 0.300125);
        let whole = level.point.output_tok_s().unwrap();
        assert!((whole - 50.0 / 0.300125).abs() < 1e-6, "whole level: {whole}");
        apply_steady_window(&mut level, &records, 2);
        let steady = level.point.output_tok_s().unwrap();
        assert!((steady - 20.0 / 0.10025).abs() < 1e-6, "steady: {steady}");
        assert_eq!(level.point.get(Metric::TotalThroughput, Stat::Mean), Some(30.0 / 0.10025));
        assert_eq!(level.point.get(Metric::RequestThroughput, Stat::Mean), Some(2.0 / 0.10025));
        assert_eq!(level.raw["steady_window"]["used"], true);
        assert_eq!(level.raw["steady_window"]["whole_level"]["output_tok_s"], whole);
        // Latency still counts all five requests.
        assert_eq!(level.point.get(Metric::E2e, Stat::Max), Some(100.0));
        // A wave (no request replaced) keeps the whole level and says so.
        let wave = &records[..2];
        assert_eq!(SteadyWindow::of(wave, 2), None);
        let mut level = level_from_records(LoadKind::Concurrency, 2.0, wave, 0.1);
        apply_steady_window(&mut level, wave, 2);
        assert_eq!(level.point.output_tok_s(), Some(200.0));
        assert_eq!(level.raw["steady_window"]["used"], false);
    }

    #[test]
    fn late_sends_are_judged_against_the_arrival_gap() {
        // 1000 req/s: 1 ms gaps, the 2 ms floor; 25 req/s: 40 ms gaps → 4 ms; 1 req/s: 10 ms cap.
        let due = |gap: f64| (0..10).map(|i| f64::from(i) * gap).collect::<Vec<_>>();
        assert_eq!(late_send_threshold_ms(&due(1.0)), 2.0);
        assert!((late_send_threshold_ms(&due(40.0)) - 4.0).abs() < 1e-9);
        assert_eq!(late_send_threshold_ms(&due(1000.0)), 10.0);
        assert_eq!(late_send_threshold_ms(&[5.0]), 2.0);
    }

    #[test]
    fn all_failed_or_empty_levels_stay_unknown() {
        let failed = RequestSample {
            error: Some(RequestError { kind: ErrorKind::Connect, message: "refused".into() }),
            ..RequestSample::default()
        };
        let level = level_from_records(LoadKind::Concurrency, 2.0, &[failed.clone(), failed], 0.5);
        assert_eq!(level.point.requests_ok, Some(0));
        assert_eq!(level.point.requests_failed, Some(2));
        assert_eq!(level.point.get(Metric::Ttft, Stat::P50), None);
        assert_eq!(level.point.get(Metric::OutputThroughput, Stat::Mean), Some(0.0));
        assert!(level.raw.get("open_loop").is_none(), "closed loop has no schedule");
        let empty = level_from_records(LoadKind::Concurrency, 1.0, &[], 0.0);
        assert_eq!(empty.point.wall_s, None);
        assert_eq!(empty.point.get(Metric::RequestThroughput, Stat::Mean), None);
    }
}
