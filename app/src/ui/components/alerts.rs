//! The run page's "Alerts" section: what was posted to the alert webhooks about the run
//! (each endpoint by its origin only, the outcome, the attempts, the last error) and, per
//! alert, who acknowledged it, when and why — or a form to acknowledge it (an acknowledged
//! alert is not sent again).

use crate::domain::alerts::{DeliveryStatus, RunAlerts};
use crate::domain::format::when;
use leptos::prelude::*;

#[component]
pub fn AlertsSection(run_id: String, alerts: RunAlerts, back: String, editable: bool) -> impl IntoView {
    let action = format!("/runs/{run_id}/alerts/ack");
    let keys: Vec<String> = alerts.keys().into_iter().map(str::to_owned).collect();
    view! {
        <section class="alerts" id="alerts">
            <h2>"Alerts"</h2>
            <ul class="alert-list">
                {keys.into_iter().map(|key| {
                    let deliveries: Vec<_> = alerts.deliveries.iter().filter(|d| d.alert_key == key).cloned().collect();
                    let summary = deliveries.first().map(|d| d.summary.clone()).unwrap_or_default();
                    let ack = alerts.ack(&key).cloned();
                    let action = action.clone();
                    let back = back.clone();
                    view! {
                        <li class="alert" data-key=key.clone()>
                            <p class="alert-summary">{summary}</p>
                            <ul class="deliveries">
                                {deliveries.into_iter().map(|d| {
                                    let status = d.status.as_str();
                                    let bad = d.status == DeliveryStatus::Failed;
                                    view! {
                                        <li class="delivery" data-status=status>
                                            <span class="endpoint">{d.endpoint}</span>": "
                                            <span class:badge=true class:bad=bad>{status}</span>
                                            {format!(" after {} attempt(s), {}", d.attempts, when(&d.updated_at))}
                                            {d.last_error.map(|e| view! { <span class="delivery-error">{format!(" — {e}")}</span> })}
                                        </li>
                                    }
                                }).collect_view()}
                            </ul>
                            {match ack {
                                Some(a) => view! {
                                    <p class="alert-ack">{format!("Acknowledged by {} on {}: ", a.author, when(&a.acknowledged_at))}<q>{a.reason}</q></p>
                                }.into_any(),
                                None if editable => view! {
                                    <form method="post" action=action class="ack-form inline">
                                        <input type="hidden" name="back" value=back />
                                        <input type="hidden" name="key" value=key.clone() />
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
