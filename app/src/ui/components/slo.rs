//! The SLO on a page: the picker that puts one in the page's address (typed, or one of the
//! team's named SLOs), the form that stores one under a name, and on a run page the answer —
//! capacity at the SLO in one sentence — and the levels table's SLO and goodput cells. Plain HTML forms and links: they work without JavaScript.

use crate::domain::analysis::slo::{self, Capacity, LevelGoodput, LimitResult, NamedSlo, Verdict};
use crate::domain::model::format::{shown, tok_s, UNKNOWN};
use crate::domain::model::metrics::{Metric, Stat};
use crate::domain::view::state::{query_pairs, ViewState};
use crate::domain::{Point, Run};
use leptos::prelude::*;

/// The picker: a text field holding the page's SLO (or empty), a link per named SLO, and
/// (on editable pages, with an SLO) a form to store it under a name. `path` is the page's
/// own path (`/runs/<id>`, `/compare`); the other parameters of its view are kept.
#[component]
pub fn SloPicker(view: ViewState, path: String, slos: Vec<NamedSlo>, editable: bool) -> impl IntoView {
    let without = ViewState { slo: None, ..view.clone() };
    let hidden = query_pairs(&without.to_query())
        .into_iter()
        .map(|(k, v)| view! { <input type="hidden" name=k value=v /> })
        .collect_view();
    let current = view.slo.as_ref().map(ToString::to_string).unwrap_or_default();
    let clear = without.href(&path);
    let named_links = slos
        .iter()
        .map(|n| {
            let href = ViewState { slo: Some(n.slo.clone()), ..view.clone() }.href(&path);
            let on = view.slo.as_ref() == Some(&n.slo);
            view! { <a href=href class="slo-name" class:current=on title=n.slo.spaced()>{n.name.clone()}</a>" " }
        })
        .collect_view();
    let has_named = !slos.is_empty();
    let back = view.href(&path);
    let save = (editable && view.slo.is_some()).then(|| {
        view! {
            <form method="post" action="/slos" class="slo-save" id="slo-save">
                <input type="hidden" name="slo" value=current.clone() />
                <input type="hidden" name="back" value=back />
                <label>"Save as "<input name="name" required maxlength="64" pattern="[A-Za-z0-9._\\-]+" placeholder="chat-interactive" /></label>
                <button type="submit" class="secondary">"Save SLO"</button>
            </form>
        }
    });
    view! {
        <div class="slo-picker" id="slo-picker">
            <form method="get" action=path.clone() class="slo-form" id="slo-form">
                {hidden}
                <label>"SLO "<input name="slo" id="slo-input" value=current maxlength="500"
                    placeholder="ttft:p99<=2s,tpot:p99<=50ms,errors<=1%" /></label>
                <button type="submit">"Judge at this SLO"</button>
                {view.slo.is_some().then(|| view! { " "<a href=clear id="slo-clear">"no SLO"</a> })}
            </form>
            {has_named.then(|| view! { <p class="slo-names" id="slo-names">"Named: "{named_links}</p> })}
            {save}
        </div>
    }
}

/// A level's SLO cell in the levels table: the verdict ("meets", "fails: TTFT p99 2.4 s",
/// "within noise: …", "not judged"), its class, and every limit's value and margin in its
/// title.
pub(super) fn verdict_cell(c: Option<&Capacity>, p: &Point) -> (String, &'static str, String) {
    // `levels` is in load order: one binary search a row, not a scan (a run may have 10,000).
    let found = c.and_then(|c| {
        let i = c.levels.binary_search_by(|l| l.load_value.total_cmp(&p.load_value)).ok()?;
        c.levels.get(i).filter(|l| l.load_kind == p.load_kind)
    });
    let Some(l) = found else {
        // Not judged at all: another load kind than the run's first level's.
        return ("—".into(), "slo-verdict slo-unknown", "not on the run's load axis".into());
    };
    let title = l.limits.iter().map(limit_title).collect::<Vec<_>>().join("; ");
    let worst = l.first_to_break();
    let (text, class) = match worst {
        _ if l.meets() => ("meets".to_owned(), "slo-verdict slo-met"),
        Some(r) if r.verdict == Verdict::WithinNoise => {
            (format!("within noise: {}", r.limit.label()), "slo-verdict slo-noise")
        }
        Some(r) => (
            format!("fails: {} {}", r.limit.label(), r.value.map(|v| r.limit.show(v)).unwrap_or_default()),
            "slo-verdict slo-broken",
        ),
        None => ("not judged".to_owned(), "slo-verdict slo-unknown"),
    };
    (text, class, title)
}

/// "TTFT p99 2.4 s (> 2 s)": one limit of a level's title, short because a run may have
/// thousands of rows (the SLO section above the table says the margins in words).
fn limit_title(r: &LimitResult) -> String {
    let Some(v) = r.value else {
        return format!("{} unknown", r.limit.label());
    };
    let bound = r.limit.bound_label();
    let relation = match (r.verdict, r.limit.is_upper()) {
        (Verdict::WithinNoise, _) => format!("≈ {bound}, within noise"),
        (Verdict::Met, true) => format!("≤ {bound}"),
        (Verdict::Met, false) => format!("≥ {bound}"),
        (Verdict::Broken, true) => format!("> {bound}"),
        (Verdict::Broken, false) => format!("< {bound}"),
        _ => format!("limit {bound}, not judged"),
    };
    format!("{} {} ({relation})", r.limit.label(), r.limit.show(v))
}

/// A level's goodput cells (req/s with good of all, tok/s) and, where it has none, why.
pub(super) fn goodput_cells(goodput: &[LevelGoodput], p: &Point) -> (String, String, String) {
    // In load order, as the levels are: one binary search a row.
    let found = goodput
        .binary_search_by(|g| g.load_value.total_cmp(&p.load_value))
        .ok()
        .and_then(|i| goodput.get(i))
        .filter(|g| g.load_kind == p.load_kind);
    match found.map(|g| &g.goodput) {
        Some(Ok(g)) => (
            format!("{} ({} of {})", shown(Some(g.req_s), 2), g.good, g.requests),
            g.output_tok_s.map_or_else(|| UNKNOWN.to_owned(), |t| shown(Some(t), 1)),
            String::new(),
        ),
        Some(Err(why)) => (UNKNOWN.to_owned(), UNKNOWN.to_owned(), why.to_string()),
        None => (UNKNOWN.to_owned(), UNKNOWN.to_owned(), String::new()),
    }
}

/// Output tok/s per GPU at a capacity, when the run says how many GPUs served it.
fn per_gpu(run: &Run, tok: Option<f64>) -> Option<String> {
    let gpus = run.facts.gpu_count.filter(|n| *n > 0)?;
    Some(format!("{} per GPU ({gpus} GPU{})", tok_s(tok? / gpus as f64), if gpus == 1 { "" } else { "s" }))
}

/// The run page's answer at its SLO: the sentence, tok/s per GPU at the capacity, and how
/// levels and goodput are judged (each level's verdict and goodput are columns of the
/// levels table).
#[component]
pub fn SloSection(
    run: Run,
    capacity: Capacity,
    named: Option<String>,
    /// Whether some level's goodput could be computed from per-request records.
    has_goodput: bool,
    /// "$8.46": the $ per million output tokens at the capacity, when a price applies.
    usd_per_mtok: Option<String>,
) -> impl IntoView {
    let sentence = slo::sentence(&capacity);
    // What the capacity costs and what each GPU does there, right under the answer.
    let at_load: Vec<String> = [
        usd_per_mtok.map(|usd| format!("{usd} per million output tokens")),
        capacity.capacity.and_then(|cap| per_gpu(&run, cap.output_tok_s)),
    ]
    .into_iter()
    .flatten()
    .collect();
    let gpu_line = (!at_load.is_empty()).then(|| format!("At that load: {}.", at_load.join("; ")));
    let imported = run.points.iter().any(|p| p.get(Metric::Goodput, Stat::Mean).is_some());
    let title = match named {
        Some(n) => format!("Capacity at SLO “{n}”"),
        None => "Capacity at your SLO".to_owned(),
    };
    let goodput_note = if has_goodput {
        "Goodput (in the levels table) counts each request that succeeded and met every per-request limit — its own \
         TTFT, TPOT, latency; the statistic ignored — divided by the level's duration: vLLM's and GenAI-Perf's \
         definition."
    } else {
        "No goodput: the levels have no per-request records (or the SLO limits what records do not hold), so each \
         level is judged by its statistics alone."
    };
    view! {
        <section class="slo" id="slo" data-slo=capacity.slo.to_string()>
            <p id="capacity-sentence"><strong>{title}": "</strong>{sentence}</p>
            {gpu_line.map(|g| view! { <p class="slo-gpu" id="slo-gpu">{g}</p> })}
            <details class="caveat">
            <summary>"How each level is judged"</summary>
            <p class="slo-note">
                "The levels table's SLO column judges each level against every limit (each value against its bound in \
                 the cell's title); with repeats a level meets a limit only at the upper end of its 95 % interval, and “within noise” \
                 is not a pass. "
                {goodput_note}
                {imported.then_some(" The source's own goodput is under “Every statistic the source reported”, judged by that tool's SLO.")}
            </p>
            </details>
        </section>
    }
}
