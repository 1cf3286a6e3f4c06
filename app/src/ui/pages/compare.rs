//! `/compare?runs=a&runs=b[&baseline=b]`: 2 to 10 runs side by side — each run's curve
//! against the baseline in one sentence (knee, plateau, capacity at the view's SLO), overlaid charts, the
//! per-level table with % change against the baseline, the explanation of each throughput
//! change, the facts diff with a comparability verdict, and the anomalies found, proposed
//! as annotations. Tables carry every number, so the page reads without JavaScript.

use crate::api::get_compare_page;
use crate::domain::analysis::compare::{Comparability, Comparison, Fact};
use crate::domain::model::format::{load, ms_as_s, run_colour, shown, UNKNOWN};
use crate::domain::model::metrics::{Metric, Stat};
use crate::domain::view::pages::ComparePageData;
use crate::domain::view::state::ChartSpec;
use crate::domain::view::state::{PageMode, Scale, ViewState, FOCUS_METRICS, FOCUS_STATS};
use crate::domain::{Point, Run};
use crate::error::AppError;
use crate::ui::components::{
    visible_annotations, AnnotationText, ErrorBox, ModeBanner, ProposalsList, ShareBar, ViewProblems,
};
use leptos::prelude::*;
use leptos_meta::Title;

/// `/compare`
#[component]
pub fn ComparePage() -> impl IntoView {
    let view_state = crate::ui::pages::run::current_view();
    // One request per page (`page_data::compare_page`): the runs, what is stored beside
    // them, the per-request tests against the baseline and the charts for this view. A view
    // that does not parse is shown as such below, without asking the server.
    let runs = super::data::page_resource(
        move || view_state.get().ok().map(|v| v.to_query()),
        |view| async move {
            match view {
                Some(view) => get_compare_page(view).await.map(Some),
                None => Ok(None),
            }
        },
    );
    let error = crate::ui::pages::run::form_error();
    view! {
        <Title text="Compare runs" />
        <Suspense fallback=|| view! { <p>"Loading runs…"</p> }>
            {move || {
                let error = error.clone();
                Suspend::new(async move {
                let state = match view_state.get_untracked() {
                    Ok(v) => v,
                    Err(problems) => return view! { <ViewProblems problems fallback="/".to_owned() /> }.into_any(),
                };
                match runs.await {
                    Ok(Some(ComparePageData { runs, dismissed, charts, slos, demands, costs, curves, findings, .. })) => view! {
                        <CompareView runs view=state mode=PageMode::Live dismissed charts slos demands costs curves findings error />
                    }.into_any(),
                    Ok(None) => view! { <p>"Loading runs…"</p> }.into_any(),
                    Err(e) => view! {
                        <h1>"Compare runs"</h1>
                        <ErrorBox error=e />
                        <p>{format!("Select {} in the ", crate::domain::model::comparison::run_count_rule())}<a href="/">"runs list"</a>" and press “Compare selected”."</p>
                    }.into_any(),
                }
            })}}
        </Suspense>
    }
}

fn compare_href(runs: &[Run], baseline: usize, view: &ViewState) -> String {
    let v = ViewState {
        runs: runs.iter().map(|r| r.id.clone()).collect(),
        baseline: runs.get(baseline).map(|r| r.id.clone()),
        ..view.clone()
    };
    v.href("/compare")
}

fn pct(v: Option<f64>) -> String {
    match v {
        Some(x) if x.is_finite() => format!("{x:+.1} %"),
        _ => UNKNOWN.to_owned(),
    }
}

/// The class of a % change: `better` (green) or `worse` (red) by the quantity's direction —
/// latency up is worse, throughput up is better — and plain for small changes or for
/// quantities with no better direction (token counts). `up`/`down` say which way it went.
fn delta_class(v: Option<f64>, higher_is_better: Option<bool>) -> &'static str {
    match (v, higher_is_better) {
        (Some(x), Some(true)) if x >= 5.0 => "delta up better",
        (Some(x), Some(false)) if x >= 5.0 => "delta up worse",
        (Some(x), Some(true)) if x <= -5.0 => "delta down worse",
        (Some(x), Some(false)) if x <= -5.0 => "delta down better",
        (Some(x), None) if x >= 5.0 => "delta up",
        (Some(x), None) if x <= -5.0 => "delta down",
        _ => "delta",
    }
}

fn verdict_label(c: Comparability) -> (&'static str, &'static str) {
    match c {
        Comparability::LikeForLike => ("like for like", "badge ok"),
        Comparability::SetupDiffers => ("setup differs", "badge"),
        Comparability::NotLikeForLike => ("not like for like", "badge bad"),
    }
}

fn fact_value(run: &Run, fact: Fact) -> String {
    let f = &run.facts;
    let d = |v: Option<String>| v.unwrap_or_else(|| UNKNOWN.to_owned());
    match fact {
        Fact::Model => d(f.model.clone()),
        Fact::Endpoint => d(f.endpoint_kind.map(|e| e.path().to_owned())),
        Fact::MaxTokens => d(f.max_tokens.map(|n| n.to_string())),
        Fact::PromptTokens => d(f.prompt_tokens.map(|n| match &run.definitions.prompt_length_source {
            Some(source) => source.label(n),
            None => n.to_string(),
        })),
        Fact::Workload => d(run.definitions.workload.as_ref().map(|w| w.label())),
        Fact::Definitions => {
            let x = &run.definitions;
            let parts: Vec<&str> = [
                x.ttft.map(|t| t.describe()),
                x.token_count.map(|t| t.describe()),
                x.throughput_window.map(|t| t.describe()),
            ]
            .into_iter()
            .flatten()
            .collect();
            if parts.is_empty() {
                UNKNOWN.to_owned()
            } else {
                parts.join("; ")
            }
        }
        Fact::Engine => d(f.engine.clone()),
        Fact::EngineVersion => d(f.engine_version.clone()),
        Fact::GpuType => d(f.gpu_type.clone()),
        Fact::GpuCount => d(f.gpu_count.map(|n| n.to_string())),
        Fact::Tags => {
            if f.tags.is_empty() {
                UNKNOWN.to_owned()
            } else {
                f.tags.join(", ")
            }
        }
    }
}

/// The comparison in a given view; also used by reports and snapshots.
#[component]
pub(crate) fn CompareView(
    runs: Vec<Run>,
    view: ViewState,
    mode: PageMode,
    #[prop(optional)] dismissed: Vec<String>,
    /// The page's charts for `view`, built on the server (`charts::pages::compare_chart_specs`).
    charts: Vec<ChartSpec>,
    /// The team's named SLOs, for the picker.
    #[prop(optional)]
    slos: Vec<crate::domain::analysis::slo::NamedSlo>,
    /// The team's stored demands (name, label), for the plan's menu (live page).
    #[prop(optional)]
    demands: Vec<(String, String)>,
    /// Each run's cost, indexed like `runs` (empty: none could be read).
    #[prop(optional)]
    costs: Vec<crate::domain::analysis::cost::CompareCostRow>,
    /// Each compared run's curve against the baseline, formatted on the server.
    #[prop(optional)]
    curves: Vec<crate::domain::analysis::curve::CurveLine>,
    /// What the page says about the runs, computed on the server.
    findings: crate::domain::view::findings::CompareFindings,
    error: Option<String>,
) -> impl IntoView {
    let baseline = crate::domain::model::comparison::baseline_index(&runs, view.baseline.as_ref());
    let editable = mode.editable();
    let live_path = compare_href(&runs, baseline, &view);
    let crate::domain::view::findings::CompareFindings {
        comparison,
        saturations,
        summaries,
        proposals,
        varied,
        capacities,
    } = findings;
    let Some(cmp) = comparison else {
        return view! { <ErrorBox error=AppError::BadRequest("no baseline".into()) /> }.into_any();
    };
    let n = runs.len();
    let live_query = live_path.split_once('?').map(|(_, q)| q.to_owned()).unwrap_or_default();
    let chips = run_chips(&runs, baseline, &view);
    let verdicts = verdict_items(&runs, &cmp);
    // One line for every run's comparability: how many differ from the baseline, and how.
    let differing: Vec<Comparability> =
        cmp.runs.iter().map(|rv| rv.facts.verdict).filter(|v| *v != Comparability::LikeForLike).collect();
    let comparability_title = comparability_title(cmp.runs.len(), &differing);
    let explanations = explanations(&runs, &cmp);
    let found = proposals;
    // Each run's curve against the baseline: the knee, the plateau and capacity at the
    // view's SLO, in one sentence with its evidence (`domain::analysis::curve`).
    let curve_view = curve_section(&runs, curves, &saturations);
    // Capacity at the view's SLO per run, and its change from the baseline.
    let slo_view = view.slo.clone().map(|slo| slo_section(&runs, &slos, slo, capacities));
    let picker = view! {
        <crate::ui::components::SloPicker view=view.clone() path="/compare".to_owned() slos editable />
    };
    let charts_view = view! {
        <crate::ui::components::ChartsSection charts />
    };
    // From the comparison to a deployment: the plan page with these runs and the view's SLO.
    let plan_pick = (mode == PageMode::Live).then(|| {
        let query = crate::domain::view::plan::PlanQuery {
            slo: view.slo.as_ref().map(ToString::to_string).unwrap_or_default(),
            runs: runs.iter().map(|r| r.id.clone()).collect(),
            ..Default::default()
        };
        view! { <crate::ui::components::PlanPick query demands id="compare-plan" text="Plan replicas, GPUs and cost for your traffic with these runs" /> }
    });
    let is_report = matches!(mode, PageMode::Report(_));
    // Link previews: the first explanation, else each run's summary; the baseline's curve.
    let og_description = explanations.first().cloned().unwrap_or_else(|| {
        runs.iter().zip(&summaries).map(|(r, summary)| format!("{}: {summary}", r.name)).collect::<Vec<_>>().join(" · ")
    });
    let og_title = format!("Compare: {}", runs.iter().map(|r| r.name.as_str()).collect::<Vec<_>>().join(" vs "));
    let og_image = runs
        .get(baseline)
        .map(|r| crate::ui::components::absolute_url(&format!("/og/runs/{}.png", r.id)))
        .unwrap_or_default();
    view! {
        // A saved report names itself (og:title, og:description): one of each.
        {(!is_report).then(|| view! {
            <leptos_meta::Meta property="og:title" content=og_title />
            <leptos_meta::Meta property="og:description" content=og_description.clone() />
        })}
        <leptos_meta::Meta name="description" content=og_description />
        <leptos_meta::Meta property="og:image" content=og_image />
        <ModeBanner mode=mode.clone() live_href=live_path.clone() />
        {error.map(|e| view! { <div class="error-box" role="alert" id="form-error">{e}</div> })}
        <h1 class:sub-head=is_report>"Compare "{n}" runs"</h1>
        // The verdicts first, each once: capacity at the SLO, each run's curve against the
        // baseline, why throughput differs; whether the runs are like for like is a caveat,
        // said once and collapsed. The view's controls follow, then the runs' legend and
        // the charts.
        <section class="summary-card" id="summary" aria-label="summary">
            {slo_view}
            {curve_view}
            {(!explanations.is_empty()).then(|| view! {
                <section class="explanations" id="explanations">
                    <h2>"Why throughput differs"</h2>
                    <ul>{explanations.into_iter().map(|e| view! { <li>{e}</li> }).collect_view()}</ul>
                </section>
            })}
            {(!cmp.runs.is_empty()).then(|| view! {
                <details class="caveat" id="comparability">
                    <summary>{comparability_title}</summary>
                    <ul class="verdicts" id="verdicts">{verdicts}</ul>
                </details>
            })}
        </section>
        <div class="controls" id="controls">
            <ViewSettings view=view.clone() />
            {picker}
        </div>
        <ul class="run-chips">{chips}</ul>
        {charts_view}
        <h2>"Per level, against the baseline"</h2>
        <div class="table-wrap"><DeltaTable runs=runs.clone() cmp=cmp.clone() /></div>
        <details class="all-changes" id="all-changes">
            <summary>"Every metric both runs report, level by level"</summary>
            <AllChanges runs=runs.clone() cmp=cmp.clone() />
        </details>
        <crate::ui::components::CompareCosts rows=costs />
        {plan_pick}
        <h2>"Facts"</h2>
        <div class="table-wrap">
            {facts_table(&runs, &varied)}
        </div>
        <CompareAnnotations runs=runs.clone() editable back=live_path.clone() />
        <h2>"Anomalies"</h2>
        <ProposalsList runs=runs.clone() found dismissed back=live_path.clone() editable />
        <ShareBar
            view_path=live_path.clone()
            exports=vec![
                ("CSV", format!("/compare/export.csv?{}", live_query)),
                ("JSON", format!("/compare/export.json?{}", live_query)),
                ("Markdown table", format!("/compare/export.md?{}", live_query)),
                ("HTML report (offline)", format!("/compare/report.html?{}", live_query)),
            ]
            editable
        />
    }
    .into_any()
}

fn cell_value(p: Option<&Point>, f: impl Fn(&Point) -> Option<f64>, digits: usize) -> String {
    shown(p.and_then(f), digits)
}

/// Output tok/s, p50 (or mean) latency and TTFT of each run at each level, with the %
/// change against the baseline.
#[component]
fn DeltaTable(runs: Vec<Run>, cmp: Comparison) -> impl IntoView {
    let baseline = cmp.baseline;
    let heads = runs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let title = if i == baseline { format!("{} (baseline)", r.name) } else { r.name.clone() };
            view! { <th colspan="3" class="run-head"><span class="swatch" style=format!("background:{}", run_colour(i))></span>{title}</th> }
        })
        .collect_view();
    let sub = runs
        .iter()
        .map(|_| view! { <th>"tok/s"</th><th>"latency avg (s)"</th><th>"TTFT p50 (ms)"</th> })
        .collect_view();
    let rows = cmp
        .levels
        .iter()
        .map(|l| {
            let base_point = l.points.get(baseline).copied().flatten().and_then(|j| runs.get(baseline)?.points.get(j));
            let cells = runs
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    let p = l.points.get(i).copied().flatten().and_then(|j| r.points.get(j));
                    // Mean first: every tool reports it, so the same statistic is compared.
                    let lat = |p: &Point| p.latency_ms(Stat::Mean).or_else(|| p.latency_ms(Stat::P50));
                    let ttft = |p: &Point| p.get(Metric::Ttft, Stat::P50).or_else(|| p.get(Metric::Ttft, Stat::Mean));
                    let change = |f: &dyn Fn(&Point) -> Option<f64>| -> Option<f64> {
                        if i == baseline {
                            return None;
                        }
                        let (a, b) = (f(base_point?)?, f(p?)?);
                        (a != 0.0).then(|| (b - a) / a * 100.0)
                    };
                    let tput_delta = change(&Point::output_tok_s);
                    let lat_delta = change(&lat);
                    let show = |d: Option<f64>, higher_is_better: bool| {
                        (i != baseline && d.is_some())
                            .then(|| view! { <span class=delta_class(d, Some(higher_is_better))>" "{pct(d)}</span> })
                    };
                    if p.is_none() {
                        return view! { <td colspan="3" class="absent">"not measured"</td> }.into_any();
                    }
                    view! {
                        <td>{cell_value(p, Point::output_tok_s, 1)}{show(tput_delta, true)}</td>
                        <td>{ms_as_s(p.and_then(lat))}{show(lat_delta, false)}</td>
                        <td>{cell_value(p, ttft, 1)}</td>
                    }
                    .into_any()
                })
                .collect_view();
            let only = l.only_in.and_then(|i| runs.get(i)).map(|r| format!("only in {}", r.name));
            view! {
                <tr>
                    <td class="load">{load(l.key.load_value)}{only.map(|o| view! { <span class="badge">{o}</span> })}</td>
                    {cells}
                </tr>
            }
        })
        .collect_view();
    view! {
        <table class="levels delta-table" id="delta-table">
            <thead>
                <tr><th rowspan="2">"load"</th>{heads}</tr>
                <tr>{sub}</tr>
            </thead>
            <tbody>{rows}</tbody>
        </table>
    }
}

/// Every quantity both a run and the baseline report at a shared level, with the change.
#[component]
fn AllChanges(runs: Vec<Run>, cmp: Comparison) -> impl IntoView {
    let base_name = runs.get(cmp.baseline).map(|r| r.name.clone()).unwrap_or_default();
    cmp.levels
        .into_iter()
        .flat_map(|l| {
            let key = l.key;
            l.deltas.into_iter().map(move |d| (key, d))
        })
        .map(|(key, d)| {
            let who = runs.get(d.run).map(|r| r.name.clone()).unwrap_or_default();
            let rows = d
                .changes
                .into_iter()
                .map(|c| {
                    let class = delta_class(c.change_pct, c.quantity.higher_is_better());
                    // Counts and wall time are not statistics a test applies to.
                    let noise = match (c.quantity, c.significance) {
                        (_, Some(s)) => s.verdict.label(),
                        (crate::domain::analysis::compare::Quantity::Measure { .. }, None) => {
                            crate::domain::analysis::noise::Verdict::CannotTell.label()
                        }
                        _ => "",
                    };
                    let title = c.noise_phrase().unwrap_or_default();
                    view! {
                        <tr>
                            <th>{c.quantity.label()}</th>
                            <td>{shown(Some(c.baseline), 2)}</td>
                            <td>{shown(Some(c.value), 2)}</td>
                            <td class=class>{pct(c.change_pct)}</td>
                            <td class="noise" title=title>{noise}</td>
                        </tr>
                    }
                })
                .collect_view();
            view! {
                <table class="levels changes">
                    <caption>{key.label()}": "{who.clone()}" vs "{base_name.clone()}</caption>
                    <thead><tr><th>"metric"</th><th>"baseline"</th><th>"this run"</th><th>"change"</th><th>"beyond noise?"</th></tr></thead>
                    <tbody>{rows}</tbody>
                </table>
            }
        })
        .collect_view()
}

/// The settings of the view, as a GET form: submitting it changes the URL, so the view is
/// always the address.
#[component]
fn ViewSettings(view: ViewState) -> impl IntoView {
    let metric_options = FOCUS_METRICS
        .into_iter()
        .map(|m| view! { <option value=m.as_str() selected=m == view.metric>{m.label()}</option> })
        .collect_view();
    let stat_options = FOCUS_STATS
        .into_iter()
        .map(|s| view! { <option value=s.name() selected=s == view.stat>{s.name()}</option> })
        .collect_view();
    let linear = view.scale == Scale::Linear;
    view! {
        <form method="get" action="/compare" class="view-settings" id="view-settings">
            <strong class="controls-label">"View"</strong>
            {view.runs.iter().map(|r| view! { <input type="hidden" name="runs" value=r.to_string() /> }).collect_view()}
            {view.baseline.as_ref().map(|b| view! { <input type="hidden" name="baseline" value=b.to_string() /> })}
            {(!view.hide.is_empty()).then(|| view! { <input type="hidden" name="hide" value=view.hide.join(",") /> })}
            <label>"Focus metric "<select name="metric">{metric_options}</select></label>
            <label>"statistic "<select name="stat">{stat_options}</select></label>
            <label>"load axis "<select name="scale">
                <option value="log" selected=!linear>"log₂"</option>
                <option value="linear" selected=linear>"linear"</option>
            </select></label>
            <button type="submit" class="secondary">"Apply"</button>
        </form>
    }
}

/// The annotations of the compared runs, and a form for a note on the comparison itself.
#[component]
fn CompareAnnotations(runs: Vec<Run>, editable: bool, back: String) -> impl IntoView {
    let list = visible_annotations(&runs);
    let name_of =
        |id: &crate::domain::RunId| runs.iter().find(|r| &r.id == id).map(|r| r.name.clone()).unwrap_or_default();
    let first = runs.first().map(|r| r.id.to_string()).unwrap_or_default();
    let ids = runs.iter().map(|r| r.id.to_string()).collect::<Vec<_>>().join(",");
    let action = format!("/runs/{first}/annotations");
    view! {
        <section class="annotations" id="annotations">
            <h2>"Annotations"</h2>
            {list.is_empty().then(|| view! { <p class="empty">"No annotations on these runs yet."</p> })}
            <ul class="annotation-list">
                {list.into_iter().map(|a| {
                    let on = if matches!(a.anchor, crate::domain::model::annotations::Anchor::Comparison { .. }) { "this comparison".to_owned() } else { format!("{} · {}", name_of(&a.run_id), a.anchor.label()) };
                    let href = format!("/runs/{}#annotation-{}", a.run_id, a.id);
                    view! {
                        <li class="annotation" data-id=a.id.to_string() data-kind=a.kind.as_str()>
                            <span class="badge">{a.kind.label()}</span>" "<a href=href class="anchor">{on}</a>" "
                            <span class="annotation-text"><AnnotationText body=a.body.clone() /></span>
                            <span class="annotation-meta">" — "{a.author.clone()}</span>
                        </li>
                    }
                }).collect_view()}
            </ul>
            {editable.then(|| view! {
                <details class="annotate" id="annotate-comparison">
                    <summary>"Annotate this comparison"</summary>
                    <form method="post" action=action class="annotation-form">
                        <input type="hidden" name="back" value=back.clone() />
                        <input type="hidden" name="anchor" value="comparison" />
                        <input type="hidden" name="runs" value=ids />
                        <label>"Kind "<select name="kind">
                            <option value="cause">"cause"</option>
                            <option value="note">"note"</option>
                            <option value="config_change">"config change"</option>
                        </select></label>
                        <label class="wide">"Text "<textarea name="body" rows="2" required></textarea></label>
                        <button type="submit">"Annotate"</button>
                    </form>
                </details>
            })}
        </section>
    }
}

/// Each run as a chip: its colour and chart toggle, its link, baseline or "make baseline".
fn run_chips(runs: &[Run], baseline: usize, view: &ViewState) -> impl IntoView {
    runs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let is_base = i == baseline;
            let link = format!("/runs/{}", r.id);
            let make_base = compare_href(runs, i, view);
            let shown = !view.hide.iter().any(|h| h == r.id.as_str());
            let series = r.name.clone();
            view! {
                <li class="run-chip">
                    <label class="toggle" title="show or hide this run in the charts">
                        <input type="checkbox" class="run-toggle" checked=shown data-series=series data-run=r.id.to_string() />
                        <span class="swatch" style=format!("background:{}", run_colour(i))></span>
                    </label>
                    <a href=link>{r.name.clone()}</a>
                    {if is_base {
                        view! { <span class="badge ok">"baseline"</span> }.into_any()
                    } else {
                        view! { <a class="set-baseline" href=make_base>"make baseline"</a> }.into_any()
                    }}
                </li>
            }
        })
        .collect_view()
}

/// Each compared run's curve against the baseline in one sentence; the knee's and the
/// plateau's evidence of every run together, collapsed.
fn curve_section(
    runs: &[Run],
    curves: Vec<crate::domain::analysis::curve::CurveLine>,
    saturations: &[Option<String>],
) -> impl IntoView {
    let curves: Vec<_> = curves.into_iter().filter(|c| c.run < runs.len()).collect();
    // Every run, the baseline included: where its own curve saturates, then its knee and
    // plateau against the baseline's.
    let details = runs
        .iter()
        .enumerate()
        .map(|(i, run)| {
            let own = saturations.get(i).cloned().flatten();
            let against = curves.iter().find(|c| c.run == i);
            view! {
                <li class="curve-run">
                    <span class="swatch" style=format!("background:{}", run_colour(i))></span>
                    <strong>{run.name.clone()}</strong>
                    <ul class="curve-details">
                        {own.map(|s| view! { <li class="saturation">{s}</li> })}
                        {against.map(|c| view! {
                            <li class="curve-knee">"Knee: "{c.knee.clone()}"."</li>
                            <li class="curve-plateau">"Plateau: "{c.plateau.clone()}"."</li>
                        })}
                    </ul>
                </li>
            }
        })
        .collect_view();
    let lines = curves
        .into_iter()
        .filter_map(|c| {
            let run = runs.get(c.run)?;
            let class = if c.worse { "curve-verdict worse" } else { "curve-verdict" };
            Some(view! {
                <li class=class data-knee=c.knee_verdict data-plateau=c.plateau_verdict>
                    <span class="swatch" style=format!("background:{}", run_colour(c.run))></span>
                    <strong>{run.name.clone()}</strong>": "{c.headline}
                </li>
            })
        })
        .collect_view();
    view! {
        <section class="curve" id="curve">
            <h2>"Curve against the baseline"</h2>
            <ul class="curve-verdicts" id="curve-verdicts">{lines}</ul>
            <details class="evidence" id="curve-evidence">
                <summary>"Each run's own curve, knee and plateau, with their noise"</summary>
                <ul class="curve-evidence">{details}</ul>
            </details>
        </section>
    }
}

/// Capacity at the view's SLO per run, and its change from the baseline.
fn slo_section(
    runs: &[Run],
    slos: &[crate::domain::analysis::slo::NamedSlo],
    slo: crate::domain::analysis::slo::Slo,
    capacities: Vec<crate::domain::analysis::slo::RunCapacity>,
) -> impl IntoView {
    let named = crate::domain::analysis::slo::NamedSlo::find(slos, &slo).map(|n| n.name.clone());
    let title = match named {
        Some(n) => format!("Capacity at SLO “{n}” ({})", slo.spaced()),
        None => format!("Capacity at {}", slo.spaced()),
    };
    let rows = capacities
        .into_iter()
        .filter_map(|rc| {
            let run = runs.get(rc.run)?;
            let change = rc.change.map(|c| {
                let class = match c.direction {
                    crate::domain::analysis::slo::Direction::Fell => "delta down worse",
                    crate::domain::analysis::slo::Direction::Rose => "delta up better",
                    _ => "delta",
                };
                view! { <div class=class data-direction=format!("{:?}", c.direction).to_lowercase()>"Against the baseline: "{c.sentence}"."</div> }
            });
            Some(view! {
                <li class="run-capacity">
                    <span class="swatch" style=format!("background:{}", run_colour(rc.run))></span>
                    <strong>{run.name.clone()}</strong>": "{rc.sentence}
                    {change}
                </li>
            })
        })
        .collect_view();
    view! {
        <section class="slo" id="slo" data-slo=slo.to_string()>
            <h2>{title}</h2>
            <ul class="run-capacities" id="run-capacities">{rows}</ul>
        </section>
    }
}

/// The facts of every run side by side, the settings under test first, the rows that
/// differ marked.
fn facts_table(runs: &[Run], varied: &[(String, Vec<Option<String>>)]) -> impl IntoView {
    // The settings under test first (`key=value` tags, as a sweep folder's names give them):
    // what tells an experiment's runs apart.
    let setting_rows = varied
        .iter()
        .map(|(key, values)| {
            let cells = values
                .iter()
                .map(|v| view! { <td>{v.clone().unwrap_or_else(|| UNKNOWN.to_owned())}</td> })
                .collect_view();
            view! { <tr class="differs setting"><th>{key.clone()}</th>{cells}</tr> }
        })
        .collect_view();
    let facts_rows = Fact::ALL
        .iter()
        .map(|fact| {
            let values: Vec<String> = runs.iter().map(|r| fact_value(r, *fact)).collect();
            let differs = values.iter().any(|v| v != values.first().unwrap_or(v));
            let cells = values.into_iter().map(|v| view! { <td>{v}</td> }).collect_view();
            view! { <tr class:differs=differs><th>{fact.label()}</th>{cells}</tr> }
        })
        .collect_view();
    let run_heads = runs
        .iter()
        .enumerate()
        .map(|(i, r)| view! { <th><span class="swatch" style=format!("background:{}", run_colour(i))></span>{r.name.clone()}</th> })
        .collect_view();
    view! {
        <table class="facts-diff" id="facts-diff">
            <thead><tr><th></th>{run_heads}</tr></thead>
            <tbody>{setting_rows}{facts_rows}</tbody>
        </table>
    }
}

/// The one line that says whether the runs compare like for like: "Like for like with the
/// baseline", or how many are not and how many only differ in setup.
fn comparability_title(compared: usize, differing: &[Comparability]) -> String {
    let not = differing.iter().filter(|v| **v == Comparability::NotLikeForLike).count();
    let setup = differing.iter().filter(|v| **v == Comparability::SetupDiffers).count();
    let runs = |n: usize| if n == 1 { "1 run".to_owned() } else { format!("{n} runs") };
    match (not, setup) {
        (0, 0) if compared == 1 => "Like for like with the baseline".to_owned(),
        (1, 0) if compared == 1 => "Not like for like with the baseline (what differs)".to_owned(),
        (0, 1) if compared == 1 => "A different setup than the baseline (what differs)".to_owned(),
        (0, 0) => format!("All {compared} runs like for like with the baseline"),
        (0, s) => format!("{} of {compared} with a different setup than the baseline (what differs)", runs(s)),
        (n, 0) => format!("{} of {compared} not like for like with the baseline (what differs)", runs(n)),
        (n, s) => format!(
            "{} of {compared} not like for like with the baseline, {} with a different setup (what differs)",
            runs(n),
            runs(s)
        ),
    }
}

/// Each run's comparability verdict against the baseline, with its explanation.
fn verdict_items(runs: &[Run], cmp: &Comparison) -> impl IntoView {
    cmp.runs
        .iter()
        .filter_map(|rv| {
            let run = runs.get(rv.run)?;
            let (label, class) = verdict_label(rv.facts.verdict);
            Some(view! {
                <li class="verdict">
                    <span class=class>{label}</span>" "
                    <strong>{run.name.clone()}</strong>" vs baseline: "{rv.facts.explanation.clone()}
                </li>
            })
        })
        .collect_view()
}

/// Why throughput differs at each shared level, one sentence per run and level; named by
/// run when more than two runs are compared.
fn explanations(runs: &[Run], cmp: &Comparison) -> Vec<String> {
    cmp.levels
        .iter()
        .flat_map(|l| {
            l.deltas.iter().filter_map(|d| {
                // The attribution, what the server did differently, and whether it is beyond noise.
                let text = d.explanation()?;
                let who = runs.get(d.run).map(|r| r.name.clone()).unwrap_or_default();
                (runs.len() > 2).then(|| format!("{who}: {text}")).or(Some(text))
            })
        })
        .collect()
}
