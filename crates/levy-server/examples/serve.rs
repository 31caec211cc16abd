//! levy-server embedded in a program of its own: one service over HTTP on loopback until
//! ctrl-c.
//!
//! ```text
//! levy keys new --account shop --keys keys.toml
//! cargo run --release -p levy-server --example serve -- rates.levy keys.toml [ledger.sqlite]
//! ```
//!
//! The `levy serve` command (crates/levy-cli) is the full program: flags for every
//! option, SIGTERM, table reload on SIGHUP and the keys file watched.

use std::process::ExitCode;
use std::sync::Arc;

use levy_server::{serve, ServeOptions};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (table, keys, ledger) = match args.as_slice() {
        [table, keys] => (table, keys, "./levy-ledger.sqlite"),
        [table, keys, ledger] => (table, keys, ledger.as_str()),
        _ => {
            eprintln!("usage: serve TABLE KEYS [LEDGER]");
            return ExitCode::FAILURE;
        }
    };
    // The program installs its subscriber: levy-server only emits events.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new("info"))
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
    let service = match levy_api::Service::open(levy_api::ServiceConfig {
        table: levy_api::TableSource::Path(table.into()),
        ledger: ledger.into(),
        keys: levy_api::KeySource::File(keys.into()),
    }) {
        Ok(service) => Arc::new(service),
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    // 127.0.0.1:8787 and the default limits and timeouts.
    let options = ServeOptions::default();
    // The runtime whose idle workers end the ledger's gathering of calculations.
    let served = levy_server::runtime_builder().build().and_then(|runtime| {
        runtime.block_on(async {
            let running = serve(service, options, async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await?;
            println!("listening on http://{}", running.local_addr());
            running.wait().await
        })
    });
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
