//! `/settings/hardware`: what a run's roofline is computed from — the GPU table in force
//! (the team's GPUs first, then the ones Plateau ships, each figure with its source) with a
//! form to add a GPU or correct a shipped one, and the models' facts (active parameters,
//! bits per weight, KV bytes per token) with theirs. The GPU types and models the runs name
//! without figures are listed so they stand out. `?model=`, `?gpu=` and `?back=` (the run
//! page's "Enter them") fill the forms in and go back to that page once saved. The forms
//! post to `/hardware/gpus` and `/hardware/models` (axum routes) and come back, with
//! `?error=` when a value is refused.

use crate::api::get_hardware;
use crate::domain::analysis::roofline::{HardwarePage, HARDWARE_PATH};
use crate::domain::model::format::when;
use crate::ui::components::ErrorBox;
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

/// `/settings/hardware`
#[component]
pub fn HardwarePageView() -> impl IntoView {
    let page = super::data::page_resource(|| (), |_| get_hardware());
    let query = use_query_map();
    let error = move || query.read().get("error");
    let pick = |k: &str| query.read_untracked().get(k).filter(|v| !v.trim().is_empty());
    let (model, gpu) = (pick("model"), pick("gpu"));
    let back = pick("back")
        .and_then(|b| crate::domain::model::text::same_site_path(&b).map(str::to_owned))
        .unwrap_or_else(|| HARDWARE_PATH.to_owned());
    view! {
        <Title text="Hardware" />
        <h1>"Hardware and models"</h1>
        <p class="hint">
            "A run's roofline — the most tokens per second its GPUs' memory bandwidth and compute allow at each level, "
            "and how close the measurement comes — needs the run's GPU (matched by name in the table below) and its "
            "model's active parameters and bits per weight. Plateau ships the figures of common accelerators, each "
            "with its source; add your own or correct one, and give your models' facts."
        </p>
        {move || error().map(|e| view! { <div class="error-box" role="alert" id="hardware-error"><strong>"Not saved. "</strong>{e}</div> })}
        <Suspense fallback=|| view! { <p>"Loading hardware…"</p> }>
            {move || {
                let (model, gpu, back) = (model.clone(), gpu.clone(), back.clone());
                Suspend::new(async move {
                    match page.await {
                        Ok(p) => view! { <Hardware p model gpu back /> }.into_any(),
                        Err(e) => view! { <ErrorBox error=e /> }.into_any(),
                    }
                })
            }}
        </Suspense>
    }
}

/// A figure in a table cell, its digits as given and grouped (`1,979`, `0.864`; "—" when
/// unknown).
fn fig(v: Option<f64>) -> String {
    v.map_or_else(
        || crate::domain::model::format::UNKNOWN.to_owned(),
        |x| {
            let decimals = x.to_string().split('.').nth(1).map_or(0, str::len);
            crate::domain::model::format::shown(Some(x), decimals)
        },
    )
}

/// "name (runs), …", each name a link to this page with its form filled in (`?param=name`).
fn name_links(names: Vec<(String, i64)>, param: &'static str) -> impl IntoView {
    names
        .into_iter()
        .enumerate()
        .map(|(i, (name, n))| {
            let href = format!("{HARDWARE_PATH}?{param}={}", crate::domain::model::text::percent_encode(&name));
            view! { {(i > 0).then_some(", ")}<a href=href>{name}</a>" ("{n}")" }
        })
        .collect_view()
}

#[component]
fn Hardware(p: HardwarePage, model: Option<String>, gpu: Option<String>, back: String) -> impl IntoView {
    let HardwarePage { gpus, models, run_models, unknown_gpu_types: unknown_gpus, models_without_facts: no_facts } = p;
    // The form starts from what is known of the model asked about.
    let key = crate::domain::analysis::roofline::name_key;
    let known = model.as_deref().and_then(|m| models.iter().find(|f| key(&f.model) == key(m))).cloned();
    let val = |v: Option<f64>| v.map(|x| x.to_string()).unwrap_or_default();
    let model_options = run_models.clone();
    view! {
        <datalist id="run-models">
            {model_options.into_iter().map(|(m, _)| view! { <option value=m></option> }).collect_view()}
        </datalist>
        <h2 id="models-head">"Models"</h2>
        {model.clone().map(|m| view! { <p id="facts-for" class="hint">"Entering the facts of "<strong>{m}</strong>"."</p> })}
        <form method="post" action="/hardware/models" class="filters" id="model-form">
            <input type="hidden" name="back" value=back.clone() />
            <label>"Model (as the runs name it) "<input name="model" id="model-name" required list="run-models" value=model.clone().unwrap_or_default() /></label>
            <label>"Total parameters, billions "<input name="total_params_b" inputmode="decimal" placeholder="1000" value=val(known.as_ref().and_then(|k| k.total_params_b)) /></label>
            <label>"Active parameters per token, billions "<input name="active_params_b" id="model-active" inputmode="decimal" placeholder="32" value=val(known.as_ref().and_then(|k| k.active_params_b)) /></label>
            <label>"Bits per weight, block scales included "<input name="bits_per_weight" id="model-bits" inputmode="decimal" placeholder="4.5 for NVFP4, 16 for BF16" value=val(known.as_ref().and_then(|k| k.bits_per_weight)) /></label>
            <label>"KV cache bytes per token "<input name="kv_bytes_per_token" id="model-kv" inputmode="decimal" placeholder="layers × KV heads × head dim × 2 × bytes" value=val(known.as_ref().and_then(|k| k.kv_bytes_per_token)) /></label>
            <label>"Source "<input name="source" placeholder="the model card, config.json" value=known.as_ref().map(|k| k.source.clone()).unwrap_or_default() /></label>
            <button type="submit" name="action" value="set" id="model-set">"Save the model's facts"</button>
        </form>
        {if models.is_empty() {
            view! { <p id="no-models" class="unknown">"No model has facts yet: no run shows a roofline."</p> }.into_any()
        } else {
            view! {
                <div class="table-wrap">
                    <table class="levels" id="models-table">
                        <thead><tr><th>"model"</th><th>"total B"</th><th>"active B"</th><th>"bits/weight"</th><th>"KV bytes/token"</th><th>"source"</th><th>"set by"</th><th>"set"</th><th></th></tr></thead>
                        <tbody>
                            {models.into_iter().map(|m| view! {
                                <tr>
                                    <td>{m.model.clone()}</td>
                                    <td>{fig(m.total_params_b)}</td>
                                    <td>{fig(m.active_params_b)}</td>
                                    <td>{fig(m.bits_per_weight)}</td>
                                    <td>{fig(m.kv_bytes_per_token)}</td>
                                    <td class="source">{m.source.clone()}</td>
                                    <td>{m.set_by.clone()}</td>
                                    <td>{when(&m.set_at)}</td>
                                    <td>
                                        <form method="post" action="/hardware/models">
                                            <input type="hidden" name="back" value=HARDWARE_PATH />
                                            <input type="hidden" name="model" value=m.model.clone() />
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
        {(!no_facts.is_empty()).then(|| view! {
            <p id="models-without-facts" class="hint">"Models in your runs without facts: "
                {name_links(no_facts, "model")}
            </p>
        })}
        <h2 id="gpus-head">"GPUs"</h2>
        {gpu.clone().map(|g| view! { <p id="gpu-for" class="hint">"No entry matches "<strong>{g}</strong>": add it."</p> })}
        <form method="post" action="/hardware/gpus" class="filters" id="gpu-form">
            <input type="hidden" name="back" value=back />
            <label>"Name "<input name="name" id="gpu-name" required placeholder="H100 SXM" value=gpu.unwrap_or_default() /></label>
            <label>"Also written as (comma-separated) "<input name="aliases" placeholder="H100 80GB HBM3" /></label>
            <label>"Memory bandwidth, TB/s "<input name="memory_tb_s" id="gpu-bandwidth" required inputmode="decimal" placeholder="3.35" /></label>
            <label>"Memory, GB "<input name="memory_gb" inputmode="decimal" placeholder="80" /></label>
            <label>"Dense BF16 TFLOP/s "<input name="bf16_tflops" inputmode="decimal" /></label>
            <label>"Dense FP8 TFLOP/s "<input name="fp8_tflops" inputmode="decimal" /></label>
            <label>"Dense FP4 TFLOP/s "<input name="fp4_tflops" inputmode="decimal" /></label>
            <label>"Power, W "<input name="power_w" inputmode="decimal" /></label>
            <label>"Source "<input name="source" id="gpu-source" required placeholder="the datasheet's name and date" /></label>
            <button type="submit" name="action" value="set" id="gpu-set">"Save the GPU"</button>
        </form>
        {(!unknown_gpus.is_empty()).then(|| view! {
            <p id="gpus-unknown" class="hint">"GPU types in your runs that match no entry: "
                {name_links(unknown_gpus, "gpu")}
            </p>
        })}
        <div class="table-wrap">
            <table class="levels" id="gpus-table">
                <thead><tr><th>"GPU"</th><th>"memory GB"</th><th>"TB/s"</th><th>"BF16"</th><th>"FP8"</th><th>"FP4"</th><th>"W"</th><th>"source"</th><th>"set"</th><th></th></tr></thead>
                <tbody>
                    {gpus.into_iter().map(|g| {
                        let team = g.set_by.is_some();
                        let set = match (&g.set_by, &g.set_at) {
                            (Some(by), Some(at)) => format!("{by}, {}", when(at)),
                            _ => "shipped".to_owned(),
                        };
                        view! {
                            <tr class:team=team>
                                <td title=g.aliases.join(", ")>{g.name.clone()}</td>
                                <td>{fig(g.memory_gb)}</td>
                                <td>{fig(Some(g.memory_tb_s))}</td>
                                <td>{fig(g.bf16_tflops)}</td>
                                <td>{fig(g.fp8_tflops)}</td>
                                <td>{fig(g.fp4_tflops)}</td>
                                <td>{fig(g.power_w)}</td>
                                <td class="source">{g.source.clone()}</td>
                                <td>{set}</td>
                                <td>
                                    {team.then(|| view! {
                                        <form method="post" action="/hardware/gpus">
                                            <input type="hidden" name="back" value=HARDWARE_PATH />
                                            <input type="hidden" name="name" value=g.name.clone() />
                                            <button type="submit" name="action" value="remove" class="secondary">"Remove"</button>
                                        </form>
                                    })}
                                </td>
                            </tr>
                        }
                    }).collect_view()}
                </tbody>
            </table>
        </div>
        <p class="hint">"Tensor rates are dense (no 2:4 sparsity). Where a vendor prints only sparse figures they are halved, and where its documents disagree the source says so."</p>
    }
}
