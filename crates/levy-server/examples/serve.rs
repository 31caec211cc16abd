//! `levy serve` as a standalone program, for embedding examples and load tests:
//!
//! ```text
//! cargo run --release -p levy-server --example serve -- --table rates.levy --keys keys.toml
//! cargo run --release -p levy-server --example serve -- keys-new --account shop --keys keys.toml
//! ```

use clap::Parser;
use levy_server::cli::{Command, KeysArgs, KeysCommand, KeysNewArgs, ServeArgs};

#[derive(Parser)]
#[command(about = "Serve the levy tax service interface over HTTP")]
struct Args {
    #[command(subcommand)]
    keys: Option<Keys>,
    #[command(flatten)]
    serve: ServeArgs,
}

#[derive(clap::Subcommand)]
enum Keys {
    /// Create an account's test and live keys.
    KeysNew(KeysNewArgs),
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let command = match args.keys {
        Some(Keys::KeysNew(k)) => Command::Keys(KeysArgs {
            command: KeysCommand::New(k),
        }),
        None => Command::Serve(args.serve),
    };
    match levy_server::cli::run(command) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
