//! The run page's "Alerts" section: what was posted to the alert webhooks about the run
//! (each endpoint by its origin and a digest only, the outcome, the attempts, the last
//! error) and, per alert, who acknowledged it, when and why — or a form to acknowledge it
//! (an acknowledged alert is not sent again). Formatted on the server (`AlertView`).

use crate::domain::analysis::alerts::AlertView;
use leptos::prelude::*;

#[component]
pub fn AlertsSection(run_id: String, alerts: Vec<AlertView>, back: String, editable: bool) -> impl IntoView {
    let action = format!("/runs/{run_id}/alerts/ack");
    view! {
        <section class="alerts" id="alerts">
            <h2>"Alerts"</h2>
            <ul class="alert-list">
                {alerts.into_iter().map(|a| {
                    let action = action.clone();
                    let back = back.clone();
                    let key = a.key.clone();
                    view! {
                        <li class="alert" class:failed=a.failed data-key=a.key>
                            <p class="alert-summary">{a.summary}</p>
                            <ul class="deliveries">
                                {a.deliveries.into_iter().map(|d| view! { <li class="delivery">{d}</li> }).collect_view()}
                            </ul>
                            {match a.ack {
                                Some(text) => view! { <p class="alert-ack">{text}</p> }.into_any(),
                                None if editable => view! {
                                    <form method="post" action=action class="ack-form inline">
                                        <input type="hidden" name="back" value=back />
                                        <input type="hidden" name="key" value=key />
                                        <label>"Why "<input type="text" name="reason" required maxlength="1000" placeholder="expected: vLLM upgrade" /></label>
                                        <button type="submit" class="secondary ack-alert">"Acknowledge"</button>
                                    </form>
                                }.into_any(),
                                None => ().into_any(),
                            }}
                        </li>
                    }
                }).collect_view()}
            </ul>
        </section>
    }
}
