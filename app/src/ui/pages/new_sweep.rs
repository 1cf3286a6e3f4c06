//! `/sweeps/new`: start a live sweep from the browser. The form posts to `/sweeps` (an
//! axum route), which starts the sweep on the server and redirects to the run's page,
//! where its progress shows live. The API key field is sent once and never shown back.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

/// `/sweeps/new`
#[component]
pub fn NewSweepPage() -> impl IntoView {
    let query = use_query_map();
    let error = move || query.read().get("error");
    // A link may fill the form in (a run page's "Sweep C=…": the load, the levels, the
    // model); each value only as an input's value, bounded.
    let given = |key: &str, default: &str| {
        query
            .read_untracked()
            .get(key)
            .filter(|v| !v.is_empty() && v.chars().count() <= 200)
            .unwrap_or_else(|| default.to_owned())
    };
    let (model, concurrency, load, guess) = (
        given("model", "plateau-sim"),
        given("concurrency", "1,2,4,8"),
        given("load", "concurrency"),
        given("guess", ""),
    );
    view! {
        <Title text="New sweep" />
        <h1>"New sweep"</h1>
        <p class="hint">
            "Plateau sends streamed requests to an OpenAI-compatible endpoint, level by level, and stores each level "
            "as it finishes. Concurrency levels: each level is one wave of C requests sent at once, or — with "
            "“requests per level” — C requests always in flight until that many are done. Request rates: requests "
            "go out on schedule (Poisson or constant) however many are in flight, and latency counts from the "
            "scheduled send. Adaptive: C doubles until throughput gains less than the threshold per doubling, "
            "then the knee is refined and the plateau named. Find capacity at SLO: the load doubles while every "
            "limit of the SLO holds, then the last level meeting it and the first not are bisected; the answer names "
            "the highest load meeting it and the limit that breaks first. Targets are limited to the server's allow-list "
            "(loopback unless "<code>"--sweep-allow"</code>" says otherwise). Try it with "<code>"plateau sim"</code>"."
        </p>
        {move || error().map(|e| view! {
            <div class="error-box" role="alert" id="sweep-error"><strong>"Not started. "</strong>{e}</div>
        })}
        <form class="upload" method="post" action="/sweeps" id="sweep-form">
            <fieldset class="grid">
                <legend>"Target"</legend>
                <label>"Base URL"<input name="url" required value="http://127.0.0.1:8090" /></label>
                <label>"Model"<input name="model" required value=model /></label>
                <label>"Endpoint"
                    <select name="endpoint">
                        <option value="chat">"/v1/chat/completions"</option>
                        <option value="completions">"/v1/completions"</option>
                    </select>
                </label>
                <label>"API key (never stored or shown)"<input name="api_key" type="password" autocomplete="off" /></label>
            </fieldset>
            <fieldset class="grid">
                <legend>"Load"</legend>
                <label>"Load"
                    <select name="load">
                        <option value="concurrency">"Concurrency levels (closed loop)"</option>
                        <option value="rates" selected=load == "rates">"Request rates (open loop)"</option>
                        <option value="adaptive" selected=load == "adaptive">"Adaptive: find the plateau"</option>
                        <option value="capacity" selected=load == "capacity">"Find capacity at SLO"</option>
                        <option value="trace" selected=load == "trace">"Replay a trace (open loop)"</option>
                    </select>
                </label>
                // `data-load`: the load kinds a field applies to; public/plateau.js shows only
                // those of the chosen kind (without JavaScript every field shows).
                <label data-load="concurrency">"Concurrency levels"<input name="concurrency" value=concurrency /></label>
                <label data-load="rates">"Request rates (req/s)"<input name="rates" placeholder="1,2,4,8" /></label>
                <label data-load="rates capacity">"Arrivals (rates)"
                    <select name="arrival">
                        <option value="poisson">"Poisson"</option>
                        <option value="constant">"constant"</option>
                    </select>
                </label>
                <label data-load="adaptive">"Adaptive: max concurrency"<input name="max_concurrency" type="number" min="1" placeholder="256" /></label>
                <label data-load="adaptive">"Adaptive: min gain per doubling (%)"<input name="min_gain_pct" type="number" min="0" step="any" placeholder="5" /></label>
                <label data-load="adaptive">"Adaptive: expected plateau near C= (starts at a quarter of it)"<input name="guess" type="number" min="1" placeholder="none: start at C=1" value=guess /></label>
                <label data-load="capacity">"SLO (every limit must hold)"<input name="slo" placeholder="ttft:p99<=2s,tpot:p99<=50ms,errors<=1%" /></label>
                <label data-load="capacity">"Search over"
                    <select name="capacity_load">
                        <option value="concurrency">"concurrency (closed loop)"</option>
                        <option value="rate">"request rate (open loop; arrivals and requests per level as for rates)"</option>
                    </select>
                </label>
                <label data-load="capacity">"Highest load tried (concurrency, or req/s)"<input name="capacity_max" type="number" min="0" step="any" placeholder="256" /></label>
                <label data-load="trace">"Trace (Mooncake JSONL, or CSV: timestamp, input_length, output_length, hash_ids)"<textarea name="trace_text" rows="4" placeholder="{\"timestamp\": 0, \"input_length\": 1024, \"output_length\": 64, \"hash_ids\": [1, 2]}"></textarea></label>
                <label data-load="trace">"Trace file name"<input name="trace_name" placeholder="trace.jsonl" /></label>
                <label data-load="trace">"Speeds (one level each; 1 = as recorded)"<input name="trace_speeds" placeholder="1" /></label>
                <label data-load="trace">"Tokens per hash-id block"<input name="block_tokens" type="number" min="1" placeholder="512" /></label>
                <label>"Requests per level (concurrency: empty sends one wave of C at once, a number keeps C in flight until that many; rates: per rate, 50 if empty)"<input name="requests" type="number" min="1" placeholder="one wave of C; 50 per rate" /></label>
                <label>"Trials per level (each level measured N times: mean ± 95 % CI)"<input name="repeat" type="number" min="1" max="20" placeholder="1" /></label>
                <label>"Order of the trials"<select name="repeat_order"><option value="back-to-back">"back to back (all trials of a level, then the next)"</option><option value="interleaved">"interleaved (one pass over the levels per trial)"</option></select></label>
                <label>"Warm-up requests per level"<input name="warmup" type="number" min="0" value="1" /></label>
                <label>"max_tokens"<input name="max_tokens" type="number" min="1" value="64" /></label>
                <label>"Prompt length (tokens as the server counts them: calibrated from its usage before the sweep)"<input name="prompt_tokens" type="number" min="1" value="128" /></label>
                <label>"Prompt length spread (%)"<input name="prompt_spread" type="number" min="0" max="99" step="any" placeholder="0: all the same length" /></label>
                <label>"Shared prompt prefix (tokens)"<input name="shared_prefix_tokens" type="number" min="0" placeholder="0: every prompt its own from the first word" /></label>
                <label>"Temperature"<input name="temperature" type="number" min="0" step="any" placeholder="server default" /></label>
                <label>"Extra body fields (JSON)"<input name="extra_body" placeholder="{\"top_p\": 0.9}" /></label>
                <label class="check"><input name="ignore_eos" type="checkbox" value="true" checked />" ignore_eos (exactly max_tokens)"</label>
                <label>"Run name"<input name="name" placeholder="model · endpoint · levels" /></label>
                <label>"GPUs the target runs on (for its cost and per-GPU figures)"<input name="gpu" placeholder="e.g. 8x H100" /></label>
                <label>"GPU count, if not above"<input name="gpu_count" type="number" min="1" placeholder="the count in GPUs" /></label>
                <label>"Engine"<input name="engine" placeholder="e.g. vllm (else read from its metrics)" /></label>
                <label>"Tags (comma-separated)"<input name="tags" placeholder="e.g. nightly, h100" /></label>
                <label>"Server metrics URLs (comma-separated)"<input name="metrics_urls" placeholder="the target's own /metrics" /></label>
                <label>"GPU metrics URLs (comma-separated; dcgm-exporter)"<input name="gpu_metrics_urls" placeholder="none (e.g. http://gpu-node:9400/metrics)" /></label>
                <label>"Metrics scrape interval (ms)"<input name="metrics_interval_ms" type="number" min="100" placeholder="500" /></label>
                <label class="check"><input name="no_metrics" type="checkbox" value="true" />" no server metrics"</label>
            </fieldset>
            <fieldset class="grid">
                <legend>"Workload"</legend>
                // `data-workload`: the workloads a field applies to, shown like `data-load`.
                <label>"What each user does"
                    <select name="workload">
                        <option value="single_turn">"Single-turn: one request, its own prompt"</option>
                        <option value="multi_turn">"Multi-turn conversation (each turn resends the history)"</option>
                        <option value="agentic">"Agentic session (each step adds a tool result)"</option>
                    </select>
                </label>
                <label data-workload="multi_turn agentic">"Turns per conversation, or most steps per session"<input name="turns" type="number" min="1" max="64" placeholder="5 turns; 8 steps" /></label>
                <label data-workload="multi_turn agentic">"Tokens per new user message"<input name="user_tokens" type="number" min="1" placeholder="the prompt length" /></label>
                <label data-workload="multi_turn agentic">"System prompt (tokens, the same for every session)"<input name="system_tokens" type="number" min="0" placeholder="0: none" /></label>
                <label data-workload="multi_turn agentic">"Think time between turns (ms)"<input name="think_ms" type="number" min="0" step="any" placeholder="0" /></label>
                <label data-workload="multi_turn agentic">"Think time"<select name="think"><option value="fixed">"fixed"</option><option value="exponential">"exponential around it (seeded)"</option></select></label>
                <label data-workload="agentic">"Agent: tool result per step (tokens)"<input name="tool_tokens" type="number" min="0" placeholder="512" /></label>
                <label data-workload="agentic">"Agent: context cap (tokens)"<input name="context_cap_tokens" type="number" min="0" placeholder="16384" /></label>
                <label>"Dataset (ShareGPT JSON/JSONL or OpenAI messages JSONL; first turns, or whole conversations when multi-turn)"<textarea name="dataset_text" rows="3" placeholder="paste the dataset, or leave empty for synthetic prompts"></textarea></label>
                <label>"Dataset file name"<input name="dataset_name" placeholder="dataset.jsonl" /></label>
            </fieldset>
            // Filled in by public/plateau.js from the newest stored run of the same model.
            <p class="hint" id="sweep-estimate" aria-live="polite"></p>
            <button type="submit" id="sweep-submit">"Start the sweep"</button>
        </form>
    }
}
