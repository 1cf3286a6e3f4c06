//! `/r/<slug>` (a saved report: a titled view of the live data) and `/s/<id>` (a
//! snapshot: the data and annotations frozen when it was taken). Both render the same
//! run or compare view as the page they were made from.

use super::compare::CompareView;
use super::run::RunView;
use crate::api::{dismissed_proposals, get_report, get_run, get_runs, get_snapshot, get_stored_signals};
use crate::domain::view::{query_pairs, PageMode, ViewProblem, ViewState};
use crate::error::AppError;
use crate::ui::components::{ErrorBox, ViewProblems};
use leptos::prelude::*;
use leptos_meta::{Meta, Title};
use leptos_router::hooks::use_params_map;

/// Splits a stored view path into the run it shows (if a run page) and its state.
fn parse_path(path: &str) -> Result<(Option<String>, ViewState), Vec<ViewProblem>> {
    let (page, query) = path.split_once('?').unwrap_or((path, ""));
    let pairs = query_pairs(query);
    let state = ViewState::parse(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())))?;
    Ok((page.strip_prefix("/runs/").map(str::to_owned), state))
}

/// `/r/:slug`
#[component]
pub fn ReportPage() -> impl IntoView {
    let params = use_params_map();
    let data = Resource::new(
        move || params.read().get("slug").unwrap_or_default(),
        |slug| async move {
            let report = get_report(slug).await?;
            let (run, state) = parse_path(&report.view_path)
                .map_err(|p| AppError::BadRequest(p.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")))?;
            let runs = match &run {
                Some(id) => vec![get_run(id.clone()).await?],
                None => get_runs(state.runs.iter().map(ToString::to_string).collect()).await?,
            };
            let ids: Vec<String> = runs.iter().map(|r| r.id.to_string()).collect();
            let stored = get_stored_signals(ids).await.unwrap_or_default();
            let dismissed = dismissed_proposals().await.unwrap_or_default();
            Ok::<_, AppError>((report, run.is_some(), state, runs, stored, dismissed))
        },
    );
    view! {
        <Suspense fallback=|| view! { <p>"Loading report…"</p> }>
            {move || Suspend::new(async move {
                match data.await {
                    Ok((report, is_run, state, mut runs, mut stored, dismissed)) => {
                        let title = report.title.clone();
                        let desc = if report.description.is_empty() { format!("Plateau report: {}", report.title) } else { report.description.clone() };
                        let mode = PageMode::Report(report);
                        let body = if is_run {
                            match runs.pop() {
                                Some(run) => {
                                    let stored = stored.pop();
                                    view! { <RunView run view=state mode dismissed stored error=None /> }.into_any()
                                }
                                None => { crate::ui::components::set_page_status(404); view! { <p>"The report's run is gone."</p> }.into_any() }
                            }
                        } else {
                            view! { <CompareView runs view=state mode dismissed stored error=None /> }.into_any()
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
    let data = Resource::new(move || params.read().get("id").unwrap_or_default(), get_snapshot);
    view! {
        <Suspense fallback=|| view! { <p>"Loading snapshot…"</p> }>
            {move || Suspend::new(async move {
                match data.await {
                    Ok(snap) => {
                        let (run, state) = match parse_path(&snap.view_path) {
                            Ok(x) => x,
                            Err(problems) => return view! { <ViewProblems problems fallback="/".to_owned() /> }.into_any(),
                        };
                        let mode = PageMode::Snapshot { id: snap.id.clone(), title: snap.title.clone(), created_at: snap.created_at.clone() };
                        let title = format!("Snapshot: {}", snap.title);
                        let mut runs = snap.runs;
                        // The server's metrics as they were frozen with the runs.
                        let mut stored = snap.signals;
                        let body = if run.is_some() {
                            match runs.pop() {
                                Some(run) => {
                                    let stored = stored.pop();
                                    view! { <RunView run view=state mode stored error=None /> }.into_any()
                                }
                                None => view! { <p>"The snapshot holds no run."</p> }.into_any(),
                            }
                        } else {
                            view! { <CompareView runs view=state mode stored error=None /> }.into_any()
                        };
                        view! { <Title text=title /> {body} }.into_any()
                    }
                    Err(e) => view! { <Title text="Snapshot not found" /><ErrorBox error=e /> }.into_any(),
                }
            })}
        </Suspense>
    }
}
