//! One run made of a group of files: their levels folded (unknown loads into the known one)
//! and merged (repeats of a load become trials, a warm-up trial flagged), their facts
//! merged with the user's, its name, status and source; checked before anything is stored.

use super::error::ImportError;
use super::outcome::PreparedRun;
use super::read::{check_bounds, ReadFile};
use super::request::{printable, ImportRequest};
use app::domain::analysis::warmup::{self, WarmupRule};
use app::domain::model::annotations::{Anchor, AnnotationInput, AnnotationKind};
use app::domain::model::text;
use app::domain::{NewLevel, NewRun, Point, RunFacts, RunStatus, SourceFile, SourceFormat, SourceInfo};

/// The files of a run in a message: all names, or the first three and how many more.
pub(super) fn files_label(names: &[String]) -> String {
    match names {
        [a, b, c, _, ..] => format!("{a}, {b}, {c} and {} more files", names.len() - 3),
        _ => names.join(", "),
    }
}

/// `user` wins field by field; what the user left empty comes from the file.
pub(super) fn merge_facts(file: &RunFacts, user: &RunFacts) -> RunFacts {
    let mut tags = file.tags.clone();
    tags.extend(user.tags.iter().cloned());
    tags.sort();
    tags.dedup();
    RunFacts {
        model: user.model.clone().or_else(|| file.model.clone()),
        engine: user.engine.clone().or_else(|| file.engine.clone()),
        engine_version: user.engine_version.clone().or_else(|| file.engine_version.clone()),
        gpu_type: user.gpu_type.clone().or_else(|| file.gpu_type.clone()),
        gpu_count: user.gpu_count.or(file.gpu_count),
        endpoint_kind: user.endpoint_kind.or(file.endpoint_kind),
        max_tokens: user.max_tokens.or(file.max_tokens),
        prompt_tokens: user.prompt_tokens.or(file.prompt_tokens),
        tags,
        notes: if user.notes.is_empty() { file.notes.clone() } else { user.notes.clone() },
    }
}

/// Folds levels whose load is unknown into the one level of known load they belong to
/// (LLMPerf's individual responses with its summary): requests join, missing statistics fill.
fn fold_unknown_loads(levels: Vec<NewLevel>, files: &[String]) -> Result<Vec<NewLevel>, ImportError> {
    let (mut known, unknown): (Vec<NewLevel>, Vec<NewLevel>) =
        levels.into_iter().partition(|l| l.point.load_value > 0.0);
    if unknown.is_empty() {
        return Ok(known);
    }
    let file = files.join(", ");
    let [target] = known.as_mut_slice() else { return Err(ImportError::UnknownLoad { file }) };
    for u in unknown {
        for m in u.point.measures {
            if target.point.get(m.metric, m.stat).is_none() {
                target.point.set(m.metric, m.stat, m.value);
            }
        }
        target.requests.extend(u.requests);
    }
    Ok(known)
}

/// Levels at the same load from *different files* (sorted by load; each tagged with its
/// file) are repeats of one level — several result files of the same concurrency, one per
/// run of a tool — and become the trials of one level (`Point::from_trials`: each statistic
/// the trials' mean, every trial kept), their requests pooled and their raw fields listed;
/// each merge is named in a warning. Levels at the same load within one file are different
/// tests (a nightly file's models, say) and stay apart, with a warning — unless each
/// states its own `run_number` (vLLM's sweep summary: the list of a setting's repeats).
/// A first trial that `rule` judges a warm-up is kept, left out of the level's statistics,
/// and annotated.
fn merge_repeats(levels: Vec<(usize, NewLevel)>, rule: WarmupRule) -> Merged {
    let mut merged = Merged::default();
    let mut group: Vec<(usize, NewLevel)> = Vec::new();
    let same =
        |a: &NewLevel, b: &NewLevel| a.point.load_kind == b.point.load_kind && a.point.load_value == b.point.load_value;
    let run_number = |l: &NewLevel| l.raw.get("run_number").and_then(serde_json::Value::as_i64);
    let flush = |group: &mut Vec<(usize, NewLevel)>, m: &mut Merged| {
        let Some((_, first)) = group.first() else { return };
        let (load_kind, load) = (first.point.load_kind, first.point.load_value);
        let label = app::domain::model::level::load_label(load_kind, load);
        let mut files: Vec<usize> = group.iter().map(|(f, _)| *f).collect();
        files.sort_unstable();
        files.dedup();
        let mut numbers: Vec<Option<i64>> = group.iter().map(|(_, l)| run_number(l)).collect();
        numbers.sort_unstable();
        numbers.dedup();
        let numbered = numbers.len() == group.len() && numbers.iter().all(Option::is_some);
        if group.len() <= 1 || (files.len() < group.len() && !numbered) {
            if group.len() > 1 {
                m.notes.push(format!("{} levels at {label} in one file: kept apart", group.len()));
            }
            m.levels.extend(group.drain(..).map(|(_, l)| l));
            return;
        }
        // A level that is itself several trials brings each of them.
        let mut points = Vec::new();
        let mut nested = false;
        for (_, l) in group.iter() {
            if l.point.trials.is_empty() {
                points.push(Point { trials: Vec::new(), ..l.point.clone() });
            } else {
                nested = true;
                for t in &l.point.trials {
                    let mut p = Point::at(l.point.load_kind, l.point.load_value);
                    (p.requests_ok, p.requests_failed, p.wall_s) = (t.requests_ok, t.requests_failed, t.wall_s);
                    p.measures = t.measures.clone();
                    points.push(p);
                }
            }
        }
        m.notes.push(format!(
            "{label} was measured {} times: kept as {} trials of one level (statistics are their means)",
            group.len(),
            points.len()
        ));
        let warm = if nested { None } else { warmup::flag(&points, rule) };
        if let Some(why) = &warm {
            m.notes.push(format!(
                "{label}: {why}: flagged as a warm-up, kept, and left out of the level's statistics (warm-up rule `{}`)",
                rule.as_str()
            ));
            m.annotations.push(AnnotationInput {
                anchor: Anchor::Point { load_kind, load },
                kind: AnnotationKind::Outlier,
                effect: Default::default(),
                body: format!(
                    "Trial 1 of {} is a warm-up: {why}. It is kept with the level's trials and left out of its statistics.",
                    points.len()
                ),
                superseded_by: None,
                proposal_key: None,
                new_baseline: false,
            });
        }
        let telemetry = group.iter().find_map(|(_, l)| l.telemetry.clone());
        let raws: Vec<serde_json::Value> = group.iter_mut().map(|(_, l)| std::mem::take(&mut l.raw)).collect();
        let requests: Vec<_> = group.iter_mut().flat_map(|(_, l)| std::mem::take(&mut l.requests)).collect();
        let flagged: &[usize] = if warm.is_some() { &[0] } else { &[] };
        if let Some(point) = Point::from_trials_with_warmup(points, flagged) {
            m.levels.push(NewLevel { point, raw: serde_json::json!({ "trials": raws }), requests, telemetry });
        }
        group.clear();
    };
    for l in levels {
        if group.last().is_some_and(|(_, g)| !same(g, &l.1)) {
            flush(&mut group, &mut merged);
        }
        group.push(l);
    }
    flush(&mut group, &mut merged);
    merged
}

/// What [`merge_repeats`] made of a run's levels.
#[derive(Default)]
struct Merged {
    levels: Vec<NewLevel>,
    notes: Vec<String>,
    annotations: Vec<AnnotationInput>,
}

/// One run of `group`'s files. `several`: the import makes other runs too (names say
/// which file each warning is about); `folder`: the run's folder inside an experiment,
/// its default name.
pub(super) fn build_run(
    mut group: Vec<ReadFile>,
    req: &ImportRequest,
    several: bool,
    folder: Option<String>,
) -> Result<PreparedRun, ImportError> {
    let format = group.first().map_or(SourceFormat::Manual, |f| f.format);
    // The file that states the most facts speaks for the run.
    let file_facts = group
        .iter()
        .map(|f| f.parsed.facts.clone())
        .max_by_key(|f| {
            usize::from(f.model.is_some()) + usize::from(f.gpu_type.is_some()) + usize::from(f.engine.is_some())
        })
        .unwrap_or_default();
    let mut definitions = group.first().map(|f| f.parsed.definitions.clone()).unwrap_or_default();
    let names: Vec<String> = group.iter().map(|f| f.input.display_name()).collect();
    // A run that is one part of a file (a llama-bench test) is named after its part too.
    let title = group.first().and_then(|f| f.parsed.title.clone()).filter(|_| names.len() == 1);
    // A Plateau export brings back the run it holds: only when it is imported on its own.
    let restored = match group.as_mut_slice() {
        [one] => one.parsed.restored.take(),
        _ => None,
    };
    let mut warnings = Vec::new();
    let mut levels = Vec::new();
    let mut origins: Vec<usize> = Vec::new();
    let mut files = Vec::new();
    for (file_index, f) in group.into_iter().enumerate() {
        let name = f.input.display_name();
        warnings.extend(f.parsed.warnings.iter().map(|w| {
            if several || names.len() > 1 {
                format!("{name}: {w}")
            } else {
                w.clone()
            }
        }));
        for note in f.parsed.definitions.notes {
            if !definitions.notes.contains(&note) {
                definitions.notes.push(note);
            }
        }
        origins.extend(std::iter::repeat_n(file_index, f.parsed.levels.len()));
        levels.extend(f.parsed.levels);
        files.push(SourceFile { file_name: f.input.file_name, format: f.format, content: f.input.content });
        files.extend(f.extra);
    }
    // Which file each level came from (levels of unknown load fold into a known one).
    let origins: Vec<usize> =
        levels.iter().zip(origins).filter(|(l, _)| l.point.load_value > 0.0).map(|(_, o)| o).collect();
    let levels = fold_unknown_loads(levels, &names)?;
    check_bounds(&levels, || files_label(&names))?;
    // Load order, whatever order the files or their lines came in.
    let mut tagged: Vec<(usize, NewLevel)> = origins.into_iter().zip(levels).collect();
    tagged.sort_by(|(_, a), (_, b)| {
        (a.point.load_kind.as_str(), a.point.load_value)
            .partial_cmp(&(b.point.load_kind.as_str(), b.point.load_value))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let Merged { mut levels, notes: merged, annotations } = merge_repeats(tagged, req.warmup);
    warnings.extend(merged);
    levels.sort_by(|a, b| a.point.load_value.total_cmp(&b.point.load_value));
    let truncated = levels.iter().any(|l| l.point.truncated);
    // Labels Plateau derives from file names fit their bounds (cut, not refused: the user
    // never typed them); what a file states as such (a restored run's name) is checked below.
    let file_label = if names.len() == 1 { names.first().cloned() } else { Some(names.join(", ")) }
        .map(|l| text::truncate(&l, text::MAX_SOURCE_LABEL_CHARS));
    let folder_named = folder.is_some();
    let default_name = if names.len() == 1 {
        names.first().cloned().unwrap_or_default()
    } else {
        format!(
            "{} sweep ({} files)",
            file_facts.model.clone().unwrap_or_else(|| format.label().to_owned()),
            names.len()
        )
    };
    let default_name = folder.unwrap_or(default_name);
    let default_name = title.map_or(default_name.clone(), |t| format!("{default_name} · {t}"));
    let default_name = text::truncate(&printable(&default_name), text::MAX_NAME_CHARS);
    let default_name = restored.as_ref().map_or(default_name, |r| r.name.clone());
    let name = match req.name.as_deref().map(str::trim).filter(|n| !n.is_empty()) {
        // In an experiment the name given is the experiment's.
        Some(_) if folder_named => default_name,
        Some(n) if several => text::truncate(&format!("{n} · {default_name}"), text::MAX_NAME_CHARS),
        Some(n) => n.to_owned(),
        None => default_name,
    };
    let mut status = if truncated { RunStatus::Partial } else { RunStatus::Complete };
    let mut source =
        SourceInfo { format, file_name: file_label.filter(|_| files.iter().any(|f| f.file_name.is_some())) };
    if let Some(r) = restored {
        // A Plateau export brings back the run as it was, original files included.
        status = r.status;
        source = r.source;
        if !r.files.is_empty() {
            files = r.files;
        }
    }
    let run = NewRun { name, status, source, facts: merge_facts(&file_facts, &req.facts), definitions, levels, files };
    // Before anything is stored: the preview refuses it too, naming the file and field.
    app::domain::model::run::check_new_run(&run)
        .map_err(|source| ImportError::Text { file: files_label(&names), source })?;
    Ok(PreparedRun { run, warnings, annotations })
}
