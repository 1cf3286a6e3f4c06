//! Peak memory of an import: a vLLM `--save-detailed` result (per-request arrays: TTFTs,
//! latencies, lengths, every chunk gap, the generated texts) of 8 to 63 MiB is posted as a
//! dry run to a server in this process, and the peak resident memory above what the
//! process held before (the upload itself included) is printed against the upload's size.
//!
//! Each size runs in a child process of its own (`import_memory --one BYTES`) so that one
//! measurement's freed memory does not hide the next one's. The peak is Linux's `VmHWM`,
//! reset before the request through `/proc/self/clear_refs`.
//!
//! The same sizes again as a result padded with one-digit numbers (a tree of 32× its size
//! if read whole): refused with a 413 once its tree reaches the bound, 8× the file.
//!
//! `cargo bench -p server --bench import_memory` (sizes in MiB as arguments to override).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test and bench code stops at the first failure"
)]

use reqwest::multipart::{Form, Part};
use std::fmt::Write as _;

fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// A vLLM result with per-request arrays, about `target` bytes long.
fn vllm_detailed(target: usize) -> Vec<u8> {
    // One request costs about 2.3 KB of text: 100 chunk gaps, a 400-character text.
    let n = (target / 2320).max(1);
    let mut ttfts = String::new();
    let mut itls = String::new();
    let mut lat = String::new();
    let mut ins = String::new();
    let mut outs = String::new();
    let mut texts = String::new();
    let mut errors = String::new();
    for i in 0..n {
        let sep = if i == 0 { "" } else { ", " };
        let ttft = 0.1 + (i % 97) as f64 * 0.001_234_567_891;
        let _ = write!(ttfts, "{sep}{ttft}");
        itls.push_str(sep);
        itls.push('[');
        for k in 0..100 {
            let _ = write!(itls, "{}{}", if k == 0 { "" } else { ", " }, 0.012_345_678_901 + (k % 13) as f64 * 1e-5);
        }
        itls.push(']');
        let _ = write!(lat, "{sep}{}", ttft + 1.234_567_890_123);
        let _ = write!(ins, "{sep}{}", 1000 + i % 50);
        let _ = write!(outs, "{sep}101");
        let _ = write!(texts, "{sep}\"{}\"", "lorem ipsum ".repeat(33));
        let _ = write!(errors, "{sep}\"\"");
    }
    format!(
        r#"{{"date": "20260301-101010", "endpoint_type": "openai-chat", "backend": "openai-chat", "model_id": "m/x", "num_prompts": {n}, "request_rate": "inf", "max_concurrency": 64, "duration": 120.5, "completed": {n}, "failed": 0, "total_input_tokens": 100000, "total_output_tokens": 200000, "request_throughput": 10.0, "output_throughput": 1000.0, "mean_ttft_ms": 150.0, "median_ttft_ms": 150.0, "p99_ttft_ms": 199.0, "mean_e2el_ms": 1350.0, "input_lens": [{ins}], "output_lens": [{outs}], "ttfts": [{ttfts}], "itls": [{itls}], "latencies": [{lat}], "generated_texts": [{texts}], "errors": [{errors}]}}"#
    )
    .into_bytes()
}

/// The same result padded with one-digit numbers to about `target` bytes: as a tree, 32×
/// its size; read, it stops at the bound (`json::TREE_BYTES_PER_TEXT_BYTE`) with a 413.
fn small_numbers(target: usize) -> Vec<u8> {
    let mut body = vllm_detailed(64 << 10);
    let pad = format!("\"padding\": [{}0], ", "0,".repeat(target / 2));
    body.splice(1..1, pad.into_bytes());
    body
}

/// One measurement: (upload bytes, peak RSS delta in bytes, seconds, HTTP status).
fn one(target: usize, dense: bool) -> (usize, u64, f64, u16) {
    let body = if dense { small_numbers(target) } else { vllm_detailed(target) };
    let size = body.len();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    rt.block_on(async move {
        let dir = tempfile::tempdir().expect("tempdir");
        let pool = app::db::connect(&dir.path().join("bench.db")).await.expect("db");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let state = server::routes::AppState::new(pool, server::startup::leptos_options(dir.path(), addr), 64 << 20);
        // The listener `plateau serve` runs (TCP_NODELAY, its bounds), not a bare `axum::serve`.
        tokio::spawn(server::listener::serve(
            listener,
            server::routes::router(state),
            server::listener::ServeLimits::default(),
            std::future::pending(),
        ));
        let client = reqwest::Client::new();
        // Warm up (first request sets up the runtime's and the router's own memory).
        let _ = client.get(format!("http://{addr}/healthz")).send().await;
        let _ = std::fs::write("/proc/self/clear_refs", "5");
        let before = status_kib("VmRSS:");
        let started = std::time::Instant::now();
        let form = Form::new().part("file", Part::bytes(body).file_name("detailed.json"));
        let resp =
            client.post(format!("http://{addr}/api/v1/runs?dry_run=true")).multipart(form).send().await.expect("post");
        let status = resp.status();
        let text = resp.text().await.unwrap_or_default();
        let expected = if dense { reqwest::StatusCode::PAYLOAD_TOO_LARGE } else { reqwest::StatusCode::OK };
        assert_eq!(status, expected, "{}", text.chars().take(300).collect::<String>());
        let secs = started.elapsed().as_secs_f64();
        let peak = status_kib("VmHWM:");
        (size, peak.saturating_sub(before) * 1024, secs, status.as_u16())
    })
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    if let [flag, bytes] = args.as_slice() {
        if flag == "--one" || flag == "--one-dense" {
            let (size, delta, secs, status) = one(bytes.parse().unwrap_or(8 << 20), flag == "--one-dense");
            println!("{size} {delta} {secs} {status}");
            return;
        }
    }
    let sizes: Vec<usize> =
        if args.is_empty() { vec![8, 16, 32, 63] } else { args.iter().filter_map(|a| a.parse().ok()).collect() };
    let exe = std::env::current_exe().expect("exe");
    println!(
        "{:>14} {:>12} {:>16} {:>8} {:>9} {:>7}",
        "file", "upload MiB", "peak RSS Δ MiB", "ratio", "time s", "status"
    );
    for (flag, kind) in [("--one", "vLLM detailed"), ("--one-dense", "small numbers")] {
        for &mib in &sizes {
            let out = std::process::Command::new(&exe).arg(flag).arg((mib << 20).to_string()).output().expect("child");
            let line = String::from_utf8_lossy(&out.stdout);
            let f: Vec<f64> = line.split_whitespace().filter_map(|x| x.parse().ok()).collect();
            match f.as_slice() {
                [size, delta, secs, status] => println!(
                    "{kind:>14} {:>12.1} {:>16.1} {:>8.2} {:>9.2} {status:>7}",
                    size / 1048576.0,
                    delta / 1048576.0,
                    delta / size,
                    secs
                ),
                _ => println!(
                    "{kind:>14} {mib:>12} failed: {}",
                    String::from_utf8_lossy(&out.stderr).chars().take(400).collect::<String>()
                ),
            }
        }
    }
}
