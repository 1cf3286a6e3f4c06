//! `/settings/prices`: the prices a team sets — dollars per GPU-hour per GPU type, each with
//! who set it and when, every change listed below — and the GPU types the stored runs name,
//! so a type without a price stands out, each with its own one-field form. Plateau ships no
//! prices. `?gpu=<type>&back=<page>` (the run page's "Set a price for `<type>`") fills the
//! type in and goes back to that page once the price is set. The forms post to `/prices`
//! (an axum route) and come back, with `?error=` when a price is refused.

use crate::api::get_prices;
use crate::domain::analysis::cost::{usd, PricesPage};
use crate::domain::model::format::when;
use crate::ui::components::ErrorBox;
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

/// `/settings/prices`
#[component]
pub fn PricesPageView() -> impl IntoView {
    let page = super::data::page_resource(|| (), |_| get_prices());
    let query = use_query_map();
    let error = move || query.read().get("error");
    // From a page that lacks a price: the type filled in, and back there after.
    let gpu = query.read_untracked().get("gpu").filter(|g| !g.trim().is_empty());
    let back = query
        .read_untracked()
        .get("back")
        .and_then(|b| crate::domain::model::text::same_site_path(&b).map(str::to_owned))
        .unwrap_or_else(|| "/settings/prices".to_owned());
    let for_gpu = gpu.clone().map(|g| {
        let to = (back != "/settings/prices").then(|| format!(" You go back to {back} once it is set."));
        view! { <p id="price-for" class="hint">"Setting the price of "<strong>{g}</strong>"."{to}</p> }
    });
    view! {
        <Title text="GPU prices" />
        <h1>"GPU prices"</h1>
        <p class="hint">
            "Cost per million tokens needs a price that you give: dollars per GPU-hour for a GPU type (matched to a "
            "run's GPU type without regard to case or spaces, times the run's GPU count), or dollars per hour for one "
            "run's whole deployment, set on that run's page. Plateau ships no prices and never guesses one."
        </p>
        {move || error().map(|e| view! { <div class="error-box" role="alert" id="price-error"><strong>"Not saved. "</strong>{e}</div> })}
        {for_gpu}
        <form method="post" action="/prices" class="inline" id="price-form">
            <input type="hidden" name="back" value=back />
            <label>"GPU type "<input name="gpu_type" id="price-gpu-type" required placeholder="H200 141GB HBM3e" list="gpu-types" value=gpu.clone().unwrap_or_default() /></label>
            <label>"$ per GPU-hour "<input name="usd_per_gpu_hour" id="price-usd" inputmode="decimal" required placeholder="2.50" autofocus=gpu.is_some() /></label>
            <button type="submit" name="action" value="set" id="price-set">"Set price"</button>
        </form>
        <Suspense fallback=|| view! { <p>"Loading prices…"</p> }>
            {move || Suspend::new(async move {
                match page.await {
                    Ok(p) => view! { <Prices p /> }.into_any(),
                    Err(e) => view! { <ErrorBox error=e /> }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
fn Prices(p: PricesPage) -> impl IntoView {
    let unpriced: Vec<(String, i64)> = p.gpu_types.iter().filter(|(t, _)| p.price_of(t).is_none()).cloned().collect();
    let options = p.gpu_types.clone();
    let PricesPage { prices, history, .. } = p;
    view! {
        <datalist id="gpu-types">
            {options.into_iter().map(|(t, _)| view! { <option value=t></option> }).collect_view()}
        </datalist>
        <h2>"Current prices"</h2>
        {if prices.is_empty() {
            view! { <p id="no-prices" class="unknown">"No price set: every cost shows “no price set”."</p> }.into_any()
        } else {
            view! {
                <div class="table-wrap">
                    <table class="levels" id="prices-table">
                        <thead><tr><th>"GPU type"</th><th>"$ per GPU-hour"</th><th>"set by"</th><th>"set"</th><th></th></tr></thead>
                        <tbody>
                            {prices.into_iter().map(|g| view! {
                                <tr>
                                    <td>{g.gpu_type.clone()}</td>
                                    <td>{usd(g.usd_per_gpu_hour)}</td>
                                    <td>{g.set_by.clone()}</td>
                                    <td>{when(&g.set_at)}</td>
                                    <td>
                                        <form method="post" action="/prices">
                                            <input type="hidden" name="back" value="/settings/prices" />
                                            <input type="hidden" name="gpu_type" value=g.gpu_type.clone() />
                                            <button type="submit" name="action" value="remove" class="secondary">"Remove"</button>
                                        </form>
                                    </td>
                                </tr>
                            }).collect_view()}
                        </tbody>
                    </table>
                </div>
            }.into_any()
        }}
        {(!unpriced.is_empty()).then(|| view! {
            <h2>"GPU types in your runs without a price"</h2>
            <ul id="unpriced">
                {unpriced.into_iter().map(|(t, n)| view! {
                    <li>
                        <form method="post" action="/prices" class="inline unpriced-form">
                            <input type="hidden" name="back" value="/settings/prices" />
                            <input type="hidden" name="gpu_type" value=t.clone() />
                            <span class="gpu">{t}</span>" — "{n}{if n == 1 { " run" } else { " runs" }}" "
                            <label>"$ per GPU-hour "<input name="usd_per_gpu_hour" inputmode="decimal" required placeholder="2.50" size="8" /></label>
                            <button type="submit" name="action" value="set">"Set"</button>
                        </form>
                    </li>
                }).collect_view()}
            </ul>
        })}
        <h2>"History"</h2>
        {if history.is_empty() {
            view! { <p class="hint">"No price was ever set."</p> }.into_any()
        } else {
            view! {
                <div class="table-wrap">
                    <table class="levels" id="price-history">
                        <thead><tr><th>"when"</th><th>"GPU type"</th><th>"$ per GPU-hour"</th><th>"by"</th></tr></thead>
                        <tbody>
                            {history.into_iter().map(|c| view! {
                                <tr>
                                    <td>{when(&c.set_at)}</td>
                                    <td>{c.gpu_type}</td>
                                    <td>{c.usd_per_gpu_hour.map_or_else(|| "removed".to_owned(), usd)}</td>
                                    <td>{c.set_by}</td>
                                </tr>
                            }).collect_view()}
                        </tbody>
                    </table>
                </div>
            }.into_any()
        }}
    }
}
