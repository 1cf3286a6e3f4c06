//! How fast and faithful the load generator is, against `plateau sim` started as a
//! separate process (so CPU time is attributed to the right side of the socket).
//! Run with `cargo bench -p server --bench loadgen`; it prints five tables:
//!
//! 0. Reading one streamed event: as a `serde_json::Value` tree (the reference) and typed
//!    (`loadgen::event`), ns per event and the ratio, in the same run.
//! 1. CPU: client CPU-seconds (getrusage of this process) per million streamed tokens at a
//!    steady C=64, next to the simulator's own CPU for the same tokens (/proc/PID/stat);
//!    a row of 4-turn conversations (the history resent each turn, replies kept), and its
//!    client CPU per token as a ratio to single-turn's.
//! 2. Streams: waves of 1,000 … 10,000 concurrent streams (RLIMIT_NOFILE soft limit raised
//!    to the hard limit), the most held open at once, failures, and peak RSS (VmHWM).
//! 3. TTFT: the client's TTFT minus the simulator's own (`timings.ttft_ms`, admission →
//!    first token), as an absolute error and as a share of the TTFT, at C = 1, 64, 256 and
//!    1024, with the connections each level opened on its clock (`PLATEAU_BENCH_ONLY=ttft`).
//! 4. Against NVIDIA AIPerf 0.13.0, the reference, in the same run and against the same
//!    simulator: at C = 64, 256 and 1024 (steady, N = 20 × C chat requests of 128 prompt
//!    and exactly 256 streamed output tokens), client CPU-seconds per million streamed
//!    tokens and peak memory of each, and the ratio AIPerf ÷ Plateau (Plateau sends the N
//!    requests of C=1024 as 4 back-to-back trials of 5,120: a level's cap). Runs alternate
//!    Plateau, AIPerf, Plateau … (`PLATEAU_BENCH_AIPERF_ROUNDS` each, default 3); the table
//!    shows the median (min–max) of the rounds. Plateau's CPU is getrusage of this process
//!    over its sweep, its memory its peak RSS (VmHWM, reset through /proc/self/clear_refs
//!    before each run). AIPerf runs as a child process (several processes: it forks
//!    workers and services); its CPU is the RUSAGE_CHILDREN delta over the run, after
//!    waiting on it (every process it starts is waited for, so all of them count; the
//!    bench checks that against a /proc sampling of the tree and warns if any escaped),
//!    start-up included; its memory is the peak of the sum of RSS over its whole process
//!    tree, sampled from /proc every 50 ms (shared pages count once per process; so the
//!    table also shows the peak sum of PSS, where they are split between the processes
//!    sharing them, and the ratio of that to Plateau's RSS). Tokens
//!    are what each tool reports: both count the simulator's `usage` (Plateau always,
//!    AIPerf with `--use-server-token-count`), checked against N × 256. The table needs
//!    AIPerf and a tokenizer for it, installed by `.ci/aiperf` into
//!    `target/aiperf-venv` and `target/aiperf-tokenizer` (or `PLATEAU_BENCH_AIPERF`: an
//!    aiperf executable, `PLATEAU_BENCH_AIPERF_TOKENIZER`: a tokenizer folder); without
//!    them it prints how to install it and is skipped.
//!
//! Table 1 has a row per scrape setting of the server's metrics (off, every 500 ms — the
//! default — and every 100 ms): the scraper's cost is the difference in client CPU and in
//! throughput.
//!
//! `PLATEAU_BENCH_MAX_STREAMS` caps the ramp (default 10000); `PLATEAU_BENCH_ONLY=cpu` runs
//! table 1 alone, `PLATEAU_BENCH_ONLY=aiperf` table 4 alone; `PLATEAU_BENCH_AIPERF_MAX_C`
//! caps table 4's concurrency (default 1024).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test and bench code stops at the first failure"
)]

use app::domain::model::metrics::{Metric, Stat};
use app::domain::{NewLevel, NewRun, RunId, RunStatus};
use server::loadgen::{self, LoadMode, LoadgenError, Loads, PromptSpec, RunSink, SweepSpec, Target};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
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
        _note: &app::domain::model::annotations::AnnotationInput,
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

/// CPU seconds (user + system) that getrusage reports for `who`.
fn rusage_cpu_s(who: nix::sys::resource::UsageWho) -> f64 {
    match nix::sys::resource::getrusage(who) {
        Ok(u) => {
            let t = |tv: nix::sys::time::TimeVal| tv.tv_sec() as f64 + tv.tv_usec() as f64 / 1e6;
            t(u.user_time()) + t(u.system_time())
        }
        Err(_) => f64::NAN,
    }
}

/// CPU seconds (user + system) of this process.
fn self_cpu_s() -> f64 {
    rusage_cpu_s(nix::sys::resource::UsageWho::RUSAGE_SELF)
}

/// CPU seconds (user + system) of the waited-for children of this process and their
/// waited-for descendants.
fn children_cpu_s() -> f64 {
    rusage_cpu_s(nix::sys::resource::UsageWho::RUSAGE_CHILDREN)
}

/// One process, from /proc/PID/stat.
struct ProcStat {
    ppid: u32,
    /// Clock ticks after boot: with the pid, names the process (pids are reused).
    start: u64,
    /// User + system, all threads, in seconds.
    cpu_s: f64,
}

fn proc_stat(pid: u32) -> Option<ProcStat> {
    let ticks = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK).ok().flatten().unwrap_or(100) as f64;
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name (which is in parentheses and may hold spaces): ppid,
    // utime, stime and starttime are fields 4, 14, 15 and 22 of the whole line.
    let rest = stat.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let num = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok());
    Some(ProcStat { ppid: u32::try_from(num(1)?).ok()?, start: num(19)?, cpu_s: (num(11)? + num(12)?) as f64 / ticks })
}

/// CPU seconds (user + system, all threads) of another process, from /proc/PID/stat.
fn proc_cpu_s(pid: u32) -> f64 {
    proc_stat(pid).map_or(f64::NAN, |s| s.cpu_s)
}

/// Resets this process's peak resident set (VmHWM) to its current RSS.
fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
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
        repeat_order: app::domain::model::metrics::RepeatOrder::BackToBack,
        sessions: None,
        gpu_type: None,
        gpu_count: None,
        clock: Default::default(),
        engine: None,
        tags: Vec::new(),
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

/// What [`watch_tree`] saw of a process tree.
#[derive(Default)]
struct TreeWatch {
    /// Peak of the sum of RSS over the tree's processes, MB.
    peak_rss_mb: f64,
    /// Peak of the sum of PSS (/proc/PID/smaps_rollup: shared pages split between the
    /// processes sharing them), MB; NaN when the kernel has no smaps_rollup (Linux < 4.14).
    peak_pss_mb: f64,
    /// Every process seen in the tree: pid → (start time, the last CPU seconds read).
    seen: HashMap<u32, (u64, f64)>,
}

/// Samples the process tree under `root` from /proc every 50 ms until `stop`.
fn watch_tree(root: u32, stop: &AtomicBool) -> TreeWatch {
    let page = nix::unistd::sysconf(nix::unistd::SysconfVar::PAGE_SIZE).ok().flatten().unwrap_or(4096) as f64;
    let mut w = TreeWatch::default();
    if !Path::new("/proc/self/smaps_rollup").exists() {
        w.peak_pss_mb = f64::NAN;
    }
    while !stop.load(Ordering::Acquire) {
        let all: Vec<(u32, ProcStat)> = std::fs::read_dir("/proc")
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
            .filter_map(|pid| Some((pid, proc_stat(pid)?)))
            .collect();
        let mut tree = vec![root];
        let mut i = 0;
        while let Some(&parent) = tree.get(i) {
            tree.extend(all.iter().filter(|(_, s)| s.ppid == parent).map(|(pid, _)| *pid));
            i += 1;
        }
        let (mut rss, mut pss) = (0.0, 0.0);
        for pid in tree {
            let Some((_, st)) = all.iter().find(|(p, _)| *p == pid) else { continue };
            w.seen.insert(pid, (st.start, st.cpu_s));
            let pages = std::fs::read_to_string(format!("/proc/{pid}/statm"))
                .ok()
                .and_then(|m| m.split_whitespace().nth(1)?.parse::<f64>().ok());
            rss += pages.unwrap_or(0.0) * page;
            let pss_kb = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok().and_then(|m| {
                m.lines().find_map(|l| l.strip_prefix("Pss:"))?.trim().trim_end_matches("kB").trim().parse::<f64>().ok()
            });
            pss += pss_kb.unwrap_or(0.0) * 1024.0;
        }
        w.peak_rss_mb = w.peak_rss_mb.max(rss / 1_048_576.0);
        if !w.peak_pss_mb.is_nan() {
            w.peak_pss_mb = w.peak_pss_mb.max(pss / 1_048_576.0);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    w
}

/// One AIPerf run, as measured from outside and as AIPerf reports it.
struct AiperfRun {
    cpu_s: f64,
    peak_rss_mb: f64,
    peak_pss_mb: f64,
    /// Streamed output tokens, requests and errored requests AIPerf reports.
    tokens: f64,
    requests: f64,
    errors: f64,
    /// Its own measurement window (`benchmark_duration`), s.
    duration_s: f64,
}

/// AIPerf's command line for table 4: the same load as Plateau's side, no warm-up, no
/// server-metrics scraping, no GPU telemetry, no UI.
fn aiperf_args(tokenizer: &Path, url: &str, c: u32, requests: usize, artifacts: &Path) -> Vec<String> {
    let mut args: Vec<String> = [
        "profile",
        "--model",
        "plateau-sim",
        "--url",
        url,
        "--endpoint-type",
        "chat",
        "--streaming",
        "--concurrency",
        &c.to_string(),
        "--request-count",
        &requests.to_string(),
        "--synthetic-input-tokens-mean",
        "128",
        "--synthetic-input-tokens-stddev",
        "0",
        "--output-tokens-mean",
        "256",
        "--output-tokens-stddev",
        "0",
        "--extra-inputs",
        "ignore_eos:true",
        "--use-server-token-count",
        "--random-seed",
        "1",
        "--ui-type",
        "none",
        "--no-server-metrics",
        "--no-gpu-telemetry",
    ]
    .map(str::to_owned)
    .into();
    args.extend(["--tokenizer".into(), tokenizer.display().to_string()]);
    args.extend(["--artifact-dir".into(), artifacts.display().to_string()]);
    args
}

/// The last `n` lines of a file, for a failure message.
fn tail(path: &Path, n: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

fn run_aiperf(aiperf: &Path, tokenizer: &Path, url: &str, c: u32, requests: usize) -> Result<AiperfRun, String> {
    let dir = tempfile::tempdir().map_err(|e| format!("tempdir: {e}"))?;
    let artifacts = dir.path().join("artifacts");
    let (out_path, err_path) = (dir.path().join("stdout.log"), dir.path().join("stderr.log"));
    let out = std::fs::File::create(&out_path).map_err(|e| e.to_string())?;
    let err = std::fs::File::create(&err_path).map_err(|e| e.to_string())?;
    let cpu0 = children_cpu_s();
    let mut child = Command::new(aiperf)
        .args(aiperf_args(tokenizer, url, c, requests, &artifacts))
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", aiperf.display()))?;
    let stop = Arc::new(AtomicBool::new(false));
    let watcher = {
        let (stop, root) = (Arc::clone(&stop), child.id());
        std::thread::spawn(move || watch_tree(root, &stop))
    };
    let status = child.wait();
    stop.store(true, Ordering::Release);
    let watch = watcher.join().unwrap_or_default();
    // Every process AIPerf starts is waited for by its parent, so once AIPerf itself is
    // waited for, RUSAGE_CHILDREN holds the CPU of the whole tree. Checked: no process of
    // the tree may outlive it, and the total is at least what /proc showed of each.
    let cpu_s = children_cpu_s() - cpu0;
    let status = status.map_err(|e| format!("waiting for aiperf: {e}"))?;
    let escaped =
        watch.seen.iter().filter(|(pid, (start, _))| proc_stat(**pid).is_some_and(|s| s.start == *start)).count();
    let sampled: f64 = watch.seen.values().map(|(_, cpu)| cpu).sum();
    if escaped > 0 || cpu_s < sampled * 0.97 {
        eprintln!(
            "warning: AIPerf's CPU may be undercounted: {escaped} of its {} processes outlived it; \
             RUSAGE_CHILDREN {cpu_s:.1} s, /proc samples {sampled:.1} s",
            watch.seen.len()
        );
    }
    if !status.success() {
        let mut why = tail(&err_path, 15);
        if why.is_empty() {
            why = tail(&out_path, 15);
        }
        return Err(format!("aiperf {status}:\n{why}"));
    }
    let export = artifacts.join("profile_export_aiperf.json");
    let text = std::fs::read_to_string(&export).map_err(|e| format!("{}: {e}", export.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", export.display()))?;
    let avg = |key: &str| v[key]["avg"].as_f64().unwrap_or(0.0);
    Ok(AiperfRun {
        cpu_s,
        peak_rss_mb: watch.peak_rss_mb,
        peak_pss_mb: watch.peak_pss_mb,
        tokens: avg("total_output_tokens"),
        requests: avg("request_count"),
        errors: avg("error_request_count"),
        duration_s: avg("benchmark_duration"),
    })
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// "median (min–max)", or the one value of a single round.
fn spread(v: &[f64], decimals: usize) -> String {
    let (lo, hi) = v.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| (lo.min(*x), hi.max(*x)));
    if v.len() < 2 {
        return format!("{:.decimals$}", median(v));
    }
    format!("{:.decimals$} ({lo:.decimals$}–{hi:.decimals$})", median(v))
}

/// Table 4: Plateau next to AIPerf, alternating, against one simulator per C.
async fn aiperf_table() {
    println!();
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = manifest.parent().unwrap_or(manifest);
    let aiperf = std::env::var_os("PLATEAU_BENCH_AIPERF")
        .map_or_else(|| root.join("target/aiperf-venv/bin/aiperf"), PathBuf::from);
    let tokenizer = std::env::var_os("PLATEAU_BENCH_AIPERF_TOKENIZER")
        .map_or_else(|| root.join("target/aiperf-tokenizer"), PathBuf::from);
    let missing: Vec<String> = [(aiperf.is_file(), &aiperf), (tokenizer.is_dir(), &tokenizer)]
        .into_iter()
        .filter(|(there, _)| !there)
        .map(|(_, p)| p.display().to_string())
        .collect();
    if !missing.is_empty() {
        println!(
            "AIPerf comparison skipped: no {}; `.ci/aiperf` installs AIPerf 0.13.0 and its tokenizer in target/ \
             (PyPI, ~1.2 GB), or set PLATEAU_BENCH_AIPERF and PLATEAU_BENCH_AIPERF_TOKENIZER.",
            missing.join(" and no ")
        );
        return;
    }
    let env_num = |name: &str, default: usize| std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default);
    let rounds = env_num("PLATEAU_BENCH_AIPERF_ROUNDS", 3).max(1);
    let max_c = env_num("PLATEAU_BENCH_AIPERF_MAX_C", 1024);
    let hwm = if reset_peak_rss() { "VmHWM" } else { "VmHWM, not reset: clear_refs refused" };
    println!(
        "| steady, N = 20 × C chat requests × 256 tokens; median (min–max) of {rounds} | Plateau CPU-s per M tokens | \
         AIPerf CPU-s per M tokens | AIPerf ÷ Plateau | Plateau peak RSS ({hwm}) | AIPerf peak RSS (sum over its processes) | \
         AIPerf peak PSS (sum) | AIPerf ÷ Plateau, RSS / PSS | streamed tok/s, Plateau / AIPerf |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for c in [64u32, 256, 1024].into_iter().filter(|c| *c as usize <= max_c) {
        let n = 20 * c as usize;
        let want = n as f64 * 256.0;
        let sim = start_sim(&["--max-batch", &c.to_string(), "--decode-ms", "2"]);
        let (mut p_cpu, mut p_mem, mut p_rate) = (Vec::new(), Vec::new(), Vec::new());
        let (mut a_cpu, mut a_mem, mut a_pss, mut a_rate) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut aiperf_failed = false;
        for _ in 0..rounds {
            reset_peak_rss();
            let cpu0 = self_cpu_s();
            let t0 = Instant::now();
            // A level holds at most MAX_REQUESTS_PER_LEVEL requests: more are sent as trials
            // of one level, back to back (C=1024: 4 × 5,120).
            let trials =
                (1..=n).find(|t| n.is_multiple_of(*t) && n / t <= loadgen::bounds::MAX_REQUESTS_PER_LEVEL).unwrap_or(1);
            let steady = LoadMode::Steady { requests: n / trials };
            let mut s = spec(&sim.url, Loads::Concurrency(vec![c]), steady, 256, 600);
            s.repeat = u32::try_from(trials).unwrap_or(1);
            s.target.endpoint = app::domain::EndpointKind::Chat;
            s.prompt = PromptSpec::fixed(128, 1);
            let levels = sweep(s).await;
            let (wall_s, cpu_s) = (t0.elapsed().as_secs_f64(), self_cpu_s() - cpu0);
            let toks = levels.iter().map(tokens).sum::<f64>();
            let errors: i64 = levels.iter().filter_map(|l| l.point.requests_failed).sum();
            if errors > 0 {
                drop(sim);
                fail(&format!("Plateau: {errors} requests failed at C={c}"));
            }
            if (toks - want).abs() > 0.5 {
                eprintln!("note: Plateau counted {toks} tokens at C={c}, expected {want}");
            }
            p_cpu.push(cpu_s / toks * 1e6);
            p_mem.push(peak_rss_mb());
            p_rate.push(toks / wall_s);
            tokio::time::sleep(Duration::from_secs(1)).await;

            match run_aiperf(&aiperf, &tokenizer, &sim.url, c, n) {
                Ok(r) => {
                    if r.errors > 0.0 || (r.tokens - want).abs() > 0.5 {
                        eprintln!(
                            "note: AIPerf at C={c}: {} requests ok, {} failed, {} tokens (expected {n} requests, {want} tokens)",
                            r.requests, r.errors, r.tokens
                        );
                    }
                    a_cpu.push(r.cpu_s / r.tokens * 1e6);
                    a_mem.push(r.peak_rss_mb);
                    a_pss.push(r.peak_pss_mb);
                    a_rate.push(r.tokens / r.duration_s);
                }
                Err(e) => {
                    eprintln!("AIPerf failed at C={c}: {e}");
                    aiperf_failed = true;
                    break;
                }
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        drop(sim);
        let label = format!("C={c}, N={n}");
        if aiperf_failed && a_cpu.is_empty() {
            println!(
                "| {label} | {} | failed (see stderr) | — | {} MB | failed | — | — | {:.0} / — |",
                spread(&p_cpu, 2),
                spread(&p_mem, 0),
                median(&p_rate)
            );
            continue;
        }
        println!(
            "| {label}{} | {} | {} | {:.1}× | {} MB | {} MB | {:.0} MB | {:.1}× / {:.1}× | {:.0} / {:.0} |",
            if aiperf_failed {
                format!(" (AIPerf: {} of {rounds} rounds, then failed)", a_cpu.len())
            } else {
                String::new()
            },
            spread(&p_cpu, 2),
            spread(&a_cpu, 2),
            median(&a_cpu) / median(&p_cpu),
            spread(&p_mem, 0),
            spread(&a_mem, 0),
            median(&a_pss),
            median(&a_mem) / median(&p_mem),
            median(&a_pss) / median(&p_mem),
            median(&p_rate),
            median(&a_rate)
        );
    }
}

/// Reads per event in table 0.
const PARSE_ROUNDS: usize = 200_000;

/// 3. TTFT error against the simulator's own timestamps (goal: p99 under 2 ms
///    at C=64 and under 10 ms at C=1024 on this 2-core machine), with the connections the
///    levels opened on their clock and the slowest connect (a retried SYN takes 1 s).
async fn ttft_table() {
    println!();
    println!("| load | TTFT p50 (client) | client − simulator: mean | p50 | p99 | max | mean error ÷ TTFT | connections opened in the level | slowest connect |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    let sim = start_sim(&["--max-batch", "1024", "--decode-ms", "10"]);
    for c in [1u32, 64, 256, 1024] {
        let requests = 50.max(4 * c as usize);
        let levels = sweep(spec(&sim.url, Loads::Concurrency(vec![c]), LoadMode::Steady { requests }, 16, 60)).await;
        let Some(l) = levels.first() else { fail("no level") };
        let e = &l.raw["ttft_minus_server_ttft_ms"];
        let ttft = l.point.get(Metric::Ttft, Stat::P50).unwrap_or(f64::NAN);
        let mean = e["mean"].as_f64().unwrap_or(f64::NAN);
        let opened = l.raw["connections_opened"].as_u64().unwrap_or(0);
        let slowest = l.point.get(Metric::Connect, Stat::Max).map_or_else(|| "—".to_owned(), |m| format!("{m:.2} ms"));
        println!(
            "| C={c} | {ttft:.2} ms | {mean:.3} ms | {:.3} ms | {:.3} ms | {:.3} ms | {:.2} % | {opened} | {slowest} |",
            e["p50"].as_f64().unwrap_or(f64::NAN),
            e["p99"].as_f64().unwrap_or(f64::NAN),
            e["max"].as_f64().unwrap_or(f64::NAN),
            mean / ttft * 100.0
        );
    }
    drop(sim);
}

/// 0. The per-chunk reading alone: one event's JSON read for what the sweep times, as a
///    `serde_json::Value` tree (the reference, how the sweep read it before) and typed
///    (`loadgen::event::StreamEvent`, what it reads now), on the chunks servers send.
fn parse_table() {
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
        let tree = time(&|e| loadgen::event::parse_as_tree(e).unwrap().choice.is_some_and(|c| c.content.is_some()));
        let typed =
            time(&|e| loadgen::event::StreamEvent::parse(e).unwrap().choice.is_some_and(|c| c.content.is_some()));
        println!("| {label} | {tree:.0} | {typed:.0} | {:.2}× |", tree / typed);
    }
}

/// 1. CPU per million streamed tokens, client vs simulator; scraping the server's metrics
///    off and on; and multi-turn conversations.
async fn cpu_table() {
    println!();
    println!("| C=64 steady, 1,280 requests × 256 tokens | client CPU-s per M tokens | simulator CPU-s per M tokens | client ÷ simulator | streamed tok/s | scrapes |");
    println!("|---|---:|---:|---:|---:|---:|");
    // The multi-turn row: 64 users in 4-turn conversations (each turn resends the history,
    // the replies kept as streamed), server metrics off: against the first row, what the
    // history costs the client per token.
    let conversations = loadgen::session::SessionSpec {
        kind: loadgen::session::SessionKind::Conversation,
        turns: 4,
        user_tokens: 128,
        system_tokens: 0,
        tool_tokens: 0,
        context_cap_tokens: 0,
        think: app::domain::model::workload::Think::NONE,
        dataset: None,
    };
    let mut per_token: Vec<f64> = Vec::new();
    for (label, metrics, sessions) in [
        ("server metrics off", loadgen::MetricsSpec::off(), None),
        ("scraped every 500 ms (default)", loadgen::MetricsSpec::default(), None),
        (
            "scraped every 100 ms",
            loadgen::MetricsSpec { interval: Duration::from_millis(100), ..loadgen::MetricsSpec::default() },
            None,
        ),
        ("multi-turn, 4 turns per conversation, metrics off", loadgen::MetricsSpec::off(), Some(conversations)),
    ] {
        let sim = start_sim(&["--max-batch", "64", "--decode-ms", "2"]);
        let sim_cpu0 = proc_cpu_s(sim.child.id());
        let cpu0 = self_cpu_s();
        let t0 = Instant::now();
        let mut s = spec(&sim.url, Loads::Concurrency(vec![64]), LoadMode::Steady { requests: 1280 }, 256, 120);
        s.metrics = metrics;
        s.sessions = sessions;
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
        per_token.push(client_s / toks);
    }
    if let (Some(single), Some(multi)) = (per_token.first(), per_token.last()) {
        println!();
        println!("multi-turn ÷ single-turn client CPU per token (metrics off both): {:.2}×", multi / single);
    }
}

/// 2. Concurrent streams: waves of C, each stream open ≈ 40 × 100 ms.
async fn streams_table(max_streams: usize) {
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
}

#[tokio::main]
async fn main() {
    let (soft, hard) = raise_nofile();
    let max_streams: usize =
        std::env::var("PLATEAU_BENCH_MAX_STREAMS").ok().and_then(|v| v.parse().ok()).unwrap_or(10_000);
    println!(
        "load generator bench: {} cores, RLIMIT_NOFILE {soft}/{hard}",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    if std::env::var("PLATEAU_BENCH_ONLY").is_ok_and(|v| v == "aiperf") {
        aiperf_table().await;
        return;
    }
    if std::env::var("PLATEAU_BENCH_ONLY").is_ok_and(|v| v == "ttft") {
        ttft_table().await;
        return;
    }

    parse_table();
    cpu_table().await;
    if std::env::var("PLATEAU_BENCH_ONLY").is_ok_and(|v| v == "cpu") {
        return;
    }

    streams_table(max_streams).await;

    ttft_table().await;

    // 4. Against AIPerf, the reference: CPU per token and peak memory, alternating runs.
    aiperf_table().await;
}
