//! `/imports/:token`: what an upload will become, before anything is stored. The user
//! checks the detected format, the levels, what is unknown and the warnings, edits the
//! facts, and saves (or re-reads with another format or grouping).

use crate::api::preview_import;
use crate::domain::model::format::UNKNOWN;
use crate::domain::view::preview::{ImportFields, ImportPreview, PreviewRun};
use crate::domain::{EndpointKind, SourceFormat};
use crate::ui::components::{DefinitionsView, ErrorBox, LevelsTable};
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_params_map;

/// `/imports/:token`
#[component]
pub fn ImportPreviewPage() -> impl IntoView {
    let params = use_params_map();
    let preview = super::data::page_resource(move || params.read().get("token").unwrap_or_default(), preview_import);
    view! {
        <Title text="Check the import" />
        <Suspense fallback=|| view! { <p>"Reading the files…"</p> }>
            {move || Suspend::new(async move {
                match preview.await {
                    Ok(p) => view! { <PreviewView p /> }.into_any(),
                    Err(e) => view! {
                        <ErrorBox error=e />
                        <p><a href="/upload">"Start a new import"</a></p>
                    }.into_any(),
                }
            })}
        </Suspense>
    }
}

fn size(bytes: i64) -> String {
    if bytes >= 1 << 20 {
        format!("{:.1} MiB", bytes as f64 / f64::from(1 << 20))
    } else if bytes >= 1 << 10 {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    } else {
        format!("{bytes} B")
    }
}

#[component]
fn PreviewView(p: ImportPreview) -> impl IntoView {
    let action = format!("/imports/{}/save", p.token);
    let n = p.runs.len();
    let save_label = match n {
        0 => "Save".to_owned(),
        1 => "Save the run".to_owned(),
        n => format!("Save {n} runs"),
    };
    let files = p
        .files
        .into_iter()
        .map(|f| {
            let format = match (&f.skipped, f.format) {
                (Some(why), _) => format!("skipped: {why}"),
                (None, Some(format)) => format.label().to_owned(),
                (None, None) => "not recognised".to_owned(),
            };
            view! {
                <tr class:skipped=f.skipped.is_some()>
                    <td>{f.name}</td>
                    <td class="num">{size(f.size_bytes)}</td>
                    <td class="format">{format}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <h1>"Check the import"</h1>
        <p class="hint">"Nothing is stored until you save. Edit the facts below if the files do not say them, or say them wrong."</p>
        <table class="files" id="preview-files">
            <thead><tr><th>"File"</th><th>"Size"</th><th>"Detected format"</th></tr></thead>
            <tbody>{files}</tbody>
        </table>
        {p.experiment.map(|name| view! {
            <p class="experiment" id="preview-experiment">
                "These "{n}" runs are stored as the experiment “"<strong>{name}</strong>"”, which opens as their comparison."
            </p>
        })}
        {p.error.map(|e| view! {
            <div class="error-box" role="alert" id="preview-error"><strong>"These files cannot be imported as they are. "</strong>{e}</div>
        })}
        {p.runs.into_iter().map(|r| view! { <RunPreview r /> }).collect_view()}
        <form class="upload" method="post" action=action>
            <FactsFields f=p.fields />
            <div class="actions">
                <button type="submit" name="action" value="save" id="import-save" disabled=n == 0>{save_label}</button>
                <button type="submit" name="action" value="update" class="secondary" id="import-update">"Re-read with these settings"</button>
                <a href="/upload">"Cancel"</a>
            </div>
        </form>
    }
}

#[component]
fn RunPreview(r: PreviewRun) -> impl IntoView {
    let files = r.file_names.join(", ");
    let gpu = r.facts.gpu_label().unwrap_or_else(|| UNKNOWN.to_owned());
    let model = r.facts.model.clone().unwrap_or_else(|| UNKNOWN.to_owned());
    let levels = r.points.len();
    view! {
        <section class="preview-run">
            <h2>{r.name}</h2>
            <p class="summary">
                {r.format.label()}" · "{levels}" levels · model "{model}" · GPU "{gpu}" · from "{files}
            </p>
            {(!r.unknown.is_empty()).then(|| view! {
                <p class="unknown-list"><strong>"Not in the file: "</strong>{r.unknown.join("; ")}</p>
            })}
            {(!r.warnings.is_empty()).then(|| view! {
                <ul class="warnings">{r.warnings.into_iter().map(|w| view! { <li>{w}</li> }).collect_view()}</ul>
            })}
            <div class="table-wrap"><LevelsTable points=r.points.clone() /></div>
            <details>
                <summary>"How these numbers are defined"</summary>
                <DefinitionsView definitions=r.definitions points=r.points />
            </details>
        </section>
    }
}

/// The editable facts, format and grouping; shared by the upload form and the preview.
#[component]
pub fn FactsFields(f: ImportFields) -> impl IntoView {
    let endpoint = f.endpoint.clone();
    let format = f.format.clone();
    let separate = f.group == "separate";
    let warmup = if f.warmup.trim().is_empty() { "auto".to_owned() } else { f.warmup.trim().to_owned() };
    view! {
        <fieldset class="grid">
            <legend>"What was measured"</legend>
            <label>"Run name"<input name="name" value=f.name placeholder="defaults to the file name" /></label>
            <label>"Model"<input name="model" value=f.model placeholder="Kimi-K2.5 NVFP4" /></label>
            <label>"Engine"<input name="engine" value=f.engine placeholder="vllm" /></label>
            <label>"Engine version"<input name="engine_version" value=f.engine_version placeholder="0.11.1" /></label>
            <label>"GPU"<input name="gpu" value=f.gpu placeholder="8x RTX PRO 6000 Blackwell" /></label>
            <label>"GPU count"<input name="gpu_count" type="number" min="1" value=f.gpu_count /></label>
            <label>"Endpoint"
                <select name="endpoint">
                    <option value="" selected=endpoint.is_empty()>"unknown"</option>
                    {EndpointKind::ALL.iter().map(|e| {
                        let selected = EndpointKind::parse(&endpoint) == Some(*e);
                        view! { <option value=e.as_str() selected=selected>{e.path()}</option> }
                    }).collect_view()}
                </select>
            </label>
            <label>"max_tokens"<input name="max_tokens" type="number" min="1" value=f.max_tokens /></label>
            <label>"Prompt length (tokens)"<input name="prompt_tokens" type="number" min="0" value=f.prompt_tokens /></label>
            <label>"Tags"<input name="tags" value=f.tags placeholder="comma, separated" /></label>
            <label>"Format"
                <select name="format" id="format-select">
                    <option value="auto" selected=format == "auto" || format.is_empty()>"detect from content"</option>
                    {SourceFormat::ALL.iter().filter(|s| s.is_importable()).map(|s| {
                        let selected = SourceFormat::parse(&format) == Some(*s);
                        view! { <option value=s.as_str() selected=selected>{s.label()}</option> }
                    }).collect_view()}
                </select>
            </label>
            <label>"Concurrency (files that do not record it)"<input name="concurrency" type="number" min="0" step="any" value=f.concurrency /></label>
            <label>"Warm-up trial"
                <select name="warmup">
                    <option value="auto" selected=warmup == "auto">"flag a first trial unlike the others"</option>
                    <option value="first" selected=warmup == "first">"always flag the first trial"</option>
                    <option value="off" selected=warmup == "off">"count every trial"</option>
                </select>
            </label>
            <label>"Several files"
                <select name="group">
                    <option value="auto" selected=!separate>"levels of one sweep → one run"</option>
                    <option value="separate" selected=separate>"one run per file"</option>
                </select>
            </label>
            <label class="wide">"Notes"<textarea name="notes" rows="2" inner_html=crate::ui::components::textarea_html(&f.notes)></textarea></label>
        </fieldset>
    }
}
