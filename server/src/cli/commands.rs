//! Runs a parsed command line: each command's work, from the database it opens to the
//! exit code it returns.

use super::args::*;
use crate::config;
use crate::ingest::{self, form::Validate, InputFile};
use crate::startup::{self, ServeConfig};
use anyhow::Context;
use std::path::PathBuf;
use std::process::ExitCode;

/// Runs a parsed command line.
pub async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let db = app::db::DbTarget::parse(&cli.db.unwrap_or_else(config::default_db_path));
    match cli.command {
        Command::Serve(a) => {
            if a.auth == AuthSwitch::Off && a.read == crate::auth::ReadAccess::Login {
                tracing::warn!("--read login has no effect while auth is off: everyone may read and write");
            }
            startup::serve(ServeConfig {
                addr: a.addr,
                db,
                site: crate::site::Site::choose(a.site_root),
                demo: a.demo,
                max_upload_bytes: a.max_upload_mib.saturating_mul(1024 * 1024),
                sweep_allow: crate::sweeps::AllowList { hosts: a.sweep_allow },
                auth: match a.auth {
                    AuthSwitch::On => crate::auth::AuthMode::On { read: a.read },
                    AuthSwitch::Off => crate::auth::AuthMode::Off,
                },
                allowed_hosts: a.allowed_hosts,
                public_url: a.public_url,
                max_connections: a.max_connections,
                metrics: a.metrics,
                alert_webhooks: a.alert_webhooks,
            })
            .await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Import(a) => import(db, a).await,
        Command::Sweep(a) => super::sweep::sweep(db, *a).await,
        Command::Check(a) => check(db, a).await,
        Command::Plan(a) => plan(db, a).await,
        Command::Db(DbCommand::Copy { from, to }) => copy(&from, &to).await,
        Command::User(c) => user(db, c).await,
        Command::Token(c) => token(db, c).await,
        Command::Sim(a) => {
            let addr = a.addr;
            crate::sim::serve(addr, a.into()).await?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `plateau plan`: the plan of the `/plan` page, printed. 0 planned, 2 refused (the field
/// at fault said).
async fn plan(db: app::db::DbTarget, a: PlanArgs) -> anyhow::Result<ExitCode> {
    use app::domain::view::plan::PlanQuery;
    let demand = match demand_of(&a) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("plateau plan: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    let mut pairs: Vec<(&str, String)> = vec![("demand", demand), ("slo", a.slo.clone())];
    pairs.push(("runs", a.runs.join(",")));
    if let Some(e) = &a.experiment {
        pairs.push(("experiment", e.clone()));
    }
    if let Some(h) = a.headroom {
        pairs.push(("headroom", h.to_string()));
    }
    if a.estimate {
        pairs.push(("estimate", "1".to_owned()));
    }
    let outcome: anyhow::Result<String> = async {
        let query = PlanQuery::parse(pairs.iter().map(|(k, v)| (*k, v.as_str())))?;
        let pool = open(&db).await?;
        let data = app::page_data::plan_page(&pool, &query).await?;
        Ok(match a.format.as_str() {
            "md" => crate::report::plan_markdown(&data),
            "csv" => crate::report::plan_csv(&data),
            "json" => format!("{}\n", serde_json::to_string_pretty(&crate::report::plan_json(&data))?),
            other => anyhow::bail!("format: md, json or csv, not {other:?}"),
        })
    }
    .await;
    match outcome {
        Ok(text) => {
            print!("{text}");
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("plateau plan: {e}");
            Ok(ExitCode::from(2))
        }
    }
}

/// The demand `plateau plan` was given, in the demand syntax: as typed, or read from a CSV
/// of rates or from a request trace (the readers the server's upload uses,
/// [`crate::share::DemandSource`]).
fn demand_of(a: &PlanArgs) -> anyhow::Result<String> {
    use crate::share::DemandSource;
    let read = |p: &std::path::Path| std::fs::read(p).with_context(|| format!("reading {}", p.display()));
    if let Some(path) = &a.demand_file {
        let text = String::from_utf8(read(path)?).context("the demand file is not UTF-8 text")?;
        let source = DemandSource::Csv { text: &text, prompt_tokens: None, output_tokens: None };
        return Ok(source.demand().map_err(|e| anyhow::anyhow!("demand: {e}"))?.spec());
    }
    if let Some(path) = &a.demand_trace {
        let bytes = read(path)?;
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let source = DemandSource::Trace { file_name: &name, bytes: &bytes };
        return Ok(source.demand().map_err(|e| anyhow::anyhow!("demand: {e}"))?.spec());
    }
    Ok(a.demand.clone().unwrap_or_default())
}

/// `plateau check`: 0 passed, 1 a regression, 2 could not check.
async fn check(db: app::db::DbTarget, a: CheckArgs) -> anyhow::Result<ExitCode> {
    let query = crate::check::CheckQuery {
        baseline: a.baseline.clone(),
        history: a.history,
        max_worse_pct: Some(a.max_worse_pct),
        z: Some(a.z),
        window: Some(a.window),
        slo: a.slo.clone(),
    };
    let outcome: anyhow::Result<(bool, String)> = match &a.server {
        None => {
            async {
                let req = query.into_request(&a.run)?;
                let pool = open(&db).await?;
                let report = crate::check::check(&pool, &req).await?;
                Ok((report.passed(), report.markdown()))
            }
            .await
        }
        Some(server) => check_remote(server, a.server_token.as_deref(), &a.run, &query).await,
    };
    match outcome {
        Ok((passed, markdown)) => {
            print!("{markdown}");
            if let Some(path) = &a.summary_file {
                use std::io::Write;
                let mut f = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .with_context(|| format!("opening {}", path.display()))?;
                f.write_all(markdown.as_bytes())?;
            }
            Ok(if passed { ExitCode::SUCCESS } else { ExitCode::from(1) })
        }
        Err(e) => {
            eprintln!("check failed: {e:#}");
            Ok(ExitCode::from(2))
        }
    }
}

/// The most of a Plateau server's answer to `plateau check --server` read: a verdict and
/// its Markdown report, a few KB to a few hundred; a longer answer is refused unread.
pub const MAX_CHECK_ANSWER_BYTES: usize = 16 * 1024 * 1024;

/// The same check asked of a Plateau server (`GET /api/v1/runs/{run}/check`).
async fn check_remote(
    server: &str,
    token: Option<&str>,
    run: &str,
    q: &crate::check::CheckQuery,
) -> anyhow::Result<(bool, String)> {
    let base = server.trim_end_matches('/');
    let mut url = reqwest::Url::parse(&format!("{base}/api/v1/runs/"))?;
    url.path_segments_mut()
        .map_err(|()| anyhow::anyhow!("{base} cannot be a base URL"))?
        .pop_if_empty()
        .push(run)
        .push("check");
    {
        let mut pairs = url.query_pairs_mut();
        match (&q.baseline, q.history) {
            (Some(b), _) => pairs.append_pair("baseline", b),
            (None, _) => pairs.append_pair("history", "true"),
        };
        for (k, v) in [("max_worse_pct", q.max_worse_pct), ("z", q.z)] {
            if let Some(v) = v {
                pairs.append_pair(k, &v.to_string());
            }
        }
        if let Some(w) = q.window {
            pairs.append_pair("window", &w.to_string());
        }
        if let Some(slo) = &q.slo {
            pairs.append_pair("slo", slo);
        }
    }
    let mut req = reqwest::Client::new().get(url);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let resp = req.send().await?;
    let status = resp.status();
    let answer = crate::loadgen::read::read_bounded(resp, MAX_CHECK_ANSWER_BYTES).await?;
    if answer.truncated {
        anyhow::bail!("{server} answered more than {MAX_CHECK_ANSWER_BYTES} bytes: not a check result");
    }
    let body: serde_json::Value = serde_json::from_slice(&answer.bytes).unwrap_or_default();
    if !status.is_success() {
        let msg = body.get("error").and_then(|e| e.as_str()).unwrap_or("no error message");
        anyhow::bail!("{server} answered {status}: {msg}");
    }
    let passed = body.get("passed").and_then(serde_json::Value::as_bool).unwrap_or(false);
    let markdown = body.get("markdown").and_then(|m| m.as_str()).unwrap_or_default().to_owned();
    Ok((passed, markdown))
}

async fn import(db: app::db::DbTarget, args: ImportArgs) -> anyhow::Result<ExitCode> {
    let pool = open(&db).await?;
    let result = match read_inputs(&args.files, ingest::DEFAULT_MAX_BYTES)?
        .and_then(|files| args.fields().into_request(files))
    {
        Ok(req) => ingest::import(&pool, req, ingest::DEFAULT_MAX_BYTES).await,
        Err(e) => Err(e),
    };
    let failed = match result {
        Ok(outcome) => {
            for s in &outcome.skipped {
                eprintln!("  skipped {}: {}", ingest::printable(&s.file), s.reason);
            }
            if let Some(e) = &outcome.experiment {
                println!(
                    "experiment {} ({} runs) → /experiments/{}",
                    ingest::printable(&e.name),
                    outcome.runs.len(),
                    e.id
                );
            }
            for d in outcome.runs {
                println!(
                    "imported {} ({}, {} file{}, {} levels{}) → /runs/{}",
                    ingest::printable(&d.name),
                    d.format.label(),
                    d.files,
                    if d.files == 1 { "" } else { "s" },
                    d.levels,
                    if d.truncated_levels > 0 { format!(", {} cut off", d.truncated_levels) } else { String::new() },
                    d.id
                );
                for w in d.warnings {
                    eprintln!("  warning: {}", ingest::printable(&w));
                }
            }
            false
        }
        Err(e) => {
            eprintln!("not imported: {}", ingest::printable(&e.to_string()));
            true
        }
    };
    Ok(if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

/// Reads the files to import (`-` is standard input), each at most `limit` bytes: a file
/// whose size says it is over is refused before it is read, and every read stops one byte
/// past the limit (`/dev/zero` and pipes say they are 0 bytes long).
fn read_inputs(paths: &[PathBuf], limit: usize) -> anyhow::Result<Result<Vec<InputFile>, ingest::ImportError>> {
    use std::io::Read;
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            match ingest::bundle::read_folder(path, limit, &ingest::bundle::BOUNDS)? {
                Ok(found) => files.extend(found),
                Err(e) => return Ok(Err(e)),
            }
            continue;
        }
        let (file_name, reader): (Option<String>, Box<dyn Read>) = if path.as_os_str() == "-" {
            (None, Box::new(std::io::stdin()))
        } else {
            let shown = ingest::printable(&path.display().to_string()).into_owned();
            let file = std::fs::File::open(path).with_context(|| format!("reading {shown}"))?;
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            let size = file.metadata().map(|m| m.len()).unwrap_or(0);
            if size > limit as u64 {
                let file = ingest::printable(name.as_deref().unwrap_or(&shown)).into_owned();
                let size = usize::try_from(size).unwrap_or(usize::MAX);
                return Ok(Err(ingest::ImportError::TooLarge { file, size, limit }));
            }
            (name, Box::new(file))
        };
        let mut content = Vec::new();
        let shown =
            file_name.as_deref().map_or_else(|| "standard input".to_owned(), |n| ingest::printable(n).into_owned());
        reader.take(limit as u64 + 1).read_to_end(&mut content).with_context(|| format!("reading {shown}"))?;
        if content.len() > limit {
            return Ok(Err(ingest::ImportError::OverLimit { file: shown, limit }));
        }
        files.push(InputFile { file_name, content });
    }
    Ok(Ok(files))
}

async fn open(db: &app::db::DbTarget) -> anyhow::Result<app::db::Db> {
    app::db::open(db).await.with_context(|| format!("opening database {db}"))
}

/// The password of `plateau user add|passwd`: the first line of stdin, or asked twice
/// on the terminal without echo.
fn read_password(args: &PasswordArgs) -> anyhow::Result<String> {
    if args.password_stdin {
        let mut line = String::new();
        std::io::stdin().read_line(&mut line).context("reading the password from stdin")?;
        return Ok(line.trim_end_matches(['\r', '\n']).to_owned());
    }
    let first = rpassword::prompt_password(format!("Password for {}: ", args.name))
        .context("reading the password (use --password-stdin when there is no terminal)")?;
    let again = rpassword::prompt_password("Again: ").context("reading the password")?;
    anyhow::ensure!(first == again, "the two passwords differ");
    Ok(first)
}

async fn user(db: app::db::DbTarget, c: UserCommand) -> anyhow::Result<ExitCode> {
    use crate::auth::accounts;
    match c {
        UserCommand::Add(a) => {
            let password = read_password(&a)?;
            accounts::add_user(&open(&db).await?, &a.name, &password).await?;
            println!("user {} added", a.name);
        }
        UserCommand::Passwd(a) => {
            let password = read_password(&a)?;
            accounts::set_password(&open(&db).await?, &a.name, &password).await?;
            println!("password of {} changed; their sessions are ended", a.name);
        }
        UserCommand::List => {
            println!("{:<24} CREATED", "NAME");
            for u in app::db::list_users(&open(&db).await?).await? {
                println!("{:<24} {}", u.name, u.created_at);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

async fn copy(from: &std::path::Path, to: &std::path::Path) -> anyhow::Result<ExitCode> {
    let (from, to) = (app::db::DbTarget::parse(from), app::db::DbTarget::parse(to));
    if let (app::db::DbTarget::Sqlite(path), _) = (&from, &to) {
        anyhow::ensure!(path.exists(), "{} does not exist", path.display());
    }
    anyhow::ensure!(from != to, "--from and --to name the same database");
    let source = open(&from).await?;
    let target = open(&to).await?;
    let copied = app::db::copy_database(&source, &target).await.with_context(|| format!("copying {from} to {to}"))?;
    println!("{:<22} {:>10}  SHA-256 (same on both sides)", "TABLE", "ROWS");
    for t in &copied {
        println!("{:<22} {:>10}  {}", t.table, t.rows, t.sha256);
    }
    println!("copied {from} → {to}: {} tables, counts and checksums verified", copied.len());
    Ok(ExitCode::SUCCESS)
}

async fn token(db: app::db::DbTarget, c: TokenCommand) -> anyhow::Result<ExitCode> {
    use crate::auth::accounts;
    let pool = open(&db).await?;
    match c {
        TokenCommand::Create { user, label } => {
            let t = accounts::create_token(&pool, &user, &label).await?;
            eprintln!("token {} created for {user}; it is shown only now:", t.public_id);
            println!("{}", t.token);
        }
        TokenCommand::List => {
            let dash = |v: Option<String>| v.unwrap_or_else(|| "—".into());
            println!("{:<10} {:<16} {:<16} {:<25} {:<25} REVOKED", "ID", "LABEL", "USER", "CREATED", "LAST USED");
            for t in app::db::list_api_tokens(&pool).await? {
                println!(
                    "{:<10} {:<16} {:<16} {:<25} {:<25} {}",
                    t.public_id,
                    t.label,
                    t.user,
                    t.created_at,
                    dash(t.last_used_at),
                    dash(t.revoked_at)
                );
            }
        }
        TokenCommand::Revoke { id } => {
            accounts::revoke_token(&pool, &id).await?;
            println!("token {id} revoked");
        }
    }
    Ok(ExitCode::SUCCESS)
}
