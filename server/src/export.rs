//! Exports of a stored run in Plateau's own format (see `ingest::formats::plateau`).

use crate::ingest::formats::plateau::{self, ExportedFile, ExportedLevel, ExportedRun};
use app::db::{self, DbError};
use app::domain::RunId;
use sqlx::SqlitePool;

/// Everything stored about a run, in export form.
pub async fn exported_run(pool: &SqlitePool, id: &RunId) -> Result<ExportedRun, DbError> {
    // Every stored level, whatever annotations say: this is the stored data, in full.
    let run = db::get_run_raw(pool, id).await?;
    let seqs = db::level_seqs(pool, id).await?;
    let mut levels = Vec::with_capacity(run.points.len());
    for (seq, point) in seqs.into_iter().zip(run.points) {
        levels.push(ExportedLevel {
            point,
            raw: db::level_raw(pool, id, seq).await?,
            requests: db::level_requests(pool, id, seq).await?,
        });
    }
    let files = db::run_files(pool, id)
        .await?
        .into_iter()
        .map(|f| ExportedFile {
            file_name: f.file_name,
            format: f.format,
            // Imports accept only UTF-8 text, so this is lossless.
            content: String::from_utf8_lossy(&f.content).into_owned(),
        })
        .collect();
    Ok(ExportedRun {
        name: run.name,
        status: run.status,
        created_at: Some(run.created_at),
        source: run.source,
        facts: run.facts,
        definitions: run.definitions,
        levels,
        files,
        annotations: run.annotations,
    })
}

/// The JSON export document.
pub async fn json(pool: &SqlitePool, id: &RunId) -> Result<String, DbError> {
    Ok(plateau::to_json(&exported_run(pool, id).await?))
}

/// The CSV export document.
pub async fn csv(pool: &SqlitePool, id: &RunId) -> Result<String, DbError> {
    Ok(plateau::to_csv(&exported_run(pool, id).await?))
}

/// A Markdown table of the run's levels, for chats and issues: the headline numbers with
/// unknowns as "—", then the facts that make the run comparable.
pub fn markdown(run: &app::domain::Run) -> String {
    use app::domain::format::{int, load, ms_as_s, num, pct, UNKNOWN};
    use app::domain::metrics::{Metric, Stat};
    // `|` would break a table cell; everything else in Markdown is shown as typed.
    let cell = |s: &str| s.replace('|', "\\|").replace('\n', " ");
    let derived = app::domain::analysis::analyse(&run.points);
    let mut out = format!("### {}\n\n", cell(&run.name));
    let f = &run.facts;
    let facts = [
        ("model", f.model.clone()),
        ("GPU", f.gpu_label()),
        ("engine", f.engine.clone().map(|e| match &f.engine_version {
            Some(v) => format!("{e} {v}"),
            None => e,
        })),
        ("endpoint", f.endpoint_kind.map(|e| e.path().to_owned())),
        ("max_tokens", f.max_tokens.map(|n| n.to_string())),
    ];
    let known: Vec<String> = facts.iter().filter_map(|(k, v)| v.as_ref().map(|v| format!("{k}: {}", cell(v)))).collect();
    if !known.is_empty() {
        out.push_str(&format!("{}\n\n", known.join(" · ")));
    }
    out.push_str("| load | ok / failed | output tok/s | scaling eff. | latency avg (s) | p50 (s) | p99 (s) | TTFT p50 (ms) |\n");
    out.push_str("|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (p, d) in run.points.iter().zip(derived) {
        out.push_str(&format!(
            "| {}{} | {} / {} | {} | {} | {} | {} | {} | {} |\n",
            load(p.load_value),
            if p.truncated { " (cut off)" } else { "" },
            int(p.requests_ok),
            int(p.requests_failed),
            num(p.output_tok_s(), 1),
            pct(d.scaling_efficiency),
            ms_as_s(p.latency_ms(Stat::Mean)),
            ms_as_s(p.latency_ms(Stat::P50)),
            ms_as_s(p.latency_ms(Stat::P99)),
            num(p.get(Metric::Ttft, Stat::P50), 0),
        ));
    }
    if run.points.is_empty() {
        out.push_str(&format!("| {UNKNOWN} | | | | | | | |\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use app::domain::metrics::{Metric, Stat};
    use app::domain::{LoadKind, Point, Run, RunFacts, RunId, RunStatus, SourceFormat, SourceInfo};

    #[test]
    fn markdown_table_keeps_unknowns_and_escapes_pipes() {
        let mut a = Point::at(LoadKind::Concurrency, 32.0);
        a.requests_ok = Some(32);
        a.requests_failed = Some(0);
        a.set(Metric::OutputThroughput, Stat::Mean, 464.4);
        a.set(Metric::E2e, Stat::Mean, 35_230.0);
        let mut b = Point::at(LoadKind::Concurrency, 96.0);
        b.set(Metric::OutputThroughput, Stat::Mean, 1017.0);
        b.truncated = true;
        let run = Run {
            id: RunId::parse("mdrun0000001").unwrap(),
            name: "chat | run".into(),
            created_at: "2026-11-29T00:00:00Z".into(),
            status: RunStatus::Partial,
            source: SourceInfo { format: SourceFormat::BenchmarkPy, file_name: None },
            facts: RunFacts { model: Some("Kimi".into()), ..RunFacts::default() },
            definitions: Default::default(),
            points: vec![a, b],
            set_aside: vec![],
            annotations: vec![],
        };
        let md = super::markdown(&run);
        assert!(md.starts_with("### chat \\| run\n\nmodel: Kimi\n\n"), "{md}");
        assert!(md.contains("| 32 | 32 / 0 | 464.4 | — | 35.23 | — | — | — |"), "{md}");
        assert!(md.contains("| 96 (cut off) | — / — | 1017.0 | 73 % | — | — | — | — |"), "{md}");
    }
}
