//! Companion files: what an import reads along with result files and attaches to their
//! levels — a file of unknown load folded into the one level beside it, saved Prometheus
//! scrapes, AIPerf's server metrics and GPU telemetry, genai-bench's experiment metadata.

use super::bundle;
use super::error::ImportError;
use super::formats;
use super::formats::aiperf_gpu_telemetry::GpuTelemetry;
use super::formats::aiperf_server_metrics::ServerMetrics;
use super::formats::prometheus_scrape::SavedScrape;
use super::read::ReadFile;
use super::request::InputFile;
use app::domain::{NewLevel, RunFacts, SourceFile, SourceFormat};

/// The companion files of an import, read, waiting for the levels they belong to.
#[derive(Default)]
pub(super) struct Companions {
    pub(super) server_metrics: Vec<(InputFile, ServerMetrics)>,
    pub(super) gpu_telemetry: Vec<(InputFile, GpuTelemetry)>,
    /// genai-bench's experiment metadata: (file name, the facts it states).
    pub(super) genai_metadata: Vec<(String, RunFacts)>,
    pub(super) scrapes: Vec<(InputFile, SavedScrape)>,
    /// An MLPerf results tree's system descriptions: (file name shown, path, the facts).
    pub(super) mlperf_systems: Vec<(String, String, Option<RunFacts>)>,
}

/// Every companion attached to the levels of `read` (`user`: the facts the user stated,
/// which the GPU telemetry does not override).
pub(super) fn attach(read: Vec<ReadFile>, c: Companions, user: &RunFacts) -> Result<Vec<ReadFile>, ImportError> {
    let Companions { mut server_metrics, gpu_telemetry, genai_metadata, scrapes, mlperf_systems } = c;
    let mut read = fold_companions(read);
    read = fold_mlperf_details(read);
    read = fold_trtllm_logs(read);
    apply_mlperf_systems(&mut read, &mlperf_systems)?;
    // The server metrics first: they go to a level without telemetry. Of one benchmark's
    // several exports the richest is read (time series, then statistics, then CSV).
    server_metrics.sort_by_key(|(f, _)| {
        std::str::from_utf8(&f.content).map_or(u8::MAX, formats::aiperf_server_metrics::precedence)
    });
    for (f, m) in server_metrics {
        attach_server_metrics(&mut read, f, m)?;
    }
    for (f, g) in gpu_telemetry {
        attach_gpu_telemetry(&mut read, f, g, user)?;
    }
    for (name, facts) in genai_metadata {
        apply_genai_metadata(&mut read, &name, &facts)?;
    }
    attach_scrapes(&mut read, scrapes)?;
    Ok(read)
}

/// A file whose one level has no load (AIPerf's CSV export or per-request records, LLMPerf's
/// individual responses) read in the same folder as exactly one file of the same tool with
/// one level of known load (AIPerf's `profile_export_aiperf.json`) is part of that level:
/// its requests join it, the statistics the level lacks come from it, and it is kept with
/// the level's run. Elsewhere it stays as it is (the user's concurrency, or the run-level
/// fold, places it).
fn fold_companions(read: Vec<ReadFile>) -> Vec<ReadFile> {
    let folder = |r: &ReadFile| r.input.file_name.as_deref().map(bundle::folder_of).unwrap_or("").to_owned();
    let unknown = |r: &ReadFile| matches!(r.parsed.levels.as_slice(), [l] if l.point.load_value.is_nan() || l.point.load_value <= 0.0);
    let known = |r: &ReadFile| matches!(r.parsed.levels.as_slice(), [l] if l.point.load_value > 0.0);
    let mut slots: Vec<Option<ReadFile>> = read.into_iter().map(Some).collect();
    for i in 0..slots.len() {
        let Some(c) = slots.get(i).and_then(Option::as_ref).filter(|c| unknown(c)) else { continue };
        let dir = folder(c);
        let mut targets = slots.iter().enumerate().filter_map(|(j, r)| {
            r.as_ref().filter(|r| r.format == c.format && known(r) && folder(r) == dir).map(|_| j)
        });
        let (Some(t), None) = (targets.next(), targets.next()) else { continue };
        let Some(c) = slots.get_mut(i).and_then(Option::take) else { continue };
        let Some(target) = slots.get_mut(t).and_then(Option::as_mut) else { continue };
        let name = c.input.display_name();
        let Some(level) = target.parsed.levels.first_mut() else { continue };
        for (from, l) in c.parsed.levels.into_iter().enumerate() {
            let mut filled = 0usize;
            for m in l.point.measures {
                if level.point.get(m.metric, m.stat).is_none() {
                    level.point.set(m.metric, m.stat, m.value);
                    filled += 1;
                }
            }
            let joined = l.requests.len();
            level.requests.extend(l.requests);
            if level.telemetry.is_none() {
                level.telemetry = l.telemetry;
            }
            let target_name = target.input.display_name();
            target.parsed.warnings.push(format!(
                "{name}: read as part of {target_name}'s level (it records no load of its own){}{}",
                if joined > 0 { format!("; its {joined} requests joined the level") } else { String::new() },
                if filled > 0 && from == 0 {
                    format!("; {filled} statistics the level lacked came from it")
                } else {
                    String::new()
                },
            ));
        }
        // Its warnings about the missing load are answered; the others still hold.
        target.parsed.warnings.extend(
            c.parsed
                .warnings
                .into_iter()
                .filter(|w| !w.starts_with("concurrency not recorded"))
                .map(|w| format!("{name}: {w}")),
        );
        for note in c.parsed.definitions.notes {
            if !target.parsed.definitions.notes.contains(&note) {
                target.parsed.definitions.notes.push(note);
            }
        }
        target.extra.push(SourceFile { file_name: c.input.file_name, format: c.format, content: c.input.content });
        target.extra.extend(c.extra);
    }
    slots.into_iter().flatten().collect()
}

/// An MLPerf detail log read in the same folder as the summary of the same run adds to
/// the summary's level only what the summary lacks (the requests, the LoadGen version, why it
/// is INVALID), and is kept with its run; elsewhere it is a level of its own.
fn fold_mlperf_details(read: Vec<ReadFile>) -> Vec<ReadFile> {
    use formats::mlperf::Kind;
    let folder = |r: &ReadFile| r.input.file_name.as_deref().map(bundle::folder_of).unwrap_or("").to_owned();
    let kind = |r: &ReadFile| {
        (r.format == SourceFormat::Mlperf)
            .then(|| std::str::from_utf8(&r.input.content).ok().and_then(formats::mlperf::kind))
            .flatten()
    };
    let mut slots: Vec<Option<ReadFile>> = read.into_iter().map(Some).collect();
    for i in 0..slots.len() {
        let Some(d) = slots.get(i).and_then(Option::as_ref).filter(|r| kind(r) == Some(Kind::Detail)) else { continue };
        let dir = folder(d);
        let mut targets = slots
            .iter()
            .enumerate()
            .filter_map(|(j, r)| r.as_ref().filter(|r| kind(r) == Some(Kind::Summary) && folder(r) == dir).map(|_| j));
        let (Some(t), None) = (targets.next(), targets.next()) else { continue };
        let Some(d) = slots.get_mut(i).and_then(Option::take) else { continue };
        let Some(target) = slots.get_mut(t).and_then(Option::as_mut) else { continue };
        if formats::mlperf::complete_summary(&mut target.parsed, &d.parsed) {
            target.parsed.warnings.push(format!(
                "{}: read as part of {} (the same run's detail log: the summary's numbers are kept)",
                d.input.display_name(),
                target.input.display_name()
            ));
            target.extra.push(SourceFile { file_name: d.input.file_name, format: d.format, content: d.input.content });
        } else if let Some(slot) = slots.get_mut(i) {
            *slot = Some(d);
        }
    }
    slots.into_iter().flatten().collect()
}

/// trtllm-bench's console log read in the same folder as the `--report_json` of the same
/// run (one level each) is that run's printed report: the JSON's full digits are kept, the
/// log is kept with the run as a file of it.
fn fold_trtllm_logs(read: Vec<ReadFile>) -> Vec<ReadFile> {
    let folder = |r: &ReadFile| r.input.file_name.as_deref().map(bundle::folder_of).unwrap_or("").to_owned();
    let json = |r: &ReadFile| r.input.content.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
    let one = |r: &ReadFile| r.format == SourceFormat::TrtllmBench && r.parsed.levels.len() == 1;
    let mut slots: Vec<Option<ReadFile>> = read.into_iter().map(Some).collect();
    for i in 0..slots.len() {
        let Some(log) = slots.get(i).and_then(Option::as_ref).filter(|r| one(r) && !json(r)) else { continue };
        let dir = folder(log);
        let mut targets = slots
            .iter()
            .enumerate()
            .filter_map(|(j, r)| r.as_ref().filter(|r| one(r) && json(r) && folder(r) == dir).map(|_| j));
        let (Some(t), None) = (targets.next(), targets.next()) else { continue };
        let Some(log) = slots.get_mut(i).and_then(Option::take) else { continue };
        let Some(target) = slots.get_mut(t).and_then(Option::as_mut) else { continue };
        target.parsed.warnings.push(format!(
            "{}: the printed report of {}'s run (the JSON's full digits are kept)",
            log.input.display_name(),
            target.input.display_name()
        ));
        target.extra.push(SourceFile {
            file_name: log.input.file_name,
            format: log.format,
            content: log.input.content,
        });
    }
    slots.into_iter().flatten().collect()
}

/// Gives the MLPerf runs of a results tree the GPUs and engine of their system's
/// description (`systems/<system>.json`), where neither the file nor the user states them.
fn apply_mlperf_systems(
    read: &mut [ReadFile],
    systems: &[(String, String, Option<RunFacts>)],
) -> Result<(), ImportError> {
    for (name, path, facts) in systems {
        let Some(facts) = facts else {
            return Err(ImportError::Field {
                field: "files",
                message: format!("{name}: an MLPerf system description that is not a JSON object"),
            });
        };
        let system = bundle::base_name(path).trim_end_matches(".json");
        let mut used = false;
        for r in read.iter_mut().filter(|r| r.format == SourceFormat::Mlperf) {
            let Some(place) = r.input.file_name.as_deref().and_then(formats::mlperf::tree::place) else { continue };
            if place.system != system {
                continue;
            }
            used = true;
            let f = &mut r.parsed.facts;
            if f.gpu_type.is_none() && f.gpu_count.is_none() {
                f.gpu_type = facts.gpu_type.clone();
                f.gpu_count = facts.gpu_count;
            }
            f.engine = f.engine.take().or_else(|| facts.engine.clone());
            r.parsed.warnings.push(format!("{name}: GPUs and framework read from the system's description"));
        }
        // A submission describes all its systems; a description of a system whose results
        // were not imported is left aside, unless no MLPerf result came with it at all.
        if !used && !read.iter().any(|r| r.format == SourceFormat::Mlperf) {
            return Err(ImportError::Field {
                field: "files",
                message: format!(
                    "{name}: an MLPerf system description needs the results of system `{system}` in the same import"
                ),
            });
        }
    }
    Ok(())
}

/// Places each MLPerf file by its path in a results tree (submitter, system, benchmark,
/// scenario: facts and tags), and keeps each run of the tree apart: files group into one run
/// only when they are of the same system, benchmark and scenario; a file outside a tree is
/// a run of its own.
pub(super) fn place_mlperf(read: &mut [ReadFile]) {
    for r in read.iter_mut().filter(|r| r.format == SourceFormat::Mlperf) {
        let name = r.input.file_name.clone().unwrap_or_default();
        match formats::mlperf::tree::place(&name) {
            Some(place) => {
                formats::mlperf::tree::apply(&place, &mut r.parsed.facts);
                r.parsed.workload = Some(place.key());
            }
            None => r.parsed.workload = Some(name),
        }
    }
}

/// Makes saved Prometheus scrapes the server metrics of the level they were taken at: the
/// one level of the result file in the scrape's folder (when that folder holds exactly one
/// one-level result file), else the one level of the whole import. Scrapes of one level
/// become its telemetry together (before and after: what grew between them); the files
/// are kept with the level's run. A level that already has server metrics (AIPerf's
/// export) is not given a second set.
fn attach_scrapes(read: &mut [ReadFile], scrapes: Vec<(InputFile, SavedScrape)>) -> Result<(), ImportError> {
    let folder = |name: &Option<String>| name.as_deref().map(bundle::folder_of).unwrap_or("").to_owned();
    let all_levels: usize = read.iter().map(|r| r.parsed.levels.len()).sum();
    let mut targets: Vec<(usize, Vec<(InputFile, SavedScrape)>)> = Vec::new();
    for (f, s) in scrapes {
        let dir = folder(&f.file_name);
        let beside: Vec<usize> =
            (0..read.len()).filter(|&i| read.get(i).is_some_and(|r| folder(&r.input.file_name) == dir)).collect();
        let target = match beside.as_slice() {
            [i] if read.get(*i).is_some_and(|r| r.parsed.levels.len() == 1) => Some(*i),
            [] if all_levels == 1 => read.iter().position(|r| r.parsed.levels.len() == 1),
            _ => None,
        };
        let Some(i) = target else {
            return Err(ImportError::Field {
                field: "files",
                message: format!(
                    "{}: a saved Prometheus scrape is the server metrics of one level: import it with that level's \
                     result file, the two alone in their folder (beside it: {} result files; in the import: \
                     {all_levels} levels)",
                    f.display_name(),
                    beside.len()
                ),
            });
        };
        match targets.iter_mut().find(|(t, _)| *t == i) {
            Some((_, list)) => list.push((f, s)),
            None => targets.push((i, vec![(f, s)])),
        }
    }
    for (i, list) in targets {
        let Some(r) = read.get_mut(i) else { continue };
        let names: Vec<String> = list.iter().map(|(f, _)| f.display_name()).collect();
        let Some(level) = r.parsed.levels.first_mut() else { continue };
        if level.telemetry.is_some() {
            return Err(ImportError::Field {
                field: "files",
                message: format!(
                    "{}: the level of {} already has server metrics from another file of this import",
                    names.join(", "),
                    r.input.display_name()
                ),
            });
        }
        let (files, saved): (Vec<InputFile>, Vec<_>) = list.into_iter().unzip();
        let (telemetry, warnings) = formats::prometheus_scrape::telemetry(saved);
        telemetry.check().map_err(|e| ImportError::Field {
            field: "files",
            message: format!("{}: saved Prometheus scrape: {e}", names.join(", ")),
        })?;
        level.telemetry = Some(telemetry);
        let label = names.join(", ");
        r.parsed.warnings.push(format!("{label}: read as the server metrics of this level (a saved scrape)"));
        r.parsed.warnings.extend(warnings.into_iter().map(|w| format!("{label}: {w}")));
        let format = r.format;
        r.extra.extend(files.into_iter().map(|f| SourceFile { file_name: f.file_name, format, content: f.content }));
    }
    Ok(())
}

/// Fills the facts genai-bench's run files do not state (model, engine, GPU) from the
/// experiment's metadata `facts`, read from the file `name`. The file is not kept with the
/// runs: its command line and auth config can hold an API key.
fn apply_genai_metadata(read: &mut [ReadFile], name: &str, facts: &RunFacts) -> Result<(), ImportError> {
    let mut runs = read.iter_mut().filter(|r| r.format == SourceFormat::GenaiBench).peekable();
    if runs.peek().is_none() {
        return Err(ImportError::Field {
            field: "files",
            message: format!(
                "{name}: genai-bench's experiment metadata needs the run files of its experiment in the same import"
            ),
        });
    }
    for r in runs {
        let f = &mut r.parsed.facts;
        f.model = f.model.take().or_else(|| facts.model.clone());
        f.engine = f.engine.take().or_else(|| facts.engine.clone());
        f.engine_version = f.engine_version.take().or_else(|| facts.engine_version.clone());
        if f.gpu_type.is_none() && f.gpu_count.is_none() {
            f.gpu_type = facts.gpu_type.clone();
            f.gpu_count = facts.gpu_count;
        }
        r.parsed.warnings.push(format!(
            "{name}: model, engine and GPU read from the experiment's metadata; the file is not kept (its command line can hold an API key)"
        ));
    }
    Ok(())
}

/// Makes AIPerf's server-metrics export `m` the telemetry of the AIPerf level of the same
/// benchmark (`benchmark_id`; else the AIPerf level of the same folder, else the only AIPerf
/// level of the import) and keeps the file with that level's run. A level that
/// already has server metrics (another export of the same scrapes, read first) keeps them:
/// the file is kept, not read again.
fn attach_server_metrics(read: &mut [ReadFile], f: InputFile, m: ServerMetrics) -> Result<(), ImportError> {
    let same = |l: &NewLevel| {
        m.benchmark_id.as_deref().is_some_and(|id| l.raw.get("benchmark_id").and_then(|v| v.as_str()) == Some(id))
    };
    let dir = f.file_name.as_deref().map(bundle::folder_of).unwrap_or("").to_owned();
    let in_dir = |r: &ReadFile| r.input.file_name.as_deref().map(bundle::folder_of).unwrap_or("") == dir;
    let aiperf = |r: &ReadFile| r.format == SourceFormat::Aiperf;
    let aiperf_levels = read.iter().filter(|r| aiperf(r)).map(|r| r.parsed.levels.len()).sum::<usize>();
    let beside: Vec<usize> = (0..read.len()).filter(|&i| read.get(i).is_some_and(|r| aiperf(r) && in_dir(r))).collect();
    let by_id = read.iter().enumerate().filter(|(_, r)| aiperf(r)).find_map(|(i, r)| {
        let j = r.parsed.levels.iter().position(same)?;
        Some((i, j))
    });
    let target = match (by_id, beside.as_slice()) {
        (Some(t), _) => Some(t),
        (None, [i]) if read.get(*i).is_some_and(|r| r.parsed.levels.len() == 1) => Some((*i, 0)),
        (None, _) if aiperf_levels == 1 => {
            read.iter().position(|r| aiperf(r) && r.parsed.levels.len() == 1).map(|i| (i, 0))
        }
        _ => None,
    };
    let Some((i, j)) = target else {
        return Err(ImportError::Field {
            field: "files",
            message: format!(
                "{}: AIPerf server metrics{} need the profile_export_aiperf.json of the same benchmark in the same import",
                f.display_name(),
                m.benchmark_id.as_deref().map(|id| format!(" of benchmark {id}")).unwrap_or_default()
            ),
        });
    };
    let Some(r) = read.get_mut(i) else { return Ok(()) };
    let name = f.display_name();
    match r.parsed.levels.get_mut(j) {
        Some(level) if level.telemetry.is_some() => {
            r.parsed.warnings.push(format!(
                "{name}: the same benchmark's server metrics were read from a richer export of this import; kept, not read"
            ));
        }
        Some(level) => {
            level.telemetry = Some(m.telemetry);
            r.parsed.warnings.extend(m.warnings.into_iter().map(|w| format!("{name}: {w}")));
        }
        None => {}
    }
    r.extra.push(SourceFile { file_name: f.file_name, format: SourceFormat::Aiperf, content: f.content });
    Ok(())
}

/// Adds AIPerf's GPU telemetry export `g` to the telemetry of the AIPerf level(s) of the same
/// run, by time: each level whose profiling window (`start_time`–`end_time`) holds some of
/// its samples gets those (the others are counted in a warning); without windows, or when no
/// window holds any sample (AIPerf writes them in its machine's local time, without a zone),
/// the only AIPerf level of the import gets the whole file. The file is kept with the first
/// such level's run, and the run's GPU count (distinct UUIDs) and type (the model name as
/// written) come from it when neither the result file nor the user states them.
fn attach_gpu_telemetry(
    read: &mut [ReadFile],
    f: InputFile,
    g: GpuTelemetry,
    user: &RunFacts,
) -> Result<(), ImportError> {
    use formats::aiperf_gpu_telemetry::{profile_window_ns, Window};
    let name = f.display_name();
    let refuse = |message: String| ImportError::Field { field: "files", message: format!("{name}: {message}") };
    // Every AIPerf level of the import: (file, level, profiling window).
    let levels: Vec<(usize, usize, Option<Window>)> = read
        .iter()
        .enumerate()
        .filter(|(_, r)| r.format == SourceFormat::Aiperf)
        .flat_map(|(i, r)| r.parsed.levels.iter().enumerate().map(move |(j, l)| (i, j, profile_window_ns(&l.raw))))
        .collect();
    if levels.is_empty() {
        return Err(refuse(
            "GPU telemetry needs the AIPerf result file of the same run in the same import (its profile_export_aiperf.json)"
                .into(),
        ));
    }
    let mut warnings = Vec::new();
    let holding: Vec<(usize, usize, Window)> =
        levels.iter().filter_map(|&(i, j, w)| Some((i, j, w.filter(|w| g.samples_in(*w) > 0)?))).collect();
    let targets: Vec<(usize, usize, Option<Window>)> = if !holding.is_empty() {
        let windows: Vec<Window> = holding.iter().map(|t| t.2).collect();
        let outside = g.samples_outside(&windows);
        if outside > 0 {
            warnings.push(format!(
                "{outside} of its {} GPU samples fall outside the AIPerf {} (warm-up, the run's end): not kept",
                g.samples.len(),
                if windows.len() == 1 { "level's profiling window" } else { "levels' profiling windows" }
            ));
        }
        holding.into_iter().map(|(i, j, w)| (i, j, Some(w))).collect()
    } else if let [(i, j, w)] = levels.as_slice() {
        if w.is_some() {
            warnings.push(
                "none of its GPU samples falls in the level's profiling window (start_time to end_time, which AIPerf \
                 writes without a time zone in the local time of the machine it ran on, read as UTC): the whole file \
                 is kept as the level's GPU telemetry, timed from its first sample"
                    .to_owned(),
            );
        }
        vec![(*i, *j, None)]
    } else if levels.iter().any(|l| l.2.is_some()) {
        return Err(refuse(format!(
            "none of its GPU samples falls in the profiling window of one of the {} AIPerf levels of this import; \
             import it with the profile_export_aiperf.json of the same run",
            levels.len()
        )));
    } else {
        return Err(refuse(format!(
            "the {} AIPerf levels of this import record no start_time and end_time to tell which one this GPU \
             telemetry belongs to; import it with the profile_export_aiperf.json of the same run",
            levels.len()
        )));
    };
    for &(i, j, w) in &targets {
        if let Some(level) = read.get_mut(i).and_then(|r| r.parsed.levels.get_mut(j)) {
            g.attach(&mut level.telemetry, w);
            if let Some(t) = &level.telemetry {
                t.check().map_err(|e| refuse(format!("GPU telemetry: {e}")))?;
            }
        }
    }
    // The run's GPUs, where nobody stated them.
    let count = i64::try_from(g.gpu_count()).ok();
    let mut files: Vec<usize> = targets.iter().map(|t| t.0).collect();
    files.dedup();
    let mut said = false;
    for (k, &i) in files.iter().enumerate() {
        let Some(r) = read.get_mut(i) else { continue };
        let facts = &mut r.parsed.facts;
        // The file's own warnings and the placing's go with the first level's file.
        let mut notes = if k == 0 { std::mem::take(&mut warnings) } else { Vec::new() };
        let mut from = Vec::new();
        match (user.gpu_count, facts.gpu_count, count) {
            (None, None, Some(n)) => {
                facts.gpu_count = Some(n);
                from.push(format!("GPU count {n} (distinct GPU UUIDs)"));
            }
            (None, Some(stated), Some(n)) if stated != n => notes.push(format!(
                "the GPU telemetry reports {n} GPUs (distinct UUIDs), the result file {stated}: kept {stated}"
            )),
            _ => {}
        }
        if let (None, None, Some(model)) = (&user.gpu_type, &facts.gpu_type, g.gpu_model()) {
            facts.gpu_type = Some(model.to_owned());
            from.push(format!("GPU type {model}"));
        }
        if !from.is_empty() && !said {
            said = true;
            notes.push(format!("{} from the GPU telemetry", from.join(" and ")));
        }
        let parsed_warnings = if k == 0 { g.warnings.clone() } else { Vec::new() };
        r.parsed.warnings.extend(parsed_warnings.into_iter().chain(notes).map(|w| format!("{name}: {w}")));
    }
    if let Some(r) = files.first().and_then(|&i| read.get_mut(i)) {
        r.extra.push(SourceFile { file_name: f.file_name, format: SourceFormat::Aiperf, content: f.content });
    }
    Ok(())
}
