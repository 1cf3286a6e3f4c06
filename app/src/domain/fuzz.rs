//! Fuzzing the parsers of text that arrives from the address bar or a form: the run and
//! compare view state ([`super::view::ViewState::parse`]), the runs list's query
//! ([`super::query::RunQuery::from_pairs`]) and the annotation text's light formatting
//! ([`super::annotations::parse_inline`]). Real queries and notes are mutated (spans
//! duplicated and cut, markup characters, huge numbers, long runs of one character);
//! nothing may panic, and what comes out keeps its promises (a view round-trips, a page
//! number is in range, formatted text never becomes markup).
//!
//! `PLATEAU_FUZZ_CASES` sets the cases per target (default 64); `.ci/fuzz` runs more.

use super::model::annotations::{parse_inline, plain_text, to_html, Inline};
use super::view::query::{RunQuery, MAX_PAGE};
use super::view::state::ViewState;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::time::{Duration, Instant};

fn config() -> Config {
    let cases = std::env::var("PLATEAU_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64);
    Config { cases, failure_persistence: None, ..Config::default() }
}

/// Pieces real input is made of, and pieces that break naive parsers.
const PIECES: [&str; 24] = [
    "runs=",
    "baseline=",
    "metric=",
    "stat=",
    "scale=",
    "hide=",
    "page=",
    "sort=",
    ",",
    "&",
    "=",
    "abc123def456",
    "ttft",
    "p99",
    "linear",
    "9223372036854775807",
    "-1",
    "99999999999999999999999",
    "%",
    "é",
    "\u{202e}",
    "<script>",
    "\"",
    "\0",
];

const MARKUP: [&str; 16] = [
    "*",
    "**",
    "`",
    "[",
    "](",
    ")",
    "https://",
    "http://x",
    "javascript:alert(1)",
    "<",
    ">",
    "\"",
    " ",
    "\n",
    "é",
    "\u{1b}",
];

/// Text built from `pieces` and arbitrary characters, with long runs of one piece.
fn text_of(pieces: &'static [&'static str]) -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        (0..pieces.len()).prop_map(move |i| pieces[i].to_owned()),
        any::<char>().prop_map(String::from),
        (0..pieces.len(), 1usize..600).prop_map(move |(i, n)| pieces[i].repeat(n)),
    ];
    proptest::collection::vec(piece, 0..40).prop_map(|v| v.concat())
}

fn pairs_of(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|kv| !kv.is_empty())
        .map(|kv| match kv.split_once('=') {
            Some((k, v)) => (k.to_owned(), v.to_owned()),
            None => (kv.to_owned(), String::new()),
        })
        .collect()
}

fn report(target: &str, cases: u32, slowest: Duration) {
    println!("fuzz target={target} cases={cases} panics=0 slowest_ms={}", slowest.as_millis());
}

#[test]
fn fuzz_view_state() {
    let mut runner = TestRunner::new(config());
    let cases = runner.config().cases;
    let slow = std::cell::Cell::new(Duration::ZERO);
    runner
        .run(&text_of(&PIECES), |query| {
            let started = Instant::now();
            let pairs = pairs_of(&query);
            let parsed = ViewState::parse(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())));
            match parsed {
                Ok(v) => {
                    // What the page writes back into the address reads the same.
                    let again = pairs_of(&v.to_query()).into_iter().map(|(k, v)| (k, decode(&v))).collect::<Vec<_>>();
                    let back = ViewState::parse(again.iter().map(|(k, v)| (k.as_str(), v.as_str())));
                    prop_assert_eq!(back, Ok(v));
                }
                Err(problems) => prop_assert!(!problems.is_empty()),
            }
            let list = RunQuery::from_pairs(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())));
            prop_assert!((1..=MAX_PAGE).contains(&list.page));
            prop_assert!((1..=MAX_PAGE).contains(&list.clamped().on_page(list.page.saturating_add(1)).page));
            slow.set(slow.get().max(started.elapsed()));
            Ok(())
        })
        .unwrap();
    report("view_state", cases, slow.get());
}

/// Percent-decoding of what [`super::model::text::percent_encode`] writes.
fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match (
            bytes[i],
            bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok()),
        ) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[test]
fn fuzz_annotation_text() {
    let mut runner = TestRunner::new(config());
    let cases = runner.config().cases;
    let slow = std::cell::Cell::new(Duration::ZERO);
    runner
        .run(&text_of(&MARKUP), |text| {
            // Annotation bodies are at most MAX_BODY_CHARS; longer text is cut to that.
            let text: String = text.chars().take(super::model::annotations::MAX_BODY_CHARS).collect();
            let started = Instant::now();
            let pieces = parse_inline(&text);
            let html = to_html(&text);
            let plain = plain_text(&text);
            slow.set(slow.get().max(started.elapsed()));
            prop_assert!(plain.chars().count() <= text.chars().count());
            // Only the parser's own tags, and links only to safe addresses.
            let stripped = html
                .replace("<em>", "")
                .replace("</em>", "")
                .replace("<strong>", "")
                .replace("</strong>", "")
                .replace("<code>", "")
                .replace("</code>", "")
                .replace("</a>", "");
            let without_links = strip_links(&stripped);
            prop_assert!(!without_links.contains('<'), "markup leaked: {html}");
            for p in &pieces {
                if let Inline::Link { href, .. } = p {
                    let h = href.to_ascii_lowercase();
                    prop_assert!(h.starts_with("https://") || h.starts_with("http://") || h.starts_with('/'), "{href}");
                }
            }
            Ok(())
        })
        .unwrap();
    report("annotation_text", cases, slow.get());
}

/// The text with every `<a href="…" rel="…">` opening tag removed.
fn strip_links(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(i) = rest.find("<a href=\"") {
        out.push_str(&rest[..i]);
        match rest[i..].find('>') {
            Some(end) => rest = &rest[i + end + 1..],
            None => {
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

#[test]
fn long_markup_runs_parse_in_linear_time() {
    // The longest body there can be, made of the characters that make the parser look ahead.
    for c in ["*", "`", "[", "](", "**", "[a](", "h"] {
        let text = c.repeat(super::model::annotations::MAX_BODY_CHARS / c.len());
        let started = Instant::now();
        let _ = to_html(&text);
        assert!(started.elapsed() < Duration::from_millis(500), "{c:?}: {:?}", started.elapsed());
    }
}
