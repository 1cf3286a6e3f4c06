//! Arrivals on their clock: a constant rate's spacing, an overloaded server's queue shown
//! and nothing dropped, the open-loop adaptive search's stop at saturation, an
//! over-capacity rate detected and ending the sweep, a trace replayed at its timestamps.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test and bench code stops at the first failure"
)]

use super::super::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn constant_arrivals_go_out_at_the_scheduled_spacing() {
    let _serial = timing_lock().await;
    let url = spawn_sim(SimConfig { base_decode_ms: 2.0, prefill_ms_per_token: 0.0, ..SimConfig::default() }).await;
    let (_dir, pool) = temp_pool("rate.db").await;
    // 25 req/s: one every 40 ms, 30 requests, far below the simulator's capacity.
    let (run, _) = sweep(&pool, rates(url, vec![25.0], Arrival::Constant, 30)).await;
    assert_eq!(run.status, RunStatus::Complete);
    let p = &run.points[0];
    assert_eq!((p.load_kind, p.load_value), (LoadKind::RequestRate, 25.0));
    assert_eq!((p.requests_ok, p.requests_failed), (Some(30), Some(0)));
    let raw = app::db::level_raw(&pool, &run.id, 0).await.unwrap();
    let due = f64s(&raw["open_loop"]["scheduled_at_ms"]);
    let sent = f64s(&raw["sent_at_ms"]);
    assert_eq!(due, (0..30).map(|i| f64::from(i) * 40.0).collect::<Vec<_>>());
    for (d, s) in due.iter().zip(&sent) {
        assert!(*s >= *d - 0.001 && *s - *d < 15.0, "sent at {s} ms, due at {d} ms");
    }
    let gaps: Vec<f64> = sent.windows(2).map(|w| w[1] - w[0]).collect();
    let mean_gap = gaps.iter().sum::<f64>() / gaps.len() as f64;
    assert!((mean_gap - 40.0).abs() < 2.0, "mean gap {mean_gap} ms ({gaps:?})");
    let achieved = raw["open_loop"]["achieved_rate_rps"].as_f64().unwrap();
    assert!((achieved - 25.0).abs() < 1.5, "achieved {achieved} req/s");
    assert!(raw["open_loop"]["send_lag_ms_max"].as_f64().unwrap() < 15.0);
    assert_eq!(raw["over_saturation"]["detected"], false, "far below capacity");
    // The exported request rows carry every per-request measure, also those kept in raw.
    let export = server::export::exported_run(&pool, &run.id).await.unwrap();
    let rows = &export.levels[0].requests;
    assert_eq!(rows.len(), 30);
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r.scheduled_at_ms, Some(due[i]));
        assert_eq!(r.sent_at_ms, Some(sent[i]));
        assert!(r.ttft_content_ms.is_some() && r.record.ttft_ms.is_some());
    }
    // The level's request rate is what completed over the window (first due → last response).
    let rps = p.get(Metric::RequestThroughput, Stat::Mean).unwrap();
    assert!(rps > 20.0 && rps <= 25.5, "{rps}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_overloaded_server_cannot_hide_its_queue_and_nothing_is_dropped() {
    let _serial = timing_lock().await;
    // Two decode slots, 10 ms steps, 16 tokens: ≈ 12 requests/s at most. Offer 40 req/s.
    let url = spawn_sim(SimConfig {
        max_batch: 2,
        base_decode_ms: 10.0,
        per_seq_decode_ms: 0.0,
        prefill_ms_per_token: 0.0,
        ..SimConfig::default()
    })
    .await;
    let (_dir, pool) = temp_pool("overload.db").await;
    let (run, _) = sweep(&pool, rates(url, vec![40.0], Arrival::Constant, 40)).await;
    let p = &run.points[0];
    assert_eq!((p.requests_ok, p.requests_failed), (Some(40), Some(0)), "every request sent and answered");
    let raw = app::db::level_raw(&pool, &run.id, 0).await.unwrap();
    let due = f64s(&raw["open_loop"]["scheduled_at_ms"]);
    let sent = f64s(&raw["sent_at_ms"]);
    assert_eq!(due.len(), 40);
    // All sent on schedule although most were still waiting for the server.
    let span = sent.last().unwrap() - sent.first().unwrap();
    assert!((span - 975.0).abs() < 30.0, "40 sends over {span} ms");
    let reqs = app::db::level_requests(&pool, &run.id, 0).await.unwrap();
    for (i, r) in reqs.iter().enumerate() {
        let from_due = r.e2e_ms.unwrap();
        let from_sent = from_due - (sent[i] - due[i]);
        assert!(from_due >= from_sent && from_sent > 0.0, "request {i}: {from_due} vs {from_sent}");
    }
    // The queue shows: the last requests waited far longer than the first.
    let (first, last) = (reqs[0].e2e_ms.unwrap(), reqs[39].e2e_ms.unwrap());
    assert!(last > 5.0 * first, "first {first} ms, last {last} ms");
    let p99 = p.latency_ms(Stat::P99).unwrap();
    let p99_actual = raw["open_loop"]["e2e_from_actual_send_ms"]["p99"].as_f64().unwrap();
    assert!(p99 >= p99_actual, "{p99} ≥ {p99_actual}");
    // Completed rate is the server's capacity, not the offered rate.
    let rps = p.get(Metric::RequestThroughput, Stat::Mean).unwrap();
    assert!(rps < 20.0, "{rps} req/s");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_over_capacity_rate_is_detected_flagged_and_ends_the_rate_sweep() {
    let _serial = timing_lock().await;
    // One decode slot, 5 ms steps, 16 tokens: 80 ms a request, 12.5 req/s at most.
    // Offered 25 req/s for 2.4 s, then 50 req/s.
    let url = spawn_sim(SimConfig {
        max_batch: 1,
        base_decode_ms: 5.0,
        per_seq_decode_ms: 0.0,
        prefill_ms_per_token: 0.0,
        ..SimConfig::default()
    })
    .await;
    let (_dir, pool) = temp_pool("oversat.db").await;
    let started = std::time::Instant::now();
    let (run, _) = sweep(&pool, rates(url, vec![25.0, 50.0], Arrival::Constant, 60)).await;
    assert!(started.elapsed() < Duration::from_secs(8), "bounded: {:?}", started.elapsed());
    assert_eq!(run.status, RunStatus::Complete);
    assert_eq!(run.points.len(), 1, "the sweep stops at the first over-capacity rate");
    let p = &run.points[0];
    assert!(p.truncated, "its schedule was cut short");
    assert!(p.over_capacity, "and marked over capacity on the charts, stored with the level");
    let raw = app::db::level_raw(&pool, &run.id, 0).await.unwrap();
    let o = &raw["over_saturation"];
    assert_eq!(o["detected"], true, "{raw}");
    let at = o["at_ms"].as_f64().unwrap();
    assert!((1000.0..2400.0).contains(&at), "found after {at} ms");
    let unsent = o["unsent"].as_u64().unwrap();
    assert!(unsent > 0, "{o}");
    // every request sent was answered and kept; the unsent ones are nowhere else
    assert_eq!(p.requests_ok.unwrap() + p.requests_failed.unwrap() + unsent as i64, 60);
    // on the charts: an annotation at that rate
    let marks: Vec<(String, String)> = run.annotations.iter().map(|a| (a.anchor.label(), a.body.clone())).collect();
    assert_eq!(marks.len(), 1, "{marks:?}");
    assert!(marks[0].1.starts_with("Over capacity"), "{marks:?}");
    assert!(run.facts.notes.contains("over capacity at 25 req/s"), "{}", run.facts.notes);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trace_replays_at_its_timestamps_with_the_blocks_it_shares() {
    let _serial = timing_lock().await;
    let url = spawn_sim(SimConfig { base_decode_ms: 1.0, ..SimConfig::default() }).await;
    // Blocks of 32 tokens (two of the simulator's 16-word cache blocks, uncalibrated: the
    // simulator's words are one token each); request 1 shares request 0's first two
    // blocks, request 3 all three of them; request 2 shares nothing.
    let trace = [
        r#"{"timestamp": 0, "input_length": 96, "output_length": 8, "hash_ids": [1, 2, 3]}"#,
        r#"{"timestamp": 150, "input_length": 90, "output_length": 4, "hash_ids": [1, 2, 4]}"#,
        r#"{"timestamp": 300, "input_length": 64, "output_length": 8, "hash_ids": [7, 8]}"#,
        r#"{"timestamp": 450, "input_length": 120, "output_length": 6, "hash_ids": [1, 2, 3, 9]}"#,
    ]
    .join("\n");
    let request: server::sweeps::SweepRequest = serde_json::from_value(serde_json::json!({
        "url": url, "model": "plateau-sim", "max_tokens": 64, "ignore_eos": true, "seed": 5,
        "trace": { "name": "mini.jsonl", "text": trace, "speeds": [1, 3], "block_tokens": 32 }
    }))
    .unwrap();
    let mut s = request.into_spec(None).unwrap();
    s.metrics = loadgen::MetricsSpec::off();
    let (_dir, pool, run) = sweep_and_read(s).await;
    assert_eq!(run.points.len(), 2, "one level per speed");
    // The trace: 4 requests over 0.45 s; its mean rate ×1 and ×3.
    let rate = 4.0 / 0.45;
    assert!((run.points[0].load_value - rate).abs() < 1e-9 && (run.points[1].load_value - 3.0 * rate).abs() < 1e-9);
    assert_eq!(run.points[0].load_kind, LoadKind::RequestRate);
    let w = run.definitions.workload.clone().unwrap();
    assert!(w.label().starts_with("trace replay from mini.jsonl (sha256 "), "{}", w.label());
    for seq in [0, 1] {
        let records = app::db::level_requests(&pool, &run.id, seq).await.unwrap();
        assert_eq!(records.len(), 4);
        assert!(records.iter().all(|r| r.ok));
        let out: Vec<f64> = records.iter().map(|r| r.output_tokens.unwrap()).collect();
        assert_eq!(out, vec![8.0, 4.0, 8.0, 6.0], "each request asks for its own output length");
        let cached: Vec<f64> = records.iter().map(|r| r.cached_tokens.unwrap()).collect();
        assert_eq!(cached[0], 0.0, "each level draws its own block texts: nothing from the level before");
        // The simulator caches whole blocks of 16 words: at least one of the shared blocks'
        // falls in each, more of request 3's (three shared blocks) than of request 1's (two).
        assert!(cached[1] > 0.0, "two shared blocks: {cached:?}");
        assert_eq!(cached[2], 0.0, "{cached:?}");
        assert!(cached[3] > cached[1], "three shared blocks: {cached:?}");
        assert!(cached[3] < records[3].input_tokens.unwrap(), "its own fourth block is new: {cached:?}");
    }
    // Sent on schedule: the open loop's lag stays within what a loopback send takes.
    let raw = app::db::level_raw(&pool, &run.id, 1).await.unwrap();
    let lag = raw["open_loop"]["send_lag_ms_p99"].as_f64().unwrap();
    assert!(lag < 50.0, "send lag p99 {lag} ms ({raw})");
}
