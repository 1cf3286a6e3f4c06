//! The capacity search against the simulator: the batch breaking a TPOT limit, long
//! prompts breaking a TTFT limit, the model's rate on the request-rate axis.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test and bench code stops at the first failure"
)]

use super::super::support::*;

/// Batch-bound: each decode step costs 4 ms + 4 ms per sequence, so every request's TPOT
/// is the step time at its concurrency; the SLO's TPOT limit lies halfway between the
/// model's step times at C = 10 and 11. Run from the command line (`--find capacity`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_capacity_search_finds_where_the_batch_breaks_the_tpot_limit() {
    let _serial = timing_lock().await;
    let cfg = SimConfig {
        max_batch: 64,
        base_decode_ms: 4.0,
        per_seq_decode_ms: 4.0,
        prefill_ms_per_token: 0.0,
        ..SimConfig::default()
    };
    let model = cfg.timing();
    let limit_ms = (model.decode_step_ms(10) + model.decode_step_ms(11)) / 2.0;
    // The highest concurrency whose step (each request's TPOT) is within the limit.
    let want = (1..=model.max_batch).rev().find(|&c| model.decode_step_ms(c) <= limit_ms).unwrap() as f64;
    let url = spawn_sim(cfg).await;
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
    ];
    let cli = <server::cli::Cli as clap::Parser>::try_parse_from(args).unwrap();
    assert_eq!(server::cli::run(cli).await.unwrap(), std::process::ExitCode::SUCCESS);
    let pool = app::db::connect(&db).await.unwrap();
    let id = app::db::list_runs(&pool).await.unwrap()[0].id.clone();
    let run = app::db::get_run(&pool, &id).await.unwrap();
    let slo = searched_slo(&run).unwrap();
    let cap = app::domain::analysis::slo::capacity(&slo, &run.points);
    let loads: Vec<f64> = run.points.iter().map(|p| p.load_value).collect();
    let got = cap.capacity.unwrap().load;
    let fail = cap.first_failure.as_ref().unwrap();
    eprintln!("batch-bound: capacity C={got}, first failing C={}, model {want}: {loads:?}", fail.load);
    assert!((got - want).abs() <= 1.0 && fail.load - got == 1.0, "C={got}, model {want}: {loads:?}");
    assert_eq!(fail.limit.limit.label(), "TPOT p99", "the limit breaking first");
    assert!(run.facts.notes.contains("Capacity search: At tpot:p99<="), "{}", run.facts.notes);
    // It doubled to the first failure (16), then bisected back inside (8, 16).
    assert_eq!(&loads[..4], &[1.0, 2.0, 4.0, 8.0], "{loads:?}");
    assert!(loads.iter().any(|&c| c > 8.0 && c < 16.0) && loads.contains(&16.0), "{loads:?}");
}

/// TTFT-bound by long prompts: the decode step is 2 ms, but a request's prefill costs
/// 0.1 ms per prompt token and the whole batch waits for every joiner's prefill, so with C
/// requests sent together the last first token comes after the model's step with C
/// prompts prefilled. The TTFT limit lies halfway between those steps at C = 6 and 7.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_capacity_search_finds_where_long_prompts_break_the_ttft_limit() {
    let _serial = timing_lock().await;
    let cfg = SimConfig {
        max_batch: 64,
        base_decode_ms: 2.0,
        per_seq_decode_ms: 0.0,
        prefill_ms_per_token: 0.1,
        ..SimConfig::default()
    };
    let model = cfg.timing();
    let prompt_tokens = 200_u32;
    let ttft = |c: usize, tokens: f64| model.step_ms(c, (c as f64 * tokens).round() as u64);
    let limit_ms = (ttft(6, prompt_tokens.into()) + ttft(7, prompt_tokens.into())) / 2.0;
    let url = spawn_sim(cfg).await;
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
    s.target.max_tokens = 8;
    let (run, loads, found, text) = capacity_sweep(s).await;
    // The prompts as the simulator counted them (calibrated to it, within a few tokens).
    let tokens =
        run.points.iter().filter_map(|p| p.get(Metric::InputTokens, Stat::Mean)).sum::<f64>() / run.points.len() as f64;
    let want = (1..=64).rev().find(|&c| ttft(c, tokens) <= limit_ms).unwrap() as f64;
    eprintln!("TTFT-bound ({tokens:.0} prompt tokens): {found:?}, model {want}: {loads:?}\n{text}");
    assert_eq!(found.stop, loadgen::capacity::Stop::Bracketed);
    assert!(within_one_step(&found, want), "{found:?}, model {want}: {loads:?}");
    assert!(text.contains("the first limit to break is TTFT p99"), "{text}");
}

/// Open loop on request rate: with constant arrivals at λ req/s and n tokens per request,
/// the batch holds B = λ · n · step(B) / 1000 requests (Little's law) and each token
/// takes step(B) = base + per_seq · B, so TPOT = base / (1 − λ · n · per_seq / 1000); the
/// TPOT limit is crossed at λ* = 1000 · (1 − base / limit) / (n · per_seq). The limit is
/// half-way to saturation (TPOT twice the base): there the batch settles within about
/// n · limit ÷ (1 − λ · n · per_seq / 1000) = 320 ms, a few times shorter than a level
/// (nearer saturation it settles too slowly for a short level to show the steady state).
/// The search doubles the rate from 20 req/s and bisects to 5 %.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_capacity_search_on_request_rate_finds_the_models_rate() {
    let _serial = timing_lock().await;
    let cfg = SimConfig {
        max_batch: 256,
        base_decode_ms: 10.0,
        per_seq_decode_ms: 2.0,
        prefill_ms_per_token: 0.0,
        ..SimConfig::default()
    };
    let model = cfg.timing();
    let tokens = 8_u32;
    let limit_ms = 20.0;
    let want = 1000.0 * (1.0 - model.base_decode_ms / limit_ms) / (f64::from(tokens) * model.per_seq_decode_ms);
    let url = spawn_sim(cfg).await;
    // TPOT p90: the requests at the level's start and end see a batch still filling or
    // already draining (a shorter step); the steady ones are the slowest.
    let slo = app::domain::analysis::slo::Slo::parse(&format!("tpot:p90<={limit_ms}ms")).unwrap();
    let mut s = SweepSpec {
        loads: Loads::Capacity {
            search: loadgen::CapacitySpec::rate(slo, 20.0, 80.0),
            arrival: Arrival::Constant,
            requests: 72,
        },
        ..rates(url, vec![1.0], Arrival::Constant, 72)
    };
    s.target.max_tokens = tokens;
    let (run, loads, found, text) = capacity_sweep(s).await;
    eprintln!("rate: {found:?}, model {want:.2} req/s: {loads:?}\n{text}");
    assert_eq!(&loads[..2], &[20.0, 40.0], "{loads:?}");
    assert!(within_one_step(&found, want), "{found:?}, model {want}: {loads:?}");
    let (lo, hi) = (found.capacity.unwrap(), found.first_failing.unwrap());
    assert!((hi - lo) / hi <= 0.05, "bisected to 5 %: ({lo}, {hi})");
    assert!(run.points.iter().all(|p| p.load_kind == LoadKind::RequestRate));
    assert!(text.contains("req/s"), "{text}");
}
