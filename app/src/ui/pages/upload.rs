//! The import form. It posts `multipart/form-data` to `/runs/new` (an axum route in the
//! server crate), so it works without JavaScript and shares one code path with the CLI
//! and `POST /api/v1/runs`. A rejected import comes back here with `?error=…`.

use crate::domain::EndpointKind;
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

/// `/upload`
#[component]
pub fn UploadPage() -> impl IntoView {
    let query = use_query_map();
    let error = move || query.read().get("error");
    view! {
        <Title text="Import results" />
        <h1>"Import results"</h1>
        <p class="hint">
            "Paste or choose the text output of "<code>"benchmark.py"</code>
            " (one "<code>"C= … | …"</code>" line per level; a cut-off last line is kept as a truncated level). "
            "Tell Plateau what was measured: these facts decide which runs compare like for like."
        </p>
        {move || error().map(|e| view! {
            <div class="error-box" role="alert" id="upload-error"><strong>"Not imported. "</strong>{e}</div>
        })}
        <form class="upload" method="post" action="/runs/new" enctype="multipart/form-data">
            <fieldset>
                <legend>"Results"</legend>
                <label>"File "<input type="file" name="file" accept=".txt,.log,text/plain" /></label>
                <label>"…or paste the text"
                    <textarea name="text" rows="8" placeholder="C= 32 | 32/ 32 ok (0 err) | wall= 35.3s | 464.4 tok/s | lat avg= 35.23 p50= 35.25 p99= 35.26"></textarea>
                </label>
            </fieldset>
            <fieldset class="grid">
                <legend>"What was measured"</legend>
                <label>"Run name"<input name="name" placeholder="defaults to the file name" /></label>
                <label>"Model"<input name="model" placeholder="Kimi-K2.5 NVFP4" /></label>
                <label>"Engine"<input name="engine" placeholder="vllm" /></label>
                <label>"Engine version"<input name="engine_version" placeholder="0.11.1" /></label>
                <label>"GPU"<input name="gpu" placeholder="8x RTX PRO 6000 Blackwell" /></label>
                <label>"GPU count"<input name="gpu_count" type="number" min="1" /></label>
                <label>"Endpoint"
                    <select name="endpoint">
                        <option value="">"unknown"</option>
                        {EndpointKind::ALL.iter().map(|e| view! { <option value=e.as_str()>{e.path()}</option> }).collect_view()}
                    </select>
                </label>
                <label>"max_tokens"<input name="max_tokens" type="number" min="1" /></label>
                <label>"Prompt length (tokens)"<input name="prompt_tokens" type="number" min="0" /></label>
                <label>"Tags"<input name="tags" placeholder="comma, separated" /></label>
                <label class="wide">"Notes"<textarea name="notes" rows="2"></textarea></label>
            </fieldset>
            <button type="submit" id="import-submit">"Import"</button>
        </form>
    }
}
