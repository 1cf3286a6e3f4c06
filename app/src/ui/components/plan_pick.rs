//! The way from a page to a plan: a link to the plan page with the page's candidates (its
//! runs or experiment) and SLO filled in, and where the team stored demands and the page
//! has an SLO, a menu of the stored demands that plans for the chosen one at once.

use crate::domain::view::plan::PlanQuery;
use crate::domain::RunId;
use leptos::prelude::*;

/// `query` holds the candidates and the SLO (its `demand` is left empty); `demands` are the
/// stored demands (name, label).
#[component]
pub fn PlanPick(
    query: PlanQuery,
    demands: Vec<(String, String)>,
    id: &'static str,
    text: &'static str,
) -> impl IntoView {
    let href = format!("/plan?{}", query.to_query());
    let menu = (!demands.is_empty() && !query.slo.is_empty()).then(|| {
        let runs = query.runs.iter().map(RunId::as_str).collect::<Vec<_>>().join(",");
        let experiment = query.experiment.as_ref().map(ToString::to_string);
        view! {
            <form class="inline plan-demand" method="get" action="/plan" id=format!("{id}-demand")>
                <input type="hidden" name="slo" value=query.slo.clone() />
                {(!runs.is_empty()).then(|| view! { <input type="hidden" name="runs" value=runs /> })}
                {experiment.map(|e| view! { <input type="hidden" name="experiment" value=e /> })}
                <label>"or for a stored demand "
                    <select name="demand">
                        {demands.into_iter().map(|(name, label)| view! { <option value=name.clone()>{format!("{name} ({label})")}</option> }).collect_view()}
                    </select>
                </label>
                " "<button type="submit" class="secondary">"Plan"</button>
            </form>
        }
    });
    view! {
        <div class="hint plan-pick" id=id>
            <a href=href>{text}</a>
            {menu}
        </div>
    }
}
