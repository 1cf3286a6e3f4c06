//! The import form. It posts `multipart/form-data` to `/imports` (an axum route in the
//! server crate), which keeps the upload and shows its preview; it works without
//! JavaScript. With JavaScript, files can also be dropped anywhere on the drop zone.
//! A rejected upload comes back here with `?error=…`.

use super::import_preview::FactsFields;
use crate::domain::view::preview::ImportFields;
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
            "Result files of benchmark.py, vLLM "<code>"bench serve"</code>" (and vllm-bench), SGLang "<code>"bench_serving"</code>
            ", GuideLLM, AIPerf (exports, CSVs, sweep aggregates), GenAI-Perf, genai-bench, LLMPerf, InferenceX, inference-benchmarker, "
            "inference-perf, llm-d, MLPerf Inference (LoadGen summaries and detail logs, endpoints reports, results trees), "
            "TensorRT-LLM "<code>"trtllm-bench"</code>" (report JSON or its console log), llama.cpp "<code>"llama-bench"</code>
            " and "<code>"llama-batched-bench"</code>", or a Plateau export. "
            "The format is detected from the content. Several single-level files of one sweep (one file per "
            "concurrency) become one run. A folder or a .zip / .tar.gz of one (a vLLM sweep, a genai-bench "
            "experiment, an MLPerf results tree) becomes an experiment: one run per setting, its repeats as trials, opened as a comparison. "
            "You will see a preview before anything is stored."
        </p>
        {move || error().map(|e| view! {
            <div class="error-box" role="alert" id="upload-error"><strong>"Not imported. "</strong>{e}</div>
        })}
        <form class="upload" method="post" action="/imports" enctype="multipart/form-data">
            <fieldset>
                <legend>"Results"</legend>
                <label class="dropzone" id="dropzone">
                    <span>"Drop files here, or choose them"</span>
                    <input type="file" name="file" id="file-input" multiple />
                </label>
                <label class="folder-pick">"…or choose a folder"
                    <input type="file" name="file" id="folder-input" multiple webkitdirectory />
                </label>
                <label>"…or paste the text"
                    <textarea name="text" rows="6" placeholder="C= 32 | 32/ 32 ok (0 err) | wall= 35.3s | 464.4 tok/s | lat avg= 35.23 p50= 35.25 p99= 35.26"></textarea>
                </label>
            </fieldset>
            <FactsFields f=ImportFields { format: "auto".into(), group: "auto".into(), ..ImportFields::default() } />
            <button type="submit" id="import-submit">"Preview the import"</button>
        </form>
    }
}
