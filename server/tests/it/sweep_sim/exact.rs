//! The searches and the steady state on the simulator's model clock (`plateau sim --clock
//! model`, a sweep with `Clock::Sim`): every token is timed by the model, and no step starts
//! before the requests a closed-loop level has due are in, so the answers are the model's
//! exactly, whatever else the machine runs. These run beside every other suite.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test and bench code stops at the first failure"
)]

use super::support::*;
use server::loadgen::spec::Clock;
use server::sim::SimClock;

/// The simulator on its model clock.
async fn spawn_model_sim(cfg: SimConfig) -> String {
    spawn_sim(SimConfig { clock: SimClock::Model, ..cfg }).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steady_state_throughput_is_the_models_exactly() {
    let cfg = SimConfig { prefill_ms_per_token: 0.0, ..scaled_sim(64, 0.5) };
    let model = cfg.timing();
    let url = spawn_model_sim(cfg).await;
    let (_dir, pool) = temp_pool("steady-exact.db").await;
    let mut s = spec(url, EndpointKind::Chat, vec![1], LoadMode::Steady { requests: 0 });
    s.clock = Clock::Sim;
    s.target.max_tokens = 96;
    for c in [1_u32, 12, 24] {
        // 2⅔ rounds: a short last round, which the steady window leaves out.
        let requests = (c as usize * 8).div_ceil(3).max(3);
        s.loads = Loads::Concurrency(vec![c]);
        s.mode = LoadMode::Steady { requests };
        let (run, _) = sweep(&pool, s.clone()).await;
        let p = &run.points[0];
        let step = model.decode_step_ms(c as usize);
        let got = p.output_tok_s().unwrap();
        let want = model.throughput_tok_s(c as usize);
        eprintln!("C={c}: {got} tok/s, model {want}; ttft p50 {:?}", p.get(Metric::Ttft, Stat::P50));
        assert!((got / want - 1.0).abs() < 1e-9, "C={c}: {got} tok/s, model {want}");
        // Requests go in rounds of C (the last one shorter); each joins with its round and
        // makes a token a step of the round's batch: TTFT and TPOT are that step, e2e 96 of them.
        let rounds: Vec<usize> = (0..requests).step_by(c as usize).map(|i| (requests - i).min(c as usize)).collect();
        let mean_step = rounds.iter().map(|&k| k as f64 * model.decode_step_ms(k)).sum::<f64>() / requests as f64;
        let last = model.decode_step_ms(*rounds.last().unwrap());
        assert_eq!(p.get(Metric::Ttft, Stat::P99), Some(step), "C={c}");
        assert_eq!(p.get(Metric::Ttft, Stat::Min), Some(last), "C={c}");
        let tpot = p.get(Metric::Tpot, Stat::Mean).unwrap();
        assert!((tpot - mean_step).abs() < 1e-9, "C={c}: TPOT {tpot}, model {mean_step}");
        let e2e = p.latency_ms(Stat::Mean).unwrap();
        assert!((e2e - 96.0 * mean_step).abs() < 1e-6, "C={c}: e2e {e2e}, model {}", 96.0 * mean_step);
        assert_eq!(p.requests_ok, Some(requests as i64));
    }
}

/// Interleaved repeats on the model clock: every trial of every level, in every pass, is
/// the model's wave exactly (C requests joining together, 32 steps of the batch of C) —
/// a later pass's trial does not count the passes before it, nor its warm-up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interleaved_trials_on_the_model_clock_are_the_models_exactly() {
    let cfg = SimConfig { max_batch: 8, base_decode_ms: 8.0, ..scaled_sim(8, 0.25) };
    let model = cfg.timing();
    let url = spawn_model_sim(cfg).await;
    let (_dir, pool) = temp_pool("interleaved-model.db").await;
    let mut s = spec(url, EndpointKind::Completions, vec![2, 4, 8], LoadMode::Wave);
    s.clock = Clock::Sim;
    s.target.max_tokens = 32;
    s.repeat = 3;
    s.repeat_order = app::domain::model::metrics::RepeatOrder::Interleaved;
    let (run, _) = sweep(&pool, s).await;
    assert_eq!(run.status, RunStatus::Complete);
    for p in &run.points {
        let c = p.load_value as usize;
        let want = model.throughput_tok_s(c);
        assert_eq!(p.trials.len(), 3, "C={c}");
        for (t, trial) in p.trials.iter().enumerate() {
            let got = trial.get(Metric::OutputThroughput, Stat::Mean).unwrap();
            assert!((got / want - 1.0).abs() < 1e-9, "C={c} trial {t}: {got} tok/s, model {want}");
        }
    }
}

/// The adaptive search on the model clock against `max_batch` slots with `per_seq_ms` per
/// sequence: where it names the plateau, where the model's throughput stops growing by the
/// search's 5 % per doubling (`TimingModel::plateau_start`), and the loads in order.
async fn adaptive_on_the_model(max_batch: usize, per_seq_ms: f64) -> (u32, u32, Vec<f64>) {
    let cfg = SimConfig { base_decode_ms: 5.0, ..scaled_sim(max_batch, per_seq_ms) };
    let want = u32::try_from(cfg.timing().plateau_start(AdaptiveSpec::default().min_gain)).unwrap();
    let url = spawn_model_sim(cfg).await;
    let (_dir, pool) = temp_pool("adaptive-model.db").await;
    let mut s = SweepSpec {
        loads: Loads::Adaptive(AdaptiveSpec {
            max_concurrency: u32::try_from(max_batch * 4).unwrap(),
            ..AdaptiveSpec::default()
        }),
        ..spec(url, EndpointKind::Chat, vec![1], LoadMode::Steady { requests: 4 })
    };
    s.clock = Clock::Sim;
    s.target.max_tokens = 16;
    let (run, events) = sweep(&pool, s).await;
    assert_eq!(run.status, RunStatus::Complete);
    let verdict = events
        .iter()
        .find_map(|e| match e {
            Progress::Plateau { verdict } => Some(verdict.clone()),
            _ => None,
        })
        .expect("a plateau event");
    (verdict.plateau_c.unwrap(), want, measured_loads(&events))
}

/// For each batch limit, with and without a per-sequence cost: the search names the model's
/// plateau, after doubling to twice the limit and bisecting back down to it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_adaptive_search_names_each_batch_limit_exactly() {
    for max_batch in [8_u32, 16, 64, 256] {
        for per_seq_ms in [0.0, 0.25] {
            let (got, want, loads) = adaptive_on_the_model(max_batch as usize, per_seq_ms).await;
            eprintln!("batch {max_batch} + {per_seq_ms} ms/seq: named C={got}, model {want}: {loads:?}");
            assert_eq!((got, want), (max_batch, max_batch), "{loads:?}");
            let b = f64::from(max_batch);
            let mut expected: Vec<f64> =
                std::iter::successors(Some(1.0), |c| Some(c * 2.0)).take_while(|&c| c <= 2.0 * b).collect();
            expected.extend([0.75 * b, 0.875 * b, 0.9375 * b].into_iter().filter(|c| c.fract() == 0.0));
            assert_eq!(loads, expected, "batch {max_batch} + {per_seq_ms} ms/seq");
        }
    }
}

/// Batch-bound, from the command line (`plateau sweep --find capacity --sim-clock`): each
/// decode step costs 4 ms + 4 ms per sequence, every request's TPOT is the step at its
/// concurrency, and the TPOT limit lies halfway between the steps at C = 10 and 11: the
/// capacity is 10 and the first failure 11.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_capacity_search_finds_where_the_batch_breaks_the_tpot_limit() {
    let cfg = SimConfig {
        max_batch: 64,
        base_decode_ms: 4.0,
        per_seq_decode_ms: 4.0,
        prefill_ms_per_token: 0.0,
        ..SimConfig::default()
    };
    let model = cfg.timing();
    let limit_ms = (model.decode_step_ms(10) + model.decode_step_ms(11)) / 2.0;
    let url = spawn_model_sim(cfg).await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cli-capacity.db");
    let slo = format!("tpot:p99<={limit_ms}ms,errors<=1%");
    let args = [
        "plateau",
        "--db",
        db.to_str().unwrap(),
        "sweep",
        "--url",
        &url,
        "--model",
        "plateau-sim",
        "--find",
        "capacity",
        "--slo",
        &slo,
        "--requests",
        "8",
        "--max-tokens",
        "16",
        "--prompt-tokens",
        "32",
        "--ignore-eos",
        "--no-metrics",
        "--seed",
        "1",
        "--plain",
        "--sim-clock",
    ];
    let cli = <server::cli::Cli as clap::Parser>::try_parse_from(args).unwrap();
    assert_eq!(server::cli::run(cli).await.unwrap(), std::process::ExitCode::SUCCESS);
    let pool = app::db::connect(&db).await.unwrap();
    let id = app::db::list_runs(&pool).await.unwrap()[0].id.clone();
    let run = app::db::get_run(&pool, &id).await.unwrap();
    let slo = searched_slo(&run).unwrap();
    let cap = app::domain::analysis::slo::capacity(&slo, &run.points);
    let loads: Vec<f64> = run.points.iter().map(|p| p.load_value).collect();
    let fail = cap.first_failure.as_ref().unwrap();
    assert_eq!((cap.capacity.unwrap().load, fail.load), (10.0, 11.0), "{loads:?}");
    assert_eq!(fail.limit.limit.label(), "TPOT p99", "the limit breaking first");
    assert!(run.facts.notes.contains("Capacity search: At tpot:p99<="), "{}", run.facts.notes);
    // It doubled to the first failure (16), then bisected back inside (8, 16).
    assert_eq!(loads, [1.0, 2.0, 4.0, 8.0, 10.0, 11.0, 12.0, 16.0], "{loads:?}");
}

/// TTFT-bound by long prompts: the decode step is 2 ms, but a request's prefill costs 0.1 ms
/// per prompt token and the whole batch waits for every joiner's prefill, so the C requests
/// of a round all get their first token after the step with C prompts prefilled. The TTFT
/// limit lies halfway between those steps at C = 6 and 7: the capacity is 6.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_capacity_search_finds_where_long_prompts_break_the_ttft_limit() {
    let cfg = SimConfig {
        max_batch: 64,
        base_decode_ms: 2.0,
        per_seq_decode_ms: 0.0,
        prefill_ms_per_token: 0.1,
        ..SimConfig::default()
    };
    let model = cfg.timing();
    let url = spawn_model_sim(cfg).await;
    let prompt_tokens = 200_u32;
    // The prompts as the simulator counts them: calibrated to it, within a few tokens.
    let probe = SweepSpec {
        loads: Loads::Concurrency(vec![1]),
        ..spec(url.clone(), EndpointKind::Completions, vec![1], LoadMode::Steady { requests: 1 })
    };
    let probe = SweepSpec { prompt: PromptSpec::fixed(prompt_tokens, 5), clock: Clock::Sim, ..probe };
    let (_dir, pool) = temp_pool("probe.db").await;
    let (probed, _) = sweep(&pool, probe).await;
    let tokens = probed.points[0].get(Metric::InputTokens, Stat::Mean).unwrap();
    let ttft = |c: usize| model.step_ms(c, (c as f64 * tokens).round() as u64);
    let limit_ms = (ttft(6) + ttft(7)) / 2.0;
    let mut s = SweepSpec {
        loads: Loads::Capacity {
            search: loadgen::CapacitySpec::concurrency(
                app::domain::analysis::slo::Slo::parse(&format!("ttft:p99<={limit_ms}ms")).unwrap(),
                1,
                64,
            ),
            arrival: Arrival::Constant,
            requests: 0,
        },
        ..spec(url, EndpointKind::Completions, vec![1], LoadMode::Steady { requests: 4 })
    };
    s.prompt = PromptSpec::fixed(prompt_tokens, 5);
    s.clock = Clock::Sim;
    s.target.max_tokens = 8;
    let (_run, loads, found, text) = capacity_sweep(s).await;
    eprintln!("TTFT-bound ({tokens} prompt tokens): {found:?}: {loads:?}\n{text}");
    assert_eq!(found.stop, loadgen::capacity::Stop::Bracketed);
    assert_eq!((found.capacity, found.first_failing), (Some(6.0), Some(7.0)), "{loads:?}");
    assert!(text.contains("the first limit to break is TTFT p99"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_adaptive_search_stops_at_the_simulators_saturation() {
    // Eight decode slots: throughput doubles up to C=8, then stays flat.
    let url = spawn_model_sim(SimConfig {
        max_batch: 8,
        base_decode_ms: 2.0,
        per_seq_decode_ms: 0.25,
        prefill_ms_per_token: 0.0,
        ..SimConfig::default()
    })
    .await;
    let (_dir, pool) = temp_pool("adaptive.db").await;
    let mut s = SweepSpec {
        loads: Loads::Adaptive(AdaptiveSpec { max_concurrency: 256, ..AdaptiveSpec::default() }),
        ..spec(url, EndpointKind::Chat, vec![1], LoadMode::Steady { requests: 8 })
    };
    s.clock = Clock::Sim;
    s.target.max_tokens = 64;
    let (run, events) = sweep(&pool, s).await;
    assert_eq!(run.status, RunStatus::Complete);
    // Measurement order (doubling, then refinement) from the progress events; the stored
    // run lists its levels in load order, whatever order they were measured in.
    let loads = measured_loads(&events);
    let stored: Vec<f64> = run.points.iter().map(|p| p.load_value).collect();
    let mut sorted = loads.clone();
    sorted.sort_by(f64::total_cmp);
    assert_eq!(stored, sorted, "stored in load order");
    assert_eq!(loads, [1.0, 2.0, 4.0, 8.0, 16.0, 6.0, 7.0], "one doubling past saturation, then refined below it");
    let verdict = events
        .iter()
        .find_map(|e| match e {
            Progress::Plateau { verdict } => Some(verdict.clone()),
            _ => None,
        })
        .expect("a plateau event");
    let c = verdict.plateau_c.unwrap();
    assert_eq!(c, 8, "the simulator saturates at 8: {loads:?}");
    assert!(verdict.gain_per_doubling.unwrap() < 0.05);
    assert!(run.facts.notes.contains(&format!("plateau at C≈{c}")), "{}", run.facts.notes);
    // …and on the chart: an annotation by the sweep at the plateau's level.
    let marks: Vec<(String, String)> = run.annotations.iter().map(|a| (a.anchor.label(), a.author.clone())).collect();
    assert_eq!(marks, [(format!("C={c}"), "plateau sweep".to_owned())]);
    let raw = app::db::level_raw(&pool, &run.id, loads.len() as i64 - 1).await.unwrap();
    assert_eq!(raw["adaptive_phase"], "refine");
    // Levels measured at least 2×C requests each.
    for p in &run.points {
        assert!(p.requests_total().unwrap() >= (2.0 * p.load_value) as i64);
    }
}

/// A sweep on the simulator's clock against a simulator on the wall clock stops at its first
/// level, saying what to start instead; nothing is timed on a clock it cannot read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sim_clock_needs_the_simulator_on_its_model_clock() {
    let url = spawn_sim(scaled_sim(8, 0.0)).await;
    let answer = reqwest::Client::new()
        .post(format!("{url}/sim/clock"))
        .json(&serde_json::json!({ "in_flight": 2, "requests": 4 }))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), reqwest::StatusCode::CONFLICT);
    let (_dir, pool) = temp_pool("wall-clock.db").await;
    let s = SweepSpec { clock: Clock::Sim, ..spec(url, EndpointKind::Chat, vec![2], LoadMode::Steady { requests: 4 }) };
    let (tx, _rx) = tokio::sync::mpsc::channel(4096);
    let (_cancel_tx, cancel_rx) = tokio::sync::watch::channel(false);
    let e = loadgen::run_sweep(&pool, s, tx, cancel_rx).await.unwrap_err();
    assert!(e.to_string().contains("is it `plateau sim --clock model`?"), "{e}");
}
