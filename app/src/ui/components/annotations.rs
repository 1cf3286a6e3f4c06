//! Annotations on a page: their formatted text, the list of a run's annotations with edit
//! and delete, the form that adds one, the accept / dismiss buttons of anomaly proposals,
//! and the share bar (save report, snapshot). All plain HTML forms: they work without
//! JavaScript, and text is only ever rendered as text nodes.

use crate::domain::analysis::anomalies::{Anomaly, SuggestedAnnotationKind};
use crate::domain::model::annotations::{parse_inline, Anchor, Annotation, AnnotationKind, Effect, Inline};
use crate::domain::model::format::when;
use crate::domain::model::level::LevelKey;
use crate::domain::{Point, Run};
use leptos::prelude::*;

/// Annotation text with its light formatting; markup in it stays text.
#[component]
pub fn AnnotationText(body: String) -> impl IntoView {
    parse_inline(&body)
        .into_iter()
        .map(|piece| match piece {
            Inline::Text(t) => view! { <span>{t}</span> }.into_any(),
            Inline::Em(t) => view! { <em>{t}</em> }.into_any(),
            Inline::Strong(t) => view! { <strong>{t}</strong> }.into_any(),
            Inline::Code(t) => view! { <code>{t}</code> }.into_any(),
            Inline::Link { text, href } => view! { <a href=href rel="nofollow noopener">{text}</a> }.into_any(),
        })
        .collect_view()
}

/// The content of a `<textarea>` holding `text`. Leptos writes a textarea's text child
/// unescaped during server rendering, so `</textarea>` in the text would end the element
/// early and the rest would be parsed as markup. Escaped here, the browser decodes the
/// character references back into exactly `text`.
pub fn textarea_html(text: &str) -> String {
    crate::domain::model::annotations::escape_html(text)
}

fn kind_options(selected: AnnotationKind) -> impl IntoView {
    AnnotationKind::ALL
        .into_iter()
        .map(|k| view! { <option value=k.as_str() selected=k == selected>{k.label()}</option> })
        .collect_view()
}

fn effect_options(selected: Effect) -> impl IntoView {
    Effect::ALL
        .into_iter()
        .map(|e| view! { <option value=e.as_str() selected=e == selected>{e.label()}</option> })
        .collect_view()
}

/// Every level of the run, set-aside ones included, in load order.
fn all_levels(run: &Run) -> Vec<Point> {
    let mut all: Vec<Point> = run.points.iter().cloned().chain(run.set_aside.iter().map(|s| s.point.clone())).collect();
    all.sort_by(|a, b| a.load_value.total_cmp(&b.load_value));
    all.dedup_by(|a, b| LevelKey::of(a).same_as(&LevelKey::of(b)));
    all
}

fn level_options(levels: &[Point]) -> impl IntoView {
    levels
        .iter()
        .map(|p| view! { <option value=p.load_value.to_string()>{LevelKey::of(p).label()}</option> })
        .collect_view()
}

/// One annotation, with its history and (when editable) edit and delete forms.
#[component]
fn AnnotationItem(a: Annotation, back: String, editable: bool) -> impl IntoView {
    let id = a.id.to_string();
    let edited = !a.history.is_empty();
    let history = a.history.clone();
    let edit_action = format!("/annotations/{id}/edit");
    let delete_action = format!("/annotations/{id}/delete");
    let superseded = a.superseded_by.clone().map(|r| {
        let href = format!("/runs/{r}");
        view! { <span class="superseded">" superseded by "<a href=href>{r.to_string()}</a></span> }
    });
    let effect = (a.effect != Effect::None).then(|| view! { <span class="badge bad effect">{a.effect.label()}</span> });
    let whole_run = a.anchor == Anchor::Run;
    let new_baseline = a.new_baseline.then(|| {
        view! { <span class="badge info new-baseline" title="the regression gate compares later runs with the runs from this one on">"new baseline"</span> }
    });
    let proposal = a
        .proposal_key
        .is_some()
        .then(|| view! { <span class="badge info" title="accepted from an anomaly proposal">"from proposal"</span> });
    view! {
        <li class="annotation" id=format!("annotation-{id}") data-id=id.clone() data-kind=a.kind.as_str()>
            <div class="annotation-head">
                <span class="badge">{a.kind.label()}</span>" "
                <span class="anchor">{a.anchor.label()}</span>" "
                {effect}{new_baseline}{proposal}{superseded}
            </div>
            <div class="annotation-text"><AnnotationText body=a.body.clone() /></div>
            <div class="annotation-meta">
                "by "<span class="author">{a.author.clone()}</span>", "{when(&a.created_at)}
                {edited.then(|| view! { <span>", edited "{when(&a.updated_at)}</span> })}
            </div>
            {edited.then(|| view! {
                <details class="history">
                    <summary>"Earlier versions ("{history.len()}")"</summary>
                    <ol>
                        {history.into_iter().map(|r| view! {
                            <li class="revision">
                                <span class="badge">{r.kind.label()}</span>" "<AnnotationText body=r.body.clone() />
                                <span class="annotation-meta">" — "{r.author.clone()}", replaced "{when(&r.replaced_at)}</span>
                            </li>
                        }).collect_view()}
                    </ol>
                </details>
            })}
            {editable.then(|| view! {
                <details class="edit-annotation">
                    <summary>"Edit or delete"</summary>
                    <form method="post" action=edit_action class="annotation-form edit-form">
                        <input type="hidden" name="back" value=back.clone() />
                        <label>"Kind "<select name="kind">{kind_options(a.kind)}</select></label>
                        <label>"Effect "<select name="effect">{effect_options(a.effect)}</select></label>
                        <label>"Superseded by (run id) "<input name="superseded_by" value=a.superseded_by.as_ref().map(ToString::to_string).unwrap_or_default() /></label>
                        {whole_run.then(|| view! {
                            <label><input type="checkbox" name="new_baseline" checked=a.new_baseline />" expected change: new baseline"</label>
                        })}
                        <label class="wide">"Text "<textarea name="body" rows="3" required inner_html=textarea_html(&a.body)></textarea></label>
                        <button type="submit">"Save changes"</button>
                    </form>
                    <form method="post" action=delete_action class="delete-form">
                        <input type="hidden" name="back" value=back.clone() />
                        <label><input type="checkbox" name="confirm" value="yes" required />" yes, delete this annotation"</label>
                        <button type="submit" class="danger">"Delete"</button>
                    </form>
                </details>
            })}
        </li>
    }
}

/// The annotations of `runs` that belong on this page: each run's own, and comparison
/// notes whose runs are all shown.
pub fn visible_annotations(runs: &[Run]) -> Vec<Annotation> {
    let shown: Vec<&crate::domain::RunId> = runs.iter().map(|r| &r.id).collect();
    runs.iter()
        .flat_map(|r| r.annotations.iter())
        .filter(|a| match &a.anchor {
            Anchor::Comparison { runs } => runs.iter().all(|id| shown.contains(&id)),
            _ => true,
        })
        .cloned()
        .collect()
}

/// The list of a run's annotations and the form that adds one.
#[component]
pub fn AnnotationsSection(run: Run, back: String, editable: bool) -> impl IntoView {
    let list = run.annotations.clone();
    let empty = list.is_empty();
    let levels = all_levels(&run);
    let action = format!("/runs/{}/annotations", run.id);
    let load_kind = levels.first().map_or("concurrency", |p| p.load_kind.as_str());
    let items = {
        let back = back.clone();
        list.into_iter().map(move |a| view! { <AnnotationItem a back=back.clone() editable /> }).collect_view()
    };
    view! {
        <section class="annotations" id="annotations">
            <h2>"Annotations"</h2>
            {empty.then(|| view! { <p class="empty">"No annotations yet."</p> })}
            <ul class="annotation-list">{items}</ul>
            {editable.then(|| view! {
                <details class="annotate" id="annotate">
                    <summary>"Add an annotation"</summary>
                    <form method="post" action=action class="annotation-form" id="annotate-form">
                        <input type="hidden" name="back" value=back.clone() />
                        <input type="hidden" name="load_kind" value=load_kind />
                        <fieldset class="anchor-choice">
                            <legend>"On"</legend>
                            <label><input type="radio" name="anchor" value="run" checked />" the whole run"</label>
                            <label><input type="radio" name="anchor" value="point" />" one level "
                                <select name="level" aria-label="level">{level_options(&levels)}</select></label>
                            <label><input type="radio" name="anchor" value="range" />" levels from "
                                <select name="from" aria-label="from level">{level_options(&levels)}</select>" to "
                                <select name="to" aria-label="to level">{level_options(&levels)}</select></label>
                        </fieldset>
                        <label>"Kind "<select name="kind">{kind_options(AnnotationKind::Note)}</select></label>
                        <label>"Effect "<select name="effect">{effect_options(Effect::None)}</select></label>
                        <label>"Superseded by (run id) "<input name="superseded_by" placeholder="only for “superseded”" /></label>
                        <label title="whole run only: the regression gate then compares later runs with the runs from this one on"><input type="checkbox" name="new_baseline" />" expected change: new baseline"</label>
                        <label class="wide">"Text "<textarea name="body" rows="3" required placeholder="C=32 dropped because this run used the chat endpoint. *emphasis*, `code`, [links](https://…)"></textarea></label>
                        <button type="submit">"Annotate"</button>
                    </form>
                </details>
            })}
        </section>
    }
}

fn suggested(kind: SuggestedAnnotationKind) -> AnnotationKind {
    match kind {
        SuggestedAnnotationKind::Note => AnnotationKind::Note,
        SuggestedAnnotationKind::Cause => AnnotationKind::Cause,
        SuggestedAnnotationKind::Outlier => AnnotationKind::Outlier,
        SuggestedAnnotationKind::Invalid => AnnotationKind::Invalid,
    }
}

/// Anomalies found in `runs`, each proposed as an annotation with Accept and Dismiss
/// (hidden once accepted or dismissed).
#[component]
pub fn ProposalsList(
    runs: Vec<Run>,
    found: Vec<Anomaly>,
    dismissed: Vec<String>,
    back: String,
    editable: bool,
    /// What the page already says above (the run page's "why it plateaus"): a proposal
    /// that would annotate exactly that points to it instead of saying it again.
    #[prop(optional)]
    said_above: Option<String>,
) -> impl IntoView {
    // Handled keys in a set: a long run can have thousands of findings and keys.
    let handled: std::collections::HashSet<String> = runs
        .iter()
        .flat_map(|r| r.annotations.iter().filter_map(|a| a.proposal_key.clone()))
        .chain(dismissed)
        .collect();
    // One proposal per finding: the same finding at several levels is one (accepted as a
    // range of levels, dismissed at once).
    let open: Vec<Anomaly> = crate::domain::analysis::anomalies::group_levels(
        found.into_iter().filter(|a| !handled.contains(&a.key())).collect(),
    )
    .into_iter()
    .filter(|a| !handled.contains(&a.key()))
    .collect();
    if open.is_empty() {
        return view! { <p class="empty">"Nothing unusual found, or every finding has been handled."</p> }.into_any();
    }
    let several = runs.len() > 1;
    view! {
        <ul class="anomalies" id="anomalies">
            {open.into_iter().map(|a| {
                let key = a.key();
                let sev = match a.severity {
                    crate::domain::analysis::anomalies::Severity::Critical => "badge bad",
                    crate::domain::analysis::anomalies::Severity::Warning => "badge",
                    crate::domain::analysis::anomalies::Severity::Info => "badge info",
                };
                let who = if several { runs.get(a.run).map(|r| format!("{} ", r.name)).unwrap_or_default() } else { String::new() };
                let at = match (a.level, a.levels.as_slice()) {
                    (Some(l), _) => l.label(),
                    (None, []) => String::new(),
                    (None, ls) => crate::domain::analysis::anomalies::levels_label(
                        ls[0].load_kind,
                        &ls.iter().map(|l| crate::domain::model::format::load(l.load_value)).collect::<Vec<_>>(),
                    ),
                };
                let accept = format!("/runs/{}/annotations", a.run_id);
                let (anchor, level, load_kind) = match (a.level, a.levels.first()) {
                    (Some(l), _) => ("point", l.load_value.to_string(), l.load_kind.as_str()),
                    (None, Some(l)) => ("range", String::new(), l.load_kind.as_str()),
                    (None, None) => ("run", String::new(), "concurrency"),
                };
                let (from, to) = match (a.levels.first(), a.levels.last()) {
                    (Some(f), Some(t)) => (f.load_value.to_string(), t.load_value.to_string()),
                    _ => (String::new(), String::new()),
                };
                let kind = suggested(a.annotation_kind()).as_str();
                // A change point can be accepted as the start of a new baseline.
                let change_point = a.kind == crate::domain::analysis::anomalies::AnomalyKind::ChangePoint;
                let repeats = said_above.as_deref().is_some_and(|w| w.trim() == a.proposed_annotation_text.trim());
                view! {
                    <li data-key=key.clone() class:said-above=repeats>
                        {if repeats {
                            view! {
                                <span class=sev>{a.kind.label()}</span>" "<strong>{who.clone()}</strong>{at.clone()}": "
                                <a href="#why">"why it plateaus"</a>", said above — as an annotation on the level, to keep with the run."
                            }.into_any()
                        } else {
                            view! {
                                <span class=sev>{a.kind.label()}</span>" "<strong>{who.clone()}</strong>{at.clone()}": "{a.evidence.clone()}
                                <div class="proposal">"Proposed annotation: "<em>{a.proposed_annotation_text.clone()}</em></div>
                            }.into_any()
                        }}
                        {editable.then(|| view! {
                            <div class="proposal-actions">
                                <form method="post" action=accept class="inline">
                                    <input type="hidden" name="back" value=back.clone() />
                                    <input type="hidden" name="anchor" value=anchor />
                                    <input type="hidden" name="level" value=level />
                                    <input type="hidden" name="from" value=from />
                                    <input type="hidden" name="to" value=to />
                                    <input type="hidden" name="load_kind" value=load_kind />
                                    <input type="hidden" name="kind" value=kind />
                                    <input type="hidden" name="effect" value="none" />
                                    <input type="hidden" name="body" value=a.proposed_annotation_text.clone() />
                                    <input type="hidden" name="proposal_key" value=key.clone() />
                                    {change_point.then(|| view! {
                                        <label class="new-baseline-choice"><input type="checkbox" name="new_baseline" />" expected change: new baseline"</label>" "
                                    })}
                                    <button type="submit" class="accept-proposal">"Accept"</button>
                                </form>
                                <form method="post" action="/proposals/dismiss" class="inline">
                                    <input type="hidden" name="back" value=back.clone() />
                                    <input type="hidden" name="key" value=key.clone() />
                                    <button type="submit" class="secondary dismiss-proposal">"Dismiss"</button>
                                </form>
                            </div>
                        })}
                    </li>
                }
            }).collect_view()}
        </ul>
    }
    .into_any()
}

/// Save the current view as a report, or freeze it as a snapshot; and the exports.
#[component]
pub fn ShareBar(view_path: String, exports: Vec<(&'static str, String)>, editable: bool) -> impl IntoView {
    view! {
        <section class="share" id="share">
            <h2>"Share and export"</h2>
            <p class="exports">
                "Export: "
                {exports.into_iter().enumerate().map(|(i, (label, href))| view! {
                    {(i > 0).then_some(" · ")}<a href=href class="export-link">{label}</a>
                }).collect_view()}
                " · PNG: the button on each chart"
            </p>
            {editable.then(|| view! {
                <div class="share-forms">
                    <form method="post" action="/reports" class="report-form" id="report-form">
                        <input type="hidden" name="view" value=view_path.clone() />
                        <label>"Report title "<input name="title" required maxlength="200" /></label>
                        <label class="wide">"Description "<textarea name="description" rows="2" maxlength="2000"></textarea></label>
                        <button type="submit">"Save report"</button>
                    </form>
                    <form method="post" action="/snapshots" class="snapshot-form" id="snapshot-form">
                        <input type="hidden" name="view" value=view_path.clone() />
                        <label>"Snapshot title "<input name="title" maxlength="200" placeholder="optional" /></label>
                        <button type="submit" class="secondary">"Snapshot (frozen copy)"</button>
                    </form>
                </div>
            })}
        </section>
    }
}

/// A banner saying how the page is shown (report or snapshot).
#[component]
pub fn ModeBanner(mode: crate::domain::view::state::PageMode, live_href: String) -> impl IntoView {
    use crate::domain::view::state::PageMode;
    match mode {
        PageMode::Live => ().into_any(),
        PageMode::Report(r) => view! {
            <div class="banner report-banner" id="report-banner">
                <h1 class="report-title">{r.title.clone()}</h1>
                {(!r.description.is_empty()).then(|| view! { <p class="report-description"><AnnotationText body=r.description.clone() /></p> })}
                <p class="annotation-meta">"Saved report by "{r.author.clone()}", "{when(&r.created_at)}" · live data · "<a href=live_href>"open the view"</a></p>
            </div>
        }.into_any(),
        PageMode::Snapshot { id, title, created_at } => view! {
            <div class="banner snapshot-banner" id="snapshot-banner">
                <strong>"Snapshot "<code>{id}</code></strong>" — "{title}" — frozen "{when(&created_at)}
                "; later edits do not change it. "<a href=live_href>"Open the live view"</a>
            </div>
        }.into_any(),
    }
}

/// The problems of a view URL, with what each parameter takes.
#[component]
pub fn ViewProblems(problems: Vec<crate::domain::view::state::ViewProblem>, fallback: String) -> impl IntoView {
    // The address asked for a view that does not exist: a client error.
    crate::ui::components::set_page_status(400);
    view! {
        <div class="error-box view-problems" role="alert" id="view-problems">
            <h1>"This link's view settings are not valid"</h1>
            <ul>
                {problems.into_iter().map(|p| view! {
                    <li><code>{p.param.clone()}"="{p.value.clone()}</code>": expected "{p.expected.clone()}</li>
                }).collect_view()}
            </ul>
            <p><a href=fallback>"Open the page with its default view"</a></p>
        </div>
    }
}
