//! Workloads: multi-turn conversations, agentic sessions, datasets. (Trace replay, timed by
//! its timestamps, is in [`timed::rates`](super::timed::rates).)

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test and bench code stops at the first failure"
)]

use super::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_multi_turn_conversation_resends_its_history_and_hits_the_prefix_cache_from_turn_two() {
    let _together = shared_lock().await;
    // Prefill costs time per uncached token: the cache shows in TTFT.
    let url = spawn_sim(SimConfig { base_decode_ms: 2.0, prefill_ms_per_token: 0.5, ..SimConfig::default() }).await;
    let mut s = spec(url, EndpointKind::Chat, vec![1, 2], LoadMode::Wave);
    s.sessions = Some(sessions(loadgen::session::SessionKind::Conversation, 3));
    let (_dir, pool, run) = sweep_and_read(s).await;
    assert_eq!(run.status, RunStatus::Complete);
    let w = run.definitions.workload.clone().unwrap();
    assert_eq!(w.label(), "multi-turn 3 turns");
    assert_eq!(run.facts.prompt_tokens, None, "a conversation's prompt grows: no one length");
    for (seq, users) in [(0, 1usize), (1, 2)] {
        let p = &run.points[seq as usize];
        assert_eq!(p.requests_ok, Some((users * 3) as i64), "a wave is one conversation per user");
        let records = app::db::level_requests(&pool, &run.id, seq).await.unwrap();
        let rows = app::domain::analysis::turns::by_turn(&records);
        assert_eq!(
            rows.iter().map(|r| (r.turn, r.requests)).collect::<Vec<_>>(),
            vec![(1, users), (2, users), (3, users)]
        );
        // Turn 1 is new text; every later turn resends the last prompt, so the simulator's
        // cache serves at least its whole blocks, and never more than the last prompt.
        for r in records.iter().filter(|r| r.turn == Some(1)) {
            assert_eq!(r.cached_tokens, Some(0.0), "{r:?}");
        }
        let input = |t: u32| rows.iter().find(|r| r.turn == t).unwrap().input_tokens_mean.unwrap();
        let share = |t: u32| rows.iter().find(|r| r.turn == t).unwrap().cached_share.unwrap();
        assert!(share(3) > share(2) && share(2) > 0.0, "more of the context is history each turn: {rows:?}");
        if users == 1 {
            // One conversation: turn t's cache holds turn t − 1's prompt but for its last,
            // partial block of 16 words (at most 32 tokens: no word here is over 8 letters)
            // and the chat template's priming.
            for t in [2, 3] {
                let cached = records.iter().find(|r| r.turn == Some(t)).unwrap().cached_tokens.unwrap();
                assert!(cached >= input(t - 1) - 32.0 - 3.0, "turn {t}: {cached} cached of {} before", input(t - 1));
            }
        }
        for t in [2, 3] {
            // The history holds the 16-token reply as streamed plus the new 24-token message.
            assert!(input(t) >= input(t - 1) + 16.0 + 16.0, "turn {t}: {} after {}", input(t), input(t - 1));
            for r in records.iter().filter(|r| r.turn == Some(t)) {
                assert!(r.cached_tokens.unwrap() > 0.0 && r.cached_tokens.unwrap() <= input(t - 1) + 1.0, "{r:?}");
            }
        }
        let story = app::domain::analysis::turns::turn_story(&rows, "turn").unwrap();
        assert!(story.contains("prefix cache"), "{story}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agents_session_grows_by_tool_results_up_to_its_context_cap() {
    let _together = shared_lock().await;
    let url = spawn_sim(SimConfig { base_decode_ms: 1.0, ..SimConfig::default() }).await;
    let mut s = spec(url, EndpointKind::Chat, vec![2], LoadMode::Wave);
    // A task of 24 tokens, tool results of 40, replies of 16: the cap of 150 ends each
    // session after its second step; the wave's 8 requests (2 users × 4 steps) go on in new
    // sessions.
    s.sessions = Some(loadgen::session::SessionSpec {
        context_cap_tokens: 150,
        ..sessions(loadgen::session::SessionKind::Agent, 4)
    });
    let (_dir, pool, run) = sweep_and_read(s).await;
    assert_eq!(run.definitions.workload.as_ref().unwrap().turn_word(), "step");
    assert_eq!(run.points[0].requests_ok, Some(8));
    let records = app::db::level_requests(&pool, &run.id, 0).await.unwrap();
    let steps: Vec<u32> = records.iter().filter_map(|r| r.turn).collect();
    assert!(steps.iter().all(|s| *s <= 3), "the cap stops sessions before step 4: {steps:?}");
    assert!(steps.iter().filter(|s| **s == 1).count() > 2, "sessions restart after the cap: {steps:?}");
    let rows = app::domain::analysis::turns::by_turn(&records);
    let step = |n: u32| rows.iter().find(|r| r.turn == n).unwrap().input_tokens_mean.unwrap();
    assert!(step(2) >= step(1) + 16.0 + 40.0, "a step adds the reply and a 40-token tool result");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dataset_sends_its_first_turns_or_its_conversations_and_is_named_by_hash() {
    let _together = shared_lock().await;
    let url = spawn_sim(SimConfig { base_decode_ms: 1.0, ..SimConfig::default() }).await;
    let dataset = r#"[
        {"conversations": [{"from": "human", "value": "alpha beta gamma delta"}, {"from": "gpt", "value": "x"}, {"from": "human", "value": "epsilon zeta"}]},
        {"conversations": [{"from": "gpt", "value": "skipped"}]},
        {"conversations": [{"from": "system", "value": "be brief"}, {"from": "human", "value": "one two three"}]}
    ]"#;
    for (workload, expect_label, per_level) in [
        (serde_json::json!({"kind": "single_turn"}), "single-turn from sharegpt.json (sha256 ", 2),
        (serde_json::json!({"kind": "multi_turn", "turns": 2}), "multi-turn 2 turns from sharegpt.json (sha256 ", 4),
    ] {
        let request: server::sweeps::SweepRequest = serde_json::from_value(serde_json::json!({
            "url": url, "model": "plateau-sim", "max_tokens": 4, "ignore_eos": true, "concurrency": [2],
            "requests": per_level, "workload": workload,
            "dataset": { "name": "sharegpt.json", "text": dataset }
        }))
        .unwrap();
        let mut s = request.into_spec(None).unwrap();
        s.metrics = loadgen::MetricsSpec::off();
        let (_dir, pool, run) = sweep_and_read(s).await;
        let label = run.definitions.workload.as_ref().unwrap().label();
        assert!(label.starts_with(expect_label), "{label}");
        let records = app::db::level_requests(&pool, &run.id, 0).await.unwrap();
        assert_eq!(records.len(), per_level);
        // The simulator counts ChatML-style: 3 + per message 4 + its role + its text, a word
        // ⌈chars ÷ 4⌉ tokens: 3 + (4 + 1 + 7) = 15 for the first conversation's first turn,
        // 3 + (4 + 2 + 3) + (4 + 1 + 4) = 21 for the one with a system message.
        let mut inputs: Vec<f64> =
            records.iter().filter(|r| r.turn.unwrap_or(1) == 1).map(|r| r.input_tokens.unwrap()).collect();
        inputs.sort_by(f64::total_cmp);
        inputs.dedup();
        assert_eq!(inputs, vec![15.0, 21.0], "the dataset's own first turns: {records:?}");
        if per_level == 4 {
            assert!(records.iter().any(|r| r.turn == Some(2)), "the first conversation's second turn");
        }
    }
}
