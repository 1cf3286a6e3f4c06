//! What a run costs and what its energy buys, on the run page (per level, at capacity) and
//! the compare page (per run, against the baseline). Everything arrives formatted from the
//! server (`domain::analysis::cost::CostView`, `CompareCostRow`): this only draws it, with the price
//! each figure rests on and its assumption, or why there is none ("no price set", "GPU
//! count unknown") with a link to set one.

use crate::domain::analysis::cost::{CompareCostRow, CostView, ASSUMPTION, ENERGY_ASSUMPTION};
use crate::domain::LoadKind;
use leptos::prelude::*;

/// Where prices are set.
pub const PRICES_PATH: &str = "/settings/prices";

/// The run page's "Cost and energy" section. `capacity`: the load of the capacity level at
/// the view's SLO, when one is chosen and met. `editable`: the run's own price can be set.
#[component]
pub fn CostSection(
    cost: Option<CostView>,
    kind: LoadKind,
    capacity: Option<(f64, String)>,
    action: String,
    back: String,
    editable: bool,
    /// The run's GPU type: where no price is set, a link sets one for it and comes back.
    #[prop(optional_no_strip)]
    gpu_type: Option<String>,
) -> impl IntoView {
    // None: the prices could not be read (logged), or a snapshot frozen without any.
    let Some(cost) = cost else { return ().into_any() };
    let no_price =
        cost.missing.as_ref().is_some_and(|(m, _)| m == crate::domain::analysis::cost::NoCost::NoPrice.text());
    let set_price = gpu_type.filter(|t| no_price && editable && !t.trim().is_empty()).map(|t| {
        let href = format!(
            "{PRICES_PATH}?gpu={}&back={}",
            crate::domain::model::text::percent_encode(&t),
            crate::domain::model::text::percent_encode(&back)
        );
        view! { <a href=href id="set-gpu-price" class="button">"Set a price for "{t}</a> }
    });
    let at_capacity = capacity.map(|(load, label)| {
        let text = match (&cost.missing, cost.usd_per_mtok_at(load)) {
            (Some((m, _)), _) => format!("cost {m}"),
            (None, Some(usd)) => format!("{usd} per million output tokens at {label}"),
            (None, None) => format!("cost at {label} unknown (no throughput)"),
        };
        view! { <p id="capacity-cost">"At capacity: "{text}"."</p> }
    });
    let CostView { basis, missing, own_price, rows, energy } = cost;
    let basis = match (basis, missing) {
        (Some(b), _) => view! { <p id="cost-basis">"Price: "<strong>{b}</strong>"."</p> }.into_any(),
        (None, Some((m, what))) => view! {
            <p id="cost-basis" class="unknown">
                "Cost: "<strong id="cost-missing">{m}</strong>". "{what}" "
                {match set_price {
                    Some(link) => link.into_any(),
                    None => view! { <a href=PRICES_PATH id="set-prices">"Set GPU prices"</a> }.into_any(),
                }}
            </p>
        }
        .into_any(),
        (None, None) => ().into_any(),
    };
    let energy_note = if energy {
        format!("Energy is {ENERGY_ASSUMPTION}.")
    } else {
        "Energy needs GPU telemetry (a DCGM exporter scraped during the sweep, or AIPerf's GPU telemetry export)."
            .to_owned()
    };
    view! {
        <section class="cost" id="cost">
            <h2>"Cost and energy"</h2>
            {basis}
            {at_capacity}
            <div class="table-wrap">
                <table class="levels" id="cost-table">
                    <thead><tr>
                        <th>{if kind == LoadKind::RequestRate { "req/s" } else { "concurrency" }}</th>
                        <th>"output tok/s"</th>
                        <th>"$ / M output tokens"</th>
                        <th>"$ / M total tokens"</th>
                        <th>"output tok/s per GPU"</th>
                        <th>"J / output token"</th>
                        <th>"output tokens / W"</th>
                    </tr></thead>
                    <tbody>
                        {rows.into_iter().map(|r| view! {
                            <tr>{r.cells.into_iter().map(|c| view! { <td>{c}</td> }).collect_view()}</tr>
                        }).collect_view()}
                    </tbody>
                </table>
            </div>
            <p class="hint" id="cost-assumption">"Each cost is "{ASSUMPTION}". Total tokens are input + output per second. "{energy_note}</p>
            {editable.then(|| view! {
                <form method="post" action=action class="inline" id="run-price-form">
                    <input type="hidden" name="back" value=back />
                    <label>"This run's deployment, $ per hour "<input name="usd_per_hour" inputmode="decimal" placeholder="e.g. 20.00" /></label>
                    <button type="submit" name="action" value="set">"Set"</button>
                    {own_price.then(|| view! { <button type="submit" name="action" value="remove" class="secondary">"Remove"</button> })}
                </form>
            })}
        </section>
    }
    .into_any()
}

/// The compare page's cost table: each run's price, its cost per million tokens at its
/// peak and the change against the baseline, and its energy per token there.
#[component]
pub fn CompareCosts(rows: Vec<CompareCostRow>) -> impl IntoView {
    if rows.is_empty() {
        return ().into_any();
    }
    let slo = rows.iter().any(|r| r.at_capacity.is_some());
    view! {
        <section class="cost" id="compare-cost">
            <h2>"Cost and energy at each run's peak"</h2>
            <div class="table-wrap">
                <table class="levels" id="compare-cost-table">
                    <thead><tr>
                        <th>"run"</th><th>"price"</th><th>"peak at"</th><th>"$ / M output tokens"</th>
                        <th>"$ / M total tokens"</th><th>"change"</th><th>"J / output token"</th>
                        {slo.then(|| view! { <th>"$ / M output tokens at capacity"</th> })}
                    </tr></thead>
                    <tbody>
                        {rows.into_iter().map(|r| {
                            let unpriced = !r.priced;
                            let at_capacity = r.at_capacity.map(|c| view! { <td class="at-capacity">{c}</td> });
                            let [name, price, at, out, total, change, joules] = r.cells;
                            view! {
                                <tr>
                                    <td>{name}</td><td class:unknown=unpriced>{price}</td><td>{at}</td><td>{out}</td>
                                    <td>{total}</td><td>{change}</td><td>{joules}</td>{at_capacity}
                                </tr>
                            }
                        }).collect_view()}
                    </tbody>
                </table>
            </div>
            <p class="hint">"Each cost is "{ASSUMPTION}". "<a href=PRICES_PATH>"GPU prices"</a></p>
        </section>
    }
    .into_any()
}
