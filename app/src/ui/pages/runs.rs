//! The runs list: search, filters, sortable columns, pages, and a selection to compare.
//! Every control is a link or a GET form, so the URL always holds the view and the page
//! works without JavaScript.

use crate::api::find_runs;
use crate::domain::model::format::{load, shown, when, UNKNOWN};
use crate::domain::view::list_figures::sparkline_points;
use crate::domain::view::query::{RunPage, RunQuery, SortKey, PAGE_SIZE};
use crate::domain::{EndpointKind, RunStatus};
use crate::ui::components::ErrorBox;
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

/// `/`: stored runs.
#[component]
pub fn RunsPage() -> impl IntoView {
    let params = use_query_map();
    let query = move || {
        let map = params.read();
        let pairs: Vec<(String, String)> =
            ["q", "model", "engine", "gpu", "endpoint", "tag", "source", "sort", "dir", "page", "slo"]
                .iter()
                .filter_map(|k| map.get(k).map(|v| ((*k).to_owned(), v)))
                .collect();
        RunQuery::from_pairs(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())))
    };
    let page = super::data::page_resource(query, find_runs);
    // A form of this page that failed (Delete selected) comes back with `?error=…`.
    let error = super::run::form_error();
    view! {
        <Title text="Runs" />
        <div class="page-head">
            <h1>"Runs"</h1>
            <a class="button" href="/upload">"Import results"</a>
        </div>
        {error.map(|e| view! { <div class="error-box" role="alert" id="form-error">{e}</div> })}
        <Suspense fallback=|| view! { <p>"Loading runs…"</p> }>
            {move || Suspend::new(async move {
                match page.await {
                    Err(e) => view! { <ErrorBox error=e /> }.into_any(),
                    Ok(p) => view! { <RunsView p /> }.into_any(),
                }
            })}
        </Suspense>
    }
}

/// A run's output tok/s by load, drawn small: the shape of the curve at a glance.
#[component]
fn Sparkline(curve: Vec<[f64; 2]>) -> impl IntoView {
    let label = format!(
        "output tok/s by load: {}",
        curve
            .iter()
            .map(|[l, t]| format!("{} → {} tok/s", load(*l), shown(Some(*t), 0)))
            .collect::<Vec<_>>()
            .join(", ")
    );
    sparkline_points(&curve, 80.0, 20.0).map(|points| {
        view! {
            <svg class="sparkline" viewBox="-1 -1 82 22" width="80" height="20" role="img" aria-label=label>
                <polyline points=points fill="none" stroke="currentColor" stroke-width="1.5" />
            </svg>
        }
    })
}

fn href(q: &RunQuery) -> String {
    let s = q.to_query_string();
    if s.is_empty() {
        "/".to_owned()
    } else {
        format!("/?{s}")
    }
}

fn options(
    name: &'static str,
    label: &'static str,
    values: Vec<(String, String)>,
    selected: Option<String>,
) -> impl IntoView {
    view! {
        <label>{label}
            <select name=name>
                <option value="">"any"</option>
                {values.into_iter().map(|(value, text)| {
                    let sel = selected.as_deref() == Some(value.as_str());
                    view! { <option value=value selected=sel>{text}</option> }
                }).collect_view()}
            </select>
        </label>
    }
}

#[component]
fn RunsView(p: RunPage) -> impl IntoView {
    let RunPage { runs, total, query, facets, figures, slos, experiments } = p;
    let pair = |v: Vec<String>| v.into_iter().map(|x| (x.clone(), x)).collect::<Vec<_>>();
    let header = |key: SortKey, label: &'static str| {
        let mark = if query.sort == key {
            if query.desc {
                " ↓"
            } else {
                " ↑"
            }
        } else {
            ""
        };
        let link = href(&query.sorted_by(key));
        view! { <th><a href=link class="sort">{label}{mark}</a></th> }
    };
    let pages = (total + PAGE_SIZE - 1) / PAGE_SIZE;
    let prev = (query.page > 1).then(|| href(&query.on_page(query.page - 1)));
    let next = (query.page < pages).then(|| href(&query.on_page(query.page + 1)));
    // The SLO chooses a column, not runs: not a filter.
    let filtered = query
        != RunQuery { sort: query.sort, desc: query.desc, page: query.page, slo: query.slo.clone(), ..RunQuery::new() };
    let slo = query.slo.clone().filter(|name| slos.contains(name));
    let empty = runs.is_empty();
    let with_slo = slo.is_some();
    let mut figures = figures.into_iter();
    // Runs of one experiment next to each other are grouped under its name (the list's
    // own order decides: newest first keeps an import's runs together).
    let columns = if with_slo { 13 } else { 12 };
    let mut previous: Option<crate::domain::ExperimentId> = None;
    let mut experiments = experiments.into_iter();
    let rows = runs
        .into_iter()
        .map(|r| {
            let f = figures.next().unwrap_or_default();
            let experiment = experiments.next().flatten();
            let group = match &experiment {
                Some((id, name)) if previous.as_ref() != Some(id) => Some(view! {
                    <tr class="group"><td colspan=columns>
                        <a href=format!("/experiments/{id}") class="experiment-link">"Experiment: "{name.clone()}</a>
                    </td></tr>
                }),
                _ => None,
            };
            previous = experiment.as_ref().map(|(id, _)| id.clone());
            let in_group = experiment.is_some();
            let full_name = r.name.clone();
            let link = format!("/runs/{}", r.id);
            let dash = || UNKNOWN.to_owned();
            let id = r.id.to_string();
            view! {
                {group}
                <tr class:in-group=in_group>
                    <td class="pick"><input type="checkbox" name="runs" value=id form="compare-form" aria-label="select for comparison" /></td>
                    <td class="name"><a href=link title=full_name>{r.name}</a>
                        {(r.status != RunStatus::Complete).then(|| view! { <span class="badge">{r.status.as_str()}</span> })}
                    </td>
                    <td class="wrap" data-label="Model">{r.model.unwrap_or_else(dash)}</td>
                    <td class="wrap" data-label="GPU">{r.gpu.unwrap_or_else(dash)}</td>
                    // May break after a slash: `/v1/chat/` over `completions`.
                    <td class="path" data-label="Endpoint">{match r.endpoint_kind {
                        None => dash().into_any(),
                        Some(e) => e.path().split_inclusive('/').map(|seg| view! { {seg.to_owned()}<wbr /> }).collect_view().into_any(),
                    }}</td>
                    <td class="num" data-label="Levels">{r.level_count}</td>
                    <td class="num" data-label="Peak tok/s">{shown(r.peak_output_tok_s, 1)}</td>
                    <td class="plateau" data-label="Plateau">{f.plateau.label()}</td>
                    <td class="num" data-label="tok/s per GPU">{shown(f.tok_s_per_gpu, 1)}</td>
                    {with_slo.then(|| view! {
                        <td class="capacity" data-label="Capacity">{f.capacity.as_ref().map_or_else(dash, |c| c.label())}</td>
                    })}
                    <td class="spark" data-label="Curve"><Sparkline curve=f.curve /></td>
                    <td class="when" data-label="When">{when(&r.created_at)}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <form class="filters" method="get" action="/" id="filters">
            <label class="search">"Search"<input type="search" name="q" value=query.q.clone().unwrap_or_default() placeholder="name, model, GPU, tag, notes" /></label>
            {options("model", "Model", pair(facets.models), query.model.clone())}
            {options("engine", "Engine", pair(facets.engines), query.engine.clone())}
            {options("gpu", "GPU", pair(facets.gpus), query.gpu.clone())}
            {options("endpoint", "Endpoint", EndpointKind::ALL.iter().map(|e| (e.as_str().to_owned(), e.path().to_owned())).collect(), query.endpoint.map(|e| e.as_str().to_owned()))}
            {options("tag", "Tag", pair(facets.tags), query.tag.clone())}
            {options("source", "Source", facets.sources.iter().map(|s| (s.as_str().to_owned(), s.label().to_owned())).collect(), query.source.map(|s| s.as_str().to_owned()))}
            {(!slos.is_empty()).then(|| options("slo", "Capacity at SLO", pair(slos.clone()), query.slo.clone()))}
            {(query.sort != SortKey::Created || !query.desc).then(|| view! {
                <input type="hidden" name="sort" value=query.sort.as_str() />
                <input type="hidden" name="dir" value=if query.desc { "desc" } else { "asc" } />
            })}
            <button type="submit">"Filter"</button>
            {filtered.then(|| view! { <a href="/">"Clear"</a> })}
        </form>
        <form id="compare-form" method="get" action="/compare" class="compare-bar">
            <span id="runs-total">{format!("{total} run{}", if total == 1 { "" } else { "s" })}</span>
            <button type="submit" id="compare-submit">"Compare selected"</button>
            <span class="delete-selected">
                <label><input type="checkbox" name="confirm" value="yes" id="delete-confirm" />" delete"</label>
                <button type="submit" formaction="/runs/delete" formmethod="post" class="danger" id="delete-submit"
                    title="Deletes the runs ticked, with everything stored with them (kept in the audit log)">"Delete selected"</button>
            </span>
        </form>
        {if empty {
            view! {
                <p class="empty">
                    {if filtered { "No run matches these filters." } else { "No runs yet." }}" "
                    <a href="/upload">"Import a benchmark result"</a>
                </p>
            }.into_any()
        } else {
            view! {
                <div class="table-wrap">
                <table class="runs" id="runs">
                    <thead><tr>
                        <th></th>
                        {header(SortKey::Name, "Run")}
                        {header(SortKey::Model, "Model")}
                        {header(SortKey::Gpu, "GPU")}
                        {header(SortKey::Endpoint, "Endpoint")}
                        {header(SortKey::Levels, "Levels")}
                        {header(SortKey::Peak, "Peak tok/s")}
                        <th title="The load from which throughput stops growing (the run page's knee)">"Plateau"</th>
                        <th>"tok/s per GPU"</th>
                        {slo.clone().map(|name| view! { <th id="capacity-head" title="The highest level meeting this SLO below its first failure">"Capacity at "{name}</th> })}
                        <th>"Curve"</th>
                        {header(SortKey::Created, "When")}
                    </tr></thead>
                    <tbody>{rows}</tbody>
                </table>
                </div>
            }.into_any()
        }}
        {(pages > 1).then(|| view! {
            <nav class="pager">
                {prev.map(|h| view! { <a href=h rel="prev">"← newer"</a> })}
                <span>{format!("page {} of {pages}", query.page)}</span>
                {next.map(|h| view! { <a href=h rel="next" id="next-page">"older →"</a> })}
            </nav>
        })}
    }
}
