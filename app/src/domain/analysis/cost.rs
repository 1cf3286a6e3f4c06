//! What a run costs and what its energy buys: the prices a person gave ([`GpuPrice`] per
//! GPU type, [`RunPrice`] for one run's whole deployment), the check every price passes
//! ([`parse_usd_per_hour`]), which price applies to a run ([`price_for`]), and per level
//! the dollars per million output and total tokens, output tokens per GPU-second and the
//! energy per token ([`RunCost`], [`LevelCost`]).
//!
//! Plateau ships no prices: a run without one says "no price set"; a GPU price without
//! the run's GPU count says "GPU count unknown" — never a guess. Every figure assumes the
//! level's measured throughput at 100 % duty (the deployment does nothing but serve that
//! load, idle time excluded); [`ASSUMPTION`] says so wherever a figure is shown.
//!
//! Pure, no IO, compiles to wasm.

use super::why::LevelSignals;
use crate::domain::model::level::LevelKey;
use crate::domain::model::metrics::{Metric, Stat};
use crate::domain::{Point, Run};
use serde::{Deserialize, Serialize};

/// The highest price accepted, $ per hour (a GPU-hour, or one deployment-hour). A rack of
/// the largest GPUs rents for a few thousand dollars an hour; a million is a typo, and a
/// bound keeps every product of price × tokens finite.
pub const MAX_USD_PER_HOUR: f64 = 1_000_000.0;

/// Prices are kept to this many decimal places of a dollar (a hundredth of a cent).
pub const PRICE_DECIMALS: i32 = 4;

/// Longest GPU type a price is set for, in characters (the run facts' own bound).
pub const MAX_GPU_TYPE_CHARS: usize = crate::domain::model::text::MAX_FACT_CHARS;

/// Most GPU types with a price.
pub const MAX_GPU_PRICES: usize = 200;

/// What every cost figure assumes, said beside it.
pub const ASSUMPTION: &str = "at the level's measured throughput, 100 % duty: the deployment serves only this load \
                              and idle time is excluded";

/// What the energy figures assume.
pub const ENERGY_ASSUMPTION: &str =
    "GPU power only (mean over the level's scrapes, all GPUs added up); host, network and cooling excluded";

/// The price of one GPU-hour of a GPU type, as a person set it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GpuPrice {
    /// The GPU type as written when the price was set (matched case- and space-insensitively:
    /// [`gpu_key`]).
    pub gpu_type: String,
    pub usd_per_gpu_hour: f64,
    pub set_by: String,
    /// RFC 3339.
    pub set_at: String,
}

/// One change to a GPU type's price: set, changed or removed (`usd_per_gpu_hour` `None`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PriceChange {
    pub gpu_type: String,
    pub usd_per_gpu_hour: Option<f64>,
    pub set_by: String,
    pub set_at: String,
}

/// The price of one run's whole deployment per hour, as a person set it (wins over the GPU
/// type's price: it is what this deployment cost).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunPrice {
    pub usd_per_hour: f64,
    pub set_by: String,
    pub set_at: String,
}

/// What the prices page shows: the current prices, their history, and the GPU types the
/// stored runs name (with how many runs), so a type without a price is easy to see.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PricesPage {
    pub prices: Vec<GpuPrice>,
    pub history: Vec<PriceChange>,
    /// `(GPU type as the runs write it, runs)`, by type.
    pub gpu_types: Vec<(String, i64)>,
}

impl PricesPage {
    /// The price that applies to runs of `gpu_type`.
    pub fn price_of(&self, gpu_type: &str) -> Option<&GpuPrice> {
        let key = gpu_key(gpu_type);
        self.prices.iter().find(|p| gpu_key(&p.gpu_type) == key)
    }
}

/// A price that was refused, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PriceError {
    /// The request field at fault.
    pub field: &'static str,
    pub problem: String,
}

impl std::fmt::Display for PriceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.problem)
    }
}

impl std::error::Error for PriceError {}

/// Reads a price in dollars per hour from what a person typed: a plain decimal number
/// (`2.50`, `$2.50` and `2,50` are not guessed at), greater than 0, at most
/// [`MAX_USD_PER_HOUR`], at most [`PRICE_DECIMALS`] decimals. `field` names the field in
/// the error.
pub fn parse_usd_per_hour(field: &'static str, text: &str) -> Result<f64, PriceError> {
    let err = |problem: String| PriceError { field, problem };
    let t = text.trim();
    if t.is_empty() {
        return Err(err("give a price in dollars per hour, e.g. 2.50".into()));
    }
    let shown: String = t.chars().take(24).collect();
    let plain = t.bytes().all(|b| b.is_ascii_digit() || b == b'.') && t.bytes().filter(|b| *b == b'.').count() <= 1;
    if !plain || !t.bytes().any(|b| b.is_ascii_digit()) {
        return Err(err(format!("{shown:?} is not a price: write dollars per hour as a plain number, e.g. 2.50")));
    }
    if let Some((_, decimals)) = t.split_once('.') {
        if decimals.len() > PRICE_DECIMALS as usize {
            return Err(err(format!("{shown:?}: at most {PRICE_DECIMALS} decimals")));
        }
    }
    let v: f64 = t.parse().map_err(|_| err(format!("{shown:?} is not a number")))?;
    check_usd_per_hour(field, v)
}

/// The bounds of a price given as a number (the JSON API): finite, greater than 0, at most
/// [`MAX_USD_PER_HOUR`], at most [`PRICE_DECIMALS`] decimals — a price with more is refused,
/// never rounded (`0.00005` stored as `0.0001` would be twice the price).
pub fn check_usd_per_hour(field: &'static str, v: f64) -> Result<f64, PriceError> {
    let err = |problem: String| PriceError { field, problem };
    if !v.is_finite() {
        return Err(err("must be a finite number".into()));
    }
    if v <= 0.0 {
        return Err(err(format!("must be greater than 0 (got {v}); remove the price instead")));
    }
    if v > MAX_USD_PER_HOUR {
        return Err(err(format!("at most {MAX_USD_PER_HOUR} dollars per hour")));
    }
    let scale = 10f64.powi(PRICE_DECIMALS);
    let kept = (v * scale).round() / scale;
    // The binary float of a 4-decimal price is within an ulp or two of its rounding.
    if (kept - v).abs() > v * 1e-12 {
        return Err(err(format!("at most {PRICE_DECIMALS} decimals (got {v})")));
    }
    Ok(kept)
}

/// The GPU type a price is set for: trimmed, not empty, at most [`MAX_GPU_TYPE_CHARS`], no
/// control characters.
pub fn check_gpu_type(text: &str) -> Result<String, PriceError> {
    let t = text.trim();
    let err = |problem: &str| PriceError { field: "gpu_type", problem: problem.to_owned() };
    if t.is_empty() {
        return Err(err("name the GPU type, as the runs' facts write it (e.g. H100 80GB HBM3)"));
    }
    if t.chars().count() > MAX_GPU_TYPE_CHARS {
        return Err(PriceError { field: "gpu_type", problem: format!("at most {MAX_GPU_TYPE_CHARS} characters") });
    }
    if t.chars().any(|c| c.is_control() || crate::domain::model::text::is_bidi_control(c)) {
        return Err(err("no control characters"));
    }
    // A type that looks like "H100" but is not would match no run's GPU.
    if t.chars().any(crate::domain::model::text::is_invisible) {
        return Err(err("no invisible characters (zero-width spaces, joiners, byte-order marks)"));
    }
    Ok(t.to_owned())
}

/// How GPU types are matched: case-insensitive, runs of spaces as one (`H100  80GB` is
/// `h100 80gb`). A vendor prefix is not dropped: "NVIDIA H100" and "H100" are two types
/// unless a person prices both.
pub fn gpu_key(gpu_type: &str) -> String {
    gpu_type.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

/// The price that applies to a run and what it rests on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "basis", rename_all = "snake_case")]
pub enum PriceBasis {
    /// The run's own deployment price.
    Deployment { price: RunPrice },
    /// The GPU type's price × the run's GPU count.
    PerGpu { price: GpuPrice, gpu_count: i64 },
}

impl PriceBasis {
    /// The whole deployment's dollars per hour.
    pub fn usd_per_hour(&self) -> f64 {
        match self {
            PriceBasis::Deployment { price } => price.usd_per_hour,
            PriceBasis::PerGpu { price, gpu_count } => price.usd_per_gpu_hour * *gpu_count as f64,
        }
    }

    /// "$2.50 per GPU-hour × 8 GPUs (H200, set by ana on 2026-12-01)".
    pub fn describe(&self) -> String {
        match self {
            PriceBasis::Deployment { price } => format!(
                "{} per hour for the deployment (set by {} on {})",
                usd(price.usd_per_hour),
                price.set_by,
                day(&price.set_at)
            ),
            PriceBasis::PerGpu { price, gpu_count } => format!(
                "{} per GPU-hour × {gpu_count} GPU{} ({}, set by {} on {})",
                usd(price.usd_per_gpu_hour),
                if *gpu_count == 1 { "" } else { "s" },
                price.gpu_type,
                price.set_by,
                day(&price.set_at)
            ),
        }
    }
}

/// Why a run has no cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoCost {
    /// Neither the run nor its GPU type has a price.
    NoPrice,
    /// The GPU type has a price but the run's GPU count is unknown.
    GpuCountUnknown,
}

impl NoCost {
    pub fn text(self) -> &'static str {
        match self {
            NoCost::NoPrice => "no price set",
            NoCost::GpuCountUnknown => "GPU count unknown",
        }
    }
}

/// Which price applies to `run`: its own deployment price, else its GPU type's (matched by
/// [`gpu_key`]) times its GPU count.
pub fn price_for(run: &Run, run_price: Option<&RunPrice>, prices: &[GpuPrice]) -> Result<PriceBasis, NoCost> {
    if let Some(p) = run_price {
        return Ok(PriceBasis::Deployment { price: p.clone() });
    }
    let key = run.facts.gpu_type.as_deref().map(gpu_key).ok_or(NoCost::NoPrice)?;
    let price = prices.iter().find(|p| gpu_key(&p.gpu_type) == key).ok_or(NoCost::NoPrice)?;
    match run.facts.gpu_count.filter(|n| *n > 0) {
        Some(n) => Ok(PriceBasis::PerGpu { price: price.clone(), gpu_count: n }),
        None => Err(NoCost::GpuCountUnknown),
    }
}

/// One level's cost and energy figures; each `None` when an input is unknown.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LevelCost {
    pub level: Option<LevelKey>,
    /// Output tokens per second the level measured.
    pub output_tok_s: Option<f64>,
    /// Input + output tokens per second (as the file stated, else input tokens per request ×
    /// requests per second + output tok/s).
    pub total_tok_s: Option<f64>,
    /// Dollars per million output tokens: $/h ÷ 3600 ÷ output tok/s × 10⁶.
    pub usd_per_m_output: Option<f64>,
    /// Dollars per million tokens in and out: $/h ÷ 3600 ÷ total tok/s × 10⁶.
    pub usd_per_m_total: Option<f64>,
    /// Output tokens per GPU-second: output tok/s ÷ GPUs.
    pub output_tok_s_per_gpu: Option<f64>,
    /// GPU energy per output token, J (mean GPU power ÷ output tok/s).
    pub joules_per_output_token: Option<f64>,
    /// Output tokens per watt (= per joule).
    pub output_tokens_per_watt: Option<f64>,
}

/// A run's cost: what the price rests on (or why there is none) and each level's figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunCost {
    /// Written as the price basis (`{"basis": "per_gpu", …}`) or `{"missing": "no_price"}`.
    #[serde(with = "basis_serde")]
    pub basis: Result<PriceBasis, NoCost>,
    /// The run's GPU count as its facts give it.
    pub gpu_count: Option<i64>,
    /// In the run's level order.
    pub levels: Vec<LevelCost>,
}

impl RunCost {
    /// The deployment's dollars per hour, when a price applies.
    pub fn usd_per_hour(&self) -> Option<f64> {
        self.basis.as_ref().ok().map(PriceBasis::usd_per_hour)
    }

    /// The figures at `key`.
    pub fn at(&self, key: &LevelKey) -> Option<&LevelCost> {
        self.levels.iter().find(|l| l.level.is_some_and(|k| k.same_as(key)))
    }

    /// The level of the highest output throughput (the plateau's best), with its figures.
    pub fn at_peak(&self) -> Option<&LevelCost> {
        self.levels
            .iter()
            .filter(|l| l.output_tok_s.is_some())
            .max_by(|a, b| a.output_tok_s.unwrap_or(0.0).total_cmp(&b.output_tok_s.unwrap_or(0.0)))
    }

    /// What to show where a cost would be: the reason there is none.
    pub fn missing(&self) -> Option<&'static str> {
        self.basis.as_ref().err().map(|e| e.text())
    }

    /// Whether any level has an energy figure (GPU telemetry was there).
    pub fn has_energy(&self) -> bool {
        self.levels.iter().any(|l| l.joules_per_output_token.is_some())
    }
}

/// `Result<PriceBasis, NoCost>` as plain JSON: the basis itself, or `{"missing": …}`.
mod basis_serde {
    use super::{NoCost, PriceBasis};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    #[serde(untagged)]
    enum Repr {
        Price(PriceBasis),
        Missing { missing: NoCost },
    }

    pub fn serialize<S: Serializer>(v: &Result<PriceBasis, NoCost>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Ok(p) => Repr::Price(p.clone()).serialize(s),
            Err(e) => Repr::Missing { missing: *e }.serialize(s),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Result<PriceBasis, NoCost>, D::Error> {
        Ok(match Repr::deserialize(d)? {
            Repr::Price(p) => Ok(p),
            Repr::Missing { missing } => Err(missing),
        })
    }
}

/// Input + output tokens per second of a level: the file's total throughput, else input
/// tokens per request × completed requests per second + output tok/s; `None` when neither
/// is known.
pub fn total_tok_s(p: &Point) -> Option<f64> {
    let pos = |v: Option<f64>| v.filter(|x| x.is_finite() && *x > 0.0);
    pos(p.get(Metric::TotalThroughput, Stat::Mean)).or_else(|| {
        let out = pos(p.output_tok_s())?;
        let input = pos(p.get(Metric::InputTokens, Stat::Mean))?;
        let rps = pos(p.get(Metric::RequestThroughput, Stat::Mean))?;
        Some(out + input * rps)
    })
}

/// $/h for `tok_s` tokens per second → dollars per million tokens.
pub fn usd_per_million(usd_per_hour: f64, tok_s: f64) -> Option<f64> {
    (tok_s > 0.0 && usd_per_hour.is_finite()).then(|| usd_per_hour / 3600.0 / tok_s * 1e6)
}

/// Each level's cost and energy. `signals` are the run's levels with their GPU telemetry
/// (`why_signals::run_signals`), matched by level; `basis` the price ([`price_for`]).
pub fn run_cost(run: &Run, basis: Result<PriceBasis, NoCost>, signals: &[LevelSignals]) -> RunCost {
    let usd_h = basis.as_ref().ok().map(PriceBasis::usd_per_hour);
    let gpus = run.facts.gpu_count.filter(|n| *n > 0);
    let levels = run
        .points
        .iter()
        .map(|p| {
            let key = LevelKey { load_kind: p.load_kind, load_value: p.load_value };
            let out = p.output_tok_s().filter(|v| v.is_finite() && *v > 0.0);
            let total = total_tok_s(p);
            let sig = signals.iter().find(|s| s.key().same_as(&key));
            let joules = match (sig.and_then(|s| s.gpu_power_mean_w), out) {
                (Some(w), Some(t)) if w > 0.0 => Some(w / t),
                _ => None,
            };
            LevelCost {
                level: Some(key),
                output_tok_s: out,
                total_tok_s: total,
                usd_per_m_output: usd_h.zip(out).and_then(|(h, t)| usd_per_million(h, t)),
                usd_per_m_total: usd_h.zip(total).and_then(|(h, t)| usd_per_million(h, t)),
                output_tok_s_per_gpu: out.zip(gpus).map(|(t, n)| t / n as f64),
                joules_per_output_token: joules,
                output_tokens_per_watt: joules.map(|j| 1.0 / j),
            }
        })
        .collect();
    RunCost { basis, gpu_count: run.facts.gpu_count, levels }
}

/// Each run's cost, indexed like `runs`: `stored` (indexed likewise, or empty) gives the GPU
/// telemetry, `run_prices` each run's own price (indexed likewise, or empty), `prices` the
/// GPU types' prices.
pub fn run_costs(
    runs: &[Run],
    stored: &[super::why_signals::StoredSignals],
    run_prices: &[Option<RunPrice>],
    prices: &[GpuPrice],
) -> Vec<RunCost> {
    runs.iter()
        .enumerate()
        .map(|(i, run)| {
            let signals = super::why_signals::run_signals(run, stored.get(i));
            let own = run_prices.get(i).and_then(Option::as_ref);
            run_cost(run, price_for(run, own, prices), &signals.levels)
        })
        .collect()
}

/// One level of a run's cost, formatted on the server for the page (units in the headings;
/// "—" for unknown).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CostRow {
    pub load_value: f64,
    /// Load, output tok/s, $/M output, $/M total, output tok/s per GPU, J per output token,
    /// output tokens per watt.
    pub cells: [String; 7],
}

/// What the run page's "Cost and energy" section shows, formatted on the server (so the
/// browser bundle carries no cost arithmetic).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CostView {
    /// "$2.50 per GPU-hour × 8 GPUs (H200, set by ana on 2026-12-01) = $20.00 per hour".
    pub basis: Option<String>,
    /// Why there is no cost ([`NoCost::text`]) and what to do about it.
    pub missing: Option<(String, String)>,
    /// The run's own deployment price applies (it can be removed there).
    pub own_price: bool,
    pub rows: Vec<CostRow>,
    /// Some level has an energy figure.
    pub energy: bool,
}

impl CostView {
    /// The $ per million output tokens at load `load`, when a price applies and the level
    /// has a throughput: the figure the run page's capacity answer and its cost section
    /// both give.
    pub fn usd_per_mtok_at(&self, load: f64) -> Option<&str> {
        if self.missing.is_some() {
            return None;
        }
        let r = self.rows.iter().find(|r| r.load_value == load)?;
        Some(r.cells[2].as_str()).filter(|c| *c != crate::domain::model::format::UNKNOWN)
    }
}

/// One run on the compare page's cost table, formatted: run, price, peak at, $/M output,
/// $/M total, change against the baseline, J per output token.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompareCostRow {
    pub cells: [String; 7],
    pub priced: bool,
    /// With an SLO in the view: "$6.76 at C=48", the cost at the run's capacity (or why
    /// there is none).
    pub at_capacity: Option<String>,
}

/// "$6.76 at C=48": the cost per million output tokens at `key`, or why there is none.
pub fn cost_at(cost: &RunCost, key: Option<LevelKey>) -> String {
    if let Some(m) = cost.missing() {
        return m.to_owned();
    }
    let Some(key) = key else { return "no level meets the SLO".to_owned() };
    match cost.at(&key).and_then(|l| l.usd_per_m_output) {
        Some(v) => format!("{} at {}", usd(v), key.label()),
        None => format!("unknown at {} (no throughput)", key.label()),
    }
}

fn money(v: Option<f64>) -> String {
    v.map_or_else(|| crate::domain::model::format::UNKNOWN.to_owned(), usd)
}

impl RunCost {
    /// The run page's section, formatted.
    pub fn view(&self) -> CostView {
        let (basis, missing) = match &self.basis {
            Ok(b) => (Some(format!("{} = {} per hour", b.describe(), usd(b.usd_per_hour()))), None),
            Err(e) => {
                let what = match e {
                    NoCost::NoPrice => {
                        "Plateau ships no prices: set the price of this run's GPU type, or of this run's whole \
                         deployment below."
                    }
                    NoCost::GpuCountUnknown => {
                        "A GPU type's price needs the run's GPU count; give the count in the run's facts, or \
                         price the deployment below."
                    }
                };
                (None, Some((e.text().to_owned(), what.to_owned())))
            }
        };
        let num = crate::domain::model::format::num;
        let rows = self
            .levels
            .iter()
            .map(|l| CostRow {
                load_value: l.level.map_or(0.0, |k| k.load_value),
                cells: [
                    l.level.map(|k| crate::domain::model::format::load(k.load_value)).unwrap_or_default(),
                    num(l.output_tok_s, 1),
                    money(l.usd_per_m_output),
                    money(l.usd_per_m_total),
                    num(l.output_tok_s_per_gpu, 1),
                    num(l.joules_per_output_token, 3),
                    num(l.output_tokens_per_watt, 2),
                ],
            })
            .collect();
        CostView {
            basis,
            missing,
            own_price: matches!(self.basis, Ok(PriceBasis::Deployment { .. })),
            rows,
            energy: self.has_energy(),
        }
    }
}

/// The compare page's cost rows: each run at its peak, the change of its $/M output tokens
/// against the baseline's. `names` and `costs` are indexed like the runs.
pub fn compare_rows(
    names: &[String],
    costs: &[RunCost],
    baseline: usize,
    capacities: Option<&[Option<LevelKey>]>,
) -> Vec<CompareCostRow> {
    let unknown = || crate::domain::model::format::UNKNOWN.to_owned();
    let base = costs.get(baseline).and_then(RunCost::at_peak).and_then(|l| l.usd_per_m_output);
    names
        .iter()
        .zip(costs)
        .enumerate()
        .map(|(i, (name, c))| {
            let peak = c.at_peak();
            let per_m = peak.and_then(|l| l.usd_per_m_output);
            let change = match (i == baseline, per_m, base) {
                (true, _, _) => "baseline".to_owned(),
                (false, Some(v), Some(b)) if b > 0.0 => {
                    let pct = (v / b - 1.0) * 100.0;
                    format!("{}{:.1} %", if pct >= 0.0 { "+" } else { "−" }, pct.abs())
                }
                _ => unknown(),
            };
            let price = match &c.basis {
                Ok(b) => b.describe(),
                Err(e) => e.text().to_owned(),
            };
            CompareCostRow {
                cells: [
                    name.clone(),
                    price,
                    peak.and_then(|l| l.level).map_or_else(unknown, |k| k.label()),
                    money(per_m),
                    money(peak.and_then(|l| l.usd_per_m_total)),
                    change,
                    crate::domain::model::format::num(peak.and_then(|l| l.joules_per_output_token), 3),
                ],
                priced: c.basis.is_ok(),
                at_capacity: capacities.map(|caps| cost_at(c, caps.get(i).copied().flatten())),
            }
        })
        .collect()
}

/// "$2.50", "$0.4132", "$1,234.50": dollars with cents, four decimals under a dollar.
pub fn usd(v: f64) -> String {
    if !v.is_finite() {
        return "—".into();
    }
    if v.abs() < 1.0 && v != 0.0 {
        return format!("${}", trim_zeros(&format!("{v:.4}"), 2));
    }
    let cents = format!("{v:.2}");
    let (int, frac) = cents.split_once('.').unwrap_or((&cents, "00"));
    let digits: Vec<char> = int.trim_start_matches('-').chars().collect();
    let mut grouped = String::new();
    for (i, c) in digits.iter().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(*c);
    }
    let sign = if v < 0.0 { "-" } else { "" };
    format!("{sign}${grouped}.{frac}")
}

/// Drops trailing zeros past `keep` decimals: "0.4100" → "0.41".
fn trim_zeros(s: &str, keep: usize) -> String {
    let Some((int, frac)) = s.split_once('.') else { return s.to_owned() };
    let mut frac = frac.trim_end_matches('0').to_owned();
    while frac.len() < keep {
        frac.push('0');
    }
    format!("{int}.{frac}")
}

/// The date part of an RFC 3339 time.
fn day(at: &str) -> &str {
    at.get(..10).unwrap_or(at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::analysis::compare::tests::{level, run};
    use crate::domain::{LoadKind, RunFacts};

    fn facts(gpu: Option<&str>, count: Option<i64>) -> RunFacts {
        RunFacts { gpu_type: gpu.map(str::to_owned), gpu_count: count, ..RunFacts::default() }
    }

    fn price(gpu: &str, usd: f64) -> GpuPrice {
        GpuPrice {
            gpu_type: gpu.into(),
            usd_per_gpu_hour: usd,
            set_by: "ana".into(),
            set_at: "2026-12-01T09:00:00Z".into(),
        }
    }

    fn key(c: f64) -> LevelKey {
        LevelKey { load_kind: LoadKind::Concurrency, load_value: c }
    }

    #[test]
    fn prices_are_plain_positive_bounded_numbers() {
        assert_eq!(parse_usd_per_hour("usd_per_gpu_hour", "2.50"), Ok(2.5));
        assert_eq!(parse_usd_per_hour("usd_per_gpu_hour", " 12 "), Ok(12.0));
        assert_eq!(parse_usd_per_hour("usd_per_gpu_hour", "0.0042"), Ok(0.0042));
        for bad in
            ["", "-1", "0", "0.0", "NaN", "inf", "1e308", "abc", "$2.50", "2,50", "1.2.3", ".", "0.00001", "1000001"]
        {
            let e = parse_usd_per_hour("usd_per_gpu_hour", bad).unwrap_err();
            assert_eq!(e.field, "usd_per_gpu_hour", "{bad:?}");
        }
        assert!(check_usd_per_hour("usd_per_hour", f64::NAN).is_err());
        assert!(check_usd_per_hour("usd_per_hour", 1e308).is_err());
        assert!(check_usd_per_hour("usd_per_hour", -0.5).is_err());
        assert_eq!(check_usd_per_hour("usd_per_hour", 2.1235), Ok(2.1235));
        assert_eq!(check_usd_per_hour("usd_per_hour", 0.0001), Ok(0.0001));
        for more in [2.123456, 5e-5, 0.00015] {
            let e = check_usd_per_hour("usd_per_hour", more).unwrap_err();
            assert!(e.problem.starts_with("at most 4 decimals"), "{more}: {e}");
        }
        for invisible in ["H100\u{200b}", "\u{feff}H100", "H1\u{200d}00", "H100\u{2060}"] {
            let e = check_gpu_type(invisible).unwrap_err();
            assert!(e.problem.starts_with("no invisible characters"), "{invisible:?}: {e}");
        }
        assert!(check_gpu_type("  ").is_err());
        assert!(check_gpu_type("H100\u{202e}").is_err());
        assert_eq!(check_gpu_type(" H200 ").as_deref(), Ok("H200"));
    }

    #[test]
    fn gpu_types_match_without_case_or_extra_spaces() {
        assert_eq!(gpu_key("  H100   80GB HBM3 "), "h100 80gb hbm3");
        let r = run("cost0000001", "r", facts(Some("h100 80gb  hbm3"), Some(8)), vec![]);
        let basis = price_for(&r, None, &[price("H100 80GB HBM3", 2.5)]).unwrap();
        assert_eq!(basis.usd_per_hour(), 20.0);
        let other = run("cost0000002", "r", facts(Some("NVIDIA H100 80GB HBM3"), Some(8)), vec![]);
        assert_eq!(price_for(&other, None, &[price("H100 80GB HBM3", 2.5)]), Err(NoCost::NoPrice));
    }

    #[test]
    fn cost_by_hand_computed_cases() {
        // 8 GPUs at $2.50 → $20/h. C=32: 2400 tok/s out → 20/3600/2400·1e6 = $2.3148 per M.
        let mut p = level(32.0, 2400.0, None);
        p.set(Metric::InputTokens, Stat::Mean, 1000.0);
        p.set(Metric::RequestThroughput, Stat::Mean, 3.0);
        let r = run("cost0000003", "r", facts(Some("H200"), Some(8)), vec![level(1.0, 100.0, None), p]);
        let basis = price_for(&r, None, &[price("H200", 2.5)]);
        let signals = vec![LevelSignals {
            load_kind: Some(LoadKind::Concurrency),
            load: 32.0,
            gpu_power_mean_w: Some(4800.0),
            ..LevelSignals::default()
        }];
        let c = run_cost(&r, basis, &signals);
        assert_eq!(c.usd_per_hour(), Some(20.0));
        let l = c.at(&key(32.0)).unwrap();
        let out = l.usd_per_m_output.unwrap();
        assert!((out - 20.0 / 3600.0 / 2400.0 * 1e6).abs() < 1e-9, "{out}");
        assert!((out - 2.314_814_814_8).abs() < 1e-6);
        // Total: 2400 + 1000 × 3 = 5400 tok/s → $1.0288 per M.
        assert_eq!(l.total_tok_s, Some(5400.0));
        assert!((l.usd_per_m_total.unwrap() - 20.0 / 3600.0 / 5400.0 * 1e6).abs() < 1e-9);
        assert_eq!(l.output_tok_s_per_gpu, Some(300.0));
        // 4800 W ÷ 2400 tok/s = 2 J per token, 0.5 tokens per watt.
        assert_eq!(l.joules_per_output_token, Some(2.0));
        assert_eq!(l.output_tokens_per_watt, Some(0.5));
        // C=1: no total (input unknown), no energy (no telemetry), the output cost known.
        let l1 = c.at(&key(1.0)).unwrap();
        assert_eq!((l1.total_tok_s, l1.usd_per_m_total, l1.joules_per_output_token), (None, None, None));
        assert!((l1.usd_per_m_output.unwrap() - 55.555_555_555).abs() < 1e-6);
        assert_eq!(c.at_peak().and_then(|l| l.level), Some(key(32.0)));
    }

    #[test]
    fn no_price_and_unknown_gpu_count_are_said_never_guessed() {
        let levels = vec![level(8.0, 800.0, None)];
        let no_type = run("cost0000004", "r", facts(None, Some(8)), levels.clone());
        let c = run_cost(&no_type, price_for(&no_type, None, &[price("H200", 2.5)]), &[]);
        assert_eq!(c.missing(), Some("no price set"));
        assert_eq!(c.levels[0].usd_per_m_output, None);
        assert_eq!(c.levels[0].output_tok_s_per_gpu, Some(100.0), "tokens per GPU-second need no price");
        let no_count = run("cost0000005", "r", facts(Some("H200"), None), levels.clone());
        let c = run_cost(&no_count, price_for(&no_count, None, &[price("H200", 2.5)]), &[]);
        assert_eq!(c.missing(), Some("GPU count unknown"));
        assert_eq!((c.levels[0].usd_per_m_output, c.levels[0].output_tok_s_per_gpu), (None, None));
        // The run's own deployment price needs no GPU count and wins over the type's.
        let own = RunPrice { usd_per_hour: 36.0, set_by: "bo".into(), set_at: "2026-12-02T10:00:00Z".into() };
        let c = run_cost(&no_count, price_for(&no_count, Some(&own), &[price("H200", 2.5)]), &[]);
        assert_eq!(c.usd_per_hour(), Some(36.0));
        assert!((c.levels[0].usd_per_m_output.unwrap() - 12.5).abs() < 1e-9, "36/3600/800·1e6");
        assert!(c.basis.as_ref().unwrap().describe().contains("set by bo on 2026-12-02"));
    }

    #[test]
    fn a_cost_round_trips_as_plain_json() {
        let r = run("cost0000006", "r", facts(Some("H200"), Some(2)), vec![level(4.0, 400.0, None)]);
        for basis in [price_for(&r, None, &[price("H200", 2.5)]), Err(NoCost::GpuCountUnknown)] {
            let c = run_cost(&r, basis, &[]);
            let v = serde_json::to_value(&c).unwrap();
            assert!(v["basis"]["basis"] == "per_gpu" || v["basis"]["missing"] == "gpu_count_unknown", "{v}");
            assert_eq!(serde_json::from_value::<RunCost>(v).unwrap(), c);
        }
    }

    #[test]
    fn dollars_read_as_money() {
        assert_eq!(usd(2.5), "$2.50");
        assert_eq!(usd(0.41321), "$0.4132");
        assert_eq!(usd(0.5), "$0.50");
        assert_eq!(usd(1234.5), "$1,234.50");
        assert_eq!(usd(f64::NAN), "—");
    }
}
