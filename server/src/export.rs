//! Exports of a stored run in Plateau's own format (see `ingest::formats::plateau`), its
//! Markdown table, and the two neutralisers every export of user text goes through:
//! [`csv_text`] (no spreadsheet formula from a CSV cell) and [`markdown_text`] (no link,
//! image or markup from a name in Markdown).

use crate::ingest::formats::plateau::{self, ExportedFile, ExportedLevel, ExportedRequest, ExportedRun};
use app::db::Db;
use app::db::{self, DbError};
use app::domain::analysis::slo::{Capacity, LevelGoodput, Slo};
use app::domain::RunId;
use serde::Serialize;

/// Everything stored about a run, in export form.
pub async fn exported_run(pool: &Db, id: &RunId) -> Result<ExportedRun, DbError> {
    // Every stored level, whatever annotations say: this is the stored data, in full.
    let run = db::get_run_raw(pool, id).await?;
    let seqs = db::level_seqs(pool, id).await?;
    let mut telemetry: std::collections::HashMap<i64, app::domain::model::telemetry::LevelTelemetry> =
        db::run_telemetry(pool, id).await?.into_iter().map(|t| (t.seq, t.telemetry)).collect();
    let mut levels = Vec::with_capacity(run.points.len());
    for (seq, point) in seqs.into_iter().zip(run.points) {
        let raw = db::level_raw(pool, id, seq).await?;
        // Each request row with every per-request measure stored, also those kept in `raw`.
        let requests = ExportedRequest::rows(db::level_requests(pool, id, seq).await?, &raw);
        levels.push(ExportedLevel { point, raw, requests, telemetry: telemetry.remove(&seq) });
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

/// A run judged at an SLO, as the exports carry it: derived from the levels (an import
/// ignores it), over the levels the analysis uses — as the run page judges them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SloExport {
    /// The SLO's canonical text.
    pub slo: String,
    pub definition: &'static str,
    /// The answer in one sentence, as the run page says it.
    pub sentence: String,
    /// Capacity, the first failure, the estimate, and every level limit by limit.
    pub capacity: Capacity,
    /// Each stored level's goodput from its per-request records, or why it has none.
    pub goodput: Vec<LevelGoodput>,
}

/// How the export's SLO figures are defined.
pub const SLO_DEFINITION: &str = "A level meets a limit when its statistic does (with trials: the upper end of \
     its 95 % interval across trials); capacity is the highest level meeting every limit below the first that \
     does not, the estimate interpolates between them (log2 of concurrency, linear in request rate). Goodput: \
     requests that succeeded and met every per-request limit, divided by the level's duration. Levels set \
     aside by annotations are not judged.";

/// `run` (annotations' effects applied) judged at `slo`, with each level's goodput.
pub async fn slo_export(pool: &Db, run: &app::domain::Run, slo: &Slo) -> Result<SloExport, DbError> {
    let seqs = db::level_seqs(pool, &run.id).await?;
    let raw = db::get_run_raw(pool, &run.id).await?;
    let mut goodput = Vec::with_capacity(seqs.len());
    for (p, seq) in raw.points.iter().zip(seqs) {
        let records = db::level_requests(pool, &run.id, seq).await?;
        goodput.push(LevelGoodput {
            load_kind: p.load_kind,
            load_value: p.load_value,
            goodput: app::domain::analysis::slo::goodput(slo, p, &records),
        });
    }
    let capacity = app::domain::analysis::slo::capacity(slo, &run.points);
    Ok(SloExport {
        slo: slo.to_string(),
        definition: SLO_DEFINITION,
        sentence: app::domain::analysis::slo::sentence(&capacity),
        capacity,
        goodput,
    })
}

async fn slo_value(pool: &Db, id: &RunId, slo: Option<&Slo>) -> Result<Option<serde_json::Value>, DbError> {
    let Some(slo) = slo else { return Ok(None) };
    let run = db::get_run(pool, id).await?;
    let e = slo_export(pool, &run, slo).await?;
    Ok(serde_json::to_value(e).ok())
}

/// The JSON export document.
pub async fn json(pool: &Db, id: &RunId) -> Result<String, DbError> {
    json_at(pool, id, None).await
}

/// The CSV export document.
pub async fn csv(pool: &Db, id: &RunId) -> Result<String, DbError> {
    csv_at(pool, id, None).await
}

/// The JSON export document; with an SLO, the run judged at it beside the run.
pub async fn json_at(pool: &Db, id: &RunId, slo: Option<&Slo>) -> Result<String, DbError> {
    let run = exported_run(pool, id).await?;
    let cost = run_cost(pool, id).await?;
    // The derived blocks read the levels as the run's page does (annotations applied), once.
    let page_run = app::db::get_run(pool, id).await?;
    let estimated = estimated(&page_run);
    let roofline = roofline(pool, &page_run).await?;
    Ok(plateau::to_json_with(&run, slo_value(pool, id, slo).await?, cost.as_ref(), Some(estimated), Some(roofline)))
}

/// `run` against its hardware's roofs, or `{"missing": […], "sentence": …}`: the export's
/// `roofline` block.
pub async fn roofline(pool: &Db, run: &app::domain::Run) -> Result<serde_json::Value, DbError> {
    let (gpus, models) = app::page_data::hardware(pool).await?;
    Ok(match app::domain::analysis::roofline::roofline(run, &gpus, &models) {
        Ok(r) => serde_json::to_value(&r).unwrap_or_default(),
        Err(gap) => serde_json::to_value(&gap).unwrap_or_default(),
    })
}

/// `run`'s plateau predicted beyond its last level, or `{"none": why}`: the export's
/// `estimated` block.
pub fn estimated(run: &app::domain::Run) -> serde_json::Value {
    use app::domain::analysis::predict;
    match predict::predict(&run.points) {
        Ok(p) => serde_json::json!({ "prediction": p, "sentence": p.sentence() }),
        Err(why) => serde_json::json!({ "none": why, "sentence": why.sentence() }),
    }
}

/// The CSV export document; with an SLO, its `# slo:` line.
pub async fn csv_at(pool: &Db, id: &RunId, slo: Option<&Slo>) -> Result<String, DbError> {
    let run = exported_run(pool, id).await?;
    let slo = slo_value(pool, id, slo).await?.map(|mut v| {
        // The CSV carries the levels; its SLO line says what was judged and the answer.
        if let Some(o) = v.as_object_mut() {
            o.remove("capacity");
            o.remove("goodput");
        }
        v
    });
    let cost = run_cost(pool, id).await?;
    Ok(plateau::to_csv_with(&run, slo, cost.as_ref()))
}

/// The run's cost with today's prices and its stored GPU telemetry.
pub async fn run_cost(pool: &Db, id: &RunId) -> Result<Option<app::domain::analysis::cost::RunCost>, DbError> {
    let run = app::db::get_run(pool, id).await?;
    let stored = app::db::stored_signals(pool, id).await?;
    Ok(app::page_data::costs(pool, std::slice::from_ref(&run), std::slice::from_ref(&stored)).await?.pop())
}

/// A CSV text cell that a spreadsheet shows as text (OWASP "CSV injection"): a cell that
/// starts with `=`, `+`, `-`, `@`, a tab or a carriage return gets a leading `'`. Only for
/// text columns: numbers are written as they are (`-3.5` stays a number).
pub fn csv_text(s: &str) -> std::borrow::Cow<'_, str> {
    if s.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{s}").into()
    } else {
        s.into()
    }
}

/// User text (a run name, a fact, an annotation) inside Markdown: every character that
/// could start markup (links, images, emphasis, code, HTML, tables, headings, autolinks) is
/// backslash-escaped, and line breaks become spaces, so the text renders as typed.
pub fn markdown_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' | '`' | '*' | '_' | '{' | '}' | '[' | ']' | '<' | '>' | '(' | ')' | '#' | '+' | '!' | '|' | '~'
            | ':' | '@' | '.' | '&' | '=' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' | '\t' => out.push(' '),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// A Markdown table of the run's levels, for chats and issues: the headline numbers with
/// unknowns as "—", then the facts that make the run comparable.
pub fn markdown(run: &app::domain::Run, slo: Option<&Slo>) -> String {
    use app::domain::model::format::{int, load, ms_as_s, num, pct, UNKNOWN};
    use app::domain::model::metrics::{Metric, Stat};
    let cell = |s: &str| markdown_text(s);
    let derived = app::domain::analysis::scaling::analyse(&run.points);
    let mut out = format!("### {}\n\n", cell(&run.name));
    let f = &run.facts;
    let facts = [
        ("model", f.model.clone()),
        ("GPU", f.gpu_label()),
        (
            "engine",
            f.engine.clone().map(|e| match &f.engine_version {
                Some(v) => format!("{e} {v}"),
                None => e,
            }),
        ),
        ("endpoint", f.endpoint_kind.map(|e| e.path().to_owned())),
        ("max_tokens", f.max_tokens.map(|n| n.to_string())),
    ];
    let known: Vec<String> =
        facts.iter().filter_map(|(k, v)| v.as_ref().map(|v| format!("{k}: {}", cell(v)))).collect();
    if !known.is_empty() {
        out.push_str(&format!("{}\n\n", known.join(" · ")));
    }
    let capacity = slo.map(|s| app::domain::analysis::slo::capacity(s, &run.points));
    if let Some(c) = &capacity {
        out.push_str(&format!("**Capacity at SLO:** {}\n\n", markdown_text(&app::domain::analysis::slo::sentence(c))));
    }
    let verdict = |p: &app::domain::Point| {
        let l =
            capacity.as_ref()?.levels.iter().find(|l| l.load_value == p.load_value && l.load_kind == p.load_kind)?;
        Some(if l.meets() {
            "meets"
        } else if l.fails() {
            "fails"
        } else {
            "not judged"
        })
    };
    let (slo_head, slo_rule) = if capacity.is_some() { (" SLO |", "---|") } else { ("", "") };
    out.push_str(&format!(
        "| load | ok / failed | output tok/s | scaling eff. | latency avg (s) | p50 (s) | p99 (s) | TTFT p50 (ms) |{slo_head}\n"
    ));
    out.push_str(&format!("|---:|---:|---:|---:|---:|---:|---:|---:|{slo_rule}\n"));
    for (p, d) in run.points.iter().zip(derived) {
        let slo_cell = if capacity.is_some() { format!(" {} |", verdict(p).unwrap_or(UNKNOWN)) } else { String::new() };
        out.push_str(&format!(
            "| {}{} | {} / {} | {} | {} | {} | {} | {} | {} |{slo_cell}\n",
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
    // The failures by kind, where the source named them.
    let failing: Vec<&app::domain::Point> = run.points.iter().filter(|p| !p.failures.is_empty()).collect();
    if !failing.is_empty() {
        out.push_str("\n**Failed requests**\n\n| load | kind | requests | message |\n|---:|---|---:|---|\n");
        for p in failing {
            for f in &p.failures {
                out.push_str(&format!(
                    "| {} | {} | {} | {} |\n",
                    load(p.load_value),
                    cell(&f.kind),
                    f.count,
                    cell(f.example.as_deref().unwrap_or(""))
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use app::domain::model::metrics::{Metric, Stat};
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
        let md = super::markdown(&run, None);
        assert!(md.starts_with("### chat \\| run\n\nmodel: Kimi\n\n"), "{md}");
        assert!(md.contains("| 32 | 32 / 0 | 464.4 | — | 35.23 | — | — | — |"), "{md}");
        assert!(md.contains("| 96 (cut off) | — / — | 1017.0 | 73 % | — | — | — | — |"), "{md}");
    }

    #[test]
    fn csv_text_cells_cannot_be_formulas_but_numbers_stay_numbers() {
        for (cell, want) in [
            ("=HYPERLINK(\"https://evil.example\")", "'=HYPERLINK(\"https://evil.example\")"),
            ("+1+1", "'+1+1"),
            ("-1+cmd|' /C calc'!A0", "'-1+cmd|' /C calc'!A0"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\t=1", "'\t=1"),
            ("\r=1", "'\r=1"),
            ("chat run", "chat run"),
            ("a=1", "a=1"),
        ] {
            assert_eq!(super::csv_text(cell), want, "{cell:?}");
        }
    }

    #[test]
    fn markdown_text_renders_as_typed() {
        let md = super::markdown_text("![x](https://evil.example/p.png) [y](javascript:alert(1)) <img src=x onerror=alert(1)> **b** `c` | # www.evil.example\nx");
        for raw in ["![", "](", " <img", "**", "`c`", " | ", "www.evil", "\n"] {
            assert!(!md.contains(raw), "{raw:?} in {md}");
        }
        assert!(md.contains("\\!\\[x\\]\\(https\\://evil\\.example/p\\.png\\)"), "{md}");
        assert!(md.contains(" \\<img src\\=x"), "{md}");
    }
}
