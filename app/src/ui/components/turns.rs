//! The run page's "By turn" (or "By step") section of a multi-turn or agentic run: each
//! level's requests by turn — TTFT p50 and p99, latency, input tokens and the share served
//! from the prefix cache — with the sentence saying how TTFT moves with the turn and why.
//! Formatted on the server (`domain::analysis::turns::TurnPanel`); this only draws it.

use crate::domain::analysis::turns::TurnPanel;
use leptos::prelude::*;

#[component]
pub fn TurnsSection(panel: TurnPanel) -> impl IntoView {
    let word = panel.word.clone();
    view! {
        <section class="turns" id="turns">
            <h2>{format!("By {word}")}</h2>
            <p class="notes" id="workload-describe">{panel.describe}</p>
            {panel.levels.into_iter().map(|l| {
                let word = word.clone();
                view! {
                    <h3 class="turn-level">{l.load}</h3>
                    {l.story.map(|s| view! { <p class="turn-story">{s}</p> })}
                    <div class="table-wrap">
                        <table class="levels turn-table">
                            <thead><tr>
                                <th>{word}</th><th>"requests"</th><th>"TTFT p50 (ms)"</th><th>"TTFT p99 (ms)"</th>
                                <th>"latency p50 (ms)"</th><th>"input tokens (mean)"</th><th>"input cached"</th>
                            </tr></thead>
                            <tbody>
                                {l.rows.into_iter().map(|r| view! {
                                    <tr>
                                        <td class="load">{r.turn}</td><td>{r.requests}</td><td>{r.ttft_p50}</td>
                                        <td>{r.ttft_p99}</td><td>{r.e2e_p50}</td><td>{r.input_tokens}</td><td>{r.cached}</td>
                                    </tr>
                                }).collect_view()}
                            </tbody>
                        </table>
                    </div>
                }
            }).collect_view()}
        </section>
    }
}
