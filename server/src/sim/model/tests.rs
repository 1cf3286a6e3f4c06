//! Tests of the simulator's timing model: step prices and the batcher's queue, advanced by hand.

use super::*;

fn model() -> TimingModel {
    TimingModel { base_decode_ms: 20.0, per_seq_decode_ms: 1.0, prefill_ms_per_token: 0.1, max_batch: 4 }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn step_times_by_hand() {
    let m = model();
    assert!(close(m.decode_step_ms(1), 21.0));
    assert!(close(m.decode_step_ms(4), 24.0));
    // 2 running + 2 joiners with 100 and 300 prompt tokens: 24 + 0.1 × 400.
    assert!(close(m.step_ms(4, 400), 64.0));
    assert!(close(m.throughput_tok_s(1), 1000.0 / 21.0));
    assert!(close(m.throughput_tok_s(4), 4000.0 / 24.0));
    // Beyond max_batch the extra requests queue: no more throughput.
    assert!(close(m.throughput_tok_s(16), m.throughput_tok_s(4)));
}

#[test]
fn throughput_rises_then_flattens() {
    let m = TimingModel { max_batch: 64, ..model() };
    let mut prev_total = 0.0;
    let mut prev_each = f64::INFINITY;
    for c in 1..=64 {
        let total = m.throughput_tok_s(c);
        let each = m.per_request_tok_s(c);
        assert!(total > prev_total, "throughput must rise up to max_batch (c={c})");
        assert!(each < prev_each, "per-request rate must fall (c={c})");
        prev_total = total;
        prev_each = each;
    }
    // Near-linear at first, flat later: gain per doubling shrinks.
    let gain = |c: usize| m.throughput_tok_s(2 * c) / m.throughput_tok_s(c);
    assert!(gain(1) > 1.9);
    assert!(gain(32) < 1.3);
    assert!(close(gain(64), 1.0));
}

#[test]
fn the_plateau_starts_where_the_local_gain_falls_below_the_threshold() {
    // Without a per-sequence cost throughput is linear up to max_batch.
    let flat = TimingModel { per_seq_decode_ms: 0.0, max_batch: 16, ..model() };
    assert_eq!(flat.plateau_start(0.05), 16);
    // 20 ms + 1 ms per sequence: the gain per doubling at C is ≈ 2^(20/(20+C)) − 1,
    // under 5 % only past C ≈ 264: the batch limit comes first.
    assert_eq!(TimingModel { max_batch: 256, ..model() }.plateau_start(0.05), 256);
    // 2 ms + 0.5 ms: 2^(4/(4+C)) − 1 < 5 % from C ≈ 53.
    let soft = TimingModel { base_decode_ms: 2.0, per_seq_decode_ms: 0.5, max_batch: 256, ..model() };
    assert!((52..=54).contains(&soft.plateau_start(0.05)), "{}", soft.plateau_start(0.05));
}

#[test]
fn batcher_queues_beyond_max_batch_fifo() {
    let m = TimingModel { max_batch: 2, prefill_ms_per_token: 0.0, ..model() };
    let mut b = Batcher::new(m);
    for i in 0..3 {
        b.enqueue(Slot::new(i, 10, 2));
    }
    let plan = b.begin_step();
    assert_eq!(plan.map(|p| (p.batch, p.joined)), Some((2, 2)));
    assert_eq!(b.queued(), 1);
    assert!(b.end_step().is_empty());
    assert_eq!(b.begin_step().map(|p| p.joined), Some(0));
    let done: Vec<usize> = b.end_step().into_iter().map(|s| s.payload).collect();
    assert_eq!(done.len(), 2);
    let plan = b.begin_step();
    assert_eq!(plan.map(|p| (p.batch, p.joined)), Some((1, 1)));
    assert_eq!(b.active()[0].payload, 2);
}

#[test]
fn the_kv_budget_limits_joiners_and_preempts_the_newest() {
    let m = TimingModel { max_batch: 8, prefill_ms_per_token: 0.0, ..model() };
    // Prompts of 10 tokens; 25 tokens of cache: two requests (10 + 1 each) join, a
    // third (needing 11 more) does not.
    let mut b = Batcher::with_kv_budget(m, 25);
    for i in 0..3 {
        b.enqueue(Slot::new(i, 10, 5));
    }
    assert_eq!(b.begin_step().map(|p| p.joined), Some(2));
    assert_eq!(b.queued(), 1);
    b.end_step();
    assert_eq!(b.held_tokens(), 22);
    // 22 held + 2 new tokens = 24 ≤ 25: both keep running.
    assert_eq!(b.begin_step().map(|p| (p.batch, p.joined)), Some((2, 0)));
    b.end_step();
    // 24 + 2 > 25: the newest (payload 1) goes back to the front of the queue.
    let plan = b.begin_step();
    assert_eq!(plan.map(|p| p.batch), Some(1));
    assert_eq!(b.preemptions(), 1);
    assert_eq!(b.active()[0].payload, 0);
    b.end_step();
    b.end_step();
    // When payload 0 is done, payload 1 rejoins and prefills prompt and output again.
    while !b.active().is_empty() {
        b.begin_step();
        b.end_step();
    }
    let plan = b.begin_step();
    // With it the third (10 prompt tokens), which now fits too.
    assert_eq!(plan.map(|p| (p.joined, p.prefill_tokens)), Some((2, 12 + 10)), "10 prompt + 2 produced, again");
    // Unlimited: no preemption ever.
    let mut free = Batcher::new(m);
    for i in 0..3 {
        free.enqueue(Slot::new(i, 10_000, 5));
    }
    assert_eq!(free.begin_step().map(|p| p.joined), Some(3));
    assert_eq!(free.preemptions(), 0);
}

#[test]
fn cached_prompt_tokens_are_not_prefilled() {
    let m = TimingModel { max_batch: 4, ..model() };
    let mut b = Batcher::new(m);
    b.enqueue(Slot::new(0, 100, 2).with_cached(64));
    assert_eq!(b.begin_step().map(|p| p.prefill_tokens), Some(36));
    let mut cache = PrefixCache::default();
    assert_eq!(cache.lookup(&[(1, 16), (2, 16), (3, 8)]), 0);
    // Same first two blocks, then a different one: 32 tokens hit.
    assert_eq!(cache.lookup(&[(1, 16), (2, 16), (9, 8)]), 32);
    // A block seen before but not as a prefix does not count.
    assert_eq!(cache.lookup(&[(7, 16), (2, 16)]), 0);
}

#[test]
fn histograms_bucket_like_prometheus() {
    let mut h = Histogram::new(&[0.1, 1.0]);
    for v in [0.05, 0.1, 0.5, 3.0] {
        h.observe(v);
    }
    assert_eq!(h.cumulative(), vec![2, 3], "le is inclusive");
    assert_eq!(h.count, 4);
    assert!((h.sum - 3.65).abs() < 1e-12);
}

#[test]
fn gpu_power_follows_the_batch_from_idle_to_peak() {
    let g = GpuModel::new(60.0, 300.0, 81_559);
    assert_eq!(GpuModel::occupancy(0, 4), 0.0);
    assert_eq!(GpuModel::occupancy(1, 4), 0.25);
    assert_eq!(GpuModel::occupancy(9, 4), 1.0, "never above full");
    let idle = g.reading(0.0, 0.0);
    assert_eq!((idle.power_w, idle.util_pct, idle.sm_active, idle.tensor_active), (60.0, 0, 0.0, 0.0));
    assert_eq!((idle.sm_clock_mhz, idle.temp_c), (345, 35));
    let full = g.reading(1.0, 0.0);
    assert_eq!((full.power_w, full.power_limit_w, full.util_pct), (300.0, 300.0, 100));
    assert_eq!((full.sm_active, full.tensor_active), (1.0, TENSOR_SHARE));
    assert_eq!((full.sm_clock_mhz, full.temp_c), (1755, 80));
    let quarter = g.reading(0.25, 0.0);
    assert_eq!((quarter.power_w, quarter.util_pct), (120.0, 25));
    assert!(close(quarter.tensor_active, 0.15));
    assert!(quarter.sm_clock_mhz > full.sm_clock_mhz && quarter.sm_clock_mhz < 1980);
    // Memory: the weights from the start, then the KV cache's share of the rest.
    assert_eq!(idle.fb_used_mib, 24_468, "30 % of 81,559 MiB");
    assert_eq!(idle.fb_used_mib + idle.fb_free_mib, 81_559);
    let half_kv = g.reading(0.5, 0.5);
    assert_eq!(half_kv.fb_used_mib, 53_013, "(0.3 + 0.7 × 0.5) × 81,559");
    assert_eq!(g.reading(1.0, 1.0).fb_free_mib, 0);
    // Nonsense settings are brought into range.
    let odd = GpuModel::new(-5.0, 1.0, 0);
    assert_eq!((odd.idle_w, odd.peak_w, odd.memory_mib), (0.0, 1.0, 1));
    assert_eq!(GpuModel::new(100.0, 50.0, 1).power_w(1.0), 100.0, "peak at least idle");
}

#[test]
fn gpu_energy_integrates_the_power_over_time() {
    let g = GpuModel::new(60.0, 300.0, 1024);
    let mut m = EnergyMeter::new(10.0, g.power_w(0.0));
    assert_eq!(m.energy_mj(10.0), 0.0);
    // 2 s idle (60 W) = 120 J, then 1 s full (300 W) = 300 J, then 0.5 s at a quarter
    // (120 W) = 60 J.
    m.set(12.0, g.power_w(1.0));
    assert!(close(m.energy_mj(12.0), 120_000.0));
    m.set(13.0, g.power_w(0.25));
    assert!(close(m.energy_mj(13.5), 480_000.0));
    // Reading does not change it; a time before the last change adds nothing.
    assert!(close(m.energy_mj(13.5), 480_000.0));
    assert!(close(m.energy_mj(12.5), 420_000.0));
    m.set(12.5, g.power_w(0.0));
    assert!(close(m.energy_mj(13.0), 420_000.0), "counts on from the last change, never back");
    assert!(close(m.energy_mj(14.0), 480_000.0));
}

#[test]
fn simulate_wave_by_hand() {
    // max_batch 2, three requests at t=0 with 10 prompt tokens, 2 tokens out.
    let m = TimingModel { max_batch: 2, ..model() };
    let a = Arrival { at_ms: 0.0, prompt_tokens: 10, output_tokens: 2 };
    let out = simulate(m, &[a, a, a]);
    // Step 1: 2 joiners → 22 + 0.1 × 20 = 24. Step 2: 22 → first two done at 46.
    assert!(close(out[0].first_token_ms, 24.0));
    assert!(close(out[1].last_token_ms, 46.0));
    // Third joins at 46 alone: 21 + 1 = 22 → first token 68, then 21 → 89.
    assert!(close(out[2].first_token_ms, 68.0));
    assert!(close(out[2].last_token_ms, 89.0));
}

#[test]
fn simulate_late_arrival_waits_for_step_boundary() {
    let m = TimingModel { prefill_ms_per_token: 0.0, ..model() };
    let out = simulate(
        m,
        &[
            Arrival { at_ms: 0.0, prompt_tokens: 1, output_tokens: 3 },
            Arrival { at_ms: 5.0, prompt_tokens: 1, output_tokens: 1 },
        ],
    );
    // First step 0..21; the second request joins at 21: step 22 → 43.
    assert!(close(out[1].first_token_ms, 43.0));
    assert!(close(out[0].last_token_ms, 21.0 + 22.0 + 21.0));
}
