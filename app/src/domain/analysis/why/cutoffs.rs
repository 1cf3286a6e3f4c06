//! The cut-offs the rules judge by, each with the reason for its value.

/// A generator that sent at least this fraction of a level's requests late (late as the
/// load generator defines it: a lag over 10 % of the mean scheduled gap, 2–10 ms) did not
/// offer the load the level names. 5 %: a few late sends at timer granularity happen on
/// any machine; one in twenty shifts the arrival process the server sees.
pub const CLIENT_LATE_FRACTION: f64 = 0.05;

/// Client CPU busy at or above this fraction of its cores counts as saturated. 90 %: past
/// it, the generator's own scheduling delays sends and stretches measured TTFT and gaps.
pub const CLIENT_CPU_SATURATED: f64 = 0.90;

/// A send counts as late past this lag where only a tool's lag statistics are known (an
/// import): the load generator's own upper bound for "late" (`server::loadgen::stats`).
pub const LATE_SEND_MS: f64 = 10.0;

/// A rate level whose sends went out below this share of the requested rate did not offer
/// the load it names (said beside its late sends). 90 %: a Poisson schedule of a few
/// hundred requests already varies by a few percent.
pub const ACHIEVED_RATE_SHARE: f64 = 0.90;

/// KV-cache usage (0–1) at or above this is "near full". 90 %: vLLM pre-allocates blocks
/// and admits new requests only while blocks are free, so usage stays just below 100 %
/// when memory is the limit; 0.9 is clear of the 50–80 % a batch-limited engine shows.
pub const KV_NEAR_FULL: f64 = 0.90;

/// Running requests count as flat at their cap N when each capped level's maximum is
/// within this fraction of N. 5 %: a hard limit shows the same maximum at every level;
/// 5 % absorbs a scrape that missed the one sample at the cap (63 of 64).
pub const RUNNING_FLAT_FRACTION: f64 = 0.05;

/// The engine's slots count as full when running requests average at least this fraction
/// of their maximum. 90 %: a batch-limited engine refills a slot as soon as a request
/// ends; an engine whose slots are often free while requests wait is limited elsewhere
/// (prefill).
pub const SLOTS_FULL_FRACTION: f64 = 0.90;

/// Requests waiting on average at least this many at the plateau's last level count as a
/// queue. 1: below one waiting request on average the queue is the odd arrival between
/// two steps, not a backlog.
pub const MIN_QUEUE: f64 = 1.0;

/// TTFT counts as growing when the plateau's last level's is at least this factor of its
/// first level's. ×1.5: TTFT moves ±10–20 % between levels that do not queue; half again
/// is queueing.
pub const TTFT_GROWTH_FACTOR: f64 = 1.5;

/// Per-user decode speed "holds" while it stays within this fraction of the plateau's
/// first level's. 10 %: the noise of a mean TPOT between neighbouring levels is a few
/// percent; a batch that grew would slow decoding by far more.
pub const DECODE_HOLDS_FRACTION: f64 = 0.10;

/// Per-user decode speed "falls" when it drops by at least this fraction across the
/// plateau. 20 %: twice the band of [`DECODE_HOLDS_FRACTION`], so no level pair is both.
pub const DECODE_FALLS_FRACTION: f64 = 0.20;

/// Running requests "keep growing" when the plateau's last level runs at least this
/// factor of its first level's (mean). ×1.2: clear of the scrape's sampling noise and of
/// a cap reached with a few percent to spare.
pub const RUNNING_GROWS_FACTOR: f64 = 1.2;

/// Server-counted generated tokens may differ from the client's usage counts by this
/// fraction before the counts are called contradictory. 1 %: both count the same tokens
/// of the same requests; a scrape's edges (a request finishing just outside the level's
/// window) move the count by far less.
pub const TOKEN_MISMATCH_FRACTION: f64 = 0.01;

/// Two runs' running-request maxima at one level differ when they differ by more than
/// this fraction of the larger. 10 %: the same engine and limit give the same maximum.
pub const SERVER_DIFF_FRACTION: f64 = 0.10;

/// The GPUs count as busy when their utilisation under load averages at least this, %.
/// 90 %: DCGM's utilisation is the share of time a kernel ran; an engine whose GPUs compute
/// without pause reads 95–100 %, one that waits on its scheduler or the network far less.
pub const GPU_BUSY_PCT: f64 = 90.0;

/// SM activity (DCGM profiling, 0–1) at or above this confirms busy GPUs where it is known.
/// 0.8: utilisation counts a GPU busy while any kernel runs; SM activity says how much of
/// the chip that kernel used, and decode kernels of a full batch keep it above 80 %.
pub const GPU_SM_BUSY: f64 = 0.80;

/// The GPUs count as idle, for "not GPU-bound", when their utilisation stays below this at
/// every level of the plateau, %. 60 %: a third clear of [`GPU_BUSY_PCT`], so no level is both.
pub const GPU_IDLE_PCT: f64 = 60.0;
