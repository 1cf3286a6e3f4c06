//! The run page's "Failed requests" section: each level's failures by kind, as the source
//! counted them (or as the per-request records say), with one message of each kind. Shown
//! only when some level names its failures' kinds; a run where every request failed is
//! the run a team most needs to read this for.

use crate::domain::model::level::load_label;
use crate::domain::Point;
use leptos::prelude::*;

/// The section, or nothing when no level names the kinds of its failures.
#[component]
pub fn FailuresSection(points: Vec<Point>) -> impl IntoView {
    let levels: Vec<Point> = points.into_iter().filter(|p| !p.failures.is_empty()).collect();
    (!levels.is_empty()).then(|| {
        view! {
            <section class="failures" id="failures">
                <h2>"Failed requests"</h2>
                <div class="table-wrap">
                    <table class="levels failure-table">
                        <thead><tr>
                            <th>"level"</th><th title="requests completed / failed">"ok / failed"</th>
                            <th>"kind"</th><th>"requests"</th><th>"message"</th>
                        </tr></thead>
                        <tbody>
                            {levels.into_iter().flat_map(|p| {
                                let load = load_label(p.load_kind, p.load_value);
                                let counts = format!(
                                    "{} / {}",
                                    p.requests_ok.map_or_else(|| "—".to_owned(), |n| n.to_string()),
                                    p.requests_failed.map_or_else(|| "—".to_owned(), |n| n.to_string())
                                );
                                let rows = p.failures.len();
                                p.failures.into_iter().enumerate().map(move |(i, f)| {
                                    let first = i == 0;
                                    view! {
                                        <tr>
                                            {first.then(|| view! { <td class="load" rowspan=rows>{load.clone()}</td><td rowspan=rows>{counts.clone()}</td> })}
                                            <td class="failure-kind">{f.kind}</td>
                                            <td>{f.count}</td>
                                            <td class="failure-example">{f.example.unwrap_or_default()}</td>
                                        </tr>
                                    }
                                }).collect::<Vec<_>>()
                            }).collect_view()}
                        </tbody>
                    </table>
                </div>
            </section>
        }
    })
}
