//! `levy bench`: levy's lookups on a table, each beside a baseline measured in the same run
//! (see `levy_build::bench`).

use std::path::PathBuf;

use levy_build::bench::{self, BenchOptions, Subject};
use levy_core::AnyTable;

/// Arguments of `levy bench`.
#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// A table built with `levy build`; the embedded default when absent.
    #[arg(long)]
    pub table: Option<PathBuf>,
    /// A MaxMind database (`.mmdb`, GeoIP2 or DB-IP layout) to compare IP lookups with;
    /// without it IP lookups are compared with SQLite.
    #[arg(long)]
    pub mmdb: Option<PathBuf>,
    /// Print one JSON object per measure (JSON Lines) instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Distinct keys drawn from the table per measure (at least 1).
    #[arg(long, default_value_t = 100_000, value_parser = at_least_one)]
    pub keys: usize,
    /// Timed rounds per measure (at least 1).
    #[arg(long, default_value_t = 200, value_parser = at_least_one)]
    pub rounds: usize,
    /// Operations per round (at least 1).
    #[arg(long, default_value_t = 1_000, value_parser = at_least_one)]
    pub batch: usize,
    /// Seed of the key order (the same seed draws the same keys).
    #[arg(long, default_value_t = 0x1e5_0b3e)]
    pub seed: u64,
    /// Day the sales are dated, YYYY-MM-DD; today when absent.
    #[arg(long)]
    pub date: Option<String>,
}

/// A count of at least 1: a bench of no keys, rounds or operations measures nothing, and is
/// refused rather than quietly run as one.
fn at_least_one(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

/// Runs `levy bench`; returns what to print.
pub fn run(args: &BenchArgs) -> Result<String, String> {
    let owned = crate::calc::open_table(args.table.as_deref())?;
    let table: &AnyTable = owned.as_ref().unwrap_or_else(|| levy_data::default_table());
    if let Some(p) = &args.mmdb {
        if !p.is_file() {
            return Err(format!("{}: no such file", p.display()));
        }
    }
    let date = crate::calc::date_or_today(args.date.as_deref())?;
    let mut opts = BenchOptions::new(date);
    opts.keys = args.keys;
    opts.batches = args.rounds;
    opts.batch = args.batch;
    opts.seed = args.seed;
    opts.progress = true;
    let subject = Subject {
        table,
        path: args.table.as_deref(),
        mmdb: args.mmdb.as_deref(),
    };
    let measures = bench::run(&subject, &opts)?;
    Ok(if args.json {
        let mut s = String::new();
        for m in &measures {
            s.push_str(&serde_json::to_string(m).map_err(|e| e.to_string())?);
            s.push('\n');
        }
        s
    } else {
        bench::render(&measures)
    })
}
