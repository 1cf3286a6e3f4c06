//! How fast and faithful the load generator is, against `plateau sim` started as a
//! separate process (so CPU time is attributed to the right side of the socket).
//! Run with `cargo bench -p server --bench loadgen`; it prints four tables:
//!
//! 0. Reading one streamed event: as a `serde_json::Value` tree (the reference) and typed
//!    (`loadgen::event`), ns per event and the ratio, in the same run.
//! 1. CPU: client CPU-seconds (getrusage of this process) per million streamed tokens at a
//!    steady C=64, next to the simulator's own CPU for the same tokens (/proc/PID/stat).
//! 2. Streams: waves of 1,000 … 10,000 concurrent streams (RLIMIT_NOFILE soft limit raised
//!    to the hard limit), the most held open at once, failures, and peak RSS (VmHWM).
//! 3. TTFT: the client's TTFT minus the simulator's own (`timings.ttft_ms`, admission →
//!    first token), as an absolute error and as a share of the TTFT.
//!
//! Table 1 has a row per scrape setting of the server's metrics (off, every 500 ms — the
//! default — and every 100 ms): the scraper's cost is the difference in client CPU and in
//! throughput.
//!
//! `PLATEAU_BENCH_MAX_STREAMS` caps the ramp (default 10000); `PLATEAU_BENCH_ONLY=cpu` runs
//! table 1 alone.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test and bench code stops at the first failure"
)]

use app::domain::metrics::{Metric, Stat};
use app::domain::{NewLevel, NewRun, RunId, RunStatus};
use server::loadgen::{self, LoadMode, LoadgenError, Loads, PromptSpec, RunSink, SweepSpec, Target};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Keeps levels in memory: the bench measures the generator, not SQLite.
#[derive(Default)]
struct Memory(Mutex<Vec<NewLevel>>);

impl RunSink for Memory {
    async fn create(&self, _run: &NewRun) -> Result<RunId, LoadgenError> {
        RunId::parse("bench0000000").ok_or_else(|| LoadgenError::Sink("bad id".into()))
    }
    async fn append(&self, _id: &RunId, level: &NewLevel) -> Result<(), LoadgenError> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(level.clone());
        Ok(())
    }
    async fn finish(&self, _id: &RunId, _s: RunStatus, _note: Option<&str>) -> Result<(), LoadgenError> {
        Ok(())
    }
    async fn annotate(
        &self,
        _id: &RunId,
        _note: &app::domain::annotations::AnnotationInput,
    ) -> Result<(), LoadgenError> {
        Ok(())
    }
}

/// The simulator process; killed when dropped.
struct Sim {
    child: Child,
    url: String,
}

impl Drop for Sim {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_sim(args: &[&str]) -> Sim {
    let port =
        std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).unwrap_or(18090);
    let addr = format!("127.0.0.1:{port}");
    let child = Command::new(env!("CARGO_BIN_EXE_plateau"))
        .args(["sim", "--addr", &addr, "--prefill-ms-per-token", "0", "--per-seq-ms", "0"])
        .args(args)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| fail(&format!("cannot start plateau sim: {e}")));
    let sim = Sim { child, url: format!("http://{addr}") };
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(&addr).is_err() {
        if Instant::now() > deadline {
            fail("plateau sim did not start listening");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    sim
}

fn fail(msg: &str) -> ! {
    eprintln!("bench failed: {msg}");
    std::process::exit(1)
}

/// CPU seconds (user + system) of this process.
fn self_cpu_s() -> f64 {
    use nix::sys::resource::{getrusage, UsageWho};
    match getrusage(UsageWho::RUSAGE_SELF) {
        Ok(u) => {
            let t = |tv: nix::sys::time::TimeVal| tv.tv_sec() as f64 + tv.tv_usec() as f64 / 1e6;
            t(u.user_time()) + t(u.system_time())
        }
        Err(_) => f64::NAN,
    }
}

/// CPU seconds (user + system, all threads) of another process, from /proc/PID/stat.
fn proc_cpu_s(pid: u32) -> f64 {
    let ticks = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK).ok().flatten().unwrap_or(100) as f64;
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return f64::NAN };
    // Fields after the command name (which is in parentheses and may hold spaces).
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the whole line: 11 and 12 after ")".
    let num = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(f64::NAN);
    (num(11) + num(12)) / ticks
}

/// Peak resident set of this process (VmHWM), in MB.
fn peak_rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn raise_nofile() -> (u64, u64) {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).unwrap_or((1024, 1024));
    if soft < hard && setrlimit(Resource::RLIMIT_NOFILE, hard, hard).is_ok() {
        return (hard, hard);
    }
    (soft, hard)
}

fn spec(url: &str, loads: Loads, mode: LoadMode, max_tokens: u32, timeout_s: u64) -> SweepSpec {
    SweepSpec {
        name: "bench".into(),
        target: Target {
            base_url: url.to_owned(),
            model: "plateau-sim".into(),
            api_key: None,
            endpoint: app::domain::EndpointKind::Completions,
            max_tokens,
            temperature: None,
            ignore_eos: true,
            extra_body: serde_json::Map::new(),
            connections: Default::default(),
            pin: None,
        },
        prompt: PromptSpec::fixed(16, 1),
        loads,
        mode,
        warmup: 0,
        request_timeout: Duration::from_secs(timeout_s),
        metrics: loadgen::MetricsSpec::off(),
        repeat: 1,
        repeat_order: app::domain::metrics::RepeatOrder::BackToBack,
    }
}

async fn sweep(s: SweepSpec) -> Vec<NewLevel> {
    let sink = Memory::default();
    let (tx, mut rx) = tokio::sync::mpsc::channel(16);
    tokio::spawn(async move { while rx.recv().await.is_some() {} });
    let (_cancel, cancel_rx) = tokio::sync::watch::channel(false);
    if let Err(e) = loadgen::run_sweep_to(&sink, s, tx, cancel_rx).await {
        fail(&e.to_string());
    }
    sink.0.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn tokens(level: &NewLevel) -> f64 {
    level.requests.iter().filter_map(|r| r.output_tokens).sum()
}

/// The most requests in flight at once: a sweep line over [sent, sent + elapsed].
fn max_overlap(level: &NewLevel) -> usize {
    let sent = level.raw["sent_at_ms"].as_array().cloned().unwrap_or_default();
    let mut edges: Vec<(f64, i32)> = Vec::new();
    for (r, s) in level.requests.iter().zip(sent) {
        let (Some(s), Some(e2e)) = (s.as_f64(), r.e2e_ms) else { continue };
        edges.push((s, 1));
        edges.push((s + e2e, -1));
    }
    edges.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let (mut now, mut most) = (0i32, 0i32);
    for (_, d) in edges {
        now += d;
        most = most.max(now);
    }
    usize::try_from(most).unwrap_or(0)
}

/// Reads per event in table 0.
const PARSE_ROUNDS: usize = 200_000;

#[tokio::main]
async fn main() {
    let (soft, hard) = raise_nofile();
    let max_streams: usize =
        std::env::var("PLATEAU_BENCH_MAX_STREAMS").ok().and_then(|v| v.parse().ok()).unwrap_or(10_000);
    println!(
        "load generator bench: {} cores, RLIMIT_NOFILE {soft}/{hard}",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );

    // 0. The per-chunk reading alone: one event's JSON read for what the sweep times, as a
    //    `serde_json::Value` tree (the reference, how the sweep read it before) and typed
    //    (`loadgen::event::StreamEvent`, what it reads now), on the chunks servers send.
    println!();
    println!("| one streamed event, read {PARSE_ROUNDS} times | tree (serde_json::Value) ns/event | typed ns/event | tree ÷ typed |");
    println!("|---|---:|---:|---:|");
    for (label, event) in [
        (
            "chat chunk (vLLM)",
            r#"{"id":"chatcmpl-8f1c2d","object":"chat.completion.chunk","created":1733011200,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[{"index":0,"delta":{"content":" plateau"},"logprobs":null,"finish_reason":null}]}"#,
        ),
        (
            "completions chunk (llama.cpp)",
            r#"{"choices":[{"text":" plateau","index":0,"logprobs":null,"finish_reason":null}],"created":1733011200,"id":"chatcmpl-x","model":"smollm2","system_fingerprint":"b1-abc","object":"text_completion"}"#,
        ),
        (
            "usage chunk",
            r#"{"id":"c","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":158,"completion_tokens":256,"total_tokens":414}}"#,
        ),
    ] {
        let time = |f: &dyn Fn(&str) -> bool| {
            let t0 = Instant::now();
            let mut seen = 0usize;
            for _ in 0..PARSE_ROUNDS {
                seen += usize::from(f(std::hint::black_box(event)));
            }
            assert!(seen == PARSE_ROUNDS || seen == 0);
            t0.elapsed().as_nanos() as f64 / PARSE_ROUNDS as f64
        };
        let tree = time(&|e| loadgen::event::parse_as_tree(e).unwrap().choice.is_some_and(|c| c.content));
        let typed = time(&|e| loadgen::event::StreamEvent::parse(e).unwrap().choice.is_some_and(|c| c.content));
        println!("| {label} | {tree:.0} | {typed:.0} | {:.2}× |", tree / typed);
    }

    // 1. CPU per million streamed tokens, client vs simulator; scraping the server's
    //    metrics off and on.
    println!();
    println!("| C=64 steady, 1,280 requests × 256 tokens | client CPU-s per M tokens | simulator CPU-s per M tokens | client ÷ simulator | streamed tok/s | scrapes |");
    println!("|---|---:|---:|---:|---:|---:|");
    for (label, metrics) in [
        ("server metrics off", loadgen::MetricsSpec::off()),
        ("scraped every 500 ms (default)", loadgen::MetricsSpec::default()),
        (
            "scraped every 100 ms",
            loadgen::MetricsSpec { interval: Duration::from_millis(100), ..loadgen::MetricsSpec::default() },
        ),
    ] {
        let sim = start_sim(&["--max-batch", "64", "--decode-ms", "2"]);
        let sim_cpu0 = proc_cpu_s(sim.child.id());
        let cpu0 = self_cpu_s();
        let t0 = Instant::now();
        let mut s = spec(&sim.url, Loads::Concurrency(vec![64]), LoadMode::Steady { requests: 1280 }, 256, 120);
        s.metrics = metrics;
        let levels = sweep(s).await;
        let wall_s = t0.elapsed().as_secs_f64();
        let client_s = self_cpu_s() - cpu0;
        let sim_s = proc_cpu_s(sim.child.id()) - sim_cpu0;
        let toks = levels.iter().map(tokens).sum::<f64>();
        let failed: i64 = levels.iter().filter_map(|l| l.point.requests_failed).sum();
        if failed > 0 {
            fail(&format!("{failed} requests failed"));
        }
        let scrapes: u64 = levels.iter().filter_map(|l| l.telemetry.as_ref()).map(|t| t.scrapes_ok).sum();
        println!(
            "| {label} | {:.2} | {:.2} | {:.2}× | {:.0} | {scrapes} |",
            client_s / toks * 1e6,
            sim_s / toks * 1e6,
            client_s / sim_s,
            toks / wall_s
        );
    }
    if std::env::var("PLATEAU_BENCH_ONLY").is_ok_and(|v| v == "cpu") {
        return;
    }

    // 2. Concurrent streams: waves of C, each stream open ≈ 40 × 100 ms.
    println!();
    println!("| streams (one wave) | ok | failed | most in flight at once | wave time | peak RSS (VmHWM) |");
    println!("|---:|---:|---:|---:|---:|---:|");
    let sim = start_sim(&["--max-batch", "20000", "--decode-ms", "100", "--max-in-flight", "100000"]);
    for c in [1000usize, 2500, 5000, 10_000].into_iter().filter(|c| *c <= max_streams) {
        let t0 = Instant::now();
        let c32 = u32::try_from(c).unwrap_or(u32::MAX);
        let levels = sweep(spec(&sim.url, Loads::Concurrency(vec![c32]), LoadMode::Wave, 40, 120)).await;
        let wall_s = t0.elapsed().as_secs_f64();
        let Some(l) = levels.first() else { fail("no level") };
        let errors = &l.raw["errors"];
        println!(
            "| {c} | {} | {}{} | {} | {wall_s:.1} s | {:.0} MB |",
            l.point.requests_ok.unwrap_or(0),
            l.point.requests_failed.unwrap_or(0),
            if errors.as_object().is_some_and(|e| !e.is_empty()) { format!(" {errors}") } else { String::new() },
            max_overlap(l),
            peak_rss_mb()
        );
        // Let TIME_WAIT sockets of the wave settle before the next.
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    drop(sim);

    // 3. TTFT error against the simulator's own timestamps.
    println!();
    println!("| load | TTFT p50 (client) | client − simulator: mean | p50 | p99 | max | mean error ÷ TTFT |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    let sim = start_sim(&["--max-batch", "64", "--decode-ms", "10"]);
    for c in [1u32, 16, 64] {
        let requests = 50.max(4 * c as usize);
        let levels = sweep(spec(&sim.url, Loads::Concurrency(vec![c]), LoadMode::Steady { requests }, 16, 60)).await;
        let Some(l) = levels.first() else { fail("no level") };
        let e = &l.raw["ttft_minus_server_ttft_ms"];
        let ttft = l.point.get(Metric::Ttft, Stat::P50).unwrap_or(f64::NAN);
        let mean = e["mean"].as_f64().unwrap_or(f64::NAN);
        println!(
            "| C={c} | {ttft:.2} ms | {mean:.3} ms | {:.3} ms | {:.3} ms | {:.3} ms | {:.2} % |",
            e["p50"].as_f64().unwrap_or(f64::NAN),
            e["p99"].as_f64().unwrap_or(f64::NAN),
            e["max"].as_f64().unwrap_or(f64::NAN),
            mean / ttft * 100.0
        );
    }
}
