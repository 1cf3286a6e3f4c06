//! A container that ECharts draws into once the page is hydrated.
//!
//! On the server it renders a labelled box; with JavaScript off the boxes are hidden and
//! [`NoJsNote`] says the charts need JavaScript (the tables carry the same numbers). A chart with nothing
//! to draw says why in its place. The browser side draws through `window.plateauChart`
//! (public/charts.js: theme, tooltip and legend formatting), the same function the offline
//! report uses.

use crate::domain::view::state::ChartSpec;
use leptos::prelude::*;

/// One chart of a page, its option built on the server: drawn into its container after
/// hydration, or (`spec.empty`) a note saying why there is nothing to draw.
#[component]
pub fn ChartView(spec: ChartSpec) -> impl IntoView {
    let ChartSpec { id, label, option_json, empty, .. } = spec;
    if let Some(why) = empty {
        return view! { <div id=id class="chart-empty" role="note">{why}</div> }.into_any();
    }
    view! { <ChartJsonView id label json=option_json /> }.into_any()
}

/// A chart whose ECharts option was built on the server (sent as JSON text): the page
/// carries none of the code that builds it.
#[component]
pub fn ChartJsonView(
    /// DOM id of the container (also used by tests to find the ECharts instance).
    #[prop(into)]
    id: String,
    /// What the chart shows, for screen readers.
    label: String,
    json: String,
) -> impl IntoView {
    #[cfg(feature = "hydrate")]
    {
        let id = id.clone();
        Effect::new(move |_| draw(id.clone(), json.clone(), 60));
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = json;
    view! { <div id=id class="chart" role="img" aria-label=label></div> }
}

/// Renders once the container is in the document. After a client-side navigation the
/// effect can run while the new page is still being attached, so wait a frame or a few
/// rather than fail.
#[cfg(feature = "hydrate")]
fn draw(id: String, json: String, frames_left: u8) {
    if document().get_element_by_id(&id).is_some() {
        // The option goes over as JSON text, parsed by the browser: charming's own renderer
        // converts maps (a legend's `selected`) into JS `Map`s, which ECharts ignores.
        if !echarts_draw(&id, &json) {
            leptos::logging::error!("chart {id}: ECharts is not loaded");
        }
    } else if frames_left > 0 {
        request_animation_frame(move || draw(id, json, frames_left - 1));
    } else {
        leptos::logging::error!("chart {id}: its container never appeared");
    }
}

#[cfg(feature = "hydrate")]
#[wasm_bindgen::prelude::wasm_bindgen(inline_js = "
export function echarts_draw(id, json) {
  const el = document.getElementById(id);
  if (!el || !window.echarts) return false;
  if (window.plateauChart) { window.plateauChart(el, JSON.parse(json)); return true; }
  const chart = window.echarts.getInstanceByDom(el) || window.echarts.init(el);
  chart.setOption(JSON.parse(json), true);
  return true;
}")]
extern "C" {
    /// Draws (or redraws) the ECharts option `json` into the element `id`; size from CSS.
    fn echarts_draw(id: &str, json: &str) -> bool;
}

/// The line a charts section starts with: shown only with JavaScript off (public/plateau.js
/// marks `<html class="js">`; style/main.css hides it then, and hides the empty chart
/// boxes otherwise).
#[component]
pub fn NoJsNote() -> impl IntoView {
    view! {
        <p class="no-js" role="note">
            "The charts need JavaScript. The tables below hold every number they would draw."
        </p>
    }
}

/// A page's charts: each drawable one in its figure; those with nothing to draw (a metric
/// no level reports, a panel at 0 at every level) said together in one line after them,
/// each by its caption and why — an empty panel takes a screen to say one fact.
#[component]
pub fn ChartsSection(charts: Vec<ChartSpec>) -> impl IntoView {
    let (drawn, empty): (Vec<ChartSpec>, Vec<ChartSpec>) = charts.into_iter().partition(|c| c.empty.is_none());
    view! {
        <section class="charts">
            <NoJsNote />
            {drawn.into_iter().map(|c| view! {
                <figure>
                    <figcaption>{c.caption.clone()}</figcaption>
                    <ChartView spec=c />
                </figure>
            }).collect_view()}
        </section>
        {(!empty.is_empty()).then(|| view! {
            <p class="not-drawn" id="not-drawn">
                <strong>"Not drawn: "</strong>
                {empty.into_iter().enumerate().map(|(i, c)| view! {
                    {(i > 0).then_some(" · ")}
                    <span class="chart-empty" id=c.id role="note">{c.caption}": "{c.empty.unwrap_or_default()}</span>
                }).collect_view()}
            </p>
        })}
    }
}
