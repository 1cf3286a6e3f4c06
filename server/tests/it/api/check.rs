//! The regression gate over HTTP and the CLI: capacity at an SLO, the curve verdict with
//! the knee's move.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test and bench code stops at the first failure"
)]

use super::support::*;

/// `plateau check … --slo` and `?slo=` on the check endpoint: capacity at the SLO is a
/// gated metric. The base crosses TPOT p99 50 ms at C≈45, the slow run at C≈18 (−59 %):
/// the check fails on capacity alone (every per-level metric is unchanged); a twin passes;
/// a bad SLO is a 400 naming the part (API) and exit 2 naming it (CLI, local and remote);
/// the history page draws capacity per run, a run without a passing level as a gap with
/// its reason.
// Two workers: the CLI runs as a blocking child process while this test's server answers it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_gates_capacity_at_an_slo_through_the_api_and_the_cli() {
    const SLO: &str = "tpot%3Ap99%3C%3D50ms";
    for app in TestApp::each().await {
        let base = tpot_sweep(&app, "base", [20.0, 30.0, 40.0, 60.0]).await;
        let twin = tpot_sweep(&app, "twin", [20.0, 30.0, 40.0, 60.0]).await;
        let slow = tpot_sweep(&app, "slow", [30.0, 45.0, 70.0, 90.0]).await;
        let get = |path: String| {
            let client = app.client.clone();
            let url = app.url(&path);
            async move {
                let resp = client.get(url).send().await.unwrap();
                let status = resp.status();
                (status, resp.json::<Value>().await.unwrap())
            }
        };
        let (status, body) = get(format!("/api/v1/runs/{slow}/check?baseline={base}&slo={SLO}")).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["passed"], false, "[{}] {body}", app.backend);
        assert_eq!(body["regressions"], 1, "capacity alone: {body}");
        let cap = &body["report"]["capacity"];
        assert_eq!(
            cap["summary"], "capacity at tpot:p99<=50ms fell from C≈45 to C≈18 (−59 %); TPOT p99 breaks first in both",
            "{body}"
        );
        assert_eq!((cap["basis"].as_str(), cap["regression"].as_bool()), (Some("estimate"), Some(true)));
        let md = body["markdown"].as_str().unwrap();
        assert!(md.contains("❌ **1 regression**"), "{md}");
        assert!(md.contains("### Capacity at tpot:p99\\<=50ms"), "{md}");
        assert!(md.contains("fell from C≈45 to C≈18 (−59 %); TPOT p99 breaks first in both."), "{md}");
        // Without the SLO the same runs pass: nothing per level changed.
        let (_, body) = get(format!("/api/v1/runs/{slow}/check?baseline={base}")).await;
        assert_eq!((body["passed"].as_bool(), body["report"].get("capacity")), (Some(true), None), "{body}");
        let (_, body) = get(format!("/api/v1/runs/{twin}/check?baseline={base}&slo={SLO}")).await;
        assert_eq!(body["passed"], true, "{body}");
        assert!(body["report"]["capacity"]["summary"].as_str().unwrap().contains("held at C≈45"), "{body}");
        // Against the history (base and twin): the fall is far beyond the window's spread.
        let (_, body) = get(format!("/api/v1/runs/{slow}/check?history=true&slo={SLO}")).await;
        assert_eq!(
            (body["passed"].as_bool(), body["report"]["capacity"]["test"].as_str()),
            (Some(false), Some("z_score"))
        );
        // A bad SLO: 400, the field and the part at fault named.
        for (bad, part) in [("tpot%3Ap99%3C%3D50", "\"tpot:p99<=50\""), ("speed%3Ap99%3C%3D1s", "\"speed:p99<=1s\"")] {
            let (status, body) = get(format!("/api/v1/runs/{slow}/check?baseline={base}&slo={bad}")).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {body}");
            assert_eq!(body["field"], "slo", "{body}");
            assert!(body["error"].as_str().unwrap().contains(part), "{bad}: {body}");
        }

        // The CLI: on this database, and asking this server.
        let cli = |args: &[String]| {
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_plateau"))
                .arg("--db")
                .arg(app.store.db_arg())
                .arg("check")
                .args(args)
                .output()
                .unwrap();
            (out.status.code(), String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
        };
        for remote in [&[][..], &["--server", app.base.as_str()][..]] {
            let with = |args: &[&str]| -> Vec<String> { args.iter().chain(remote).map(|a| (*a).to_owned()).collect() };
            let (code, md, err) = cli(&with(&[&slow, "--baseline", &base, "--slo", "tpot:p99<=50ms"]));
            assert_eq!(code, Some(1), "[{}] {remote:?}: {md}{err}", app.backend);
            assert!(md.contains("fell from C≈45 to C≈18 (−59 %)"), "{md}");
            let (code, md, err) = cli(&with(&[&twin, "--baseline", &base, "--slo", "tpot:p99<=50ms"]));
            assert_eq!(code, Some(0), "{remote:?}: {md}{err}");
            let (code, md, err) = cli(&with(&["latest", "--history", "--slo", "tpot:p99<=50ms"]));
            assert_eq!(code, Some(1), "{remote:?}: {md}{err}");
            let (code, _, err) = cli(&with(&[&slow, "--baseline", &base, "--slo", "tpot:p99<=50"]));
            assert_eq!(code, Some(2), "{remote:?}: {err}");
            assert!(err.contains("`slo`") && err.contains("\"tpot:p99<=50\""), "{remote:?}: {err}");
        }

        // The history page: capacity per run, a run with no passing level a gap with its reason.
        let none = tpot_sweep(&app, "none", [60.0, 70.0, 80.0, 90.0]).await;
        let page = |q: String| {
            let client = app.client.clone();
            let url = app.url(&format!("/runs/{none}/history{q}"));
            async move {
                let resp = client.get(url).send().await.unwrap();
                (resp.status(), resp.text().await.unwrap())
            }
        };
        for q in [format!("?slo={SLO}"), format!("?metric=e2e.p50&level=32&slo={SLO}")] {
            let (status, html) = page(q.clone()).await;
            assert_eq!(status, StatusCode::OK, "{q}: {html}");
            assert!(html.contains("id=\"chart-history-capacity\""), "{q}");
            assert!(html.contains("C≈45 (estimate)") && html.contains("C≈18 (estimate)"), "{q}");
            assert!(html.contains("no level meets the SLO: TPOT p99 breaks first at C=8"), "{q}");
            assert!(html.contains("Capacity at tpot:p99&lt;=50ms (concurrent requests)"), "{q}");
        }
        // Without an SLO: no capacity chart; the other parameters as before.
        let (status, html) = page("?level=knee".into()).await;
        assert_eq!(status, StatusCode::OK);
        assert!(!html.contains("chart-history-capacity") && html.contains("id=\"history-table\""));
        let (status, html) = page("?slo=tpot%3Ap99%3C%3D50".into()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{html}");
        assert!(html.contains("history query: slo:") && html.contains("tpot:p99&lt;=50"), "{html}");
    }
}

/// The check judges the curve: a run whose knee moved from C=64 to C=32 (three trials a
/// level) is faster at C=8 and slower at C=64 and up; the report's curve verdict says the
/// knee moved beyond noise and the plateau fell, in one sentence, the Markdown says it
/// first, and the move is a regression — against the baseline and against the history.
#[tokio::test]
async fn check_carries_the_curve_verdict_with_the_knee_move() {
    const KNEE_64: [(f64, f64); 5] = [(8.0, 400.0), (16.0, 760.0), (32.0, 1400.0), (64.0, 2400.0), (128.0, 2450.0)];
    const KNEE_32: [(f64, f64); 5] = [(8.0, 480.0), (16.0, 900.0), (32.0, 1500.0), (64.0, 1520.0), (128.0, 1530.0)];
    for app in TestApp::each().await {
        let base = trial_sweep(&app, "base", &KNEE_64).await;
        let twin = trial_sweep(&app, "twin", &KNEE_64).await;
        let bent = trial_sweep(&app, "bent", &KNEE_32).await;
        let get = |path: String| {
            let client = app.client.clone();
            let url = app.url(&path);
            async move {
                let resp = client.get(url).send().await.unwrap();
                let status = resp.status();
                (status, resp.json::<Value>().await.unwrap())
            }
        };
        let (status, body) = get(format!("/api/v1/runs/{bent}/check?baseline={base}")).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let curve = &body["report"]["curve"];
        assert_eq!(curve["knee"]["reference"], serde_json::json!({ "kind": "level", "load": 64.0 }), "{body}");
        assert_eq!(curve["knee"]["value"], serde_json::json!({ "kind": "level", "load": 32.0 }), "{body}");
        assert_eq!(
            (curve["knee"]["shift"].as_str(), curve["knee"]["verdict"].as_str()),
            (Some("lower"), Some("beyond_noise")),
            "[{}] {body}",
            app.backend
        );
        assert_eq!(curve["knee"]["value_range"]["curves"], 3, "{body}");
        assert_eq!(
            (curve["plateau"]["verdict"].as_str(), curve["plateau"]["test"].as_str()),
            (Some("beyond_noise"), Some("t_test"))
        );
        assert_eq!(
            curve["headline"], "The knee moved from C≈64 to C≈32 (beyond noise); the plateau fell 38 % (beyond noise).",
            "{body}"
        );
        assert_eq!(body["passed"], false, "{body}");
        let md = body["markdown"].as_str().unwrap();
        let curve_at = md.find("### Curve\n\n❌ The knee moved from C≈64 to C≈32 (beyond noise)").expect(md);
        assert!(md.find("Thresholds:").is_some_and(|t| t > curve_at), "the curve first: {md}");
        // The twin: the knee held, within noise; the curve is not a regression.
        let (_, body) = get(format!("/api/v1/runs/{twin}/check?baseline={base}")).await;
        assert_eq!(body["report"]["curve"]["knee"]["verdict"], "within_noise", "{body}");
        assert_eq!(body["passed"], true, "{body}");
        // Against the history (base and twin before it): the knee left the earlier runs' range.
        let (_, body) = get(format!("/api/v1/runs/{bent}/check?history=true")).await;
        let curve = &body["report"]["curve"];
        assert_eq!(
            (curve["knee"]["shift"].as_str(), curve["knee"]["verdict"].as_str()),
            (Some("lower"), Some("beyond_noise")),
            "{body}"
        );
        assert_eq!(curve["reference"], "the 2 earlier runs", "{body}");
        assert_eq!(body["passed"], false, "{body}");
    }
}
