//! The SLO on a page: the picker that puts one in the page's address (typed, or one of the
//! team's named SLOs), the form that stores one under a name, and on a run page the answer —
//! capacity at the SLO in one sentence, then each level's attainment per limit and its
//! goodput. Plain HTML forms and links: they work without JavaScript.

use crate::domain::compare::load_label;
use crate::domain::format::{num, tok_s, UNKNOWN};
use crate::domain::metrics::{Metric, Stat};
use crate::domain::slo::{self, Capacity, LevelGoodput, LimitResult, NamedSlo, Slo, Verdict};
use crate::domain::view::{query_pairs, ViewState};
use crate::domain::Run;
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
                <label>"SLO "<input name="slo" id="slo-input" value=current size="48" maxlength="500"
                    placeholder="ttft:p99<=2s,tpot:p99<=50ms,errors<=1%" /></label>
                <button type="submit">"Judge at this SLO"</button>
                {view.slo.is_some().then(|| view! { " "<a href=clear id="slo-clear">"no SLO"</a> })}
            </form>
            {has_named.then(|| view! { <p class="slo-names" id="slo-names">"Named: "{named_links}</p> })}
            {save}
        </div>
    }
}

/// "TTFT p99 ≤ 2 s" as a column head.
fn limit_head(r: &LimitResult) -> String {
    r.limit.heading()
}

fn verdict_class(v: Verdict) -> &'static str {
    match v {
        Verdict::Met => "slo-met",
        Verdict::Broken => "slo-broken",
        Verdict::WithinNoise => "slo-noise",
        Verdict::Unknown => "slo-unknown",
    }
}

/// A cell: the value (with its interval across trials) and, in its title, the margin.
fn limit_cell(r: &LimitResult) -> impl IntoView {
    let text = match r.value {
        Some(v) => match r.verdict {
            Verdict::WithinNoise => format!("{} (within noise)", r.limit.show(v)),
            _ => r.limit.show(v),
        },
        None => UNKNOWN.to_owned(),
    };
    let title = match (r.margin, r.verdict) {
        (Some(m), Verdict::Met) => format!("met, {} of headroom", r.limit.show(m.abs())),
        (Some(m), Verdict::Broken) => format!("broken by {}", r.limit.show(m.abs())),
        (_, Verdict::WithinNoise) => "the trials' 95 % interval straddles the limit".to_owned(),
        _ => "the level does not report this statistic".to_owned(),
    };
    view! { <td class=verdict_class(r.verdict) title=title>{text}</td> }
}

/// Output tok/s per GPU at a capacity, when the run says how many GPUs served it.
fn per_gpu(run: &Run, tok: Option<f64>) -> Option<String> {
    let gpus = run.facts.gpu_count.filter(|n| *n > 0)?;
    Some(format!("{} per GPU ({gpus} GPU{})", tok_s(tok? / gpus as f64), if gpus == 1 { "" } else { "s" }))
}

/// The run page's answer at `slo`: the sentence, then the levels judged limit by limit
/// with their goodput (from per-request records where the run has them).
#[component]
pub fn SloSection(run: Run, slo: Slo, named: Option<String>, goodput: Vec<LevelGoodput>) -> impl IntoView {
    let c: Capacity = slo::capacity(&slo, &run.points);
    let sentence = slo::sentence(&c);
    let gpu_line = c.capacity.and_then(|cap| per_gpu(&run, cap.output_tok_s)).map(|g| format!("At that load: {g}."));
    let kind = c.load_kind;
    let heads: Vec<String> = c.levels.first().map(|l| l.limits.iter().map(limit_head).collect()).unwrap_or_default();
    let imported = run.points.iter().any(|p| p.get(Metric::Goodput, Stat::Mean).is_some());
    let has_goodput = !goodput.is_empty();
    let rows = c
        .levels
        .iter()
        .map(|l| {
            let label = kind.map_or_else(|| l.load_value.to_string(), |k| load_label(k, l.load_value));
            let (verdict, class) = if l.meets() {
                ("meets", "slo-met")
            } else if l.fails() {
                ("fails", "slo-broken")
            } else {
                ("not judged", "slo-unknown")
            };
            let g = goodput.iter().find(|g| g.load_value == l.load_value && g.load_kind == l.load_kind);
            let (g_req, g_tok, g_title) = match g.map(|g| &g.goodput) {
                Some(Ok(g)) => (
                    format!("{} req/s ({} of {})", num(Some(g.req_s), 2), g.good, g.requests),
                    g.output_tok_s.map_or_else(|| UNKNOWN.to_owned(), tok_s),
                    String::new(),
                ),
                Some(Err(why)) => (UNKNOWN.to_owned(), UNKNOWN.to_owned(), why.to_string()),
                None => (UNKNOWN.to_owned(), UNKNOWN.to_owned(), String::new()),
            };
            let imported_cell = run
                .points
                .iter()
                .find(|p| p.load_value == l.load_value && p.load_kind == l.load_kind)
                .and_then(|p| p.get(Metric::Goodput, Stat::Mean))
                .map_or_else(|| UNKNOWN.to_owned(), |v| format!("{} req/s", num(Some(v), 2)));
            view! {
                <tr>
                    <td class="load">{label}</td>
                    {l.limits.iter().map(limit_cell).collect_view()}
                    <td class=class>{verdict}</td>
                    {has_goodput.then(|| view! { <td title=g_title.clone()>{g_req}</td><td title=g_title>{g_tok}</td> })}
                    {imported.then(|| view! { <td>{imported_cell}</td> })}
                </tr>
            }
        })
        .collect_view();
    let title = match named {
        Some(n) => format!("Capacity at SLO “{n}”"),
        None => "Capacity at your SLO".to_owned(),
    };
    view! {
        <section class="slo" id="slo" data-slo=slo.to_string()>
            <p id="capacity-sentence"><strong>{title}": "</strong>{sentence}</p>
            {gpu_line.map(|g| view! { <p class="slo-gpu" id="slo-gpu">{g}</p> })}
            <details class="slo-levels-wrap" open>
                <summary>"Each level against each limit"</summary>
                <div class="table-wrap">
                    <table class="levels slo-levels" id="slo-levels">
                        <thead><tr>
                            <th>"load"</th>
                            {heads.into_iter().map(|h| view! { <th>{h}</th> }).collect_view()}
                            <th>"SLO"</th>
                            {has_goodput.then(|| view! { <th>"goodput"</th><th>"goodput tok/s"</th> })}
                            {imported.then(|| view! { <th>"goodput (source)"</th> })}
                        </tr></thead>
                        <tbody>{rows}</tbody>
                    </table>
                </div>
                <p class="slo-note">
                    "A level meets a limit when its statistic does (with trials: the upper end of its 95 % interval); "
                    "“within noise” means the trials straddle the limit. Goodput counts each request that succeeded and "
                    "met every per-request limit (its own TTFT, TPOT, latency; the statistic ignored), divided by the "
                    "level's duration — vLLM's and GenAI-Perf's definition — from the stored per-request records. "
                    {imported.then_some("“goodput (source)” is the figure the imported file reports, judged by that tool's own SLO. ")}
                    "Where only summary statistics exist there is no goodput: the level is judged by its percentiles."
                </p>
            </details>
        </section>
    }
}
