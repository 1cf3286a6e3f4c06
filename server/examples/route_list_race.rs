//! Minimal reproduction of the hang that once forced the tests to run one at a time.
//!
//! `leptos_axum::generate_route_list` runs the whole app once with `leptos_server`'s
//! process-global "suppress resource loads" flag raised (leptos issue #4773). A resource
//! whose future is first polled anywhere in the process during that window waits on a
//! future that never wakes, so a page rendering meanwhile never finishes. One server builds
//! its router once, before it serves, and never meets this; the integration tests built one
//! router per test, many at a time in one process, and a page test hung now and then.
//! `routes::page_routes` now generates the list once per process.
//!
//! This program serves the real app and requests `/` (the runs list, which loads through a
//! resource) while another thread generates the route list in a loop, as parallel tests used
//! to, until three requests got no answer in 5 s (or 200 did), and prints the count:
//! `cargo run -p server --example route_list_race` printed "3 of 4 page renders never
//! answered". With `-- --quiet-neighbour` (no generating thread) all 200 answer.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a reproduction stops at the first failure")]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

const REQUESTS: usize = 200;

#[tokio::main]
async fn main() {
    let neighbour = !std::env::args().any(|a| a == "--quiet-neighbour");
    let dir = tempfile::tempdir().unwrap();
    let pool = app::db::connect(&dir.path().join("race.db")).await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let state = server::routes::AppState::new(pool, server::startup::leptos_options(dir.path(), addr), 1 << 20);
    tokio::spawn(async move { axum::serve(listener, server::routes::router(state)).await.unwrap() });

    // The neighbour: what each parallel test did when it built its own router.
    let stop = Arc::new(AtomicBool::new(false));
    let generating = neighbour.then(|| {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            let mut rounds = 0usize;
            while !stop.load(Ordering::Relaxed) {
                rt.block_on(async { drop(leptos_axum::generate_route_list(app::App)) });
                rounds += 1;
            }
            rounds
        })
    });

    let client = reqwest::Client::new();
    let mut hung = 0;
    let mut sent = 0;
    // Until the third page that never answers: one is proof, three make it plain.
    while sent < REQUESTS && hung < 3 {
        sent += 1;
        let page = async { client.get(format!("http://{addr}/")).send().await?.text().await };
        match tokio::time::timeout(Duration::from_secs(5), page).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => println!("request {sent} failed: {e}"),
            Err(_) => {
                hung += 1;
                println!("request {sent}: no answer in 5 s");
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    let rounds = generating.map(|t| t.join().unwrap());
    match rounds {
        Some(r) => {
            println!("{hung} of {sent} page renders never answered while the route list was generated {r} times")
        }
        None => println!("{hung} of {sent} page renders never answered (no route list generated meanwhile)"),
    }
}
