//! How close a run comes to what its hardware can physically do: the accelerators Plateau
//! ships figures for ([`shipped`], every figure with its source), a person's own or
//! corrected GPUs ([`GpuSpec`] with who and when), the model facts a person gives
//! ([`ModelFacts`]: active parameters, bits per weight, KV bytes per token), and per
//! level the decode roofline ([`roofline`]): the most output tokens per second the GPUs'
//! memory bandwidth allows at that batch (the weights read once per step, plus each
//! sequence's KV cache) and the compute roof, with the measured throughput as a
//! percentage of the lower of the two.
//!
//! A roof is an upper bound, so every simplification here errs upwards (only the active
//! parameters are read per step, attention FLOPs are left out): the percentage is never
//! flattered. Every assumption is listed beside the figure ([`RunRoofline::assumptions`]);
//! a fact that is not known gives no percentage and says what to enter ([`RooflineGap`]).
//!
//! Pure, no IO, compiles to wasm.

use crate::domain::model::format::{significant, tok_s};
use crate::domain::model::level::load_label;
use crate::domain::model::metrics::{Metric, Stat};
use crate::domain::{LoadKind, Point, Run};
use serde::{Deserialize, Serialize};

/// Where a person enters GPUs and model facts.
pub const HARDWARE_PATH: &str = "/settings/hardware";

/// Most GPUs a team adds or overrides.
pub const MAX_GPU_SPECS: usize = 200;
/// Most models with facts.
pub const MAX_MODEL_FACTS: usize = 500;
/// Longest source text of a figure, in characters.
pub const MAX_SOURCE_CHARS: usize = 1_000;

/// One accelerator's figures. Dense tensor rates (no 2:4 sparsity); memory in GB and
/// bandwidth in TB/s as the vendor prints them (decimal).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GpuSpec {
    /// The name shown, also matched against a run's GPU type.
    pub name: String,
    /// Other ways run facts write this GPU (`H100 80GB HBM3`, `A100-SXM4-80GB`).
    #[serde(default)]
    pub aliases: Vec<String>,
    pub memory_gb: Option<f64>,
    pub memory_tb_s: f64,
    pub bf16_tflops: Option<f64>,
    pub fp8_tflops: Option<f64>,
    pub fp4_tflops: Option<f64>,
    pub power_w: Option<f64>,
    /// Where the figures come from: a datasheet's name and date, or who measured them.
    pub source: String,
    /// Who added or overrode it; `None` for the table Plateau ships.
    #[serde(default)]
    pub set_by: Option<String>,
    #[serde(default)]
    pub set_at: Option<String>,
}

/// A model's facts as a person gave them (or the demo, for the story's model).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelFacts {
    /// The model as the runs' facts name it (matched without regard to case or spaces).
    pub model: String,
    /// All parameters, in billions.
    pub total_params_b: Option<f64>,
    /// Parameters used per token (all of them for a dense model), in billions.
    pub active_params_b: Option<f64>,
    /// Bits stored per weight, block scales included (NVFP4: 4 + 8/16 = 4.5).
    pub bits_per_weight: Option<f64>,
    /// KV cache bytes per token of context: layers × KV heads × head dim × 2 (K and V) ×
    /// bytes per value (for latent attention, layers × latent width × bytes).
    pub kv_bytes_per_token: Option<f64>,
    /// Where the facts come from.
    pub source: String,
    pub set_by: String,
    pub set_at: String,
}

/// A value a person gave for a GPU or a model that was refused, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FactError {
    /// The request field at fault.
    pub field: &'static str,
    pub problem: String,
}

impl std::fmt::Display for FactError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.problem)
    }
}

impl std::error::Error for FactError {}

/// The largest value each figure may take: far above any accelerator or model of today,
/// small enough that every product stays finite.
const BOUNDS: &[(&str, f64)] = &[
    ("memory_gb", 100_000.0),
    ("memory_tb_s", 1_000.0),
    ("bf16_tflops", 1_000_000.0),
    ("fp8_tflops", 1_000_000.0),
    ("fp4_tflops", 1_000_000.0),
    ("power_w", 100_000.0),
    ("total_params_b", 1_000_000.0),
    ("active_params_b", 1_000_000.0),
    ("bits_per_weight", 64.0),
    ("kv_bytes_per_token", 1e9),
];

/// `v` checked for `field`: finite, greater than 0, at most the field's bound.
pub fn check_figure(field: &'static str, v: f64) -> Result<f64, FactError> {
    let max = BOUNDS.iter().find(|(f, _)| *f == field).map_or(1e9, |(_, m)| *m);
    let err = |problem: String| FactError { field, problem };
    if !v.is_finite() {
        return Err(err("must be a finite number".into()));
    }
    if v <= 0.0 {
        return Err(err(format!("must be greater than 0 (got {v}); leave it empty when unknown")));
    }
    if v > max {
        return Err(err(format!("at most {max}")));
    }
    Ok(v)
}

/// A figure from what a person typed: empty is unknown (`None`); otherwise a plain
/// decimal number ([`check_figure`]).
pub fn parse_figure(field: &'static str, text: &str) -> Result<Option<f64>, FactError> {
    let t = text.trim();
    if t.is_empty() {
        return Ok(None);
    }
    let plain = t.bytes().all(|b| b.is_ascii_digit() || b == b'.' || b == b'e' || b == b'E' || b == b'+' || b == b'-');
    let v: f64 = t.parse().ok().filter(|_| plain).ok_or_else(|| FactError {
        field,
        problem: format!("{:?} is not a number", t.chars().take(24).collect::<String>()),
    })?;
    check_figure(field, v).map(Some)
}

/// A name (GPU or model) or a source text: one line, no control or invisible characters.
pub fn check_text(field: &'static str, text: &str, max: usize, required: bool) -> Result<String, FactError> {
    let t = text.trim();
    if required && t.is_empty() {
        return Err(FactError { field, problem: "required".into() });
    }
    crate::domain::model::text::check_line(field, t, max)
        .map_err(|e| FactError { field, problem: e.problem.to_string() })?;
    if t.chars().any(crate::domain::model::text::is_invisible) {
        return Err(FactError { field, problem: "no invisible characters".into() });
    }
    Ok(t.to_owned())
}

/// A GPU as a person gives it, checked: a name, the memory bandwidth (required: the roof
/// rests on it), the rest optional, and a source.
pub fn check_gpu_spec(spec: GpuSpec) -> Result<GpuSpec, FactError> {
    let name = check_text("name", &spec.name, crate::domain::model::text::MAX_FACT_CHARS, true)?;
    let opt = |field: &'static str, v: Option<f64>| v.map(|v| check_figure(field, v)).transpose();
    let mut aliases = Vec::new();
    for a in spec.aliases.iter().take(16) {
        let a = check_text("aliases", a, crate::domain::model::text::MAX_FACT_CHARS, false)?;
        if !a.is_empty() {
            aliases.push(a);
        }
    }
    Ok(GpuSpec {
        name,
        aliases,
        memory_gb: opt("memory_gb", spec.memory_gb)?,
        memory_tb_s: check_figure("memory_tb_s", spec.memory_tb_s)?,
        bf16_tflops: opt("bf16_tflops", spec.bf16_tflops)?,
        fp8_tflops: opt("fp8_tflops", spec.fp8_tflops)?,
        fp4_tflops: opt("fp4_tflops", spec.fp4_tflops)?,
        power_w: opt("power_w", spec.power_w)?,
        source: check_text("source", &spec.source, MAX_SOURCE_CHARS, true)?,
        set_by: spec.set_by,
        set_at: spec.set_at,
    })
}

/// A model's facts as a person gives them, checked: at least one figure, active
/// parameters no more than the total.
pub fn check_model_facts(f: ModelFacts) -> Result<ModelFacts, FactError> {
    let model = check_text("model", &f.model, crate::domain::model::text::MAX_FACT_CHARS, true)?;
    let opt = |field: &'static str, v: Option<f64>| v.map(|v| check_figure(field, v)).transpose();
    let checked = ModelFacts {
        model,
        total_params_b: opt("total_params_b", f.total_params_b)?,
        active_params_b: opt("active_params_b", f.active_params_b)?,
        bits_per_weight: opt("bits_per_weight", f.bits_per_weight)?,
        kv_bytes_per_token: opt("kv_bytes_per_token", f.kv_bytes_per_token)?,
        source: check_text("source", &f.source, MAX_SOURCE_CHARS, false)?,
        set_by: f.set_by,
        set_at: f.set_at,
    };
    if let (Some(total), Some(active)) = (checked.total_params_b, checked.active_params_b) {
        if active > total {
            return Err(FactError {
                field: "active_params_b",
                problem: format!("{active} B active is more than the {total} B in total"),
            });
        }
    }
    if [checked.total_params_b, checked.active_params_b, checked.bits_per_weight, checked.kv_bytes_per_token]
        .iter()
        .all(Option::is_none)
    {
        return Err(FactError { field: "active_params_b", problem: "give at least one fact".into() });
    }
    Ok(checked)
}

/// The key a name is matched by: lower case, runs of spaces as one.
pub fn name_key(name: &str) -> String {
    crate::domain::analysis::cost::gpu_key(name)
}

/// What the hardware page shows: the GPU table in force (the team's entries first, then
/// the shipped ones), the models' facts, and the GPU types and models the stored runs name
/// (with how many runs), so what lacks figures stands out.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HardwarePage {
    pub gpus: Vec<GpuSpec>,
    pub models: Vec<ModelFacts>,
    /// The models the runs name, with how many runs each.
    pub run_models: Vec<(String, i64)>,
    /// The GPU types of the runs no entry matches ([`find_gpu`]), with how many runs each.
    pub unknown_gpu_types: Vec<(String, i64)>,
    /// The models of the runs without facts, with how many runs each.
    pub models_without_facts: Vec<(String, i64)>,
}

impl HardwarePage {
    /// The page from the table in force, the facts, and what the runs name.
    pub fn of(
        gpus: Vec<GpuSpec>,
        models: Vec<ModelFacts>,
        gpu_types: Vec<(String, i64)>,
        run_models: Vec<(String, i64)>,
    ) -> Self {
        let unknown_gpu_types = gpu_types.into_iter().filter(|(t, _)| find_gpu(t, &gpus).is_none()).collect();
        let models_without_facts =
            run_models.iter().filter(|(m, _)| find_model(m, &models).is_none()).cloned().collect();
        Self { gpus, models, run_models, unknown_gpu_types, models_without_facts }
    }
}

/// One row of the shipped table.
struct Shipped {
    name: &'static str,
    aliases: &'static [&'static str],
    memory_gb: f64,
    memory_tb_s: f64,
    bf16: f64,
    fp8: Option<f64>,
    fp4: Option<f64>,
    power_w: f64,
    source: &'static str,
}

/// Where a dense rate was halved from the printed sparse one.
const HALVED: &str = "dense BF16 and FP8 rates are half the printed sparse ones";

/// The accelerators Plateau ships, from their vendors' documents. Where documents disagree,
/// the source names the other figure (docs/beyond.md lists them all).
const SHIPPED: &[Shipped] = &[
    Shipped {
        name: "H100 SXM",
        aliases: &["H100", "H100 SXM5", "H100 80GB HBM3"],
        memory_gb: 80.0,
        memory_tb_s: 3.35,
        bf16: 989.5,
        fp8: Some(1_979.0),
        fp4: None,
        power_w: 700.0,
        source: "NVIDIA H100 Tensor Core GPU Datasheet (H100 SXM column, undated); nvidia.com/en-us/data-center/h100",
    },
    Shipped {
        name: "H100 PCIe",
        aliases: &["H100 PCIe 80GB"],
        memory_gb: 80.0,
        memory_tb_s: 2.0,
        bf16: 756.5,
        fp8: Some(1_513.0),
        fp4: None,
        power_w: 350.0,
        source: "NVIDIA H100 datasheet, 2022 edition (H100 PCIe column); H100 PCIe Product Brief PB-11133-001_v02, Nov 2022 (350 W). The Chinese datasheet R7 prints 800 / 1,600 dense",
    },
    Shipped {
        name: "H100 NVL",
        aliases: &["H100 NVL 94GB"],
        memory_gb: 94.0,
        memory_tb_s: 3.9,
        bf16: 835.5,
        fp8: Some(1_670.5),
        fp4: None,
        power_w: 400.0,
        source: "NVIDIA H100 Tensor Core GPU Datasheet (H100 NVL column, undated); 350–400 W configurable",
    },
    Shipped {
        name: "H200",
        aliases: &["H200 SXM", "H200 141GB", "H200 SXM 141GB"],
        memory_gb: 141.0,
        memory_tb_s: 4.8,
        bf16: 989.5,
        fp8: Some(1_979.0),
        fp4: None,
        power_w: 700.0,
        source: "NVIDIA H200 Tensor Core GPU Datasheet, 2024; nvidia.com/en-us/data-center/h200",
    },
    Shipped {
        name: "B200",
        aliases: &["HGX B200", "B200 180GB"],
        memory_gb: 180.0,
        memory_tb_s: 8.0,
        bf16: 2_250.0,
        fp8: Some(4_500.0),
        fp4: Some(9_000.0),
        power_w: 1_000.0,
        source: "NVIDIA HGX platform page and DGX B200 Datasheet (undated): 8-GPU figures ÷ 8, FP4 as printed dense; the Blackwell technical brief prints up to 192 GB and 7.7 TB/s",
    },
    Shipped {
        name: "GB200",
        aliases: &["GB200 NVL72"],
        memory_gb: 186.0,
        memory_tb_s: 8.0,
        bf16: 2_500.0,
        fp8: Some(5_000.0),
        fp4: Some(10_000.0),
        power_w: 1_200.0,
        source: "NVIDIA GB200 NVL72 page (undated): 72-GPU figures ÷ 72, FP4 as printed dense; 1,200 W per GPU from NVIDIA Mission Control docs as quoted",
    },
    Shipped {
        name: "B300",
        aliases: &["HGX B300", "Blackwell Ultra"],
        memory_gb: 270.0,
        memory_tb_s: 7.7,
        bf16: 2_250.0,
        fp8: Some(4_500.0),
        fp4: Some(14_000.0),
        power_w: 1_100.0,
        source: "NVIDIA Blackwell Ultra Datasheet, HGX B300 column (undated); the HGX page prints 108 PF FP4 dense per 8 GPUs (13,500 each) and launch material 288 GB",
    },
    Shipped {
        name: "RTX PRO 6000 Blackwell Server Edition",
        aliases: &["RTX PRO 6000", "RTX PRO 6000 Blackwell", "RTX 6000 PRO"],
        memory_gb: 96.0,
        memory_tb_s: 1.597,
        bf16: 500.0,
        fp8: Some(1_000.0),
        fp4: Some(2_000.0),
        power_w: 600.0,
        source: "NVIDIA RTX PRO 6000 Blackwell Server Edition page (undated): 1 / 2 / 4 PFLOPS halved (printed without a sparse or dense label; the Workstation Edition datasheet marks its FP4 figure as with sparsity)",
    },
    Shipped {
        name: "L40S",
        aliases: &[],
        memory_gb: 48.0,
        memory_tb_s: 0.864,
        bf16: 362.05,
        fp8: Some(733.0),
        fp4: None,
        power_w: 350.0,
        source: "NVIDIA L40S datasheet (Chinese edition 2907810, 2023-09-25); dense figures as printed",
    },
    Shipped {
        name: "A100 SXM 80GB",
        aliases: &["A100", "A100 SXM", "A100 SXM4", "A100 80GB", "A100-SXM4-80GB"],
        memory_gb: 80.0,
        memory_tb_s: 2.039,
        bf16: 312.0,
        fp8: None,
        fp4: None,
        power_w: 400.0,
        source: "NVIDIA A100 Tensor Core GPU datasheet 1758950-r4, June 2021; no FP8",
    },
    Shipped {
        name: "A100 PCIe 80GB",
        aliases: &["A100 PCIe", "A100 80GB PCIe"],
        memory_gb: 80.0,
        memory_tb_s: 1.935,
        bf16: 312.0,
        fp8: None,
        fp4: None,
        power_w: 300.0,
        source: "NVIDIA A100 Tensor Core GPU datasheet 1758950-r4, June 2021; no FP8",
    },
    Shipped {
        name: "MI300X",
        aliases: &["Instinct MI300X", "AMD Instinct MI300X"],
        memory_gb: 192.0,
        memory_tb_s: 5.3,
        bf16: 1_307.4,
        fp8: Some(2_614.9),
        fp4: None,
        power_w: 750.0,
        source: "AMD ROCm documentation, MI300 Series microarchitecture (2025-01); AMD Instinct MI300X product page (750 W peak TBP)",
    },
    Shipped {
        name: "MI325X",
        aliases: &["Instinct MI325X", "AMD Instinct MI325X"],
        memory_gb: 256.0,
        memory_tb_s: 6.0,
        bf16: 1_307.4,
        fp8: Some(2_614.9),
        fp4: None,
        power_w: 1_000.0,
        source: "AMD Instinct MI325X product page (undated; compute as MI300X, 1,000 W peak TBP)",
    },
    Shipped {
        name: "MI355X",
        aliases: &["Instinct MI355X", "AMD Instinct MI355X"],
        memory_gb: 288.0,
        memory_tb_s: 8.0,
        bf16: 2_500.0,
        fp8: Some(5_000.0),
        fp4: Some(10_100.0),
        power_w: 1_400.0,
        source: "AMD Instinct MI355X product page (undated): 2.5 / 5.0 / 10.1 PF dense (MXFP4); AMD CDNA 4 white paper",
    },
    Shipped {
        name: "Gaudi 3",
        aliases: &["Gaudi3", "HL-325L", "Intel Gaudi 3"],
        memory_gb: 128.0,
        memory_tb_s: 3.7,
        bf16: 1_835.0,
        fp8: Some(1_835.0),
        fp4: None,
        power_w: 900.0,
        source: "Intel Gaudi 3 AI Accelerator White Paper (undated); Hot Chips 2024 prints 3.67 TB/s; 900 W air-cooled OAM",
    },
];

/// The accelerators Plateau ships.
pub fn shipped() -> Vec<GpuSpec> {
    SHIPPED
        .iter()
        .map(|s| GpuSpec {
            name: s.name.to_owned(),
            aliases: s.aliases.iter().map(|a| (*a).to_owned()).collect(),
            memory_gb: Some(s.memory_gb),
            memory_tb_s: s.memory_tb_s,
            bf16_tflops: Some(s.bf16),
            fp8_tflops: s.fp8,
            fp4_tflops: s.fp4,
            power_w: Some(s.power_w),
            source: if is_halved(s.name) { format!("{}; {HALVED}", s.source) } else { s.source.to_owned() },
            set_by: None,
            set_at: None,
        })
        .collect()
}

/// The NVIDIA data-centre parts whose datasheets print only sparse tensor rates.
fn is_halved(name: &str) -> bool {
    ["H100", "H200", "B200", "GB200", "B300"].iter().any(|p| name.starts_with(p))
}

/// The table in force: the team's GPUs first (an entry of the same name replaces the
/// shipped one), then the shipped ones.
pub fn gpu_table(overrides: &[GpuSpec]) -> Vec<GpuSpec> {
    let shipped = shipped();
    let mut table: Vec<GpuSpec> = overrides
        .iter()
        .map(|g| {
            // A correction keeps the names the shipped entry is known by.
            let mut g = g.clone();
            if let Some(s) = shipped.iter().find(|s| name_key(&s.name) == name_key(&g.name)) {
                for a in &s.aliases {
                    if !g.aliases.iter().any(|b| name_key(b) == name_key(a)) {
                        g.aliases.push(a.clone());
                    }
                }
            }
            g
        })
        .collect();
    let taken: Vec<String> = overrides.iter().map(|g| name_key(&g.name)).collect();
    table.extend(shipped.into_iter().filter(|s| !taken.contains(&name_key(&s.name))));
    table
}

/// Lower-case words of a name, split at anything that is not a letter or digit.
fn words(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase).collect()
}

/// Whether the run's word `have` is the table's word `want`: equal, or `want` followed by
/// more (`sxm` in `sxm5`) unless `want` ends in a digit and more digits follow (`a100` is
/// not `a1000`).
fn word_matches(want: &str, have: &str) -> bool {
    match have.strip_prefix(want) {
        Some("") => true,
        Some(rest) => !(want.ends_with(|c: char| c.is_ascii_digit()) && rest.starts_with(|c: char| c.is_ascii_digit())),
        None => false,
    }
}

/// How well `name` (a table entry's name or alias) matches the run's GPU words: the length
/// of the name when all its words appear in order, else `None`.
fn match_score(name: &str, run_words: &[String]) -> Option<usize> {
    let want = words(name);
    if want.is_empty() {
        return None;
    }
    let mut at = 0;
    for w in &want {
        let found = run_words.get(at..)?.iter().position(|h| word_matches(w, h))?;
        at += found + 1;
    }
    Some(want.iter().map(String::len).sum())
}

/// The entry of `table` a run's GPU type names: the one whose name or alias matches the
/// most of it (an earlier entry, the team's, wins a tie).
pub fn find_gpu<'a>(gpu_type: &str, table: &'a [GpuSpec]) -> Option<&'a GpuSpec> {
    let run_words = words(gpu_type);
    let mut best: Option<(usize, &GpuSpec)> = None;
    for g in table {
        let score = std::iter::once(&g.name).chain(&g.aliases).filter_map(|n| match_score(n, &run_words)).max();
        if let Some(s) = score {
            if best.is_none_or(|(b, _)| s > b) {
                best = Some((s, g));
            }
        }
    }
    best.map(|(_, g)| g)
}

/// The facts of the run's model, when a person gave them.
pub fn find_model<'a>(model: &str, facts: &'a [ModelFacts]) -> Option<&'a ModelFacts> {
    let key = name_key(model);
    facts.iter().find(|f| name_key(&f.model) == key)
}

/// Which roof is the lower at a level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    /// Reading the weights and the KV cache from memory.
    MemoryBandwidth,
    /// The tensor cores' arithmetic.
    Compute,
}

impl Bound {
    pub fn label(self) -> &'static str {
        match self {
            Bound::MemoryBandwidth => "memory-bandwidth roofline",
            Bound::Compute => "compute roof",
        }
    }
}

/// The tensor precision the compute roof is taken at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Precision {
    Fp4,
    Fp8,
    Bf16,
}

impl Precision {
    pub fn label(self) -> &'static str {
        match self {
            Precision::Fp4 => "FP4",
            Precision::Fp8 => "FP8",
            Precision::Bf16 => "BF16",
        }
    }
}

/// One level against its roofs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LevelRoof {
    pub load_kind: LoadKind,
    pub load: f64,
    /// Sequences decoded together: the concurrency, the measured in-flight mean where the
    /// source reports it, or rate × mean latency (Little's law) for a rate.
    pub batch: f64,
    /// Tokens of context per sequence the KV reads count (prompt + half the output);
    /// `None`: not known, KV reads not counted.
    pub context_tokens: Option<f64>,
    pub measured_tok_s: f64,
    pub memory_roof_tok_s: f64,
    pub compute_roof_tok_s: Option<f64>,
    pub bound: Bound,
    /// The lower roof.
    pub roof_tok_s: f64,
    /// Measured ÷ roof, as a fraction.
    pub fraction: f64,
}

/// A run against its hardware's roofs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRoofline {
    /// The table entry used, and the run's GPU type it was matched from.
    pub gpu: GpuSpec,
    pub gpu_type: String,
    pub gpu_count: i64,
    pub model: ModelFacts,
    /// The precision of the compute roof (from the bits per weight).
    pub precision: Option<Precision>,
    /// Bytes of weights read per decode step (all GPUs together).
    pub weight_bytes: f64,
    pub levels: Vec<LevelRoof>,
    /// Every assumption behind the figures, one sentence each.
    pub assumptions: Vec<String>,
    /// What the page says.
    pub sentence: String,
}

/// Why a run has no roofline, and what to enter to get one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RooflineGap {
    /// What is missing, each a short phrase ("the run's GPU count").
    pub missing: Vec<String>,
    pub sentence: String,
}

/// The tensor precision of weights stored at `bits` per weight, and its dense rate.
fn compute_rate(gpu: &GpuSpec, bits: f64) -> Option<(Precision, f64)> {
    let fp4 = gpu.fp4_tflops.map(|t| (Precision::Fp4, t));
    let fp8 = gpu.fp8_tflops.map(|t| (Precision::Fp8, t));
    let bf16 = gpu.bf16_tflops.map(|t| (Precision::Bf16, t));
    if bits <= 4.75 {
        fp4.or(fp8).or(bf16)
    } else if bits <= 8.5 {
        fp8.or(bf16)
    } else {
        bf16
    }
}

/// Sequences decoded together at `p`.
fn batch_of(p: &Point) -> Option<f64> {
    if let Some(c) = p.get(Metric::AchievedConcurrency, Stat::Mean).filter(|c| *c > 0.0) {
        return Some(c);
    }
    match p.load_kind {
        LoadKind::Concurrency => Some(p.load_value).filter(|c| *c > 0.0),
        LoadKind::RequestRate => {
            let e2e_s = p.get(Metric::E2e, Stat::Mean)? / 1000.0;
            Some(p.load_value * e2e_s).filter(|c| *c > 0.0)
        }
    }
}

/// Context per sequence at `p`: prompt + half the output, from the level's means or the
/// run's facts.
fn context_of(p: &Point, run: &Run) -> (Option<f64>, bool, bool) {
    let prompt = p.get(Metric::InputTokens, Stat::Mean).or(run.facts.prompt_tokens.map(|t| t as f64));
    let output = p.get(Metric::OutputTokens, Stat::Mean).or(run.facts.max_tokens.map(|t| t as f64));
    let ctx = match (prompt, output) {
        (None, None) => None,
        (p, o) => Some(p.unwrap_or(0.0) + o.unwrap_or(0.0) / 2.0),
    };
    (ctx, prompt.is_some(), output.is_some())
}

/// What to enter, as the page says it.
fn gap(missing: Vec<String>) -> RooflineGap {
    let list = match missing.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    };
    RooflineGap {
        sentence: format!(
            "No hardware roofline: enter {list} to see how close each level comes to what the GPUs allow."
        ),
        missing,
    }
}

/// The run against its hardware's roofs: its GPU type matched in `gpus` (the table in
/// force, [`gpu_table`]), its model's facts in `models`.
pub fn roofline(run: &Run, gpus: &[GpuSpec], models: &[ModelFacts]) -> Result<RunRoofline, RooflineGap> {
    let mut missing = Vec::new();
    let gpu = match run.facts.gpu_type.as_deref() {
        None => {
            missing.push("the run's GPU type".to_owned());
            None
        }
        Some(t) => {
            let g = find_gpu(t, gpus);
            if g.is_none() {
                missing.push(format!("the memory bandwidth of a {t}"));
            }
            g
        }
    };
    let count = run.facts.gpu_count.filter(|n| *n > 0);
    if count.is_none() {
        missing.push("the run's GPU count".to_owned());
    }
    let facts = match run.facts.model.as_deref() {
        None => {
            missing.push("the run's model".to_owned());
            None
        }
        Some(m) => {
            let f = find_model(m, models).filter(|f| f.active_params_b.is_some() && f.bits_per_weight.is_some());
            if f.is_none() {
                missing.push(format!("the active parameters and bits per weight of {m}"));
            }
            f
        }
    };
    let (Some(gpu), Some(count), Some(facts)) = (gpu, count, facts) else {
        return Err(gap(missing));
    };
    let (Some(active_b), Some(bits)) = (facts.active_params_b, facts.bits_per_weight) else {
        return Err(gap(missing));
    };
    let active = active_b * 1e9;
    let weight_bytes = active * bits / 8.0;
    let bandwidth = gpu.memory_tb_s * 1e12 * count as f64;
    let rate = compute_rate(gpu, bits);
    let compute_roof = rate.map(|(_, tflops)| tflops * 1e12 * count as f64 / (2.0 * active));
    let kv = facts.kv_bytes_per_token;
    let mut any_context = false;
    let mut prompt_known = true;
    let levels: Vec<LevelRoof> = run
        .points
        .iter()
        .filter_map(|p| {
            let measured = p.output_tok_s().filter(|v| v.is_finite() && *v > 0.0)?;
            let batch = batch_of(p)?;
            let (context, has_prompt, _) = context_of(p, run);
            any_context |= context.is_some();
            prompt_known &= has_prompt;
            let kv_bytes = match (kv, context) {
                (Some(kv), Some(ctx)) => batch * kv * ctx,
                _ => 0.0,
            };
            let step_s = (weight_bytes + kv_bytes) / bandwidth;
            let memory_roof = batch / step_s;
            let (bound, roof) = match compute_roof {
                Some(c) if c < memory_roof => (Bound::Compute, c),
                _ => (Bound::MemoryBandwidth, memory_roof),
            };
            Some(LevelRoof {
                load_kind: p.load_kind,
                load: p.load_value,
                batch,
                context_tokens: context.filter(|_| kv.is_some()),
                measured_tok_s: measured,
                memory_roof_tok_s: memory_roof,
                compute_roof_tok_s: compute_roof,
                bound,
                roof_tok_s: roof,
                fraction: measured / roof,
            })
        })
        .collect();
    if levels.is_empty() {
        return Err(RooflineGap {
            missing: vec!["a level with its output throughput".into()],
            sentence: "No hardware roofline: no level reports its output throughput.".into(),
        });
    }
    let mut assumptions = vec![
        format!(
            "GPU: {} (matched from the run's “{}”): {} TB/s of memory bandwidth each — {}.",
            gpu.name,
            run.facts.gpu_type.as_deref().unwrap_or_default(),
            gpu.memory_tb_s,
            gpu.source
        ),
        format!(
            "The {count} GPUs' bandwidth and compute add up (the model split across all of them); the time they spend communicating is not counted."
        ),
        format!(
            "Each decode step reads the weights once: {} B active parameters × {} bits = {} GB{}.",
            short(active_b),
            short(bits),
            short(weight_bytes / 1e9),
            if facts.source.is_empty() { String::new() } else { format!(" ({})", facts.source) }
        ),
    ];
    if facts.total_params_b.is_some_and(|t| t > active_b * 1.05) {
        assumptions.push(
            "Only the active parameters are read per step: a mixture of experts reads more experts as the batch grows, so at large batches the true roof is lower and the percentage higher."
                .into(),
        );
    }
    match (kv, any_context) {
        (Some(kv), true) => assumptions.push(format!(
            "Each sequence's KV cache is read once per step: {} bytes per token × (prompt + half the output){}.",
            significant(kv, 4),
            if prompt_known { "" } else { "; the prompt length is not known, so only the output is counted" }
        )),
        (Some(_), false) => assumptions.push(
            "KV cache reads are not counted: the prompt and output lengths are not known (the roof is higher than the true one)."
                .into(),
        ),
        (None, _) => assumptions.push(
            "KV cache reads are not counted: the model's KV bytes per token are not given (the roof is higher than the true one)."
                .into(),
        ),
    }
    match rate {
        Some((precision, tflops)) => assumptions.push(format!(
            "The compute roof: 2 FLOPs per active parameter per token at the dense {} rate ({} TFLOP/s per GPU); attention FLOPs not counted.",
            precision.label(),
            crate::domain::model::format::shown(Some(tflops), if tflops.fract() == 0.0 { 0 } else { 2 })
        )),
        None => assumptions.push("No compute roof: the GPU's tensor rates are not given.".into()),
    }
    assumptions.push(
        "Measured: the level's output tokens per second, time spent on prompts included (the decode rate alone is somewhat higher)."
            .into(),
    );
    let sentence = sentence(&levels);
    Ok(RunRoofline {
        gpu: gpu.clone(),
        gpu_type: run.facts.gpu_type.clone().unwrap_or_default(),
        gpu_count: count,
        model: facts.clone(),
        precision: rate.map(|(p, _)| p),
        weight_bytes,
        levels,
        assumptions,
        sentence,
    })
}

/// A figure to three significant digits without trailing zeros (`32`, `4.5`, `18`).
fn short(v: f64) -> String {
    let s = significant(v, 3);
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s
    }
}

/// A fraction as the roofline sentence shows it: one decimal below 10 %.
pub fn percent(f: f64) -> String {
    let p = f * 100.0;
    if p < 10.0 {
        format!("{p:.1} %")
    } else {
        format!("{p:.0} %")
    }
}

/// The page's sentence: the lowest level against its roof, what that means, and the
/// highest level where it differs.
fn sentence(levels: &[LevelRoof]) -> String {
    let Some(first) = levels.first() else { return String::new() };
    let verdict = if first.fraction >= 0.7 {
        "close to what the hardware allows: tuning the server gains little here, fewer bytes per token or faster memory would"
    } else if first.fraction >= 0.3 {
        "some headroom: part of the limit is elsewhere (communication, scheduling, kernels)"
    } else {
        "the limit is elsewhere (communication, scheduling, kernels)"
    };
    let mut s = format!(
        "At {} this deployment decodes at {} of its {} ({} of ≈ {}): {verdict}.",
        load_label(first.load_kind, first.load),
        percent(first.fraction),
        first.bound.label(),
        tok_s(first.measured_tok_s).trim_end_matches(" tok/s"),
        tok_s(first.roof_tok_s),
    );
    if let Some(last) = levels.last().filter(|l| levels.len() > 1 && l.load != first.load) {
        s.push_str(&format!(
            " At {}: {} of its {} ({} of ≈ {}).",
            load_label(last.load_kind, last.load),
            percent(last.fraction),
            last.bound.label(),
            tok_s(last.measured_tok_s).trim_end_matches(" tok/s"),
            tok_s(last.roof_tok_s),
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::model::run::{RunFacts, RunStatus, SourceFormat, SourceInfo};
    use crate::domain::RunId;

    fn run(levels: &[(f64, f64)], gpu: Option<&str>, count: Option<i64>, model: Option<&str>) -> Run {
        let mut facts = RunFacts { model: model.map(str::to_owned), ..RunFacts::default() };
        facts.gpu_type = gpu.map(str::to_owned);
        facts.gpu_count = count;
        Run {
            id: RunId::parse("abcdefabcdef").unwrap(),
            name: "r".into(),
            created_at: "2026-12-01T00:00:00Z".into(),
            status: RunStatus::Complete,
            source: SourceInfo { format: SourceFormat::Manual, file_name: None },
            facts,
            definitions: Default::default(),
            points: levels
                .iter()
                .map(|(c, tok)| {
                    let mut p = Point::at(LoadKind::Concurrency, *c);
                    p.set(Metric::OutputThroughput, Stat::Mean, *tok);
                    p
                })
                .collect(),
            set_aside: Vec::new(),
            annotations: Vec::new(),
        }
    }

    fn kimi() -> ModelFacts {
        ModelFacts {
            model: "Kimi-K2.5 NVFP4".into(),
            total_params_b: Some(1_000.0),
            active_params_b: Some(32.0),
            bits_per_weight: Some(4.5),
            kv_bytes_per_token: Some(70_272.0),
            source: "model card".into(),
            set_by: "demo".into(),
            set_at: "2026-12-01T00:00:00Z".into(),
        }
    }

    #[test]
    fn run_gpu_names_find_their_entry() {
        let t = gpu_table(&[]);
        let name = |s: &str| find_gpu(s, &t).map(|g| g.name.clone());
        assert_eq!(name("NVIDIA H100 80GB HBM3").as_deref(), Some("H100 SXM"));
        assert_eq!(name("H100 PCIe").as_deref(), Some("H100 PCIe"));
        assert_eq!(name("NVIDIA H100 NVL").as_deref(), Some("H100 NVL"));
        assert_eq!(name("NVIDIA A100-SXM4-80GB").as_deref(), Some("A100 SXM 80GB"));
        assert_eq!(name("NVIDIA A100 80GB PCIe").as_deref(), Some("A100 PCIe 80GB"));
        assert_eq!(name("RTX PRO 6000 Blackwell").as_deref(), Some("RTX PRO 6000 Blackwell Server Edition"));
        assert_eq!(name("GB200 NVL72").as_deref(), Some("GB200"));
        assert_eq!(name("B200").as_deref(), Some("B200"));
        assert_eq!(name("AMD Instinct MI300X").as_deref(), Some("MI300X"));
        assert_eq!(name("MI325X").as_deref(), Some("MI325X"));
        assert_eq!(name("gaudi3").as_deref(), Some("Gaudi 3"));
        // Near misses match nothing rather than the wrong part.
        assert_eq!(name("RTX A1000"), None);
        assert_eq!(name("4090"), None);
        assert_eq!(name("H20"), None);
        // A team's entry of the same name replaces the shipped one.
        let mine = GpuSpec { memory_tb_s: 3.0, source: "measured".into(), aliases: Vec::new(), ..t[0].clone() };
        let t = gpu_table(&[mine]);
        assert_eq!(find_gpu("H100", &t).map(|g| g.memory_tb_s), Some(3.0));
        assert_eq!(t.iter().filter(|g| g.name == "H100 SXM").count(), 1);
    }

    #[test]
    fn every_shipped_figure_has_a_source_and_passes_the_checks() {
        let t = shipped();
        assert!(t.len() >= 15);
        for g in t {
            assert!(!g.source.is_empty(), "{}", g.name);
            check_gpu_spec(g.clone()).unwrap_or_else(|e| panic!("{}: {e}", g.name));
            // Dense FP8 is never below BF16, FP4 never below FP8.
            if let (Some(b), Some(f)) = (g.bf16_tflops, g.fp8_tflops) {
                assert!(f >= b, "{}", g.name);
            }
            if let (Some(f8), Some(f4)) = (g.fp8_tflops, g.fp4_tflops) {
                assert!(f4 >= f8, "{}", g.name);
            }
        }
    }

    /// The story's deployment by hand: 8 × 1.597 TB/s = 12.776 TB/s; 32 B × 4.5 bits =
    /// 18 GB per step, so C=1 decodes at most 12.776e12 / 18e9 = 709.8 tok/s; 61.3 is 8.6 %.
    #[test]
    fn the_story_at_c1_is_a_twelfth_of_its_memory_roof() {
        let r = run(&[(1.0, 61.3), (32.0, 799.9)], Some("RTX PRO 6000 Blackwell"), Some(8), Some("kimi-k2.5  nvfp4"));
        let roof = roofline(&r, &gpu_table(&[]), &[kimi()]).unwrap();
        let c1 = &roof.levels[0];
        assert!((c1.memory_roof_tok_s - 12.776e12 / 18e9).abs() < 1e-6, "{}", c1.memory_roof_tok_s);
        assert_eq!(c1.bound, Bound::MemoryBandwidth);
        assert!((c1.fraction - 61.3 / 709.777).abs() < 1e-5);
        // FP4 compute: 8 × 2,000 TFLOP/s ÷ (2 × 32e9) = 250,000 tok/s, far above.
        assert_eq!(c1.compute_roof_tok_s.map(|c| c.round()), Some(250_000.0));
        assert_eq!(roof.precision, Some(Precision::Fp4));
        // No prompt or output length: no KV reads counted, and said.
        assert_eq!(c1.context_tokens, None);
        assert!(roof.assumptions.iter().any(|a| a.contains("KV cache reads are not counted")));
        assert!(roof.assumptions.iter().any(|a| a.contains("mixture of experts")));
        assert!(
            roof.sentence.starts_with("At C=1 this deployment decodes at 8.6 % of its memory-bandwidth roofline (61.3 of ≈ 710 tok/s): the limit is elsewhere"),
            "{}",
            roof.sentence
        );
        assert!(
            roof.sentence.contains("At C=32: 3.5 % of its memory-bandwidth roofline (800 of ≈ 22,713 tok/s)."),
            "{}",
            roof.sentence
        );
    }

    #[test]
    fn kv_reads_lower_the_roof_as_the_batch_grows_and_compute_caps_it() {
        let mut r = run(&[(1.0, 50.0), (64.0, 2_000.0)], Some("H100"), Some(1), Some("llama-8b"));
        r.facts.prompt_tokens = Some(1_000);
        r.facts.max_tokens = Some(200);
        let facts = ModelFacts {
            model: "llama-8b".into(),
            total_params_b: Some(8.0),
            active_params_b: Some(8.0),
            bits_per_weight: Some(16.0),
            kv_bytes_per_token: Some(131_072.0),
            source: String::new(),
            set_by: "a".into(),
            set_at: "t".into(),
        };
        let roof = roofline(&r, &gpu_table(&[]), std::slice::from_ref(&facts)).unwrap();
        // C=64: 16 GB weights + 64 × 131,072 × 1,100 = 9.227 GB of KV per step.
        let c64 = &roof.levels[1];
        let step = (16e9 + 64.0 * 131_072.0 * 1_100.0) / 3.35e12;
        assert!((c64.memory_roof_tok_s - 64.0 / step).abs() < 1e-6);
        assert_eq!(c64.context_tokens, Some(1_100.0));
        // Compute at BF16: 989.5e12 / 16e9 = 61,843.75 tok/s; a big batch hits it.
        let mut big = r.clone();
        big.facts.max_tokens = Some(1);
        big.facts.prompt_tokens = Some(1);
        big.points[1].load_value = 100_000.0;
        let roof = roofline(&big, &gpu_table(&[]), &[facts]).unwrap();
        assert_eq!(roof.levels[1].bound, Bound::Compute);
        assert!((roof.levels[1].roof_tok_s - 61_843.75).abs() < 1e-6);
    }

    #[test]
    fn what_is_missing_is_named() {
        let r = run(&[(1.0, 61.3)], None, None, Some("m"));
        let e = roofline(&r, &gpu_table(&[]), &[]).unwrap_err();
        assert_eq!(
            e.missing,
            ["the run's GPU type", "the run's GPU count", "the active parameters and bits per weight of m"]
        );
        assert!(e.sentence.starts_with("No hardware roofline: enter the run's GPU type, the run's GPU count and"));
        let r = run(&[(1.0, 61.3)], Some("TPU v5e"), Some(4), None);
        let e = roofline(&r, &gpu_table(&[]), &[]).unwrap_err();
        assert_eq!(e.missing, ["the memory bandwidth of a TPU v5e", "the run's model"]);
    }

    #[test]
    fn hostile_figures_are_refused_naming_the_field() {
        for (field, v) in [("memory_tb_s", f64::NAN), ("memory_tb_s", -1.0), ("bits_per_weight", 1e9), ("power_w", 0.0)]
        {
            assert_eq!(check_figure(field, v).unwrap_err().field, field);
        }
        assert_eq!(parse_figure("memory_gb", "").unwrap(), None);
        assert_eq!(parse_figure("memory_gb", " 80 ").unwrap(), Some(80.0));
        assert!(parse_figure("memory_gb", "80 GB").is_err());
        assert!(parse_figure("memory_gb", "0x50").is_err());
        let mut f = kimi();
        f.active_params_b = Some(2_000.0);
        assert_eq!(check_model_facts(f).unwrap_err().field, "active_params_b");
        let none = ModelFacts {
            total_params_b: None,
            active_params_b: None,
            bits_per_weight: None,
            kv_bytes_per_token: None,
            ..kimi()
        };
        assert!(check_model_facts(none).is_err());
        let mut g = shipped()[0].clone();
        g.name = "H\u{200b}100".into();
        assert_eq!(check_gpu_spec(g).unwrap_err().field, "name");
    }
}
