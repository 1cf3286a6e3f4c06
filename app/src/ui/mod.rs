//! The user interface: the HTML shell, the router, pages and reusable components.
//! Pages get their data through [`crate::api`] and never name `sqlx`.

pub mod components;
pub mod pages;

use leptos::prelude::*;
use leptos_meta::{provide_meta_context, MetaTags, Title};
use leptos_router::components::{Route, Router, Routes, A};
use leptos_router::{path, SsrMode};

/// The HTML document around the app. ECharts (and public/charts.js, which draws with it)
/// loads with a blocking script in `<head>` so `window.echarts` exists before hydration: charming's wasm bindings call it as a global.
/// Assets are named after the build (`options.output_name`, `plateau-<hash>`: see
/// `.ci/assets.mjs`), so browsers may keep them for a year.
pub fn shell(options: LeptosOptions) -> impl IntoView {
    let name = options.output_name.to_string();
    view! {
        <!DOCTYPE html>
        <html lang="en">
            <head>
                <meta charset="utf-8" />
                <meta name="viewport" content="width=device-width, initial-scale=1" />
                <link rel="icon" href="/favicon.ico" />
                <link rel="stylesheet" href=format!("/pkg/{name}.css") />
                <script src=format!("/pkg/{name}.echarts.js")></script>
                // Before the body: marks <html class="js"> (no "needs JavaScript" flash) and
                // defines how charts are drawn (theme, units in tooltips, legend names).
                <script src=format!("/pkg/{name}.charts.js")></script>
                <script src=format!("/pkg/{name}.ui.js") defer></script>
                <HydrationScripts options />
                <MetaTags />
            </head>
            <body>
                <App />
            </body>
        </html>
    }
}

/// The document title of a page whose own title is `t`.
///
/// On the server leptos_meta writes the formatted title into `<title>` as it is, without
/// escaping, so the server build escapes it here: every `<Title>` passes through this one
/// formatter (the root one), so a run name or report title with `</title><script>` stays
/// text. In the browser the title is set through `document.title` (plain text), so it is
/// left alone there.
pub fn page_title(t: String) -> String {
    let full = if t.is_empty() { "Plateau".to_owned() } else { format!("{t} · Plateau") };
    if cfg!(feature = "ssr") {
        crate::domain::model::format::escape_html(&full)
    } else {
        full
    }
}

/// The app: header, routes, footer.
#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();
    view! {
        <Title formatter=page_title />
        <Router>
            <header class="topbar">
                <A href="/" attr:class="brand">"Plateau"</A>
                <nav>
                    <A href="/">"Runs"</A>
                    <A href="/experiments">"Experiments"</A>
                    <A href="/upload">"Import"</A>
                    <A href="/sweeps/new">"New sweep"</A>
                    <A href="/plan">"Plan"</A>
                    <A href="/settings/prices">"Prices"</A>
                    <A href="/settings/hardware">"Hardware"</A>
                </nav>
            </header>
            <main>
                // Async: the data is in the HTML itself, so every page reads without JavaScript.
                <Routes fallback=|| view! { <pages::NotFound /> }>
                    <Route path=path!("/") view=pages::RunsPage ssr=SsrMode::Async />
                    <Route path=path!("/runs/:id") view=pages::RunPage ssr=SsrMode::Async />
                    <Route path=path!("/runs/:id/history") view=pages::HistoryPageView ssr=SsrMode::Async />
                    <Route path=path!("/upload") view=pages::UploadPage ssr=SsrMode::Async />
                    <Route path=path!("/compare") view=pages::ComparePage ssr=SsrMode::Async />
                    <Route path=path!("/experiments") view=pages::ExperimentsPage ssr=SsrMode::Async />
                    <Route path=path!("/experiments/:id") view=pages::ExperimentPage ssr=SsrMode::Async />
                    <Route path=path!("/r/:slug") view=pages::ReportPage ssr=SsrMode::Async />
                    <Route path=path!("/s/:id") view=pages::SnapshotPage ssr=SsrMode::Async />
                    <Route path=path!("/sweeps/new") view=pages::NewSweepPage ssr=SsrMode::Async />
                    <Route path=path!("/settings/prices") view=pages::PricesPageView ssr=SsrMode::Async />
                    <Route path=path!("/settings/hardware") view=pages::HardwarePageView ssr=SsrMode::Async />
                    <Route path=path!("/plan") view=pages::PlanPage ssr=SsrMode::Async />
                    <Route path=path!("/imports/:token") view=pages::ImportPreviewPage ssr=SsrMode::Async />
                </Routes>
            </main>
        </Router>
    }
}
