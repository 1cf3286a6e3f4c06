//! The runs list: newest first, with the facts that tell runs apart.

use crate::api::list_runs;
use crate::domain::format::{num, when, UNKNOWN};
use crate::ui::components::ErrorBox;
use leptos::prelude::*;
use leptos_meta::Title;

/// `/`: every stored run.
#[component]
pub fn RunsPage() -> impl IntoView {
    let runs = Resource::new(|| (), |_| list_runs());
    view! {
        <Title text="Runs" />
        <div class="page-head">
            <h1>"Runs"</h1>
            <a class="button" href="/upload">"Import results"</a>
        </div>
        <Suspense fallback=|| view! { <p>"Loading runs…"</p> }>
            {move || Suspend::new(async move {
                match runs.await {
                    Err(e) => view! { <ErrorBox error=e /> }.into_any(),
                    Ok(list) if list.is_empty() => view! {
                        <p class="empty">"No runs yet. "<a href="/upload">"Import a benchmark result"</a>" to start."</p>
                    }.into_any(),
                    Ok(list) => {
                        let rows = list.into_iter().map(|r| {
                            let href = format!("/runs/{}", r.id);
                            let dash = || UNKNOWN.to_owned();
                            view! {
                                <tr>
                                    <td><a href=href>{r.name}</a>
                                        {(r.status == crate::domain::RunStatus::Partial).then(|| view! { <span class="badge">"partial"</span> })}
                                    </td>
                                    <td>{r.model.unwrap_or_else(dash)}</td>
                                    <td>{r.gpu.unwrap_or_else(dash)}</td>
                                    <td>{r.endpoint_kind.map_or_else(dash, |e| e.path().to_owned())}</td>
                                    <td class="num">{r.level_count}</td>
                                    <td class="num">{num(r.peak_output_tok_s, 1)}</td>
                                    <td>{when(&r.created_at)}</td>
                                </tr>
                            }
                        }).collect_view();
                        view! {
                            <table class="runs" id="runs">
                                <thead><tr>
                                    <th>"Run"</th><th>"Model"</th><th>"GPU"</th><th>"Endpoint"</th>
                                    <th>"Levels"</th><th>"Peak tok/s"</th><th>"When"</th>
                                </tr></thead>
                                <tbody>{rows}</tbody>
                            </table>
                        }.into_any()
                    }
                }
            })}
        </Suspense>
    }
}
