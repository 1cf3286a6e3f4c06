//! An import planned: its files checked and expanded (folders, archives), each sorted
//! (a result read, a companion kept for its level, or a file of a folder skipped), the
//! companions attached, the results grouped into runs — everything the upload preview
//! shows, nothing stored.

use super::build::build_run;
use super::bundle;
use super::companions::{self, Companions};
use super::error::ImportError;
use super::formats;
use super::outcome::{Plan, PreparedRun, Skipped};
use super::read::{read_file, text_of, ReadFile};
use super::request::{printable, ImportRequest, InputFile, MAX_FILES};
use app::domain::model::text;
use app::domain::SourceFormat;

/// Checks and parses every file and groups them into runs, without storing anything.
pub fn prepare(req: &ImportRequest, max_bytes: usize) -> Result<Vec<PreparedRun>, ImportError> {
    plan(req.clone(), max_bytes).map(|p| p.runs)
}

/// [`prepare`] for a request the caller no longer needs.
pub fn prepare_owned(req: ImportRequest, max_bytes: usize) -> Result<Vec<PreparedRun>, ImportError> {
    plan(req, max_bytes).map(|p| p.runs)
}

/// Why a file of a folder or archive is not read, if it is not: what is not a result
/// (a README, a chart, a hidden file) is skipped there, where a file chosen on its own is
/// refused. `names` are every file's name, for files that only repeat their neighbours.
fn skip_reason(f: &InputFile, names: &[&str]) -> Option<String> {
    let name = f.file_name.as_deref().unwrap_or("");
    let base = bundle::base_name(name);
    if base.starts_with('.') || name.split('/').any(|p| p == "__MACOSX") {
        return Some("a hidden file".into());
    }
    if bundle::Archive::of(&f.content).is_some() {
        return Some("an archive inside a folder or archive is not opened".into());
    }
    if f.content.iter().all(u8::is_ascii_whitespace) {
        return Some("empty".into());
    }
    if f.content.contains(&0) || std::str::from_utf8(&f.content).is_err() {
        return Some("not text".into());
    }
    // AIPerf's multi-run summaries (`--num-profile-runs`): the trials are read instead, and
    // their intervals computed as for every repeated level. A sweep aggregate is read only
    // when the import has no per-level exports (it is then the whole sweep).
    let per_level = names.iter().any(|n| bundle::base_name(n) == "profile_export_aiperf.json");
    for kind in ["aggregate", "sweep", "collated"] {
        if base.starts_with(&format!("profile_export_aiperf_{kind}.")) && (kind != "sweep" || per_level) {
            return Some(format!(
                "AIPerf's {kind} summary of the trials: the trials themselves are read (each profile_export_aiperf.json)"
            ));
        }
    }
    // Of a sweep aggregate's two forms, the JSON (full digits) is read; the CSV repeats it.
    if base == "profile_export_aiperf_sweep.csv"
        && names.iter().any(|n| {
            bundle::folder_of(n) == bundle::folder_of(name)
                && bundle::base_name(n) == "profile_export_aiperf_sweep.json"
        })
    {
        return Some("the CSV form of the sweep aggregate beside it, whose JSON is read".into());
    }
    // An MLPerf results tree's accuracy runs and compliance audits measure no performance.
    if let Some(place) = formats::mlperf::tree::place(name) {
        if !place.performance && !base.ends_with(".json") {
            return Some(format!(
                "MLPerf's {} run of {}: not a performance measurement",
                if name.contains("/compliance/") { "compliance" } else { "accuracy" },
                place.key()
            ));
        }
    }
    // vLLM's `bench sweep serve` writes a summary.json that lists the run=N.json beside it.
    if base == "summary.json" {
        let dir = bundle::folder_of(name);
        let repeats = names.iter().filter(|n| bundle::folder_of(n) == dir && formats::vllm_family::is_sweep_repeat(n));
        if repeats.count() > 0 {
            return Some("lists the run=N.json files beside it, which are read as the trials".into());
        }
    }
    None
}

/// Checks and parses every file (opening archives, skipping what in a folder is not a
/// result) and groups them into runs: what the upload preview shows.
pub fn plan(mut req: ImportRequest, max_bytes: usize) -> Result<Plan, ImportError> {
    let files = std::mem::take(&mut req.files);
    if files.is_empty() {
        return Err(ImportError::NoInput);
    }
    if files.len() > MAX_FILES {
        return Err(ImportError::TooManyFiles { files: files.len(), limit: MAX_FILES });
    }
    let files = bundle::expand(files, max_bytes, &bundle::BOUNDS)?;
    let from_folders = files.iter().any(bundle::in_folder);
    let names: Vec<String> = files.iter().filter_map(|f| f.file_name.clone()).collect();
    let name_refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let total_files = files.len();
    let (read, skipped, companions) = sort_files(files, &req, &name_refs, max_bytes)?;
    if read.is_empty() && !skipped.is_empty() {
        let list: Vec<String> = skipped.iter().take(3).map(|s| format!("{}: {}", s.file, s.reason)).collect();
        let more = if skipped.len() > 3 { format!("; and {} more", skipped.len() - 3) } else { String::new() };
        return Err(ImportError::NothingRead { files: total_files, skipped: format!("{}{more}", list.join("; ")) });
    }
    let mut read = companions::attach(read, companions, &req.facts)?;
    tag_folder_settings(&mut read);
    companions::place_mlperf(&mut read);
    // A file that holds several runs (llama-bench's tests) makes an experiment as a folder does.
    let split = read.iter().any(|r| r.parsed.title.is_some());
    let groups = group_files(read, req.group);
    let several = groups.len() > 1;
    let experiment = ((from_folders || split) && several).then(|| experiment_name(&req, &names));
    // In an experiment each run is named after its own folder (the setting it measured).
    let common = experiment.as_ref().map(|_| common_folder(&names));
    let runs = groups
        .into_iter()
        .map(|g| {
            let folder_name = common.as_deref().and_then(|c| {
                let dir = g.first()?.input.file_name.as_deref().map(bundle::folder_of)?;
                let rel = dir.strip_prefix(c).unwrap_or(dir).trim_start_matches('/');
                (!rel.is_empty()).then(|| rel.to_owned())
            });
            build_run(g, &req, several, folder_name)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Plan { runs, skipped, experiment })
}

/// Each file read as a result, kept as a companion of one, or (in a folder or archive)
/// skipped with its reason. `names`: every file's name (see [`skip_reason`]).
fn sort_files(
    files: Vec<InputFile>,
    req: &ImportRequest,
    names: &[&str],
    max_bytes: usize,
) -> Result<(Vec<ReadFile>, Vec<Skipped>, Companions), ImportError> {
    let mut skipped = Vec::new();
    let mut read = Vec::with_capacity(files.len());
    let mut companions = Companions::default();
    for f in files {
        let lenient = bundle::in_folder(&f);
        if lenient {
            if let Some(reason) = skip_reason(&f, names) {
                skipped.push(Skipped { file: f.display_name(), reason });
                continue;
            }
        }
        if req.format.is_none_or(|f| f == SourceFormat::GenaiBench) {
            let text = text_of(&f, max_bytes)?;
            if formats::genai_bench::sniff_metadata(&text) {
                let m = formats::genai_bench::parse_metadata(&text).map_err(|source| ImportError::Parse {
                    file: f.display_name(),
                    format: "genai-bench experiment metadata",
                    source,
                })?;
                companions.genai_metadata.push((f.display_name(), m));
                continue;
            }
        }
        if req.format.is_none_or(|f| f == SourceFormat::Aiperf) {
            let text = text_of(&f, max_bytes)?;
            if formats::aiperf_server_metrics::sniff(&text) {
                let m = formats::aiperf_server_metrics::parse(&text).map_err(|source| ImportError::Parse {
                    file: f.display_name(),
                    format: "AIPerf server metrics",
                    source,
                })?;
                companions.server_metrics.push((f, m));
                continue;
            }
            if formats::aiperf_gpu_telemetry::sniff(&text) {
                let g = formats::aiperf_gpu_telemetry::parse(&text).map_err(|source| ImportError::Parse {
                    file: f.display_name(),
                    format: "AIPerf GPU telemetry",
                    source,
                })?;
                companions.gpu_telemetry.push((f, g));
                continue;
            }
        }
        if req.format.is_none_or(|f| f == SourceFormat::Mlperf)
            && formats::mlperf::tree::is_system_description(&text_of(&f, max_bytes)?)
        {
            let facts = formats::mlperf::tree::system_facts(&text_of(&f, max_bytes)?);
            companions.mlperf_systems.push((f.display_name(), f.file_name.clone().unwrap_or_default(), facts));
            continue;
        }
        if formats::prometheus_scrape::sniff(&text_of(&f, max_bytes)?) {
            let s = formats::prometheus_scrape::parse(&text_of(&f, max_bytes)?).map_err(|source| {
                ImportError::Parse { file: f.display_name(), format: "saved Prometheus scrape", source }
            })?;
            companions.scrapes.push((f, s));
            continue;
        }
        if lenient && req.format.is_none() && formats::detect(&text_of(&f, max_bytes)?).is_none() {
            skipped.push(Skipped { file: f.display_name(), reason: "not a result file Plateau reads".into() });
            continue;
        }
        read.extend(read_file(f, req.format, req.concurrency, max_bytes)?);
    }
    Ok((read, skipped, companions))
}

/// A folder's name can state the settings under test (vLLM's sweep folders): they
/// become `key=value` tags, the columns of the experiment's comparison. Tags Plateau builds
/// itself are cut to fit, never a reason to refuse the import: each to the tag bound with
/// "…", and no more than the run's room for tags.
fn tag_folder_settings(read: &mut [ReadFile]) {
    use app::domain::model::text::{truncate, MAX_TAGS, MAX_TAG_CHARS};
    for r in read.iter_mut() {
        let folder = r.input.file_name.as_deref().map(bundle::folder_of).unwrap_or("");
        let base = bundle::base_name(folder);
        let mut settings = formats::vllm_family::sweep_settings(base);
        if settings.is_empty() {
            settings = key_value_folder(base);
        }
        for (k, v) in settings {
            if r.parsed.facts.tags.len() >= MAX_TAGS {
                break;
            }
            let tag = truncate(&format!("{k}={v}").to_lowercase(), MAX_TAG_CHARS);
            if !r.parsed.facts.tags.contains(&tag) {
                r.parsed.facts.tags.push(tag);
            }
        }
    }
}

/// The settings a folder's name states when it is nothing but `key=value` pairs joined by
/// commas (`max_num_seqs=64`, `tp=2,max_num_seqs=64`: one folder per setting, as Hydra's
/// multirun and many hand-made sweeps name them); anything else states none.
fn key_value_folder(name: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for part in name.split(',') {
        let Some((k, v)) = part.split_once('=') else { return Vec::new() };
        let key_ok =
            !k.is_empty() && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'-');
        if !key_ok || v.is_empty() || v.contains('=') {
            return Vec::new();
        }
        out.push((k.to_owned(), v.to_owned()));
    }
    out
}

/// The files grouped into runs (`group`: files of one sweep together, else each apart).
fn group_files(read: Vec<ReadFile>, group: bool) -> Vec<Vec<ReadFile>> {
    // Single-level files of one format and one model are the levels of one sweep (vLLM and
    // InferenceX write one file per concurrency, AIPerf one folder per concurrency): they
    // become one run. Files whose folder names a setting under test (vLLM's sweep folders)
    // join only files of the same settings.
    let mut groups: Vec<Vec<ReadFile>> = Vec::new();
    // A multi-level file joins only files that measured the very same loads: repeats of one
    // sweep (GuideLLM or benchmark.py run again with the same settings), whose levels then
    // become trials. Plateau's own exports are whole runs and never join.
    let loads = |r: &ReadFile| {
        let mut l: Vec<(&'static str, u64)> =
            r.parsed.levels.iter().map(|l| (l.point.load_kind.as_str(), l.point.load_value.to_bits())).collect();
        l.sort_unstable();
        l
    };
    for f in read {
        let joinable = group && f.parsed.restored.is_none() && f.format != SourceFormat::Plateau;
        if !joinable {
            groups.push(vec![f]);
            continue;
        }
        let settings = |r: &ReadFile| {
            let folder = r.input.file_name.as_deref().map(bundle::folder_of).unwrap_or("");
            formats::vllm_family::sweep_settings(bundle::base_name(folder))
        };
        let single = f.parsed.levels.len() == 1;
        let slot = groups.iter_mut().find(|g| {
            // A group holds single-level files (the levels of one sweep), or multi-level files
            // of the same loads (its repeats).
            let same_shape = if single {
                g.iter().all(|o| o.parsed.levels.len() == 1)
            } else {
                g.iter().all(|o| o.parsed.restored.is_none() && loads(o) == loads(&f))
            };
            same_shape
                && g.first().is_some_and(|o| {
                    let (a, b) = (&o.parsed.facts.model, &f.parsed.facts.model);
                    o.format == f.format
                        && (a == b || a.is_none() || b.is_none())
                        && o.parsed.workload == f.parsed.workload
                        && settings(o) == settings(&f)
                })
        });
        match slot {
            Some(g) => g.push(f),
            None => groups.push(vec![f]),
        }
    }
    groups
}

/// The folder every name is in (`""` when they share none).
fn common_folder(names: &[String]) -> String {
    let mut iter = names.iter().map(|n| bundle::folder_of(n));
    let Some(first) = iter.next() else { return String::new() };
    let mut common: Vec<&str> = first.split('/').filter(|p| !p.is_empty()).collect();
    for dir in iter {
        let parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
        let same = common.iter().zip(&parts).take_while(|(a, b)| a == b).count();
        common.truncate(same);
    }
    common.join("/")
}

/// The experiment's name: the one the user gave, else the folder that holds every file.
fn experiment_name(req: &ImportRequest, names: &[String]) -> String {
    if let Some(n) = req.name.as_deref().map(str::trim).filter(|n| !n.is_empty()) {
        return n.to_owned();
    }
    let common = common_folder(names);
    let last = bundle::base_name(&common);
    let name =
        if last.is_empty() { format!("experiment of {} files", names.len()) } else { printable(last).into_owned() };
    text::truncate(&name, text::MAX_NAME_CHARS)
}

/// [`plan`] on the blocking pool ([`crate::heavy`]): parsing a large upload never holds up
/// the async runtime, and a parser panic becomes an error, not a dropped connection.
pub async fn plan_in_background(req: ImportRequest, max_bytes: usize) -> Result<Plan, ImportError> {
    crate::heavy::run(move || plan(req, max_bytes)).await.unwrap_or_else(|e| Err(ImportError::Internal(e)))
}
