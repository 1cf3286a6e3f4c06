//! Sessions: the closed-loop workloads where one user sends several requests in a row —
//! a multi-turn conversation (each turn resends the whole history, the replies as the
//! server streamed them, plus a new user message) or an agent's session (each step appends
//! the reply and a tool result, until a step budget or a context cap). Concurrency counts
//! users in session; each request keeps its turn (step) index, so the run page can show TTFT,
//! input and cached tokens by turn.
//!
//! Owns the session settings ([`SessionSpec`]), the scripts users follow ([`Scripts`]:
//! seeded, from synthetic text or a conversation dataset) and the closed loop over users
//! ([`run`]). Sends requests through [`client`]; knows nothing of runs or storage.

use super::client::{self, Endpoint, RequestSample};
use super::dataset::Dataset;
use super::prompt::{text_of, Prompt};
use super::request::{cancelled, request_body};
use super::target::Target;
use super::tokens::Lengths;
use app::domain::model::workload::{Shape, Think};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;

/// What a user does in a session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionKind {
    /// A chat: every turn a new user message.
    Conversation,
    /// An agent: a task, then every step a tool result.
    Agent,
}

/// A session workload's settings.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionSpec {
    pub kind: SessionKind,
    /// Turns per conversation, or the most steps of an agent's session.
    pub turns: u32,
    /// Tokens of each new user message (a conversation), of the task (an agent).
    pub user_tokens: u32,
    /// Tokens of the system prompt every session starts with, the same for all (one
    /// deployment's users share one); 0: none.
    pub system_tokens: u32,
    /// An agent's tool result, appended every step after the first.
    pub tool_tokens: u32,
    /// An agent's session ends before a step whose context (the server's count of the last
    /// prompt, its reply and the next tool result) would pass this; 0: no cap.
    pub context_cap_tokens: u32,
    pub think: Think,
    /// Conversations from a dataset: its user messages (and system prompt) instead of
    /// synthetic ones, at most `turns` of each.
    pub dataset: Option<Arc<Dataset>>,
}

impl SessionSpec {
    /// The workload's shape as a run records it.
    pub fn shape(&self) -> Shape {
        match self.kind {
            SessionKind::Conversation => Shape::MultiTurn {
                turns: self.turns,
                user_tokens: self.user_tokens,
                system_tokens: self.system_tokens,
                think: self.think,
            },
            SessionKind::Agent => Shape::Agentic {
                steps: self.turns,
                tool_tokens: self.tool_tokens,
                context_cap_tokens: self.context_cap_tokens,
                system_tokens: self.system_tokens,
                think: self.think,
            },
        }
    }
}

/// One session's script: what the user sends each turn and how long it thinks before.
#[derive(Clone, Debug, PartialEq)]
pub struct Script {
    pub system: Option<String>,
    /// The new message of each turn, in order.
    pub messages: Vec<String>,
    /// The wait before each turn (the first is 0), ms.
    pub think_ms: Vec<f64>,
}

/// Seeds the session texts apart from the single-turn prompts.
const SESSION_SALT: u64 = 0x5e55_1090_0000_0003;

/// Hands out session scripts in a seeded order (which user gets which depends on timing;
/// the sequence of scripts does not).
pub struct Scripts {
    spec: SessionSpec,
    lengths: Lengths,
    rng: StdRng,
    system: Option<String>,
    next: usize,
}

impl Scripts {
    pub fn new(spec: &SessionSpec, lengths: Lengths, seed: u64) -> Self {
        let mut rng = StdRng::seed_from_u64(seed ^ SESSION_SALT);
        let system = (spec.system_tokens > 0)
            .then(|| text_of(&lengths, &mut rng, usize::try_from(spec.system_tokens).unwrap_or(0)));
        Self { spec: spec.clone(), lengths, rng, system, next: 0 }
    }

    /// The next session's script.
    pub fn next_script(&mut self) -> Script {
        let turns = usize::try_from(self.spec.turns).unwrap_or(1).max(1);
        let index = self.next;
        self.next = self.next.wrapping_add(1);
        let (system, messages) = match self.spec.dataset.as_deref().filter(|d| !d.conversations.is_empty()) {
            Some(d) => {
                let c = &d.conversations[index % d.conversations.len()];
                let system = c.system.clone().or_else(|| self.system.clone());
                (system, c.users.iter().take(turns).cloned().collect())
            }
            None => {
                let user = usize::try_from(self.spec.user_tokens).unwrap_or(0);
                let tool = usize::try_from(self.spec.tool_tokens).unwrap_or(0);
                let messages: Vec<String> = (0..turns)
                    .map(|t| match (self.spec.kind, t) {
                        (SessionKind::Agent, t) if t > 0 => {
                            format!("Tool result: {}", text_of(&self.lengths, &mut self.rng, tool))
                        }
                        _ => text_of(&self.lengths, &mut self.rng, user),
                    })
                    .collect();
                (self.system.clone(), messages)
            }
        };
        let think_ms = (0..messages.len())
            .map(|t| match t {
                0 => 0.0,
                _ if self.spec.think.mean_ms <= 0.0 => 0.0,
                _ if self.spec.think.exponential => {
                    // Inverse transform; 1 − u keeps ln away from 0.
                    let u: f64 = self.rng.gen();
                    -self.spec.think.mean_ms * (1.0 - u).ln()
                }
                _ => self.spec.think.mean_ms,
            })
            .collect();
        Script { system, messages, think_ms }
    }
}

/// Takes one request from the level's budget; `false` when it is spent.
fn take(tickets: &AtomicUsize) -> bool {
    tickets.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1)).is_ok()
}

/// One user: sessions one after another while the level's budget lasts. A failed turn
/// ends its session (the history would hold no reply); the user starts the next.
async fn user(
    endpoint: Arc<Endpoint>,
    target: Arc<Target>,
    scripts: Arc<Mutex<Scripts>>,
    spec: Arc<SessionSpec>,
    tickets: Arc<AtomicUsize>,
    start: Instant,
    tx: mpsc::UnboundedSender<RequestSample>,
) {
    loop {
        let script = match scripts.lock() {
            Ok(mut s) => s.next_script(),
            Err(poisoned) => poisoned.into_inner().next_script(),
        };
        let mut history: Vec<Value> = Vec::new();
        if let Some(system) = &script.system {
            history.push(json!({ "role": "system", "content": system }));
        }
        for (i, message) in script.messages.iter().enumerate() {
            let think = script.think_ms.get(i).copied().unwrap_or(0.0);
            if think > 0.0 {
                tokio::time::sleep(Duration::from_secs_f64(think / 1000.0)).await;
            }
            if !take(&tickets) {
                return;
            }
            history.push(json!({ "role": "user", "content": message }));
            let body = request_body(&target, Prompt::Messages(history.clone()));
            let mut sample = client::send(&endpoint, &body, start, None).await;
            sample.turn = u32::try_from(i + 1).ok();
            let ok = sample.ok();
            let reply = sample.reply.take().unwrap_or_default();
            let context = sample.prompt_tokens.map(|p| p + sample.output_tokens().unwrap_or(0));
            if tx.send(sample).is_err() {
                return;
            }
            if !ok {
                break;
            }
            history.push(json!({ "role": "assistant", "content": reply }));
            if spec.kind == SessionKind::Agent && spec.context_cap_tokens > 0 {
                let next = context.map(|c| c + u64::from(spec.tool_tokens));
                if next.is_some_and(|n| n > u64::from(spec.context_cap_tokens)) {
                    break;
                }
            }
        }
    }
}

/// `total` requests by `users` users in session, each user's turns one after another (think
/// time between); samples in send order. Cancelled: `Err` with the requests that finished.
pub async fn run(
    endpoint: &Arc<Endpoint>,
    target: &Target,
    scripts: &Arc<Mutex<Scripts>>,
    total: usize,
    users: usize,
    cancel: &mut watch::Receiver<bool>,
    mut on_done: impl FnMut(usize),
) -> Result<Vec<RequestSample>, Vec<RequestSample>> {
    let start = Instant::now();
    let tickets = Arc::new(AtomicUsize::new(total));
    let (tx, mut rx) = mpsc::unbounded_channel();
    let target = Arc::new(target.clone());
    let spec = Arc::new(match scripts.lock() {
        Ok(s) => s.spec.clone(),
        Err(poisoned) => poisoned.into_inner().spec.clone(),
    });
    let mut set = JoinSet::new();
    for _ in 0..users.clamp(1, total.max(1)) {
        set.spawn(user(
            Arc::clone(endpoint),
            Arc::clone(&target),
            Arc::clone(scripts),
            Arc::clone(&spec),
            Arc::clone(&tickets),
            start,
            tx.clone(),
        ));
    }
    drop(tx);
    let mut samples = Vec::with_capacity(total);
    loop {
        tokio::select! {
            biased;
            () = cancelled(cancel) => {
                set.abort_all();
                samples.sort_by(|a: &RequestSample, b| a.sent_at_ms.total_cmp(&b.sent_at_ms));
                return Err(samples);
            }
            got = rx.recv() => match got {
                Some(sample) => {
                    samples.push(sample);
                    on_done(samples.len());
                }
                None => break,
            },
        }
    }
    while set.join_next().await.is_some() {}
    samples.sort_by(|a, b| a.sent_at_ms.total_cmp(&b.sent_at_ms));
    Ok(samples)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(kind: SessionKind) -> SessionSpec {
        SessionSpec {
            kind,
            turns: 3,
            user_tokens: 12,
            system_tokens: 5,
            tool_tokens: 20,
            context_cap_tokens: 0,
            think: Think { mean_ms: 1000.0, exponential: true },
            dataset: None,
        }
    }

    fn words() -> Lengths {
        Lengths::Words { reason: "test".into() }
    }

    #[test]
    fn scripts_are_seeded_share_one_system_prompt_and_think_from_the_second_turn() {
        let mut a = Scripts::new(&spec(SessionKind::Conversation), words(), 7);
        let (s1, s2) = (a.next_script(), a.next_script());
        assert_eq!(s1.messages.len(), 3);
        assert!(s1.messages.iter().all(|m| m.split(' ').count() == 12));
        assert_eq!(s1.system.as_deref().map(|s| s.split(' ').count()), Some(5));
        assert_eq!(s1.system, s2.system, "every session starts with the same system prompt");
        assert_ne!(s1.messages, s2.messages);
        assert_eq!(s1.think_ms[0], 0.0);
        assert!(s1.think_ms[1] > 0.0 && s1.think_ms[1] != s1.think_ms[2], "exponential draws");
        let mut b = Scripts::new(&spec(SessionKind::Conversation), words(), 7);
        assert_eq!(b.next_script(), s1, "the same seed, the same scripts");
        // Exponential think times average their mean.
        let mut c = Scripts::new(&spec(SessionKind::Conversation), words(), 1);
        let waits: Vec<f64> = (0..4000).flat_map(|_| c.next_script().think_ms.into_iter().skip(1)).collect();
        let mean = waits.iter().sum::<f64>() / waits.len() as f64;
        assert!((mean - 1000.0).abs() < 50.0, "{mean}");
    }

    #[test]
    fn an_agent_sends_a_task_then_tool_results() {
        let mut s = Scripts::new(&spec(SessionKind::Agent), words(), 3);
        let script = s.next_script();
        assert_eq!(script.messages[0].split(' ').count(), 12);
        for m in &script.messages[1..] {
            let body = m.strip_prefix("Tool result: ").expect("a tool result");
            assert_eq!(body.split(' ').count(), 20);
        }
    }

    #[test]
    fn dataset_conversations_are_replayed_in_order_up_to_the_turns() {
        let text = r#"[{"conversations":[{"from":"human","value":"a1"},{"from":"gpt","value":"r"},{"from":"human","value":"a2"},{"from":"gpt","value":"r"},{"from":"human","value":"a3"},{"from":"gpt","value":"r"},{"from":"human","value":"a4"}]},
            {"conversations":[{"from":"system","value":"be brief"},{"from":"human","value":"b1"}]}]"#;
        let d = Dataset::parse("d.json", text.as_bytes(), &Default::default()).unwrap();
        let mut s =
            Scripts::new(&SessionSpec { dataset: Some(Arc::new(d)), ..spec(SessionKind::Conversation) }, words(), 1);
        let first = s.next_script();
        assert_eq!(first.messages, vec!["a1", "a2", "a3"], "at most 3 turns");
        let second = s.next_script();
        assert_eq!((second.system.as_deref(), second.messages.clone()), (Some("be brief"), vec!["b1".to_owned()]));
        assert_eq!(s.next_script().messages, first.messages, "round and round");
    }

    #[test]
    fn tickets_run_out_exactly() {
        let t = AtomicUsize::new(2);
        assert!(take(&t) && take(&t));
        assert!(!take(&t) && !take(&t));
        assert_eq!(t.load(Ordering::Acquire), 0);
    }
}
