//! Nightly-style sweeps, the most common thing a team compares: live runs of one
//! configuration under one name, every request `--ignore-eos` (exactly 32 tokens), three
//! nights on a server that batches 64 requests and a fourth on one that batches 8. The
//! pages must tell the runs apart, never claim the output length changed, draw only what
//! was measured, and say the fourth night regressed first — on the run page and in the
//! history's default view.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test and bench code stops at the first failure"
)]

use super::support::*;

/// The text of the element whose opening tag holds `id="<id>"`, tags stripped.
fn text_of(html: &str, id: &str) -> String {
    let at = html.find(&format!("id=\"{id}\"")).unwrap_or_else(|| panic!("no #{id}"));
    let open = at + html[at..].find('>').unwrap() + 1;
    let tag = html[..at].rfind('<').map(|i| html[i + 1..at].split_whitespace().next().unwrap_or("p")).unwrap();
    let close = open + html[open..].find(&format!("</{tag}>")).unwrap();
    let mut out = String::new();
    let mut in_tag = false;
    for c in html[open..close].chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&amp;", "&").replace("&quot;", "\"").replace("&#39;", "'")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nightly_runs_of_one_name_are_told_apart_and_a_regressed_night_says_so_first() {
    let _together = shared_lock().await;
    // On the model clock: the three good nights measure the same, exactly, however busy the
    // machine (on the wall clock a night slowed by another suite once crossed the limit too).
    let sim = |max_batch| SimConfig {
        max_batch,
        base_decode_ms: 2.0,
        per_seq_decode_ms: 0.1,
        prefill_ms_per_token: 0.0,
        clock: server::sim::SimClock::Model,
        ..SimConfig::default()
    };
    let (wide, narrow) = (spawn_sim(sim(64)).await, spawn_sim(sim(8)).await);
    for store in app::db::testing::backends().await {
        eprintln!("[{}]", store.name);
        let pool = store.db.clone();
        let night = |url: &str| {
            let mut s = spec(url.to_owned(), EndpointKind::Chat, vec![8, 16, 48], LoadMode::Steady { requests: 48 });
            s.name = "sim nightly".into();
            s.target.max_tokens = 32;
            s.clock = server::loadgen::spec::Clock::Sim;
            s
        };
        let mut ids = Vec::new();
        for url in [&wide, &wide, &wide, &narrow] {
            let (run, _) = sweep(&pool, night(url)).await;
            assert_eq!(run.status, RunStatus::Complete);
            ids.push(run.id.to_string());
        }
        let (last_good, slow) = (&ids[2], &ids[3]);

        // The compare page of the third and fourth nights, as the page receives it.
        let view = app::page_data::view(&format!("runs={last_good},{slow}")).unwrap();
        let page = app::page_data::compare_page(&pool, &view).await.unwrap();
        crate::honest_pages::check_compare_page(&page);
        let names: Vec<String> = page.runs.iter().map(|r| r.name.clone()).collect();
        for (n, id) in names.iter().zip([last_good, slow]) {
            assert!(n.starts_with("sim nightly (") && n.ends_with(&format!(", {})", &id[..6])), "{n}");
        }
        let text = crate::honest_pages::sentences(&page);
        assert!(!text.contains("“sim nightly”"), "a sentence names a run by a name both share: {text}");
        for changed in ["tokens per request fell", "tokens per request rose", "tokens per request changed"] {
            assert!(!text.contains(changed), "--ignore-eos: every request made 32 tokens, yet {changed:?}: {text}");
        }
        assert!(text.contains("tokens per request unchanged at 32.0 (measured)"), "{text}");
        // Every legend holds both runs, each under its own name.
        let throughput: serde_json::Value = serde_json::from_str(&page.charts[0].option_json).unwrap();
        let legend: Vec<&str> =
            throughput["series"].as_array().unwrap().iter().filter_map(|s| s["name"].as_str()).collect();
        for n in &names {
            assert!(legend.contains(&n.as_str()), "{n} not in the legend {legend:?}");
        }
        assert_eq!(
            crate::honest_pages::axis(&throughput, "xAxis")["axisLabel"]["customValues"],
            serde_json::json!([8.0, 16.0, 48.0])
        );

        // The pages as a browser without JavaScript gets them.
        let dir = tempfile::tempdir().unwrap();
        let base = spawn_plateau(pool.clone(), dir.path()).await;
        let get = |path: String| {
            let url = format!("{base}{path}");
            async move {
                let r = reqwest::get(&url).await.unwrap();
                assert_eq!(r.status(), reqwest::StatusCode::OK, "{url}");
                r.text().await.unwrap()
            }
        };
        let compare = get(format!("/compare?runs={last_good},{slow}")).await;
        assert!(!compare.contains("“sim nightly”"), "the compare page names a run by a shared name");
        for n in &names {
            assert!(compare.contains(n.as_str()), "{n} missing from the compare page");
        }

        // The fourth night's page: its first line after the name says it regressed, by how
        // much, against which runs.
        let run_page = get(format!("/runs/{slow}")).await;
        let (name_at, check_at, summary_at) = (
            run_page.find("id=\"run-name\"").unwrap(),
            run_page.find("id=\"history-check\"").expect("the gate's verdict"),
            run_page.find("class=\"summary\"").unwrap(),
        );
        assert!(name_at < check_at && check_at < summary_at, "the verdict is the first line under the name");
        let verdict = text_of(&run_page, "history-verdict-line");
        assert!(verdict.starts_with("Regressed: "), "{verdict}");
        assert!(verdict.contains(" at C=48 ") || verdict.contains(" at C=16 "), "{verdict}");
        assert!(verdict.contains("against the history of"), "{verdict}");
        let against = text_of(&run_page, "history-against");
        assert_eq!(against.matches("sim nightly (").count(), 3, "{against}");

        // The history's default view: a series every night has (output tok/s at C=48), so
        // the loss is its first line.
        let history = get(format!("/runs/{slow}/history")).await;
        let line = text_of(&history, "history-verdict");
        assert!(line.starts_with("This run regressed: output tok/s at C=48 is "), "{line}");
        assert!(line.contains("1 of 4 run(s) of this configuration cross their limit"), "{line}");
    }
}
