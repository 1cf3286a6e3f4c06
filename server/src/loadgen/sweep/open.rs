//! Open-loop levels: one request due at each time of a schedule (a rate's arrivals or a
//! trace's timestamps), sent on time however many are in flight, watched for over
//! capacity; the rate sweep and the trace replay stop at the first level over it.

use super::runner::Runner;
use super::store::merge;
use crate::loadgen::arrival::{schedule_ms, Arrival};
use crate::loadgen::error::LoadgenError;
use crate::loadgen::prompt::{text_of, Prompt};
use crate::loadgen::request::request_body;
use crate::loadgen::sink::RunSink;
use crate::loadgen::spec::Progress;
use crate::loadgen::target::Target;
use crate::loadgen::tokens::Lengths;
use crate::loadgen::trace::Trace;
use app::domain::model::annotations::{Anchor, AnnotationInput, AnnotationKind, Effect};
use app::domain::{LoadKind, NewLevel, Point};
use rand::SeedableRng;
use serde_json::{json, Value};

impl<S: RunSink> Runner<'_, S> {
    /// Each of `rates_rps` in order; stops at the first over capacity (its finding returned
    /// for the run's notes).
    pub(super) async fn rates(
        &mut self,
        rates_rps: &[f64],
        arrival: Arrival,
        requests: usize,
    ) -> Result<Option<String>, LoadgenError> {
        for &rate in rates_rps {
            let due_ms = schedule_ms(arrival, rate, requests, self.level as u64);
            let raw = json!({ "arrival": arrival.label(), "rate_rps": rate });
            let (_, over) = self.open_level(rate, &due_ms, raw).await?;
            if over {
                // Higher rates would only be further over capacity.
                let skipped = rates_rps.iter().skip_while(|r| **r != rate).count().saturating_sub(1);
                let text = format!(
                    "Open loop: over capacity at {rate} req/s (requests in flight and TTFT kept rising); nothing more was sent at that rate and the {skipped} rate(s) after it were not run."
                );
                tracing::info!(run = %self.id, rate, "over capacity: the rate sweep stops");
                return Ok(Some(text));
            }
        }
        Ok(None)
    }

    /// `trace` replayed at each of `speeds` in order; stops at the first over capacity (its
    /// finding returned for the run's notes).
    pub(super) async fn replay(
        &mut self,
        trace: &Trace,
        speeds: &[f64],
        block_tokens: u32,
    ) -> Result<Option<String>, LoadgenError> {
        for &speed in speeds {
            let due_ms = trace.schedule_ms(speed);
            let rate = trace.mean_rate_rps().unwrap_or(trace.requests.len() as f64) * speed;
            let raw = json!({ "trace": { "name": trace.name, "speed": speed, "requests": trace.requests.len() } });
            let replay = Replay { trace, block_tokens };
            let (_, over) = self.open_level_of(rate, &due_ms, raw, Some(replay)).await?;
            if over {
                let text = format!(
                    "Trace replay: over capacity at ×{} ({} req/s on average; requests in flight and TTFT kept rising); nothing more was sent at that speed and the speeds after it were not run.",
                    app::domain::model::format::load(speed),
                    app::domain::model::format::load(rate)
                );
                return Ok(Some(text));
            }
        }
        Ok(None)
    }

    /// Warm-up, then one request due at each of `due_ms` (ms after the level starts), sent
    /// on time however many are in flight, `spec.repeat` times back to back; stores the
    /// level. A trial found over capacity ends the level's trials.
    pub(super) async fn open_level(
        &mut self,
        rate_rps: f64,
        due_ms: &[f64],
        raw: Value,
    ) -> Result<(Point, bool), LoadgenError> {
        self.open_level_of(rate_rps, due_ms, raw, None).await
    }

    /// [`Runner::open_level`], each request's body from `replay`'s trace when given (each
    /// trial its own block texts: a trial must not be served from the last one's cache).
    pub(super) async fn open_level_of(
        &mut self,
        rate_rps: f64,
        due_ms: &[f64],
        raw: Value,
        replay: Option<Replay<'_>>,
    ) -> Result<(Point, bool), LoadgenError> {
        self.check_cancel()?;
        let level = self.level;
        let total = due_ms.len();
        let trials = self.spec.repeat.max(1) as usize;
        let all = total.saturating_mul(trials);
        // Connections for two seconds of arrivals; more open as the level needs them.
        let connections = ((rate_rps * 2.0).ceil() as usize).clamp(1, 1024).min(total);
        self.begin_level(level, LoadKind::RequestRate, rate_rps, all, self.spec.warmup, connections).await?;
        let progress = self.progress;
        self.begin_telemetry(connections).await;
        let mut done_trials: Vec<NewLevel> = Vec::with_capacity(trials);
        let mut saturation = None;
        let mut unsent = 0;
        let mut in_flight_at = 0;
        for t in 0..trials {
            let before = t * total;
            let bodies = replay.as_ref().map(|r| {
                let salt = (self.level as u64) << 16 | t as u64;
                trace_bodies(&self.spec.target, r.trace, r.block_tokens, self.prompts.lengths(), salt)
            });
            self.endpoint.live.begin();
            let out = match self
                .batch()
                .open(due_ms, bodies, |done| {
                    let _ = progress.try_send(Progress::RequestDone { level, done: before + done, total: all });
                })
                .await
            {
                Ok(out) => out,
                // Cancelled mid-level: the requests that finished are kept as a partial level.
                Err(finished) => {
                    self.end_telemetry().await;
                    if !finished.is_empty() {
                        done_trials.push(self.measure(LoadKind::RequestRate, rate_rps, &finished, None));
                    }
                    if !done_trials.is_empty() {
                        let raw = merge(
                            raw,
                            json!({ "partial": { "cancelled": true, "requests_planned": all, "requests_finished": before + finished.len() } }),
                        );
                        self.truncate_next = true;
                        self.store(done_trials, raw).await?;
                    }
                    return Err(self.cancelled_err());
                }
            };
            done_trials.push(self.measure(LoadKind::RequestRate, rate_rps, &out.samples, None));
            unsent = out.unsent;
            in_flight_at = out.in_flight_at;
            if out.over_capacity.is_some() || out.unsent > 0 {
                saturation = out.over_capacity;
                break;
            }
        }
        self.end_telemetry().await;
        let raw = match &saturation {
            None => merge(raw, json!({ "over_saturation": { "detected": false } })),
            Some(f) => merge(
                raw,
                json!({ "over_saturation": {
                    "detected": true,
                    "at_ms": f.at_ms,
                    "in_flight_per_s": f.in_flight_per_s,
                    "in_flight_rise": f.in_flight_rise,
                    "ttft_ms_per_s": f.ttft_ms_per_s,
                    "ttft_relative_rise": f.ttft_rise,
                    "unsent": unsent,
                    "in_flight_at_detection": in_flight_at,
                    "rule": "requests in flight and TTFT both rising over the recent half of the level (least-squares lines climbing by ≥ 25 % of their mean, in flight by ≥ 2), after ≥ 1 s and ≥ 10 TTFTs; from then on nothing more was sent (the requests in flight were answered and kept)",
                } }),
            ),
        };
        // A level whose schedule was cut short is truncated.
        self.truncate_next = unsent > 0;
        let over = saturation.is_some();
        self.over_capacity_next = over;
        let point = self.store(done_trials, raw).await?;
        if let Some(f) = saturation {
            let note = AnnotationInput {
                anchor: Anchor::Point { load_kind: LoadKind::RequestRate, load: rate_rps },
                kind: AnnotationKind::Cause,
                effect: Effect::None,
                body: format!(
                    "Over capacity: requests in flight (+{:.1}/s) and TTFT (+{:.0} %) kept rising; found after {:.1} s, {} request(s) of the schedule not sent.",
                    f.in_flight_per_s,
                    f.ttft_rise * 100.0,
                    f.at_ms / 1000.0,
                    unsent
                ),
                superseded_by: None,
                proposal_key: None,
                new_baseline: false,
            };
            if let Err(e) = self.sink.annotate(self.id, &note).await {
                tracing::warn!(run = %self.id, error = %e, "could not annotate the over-capacity level");
            }
        }
        Ok((point, over))
    }
}

/// A trace to replay on an open-loop level.
pub(super) struct Replay<'a> {
    trace: &'a Trace,
    block_tokens: u32,
}

/// Every request of `trace` as a body: its prompt made of its blocks (a block's text drawn
/// from its hash id and `salt`, so requests sharing a hash id share that text, and another
/// level or trial shares nothing with this one), `max_tokens` its output length.
fn trace_bodies(target: &Target, trace: &Trace, block_tokens: u32, lengths: &Lengths, salt: u64) -> Vec<Value> {
    trace
        .requests
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let mut fill = |seed: u64, tokens: usize| {
                let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ salt.wrapping_mul(0x9E37_79B9_7F4A_7C15));
                text_of(lengths, &mut rng, tokens)
            };
            let prompt = crate::loadgen::trace::prompt_for(r, i, block_tokens, &mut fill);
            let mut body = request_body(target, Prompt::Text(prompt));
            body["max_tokens"] = json!(r.output_length.max(1));
            body
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loadgen::target::Connections;
    use app::domain::EndpointKind;
    use std::sync::Arc;

    /// The prompts a trace replay sends, counted with a tokenizer, share exactly the blocks
    /// the trace's hash ids say, and nothing more; another salt (level, trial) shares nothing.
    #[test]
    fn trace_prompts_share_exactly_the_blocks_of_their_hash_ids() {
        let dir = tempfile::tempdir().unwrap();
        let path = crate::loadgen::tokens::tests::word_level_file(dir.path());
        let t = Arc::new(crate::loadgen::PromptTokenizer::load(&path).unwrap());
        let lengths = Lengths::Tokenizer(Arc::clone(&t));
        let text = [
            r#"{"timestamp": 0, "input_length": 40, "output_length": 3, "hash_ids": [1, 2, 3]}"#,
            r#"{"timestamp": 10, "input_length": 36, "output_length": 5, "hash_ids": [1, 2, 4]}"#,
            r#"{"timestamp": 20, "input_length": 44, "output_length": 7, "hash_ids": [9, 2, 3]}"#,
        ]
        .join("\n");
        let trace = Trace::parse("t.jsonl", text.as_bytes(), 16, &Default::default()).unwrap();
        let target = Target {
            base_url: "http://127.0.0.1:1".into(),
            model: "m".into(),
            api_key: None,
            endpoint: EndpointKind::Chat,
            max_tokens: 64,
            temperature: None,
            ignore_eos: true,
            extra_body: serde_json::Map::new(),
            connections: Connections::KeepAlive,
            pin: None,
        };
        let words = |b: &Value| -> Vec<String> {
            let m = b["messages"][0]["content"].as_str().unwrap();
            m.split(' ').map(str::to_owned).collect()
        };
        let bodies = trace_bodies(&target, &trace, 16, &lengths, 7);
        let p: Vec<Vec<String>> = bodies.iter().map(words).collect();
        for (body, r) in bodies.iter().zip(&trace.requests) {
            let prompt = body["messages"][0]["content"].as_str().unwrap();
            assert_eq!(t.count(prompt).unwrap(), r.input_length as usize, "exactly the trace's input length");
            assert_eq!(body["max_tokens"], r.output_length, "its own output length");
        }
        // Requests 0 and 1 share blocks 1 and 2 (32 tokens) and differ right after.
        assert_eq!(p[0][..32], p[1][..32]);
        assert_ne!(p[0][32..36], p[1][32..36]);
        // Request 2 starts with another block: nothing shared, although it has blocks 2 and 3
        // (a prefix is only a prefix from the first token).
        assert_ne!(p[2][..16], p[0][..16]);
        // Another level or trial (salt) draws other texts for the same blocks.
        let other: Vec<Vec<String>> = trace_bodies(&target, &trace, 16, &lengths, 8).iter().map(words).collect();
        assert_ne!(other[0][..16], p[0][..16]);
        assert_eq!(other[0][..32], other[1][..32]);
    }
}
