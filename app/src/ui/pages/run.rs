//! A run's page: its facts, the scaling and latency charts, and the levels table.

use crate::api::get_run;
use crate::charts;
use crate::domain::format::{int, load, num, when, UNKNOWN};
use crate::domain::{analysis, Run};
use crate::domain::metrics::Metric;
use crate::ui::components::{ChartView, DefinitionsView, ErrorBox, LevelsTable, MeasuresTable};
use leptos::prelude::*;
use leptos_meta::{Meta, Title};
use leptos_router::hooks::use_params_map;

/// `/runs/:id`
#[component]
pub fn RunPage() -> impl IntoView {
    let params = use_params_map();
    let run = Resource::new(
        move || params.read().get("id").unwrap_or_default(),
        get_run,
    );
    view! {
        <Suspense fallback=|| view! { <p>"Loading run…"</p> }>
            {move || Suspend::new(async move {
                match run.await {
                    Ok(run) => view! { <RunView run /> }.into_any(),
                    Err(e) => view! { <Title text="Run not found" /><ErrorBox error=e /> }.into_any(),
                }
            })}
        </Suspense>
    }
}

fn fact(label: &'static str, value: Option<String>) -> impl IntoView {
    let missing = value.is_none();
    view! {
        <dt>{label}</dt>
        <dd class:unknown=missing>{value.unwrap_or_else(|| UNKNOWN.to_owned())}</dd>
    }
}

/// One-line summary used in the page description and header.
fn summary(run: &Run) -> String {
    match analysis::peak(&run.points) {
        Some((c, t)) => format!(
            "{} levels, peak {} output tok/s at {}",
            run.points.len(),
            num(Some(t), 1),
            if run.points.first().is_some_and(|p| p.load_kind == crate::domain::LoadKind::RequestRate) {
                format!("{} req/s", load(c))
            } else {
                format!("C={}", load(c))
            },
        ),
        None => format!("{} levels", run.points.len()),
    }
}

#[component]
fn RunView(run: Run) -> impl IntoView {
    let f = run.facts.clone();
    let engine = match (&f.engine, &f.engine_version) {
        (Some(e), Some(v)) => Some(format!("{e} {v}")),
        (Some(e), None) => Some(e.clone()),
        (None, Some(v)) => Some(format!("version {v}")),
        (None, None) => None,
    };
    let source = match &run.source.file_name {
        Some(name) => format!("{} ({name})", run.source.format.label()),
        None => run.source.format.label().to_owned(),
    };
    let desc = summary(&run);
    let tags = f.tags.clone();
    let notes = f.notes.clone();
    let status = run.status;
    let status_title = match status {
        crate::domain::RunStatus::Complete => "",
        crate::domain::RunStatus::Partial => "some levels or values are missing",
        crate::domain::RunStatus::Running => "a live sweep is still measuring this run",
        crate::domain::RunStatus::Interrupted => "the sweep stopped early; the finished levels are whole",
    };
    let throughput = charts::throughput(&run);
    let latency = charts::latency(&run);
    let ttft = charts::metric(&run, Metric::Ttft);
    // Per-token latency: the definition the source has (see the definitions section).
    let tpot = [Metric::Tpot, Metric::ChunkGap, Metric::TpotInclTtft]
        .into_iter()
        .find_map(|m| charts::metric(&run, m).map(|c| (m, c)));
    let export_json = format!("/api/v1/runs/{}/export.json", run.id);
    let export_csv = format!("/api/v1/runs/{}/export.csv", run.id);
    let export_md = format!("/api/v1/runs/{}/export.md", run.id);
    let definitions = run.definitions.clone();
    let saturation = crate::domain::knee::saturation(&run.points, crate::domain::knee::DEFAULT_KNEE_THRESHOLD)
        .map(|s| s.sentence());
    let found = crate::domain::anomalies::detect_run(0, &run);
    view! {
        <Title text=run.name.clone() />
        <Meta name="description" content=desc.clone() />
        <div class="page-head">
            <h1 id="run-name">{run.name.clone()}</h1>
            {(status != crate::domain::RunStatus::Complete).then(|| view! { <span class="badge" title=status_title>{status.as_str()}</span> })}
        </div>
        <p class="summary">{desc}</p>
        {(status == crate::domain::RunStatus::Running).then(|| {
            let cancel = format!("/api/v1/sweeps/{}/cancel", run.id);
            view! {
                <div class="live" id="live" data-run=run.id.to_string()>
                    <strong>"Sweep running. "</strong>
                    <span id="live-text">"Levels appear here as they finish."</span>
                    <progress id="live-progress" max="1" value="0"></progress>
                    <form method="post" action=cancel id="cancel-form"><button type="submit" id="cancel-sweep" class="secondary">"Cancel"</button></form>
                </div>
            }
        })}
        {saturation.map(|s| view! { <p class="saturation" id="saturation">{s}</p> })}
        <dl class="facts">
            {fact("Model", f.model.clone())}
            {fact("Engine", engine)}
            {fact("GPU", f.gpu_label())}
            {fact("Endpoint", f.endpoint_kind.map(|e| e.path().to_owned()))}
            {fact("max_tokens", f.max_tokens.map(|n| int(Some(n))))}
            {fact("Prompt length", f.prompt_tokens.map(|n| format!("{n} tokens")))}
            {fact("Source", Some(source))}
            {fact("Imported", Some(when(&run.created_at)))}
        </dl>
        {(!tags.is_empty()).then(|| view! {
            <ul class="tags">{tags.into_iter().map(|t| view! { <li>{t}</li> }).collect_view()}</ul>
        })}
        {(!notes.is_empty()).then(|| view! { <p class="notes">{notes}</p> })}
        <section class="charts">
            <figure>
                <figcaption>"Output throughput vs load (log₂), with ideal-linear scaling from the lowest level"</figcaption>
                <ChartView id=charts::THROUGHPUT_ID label="output tok/s by load level".to_owned() chart=throughput />
            </figure>
            <figure>
                <figcaption>"Request latency vs load: avg, p50, p99"</figcaption>
                <ChartView id=charts::LATENCY_ID label="request latency by load level".to_owned() chart=latency />
            </figure>
            {ttft.map(|c| view! {
                <figure>
                    <figcaption>"Time to first token vs load"</figcaption>
                    <ChartView id=charts::TTFT_ID label="TTFT by load level".to_owned() chart=c />
                </figure>
            })}
            {tpot.map(|(m, c)| view! {
                <figure>
                    <figcaption>{m.label()}" vs load — "{m.definition()}</figcaption>
                    <ChartView id=charts::TPOT_ID label="per-token latency by load level".to_owned() chart=c />
                </figure>
            })}
        </section>
        <h2>"Levels"</h2>
        <div class="table-wrap"><LevelsTable points=run.points.clone() /></div>
        {(!found.is_empty()).then(|| view! {
            <h2>"Anomalies"</h2>
            <ul class="anomalies" id="anomalies">
                {found.into_iter().map(|a| {
                    let at = a.level.map(|l| l.label()).unwrap_or_default();
                    view! {
                        <li data-key=a.key()>
                            <span class="badge">{a.kind.label()}</span>" "{at}": "{a.evidence.clone()}
                            <div class="proposal">"Proposed annotation: "<em>{a.proposed_annotation_text.clone()}</em></div>
                        </li>
                    }
                }).collect_view()}
            </ul>
        })}
        <h2>"How these numbers are defined"</h2>
        <DefinitionsView definitions=definitions points=run.points.clone() />
        <details class="all-measures">
            <summary>"Every statistic the source reported"</summary>
            <div class="table-wrap"><MeasuresTable points=run.points.clone() /></div>
        </details>
        <p class="exports">"Export: "<a href=export_json download>"JSON (lossless)"</a>" · "<a href=export_csv download>"CSV"</a>" · "<a href=export_md>"Markdown table"</a></p>
    }
}
