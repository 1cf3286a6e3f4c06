//! Archives: a sweep's zip imported as an experiment that opens as a comparison; hostile
//! archives refused with the bound named.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test and bench code stops at the first failure"
)]

use super::support::*;

#[tokio::test]
async fn a_sweep_archive_imports_as_an_experiment_with_its_own_page() {
    for app in TestApp::builder().max_upload_bytes(4 << 20).each().await {
        let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
        // The preview (dry run) shows the plan: runs, skipped files, the experiment.
        let resp =
            client.post(app.url("/api/v1/runs?dry_run=true")).multipart(zip_form("sweep.zip", sweep_zip())).send();
        let plan: Value = resp.await.unwrap().json().await.unwrap();
        assert_eq!(plan["experiment"], "results");
        assert_eq!(plan["runs"].as_array().unwrap().len(), 2);
        let skipped: Vec<&str> =
            plan["skipped"].as_array().unwrap().iter().map(|s| s["file"].as_str().unwrap()).collect();
        assert_eq!(skipped.len(), 3, "{skipped:?}");
        assert!(skipped.iter().all(|f| f.ends_with("summary.json") || f.ends_with("walkthrough.md")));
        assert_eq!(app.count("runs").await, 0, "a dry run stores nothing");

        let resp = client.post(app.url("/api/v1/runs")).multipart(zip_form("sweep.zip", sweep_zip())).send();
        let resp = resp.await.unwrap();
        assert_eq!(resp.status(), StatusCode::CREATED);
        let location = resp.headers()["location"].to_str().unwrap().to_owned();
        let body: Value = resp.json().await.unwrap();
        let url = body["experiment"]["url"].as_str().unwrap().to_owned();
        assert_eq!(location, url);
        assert_eq!(body["experiment"]["name"], "results");
        assert_eq!(app.count("runs").await, 2);
        assert_eq!(app.count("experiment_runs").await, 2);
        assert_eq!(app.count("annotations").await, 2, "each run's warm-up trial is annotated");

        // The experiment has its page, under its name, the setting that tells the runs
        // apart as a column; it links to the comparison of its runs.
        let resp = client.get(app.url(&url)).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
        let page = resp.text().await.unwrap().replace("<!>", "");
        assert!(page.contains("<h1 id=\"experiment-name\">results</h1>"), "the experiment's name heads its page");
        assert!(page.contains("<th class=\"setting\">max_num_seqs</th>"), "the setting is a column");
        let compare = page.split("id=\"experiment-compare\"").next().and_then(|p| p.rsplit("href=\"").next()).unwrap();
        let compare = compare.split('"').next().unwrap().replace("&amp;", "&");
        assert!(compare.starts_with("/compare?runs="), "{compare}");
        let page = client.get(app.url(&compare)).send().await.unwrap().text().await.unwrap();
        assert!(page.contains("max_num_seqs"), "the setting that tells the runs apart is a row");
        let id = url.rsplit('/').next().unwrap();
        let json: Value =
            client.get(app.url(&format!("/api/v1/experiments/{id}"))).send().await.unwrap().json().await.unwrap();
        assert_eq!(json["runs"].as_array().unwrap().len(), 2);
        let run: Value = client
            .get(app.url(&format!("/api/v1/runs/{}", json["runs"][1]["id"].as_str().unwrap())))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let trials = run["points"][0]["trials"].as_array().unwrap();
        assert_eq!(trials.len(), 3);
        let run_page = client.get(app.url(&format!("/runs/{}", json["runs"][1]["id"].as_str().unwrap())));
        let run_page = run_page.send().await.unwrap().text().await.unwrap();
        assert!(run_page.contains("+1 warm-up"), "the cold start is marked on its level");
        assert_eq!(trials[0]["warmup"], true);
        assert_eq!(
            trials[1]["measures"].as_array().unwrap().iter().find(|m| m["metric"] == "output_throughput").unwrap()
                ["value"],
            1302.7803763044742
        );
        let missing = client.get(app.url("/experiments/nosuchexperiment")).send().await.unwrap();
        assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    }
}

/// An MLPerf results tree: each system, benchmark and scenario a run (its folder naming the
/// submitter, system, model and the Interactive category the file itself does not), the
/// detail log beside a summary read into it, the system's description giving its GPUs, and the
/// accuracy run and compliance audit left out; the whole tree one experiment.
#[tokio::test]
async fn an_mlperf_results_tree_is_an_experiment_of_its_runs() {
    use std::io::Write;
    let fixture = |name: &str| std::fs::read(crate::common::fixtures().join("mlperf").join(name)).unwrap();
    let azure = fixture("mlperf-v6.1_azure_gb200-nvl72x72_deepseek-r1_Server_mlperf_log_summary.txt");
    let cisco = fixture("mlperf-v6.1_cisco_c845a-8xrtxpro6000_llama3.1-8b_Interactive_mlperf_log_summary.txt");
    let a30 = fixture("mlperf-loadgen-5.1_local_a30_llama3.1-8b_Server_INVALID_mlperf_log_summary.txt");
    let a30_detail = fixture("mlperf-loadgen-5.1_local_a30_llama3.1-8b_Server_INVALID_mlperf_log_detail.txt");
    let accuracy = String::from_utf8(cisco.clone()).unwrap().replace("PerformanceOnly", "AccuracyOnly").into_bytes();
    let system = br#"{"system_name": "Cisco UCS C845A M8", "accelerator_model_name": "NVIDIA RTX PRO 6000 Blackwell Server Edition", "accelerators_per_node": "8", "number_of_nodes": 1, "framework": "TensorRT-LLM 1.1"}"#;
    let cisco_dir = "v6.1/closed/Cisco/results/C845A_M8_RTXPro6000_96GBx8_TRT/llama3.1-8b/Interactive";
    let files: Vec<(String, Vec<u8>)> = vec![
        ("v6.1/closed/Azure/results/Azure-GB200-NVL72_186GBx72/deepseek-r1/Server/performance/run_1/mlperf_log_summary.txt".into(), azure),
        (format!("{cisco_dir}/performance/run_1/mlperf_log_summary.txt"), cisco.clone()),
        (format!("{cisco_dir}/accuracy/mlperf_log_summary.txt"), accuracy),
        ("v6.1/closed/Cisco/compliance/C845A_M8_RTXPro6000_96GBx8_TRT/llama3.1-8b/Interactive/TEST06/performance/run_1/mlperf_log_summary.txt".into(), cisco),
        ("v6.1/closed/Cisco/systems/C845A_M8_RTXPro6000_96GBx8_TRT.json".into(), system.to_vec()),
        ("v6.1/open/Local/results/A30/llama3.1-8b/Server/performance/run_1/mlperf_log_summary.txt".into(), a30),
        ("v6.1/open/Local/results/A30/llama3.1-8b/Server/performance/run_1/mlperf_log_detail.txt".into(), a30_detail),
    ];
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, bytes) in &files {
        w.start_file(name.as_str(), zip::write::SimpleFileOptions::default()).unwrap();
        w.write_all(bytes).unwrap();
    }
    let zip = w.finish().unwrap().into_inner();
    for app in TestApp::builder().max_upload_bytes(4 << 20).each().await {
        let client = reqwest::Client::new();
        let resp =
            client.post(app.url("/api/v1/runs")).multipart(zip_form("mlperf.zip", zip.clone())).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::CREATED);
        let body: Value = resp.json().await.unwrap();
        assert_eq!(body["experiment"]["name"], "v6.1");
        let runs = body["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 3, "{body}");
        let mut by_model = std::collections::BTreeMap::new();
        for r in runs {
            let id = r["id"].as_str().unwrap();
            let run: Value =
                client.get(app.url(&format!("/api/v1/runs/{id}"))).send().await.unwrap().json().await.unwrap();
            let tags: Vec<String> =
                run["facts"]["tags"].as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_owned()).collect();
            by_model.insert(tags.iter().find(|t| t.starts_with("system=")).cloned().unwrap(), (run, tags));
        }
        let (cisco, tags) = &by_model["system=c845a_m8_rtxpro6000_96gbx8_trt"];
        assert!(tags.contains(&"interactive".to_owned()) && tags.contains(&"submitter=cisco".to_owned()), "{tags:?}");
        assert_eq!(cisco["facts"]["model"], "llama3.1-8b");
        assert_eq!(cisco["facts"]["gpu_type"], "NVIDIA RTX PRO 6000 Blackwell Server Edition");
        assert_eq!(cisco["facts"]["gpu_count"], 8);
        assert_eq!(cisco["points"][0]["load_kind"], "request_rate");
        assert_eq!(cisco["points"][0]["load_value"], 358.0);
        let (a30, tags) = &by_model["system=a30"];
        assert!(tags.contains(&"invalid".to_owned()) && tags.contains(&"open".to_owned()), "{tags:?}");
        assert_eq!(a30["points"][0]["requests_ok"], 100, "from the detail log beside it");
        let (azure, _) = &by_model["system=azure-gb200-nvl72_186gbx72"];
        assert_eq!(azure["facts"]["model"], "deepseek-r1");
        assert_eq!(app.count("runs").await, 3, "the accuracy run and the audit are not runs");
    }
}

#[tokio::test]
async fn hostile_archives_are_refused_with_the_bound_named_and_nothing_stored() {
    use std::io::Write;
    let zip_of = |entries: &[(&str, &[u8])]| {
        let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let opts = zip::write::SimpleFileOptions::default();
        for (n, c) in entries {
            w.start_file(*n, opts).unwrap();
            w.write_all(c).unwrap();
        }
        w.finish().unwrap().into_inner()
    };
    let zeros = vec![b'0'; 6 << 20];
    let bomb = zip_of(&[("results/zeros.json", &zeros)]);
    let evil = zip_of(&[("results/../../../etc/cron.d/plateau", b"* * * * * root true")]);
    let names: Vec<String> = (0..10_000).map(|i| format!("many/{i}.json")).collect();
    let many = zip_of(&names.iter().map(|n| (n.as_str(), b"{}" as &[u8])).collect::<Vec<_>>());
    for app in TestApp::builder().max_upload_bytes(8 << 20).each().await {
        let client = reqwest::Client::new();
        let post =
            |name: &str, bytes: Vec<u8>| client.post(app.url("/api/v1/runs")).multipart(zip_form(name, bytes)).send();
        let resp = post("bomb.zip", bomb.clone()).await.unwrap();
        assert_eq!(resp.status(), StatusCode::PAYLOAD_TOO_LARGE);
        let msg = resp.text().await.unwrap();
        assert!(msg.contains("over the limit of 200 times (a zip bomb?)"), "{msg}");
        let resp = post("evil.zip", evil.clone()).await.unwrap();
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
        let msg = resp.text().await.unwrap();
        assert!(msg.contains("the path goes up (`..`)"), "{msg}");
        let resp = post("many.zip", many.clone()).await.unwrap();
        assert_eq!(resp.status(), StatusCode::PAYLOAD_TOO_LARGE);
        let msg = resp.text().await.unwrap();
        assert!(msg.contains("10000 files or more, over the limit of 1000 files per import"), "{msg}");
        // A folder upload whose path leaves the folder.
        let form = Form::new().part("file", Part::bytes(b"{}".to_vec()).file_name("d/../../x.json"));
        let resp = client.post(app.url("/api/v1/runs")).multipart(form).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
        for table in ["runs", "experiments", "run_sources"] {
            assert_eq!(app.count(table).await, 0, "{table}: nothing stored");
        }
        let health = client.get(app.url("/healthz")).send().await.unwrap();
        assert_eq!(health.status(), StatusCode::OK);
    }
}
