//! The `plateau` binary: `serve` the web app, `import` result files. See `cli` for the
//! commands and `lib.rs` for the map of the code.

use clap::Parser;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let cli = server::cli::Cli::parse();
    server::telemetry::init(cli.log_format);
    match server::cli::run(cli).await {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
