//! Uploads waiting for the user to confirm them on the preview page.
//!
//! Held in memory, not in SQLite: nothing of an import reaches the database before the
//! user saves it, so an abandoned preview leaves nothing behind. Bounded in count, bytes
//! and age; the oldest entries go first.

use super::form::{ImportFields, Validate};
use super::{bundle, formats, plan, plan_in_background, ImportError, InputFile, Plan};
use app::api::ImportPreviews;
use app::domain::model::metrics::{Metric, Stat};
use app::domain::view::preview::{ImportPreview, PreviewFile, PreviewRun};
use app::domain::RunFacts;
use app::error::AppError;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long an upload waits for confirmation.
pub const TTL: Duration = Duration::from_secs(60 * 60);
/// At most this many uploads wait at once.
pub const MAX_ENTRIES: usize = 64;
/// At most this many bytes wait at once (all uploads together).
pub const MAX_BYTES: usize = 512 * 1024 * 1024;

struct Pending {
    created: Instant,
    files: Vec<InputFile>,
    fields: ImportFields,
}

/// The store. Cheap to share behind an `Arc`.
pub struct PendingImports {
    entries: Mutex<HashMap<String, Pending>>,
    max_file_bytes: usize,
}

fn token() -> String {
    use rand::Rng;
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut rng = rand::thread_rng();
    (0..20).map(|_| char::from(ALPHABET.get(rng.gen_range(0..ALPHABET.len())).copied().unwrap_or(b'x'))).collect()
}

impl PendingImports {
    pub fn new(max_file_bytes: usize) -> Self {
        Self { entries: Mutex::new(HashMap::new()), max_file_bytes }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Pending>> {
        // A panic while holding the lock cannot leave the map half-updated (every
        // operation is a single insert/remove), so a poisoned lock is still usable.
        self.entries.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Keeps an upload and returns its token.
    pub fn insert(&self, files: Vec<InputFile>, fields: ImportFields) -> String {
        let mut map = self.lock();
        map.retain(|_, p| p.created.elapsed() < TTL);
        let incoming: usize = files.iter().map(|f| f.content.len()).sum();
        loop {
            let total: usize = map.values().flat_map(|p| p.files.iter()).map(|f| f.content.len()).sum();
            if map.len() < MAX_ENTRIES && total + incoming <= MAX_BYTES {
                break;
            }
            let Some(oldest) = map.iter().min_by_key(|(_, p)| p.created).map(|(k, _)| k.clone()) else { break };
            map.remove(&oldest);
        }
        let t = token();
        map.insert(t.clone(), Pending { created: Instant::now(), files, fields });
        t
    }

    /// Replaces the fields of an upload (the user edited them on the preview page).
    pub fn set_fields(&self, token: &str, fields: ImportFields) -> bool {
        match self.lock().get_mut(token) {
            Some(p) => {
                p.fields = fields;
                true
            }
            None => false,
        }
    }

    /// The runs an upload would become with its current fields (parsed on the blocking
    /// pool, see [`crate::heavy`]).
    pub async fn prepare(&self, token: &str) -> Option<Result<Plan, ImportError>> {
        let (files, fields) = self.current(token)?;
        Some(match fields.into_request(files) {
            Ok(req) => plan_in_background(req, self.max_file_bytes).await,
            Err(e) => Err(e),
        })
    }

    /// A copy of an upload's files and fields.
    fn current(&self, token: &str) -> Option<(Vec<InputFile>, ImportFields)> {
        let map = self.lock();
        let p = map.get(token)?;
        Some((p.files.clone(), p.fields.clone()))
    }

    /// Forgets an upload (after it was saved).
    pub fn remove(&self, token: &str) {
        self.lock().remove(token);
    }
}

/// What a level set does not report, in words.
fn unknowns(points: &[app::domain::Point]) -> Vec<String> {
    let mut out = Vec::new();
    let all = |f: &dyn Fn(&app::domain::Point) -> bool| points.iter().all(f);
    if all(&|p| p.output_tok_s().is_none()) {
        out.push("no output throughput".to_owned());
    }
    for (metric, what) in [(Metric::Ttft, "no TTFT"), (Metric::E2e, "no request latency")] {
        if all(&|p| p.stats_of(metric).next().is_none()) {
            out.push(what.to_owned());
        }
    }
    if all(&|p| {
        p.stats_of(Metric::Tpot).next().is_none()
            && p.stats_of(Metric::ChunkGap).next().is_none()
            && p.stats_of(Metric::TpotInclTtft).next().is_none()
    }) {
        out.push("no per-token latency (TPOT / ITL)".to_owned());
    }
    if all(&|p| p.latency_ms(Stat::P99).is_none() && p.get(Metric::Ttft, Stat::P99).is_none()) {
        out.push("no p99 percentiles".to_owned());
    }
    if all(&|p| p.requests_failed.is_none()) {
        out.push("failed requests not counted".to_owned());
    }
    out
}

/// Fills empty fields with what the files of every run say alike, so the form shows it. A
/// fact the runs differ on (two models; an experiment's `max_num_seqs=128` and `=256`)
/// stays empty: what the form holds on save is applied to every run, and would otherwise
/// give them all the first run's value.
fn with_file_facts(mut v: ImportFields, runs: &[PreviewRun]) -> ImportFields {
    let Some((first, rest)) = runs.split_first() else { return v };
    let fill = |slot: &mut String, value: Option<String>| {
        if slot.trim().is_empty() {
            if let Some(x) = value {
                *slot = x;
            }
        }
    };
    fill(&mut v.model, shared(runs, |f| f.model.clone()));
    fill(&mut v.engine, shared(runs, |f| f.engine.clone()));
    fill(&mut v.engine_version, shared(runs, |f| f.engine_version.clone()));
    fill(&mut v.gpu, shared(runs, |f| f.gpu_type.clone()));
    fill(&mut v.gpu_count, shared(runs, |f| f.gpu_count.map(|n| n.to_string())));
    fill(&mut v.endpoint, shared(runs, |f| f.endpoint_kind.map(|e| e.as_str().to_owned())));
    fill(&mut v.max_tokens, shared(runs, |f| f.max_tokens.map(|n| n.to_string())));
    fill(&mut v.prompt_tokens, shared(runs, |f| f.prompt_tokens.map(|n| n.to_string())));
    // Tags add to each run's own: the form shows those every run has.
    let tags: Vec<&String> =
        first.facts.tags.iter().filter(|t| rest.iter().all(|r| r.facts.tags.contains(t))).collect();
    fill(&mut v.tags, (!tags.is_empty()).then(|| tags.iter().map(|t| t.as_str()).collect::<Vec<_>>().join(", ")));
    v
}

/// A fact every run states alike, if they do.
fn shared(runs: &[PreviewRun], get: impl Fn(&RunFacts) -> Option<String>) -> Option<String> {
    let mut values = runs.iter().map(|r| get(&r.facts));
    let first = values.next()??;
    values.all(|x| x.as_ref() == Some(&first)).then_some(first)
}

impl ImportPreviews for PendingImports {
    fn preview(&self, token: &str) -> app::api::PreviewFuture {
        let current = self.current(token);
        let (token, max_file_bytes) = (token.to_owned(), self.max_file_bytes);
        Box::pin(async move {
            let (files, fields) =
                current.ok_or_else(|| AppError::NotFound("this upload (it expired or was saved)".into()))?;
            // Detecting and parsing is the heavy part: off the request runtime.
            crate::heavy::run(move || preview_of(token, files, fields, max_file_bytes))
                .await
                .unwrap_or(Err(AppError::Internal))
        })
    }
}

/// What the preview page shows for an upload with these fields.
fn preview_of(
    token: String,
    files: Vec<InputFile>,
    fields: ImportFields,
    max_file_bytes: usize,
) -> Result<ImportPreview, AppError> {
    let view = ImportFields::shown(&fields);
    // Archives are listed by their members, each with its format or why it is skipped.
    let listed = bundle::expand(files.clone(), max_file_bytes, &bundle::BOUNDS).unwrap_or_else(|_| files.clone());
    let (runs, skipped, experiment, error) = match fields.into_request(files).and_then(|req| plan(req, max_file_bytes))
    {
        Ok(p) => (
            p.runs
                .into_iter()
                .map(|p| {
                    let points: Vec<_> = p.run.levels.iter().map(|l| l.point.clone()).collect();
                    PreviewRun {
                        name: p.run.name,
                        format: p.run.source.format,
                        file_names: p
                            .run
                            .files
                            .iter()
                            .map(|f| f.file_name.clone().unwrap_or_else(|| "pasted text".into()))
                            .collect(),
                        facts: p.run.facts,
                        definitions: p.run.definitions,
                        unknown: unknowns(&points),
                        points,
                        warnings: p.warnings,
                    }
                })
                .collect(),
            p.skipped,
            p.experiment,
            None,
        ),
        Err(e) => (Vec::new(), Vec::new(), None, Some(e.to_string())),
    };
    let preview_files = listed
        .iter()
        .map(|f| {
            let name = f.display_name();
            PreviewFile {
                skipped: skipped.iter().find(|s| s.file == name).map(|s| s.reason.clone()),
                name,
                size_bytes: f.content.len() as i64,
                format: std::str::from_utf8(&f.content).ok().and_then(formats::detect),
            }
        })
        .collect();
    let fields = with_file_facts(view, &runs);
    Ok(ImportPreview { token, files: preview_files, error, runs, fields, experiment })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn story() -> InputFile {
        InputFile {
            file_name: Some("s.txt".into()),
            content: b"C= 1 | 1/ 1 ok (0 err) | wall= 2.1s | 61.3 tok/s | lat avg= 2.09 p50= 2.09 p99= 2.09".to_vec(),
        }
    }

    #[tokio::test]
    async fn preview_shows_runs_unknowns_and_fields() {
        let store = PendingImports::new(1 << 20);
        let fields = ImportFields { model: "typed".into(), ..ImportFields::default() };
        let t = store.insert(vec![story()], fields);
        let p = store.preview(&t).await.unwrap();
        assert_eq!(p.files[0].format, Some(app::domain::SourceFormat::BenchmarkPy));
        assert_eq!(p.runs.len(), 1);
        assert_eq!(p.runs[0].points.len(), 1);
        assert!(p.runs[0].unknown.contains(&"no TTFT".to_owned()));
        assert_eq!(p.fields.model, "typed");
        assert!(p.error.is_none());
        store.remove(&t);
        assert!(matches!(store.preview(&t).await, Err(AppError::NotFound(_))));
    }

    #[tokio::test]
    async fn the_form_shows_only_the_facts_every_run_shares() {
        // Two setting folders: the setting that differs must not reach the form, whose
        // values are applied to every run on save.
        let store = PendingImports::new(1 << 20);
        let at = |folder: &str| InputFile { file_name: Some(format!("sweep/{folder}/s.txt")), ..story() };
        let files = vec![
            at("SERVE--max_num_seqs=128-BENCH--request_rate=16"),
            at("SERVE--max_num_seqs=256-BENCH--request_rate=16"),
        ];
        let t = store.insert(files, ImportFields::default());
        let p = store.preview(&t).await.unwrap();
        assert_eq!(p.runs.len(), 2);
        assert_eq!(p.experiment.as_deref(), Some("sweep"));
        assert_eq!(p.fields.tags, "request_rate=16");
        let tags: Vec<_> = p.runs.iter().map(|r| r.facts.tags.join(",")).collect();
        assert_eq!(tags, ["max_num_seqs=128,request_rate=16", "max_num_seqs=256,request_rate=16"]);
    }

    #[tokio::test]
    async fn a_bad_file_shows_its_error_in_the_preview() {
        let store = PendingImports::new(1 << 20);
        let t = store.insert(
            vec![InputFile { file_name: Some("x.bin".into()), content: vec![0, 1, 2] }],
            ImportFields::default(),
        );
        let p = store.preview(&t).await.unwrap();
        assert!(p.error.unwrap().contains("x.bin: this is not text"));
        assert!(p.runs.is_empty());
    }

    #[tokio::test]
    async fn the_store_is_bounded() {
        let store = PendingImports::new(1 << 20);
        let first = store.insert(vec![story()], ImportFields::default());
        for _ in 0..MAX_ENTRIES {
            store.insert(vec![story()], ImportFields::default());
        }
        assert!(store.preview(&first).await.is_err(), "the oldest upload was evicted");
        assert_eq!(store.lock().len(), MAX_ENTRIES);
    }
}
