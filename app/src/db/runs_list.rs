//! The runs list: search, filters, sort, pages and the filter menus' values. Level counts
//! and peaks honour the annotations' effects, like the pages do.

use super::backend::{Arg, Backend, Db, Q};
use super::error::DbError;
use super::runs::{endpoint, run_id, status};
use crate::domain::model::metrics::{Metric, Stat};
use crate::domain::view::query::{Facets, RunPage, RunQuery, SortKey, MAX_PAGE, PAGE_SIZE};
use crate::domain::{EndpointKind, Point, RunFacts, RunId, RunSummary, SourceFormat};
use std::collections::HashMap;

/// All runs, newest first (used by the API; the list page pages through [`find_runs`]).
pub async fn list_runs(db: &Db) -> Result<Vec<RunSummary>, DbError> {
    let mut q = RunQuery::new();
    q.page = 1;
    let mut all = Vec::new();
    loop {
        let page = find_runs_page(db, &q, 1000, Plan::Ordered).await?;
        let n = page.len();
        all.extend(page);
        if n < 1000 {
            return Ok(all);
        }
        q.page += 1;
    }
}

/// `LIKE` pattern matching `text` anywhere, with `%`, `_` and `\` taken literally.
pub(super) fn like_pattern(text: &str) -> String {
    let escaped = text.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_");
    format!("%{escaped}%")
}

/// A text column compared without regard to ASCII case: SQLite's `NOCASE`, and on
/// PostgreSQL `lower()` in byte order (its `lower` folds more than ASCII).
fn nocase(db: &Db, col: &str) -> String {
    db.pick(format!("{col} COLLATE NOCASE"), format!("lower({col}) COLLATE \"C\""))
}

/// The `ORDER BY` of a sort key. A closed set of static strings: nothing user-typed
/// reaches the SQL text. Unknown values sort last whatever the direction; every order
/// ends in the row id, and each has an index (migration 0008).
fn order_by(db: &Db, key: SortKey, desc: bool) -> String {
    let (col, nullable) = match key {
        SortKey::Created => ("r.created_at".to_owned(), false),
        SortKey::Name => (nocase(db, "r.name"), false),
        SortKey::Model => (nocase(db, "r.model"), true),
        SortKey::Gpu => (nocase(db, "r.gpu_type"), true),
        SortKey::Endpoint => ("r.endpoint_kind".to_owned(), true),
        SortKey::Levels => ("r.level_count".to_owned(), false),
        SortKey::Peak => ("r.peak_tok_s".to_owned(), true),
    };
    let dir = if desc { "DESC" } else { "ASC" };
    let nulls = if nullable { " NULLS LAST" } else { "" };
    format!("{col} {dir}{nulls}, r.id {dir}")
}

/// The `FROM … WHERE …` of the runs matching a query's search and filters, with only the
/// conditions the query sets (so each backend's planner sees which index serves them),
/// and its arguments, `$1` on.
struct Filter {
    sql: String,
    args: Vec<Arg>,
}

impl Filter {
    fn arg(&mut self, a: impl Into<Arg>) -> String {
        self.args.push(a.into());
        format!("${}", self.args.len())
    }

    /// The statement `head {FROM … WHERE …} tail`, where `tail` may take further
    /// arguments from [`Filter::arg`] after the filter's own.
    fn bind(self, head: &str, tail: &str) -> Q {
        self.args.into_iter().fold(Q::new(format!("{head}\n{}\n{tail}", self.sql)), Q::bind)
    }
}

/// The runs whose name, model, engine, GPU, notes or a tag match `LIKE`/`ILIKE` pattern
/// `p`, one field at a time (PostgreSQL: each served by its pg_trgm index where the
/// extension is installed, else scanned).
fn pg_search_ids(p: &str) -> String {
    format!(
        "SELECT id FROM runs WHERE name ILIKE {p} ESCAPE '\\'
         UNION SELECT id FROM runs WHERE model ILIKE {p} ESCAPE '\\'
         UNION SELECT id FROM runs WHERE engine ILIKE {p} ESCAPE '\\'
         UNION SELECT id FROM runs WHERE gpu_type ILIKE {p} ESCAPE '\\'
         UNION SELECT id FROM runs WHERE notes ILIKE {p} ESCAPE '\\'
         UNION SELECT run_id FROM run_tags WHERE tag ILIKE {p} ESCAPE '\\'"
    )
}

/// The search and filters. The text search matches name, model, engine, GPU, notes or a
/// tag containing the text (`%`, `_` and `\` literal), ignoring ASCII case on SQLite
/// (`LIKE`) and case as PostgreSQL's `ILIKE` does.
///
/// [`Plan::Driven`] reads the filters' indexes (migrations 0008, 0009): on SQLite a text of
/// 3 characters or more first narrows to the runs the trigram index `runs_search` finds,
/// then the `LIKE` decides, so the results are `LIKE`'s; on PostgreSQL each field is
/// searched on its own ([`pg_search_ids`]). [`Plan::Ordered`] checks each run's fields
/// as the sort's index is walked (SQLite: `+col` and `EXISTS` keep the filters' indexes
/// out of the planner's way). Both give the same runs.
fn run_filter(db: &Db, query: &RunQuery, plan: Plan) -> Filter {
    let mut f = Filter { sql: String::new(), args: Vec::new() };
    let ordered = plan == Plan::Ordered;
    let unindexed = if ordered && db.backend() == Backend::Sqlite { "+" } else { "" };
    let like = db.pick("LIKE", "ILIKE");
    let mut conds: Vec<String> = Vec::new();
    if let Some(text) = &query.q {
        let p = f.arg(like_pattern(text));
        if db.backend() == Backend::Postgres && !ordered {
            conds.push(format!("r.id IN ({})", pg_search_ids(&p)));
        } else {
            if db.backend() == Backend::Sqlite && text.chars().count() >= 3 && !ordered {
                let phrase = f.arg(format!("\"{}\"", text.replace('"', "\"\"")));
                conds.push(format!("r.id IN (SELECT rowid FROM runs_search WHERE runs_search MATCH {phrase})"));
            }
            conds.push(format!(
                "(r.name {like} {p} ESCAPE '\\' OR r.model {like} {p} ESCAPE '\\'
                  OR r.engine {like} {p} ESCAPE '\\' OR r.gpu_type {like} {p} ESCAPE '\\'
                  OR r.notes {like} {p} ESCAPE '\\'
                  OR EXISTS (SELECT 1 FROM run_tags t WHERE t.run_id = r.id AND t.tag {like} {p} ESCAPE '\\'))"
            ));
        }
    }
    let equal: [(&str, Option<&str>); 5] = [
        ("r.model", query.model.as_deref()),
        ("r.engine", query.engine.as_deref()),
        ("r.gpu_type", query.gpu.as_deref()),
        ("r.endpoint_kind", query.endpoint.map(EndpointKind::as_str)),
        ("r.source_format", query.source.map(SourceFormat::as_str)),
    ];
    for (col, value) in equal {
        if let Some(v) = value {
            let p = f.arg(v);
            conds.push(format!("{unindexed}{col} = {p}"));
        }
    }
    if let Some(tag) = &query.tag {
        let p = f.arg(tag.as_str());
        conds.push(if ordered {
            format!("EXISTS (SELECT 1 FROM run_tags t WHERE t.run_id = r.id AND t.tag = {p})")
        } else {
            format!("r.id IN (SELECT t.run_id FROM run_tags t WHERE t.tag = {p})")
        });
    }
    f.sql = if conds.is_empty() {
        "FROM runs r".to_owned()
    } else {
        format!("FROM runs r WHERE {}", conds.join("\n AND "))
    };
    f
}

/// How a page of a filtered list is found: chosen from the count, because SQLite has no
/// statistics to choose between the filters' indexes and the sort's, and PostgreSQL cannot
/// estimate how many runs a text search matches.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Plan {
    /// From the filters' indexes (trigram search, tag, equal values), then sorted: best
    /// when few runs match.
    Driven,
    /// Down the sort's index, each run checked until the page is full: best when many
    /// runs match (a page then needs a few hundred rows, not every match sorted).
    Ordered,
}

/// The plan for a page of `query` now that its `total` matches are known: down the sort's
/// index when the page is expected within the first [`ORDERED_SCAN_ROWS`] rows of it.
async fn choose_plan(db: &Db, query: &RunQuery, total: i64, per_page: i64) -> Result<Plan, DbError> {
    // Every sort has its index (migration 0008).
    if total == 0 {
        return Ok(Plan::Driven);
    }
    let runs: i64 = match db.backend() {
        Backend::Sqlite => Q::new("SELECT COUNT(*) FROM runs").scalar(db).await?,
        // The planner's estimate (kept by autovacuum) spares a count; exact while unknown.
        Backend::Postgres => match Q::new("SELECT reltuples::BIGINT FROM pg_class WHERE oid = to_regclass('runs')")
            .optional_scalar::<i64>(db)
            .await?
        {
            Some(n) if n > 0 => n,
            _ => Q::new("SELECT COUNT(*) FROM runs").scalar(db).await?,
        },
    };
    let needed = (query.page.clamp(1, MAX_PAGE) - 1).saturating_mul(per_page).saturating_add(per_page);
    let expected_scan = needed.saturating_mul(runs) / total;
    Ok(if expected_scan <= ORDERED_SCAN_ROWS { Plan::Ordered } else { Plan::Driven })
}

/// How many rows of the sort's index a page may expect to walk before the filters' own
/// indexes are the better way in.
const ORDERED_SCAN_ROWS: i64 = 5_000;

async fn find_runs_page(db: &Db, query: &RunQuery, per_page: i64, plan: Plan) -> Result<Vec<RunSummary>, DbError> {
    // The level count and peak are each run's stored summary (db/summary.rs).
    let mut f = run_filter(db, query, plan);
    let tail = format!(
        "ORDER BY {order} LIMIT {limit} OFFSET {offset}",
        order = order_by(db, query.sort, query.desc),
        limit = f.arg(per_page),
        offset = f.arg((query.page.clamp(1, MAX_PAGE) - 1).saturating_mul(per_page)),
    );
    let rows = f
        .bind(
            "SELECT r.id, r.public_id, r.name, r.created_at, r.status, r.heartbeat_at, r.model, r.gpu_type,
                    r.gpu_count, r.endpoint_kind, r.level_count, r.peak_tok_s",
            &tail,
        )
        .fetch_all(db)
        .await?;
    rows.iter()
        .map(|row| {
            let facts = RunFacts {
                gpu_type: row.try_get("gpu_type")?,
                gpu_count: row.try_get("gpu_count")?,
                ..RunFacts::default()
            };
            Ok(RunSummary {
                id: run_id(row)?,
                name: row.try_get("name")?,
                created_at: row.stamp("created_at")?,
                status: status(row)?,
                model: row.try_get("model")?,
                gpu: facts.gpu_label(),
                endpoint_kind: endpoint(row)?,
                level_count: row.try_get("level_count")?,
                peak_output_tok_s: row.try_get("peak_tok_s")?,
            })
        })
        .collect()
}

/// One page of runs matching `query`, the total count, and the filter menus' values.
pub async fn find_runs(db: &Db, query: &RunQuery) -> Result<RunPage, DbError> {
    let query = &query.clamped();
    // The count first: how many runs match decides how the page is found (SQLite).
    let search_only = query.model.is_none()
        && query.engine.is_none()
        && query.gpu.is_none()
        && query.endpoint.is_none()
        && query.tag.is_none()
        && query.source.is_none();
    let total: i64 = match (&query.q, db.backend()) {
        // A search alone on PostgreSQL: the matching ids counted, not joined back to runs.
        (Some(text), Backend::Postgres) if search_only => {
            Q::new(format!("SELECT COUNT(*) FROM ({}) u", pg_search_ids("$1")))
                .bind(like_pattern(text))
                .scalar(db)
                .await?
        }
        _ => run_filter(db, query, Plan::Driven).bind("SELECT COUNT(*)", "").scalar(db).await?,
    };
    let plan = choose_plan(db, query, total, PAGE_SIZE).await?;
    let runs = find_runs_page(db, query, PAGE_SIZE, plan).await?;
    let sources: Vec<String> = distinct(db, "runs", "source_format").await?;
    Ok(RunPage {
        runs,
        total,
        query: query.clone(),
        facets: Facets {
            models: distinct(db, "runs", "model").await?,
            engines: distinct(db, "runs", "engine").await?,
            gpus: distinct(db, "runs", "gpu_type").await?,
            tags: distinct(db, "run_tags", "tag").await?,
            sources: sources.iter().filter_map(|s| SourceFormat::parse(s)).collect(),
        },
        figures: Vec::new(),
        slos: Vec::new(),
        experiments: Vec::new(),
    })
}

/// The levels each of `ids` uses (none hidden or excluded by an annotation, as its page),
/// with every stored measure, and the GPU count it states: what the runs list's figures
/// are computed from. One query for the levels and one for their extra measures, whatever
/// the number of runs (a page holds at most `PAGE_SIZE`).
pub async fn used_levels(db: &Db, ids: &[RunId]) -> Result<HashMap<RunId, (Vec<Point>, Option<i64>)>, DbError> {
    let mut out: HashMap<RunId, (Vec<Point>, Option<i64>)> = HashMap::new();
    if ids.is_empty() {
        return Ok(out);
    }
    let marks: Vec<String> = (1..=ids.len()).map(|i| format!("${i}")).collect();
    let used = super::summary::level_not_covered(db, "'hide', 'exclude'");
    let from =
        format!("FROM points p JOIN runs r ON r.id = p.run_id WHERE r.public_id IN ({}) AND {used}", marks.join(", "));
    let bind_all = |mut q: Q| {
        for id in ids {
            q = q.bind(id.as_str());
        }
        q
    };
    let rows = bind_all(Q::new(format!(
        "SELECT r.public_id, r.gpu_count, p.id, p.load_kind, p.load_value, p.requests_ok, p.requests_failed,
                p.wall_s, p.truncated, p.output_tok_s, p.latency_avg_ms, p.latency_p50_ms, p.latency_p90_ms,
                p.latency_p99_ms, p.ttft_avg_ms, p.ttft_p50_ms, p.ttft_p99_ms, p.itl_avg_ms, p.itl_p50_ms,
                p.itl_p99_ms, p.output_tokens_per_request, p.over_capacity, p.failures_json
         {from} ORDER BY p.run_id, p.load_kind, p.load_value, p.seq"
    )))
    .fetch_all(db)
    .await?;
    let extra = bind_all(Q::new(format!(
        "SELECT m.point_id, m.metric, m.stat, m.value FROM point_measures m JOIN points p ON p.id = m.point_id
         JOIN runs r ON r.id = p.run_id WHERE r.public_id IN ({}) AND {used}",
        marks.join(", ")
    )))
    .fetch_all(db)
    .await?;
    let mut measures: HashMap<i64, Vec<(Metric, Stat, f64)>> = HashMap::new();
    for m in &extra {
        let (metric, stat): (String, String) = (m.try_get("metric")?, m.try_get("stat")?);
        // A measure this version does not know (written by a newer one) is skipped.
        if let (Some(metric), Some(stat)) = (Metric::parse(&metric), Stat::parse(&stat)) {
            measures.entry(m.try_get("point_id")?).or_default().push((metric, stat, m.try_get("value")?));
        }
    }
    for r in &rows {
        let id = run_id(r)?;
        let mut p = super::runs::point(r)?;
        for (metric, stat, value) in measures.get(&r.try_get::<i64, _>("id")?).into_iter().flatten() {
            p.set(*metric, *stat, *value);
        }
        let entry = out.entry(id).or_insert_with(|| (Vec::new(), None));
        entry.1 = r.try_get("gpu_count")?;
        entry.0.push(p);
    }
    Ok(out)
}

/// The distinct values of `table.col` (a closed set of names, never user-typed), read by
/// skipping through its index from one value to the next (one index seek per value, not
/// a scan of every row), ordered for the menus: tags as stored (byte order), the others
/// without regard to case.
async fn distinct(db: &Db, table: &'static str, col: &'static str) -> Result<Vec<String>, DbError> {
    let order = match (table, db.backend()) {
        ("run_tags", Backend::Sqlite) => "v".to_owned(),
        ("run_tags", Backend::Postgres) => "v COLLATE \"C\"".to_owned(),
        (_, Backend::Sqlite) => "v COLLATE NOCASE".to_owned(),
        (_, Backend::Postgres) => format!("{}, v COLLATE \"C\"", nocase(db, "v")),
    };
    Q::new(format!(
        "WITH RECURSIVE d(v) AS (
             SELECT MIN({col}) FROM {table}
             UNION ALL
             SELECT (SELECT MIN({col}) FROM {table} WHERE {col} > d.v) FROM d WHERE d.v IS NOT NULL)
         SELECT v FROM d WHERE v IS NOT NULL ORDER BY {order}"
    ))
    .scalars(db)
    .await
}

#[cfg(test)]
mod tests {
    use super::super::backend::Q;
    use super::super::testing::{backends, sample};
    use super::super::*;
    use super::used_levels;
    use crate::domain::model::metrics::{Metric, Stat};
    use crate::domain::view::query::{RunQuery, SortKey, MAX_PAGE, PAGE_SIZE};
    use crate::domain::{EndpointKind, SourceFormat};

    #[tokio::test]
    async fn the_lists_levels_carry_every_measure_and_the_gpu_count() {
        for t in backends().await {
            let pool = &t.db;
            let id = insert_run(pool, &sample()).await.unwrap();
            let bare = insert_run(pool, &crate::domain::NewRun { levels: Vec::new(), ..sample() }).await.unwrap();
            let mut used = used_levels(pool, &[id.clone(), bare.clone()]).await.unwrap();
            let (levels, gpus) = used.remove(&id).unwrap();
            assert_eq!(gpus, Some(8), "{}", t.name);
            assert_eq!(levels.iter().map(|p| p.load_value).collect::<Vec<_>>(), vec![32.0, 96.0]);
            // A measure of point_measures (not a column of points) comes with its level.
            assert_eq!(levels[0].get(Metric::Tpot, Stat::P(999)), Some(81.5));
            assert_eq!(levels[1].get(Metric::OutputThroughput, Stat::Mean), Some(1017.0));
            assert!(!used.contains_key(&bare), "a run without levels has none");
            assert!(used_levels(pool, &[]).await.unwrap().is_empty());
        }
    }

    #[tokio::test]
    async fn search_filter_sort_and_page() {
        for t in backends().await {
            let pool = &t.db;
            for i in 0..60 {
                let mut r = sample();
                r.name = format!("run {i:02}");
                if i % 3 == 0 {
                    r.facts.endpoint_kind = Some(EndpointKind::Completions);
                    r.facts.tags = vec!["nightly".into()];
                }
                r.levels[1].point.set(Metric::OutputThroughput, Stat::Mean, 1000.0 + f64::from(i));
                if i == 7 {
                    r.name = "special 100%_done".into();
                }
                insert_run(pool, &r).await.unwrap();
            }
            let page1 = find_runs(pool, &RunQuery::new()).await.unwrap();
            assert_eq!(page1.total, 60);
            assert_eq!(page1.runs.len() as i64, PAGE_SIZE);
            assert_eq!(page1.runs[0].name, "run 59", "newest first");
            let page2 = find_runs(pool, &RunQuery::new().on_page(2)).await.unwrap();
            assert_eq!(page2.runs.len(), 10);
            // A page number from a crafted server-function call is clamped, not overflowed.
            let far = find_runs(pool, &RunQuery { page: i64::MAX, ..RunQuery::new() }).await.unwrap();
            assert!(far.runs.is_empty());
            assert_eq!((far.total, far.query.page), (60, MAX_PAGE));

            let q = RunQuery { endpoint: Some(EndpointKind::Completions), ..RunQuery::new() };
            assert_eq!(find_runs(pool, &q).await.unwrap().total, 20);
            let q = RunQuery { tag: Some("nightly".into()), ..RunQuery::new() };
            assert_eq!(find_runs(pool, &q).await.unwrap().total, 20);
            let q = RunQuery { q: Some("100%_".into()), ..RunQuery::new() };
            let found = find_runs(pool, &q).await.unwrap();
            assert_eq!(found.total, 1, "% and _ are literal");
            assert_eq!(found.runs[0].name, "special 100%_done");
            let q = RunQuery { q: Some("KIMI".into()), ..RunQuery::new() };
            assert_eq!(find_runs(pool, &q).await.unwrap().total, 60, "matches the model, case-insensitively");

            // Shorter than a trigram: still found (the search scans for it).
            let q = RunQuery { q: Some("%_".into()), ..RunQuery::new() };
            assert_eq!(find_runs(pool, &q).await.unwrap().total, 1, "two literal characters");
            let q = RunQuery { q: Some("Y 0".into()), ..RunQuery::new() };
            assert_eq!(find_runs(pool, &q).await.unwrap().total, 0, "no name has it");
            let q = RunQuery { q: Some("N 0".into()), ..RunQuery::new() };
            assert_eq!(find_runs(pool, &q).await.unwrap().total, 9, "run 00 … run 09 but 07, any case");
            let q = RunQuery { q: Some("NIGHT".into()), endpoint: Some(EndpointKind::Completions), ..RunQuery::new() };
            assert_eq!(find_runs(pool, &q).await.unwrap().total, 20, "a tag, with a filter");
            let by_peak = RunQuery::new().sorted_by(SortKey::Peak);
            let top = find_runs(pool, &by_peak).await.unwrap();
            assert_eq!(top.runs[0].peak_output_tok_s, Some(1059.0));
            let q = RunQuery { sort: SortKey::Name, desc: false, ..RunQuery::new() };
            assert_eq!(find_runs(pool, &q).await.unwrap().runs[0].name, "run 00");
            assert_eq!(list_runs(pool).await.unwrap().len(), 60);

            // Both ways to a page (SQLite: the filters' indexes, or down the sort's) agree.
            for q in [
                RunQuery { q: Some("run 1".into()), ..RunQuery::new() },
                RunQuery { q: Some("un".into()), ..RunQuery::new().sorted_by(SortKey::Peak) },
                RunQuery { tag: Some("nightly".into()), endpoint: Some(EndpointKind::Completions), ..RunQuery::new() },
                RunQuery {
                    model: Some("Kimi-K2.5 NVFP4".into()),
                    ..RunQuery::new().sorted_by(SortKey::Name).on_page(2)
                },
                RunQuery { q: Some("NIGHT".into()), ..RunQuery::new().sorted_by(SortKey::Levels) },
            ] {
                let driven = super::find_runs_page(pool, &q, 7, super::Plan::Driven).await.unwrap();
                let ordered = super::find_runs_page(pool, &q, 7, super::Plan::Ordered).await.unwrap();
                assert!(!driven.is_empty(), "{q:?}");
                assert_eq!(driven, ordered, "{q:?} on {}", t.name);
            }

            let facets = find_runs(pool, &RunQuery::new()).await.unwrap().facets;
            assert_eq!(facets.models, vec!["Kimi-K2.5 NVFP4"]);
            assert_eq!(facets.tags, vec!["chat", "nightly", "story"]);
            assert_eq!(facets.sources, vec![SourceFormat::BenchmarkPy]);
        }
    }

    /// The indexed search returns what the scan did: the fields it reads, written by every
    /// path that writes them (a note appended to a live run, tags), quotes and the FTS
    /// syntax taken literally, and (SQLite) only ASCII case ignored, as `LIKE` does.
    #[tokio::test]
    async fn the_indexed_search_matches_like_the_scan() {
        for t in backends().await {
            let db = &t.db;
            let mut r = sample();
            r.name = "Émile's \"quoted\" run".into();
            r.facts.engine = Some("vLLM".into());
            r.facts.notes = "first AND second".into();
            r.facts.set_tags("long-context, ab");
            let id = insert_run(db, &r).await.unwrap();
            insert_run(db, &sample()).await.unwrap();
            let total = |text: &str| {
                let q = RunQuery { q: Some(text.into()), ..RunQuery::new() };
                async move { find_runs(db, &q).await.unwrap().total }
            };
            assert_eq!(total("\"quoted\"").await, 1, "quotes are literal");
            assert_eq!(total("'s \"").await, 1);
            assert_eq!(total("st AND se").await, 1, "notes; AND is text, not an operator");
            assert_eq!(total("vllm").await, 1, "engine, any ASCII case");
            assert_eq!(total("g-con").await, 1, "a tag");
            assert_eq!(total("ab").await, 1, "a two-letter tag");
            assert_eq!(total("context, ab").await, 0, "tags are matched one by one");
            assert_eq!(total("RTX PRO").await, 2, "the GPU");
            // SQLite's LIKE folds ASCII only (the trigram index folds more: the LIKE decides);
            // PostgreSQL's ILIKE folds as the database's locale does.
            let folds: bool = match db.backend() {
                Backend::Sqlite => false,
                Backend::Postgres => Q::new("SELECT 'Émile' ILIKE 'émile'").scalar(db).await.unwrap(),
            };
            assert_eq!(total("émile").await, i64::from(folds), "case beyond ASCII as LIKE / ILIKE fold it");
            assert_eq!(total("Émile").await, 1);
            append_run_note(db, &id, "plateau at C=64").await.unwrap();
            assert_eq!(total("plateau at").await, 1, "an appended note is searchable");
        }
    }

    /// A run with as many tags as it may have is found by any of them (the search index's
    /// tags are written once per run, after its tags), and no trigger on `run_tags` is back:
    /// one that rebuilt the run's tags per tag row made n tags cost O(n²) (migration 0014).
    #[tokio::test]
    async fn a_run_with_the_most_tags_is_found_by_each_and_tags_have_no_trigger() {
        use crate::domain::model::text::{MAX_TAGS, MAX_TAG_CHARS};
        for t in backends().await {
            let db = &t.db;
            let triggers: i64 = Q::new(db.pick(
                "SELECT COUNT(*) FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'run_tags'",
                "SELECT COUNT(*) FROM pg_trigger WHERE tgrelid = 'run_tags'::regclass AND NOT tgisinternal",
            ))
            .scalar(db)
            .await
            .unwrap();
            assert_eq!(triggers, 0, "no per-tag trigger on {}", t.name);

            let mut r = sample();
            // The longest tags allowed, each unique from its start (`tag-007-xxx…`).
            r.facts.tags = (0..MAX_TAGS).map(|i| format!("{:x<MAX_TAG_CHARS$}", format!("tag-{i:03}-"))).collect();
            let id = insert_run(db, &r).await.unwrap();
            let other = insert_run(db, &sample()).await.unwrap();
            for i in [0, MAX_TAGS / 2, MAX_TAGS - 1] {
                let q = RunQuery { q: Some(format!("TAG-{i:03}")), ..RunQuery::new() };
                let found = find_runs(db, &q).await.unwrap();
                assert_eq!(found.runs.iter().map(|s| &s.id).collect::<Vec<_>>(), vec![&id], "tag {i} on {}", t.name);
                let q = RunQuery { tag: r.facts.tags.get(i).cloned(), ..RunQuery::new() };
                assert_eq!(find_runs(db, &q).await.unwrap().total, 1, "tag filter {i} on {}", t.name);
            }
            assert_eq!(get_run(db, &id).await.unwrap().facts.tags, r.facts.tags);
            // Each run's refresh writes its own tags only: `story` is the other run's alone.
            let q = RunQuery { q: Some("story".into()), ..RunQuery::new() };
            let found = find_runs(db, &q).await.unwrap();
            assert_eq!(found.runs.iter().map(|s| &s.id).collect::<Vec<_>>(), vec![&other], "{}", t.name);
        }
    }

    /// Every sort, both directions, read down its index: unknown values last, ties by age.
    #[tokio::test]
    async fn sorts_put_unknown_values_last_both_ways() {
        for t in backends().await {
            let db = &t.db;
            for (i, model) in [Some("b"), None, Some("A"), Some("c"), None].into_iter().enumerate() {
                let mut r = sample();
                r.name = format!("r{i}");
                r.facts.model = model.map(str::to_owned);
                r.facts.gpu_type = model.map(str::to_owned);
                r.facts.endpoint_kind = model.map(|_| EndpointKind::Chat);
                if model.is_none() {
                    r.levels.clear();
                }
                insert_run(db, &r).await.unwrap();
            }
            let names = |sort: SortKey, desc: bool| async move {
                let q = RunQuery { sort, desc, ..RunQuery::new() };
                find_runs(db, &q).await.unwrap().runs.into_iter().map(|r| r.name).collect::<Vec<_>>().join(" ")
            };
            assert_eq!(names(SortKey::Model, false).await, "r2 r0 r3 r1 r4", "{}", t.name);
            assert_eq!(names(SortKey::Model, true).await, "r3 r0 r2 r4 r1", "{}", t.name);
            assert_eq!(names(SortKey::Gpu, false).await, "r2 r0 r3 r1 r4", "{}", t.name);
            assert_eq!(names(SortKey::Gpu, true).await, "r3 r0 r2 r4 r1", "{}", t.name);
            assert_eq!(names(SortKey::Endpoint, false).await, "r0 r2 r3 r1 r4", "{}", t.name);
            assert_eq!(names(SortKey::Endpoint, true).await, "r3 r2 r0 r4 r1", "{}", t.name);
            assert_eq!(names(SortKey::Peak, false).await, "r0 r2 r3 r1 r4", "{}", t.name);
            assert_eq!(names(SortKey::Peak, true).await, "r3 r2 r0 r4 r1", "{}", t.name);
            assert_eq!(names(SortKey::Levels, false).await, "r1 r4 r0 r2 r3", "{}", t.name);
            assert_eq!(names(SortKey::Name, true).await, "r4 r3 r2 r1 r0", "{}", t.name);
        }
    }
}
