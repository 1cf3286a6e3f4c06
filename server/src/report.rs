//! Exports of what a page shows: the self-contained offline HTML report (data, charts and
//! annotations inlined with ECharts itself, so the file opens from disk with no server),
//! and a comparison's CSV, JSON and Markdown.
//!
//! The charts are the page's own ([`app::charts::pages`]), so the report draws what the
//! page drew. Every piece of text is HTML-escaped; JSON inside `<script>` has `<` escaped
//! so no `</script>` can end it.

use crate::share::{ShareError, ViewTarget};
use app::charts::pages::{compare_charts, run_charts, PageChart};
use app::domain::analysis::knee::{saturation, DEFAULT_KNEE_THRESHOLD};
use app::domain::analysis::slo::Slo;
use app::domain::analysis::why::{add_server_differences, RunSignals};
use app::domain::analysis::why_signals::{run_signals, why_paragraph, StoredSignals};
use app::domain::model::annotations::{escape_html, plain_text, to_html, Anchor};
use app::domain::model::format::{int, load, ms_as_s, num, when};
use app::domain::model::metrics::{Metric, Stat};
use app::domain::view::state::{ChartSpec, ViewState};
use app::domain::Run;
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;

/// JSON safe to place inside a `<script>` element.
fn script_json(json: &str) -> String {
    json.replace('<', "\\u003c").replace('>', "\\u003e").replace('&', "\\u0026")
}

fn levels_table(run: &Run) -> String {
    let mut rows = String::new();
    for p in &run.points {
        let notes: Vec<String> = run
            .annotations
            .iter()
            .filter(|a| matches!(a.anchor, Anchor::Point { .. } | Anchor::Range { .. }) && a.anchor.covers(p))
            .map(|a| format!("<span class=\"note-marker\" title=\"{}\">✎</span>", escape_html(&plain_text(&a.body))))
            .collect();
        rows.push_str(&format!(
            "<tr><td class=\"load\">{}{}</td><td>{} / {}</td><td class=\"tok\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
            escape_html(&load(p.load_value)),
            notes.join(""),
            int(p.requests_ok),
            int(p.requests_failed),
            num(p.output_tok_s(), 1),
            ms_as_s(p.latency_ms(Stat::Mean)),
            ms_as_s(p.latency_ms(Stat::P50)),
            ms_as_s(p.latency_ms(Stat::P99)),
            num(p.get(Metric::Ttft, Stat::P50), 0),
        ));
    }
    for s in &run.set_aside {
        rows.push_str(&format!(
            "<tr class=\"set-aside\"><td class=\"load\">{}</td><td colspan=\"6\">{} by an annotation</td></tr>\n",
            escape_html(&load(s.point.load_value)),
            if s.effect == app::domain::model::annotations::Effect::Hide { "hidden" } else { "excluded from analysis" },
        ));
    }
    format!(
        "<table class=\"levels\"><thead><tr><th>load</th><th>ok / failed</th><th>output tok/s</th><th>lat avg (s)</th><th>p50 (s)</th><th>p99 (s)</th><th>TTFT p50 (ms)</th></tr></thead><tbody>\n{rows}</tbody></table>"
    )
}

/// The "why it plateaus" paragraph of a run, escaped, with its evidence numbers.
fn why_html(signals: &RunSignals) -> String {
    let Some(w) = why_paragraph(signals) else { return String::new() };
    let evidence: String = w.evidence.iter().map(|e| format!("<li>{}</li>", escape_html(e))).collect();
    format!(
        "<div class=\"why\" data-kind=\"{}\"><p><strong>{}: </strong>{}</p>{}</div>",
        w.kind.map_or("none", |k| k.as_str()),
        escape_html(&w.heading),
        escape_html(&w.sentence),
        if evidence.is_empty() { String::new() } else { format!("<ul class=\"why-evidence\">{evidence}</ul>") }
    )
}

fn annotations_list(runs: &[Run]) -> String {
    let items: Vec<String> = runs
        .iter()
        .flat_map(|r| r.annotations.iter().map(move |a| (r, a)))
        .map(|(r, a)| {
            format!(
                "<li class=\"annotation\" data-kind=\"{}\"><span class=\"badge\">{}</span> <strong>{}</strong> · {}: {} <span class=\"annotation-meta\">— {}, {}</span></li>",
                a.kind.as_str(),
                escape_html(a.kind.label()),
                escape_html(&r.name),
                escape_html(&a.anchor.label()),
                to_html(&a.body),
                escape_html(&a.author),
                escape_html(&when(&a.updated_at)),
            )
        })
        .collect();
    if items.is_empty() {
        "<p class=\"empty\">No annotations.</p>".to_owned()
    } else {
        format!("<ul class=\"annotation-list\" id=\"annotations\">{}</ul>", items.join("\n"))
    }
}

/// A run's cost and energy per level, with the price it rests on (or why there is none)
/// and what the figures assume.
fn cost_html(name: &str, c: &app::domain::analysis::cost::RunCost) -> String {
    use app::domain::analysis::cost::{usd, ASSUMPTION, ENERGY_ASSUMPTION};
    let money = |v: Option<f64>| v.map_or_else(|| app::domain::model::format::UNKNOWN.to_owned(), usd);
    let basis = match &c.basis {
        Ok(b) => format!("Price: {} = {} per hour.", escape_html(&b.describe()), escape_html(&usd(b.usd_per_hour()))),
        Err(e) => format!("Cost: <strong>{}</strong> (prices are set on the server's GPU prices page).", e.text()),
    };
    let rows: String = c
        .levels
        .iter()
        .map(|l| {
            format!(
                "<tr><td class=\"load\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape_html(&l.level.map(|k| k.label()).unwrap_or_default()),
                escape_html(&money(l.usd_per_m_output)),
                escape_html(&money(l.usd_per_m_total)),
                num(l.output_tok_s_per_gpu, 1),
                num(l.joules_per_output_token, 3),
                num(l.output_tokens_per_watt, 2),
            )
        })
        .collect();
    let energy = if c.has_energy() { format!(" Energy: {ENERGY_ASSUMPTION}.") } else { String::new() };
    format!(
        "<section class=\"cost\"><h3>Cost and energy: {}</h3><p class=\"cost-basis\">{basis}</p>\
         <div class=\"table-wrap\"><table class=\"levels\"><thead><tr><th>load</th><th>$ / M output tokens</th>\
         <th>$ / M total tokens</th><th>output tok/s per GPU</th><th>J / output token</th><th>output tokens / W</th>\
         </tr></thead><tbody>{rows}</tbody></table></div><p class=\"hint\">Each cost is {}.{}</p></section>",
        escape_html(name),
        escape_html(ASSUMPTION),
        escape_html(&energy),
    )
}

/// Each run's name, facts, saturation, capacity at the view's SLO and why it behaves so.
fn runs_html(runs: &[Run], signals: &[RunSignals], view: &ViewState) -> String {
    let mut body = String::new();
    body.push_str("<section class=\"runs\">");
    for (r, signals) in runs.iter().zip(signals) {
        let sat = saturation(&r.points, DEFAULT_KNEE_THRESHOLD).map(|s| s.sentence()).unwrap_or_default();
        let facts = [
            r.facts.model.clone(),
            r.facts.gpu_label(),
            r.facts.endpoint_kind.map(|e| e.path().to_owned()),
            r.definitions.workload.as_ref().map(|w| w.label()),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" · ");
        body.push_str(&format!(
            "<h2>{}</h2><p>{}</p><p class=\"saturation\">{}</p>",
            escape_html(&r.name),
            escape_html(&facts),
            escape_html(&sat)
        ));
        if let Some(slo) = &view.slo {
            let c = app::domain::analysis::slo::capacity(slo, &r.points);
            body.push_str(&format!(
                "<p class=\"capacity\" id=\"capacity-sentence\"><strong>Capacity at your SLO:</strong> {}</p>",
                escape_html(&app::domain::analysis::slo::sentence(&c))
            ));
        }
        body.push_str(&why_html(signals));
    }
    body.push_str("</section>\n");
    body
}

/// A comparison's sections: capacity at the view's SLO against the baseline, whether the
/// runs are comparable and why their throughput differs.
fn compare_html(runs: &[Run], signals: &[RunSignals], view: &ViewState) -> String {
    let mut body = String::new();
    if let Some(slo) = &view.slo {
        let points: Vec<&[app::domain::Point]> = runs.iter().map(|r| r.points.as_slice()).collect();
        let baseline = app::domain::model::comparison::baseline_index(runs, view.baseline.as_ref());
        let lines: Vec<String> = app::domain::analysis::slo::across(slo, &points, baseline)
            .into_iter()
            .filter_map(|rc| {
                Some(format!(
                    "<li>{}: {}</li>",
                    escape_html(&runs.get(rc.run)?.name),
                    escape_html(&rc.change?.sentence)
                ))
            })
            .collect();
        if !lines.is_empty() {
            body.push_str(&format!(
                "<section class=\"slo\" id=\"slo\"><h2>Capacity at {} against the baseline</h2><ul>{}</ul></section>\n",
                escape_html(&slo.spaced()),
                lines.concat()
            ));
        }
    }
    // What the compare page explains: the facts verdicts and why throughput differs.
    let e = explain(runs, app::domain::model::comparison::baseline_index(runs, view.baseline.as_ref()), signals);
    for (id, title, lines) in [
        ("verdicts", "Are these runs comparable?", &e.verdicts),
        ("explanations", "Why throughput differs", &e.reasons),
    ] {
        if lines.is_empty() {
            continue;
        }
        body.push_str(&format!("<section class=\"explanations\" id=\"{id}\"><h2>{title}</h2><ul>"));
        for l in lines {
            body.push_str(&format!("<li>{}</li>", escape_html(l)));
        }
        body.push_str("</ul></section>\n");
    }
    body
}

/// The charts' figures, and each drawable chart's ECharts options by its element id.
fn charts_html(charts: &[ChartSpec]) -> Result<(String, serde_json::Map<String, serde_json::Value>), ShareError> {
    let mut body = String::new();
    body.push_str("<section class=\"charts\">");
    let mut options = serde_json::Map::new();
    // As on the page (`ui::components::ChartsSection`): what has nothing to draw is said in
    // one line after the drawn charts.
    let mut not_drawn = Vec::new();
    for c in charts {
        if let Some(why) = &c.empty {
            not_drawn.push(format!(
                "<span class=\"chart-empty\" id=\"{}\" role=\"note\">{}: {}</span>",
                escape_html(&c.id),
                escape_html(&c.caption),
                escape_html(why)
            ));
            continue;
        }
        body.push_str(&format!(
            "<figure><figcaption>{}</figcaption><div class=\"chart\" id=\"{}\" role=\"img\" aria-label=\"{}\" style=\"width:100%;height:360px\"></div></figure>",
            escape_html(&c.caption),
            escape_html(&c.id),
            escape_html(&c.label)
        ));
        let value: serde_json::Value =
            serde_json::from_str(&c.option_json).map_err(|e| ShareError::Invalid(format!("chart {}: {e}", c.id)))?;
        options.insert(c.id.clone(), value);
    }
    body.push_str("</section>\n");
    if !not_drawn.is_empty() {
        body.push_str(&format!(
            "<p class=\"not-drawn\" id=\"not-drawn\"><strong>Not drawn: </strong>{}</p>\n",
            not_drawn.join(" · ")
        ));
    }
    Ok((body, options))
}

/// The offline report of a view. `site` holds the built site (CSS, ECharts, chart code).
pub fn html_report(
    site: &crate::site::Site,
    target: &ViewTarget,
    view: &ViewState,
    view_path: &str,
    runs: &[Run],
    stored: &[StoredSignals],
    costs: &[app::domain::analysis::cost::RunCost],
) -> Result<HtmlReport, ShareError> {
    let signals: Vec<RunSignals> = runs.iter().enumerate().map(|(i, r)| run_signals(r, stored.get(i))).collect();
    let (title, charts): (String, Vec<PageChart>) = match target {
        ViewTarget::Run(_) => (
            runs.first().map(|r| r.name.clone()).unwrap_or_default(),
            runs.first().zip(signals.first()).map(|(r, s)| run_charts(r, view, s)).unwrap_or_default(),
        ),
        ViewTarget::Compare => (
            format!(
                "Compare {} runs: {}",
                runs.len(),
                runs.iter().map(|r| r.name.as_str()).collect::<Vec<_>>().join(" vs ")
            ),
            compare_charts(runs, view),
        ),
    };
    let mut body = report_head(&title, view_path);
    body.push_str(&runs_html(runs, &signals, view));
    if matches!(target, ViewTarget::Compare) {
        body.push_str(&compare_html(runs, &signals, view));
    }
    let charts: Vec<ChartSpec> = charts.iter().map(PageChart::spec).collect();
    let (charts_html, options) = charts_html(&charts)?;
    body.push_str(&charts_html);
    for (i, r) in runs.iter().enumerate() {
        body.push_str(&format!(
            "<h2>Levels: {}</h2><div class=\"table-wrap\">{}</div>",
            escape_html(&r.name),
            levels_table(r)
        ));
        if let Some(c) = costs.get(i) {
            body.push_str(&cost_html(&r.name, c));
        }
    }
    body.push_str("<h2>Annotations</h2>");
    body.push_str(&annotations_list(runs));
    let data = serde_json::json!({ "view": view_path, "runs": runs });
    document(site, &title, &body, options, &data)
}

/// The offline report of a plan: its verdict, chart, table of candidates and autoscaler's
/// trigger with its manifests, and the plan's JSON (as `GET /api/v1/plan` answers).
pub fn plan_html_report(
    site: &crate::site::Site,
    data: &app::domain::view::plan::PlanOutcome,
) -> Result<HtmlReport, ShareError> {
    use app::domain::view::plan::PlanPageData;
    let view = PlanPageData::of(data);
    let Some(plan) = &view.plan else {
        return Err(ShareError::Invalid("demand: a plan's report needs its demand (demand=…)".into()));
    };
    let view_path = format!("/plan?{}", view.query);
    let title =
        data.plan.as_ref().map_or_else(|| "Plan".to_owned(), |p| format!("Plan: {} under {}", p.demand.label(), p.slo));
    let mut body = report_head(&title, &view_path);
    body.push_str(&format!(
        "<section class=\"summary-card\" id=\"summary\"><p id=\"plan-verdict\">{}</p><p class=\"hint\">{}</p></section>\n",
        escape_html(&plan.verdict),
        escape_html(&plan.rule)
    ));
    let (charts_html, options) = charts_html(&plan.charts)?;
    body.push_str(&charts_html);
    body.push_str("<h2>Candidates</h2><div class=\"table-wrap\"><table class=\"levels\" id=\"plan-table\"><thead><tr><th>Candidate</th><th>One replica within the SLO</th><th>Replicas at peak</th><th>GPUs at peak</th><th>GPU-hours a day</th><th>$ a day</th><th>$ a month</th><th>Request mix</th><th>Missing</th></tr></thead><tbody>\n");
    for r in &plan.rows {
        body.push_str(&format!(
            "<tr{}><td class=\"name\">{}{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"mix\">{}</td><td>{}</td></tr>\n",
            if r.chosen { " class=\"best\"" } else { "" },
            escape_html(&r.name),
            if r.chosen { " <span class=\"badge ok\">chosen</span>" } else { "" },
            escape_html(&r.capacity),
            escape_html(&r.replicas),
            escape_html(&r.gpus),
            escape_html(&r.gpu_hours),
            escape_html(&r.usd_day),
            escape_html(&r.usd_month),
            escape_html(&r.mix),
            escape_html(&r.missing),
        ));
    }
    body.push_str("</tbody></table></div>\n<h2>Where the autoscaler should add a replica</h2>\n");
    match &plan.autoscale {
        Ok(a) => {
            body.push_str(&format!("<p id=\"autoscale-sentence\">{}</p>", escape_html(&a.sentence)));
            body.push_str(&format!(
                "<div class=\"table-wrap\"><table class=\"levels\"><thead><tr><th>Signal</th><th>{}</th><th>{}</th><th>Separation</th></tr></thead><tbody>",
                escape_html(&a.levels.0),
                escape_html(&a.levels.1)
            ));
            for row in &a.signals {
                body.push_str(&format!(
                    "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
                    escape_html(&row[0]),
                    escape_html(&row[1]),
                    escape_html(&row[2]),
                    escape_html(&row[3])
                ));
            }
            body.push_str("</tbody></table></div>");
            for (what, id, yaml) in [
                ("KEDA ScaledObject", "keda-yaml", &a.keda_yaml),
                ("Kubernetes HorizontalPodAutoscaler (external metric)", "hpa-yaml", &a.hpa_yaml),
            ] {
                body.push_str(&format!(
                    "<h3>{what}</h3><pre class=\"manifest\" id=\"{id}\">{}</pre>",
                    escape_html(yaml)
                ));
            }
        }
        Err(why) => body.push_str(&format!("<p id=\"autoscale-none\">No threshold: {}.</p>", escape_html(why))),
    }
    body.push('\n');
    document(site, &title, &body, options, &plan_json(data))
}

/// The report's heading: its title, when and from which view it was generated.
fn report_head(title: &str, view_path: &str) -> String {
    format!(
        "<header class=\"report-head\"><h1>{}</h1><p class=\"annotation-meta\">Plateau report, generated {} from <code>{}</code>. Everything is in this file: it opens offline.</p></header>\n",
        escape_html(title),
        escape_html(&chrono::Utc::now().format("%Y-%m-%d %H:%M UTC").to_string()),
        escape_html(view_path),
    )
}

/// A report's whole document around `body`: the site's CSS, ECharts and chart code
/// inlined, the charts' options, the data as JSON, and the policy that lets only its two
/// scripts run.
fn document(
    site: &crate::site::Site,
    title: &str,
    body: &str,
    options: serde_json::Map<String, serde_json::Value>,
    data: &serde_json::Value,
) -> Result<HtmlReport, ShareError> {
    let echarts = site.asset_text(".echarts.js").ok_or_else(|| {
        tracing::error!(site = %site.describe(), "report asset missing (ECharts); run .ci/build");
        ShareError::Invalid("the report needs the built site (ECharts is missing); run .ci/build".into())
    })?;
    let css = site.asset_text(".css").unwrap_or_default();
    // How the page draws its charts (theme, units in tooltips, legends), so the report's
    // charts read the same; without it they are drawn plain.
    let charts_js = site.asset_text(".charts.js").unwrap_or_default().replace("</script", "<\\/script");
    let charts_json = script_json(&serde_json::Value::Object(options).to_string());
    let echarts = echarts.replace("</script", "<\\/script");
    let init = format!(
        "document.documentElement.classList.add('js');{charts_js}(function(){{var o={charts_json};Object.keys(o).forEach(function(id){{var el=document.getElementById(id);if(el&&window.echarts){{if(window.plateauChart)plateauChart(el,o[id]);else echarts.init(el).setOption(o[id]);}}}});window.addEventListener('resize',function(){{document.querySelectorAll('.chart').forEach(function(el){{var c=echarts.getInstanceByDom(el);if(c)c.resize();}});}});}})();"
    );
    let document_policy = report_policy(&[&echarts, &init]);
    let html = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta http-equiv=\"Content-Security-Policy\" content=\"{document_policy}\">\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
<meta name=\"referrer\" content=\"no-referrer\">\
<title>{title} · Plateau report</title><style>{css}</style><script>{echarts}</script></head>\
<body><main>{body}</main>\
<script type=\"application/json\" id=\"plateau-data\">{data}</script>\
<script>{init}</script>\
</body></html>\n",
        title = escape_html(title),
        css = css.replace("</style", "<\\/style"),
        data = script_json(&data.to_string()),
    );
    // Served over HTTP the header adds what a `<meta>` policy cannot say: no framing, and
    // a sandbox (an opaque origin: the file's scripts never act as this server's pages).
    let policy = format!("{document_policy}; frame-ancestors 'none'; sandbox allow-scripts allow-popups");
    Ok(HtmlReport { html, policy })
}

/// An offline report and the Content-Security-Policy to serve it with.
pub struct HtmlReport {
    pub html: String,
    /// For the `Content-Security-Policy` header; the document carries the same script
    /// rule in a `<meta>` so it holds when the file is opened from disk too.
    pub policy: String,
}

/// The report's own policy: nothing loads from anywhere, and the only scripts that run are
/// its two inline ones (ECharts and the chart set-up), named by their SHA-256. Markup that
/// slipped into the text could not run script even if it were not escaped.
fn report_policy(scripts: &[&str]) -> String {
    use sha2::{Digest, Sha256};
    let hashes: Vec<String> =
        scripts.iter().map(|s| format!("'sha256-{}'", BASE64.encode(Sha256::digest(s.as_bytes())))).collect();
    format!(
        "default-src 'none'; script-src {}; style-src 'unsafe-inline'; img-src data: blob:; base-uri 'none'; form-action 'none'",
        hashes.join(" ")
    )
}

/// A comparison as CSV: one row per run and level, with the focus metric and its change
/// against the baseline at the same level.
pub fn compare_csv(runs: &[Run], view: &ViewState, baseline: usize) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let focus = format!("{}_{}", view.metric.as_str(), view.stat.name());
    let _ = w.write_record([
        "run_id",
        "run_name",
        "baseline",
        "load_kind",
        "load",
        "requests_ok",
        "requests_failed",
        "output_tok_s",
        "latency_avg_ms",
        "latency_p50_ms",
        "latency_p99_ms",
        "ttft_p50_ms",
        &focus,
        "focus_change_pct",
    ]);
    let opt = |v: Option<f64>| v.map(|x| format!("{x}")).unwrap_or_default();
    let base = runs.get(baseline);
    for (i, r) in runs.iter().enumerate() {
        for p in &r.points {
            let value = p.get(view.metric, view.stat);
            let base_value = base
                .and_then(|b| {
                    b.points.iter().find(|q| {
                        app::domain::model::level::LevelKey::of(q).same_as(&app::domain::model::level::LevelKey::of(p))
                    })
                })
                .and_then(|q| q.get(view.metric, view.stat));
            let change = match (value, base_value) {
                (Some(v), Some(b)) if b != 0.0 && i != baseline => Some((v - b) / b * 100.0),
                _ => None,
            };
            let _ = w.write_record([
                r.id.to_string(),
                crate::export::csv_text(&r.name).into_owned(),
                (i == baseline).to_string(),
                p.load_kind.as_str().to_owned(),
                format!("{}", p.load_value),
                p.requests_ok.map(|n| n.to_string()).unwrap_or_default(),
                p.requests_failed.map(|n| n.to_string()).unwrap_or_default(),
                opt(p.output_tok_s()),
                opt(p.latency_ms(Stat::Mean)),
                opt(p.latency_ms(Stat::P50)),
                opt(p.latency_ms(Stat::P99)),
                opt(p.get(Metric::Ttft, Stat::P50)),
                opt(value),
                opt(change),
            ]);
        }
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}

/// What a comparison explains, in words, as the compare page says it: each run's facts
/// verdict against the baseline, and why throughput differs at each shared level (with
/// what the servers did differently, where `signals` hold both runs' server metrics).
struct Explained {
    verdicts: Vec<String>,
    reasons: Vec<String>,
}

fn explain(runs: &[Run], baseline: usize, signals: &[RunSignals]) -> Explained {
    let Some(mut cmp) = app::domain::analysis::compare::compare(runs, baseline) else {
        return Explained { verdicts: Vec::new(), reasons: Vec::new() };
    };
    if signals.len() == runs.len() {
        add_server_differences(&mut cmp, signals);
    }
    let name = |i: usize| runs.get(i).map(|r| r.name.clone()).unwrap_or_default();
    let verdicts = cmp
        .runs
        .iter()
        .map(|rv| format!("{} vs baseline {}: {}", name(rv.run), name(baseline), rv.facts.explanation))
        .collect();
    let several = runs.len() > 2;
    let reasons = cmp
        .levels
        .iter()
        .flat_map(|l| {
            l.deltas.iter().filter_map(move |d| {
                let text = d.explanation()?;
                Some(if several { format!("{}: {text}", name(d.run)) } else { text })
            })
        })
        .collect();
    Explained { verdicts, reasons }
}

/// A comparison as Markdown: each run's table, the facts verdicts, why throughput
/// differs, then the annotations. `stored` (what is stored beside each run, indexed like
/// `runs`; shorter or empty adds no server-side difference) adds what the servers did
/// differently where both runs have server metrics.
pub fn compare_markdown(runs: &[Run], baseline: usize, stored: &[StoredSignals], slo: Option<&Slo>) -> String {
    let mut out = String::new();
    for r in runs {
        out.push_str(&crate::export::markdown(r, slo));
        out.push('\n');
    }
    // Capacity at the SLO: each run's change from the baseline.
    if let Some(slo) = slo {
        let points: Vec<&[app::domain::Point]> = runs.iter().map(|r| r.points.as_slice()).collect();
        let lines: Vec<String> = app::domain::analysis::slo::across(slo, &points, baseline)
            .into_iter()
            .filter_map(|rc| {
                let name = crate::export::markdown_text(&runs.get(rc.run)?.name);
                let change = rc.change?.sentence;
                Some(format!("- {name}: {}", crate::export::markdown_text(&change)))
            })
            .collect();
        if !lines.is_empty() {
            out.push_str(&format!(
                "**Capacity at {} against the baseline**\n\n{}\n\n",
                crate::export::markdown_text(&slo.spaced()),
                lines.join("\n")
            ));
        }
    }
    let signals: Vec<RunSignals> = runs.iter().enumerate().map(|(i, r)| run_signals(r, stored.get(i))).collect();
    let e = explain(runs, baseline, &signals);
    for (title, lines) in [("Are these runs comparable?", &e.verdicts), ("Why throughput differs", &e.reasons)] {
        if !lines.is_empty() {
            out.push_str(&format!("**{title}**\n\n"));
            for s in lines {
                out.push_str(&format!("- {}\n", crate::export::markdown_text(s)));
            }
            out.push('\n');
        }
    }
    let notes: Vec<String> = runs
        .iter()
        .flat_map(|r| {
            r.annotations.iter().map(move |a| {
                let md = crate::export::markdown_text;
                format!("- {} · {} ({}): {}", md(&r.name), md(&a.anchor.label()), md(a.kind.label()), md(&a.body))
            })
        })
        .collect();
    if !notes.is_empty() {
        out.push_str("**Annotations**\n\n");
        out.push_str(&notes.join("\n"));
        out.push('\n');
    }
    out
}

/// A plan as JSON: the request, the plan, the autoscaler's trigger (or `{"none": why}`)
/// and the page showing it.
pub fn plan_json(data: &app::domain::view::plan::PlanOutcome) -> serde_json::Value {
    serde_json::json!({
        "query": data.query,
        "plan": data.plan,
        "autoscale": data.autoscale.as_ref().map(|a| match a {
            Ok(a) => serde_json::to_value(a).unwrap_or_default(),
            Err(why) => serde_json::json!({ "none": why }),
        }),
        "page_url": format!("/plan?{}", data.query.to_query()),
    })
}

/// A plan as Markdown: its verdict, the candidates' table and the autoscaler's trigger
/// with its manifests. Every run text escaped.
pub fn plan_markdown(data: &app::domain::view::plan::PlanOutcome) -> String {
    use app::domain::analysis::cost::usd;
    use app::domain::model::format::{grouped, plain};
    let md = crate::export::markdown_text;
    let Some(p) = &data.plan else { return String::new() };
    let dash = || "—".to_owned();
    let mut out = format!(
        "# Plan: {} under {}\n\n{}\n\nHeadroom {} %; capacity {}.\n\n",
        md(&p.demand.label()),
        md(&p.slo),
        md(&p.verdict),
        plain(p.settings.headroom_pct),
        if p.settings.use_estimate { "estimated between levels" } else { "at the highest measured passing level" }
    );
    out.push_str(
        "| Candidate | One replica | Replicas at peak | GPUs at peak | GPU-hours a day | $ a day | $ a month | Request mix |\n",
    );
    out.push_str("|---|---|---:|---:|---:|---:|---:|---|\n");
    for r in &p.rows {
        let one = r.capacity.as_ref().map_or_else(
            || r.missing.first().cloned().unwrap_or_else(dash),
            |c| format!("{} req/s at {} ({})", plain(c.req_s), c.level, c.basis.label()),
        );
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} |\n",
            md(&r.run_name),
            md(&one),
            r.replicas_peak.map_or_else(dash, |n| n.to_string()),
            r.gpus_peak.map_or_else(dash, |n| n.to_string()),
            r.gpu_hours_day.map_or_else(dash, |h| grouped(&format!("{h:.0}"))),
            r.usd_day.map_or_else(dash, usd),
            r.usd_month.map_or_else(dash, usd),
            md(&r.mix.label())
        ));
    }
    // The manifests are fenced with more backticks than any run of them inside.
    let fence = |yaml: &str| {
        let longest = yaml.split(|c| c != '`').map(str::len).max().unwrap_or(0);
        "`".repeat(longest.max(2) + 1)
    };
    match &data.autoscale {
        Some(Ok(a)) => {
            out.push_str(&format!("\n## Autoscaler\n\n{}\n", md(&a.sentence)));
            for yaml in [&a.keda_yaml, &a.hpa_yaml] {
                let f = fence(yaml);
                out.push_str(&format!("\n{f}yaml\n{yaml}{f}\n"));
            }
        }
        Some(Err(why)) => out.push_str(&format!("\n## Autoscaler\n\nNo threshold: {}.\n", md(why))),
        None => {}
    }
    out
}

/// A plan as CSV: one row per candidate, the replicas hour by hour in the last column
/// (`;`-separated).
pub fn plan_csv(data: &app::domain::view::plan::PlanOutcome) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let _ = w.write_record([
        "run_id",
        "run_name",
        "capacity_level",
        "capacity_estimated",
        "req_s_per_replica",
        "req_s_basis",
        "replicas_peak",
        "gpus_per_replica",
        "gpus_peak",
        "gpu_hours_day",
        "usd_per_replica_hour",
        "usd_day",
        "usd_month",
        "mix",
        "missing",
        "replicas_by_hour",
    ]);
    let opt = |v: Option<f64>| v.map(|x| format!("{x}")).unwrap_or_default();
    for r in data.plan.iter().flat_map(|p| &p.rows) {
        let c = r.capacity.as_ref();
        let hours: Vec<String> = r.replicas_by_hour.iter().map(u64::to_string).collect();
        let _ = w.write_record([
            r.run_id.clone(),
            crate::export::csv_text(&r.run_name).into_owned(),
            c.map(|c| c.level.clone()).unwrap_or_default(),
            c.map(|c| c.estimated.to_string()).unwrap_or_default(),
            opt(c.map(|c| c.req_s)),
            c.map(|c| c.basis.key().to_owned()).unwrap_or_default(),
            r.replicas_peak.map(|n| n.to_string()).unwrap_or_default(),
            r.gpus_per_replica.map(|n| n.to_string()).unwrap_or_default(),
            r.gpus_peak.map(|n| n.to_string()).unwrap_or_default(),
            opt(r.gpu_hours_day),
            opt(r.usd_per_replica_hour),
            opt(r.usd_day),
            opt(r.usd_month),
            crate::export::csv_text(&r.mix.label()).into_owned(),
            crate::export::csv_text(&r.missing.join("; ")).into_owned(),
            hours.join(";"),
        ]);
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_json_cannot_close_the_script() {
        let s = script_json(r#"{"a":"</script><script>alert(1)</script>"}"#);
        assert!(!s.contains("</script"), "{s}");
        let back: serde_json::Value = serde_json::from_str(&s).unwrap();
        assert_eq!(back["a"], "</script><script>alert(1)</script>");
    }
}
