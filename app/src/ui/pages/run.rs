//! A run's page: its facts, the scaling and latency charts (with annotation markers), the
//! levels table, the annotations, anomaly proposals, and the share and export bar.
//!
//! The URL carries the view (`?scale=linear&hide=p99`, see [`ViewState`]); the same view
//! renders under a saved report (`/r/<slug>`) and from a snapshot (`/s/<id>`, frozen data).

use crate::api::get_run_page;
use crate::domain::model::annotations::Effect;
use crate::domain::model::format::{load, shown, when, UNKNOWN};
use crate::domain::model::metrics::Stat;
use crate::domain::view::pages::RunPageData;
use crate::domain::view::state::ChartSpec;
use crate::domain::view::state::{PageMode, ViewState};
use crate::domain::Run;
use crate::ui::components::{
    AnnotationsSection, DefinitionsView, ErrorBox, LevelsTable, MeasuresTable, ModeBanner, ProposalsList, ShareBar,
    SloPicker, SloSection, ViewProblems,
};
use leptos::prelude::*;
use leptos_meta::{Meta, Title};
use leptos_router::hooks::{use_params_map, use_query_map};

/// The view state of the current URL, or its problems.
pub(crate) fn current_view() -> Memo<Result<ViewState, Vec<crate::domain::view::state::ViewProblem>>> {
    let query = use_query_map();
    Memo::new(move |_| {
        let map = query.read();
        let pairs: Vec<(String, String)> = map.clone().into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        ViewState::parse(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())))
    })
}

/// `?error=…` set by a form that failed.
pub(crate) fn form_error() -> Option<String> {
    use_query_map().read_untracked().get("error")
}

/// `/runs/:id`
#[component]
pub fn RunPage() -> impl IntoView {
    let params = use_params_map();
    let view_state = current_view();
    // One request per page (`page_data::run_page`): the run, what is stored beside it, its
    // history check, its percentile intervals and its charts for this view. A view that
    // does not parse is shown as such below, without asking the server.
    let run = super::data::page_resource(
        move || {
            let id = params.read().get("id").unwrap_or_default();
            (id, view_state.get().ok().map(|v| v.to_query()))
        },
        |(id, view)| async move {
            match view {
                Some(view) => get_run_page(id, view).await.map(Some),
                None => Ok(None),
            }
        },
    );
    let error = form_error();
    view! {
        <Suspense fallback=|| view! { <p>"Loading run…"</p> }>
            {move || {
                let error = error.clone();
                Suspend::new(async move {
                let id = params.read_untracked().get("id").unwrap_or_default();
                let state = match view_state.get_untracked() {
                    Ok(v) => v,
                    Err(problems) => {
                        return view! { <Title text="Invalid view" /><ViewProblems problems fallback=format!("/runs/{id}") /> }.into_any();
                    }
                };
                match run.await {
                    Ok(Some(RunPageData { run, dismissed, percentiles, charts, goodput, slos, demands, cost, alerts, turns, findings, .. })) => view! {
                        <RunView run view=state mode=PageMode::Live dismissed percentiles charts goodput slos demands cost alerts turns findings error />
                    }.into_any(),
                    Ok(None) => view! { <p>"Loading run…"</p> }.into_any(),
                    Err(e) => view! { <Title text="Run not found" /><ErrorBox error=e /> }.into_any(),
                }
            })}}
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

/// The page of one run in a given view; also used by reports and snapshots.
#[component]
pub(crate) fn RunView(
    run: Run,
    view: ViewState,
    mode: PageMode,
    #[prop(optional)] dismissed: Vec<String>,
    /// What the run costs (`None`: the prices could not be read); a snapshot's as frozen.
    #[prop(optional_no_strip)]
    cost: Option<crate::domain::analysis::cost::CostView>,
    /// What was sent to the alert webhooks about it (live page).
    #[prop(optional)]
    alerts: Vec<crate::domain::analysis::alerts::AlertView>,
    /// Bootstrap intervals of the levels' latency percentiles (from per-request records);
    /// empty on shared pages and snapshots.
    #[prop(optional)]
    percentiles: Vec<crate::domain::analysis::noise::LevelPercentiles>,
    /// The page's charts for `view`, built on the server (`charts::pages::run_chart_specs`).
    charts: Vec<ChartSpec>,
    /// With an SLO in the view: each level's goodput from its per-request records; empty on
    /// shared pages and snapshots (their levels are judged by their statistics alone).
    #[prop(optional)]
    goodput: Vec<crate::domain::analysis::slo::LevelGoodput>,
    /// The team's named SLOs, for the picker.
    #[prop(optional)]
    slos: Vec<crate::domain::analysis::slo::NamedSlo>,
    /// The team's stored demands (name, label), for the plan's menu (live page).
    #[prop(optional)]
    demands: Vec<(String, String)>,
    /// A multi-turn or agentic run's requests by turn (live page).
    #[prop(optional_no_strip)]
    turns: Option<crate::domain::analysis::turns::TurnPanel>,
    /// What the page says about the run, computed on the server.
    findings: crate::domain::view::findings::RunFindings,
    error: Option<String>,
) -> impl IntoView {
    let desc = findings.summary.clone();
    let status = run.status;
    let status_title = match status {
        crate::domain::RunStatus::Complete => "",
        crate::domain::RunStatus::Partial => "some levels or values are missing",
        crate::domain::RunStatus::Running => "a live sweep is still measuring this run",
        crate::domain::RunStatus::Interrupted => "the sweep stopped early; the finished levels are whole",
    };
    let why = findings.why.clone();
    let why_sentence = why.as_ref().map(|w| w.sentence.clone()).unwrap_or_default();
    let editable = mode.editable();
    let live_path = view.href(&format!("/runs/{}", run.id));
    let back = live_path.clone();
    let set_aside = run.set_aside.clone();
    let annotations = run.annotations.clone();
    let og_title = run.name.clone();
    let definitions = run.definitions.clone();
    let saturation = findings.saturation.clone();
    // Beyond the last level: where it should plateau, and a sweep of the next level.
    let estimate = findings.estimate.clone().map(|e| {
        let live = mode == PageMode::Live;
        let next = (live && !e.next_href.is_empty())
            .then(|| view! { " "<a id="measure-next" href=e.next_href>{e.next_label}</a> });
        let search = (live && !e.search_href.is_empty())
            .then(|| view! { " · "<a id="search-from-estimate" href=e.search_href>"Find it adaptively"</a> });
        view! { <p class="estimate" id="estimate">{e.sentence}{next}{search}</p> }
    });
    // Against the hardware: the sentence in the summary, the levels and assumptions below.
    let roofline = findings.roofline.clone();
    let roof_line = roofline
        .as_ref()
        .filter(|r| !r.rows.is_empty())
        .map(|r| view! { <p class="roofline" id="roofline-line">{r.sentence.clone()}</p> });
    let roof_section = roofline.map(|r| view! { <RooflineSection roofline=r live=mode == PageMode::Live /> });
    let found = findings.proposals.clone();
    // The regression gate's verdict, the page's first line: regressed or not, by how much,
    // against which runs.
    let history_line = findings.history_line.clone();
    // Beside it, the change point this run still stands on the worse side of.
    let since_change = findings.since_change.clone();
    let is_report = matches!(mode, PageMode::Report(_));
    // Capacity at the view's SLO: first on the page, before where and why it plateaus.
    let capacity = findings.capacity.clone();
    let has_goodput = goodput.iter().any(|g| g.goodput.is_ok());
    let capacity_at = capacity.as_ref().and_then(|c| {
        let key =
            crate::domain::model::level::LevelKey { load_kind: c.load_kind?, load_value: c.capacity.as_ref()?.load };
        Some((key.load_value, key.label()))
    });
    let usd_per_mtok =
        capacity_at.as_ref().and_then(|(load, _)| cost.as_ref()?.usd_per_mtok_at(*load).map(str::to_owned));
    let slo_section = capacity.clone().map(|capacity| {
        let named = crate::domain::analysis::slo::NamedSlo::find(&slos, &capacity.slo).map(|n| n.name.clone());
        view! { <SloSection run=run.clone() capacity named has_goodput usd_per_mtok /> }
    });
    // From capacity to a deployment: the plan page, this run and the view's SLO filled in.
    let plan_link = (mode == PageMode::Live && capacity.as_ref().is_some_and(|c| c.capacity.is_some())).then(|| {
        let q = crate::domain::view::plan::PlanQuery {
            slo: view.slo.as_ref().map(ToString::to_string).unwrap_or_default(),
            runs: vec![run.id.clone()],
            ..Default::default()
        };
        view! {
            <crate::ui::components::PlanPick query=q demands id="plan-link" text="Plan replicas, GPUs and cost for your traffic at this SLO" />
        }
    });
    let kind = run.points.first().map_or(crate::domain::LoadKind::Concurrency, |p| p.load_kind);
    let cost_section = view! {
        <crate::ui::components::CostSection cost kind capacity=capacity_at action=format!("/runs/{}/price", run.id) back=back.clone() editable=mode == PageMode::Live gpu_type=run.facts.gpu_type.clone() />
    };
    let picker = view! {
        <SloPicker view=view.clone() path=format!("/runs/{}", run.id) slos editable=mode == PageMode::Live />
    };
    view! {
        <RunMeta name=og_title run_id=run.id.to_string() desc=desc.clone() is_report />
        <ModeBanner mode=mode.clone() live_href=live_path.clone() />
        {error.map(|e| view! { <div class="error-box" role="alert" id="form-error">{e}</div> })}
        <div class="page-head" class:sub-head=is_report>
            <h1 id="run-name">{run.name.clone()}</h1>
            {(status != crate::domain::RunStatus::Complete).then(|| view! { <span class="badge" title=status_title>{status.as_str()}</span> })}
        </div>
        // The verdicts first, each once, in the order a team acts on them: regressed or
        // not, capacity at the SLO (with its $), where it plateaus and why. Caveats and
        // evidence are collapsed; the view's controls follow, then the charts.
        <section class="summary-card" id="summary" aria-label="summary">
            {(history_line.is_some() || since_change.is_some()).then(|| {
                let regressed = history_line.as_ref().is_some_and(|v| v.regressed);
                let class = if regressed {
                    "history-check regressed"
                } else if since_change.is_some() {
                    "history-check worse-side"
                } else {
                    "history-check"
                };
                view! {
                    <div class=class id="history-check" role=regressed.then_some("alert")>
                        {history_line.map(|v| view! {
                            <p id="history-verdict-line">{v.sentence}</p>
                            {(!v.against.is_empty()).then(|| view! {
                                <p class="hint" id="history-against">"Judged against: "
                                    {v.against.into_iter().enumerate().map(|(i, (href, label))| view! {
                                        {(i > 0).then_some(", ")}<a href=href>{label}</a>
                                    }).collect_view()}
                                </p>
                            })}
                        })}
                        {since_change.map(|c| view! {
                            <p id="history-change-line">{c.sentence}" "<a href=c.history_href>"See the history"</a></p>
                        })}
                    </div>
                }
            })}
            // What was measured, after whether it regressed.
            <p class="summary">{desc}</p>
            {slo_section}
            {plan_link}
            {saturation.map(|s| view! { <p class="saturation" id="saturation">{s}</p> })}
            {estimate}
            {why.map(|why| view! { <WhySection why /> })}
            {roof_line}
        </section>
        {(status == crate::domain::RunStatus::Running).then(|| view! { <LiveBanner run_id=run.id.to_string() /> })}
        <div class="controls" id="controls">
            <ViewLinks view=view.clone() path=format!("/runs/{}", run.id) />
            {picker}
        </div>
        <crate::ui::components::ChartsSection charts />
        <h2 id="facts-head">"Run"</h2>
        <RunFactsList run=run.clone() />
        {editable.then(|| view! { <RunCorrections run=run.clone() back=back.clone() /> })}
        <h2>"Levels"</h2>
        {findings.client_limited.clone().map(|c| view! { <p class="caveat-line" id="client-limited" role="note">{c}</p> })}
        <div class="table-wrap"><LevelsTable points=run.points.clone() annotations=annotations percentiles slo=capacity goodput /></div>
        <crate::ui::components::FailuresSection points=run.points.clone() />
        {turns.map(|panel| view! { <crate::ui::components::TurnsSection panel /> })}
        {(!set_aside.is_empty()).then(|| view! { <SetAsideTable set_aside /> })}
        {cost_section}
        {roof_section}
        <AnnotationsSection run=run.clone() back=back.clone() editable />
        <h2>"Anomalies"</h2>
        {(mode == PageMode::Live).then(|| view! {
            <p class="history-link"><a id="history-link" href=format!("/runs/{}/history", run.id)>"This configuration’s history"</a>" — every run of it over time, with the regression limits"</p>
        })}
        <ProposalsList runs=vec![run.clone()] found dismissed back=back.clone() editable said_above=why_sentence />
        {(!alerts.is_empty()).then(|| view! {
            <crate::ui::components::AlertsSection run_id=run.id.to_string() alerts back=back.clone() editable />
        })}
        <h2>"How these numbers are defined"</h2>
        <DefinitionsView definitions=definitions points=run.points.clone() />
        <details class="all-measures">
            <summary>"Every statistic the source reported"</summary>
            <div class="table-wrap"><MeasuresTable points=run.points.clone() /></div>
        </details>
        <RunShareBar run_id=run.id.to_string() live_path editable />
    }
}

/// A running sweep's banner: its progress (filled in by the page's script) and Cancel.
#[component]
fn LiveBanner(run_id: String) -> impl IntoView {
    let cancel = format!("/api/v1/sweeps/{run_id}/cancel");
    view! {
        <div class="live" id="live" data-run=run_id>
            <strong>"Sweep running. "</strong>
            <span id="live-text">"Levels appear here as they finish."</span>
            <progress id="live-progress" max="1" value="0"></progress>
            <form method="post" action=cancel id="cancel-form"><button type="submit" id="cancel-sweep" class="secondary">"Cancel"</button></form>
        </div>
    }
}

/// Why the run plateaus, with the evidence the rule read.
#[component]
fn WhySection(why: crate::domain::analysis::why_signals::WhyParagraph) -> impl IntoView {
    let kind = why.kind.map_or("none", |k| k.as_str());
    view! {
        <div class="why" id="why" data-kind=kind>
            <p><strong id="why-heading">{format!("{}: ", why.heading)}</strong><span id="why-sentence">{why.sentence}</span></p>
            {(!why.evidence.is_empty()).then(|| view! {
                <details class="evidence">
                    <summary>{format!("The evidence ({})", why.evidence.len())}</summary>
                    <ul class="why-evidence" id="why-evidence">
                        {why.evidence.into_iter().map(|e| view! { <li>{e}</li> }).collect_view()}
                    </ul>
                </details>
            })}
        </div>
    }
}

/// The levels an annotation excluded or hid, each with a link to its annotation.
#[component]
fn SetAsideTable(set_aside: Vec<crate::domain::model::annotations::SetAside>) -> impl IntoView {
    view! {
        <h3>"Levels set aside by annotations"</h3>
        <table class="levels set-aside" id="set-aside">
            <thead><tr><th>"load"</th><th>"effect"</th><th>"output tok/s"</th><th>"latency p50 (s)"</th><th>"why"</th></tr></thead>
            <tbody>
                {set_aside.into_iter().map(|s| {
                    let why = format!("#annotation-{}", s.annotation);
                    let effect = if s.effect == Effect::Hide { "hidden" } else { "excluded from analysis" };
                    view! {
                        <tr>
                            <td class="load">{load(s.point.load_value)}</td>
                            <td>{effect}</td>
                            <td>{shown(s.point.output_tok_s(), 1)}</td>
                            <td>{crate::domain::model::format::ms_as_s(s.point.latency_ms(Stat::P50))}</td>
                            <td><a href=why>"annotation"</a></td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
    }
}

/// The load axis' scale as links to this page in each.
#[component]
fn ViewLinks(view: ViewState, path: String) -> impl IntoView {
    use crate::domain::view::state::Scale;
    view! {
        <p class="view-links" id="view-links">
            "Load axis: "
            <a href=ViewState { scale: Scale::Log, ..view.clone() }.href(&path) class:current=view.scale == Scale::Log>"log₂"</a>
            " · "
            <a href=ViewState { scale: Scale::Linear, ..view.clone() }.href(&path) class:current=view.scale == Scale::Linear>"linear"</a>
            <span class="hint">" · a series switched off in a legend stays off in this page's address"</span>
        </p>
    }
}

/// The run's facts (model, engine, GPU, endpoint, lengths, workload, source, when), its tags
/// and notes.
#[component]
fn RunFactsList(run: Run) -> impl IntoView {
    let f = run.facts.clone();
    let engine = match (&f.engine, &f.engine_version) {
        (Some(e), Some(v)) => Some(format!("{e} {v}")),
        (Some(e), None) => Some(e.clone()),
        (None, Some(v)) => Some(format!("version {v}")),
        (None, None) => None,
    };
    let live = run.source.format == crate::domain::SourceFormat::LiveSweep;
    let source = match (&run.source.file_name, live) {
        (Some(target), true) => format!("live sweep against {target}"),
        (Some(name), false) => format!("{} ({name})", run.source.format.label()),
        (None, _) => run.source.format.label().to_owned(),
    };
    // A live sweep ran then; anything else was imported then.
    let created_label = if live { "Ran" } else { "Imported" };
    let tags = f.tags.clone();
    let notes = f.notes.clone();
    view! {
    <dl class="facts">
        {fact("Model", f.model.clone())}
        {fact("Engine", engine)}
        {fact("GPU", f.gpu_label())}
        {fact("Endpoint", f.endpoint_kind.map(|e| e.path().to_owned()))}
        {fact("max_tokens", f.max_tokens.map(|n| n.to_string()))}
        {fact("Prompt length", f.prompt_tokens.map(|n| match &run.definitions.prompt_length_source {
            Some(source) => source.label(n),
            None => format!("{n} tokens"),
        }))}
        // Only when recorded: an import says nothing of its workload.
        {run.definitions.workload.as_ref().map(|w| fact("Workload", Some(w.label())))}
        {fact("Source", Some(source))}
        {fact(created_label, Some(when(&run.created_at)))}
    </dl>
    {(!tags.is_empty()).then(|| view! {
        <ul class="tags">{tags.into_iter().map(|t| view! { <li>{t}</li> }).collect_view()}</ul>
    })}
    {(!notes.is_empty()).then(|| view! { <p class="notes">{notes}</p> })}
    }
}

/// Setting a run right: its name and facts (each field replaces the stored one; an empty
/// one clears it), or deleting it (a box to tick first). Each correction goes to the audit
/// log (`GET /api/v1/audit`).
#[component]
fn RunCorrections(run: Run, back: String) -> impl IntoView {
    let f = run.facts.clone();
    let edit = format!("/runs/{}/edit", run.id);
    let delete = format!("/runs/{}/delete", run.id);
    let endpoint = f.endpoint_kind.map_or("", crate::domain::EndpointKind::as_str);
    let text = |v: &Option<String>| v.clone().unwrap_or_default();
    view! {
        <details class="run-edit" id="run-edit">
            <summary>"Edit or delete this run"</summary>
            <form method="post" action=edit class="annotation-form edit-form" id="run-edit-form">
                <input type="hidden" name="back" value=back />
                <label>"Name "<input name="name" value=run.name.clone() required maxlength="500" /></label>
                <label>"Model "<input name="model" value=text(&f.model) maxlength="256" /></label>
                <label>"Engine "<input name="engine" value=text(&f.engine) maxlength="256" /></label>
                <label>"Engine version "<input name="engine_version" value=text(&f.engine_version) maxlength="256" /></label>
                <label>"GPU type "<input name="gpu_type" value=text(&f.gpu_type) maxlength="256" /></label>
                <label>"GPUs "<input name="gpu_count" type="number" min="1" max="65536" value=f.gpu_count.map(|n| n.to_string()).unwrap_or_default() /></label>
                <label>"Endpoint "<select name="endpoint_kind">
                    <option value="" selected=endpoint.is_empty()>"not recorded"</option>
                    <option value="chat" selected=endpoint == "chat">"chat"</option>
                    <option value="completions" selected=endpoint == "completions">"completions"</option>
                </select></label>
                <label>"Tags "<input name="tags" value=f.tags.join(", ") /></label>
                <label class="wide">"Notes "<textarea name="notes" rows="3" inner_html=crate::ui::components::textarea_html(&f.notes)></textarea></label>
                <button type="submit">"Save"</button>
            </form>
            <form method="post" action=delete class="delete-form" id="run-delete-form">
                <label><input type="checkbox" name="confirm" value="yes" required />" yes, delete this run and everything stored with it"</label>
                <button type="submit" class="danger">"Delete run"</button>
            </form>
        </details>
    }
}

/// Sharing the page and its exports: JSON (lossless), CSV, Markdown and the offline HTML
/// report of this view.
#[component]
fn RunShareBar(run_id: String, live_path: String, editable: bool) -> impl IntoView {
    let export_html =
        format!("/runs/{run_id}/report.html{}", live_path.find('?').map(|i| &live_path[i..]).unwrap_or(""));
    view! {
        <ShareBar
            view_path=live_path
            exports=vec![
                ("JSON (lossless)", format!("/api/v1/runs/{run_id}/export.json")),
                ("CSV", format!("/api/v1/runs/{run_id}/export.csv")),
                ("Markdown table", format!("/api/v1/runs/{run_id}/export.md")),
                ("HTML report (offline)", export_html),
            ]
            editable
        />
    }
}

/// The page's title and link-preview tags. A saved report names itself (title, og:title,
/// og:description), so a run inside one leaves those to it: one of each.
#[component]
fn RunMeta(name: String, run_id: String, desc: String, is_report: bool) -> impl IntoView {
    view! {
        {(!is_report).then(|| view! {
            <Title text=name.clone() />
            <Meta property="og:title" content=name />
            <Meta property="og:description" content=desc.clone() />
        })}
        <Meta name="description" content=desc />
        <Meta property="og:type" content="article" />
        <Meta property="og:image" content=crate::ui::components::absolute_url(&format!("/og/runs/{run_id}.png")) />
        <Meta name="twitter:card" content="summary_large_image" />
    }
}

/// Each level against the hardware's roofs, and every assumption; or, where a fact is
/// missing, what to enter (a link to the hardware page on the live page).
#[component]
fn RooflineSection(roofline: crate::domain::view::findings::RooflineFinding, live: bool) -> impl IntoView {
    let crate::domain::view::findings::RooflineFinding { sentence, summary, rows, assumptions, enter_href } = roofline;
    if rows.is_empty() {
        let link =
            enter_href.filter(|_| live).map(|href| view! { " "<a id="roofline-enter" href=href>"Enter them"</a> });
        return view! { <p class="hint" id="roofline-missing">{sentence}{link}</p> }.into_any();
    }
    view! {
        <h2 id="roofline-head">"Against the hardware"</h2>
        <details id="roofline">
            <summary>{summary}" — each level against its roofs, and the assumptions"</summary>
            <div class="table-wrap">
                <table class="levels" id="roofline-table">
                    <thead><tr><th>"level"</th><th>"batch"</th><th>"measured tok/s"</th><th>"memory roof tok/s"</th><th>"compute roof tok/s"</th><th>"of the lower roof"</th></tr></thead>
                    <tbody>
                        {rows.into_iter().map(|r| view! { <tr>{r.into_iter().map(|c| view! { <td>{c}</td> }).collect_view()}</tr> }).collect_view()}
                    </tbody>
                </table>
            </div>
            <ul id="roofline-assumptions">
                {assumptions.into_iter().map(|a| view! { <li>{a}</li> }).collect_view()}
            </ul>
        </details>
    }
    .into_any()
}
