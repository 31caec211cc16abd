//! Measures the ZIP5 build and SST boundary parsing speed.
//!
//! `cargo run --release -p levy-build --example measure -- [DATA_DIR]`, where DATA_DIR holds
//! `zip5-rates-2025-12/` and `sst/MNB2026Q2FEB18-sample.csv` (default `../shared/data`).

use std::path::PathBuf;
use std::time::Instant;

use levy_build::{build, BuildOptions, Input, InputKind};

fn main() {
    let data = PathBuf::from(
        std::env::args()
            .nth(1)
            .unwrap_or_else(|| "../shared/data".into()),
    );

    // The full ZIP5 build: 52 files, 41,001 rows, to table bytes.
    let opts = BuildOptions {
        inputs: vec![Input::new(InputKind::Zip5, data.join("zip5-rates-2025-12"))],
        build_time: Some(0),
        ..Default::default()
    };
    let mut best = f64::MAX;
    for _ in 0..3 {
        let t = Instant::now();
        let report = build(&opts).expect("ZIP5 build");
        best = best.min(t.elapsed().as_secs_f64());
        assert!(!report.bytes.is_empty());
    }
    println!("ZIP5 full build: {best:.3} s (best of 3)");

    // SST boundary parsing: one million records in memory, cycling the sample's records
    // with their ZIPs shifted so that every record differs.
    let sample = std::fs::read_to_string(data.join("sst/MNB2026Q2FEB18-sample.csv"))
        .expect("boundary sample");
    let lines: Vec<&str> = sample.lines().filter(|l| !l.trim().is_empty()).collect();
    let mut text = String::with_capacity(1_000_000 * 100);
    for i in 0..1_000_000usize {
        let line = lines[i % lines.len()];
        let round = (i / lines.len()) % 100;
        // Fields 18 and 20 are the low and high ZIP: vary their last two digits by round.
        let mut f: Vec<String> = line.split(',').map(str::to_string).collect();
        for k in [17, 19] {
            if let Ok(z) = f[k].parse::<u32>() {
                f[k] = format!("{:05}", (z / 100) * 100 + round as u32);
            }
        }
        if f[17] > f[19] {
            f.swap(17, 19);
        }
        text.push_str(&f.join(","));
        text.push('\n');
    }
    let cpu0 = thread_cpu_ns();
    let t = Instant::now();
    let parsed = levy_build::parse::parse_sst_boundaries(text.as_bytes()).expect("parse");
    let secs = t.elapsed().as_secs_f64();
    let cpu = cpu0.zip(thread_cpu_ns()).map(|(a, b)| (b - a) as f64 / 1e9);
    println!(
        "SST boundary parsing: {} records ({} errors) in {secs:.3} s wall = {:.0} records/s",
        parsed.rows.len(),
        parsed.errors.len(),
        parsed.rows.len() as f64 / secs
    );
    if let Some(cpu) = cpu {
        println!(
            "  on-CPU time {cpu:.3} s = {:.0} records/s of CPU",
            parsed.rows.len() as f64 / cpu
        );
    }
}

/// This thread's time on a CPU so far, in nanoseconds (Linux `schedstat`), so that a
/// measurement on a shared machine can be told apart from time spent waiting for a core.
fn thread_cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}
