//! `plateau db copy` round trip: the demo plus a few thousand
//! generated runs, copied SQLite → PostgreSQL → SQLite with the command's service function
//! (`app::db::copy_database`), export byte for byte what the original exports: every run's
//! JSON export (`server::export`) and the demo comparison's CSV and Markdown
//! (`server::report`). Needs `PLATEAU_TEST_PG` (`.ci/pg start`); in CI (`CI` set) a missing
//! one fails the test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test and bench code stops at the first failure"
)]

use app::db::testing::{self, TestDb};
use app::db::Db;
use app::domain::model::annotations::{Anchor, AnnotationInput, AnnotationKind, Effect};
use app::domain::model::metrics::{Metric, Stat};
use app::domain::view::state::ViewState;
use app::domain::{NewRun, RunId, RunStatus};
use server::share::{self, ViewTarget};
use std::time::Instant;

/// How many runs the test generates besides the demo's two.
const GENERATED: usize = 2_000;

/// Run `i` of the generated ones: the sample run with its own name, facts and figures
/// (floats that need all 17 digits, tiny and huge ones, text with quotes and non-ASCII).
fn generated(i: usize) -> NewRun {
    let mut run = testing::sample();
    let x = i as f64;
    run.name = format!("generated {i:04} · «Kimi» \"q\",=1+1 {}", ["", "✓", "naïve", "🙂"][i % 4]);
    run.status = [RunStatus::Complete, RunStatus::Partial, RunStatus::Interrupted][i % 3];
    run.facts.max_tokens = (!i.is_multiple_of(5)).then_some(64 + i as i64);
    run.facts.gpu_count = Some(1 + (i % 8) as i64);
    run.facts.notes = format!("line one {i}\nline two ✓");
    for (k, level) in run.levels.iter_mut().enumerate() {
        level.point.load_value = (k as f64 + 1.0) * (1.0 + (i % 7) as f64);
        level.point.set(Metric::OutputThroughput, Stat::Mean, x / 3.0 + 0.1 + 0.2);
        level.point.set(Metric::Ttft, Stat::P(990), 1e-300 * (x + 1.0));
        level.point.set(Metric::E2e, Stat::Max, 1.797e308 / (x + 1.0));
    }
    if i.is_multiple_of(2) {
        run.levels[0].requests.clear();
    }
    run
}

/// Every run's JSON export, by id, in id order.
async fn exports(db: &Db, ids: &[RunId]) -> Vec<(RunId, String)> {
    let mut all = Vec::with_capacity(ids.len());
    for id in ids {
        all.push((id.clone(), server::export::json(db, id).await.unwrap()));
    }
    all
}

/// The demo comparison (chat against the completions baseline) as CSV and Markdown.
async fn comparison(db: &Db, chat: &RunId, completions: &RunId) -> (String, String) {
    let (runs, base) = (format!("{chat},{completions}"), completions.to_string());
    let view = ViewState::parse([
        ("runs", runs.as_str()),
        ("baseline", base.as_str()),
        ("metric", "output_throughput"),
        ("stat", "mean"),
    ])
    .unwrap();
    let runs = share::runs_of_view(db, &ViewTarget::Compare, &view).await.unwrap();
    let b = app::domain::model::comparison::baseline_index(&runs, view.baseline.as_ref());
    assert_eq!(runs.len(), 2);
    (server::report::compare_csv(&runs, &view, b), server::report::compare_markdown(&runs, b, &[], None))
}

#[tokio::test]
async fn the_demo_and_two_thousand_runs_go_to_postgres_and_back_with_identical_exports() {
    let Some(url) = testing::test_pg_url() else {
        return; // not in CI (test_pg_url fails there): nothing to copy to
    };
    let started = Instant::now();
    let original: TestDb = testing::fresh_sqlite().await;
    let db = &original.db;
    server::demo::load(db).await.unwrap();
    let demo_runs = app::db::list_runs(db).await.unwrap().len();
    assert!(demo_runs > 3, "the demo's generated runs, experiment and price travel too");
    let generated: Vec<NewRun> = (0..GENERATED).map(generated).collect();
    app::db::insert_runs(db, &generated).await.unwrap();
    let list = app::db::list_runs(db).await.unwrap();
    assert_eq!(list.len(), GENERATED + demo_runs);
    let id_of = |name: &str| list.iter().find(|r| r.name == name).unwrap().id.clone();
    let (chat, completions) = (id_of(server::demo::CHAT_RUN), id_of(server::demo::COMPLETIONS_RUN));
    // An annotation with its history, so the exports carry annotations too.
    let note = AnnotationInput {
        anchor: Anchor::Run,
        kind: AnnotationKind::Note,
        effect: Effect::None,
        body: "first «note»".into(),
        superseded_by: None,
        proposal_key: None,
        new_baseline: false,
    };
    let a = app::db::insert_annotation(db, &chat, &note, "ada").await.unwrap();
    app::db::update_annotation(db, a, &AnnotationInput { body: "second".into(), ..note }, "bob").await.unwrap();
    let mut ids: Vec<RunId> = list.iter().map(|r| r.id.clone()).collect();
    ids.sort_by(|a, b| a.as_str().cmp(b.as_str()));
    eprintln!("filled in {:?}", started.elapsed());

    let postgres = testing::fresh_postgres(&url).await;
    let there = app::db::copy_database(db, &postgres.db).await.unwrap();
    let back = testing::fresh_sqlite().await;
    let again = app::db::copy_database(&postgres.db, &back.db).await.unwrap();
    assert_eq!(there, again, "the same rows and checksums both ways");
    assert_eq!(there.iter().find(|t| t.table == "runs").unwrap().rows, (GENERATED + demo_runs) as u64);
    eprintln!("copied there and back in {:?}", started.elapsed());

    let before = exports(db, &ids).await;
    let after = exports(&back.db, &ids).await;
    for ((id, a), (_, b)) in before.iter().zip(&after) {
        assert!(a == b, "run {id}: its export changed on the way\n{a}\n---\n{b}");
    }
    assert_eq!(before.len(), after.len());
    // The PostgreSQL copy exports the same too (the demo and a sample of the rest).
    let sample: Vec<RunId> = ids.iter().step_by(40).cloned().chain([chat.clone(), completions.clone()]).collect();
    let on_postgres = exports(&postgres.db, &sample).await;
    for (id, text) in &on_postgres {
        let original = &before.iter().find(|(b, _)| b == id).unwrap().1;
        assert!(original == text, "run {id}: its export differs on PostgreSQL");
    }

    let (csv, md) = comparison(db, &chat, &completions).await;
    assert!(csv.contains(server::demo::CHAT_RUN) && md.contains("surviving figures"), "{csv}\n{md}");
    assert_eq!(comparison(&back.db, &chat, &completions).await, (csv.clone(), md.clone()), "after the round trip");
    assert_eq!(comparison(&postgres.db, &chat, &completions).await, (csv, md), "on PostgreSQL");
    eprintln!("exports compared in {:?}", started.elapsed());
}
