//! The runs list: search, filters, sort, pages and the filter menus' values. Level counts
//! and peaks honour the annotations' effects, like the pages do.

use super::backend::{Backend, Db, Q};
use super::runs::{endpoint, run_id, status};
use super::DbError;
use crate::domain::query::{Facets, RunPage, RunQuery, SortKey, MAX_PAGE, PAGE_SIZE};
use crate::domain::{EndpointKind, RunFacts, RunSummary, SourceFormat};

/// All runs, newest first (used by the API; the list page pages through [`find_runs`]).
pub async fn list_runs(db: &Db) -> Result<Vec<RunSummary>, DbError> {
    let mut q = RunQuery::new();
    q.page = 1;
    let mut all = Vec::new();
    loop {
        let page = find_runs_page(db, &q, 1000).await?;
        let n = page.len();
        all.extend(page);
        if n < 1000 {
            return Ok(all);
        }
        q.page += 1;
    }
}

/// `LIKE` pattern matching `text` anywhere, with `%`, `_` and `\` taken literally.
fn like_pattern(text: &str) -> String {
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

/// The search and filters; `LIKE` ignores ASCII case on SQLite, `ILIKE` does on PostgreSQL.
fn run_filter(db: &Db) -> String {
    let like = db.pick("LIKE", "ILIKE");
    format!(
        "
         FROM runs r
         WHERE ($1 IS NULL OR r.name {like} $1 ESCAPE '\\' OR r.model {like} $1 ESCAPE '\\'
                OR r.engine {like} $1 ESCAPE '\\' OR r.gpu_type {like} $1 ESCAPE '\\'
                OR r.notes {like} $1 ESCAPE '\\'
                OR EXISTS (SELECT 1 FROM run_tags t WHERE t.run_id = r.id AND t.tag {like} $1 ESCAPE '\\'))
           AND ($2 IS NULL OR r.model = $2)
           AND ($3 IS NULL OR r.engine = $3)
           AND ($4 IS NULL OR r.gpu_type = $4)
           AND ($5 IS NULL OR r.endpoint_kind = $5)
           AND ($6 IS NULL OR EXISTS (SELECT 1 FROM run_tags t WHERE t.run_id = r.id AND t.tag = $6))
           AND ($7 IS NULL OR r.source_format = $7)"
    )
}

fn bind_filter(q: Q, query: &RunQuery) -> Q {
    q.bind(query.q.as_deref().map(like_pattern))
        .bind(query.model.as_deref())
        .bind(query.engine.as_deref())
        .bind(query.gpu.as_deref())
        .bind(query.endpoint.map(EndpointKind::as_str))
        .bind(query.tag.as_deref())
        .bind(query.source.map(SourceFormat::as_str))
}

async fn find_runs_page(db: &Db, query: &RunQuery, per_page: i64) -> Result<Vec<RunSummary>, DbError> {
    // The level count and peak are each run's stored summary (db/summary.rs).
    let sql = format!(
        "SELECT r.id, r.public_id, r.name, r.created_at, r.status, r.heartbeat_at, r.model, r.gpu_type, r.gpu_count,
                r.endpoint_kind, r.level_count, r.peak_tok_s
         {filter}
         ORDER BY {order}
         LIMIT $8 OFFSET $9",
        filter = run_filter(db),
        order = order_by(db, query.sort, query.desc),
    );
    let rows = bind_filter(Q::new(sql), query)
        .bind(per_page)
        .bind((query.page.clamp(1, MAX_PAGE) - 1).saturating_mul(per_page))
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
    let runs = find_runs_page(db, query, PAGE_SIZE).await?;
    let count_sql = format!("SELECT COUNT(*) {}", run_filter(db));
    let total: i64 = bind_filter(Q::new(count_sql), query).scalar(db).await?;
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
    })
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
    use super::super::testing::{backends, sample};
    use super::super::*;
    use crate::domain::metrics::{Metric, Stat};
    use crate::domain::query::{RunQuery, SortKey, MAX_PAGE, PAGE_SIZE};
    use crate::domain::{EndpointKind, SourceFormat};

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

            let by_peak = RunQuery::new().sorted_by(SortKey::Peak);
            let top = find_runs(pool, &by_peak).await.unwrap();
            assert_eq!(top.runs[0].peak_output_tok_s, Some(1059.0));
            let q = RunQuery { sort: SortKey::Name, desc: false, ..RunQuery::new() };
            assert_eq!(find_runs(pool, &q).await.unwrap().runs[0].name, "run 00");
            assert_eq!(list_runs(pool).await.unwrap().len(), 60);

            let facets = find_runs(pool, &RunQuery::new()).await.unwrap().facets;
            assert_eq!(facets.models, vec!["Kimi-K2.5 NVFP4"]);
            assert_eq!(facets.tags, vec!["chat", "nightly", "story"]);
            assert_eq!(facets.sources, vec![SourceFormat::BenchmarkPy]);
        }
    }
}
