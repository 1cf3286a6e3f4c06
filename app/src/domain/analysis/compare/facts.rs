//! Whether two runs measured the same thing: the facts that decide it ([`Fact`]), their
//! differences and the comparability verdict ([`facts_diff`]).

use crate::domain::model::metrics::Definitions;
use crate::domain::{Run, RunFacts};
use serde::{Deserialize, Serialize};

/// A fact that decides whether two runs are comparable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fact {
    Model,
    Endpoint,
    MaxTokens,
    PromptTokens,
    /// What each user asked (single-turn, multi-turn, agentic, a trace) and from which file.
    Workload,
    /// The run's metric definitions (see [`Definitions::differences`]).
    Definitions,
    Engine,
    EngineVersion,
    GpuType,
    GpuCount,
    Tags,
}

/// What a difference in a fact means for a comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FactRole {
    /// What was asked of the server; differs → the runs did different work.
    Workload,
    /// How the numbers were defined; differs → the same name means different things.
    Measurement,
    /// What served it; differs → a legitimate comparison *of* the setup.
    Setup,
    /// Free-form labels; shown, never decisive.
    Label,
}

impl Fact {
    /// In the order a facts panel lists them: workload, measurement, setup, labels.
    pub const ALL: [Fact; 11] = [
        Fact::Model,
        Fact::Endpoint,
        Fact::MaxTokens,
        Fact::PromptTokens,
        Fact::Workload,
        Fact::Definitions,
        Fact::Engine,
        Fact::EngineVersion,
        Fact::GpuType,
        Fact::GpuCount,
        Fact::Tags,
    ];

    pub fn role(self) -> FactRole {
        match self {
            Fact::Model | Fact::Endpoint | Fact::MaxTokens | Fact::PromptTokens | Fact::Workload => FactRole::Workload,
            Fact::Definitions => FactRole::Measurement,
            Fact::Engine | Fact::EngineVersion | Fact::GpuType | Fact::GpuCount => FactRole::Setup,
            Fact::Tags => FactRole::Label,
        }
    }

    /// What a person reads.
    pub fn label(self) -> &'static str {
        match self {
            Fact::Model => "model",
            Fact::Endpoint => "endpoint",
            Fact::MaxTokens => "max_tokens",
            Fact::PromptTokens => "prompt length",
            Fact::Workload => "workload",
            Fact::Definitions => "metric definitions",
            Fact::Engine => "engine",
            Fact::EngineVersion => "engine version",
            Fact::GpuType => "GPU type",
            Fact::GpuCount => "GPU count",
            Fact::Tags => "tags",
        }
    }

    fn verb(self) -> &'static str {
        match self {
            Fact::Definitions | Fact::Tags => "differ",
            _ => "differs",
        }
    }
}

/// One fact that differs between a run and the baseline.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FactDifference {
    pub fact: Fact,
    /// This run's value first, then the baseline's: "chat vs completions".
    pub detail: String,
}

impl FactDifference {
    /// "endpoint differs (chat vs completions)".
    pub fn sentence(&self) -> String {
        format!("{} {} ({})", self.fact.label(), self.fact.verb(), self.detail)
    }
}

/// The comparability verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Comparability {
    /// Same workload, setup and definitions, as far as both runs recorded them.
    LikeForLike,
    /// Same workload and definitions on a different setup: the comparison measures the setup.
    SetupDiffers,
    /// Different workload or metric definitions: a throughput gap is not a regression.
    NotLikeForLike,
}

/// How a run's facts differ from the baseline's, and what that means.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FactsDiff {
    /// Facts both runs recorded with different values, in [`Fact::ALL`] order.
    pub differences: Vec<FactDifference>,
    /// Workload and setup facts at least one of the two runs did not record.
    pub unknown: Vec<Fact>,
    pub verdict: Comparability,
    /// The verdict in words: "not like for like: endpoint differs (chat vs completions)".
    pub explanation: String,
    /// What the verdict cannot see but a reader must know (in the explanation too): the
    /// same synthetic prompts as the baseline, which a prefix cache may have served.
    #[serde(default)]
    pub caveats: Vec<String>,
}

pub(super) fn same_text(a: &str, b: &str) -> bool {
    a.trim().eq_ignore_ascii_case(b.trim())
}

/// Both recorded and equal, case and surrounding space ignored.
pub(super) fn same_known_text(a: Option<&str>, b: Option<&str>) -> bool {
    matches!((a, b), (Some(a), Some(b)) if same_text(a, b))
}

/// The settings a run was measured under, from its `key=value` tags (a sweep folder's
/// `SERVE--max_num_seqs=256-…` names become such tags on import).
pub fn settings(facts: &RunFacts) -> Vec<(&str, &str)> {
    facts.tags.iter().filter_map(|t| t.split_once('=')).filter(|(k, _)| !k.is_empty()).collect()
}

/// The settings whose value is not the same in every run (absent counts as a value), each
/// with its value per run, in `runs` order: what tells the runs of an experiment apart.
pub fn varied_settings(runs: &[Run]) -> Vec<(String, Vec<Option<String>>)> {
    let mut keys: Vec<&str> = runs.iter().flat_map(|r| settings(&r.facts)).map(|(k, _)| k).collect();
    keys.sort_unstable();
    keys.dedup();
    keys.into_iter()
        .filter_map(|key| {
            let values: Vec<Option<String>> = runs
                .iter()
                .map(|r| settings(&r.facts).into_iter().find(|(k, _)| *k == key).map(|(_, v)| v.to_owned()))
                .collect();
            let first = values.first()?;
            values.iter().any(|v| v != first).then(|| (key.to_owned(), values))
        })
        .collect()
}

/// Whether two runs are on the same model and GPU as far as both recorded: model and GPU
/// type known and equal, GPU counts not known to differ.
pub fn same_model_and_gpu(a: &RunFacts, b: &RunFacts) -> bool {
    same_known_text(a.model.as_deref(), b.model.as_deref())
        && same_known_text(a.gpu_type.as_deref(), b.gpu_type.as_deref())
        && !matches!((a.gpu_count, b.gpu_count), (Some(x), Some(y)) if x != y)
}

/// Compares the facts and definitions of `other` with the `baseline` run's.
pub fn facts_diff(baseline: &Run, other: &Run) -> FactsDiff {
    facts_diff_of(&baseline.facts, &baseline.definitions, &other.facts, &other.definitions)
}

pub(super) fn facts_diff_of(
    base: &RunFacts,
    base_defs: &Definitions,
    this: &RunFacts,
    this_defs: &Definitions,
) -> FactsDiff {
    let mut differences = Vec::new();
    let mut unknown = Vec::new();
    let num = |x: Option<i64>| x.map(|n| n.to_string());
    let endpoint = |f: &RunFacts| f.endpoint_kind.map(|e| e.as_str().to_owned());
    // (fact, this run's value, baseline's value, compare ignoring case and surrounding space)
    let workload = [
        (Fact::Model, this.model.clone(), base.model.clone(), true),
        (Fact::Endpoint, endpoint(this), endpoint(base), false),
        (Fact::MaxTokens, num(this.max_tokens), num(base.max_tokens), false),
        (Fact::PromptTokens, num(this.prompt_tokens), num(base.prompt_tokens), false),
    ];
    let setup = [
        (Fact::Engine, this.engine.clone(), base.engine.clone(), true),
        (Fact::EngineVersion, this.engine_version.clone(), base.engine_version.clone(), true),
        (Fact::GpuType, this.gpu_type.clone(), base.gpu_type.clone(), true),
        (Fact::GpuCount, num(this.gpu_count), num(base.gpu_count), false),
    ];
    // The workload is unknown only when one run recorded it: imports record none, and a
    // pair of them is not "not recorded" on every comparison.
    let workload_kind: Option<Result<Option<String>, ()>> = match (&this_defs.workload, &base_defs.workload) {
        (Some(a), Some(b)) => Some(Ok(a.difference(b))),
        (None, None) => None,
        _ => Some(Err(())),
    };
    let mut scalar =
        |out: &mut Vec<FactDifference>, (fact, a, b, loose): (Fact, Option<String>, Option<String>, bool)| match (a, b)
        {
            (Some(a), Some(b)) => {
                let same = if loose { same_text(&a, &b) } else { a == b };
                if !same {
                    out.push(FactDifference { fact, detail: format!("{a} vs {b}") });
                }
            }
            _ => unknown.push(fact),
        };
    for f in workload {
        scalar(&mut differences, f);
    }
    let defs = this_defs.differences(base_defs);
    if !defs.is_empty() {
        differences.push(FactDifference { fact: Fact::Definitions, detail: defs.join("; ") });
    }
    for f in setup {
        scalar(&mut differences, f);
    }
    // In `Fact::ALL` order: after the other workload facts.
    let before = |f: &Fact| matches!(f, Fact::Model | Fact::Endpoint | Fact::MaxTokens | Fact::PromptTokens);
    match workload_kind {
        Some(Ok(Some(detail))) => {
            let at = differences.iter().take_while(|d| before(&d.fact)).count();
            differences.insert(at, FactDifference { fact: Fact::Workload, detail });
        }
        Some(Err(())) => {
            let at = unknown.iter().take_while(|f| before(f)).count();
            unknown.insert(at, Fact::Workload);
        }
        Some(Ok(None)) | None => {}
    }
    // Tags are sets, normalised by `RunFacts::set_tags`; no tags is "none", not unknown.
    let only_here: Vec<&str> = this.tags.iter().filter(|t| !base.tags.contains(t)).map(String::as_str).collect();
    let only_base: Vec<&str> = base.tags.iter().filter(|t| !this.tags.contains(t)).map(String::as_str).collect();
    if !only_here.is_empty() || !only_base.is_empty() {
        let list = |v: &[&str]| if v.is_empty() { "none".to_owned() } else { v.join(", ") };
        differences.push(FactDifference {
            fact: Fact::Tags,
            detail: format!("only here: {}; only in baseline: {}", list(&only_here), list(&only_base)),
        });
    }

    let has = |role: FactRole| differences.iter().any(|d| d.fact.role() == role);
    let verdict = if has(FactRole::Workload) || has(FactRole::Measurement) {
        Comparability::NotLikeForLike
    } else if has(FactRole::Setup) {
        Comparability::SetupDiffers
    } else {
        Comparability::LikeForLike
    };
    let decisive: Vec<String> =
        differences.iter().filter(|d| d.fact.role() != FactRole::Label).map(FactDifference::sentence).collect();
    let explanation = match verdict {
        Comparability::NotLikeForLike => format!("not like for like: {}", decisive.join("; ")),
        Comparability::SetupDiffers => {
            format!("same workload on a different setup: {}", decisive.join("; "))
        }
        Comparability::LikeForLike if unknown.is_empty() => "like for like".to_owned(),
        Comparability::LikeForLike => {
            let names: Vec<&str> = unknown.iter().map(|f| f.label()).collect();
            format!("like for like as far as recorded (not recorded for both: {})", names.join(", "))
        }
    };
    let caveats = caveats(this_defs, base_defs);
    let explanation =
        if caveats.is_empty() { explanation } else { format!("{explanation}; but {}", caveats.join("; ")) };
    FactsDiff { differences, unknown, verdict, explanation, caveats }
}

/// What makes two runs of the same facts measure differently all the same: the same
/// prompts (a prefix cache may serve the later run), prompt lengths counted two ways, a
/// different shared prefix.
fn caveats(this_defs: &Definitions, base_defs: &Definitions) -> Vec<String> {
    let mut caveats = Vec::new();
    if let (Some(a), Some(b)) = (this_defs.prompt_seed, base_defs.prompt_seed) {
        if a == b {
            caveats.push(format!(
                "the same prompts as the baseline (prompt seed {a}): the later run may have been served from the earlier one's prefix cache"
            ));
        }
    }
    // The same "prompt length" counted two ways is not the same workload (128 words were
    // 158 of the server's tokens).
    if let (Some(a), Some(b)) = (&this_defs.prompt_length_source, &base_defs.prompt_length_source) {
        if a.kind() != b.kind() {
            caveats.push(format!(
                "prompt lengths counted differently ({} vs {} in the baseline): the same prompt length may be a different number of the server's tokens",
                a.kind(),
                b.kind()
            ));
        }
    }
    if let (Some(a), Some(b)) = (this_defs.shared_prefix_tokens, base_defs.shared_prefix_tokens) {
        if a != b {
            caveats.push(format!(
                "a different shared prompt prefix ({a} vs {b} tokens in the baseline): a prefix cache serves the longer one more"
            ));
        }
    }
    caveats
}
