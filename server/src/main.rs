//! The `plateau` binary: `serve` the web app, `import` result files. See `cli` for the
//! commands and `lib.rs` for the map of the code.

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let cli = server::config::parse_args(std::env::args_os()).unwrap_or_else(|e| e.exit());
    server::observability::init(cli.log_format);
    match server::cli::run(cli).await {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
