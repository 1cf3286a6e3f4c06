//! How a run's numbers are defined: the source's choices (TTFT, token counts, throughput
//! window) and the definition of every metric it reports. Shown wherever numbers from
//! different tools could be mistaken for equals.

use crate::domain::model::metrics::{Definitions, Metric};
use crate::domain::Point;
use leptos::prelude::*;

/// The metrics at least one point reports, in a stable order.
pub fn metrics_present(points: &[Point]) -> Vec<Metric> {
    Metric::ALL.into_iter().filter(|m| points.iter().any(|p| p.stats_of(*m).next().is_some())).collect()
}

/// A definition list of the source's choices and each present metric's meaning.
#[component]
pub fn DefinitionsView(definitions: Definitions, points: Vec<Point>) -> impl IntoView {
    let d = definitions;
    let choice = |label: &'static str, text: Option<&'static str>| text.map(|t| view! { <dt>{label}</dt><dd>{t}</dd> });
    let std = d.sample_std.map(|s| if s { "sample (n − 1)" } else { "population (n)" });
    let metrics = metrics_present(&points);
    let notes = d.notes.clone();
    // A live sweep's prompts: which seed, how their lengths were counted, what they share.
    let seed = d.prompt_seed.map(|s| s.to_string());
    let lengths = d.prompt_length_source.as_ref().map(|s| s.describe());
    let prefix = d.shared_prefix_tokens.map(|n| match n {
        0 => "none: every prompt differs from its first word".to_owned(),
        n => format!("{n} tokens: every prompt starts with the same text, then its own"),
    });
    let text = |label: &'static str, text: Option<String>| text.map(|t| view! { <dt>{label}</dt><dd>{t}</dd> });
    view! {
        <dl class="definitions">
            {choice("TTFT counts", d.ttft.map(|t| t.describe()))}
            {choice("Token counts", d.token_count.map(|t| t.describe()))}
            {choice("Throughput over", d.throughput_window.map(|t| t.describe()))}
            {choice("Standard deviation", std)}
            {text("Prompt seed", seed)}
            {text("Prompt lengths", lengths)}
            {text("Shared prompt prefix", prefix)}
            {metrics.into_iter().map(|m| view! {
                <dt>{m.label()}" ("{m.unit().label()}")"</dt>
                <dd>{m.definition()}</dd>
            }).collect_view()}
        </dl>
        {(!notes.is_empty()).then(|| view! {
            <ul class="notes-list">{notes.into_iter().map(|n| view! { <li>{n}</li> }).collect_view()}</ul>
        })}
    }
}
