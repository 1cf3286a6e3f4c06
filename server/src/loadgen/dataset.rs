//! Conversation datasets: ShareGPT JSON (an array of `{"conversations": [{"from", "value"}]}`),
//! the same one object per line (JSONL), or OpenAI-style `{"messages": [{"role", "content"}]}`
//! lines. Owns reading them into [`Conversation`]s (system prompt, user messages, the
//! dataset's own replies), every message checked against its bound and every error naming
//! the conversation or line at fault; the first turns become single-turn prompts
//! (`PromptFile::from_dataset`), whole conversations the scripts of a multi-turn workload.
//!
//! ShareGPT has rows that start with the assistant or hold no user message at all: those are
//! skipped and counted ([`Dataset::skipped`]), as the benchmark tools that read it do.

use serde_json::Value;

/// One conversation of a dataset.
#[derive(Clone, Debug, PartialEq)]
pub struct Conversation {
    /// A leading system message.
    pub system: Option<String>,
    /// The user messages, in order (turn 1, 2, …).
    pub users: Vec<String>,
    /// The dataset's assistant replies (kept for reference; a sweep sends the server's own).
    pub replies: Vec<String>,
}

/// How much of a dataset is read.
#[derive(Clone, Copy, Debug)]
pub struct DatasetBounds {
    pub max_conversations: usize,
    pub max_message_chars: usize,
    /// User turns kept per conversation (later ones are dropped).
    pub max_turns: usize,
}

impl Default for DatasetBounds {
    fn default() -> Self {
        Self { max_conversations: 1_000_000, max_message_chars: 200_000, max_turns: 64 }
    }
}

/// A dataset, read.
#[derive(Clone, Debug, PartialEq)]
pub struct Dataset {
    pub name: String,
    /// SHA-256 of the bytes, lowercase hex.
    pub sha256: String,
    pub conversations: Vec<Conversation>,
    /// Rows without a user message, or starting with the assistant.
    pub skipped: usize,
}

#[derive(Clone, Copy, PartialEq)]
enum Role {
    System,
    User,
    Assistant,
}

/// Where an error is: "conversation 3" (a JSON array's element) or "line 4" (JSONL).
fn at(name: &str, place: &str, why: impl std::fmt::Display) -> String {
    format!("{name}: {place}: {why}")
}

/// One row's messages as (role, text), from either shape; other roles are skipped.
fn messages(v: &Value, name: &str, place: &str, bounds: &DatasetBounds) -> Result<Vec<(Role, String)>, String> {
    let expected = "expected {\"conversations\": [...]} or {\"messages\": [...]}";
    let Some(obj) = v.as_object() else { return Err(at(name, place, expected)) };
    let (list, role_key, text_key, shape) = match (obj.get("conversations"), obj.get("messages")) {
        (Some(c), _) => (c, "from", "value", "`conversations` must be a list of {from, value} objects"),
        (None, Some(m)) => (m, "role", "content", "`messages` must be a list of {role, content} objects"),
        (None, None) => return Err(at(name, place, expected)),
    };
    let Some(list) = list.as_array() else { return Err(at(name, place, shape)) };
    let mut out = Vec::with_capacity(list.len());
    for (i, m) in list.iter().enumerate() {
        let Some(m) = m.as_object() else { return Err(at(name, place, shape)) };
        let role = match m.get(role_key).and_then(Value::as_str).map(str::to_ascii_lowercase).as_deref() {
            Some("human" | "user") => Role::User,
            Some("gpt" | "assistant" | "chatgpt" | "bard" | "bing") => Role::Assistant,
            Some("system") => Role::System,
            _ => continue,
        };
        let Some(text) = m.get(text_key).and_then(Value::as_str) else {
            return Err(at(name, place, format!("message {}: `{text_key}` must be a string", i + 1)));
        };
        let chars = text.chars().count();
        if chars > bounds.max_message_chars {
            return Err(at(
                name,
                place,
                format!("message {}: {chars} characters is above the bound of {}", i + 1, bounds.max_message_chars),
            ));
        }
        // Consecutive messages of one role are one message.
        match out.last_mut() {
            Some((r, t)) if *r == role => {
                let t: &mut String = t;
                t.push_str("\n\n");
                t.push_str(text);
            }
            _ => out.push((role, text.to_owned())),
        }
    }
    Ok(out)
}

/// A row's messages as a conversation; `None` when it must be skipped.
fn conversation(msgs: Vec<(Role, String)>, bounds: &DatasetBounds) -> Option<Conversation> {
    let mut it = msgs.into_iter().peekable();
    let system = match it.peek() {
        Some((Role::System, _)) => it.next().map(|(_, t)| t),
        _ => None,
    };
    let mut c = Conversation { system, users: Vec::new(), replies: Vec::new() };
    for (i, (role, text)) in it.enumerate() {
        match role {
            Role::User if c.users.len() < bounds.max_turns => c.users.push(text),
            Role::User => break,
            // The first message after the system prompt must be the user's.
            Role::Assistant if i == 0 => return None,
            Role::Assistant => c.replies.push(text),
            Role::System => {}
        }
    }
    (!c.users.is_empty()).then_some(c)
}

impl Dataset {
    /// Reads `bytes`: a JSON array when it starts with `[`, else JSONL.
    pub fn parse(name: &str, bytes: &[u8], bounds: &DatasetBounds) -> Result<Dataset, String> {
        let text = std::str::from_utf8(bytes).map_err(|e| format!("{name}: not UTF-8 text ({e})"))?;
        let mut conversations = Vec::new();
        let mut skipped = 0;
        let mut keep = |msgs: Vec<(Role, String)>| -> Result<(), String> {
            match conversation(msgs, bounds) {
                Some(c) => {
                    if conversations.len() >= bounds.max_conversations {
                        return Err(format!(
                            "{name}: more than {} conversations (the bound)",
                            bounds.max_conversations
                        ));
                    }
                    conversations.push(c);
                }
                None => skipped += 1,
            }
            Ok(())
        };
        if text.trim_start().starts_with('[') {
            let rows: Vec<Value> = serde_json::from_str(text).map_err(|e| format!("{name}: not JSON ({e})"))?;
            for (i, row) in rows.iter().enumerate() {
                keep(messages(row, name, &format!("conversation {i}"), bounds)?)?;
            }
        } else {
            for (i, line) in text.lines().enumerate() {
                let line = line.trim();
                if line.is_empty() {
                    continue;
                }
                let place = format!("line {}", i + 1);
                let row: Value = serde_json::from_str(line).map_err(|e| at(name, &place, format!("not JSON ({e})")))?;
                keep(messages(&row, name, &place, bounds)?)?;
            }
        }
        if conversations.is_empty() {
            return Err(format!("{name}: no conversation starts with a user message"));
        }
        Ok(Dataset { name: name.to_owned(), sha256: crate::digest::sha256_hex(bytes), conversations, skipped })
    }

    /// Each conversation's first user message, with its system message: the single-turn prompts.
    pub fn first_turns(&self) -> impl Iterator<Item = (Option<&str>, &str)> {
        self.conversations.iter().filter_map(|c| Some((c.system.as_deref(), c.users.first()?.as_str())))
    }

    /// Conversations with at least `min_turns` user messages.
    pub fn with_turns(&self, min_turns: usize) -> usize {
        self.conversations.iter().filter(|c| c.users.len() >= min_turns).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHAREGPT: &str = r#"[
        {"id": "a", "conversations": [{"from": "gpt", "value": "I start"}, {"from": "human", "value": "hi"}]},
        {"id": "b", "conversations": [{"from": "system", "value": "be brief"}, {"from": "human", "value": "q1"}, {"from": "gpt", "value": "r1"}]},
        {"id": "c", "conversations": [{"from": "human", "value": "one"}, {"from": "human", "value": "more"}, {"from": "gpt", "value": "r"}, {"from": "tool", "value": "x"}, {"from": "human", "value": "two"}, {"from": "gpt", "value": "r2"}, {"from": "human", "value": "three"}]}
    ]"#;

    #[test]
    fn sharegpt_rows_become_conversations_and_odd_rows_are_counted() {
        let d = Dataset::parse("s.json", SHAREGPT.as_bytes(), &DatasetBounds::default()).unwrap();
        assert_eq!(d.skipped, 1, "the row starting with the assistant");
        assert_eq!(d.conversations.len(), 2);
        assert_eq!(
            d.conversations[0],
            Conversation { system: Some("be brief".into()), users: vec!["q1".into()], replies: vec!["r1".into()] }
        );
        assert_eq!(d.conversations[1].users, vec!["one\n\nmore", "two", "three"]);
        assert_eq!(d.conversations[1].replies, vec!["r", "r2"]);
        assert_eq!(d.sha256, crate::digest::sha256_hex(SHAREGPT.as_bytes()));
        assert_eq!(d.sha256.len(), 64);
        assert_eq!(d.first_turns().collect::<Vec<_>>(), vec![(Some("be brief"), "q1"), (None, "one\n\nmore")]);
        assert_eq!((d.with_turns(1), d.with_turns(3), d.with_turns(4)), (2, 1, 0));
        // The same rows as JSONL; and OpenAI-style messages.
        let rows: Vec<Value> = serde_json::from_str(SHAREGPT).unwrap();
        let jsonl: String = rows.iter().map(|r| format!("{r}\n")).collect();
        let j = Dataset::parse("s.jsonl", jsonl.as_bytes(), &DatasetBounds::default()).unwrap();
        assert_eq!((j.conversations, j.skipped), (d.conversations, 1));
        let openai = "{\"messages\": [{\"role\": \"user\", \"content\": \"hello\"}, {\"role\": \"assistant\", \"content\": \"hi\"}]}\n";
        let o = Dataset::parse("o.jsonl", openai.as_bytes(), &DatasetBounds::default()).unwrap();
        assert_eq!(o.conversations[0].users, vec!["hello"]);
        // Turns beyond the bound are dropped.
        let short =
            Dataset::parse("s.json", SHAREGPT.as_bytes(), &DatasetBounds { max_turns: 2, ..Default::default() });
        assert_eq!(short.unwrap().conversations[1].users.len(), 2);
    }

    #[test]
    fn bad_rows_are_named() {
        let b = DatasetBounds::default();
        let e = |text: &str| Dataset::parse("d", text.as_bytes(), &b).unwrap_err();
        assert_eq!(
            e("[{\"conversations\": 3}]"),
            "d: conversation 0: `conversations` must be a list of {from, value} objects"
        );
        assert_eq!(
            e("[{\"conversations\": [{\"from\": \"human\", \"value\": \"a\"}]}, {\"conversations\": [{\"from\": \"human\", \"value\": 1}]}]"),
            "d: conversation 1: message 1: `value` must be a string"
        );
        assert!(e("[oops").starts_with("d: not JSON ("));
        assert!(e("{\"messages\": []}\n{oops\n").starts_with("d: line 2: not JSON ("));
        assert_eq!(e("{\"x\": 1}"), "d: line 1: expected {\"conversations\": [...]} or {\"messages\": [...]}");
        assert_eq!(
            e("{\"messages\": [{\"role\": \"user\", \"content\": null}]}"),
            "d: line 1: message 1: `content` must be a string"
        );
        let long = format!("{{\"messages\": [{{\"role\": \"user\", \"content\": \"{}\"}}]}}", "x".repeat(11));
        let small = DatasetBounds { max_message_chars: 10, ..Default::default() };
        assert_eq!(
            Dataset::parse("d", long.as_bytes(), &small).unwrap_err(),
            "d: line 1: message 1: 11 characters is above the bound of 10"
        );
        let two = "{\"messages\": [{\"role\": \"user\", \"content\": \"a\"}]}\n".repeat(2);
        let one = DatasetBounds { max_conversations: 1, ..Default::default() };
        assert_eq!(Dataset::parse("d", two.as_bytes(), &one).unwrap_err(), "d: more than 1 conversations (the bound)");
        assert_eq!(e("[]"), "d: no conversation starts with a user message");
        assert_eq!(e(""), "d: no conversation starts with a user message");
    }
}
