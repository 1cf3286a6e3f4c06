//! `/r/<slug>` (a saved report: a titled view of the live data) and `/s/<id>` (a
//! snapshot: the data and annotations frozen when it was taken). Both render the same
//! run or compare view as the page they were made from.

use super::compare::CompareView;
use super::run::RunView;
use crate::api::{get_report_page, get_snapshot};
use crate::domain::view::pages::ReportPageData;
use crate::domain::view::state::{split_view_path, PageMode};
use crate::ui::components::{ErrorBox, ViewProblems};
use leptos::prelude::*;
use leptos_meta::{Meta, Title};
use leptos_router::hooks::use_params_map;

/// `/r/:slug`
#[component]
pub fn ReportPage() -> impl IntoView {
    let params = use_params_map();
    // One request (`page_data::report_page`): the report, its runs, what is stored beside
    // them and the charts for its view.
    let data = super::data::page_resource(move || params.read().get("slug").unwrap_or_default(), get_report_page);
    view! {
        <Suspense fallback=|| view! { <p>"Loading report…"</p> }>
            {move || Suspend::new(async move {
                match data.await {
                    Ok(ReportPageData { report, view: state, is_run, mut runs, dismissed, charts, cost, compare_costs, curves, run_findings, compare_findings, .. }) => {
                        let title = report.title.clone();
                        let desc = if report.description.is_empty() { format!("Plateau report: {}", report.title) } else { report.description.clone() };
                        let mode = PageMode::Report(report);
                        let body = if is_run {
                            match runs.pop() {
                                Some(run) => {
                                    let findings = run_findings.unwrap_or_default();
                                    view! { <RunView run view=state mode dismissed charts cost findings error=None /> }.into_any()
                                }
                                None => { crate::ui::components::set_page_status(404); view! { <p>"The report's run is gone."</p> }.into_any() }
                            }
                        } else {
                            {
                            let findings = compare_findings.unwrap_or_default();
                            view! { <CompareView runs view=state mode dismissed charts costs=compare_costs curves findings error=None /> }.into_any()
                        }
                        };
                        view! {
                            <Title text=title.clone() />
                            <Meta property="og:title" content=title />
                            <Meta property="og:description" content=desc />
                            {body}
                        }.into_any()
                    }
                    Err(e) => view! { <Title text="Report not found" /><ErrorBox error=e /> }.into_any(),
                }
            })}
        </Suspense>
    }
}

/// `/s/:id`
#[component]
pub fn SnapshotPage() -> impl IntoView {
    let params = use_params_map();
    let data = super::data::page_resource(move || params.read().get("id").unwrap_or_default(), get_snapshot);
    view! {
        <Suspense fallback=|| view! { <p>"Loading snapshot…"</p> }>
            {move || Suspend::new(async move {
                match data.await {
                    Ok(mut snap) => {
                        if let Some(plan) = snap.plan.take() {
                            let mode = PageMode::Snapshot { id: snap.id.clone(), title: snap.title.clone(), created_at: snap.created_at.clone() };
                            let title = format!("Snapshot: {}", snap.title);
                            return view! { <Title text=title /> <super::plan::PlanView data=plan frozen=Some((mode, snap.view_path.clone())) /> }.into_any();
                        }
                        let (run, state) = match split_view_path(&snap.view_path) {
                            Ok(x) => x,
                            Err(problems) => return view! { <ViewProblems problems fallback="/".to_owned() /> }.into_any(),
                        };
                        let mode = PageMode::Snapshot { id: snap.id.clone(), title: snap.title.clone(), created_at: snap.created_at.clone() };
                        let title = format!("Snapshot: {}", snap.title);
                        let mut runs = snap.runs;
                        let charts = snap.charts;
                        // The costs as they were when frozen (prices included).
                        let (cost, compare_costs) = (snap.cost, snap.compare_costs);
                        let curves = snap.curves;
                        let body = if run.is_some() {
                            match runs.pop() {
                                Some(run) => {
                                    let findings = snap.run_findings.clone().unwrap_or_default();
                                    view! { <RunView run view=state mode charts cost findings error=None /> }.into_any()
                                }
                                None => view! { <p>"The snapshot holds no run."</p> }.into_any(),
                            }
                        } else {
                            {
                            let findings = snap.compare_findings.clone().unwrap_or_default();
                            view! { <CompareView runs view=state mode charts costs=compare_costs curves findings error=None /> }.into_any()
                        }
                        };
                        view! { <Title text=title /> {body} }.into_any()
                    }
                    Err(e) => view! { <Title text="Snapshot not found" /><ErrorBox error=e /> }.into_any(),
                }
            })}
        </Suspense>
    }
}
