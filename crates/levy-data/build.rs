//! Compiles the default table with levy's own table compiler (`levy_build::build`, the code
//! behind `levy build`) into `$OUT_DIR/default.levy`, from the repository's `data/`:
//!
//! * the curated rules (`data/*.toml`, `data/ip/`);
//! * every USPS ZIP code in its state (the `zipcodes` package), `STATE_ONLY`;
//! * California's city and county rates from the CDTFA list (`data/local/ca-cdtfa-*.csv`);
//! * the county rates of Georgia, Minnesota and Wisconsin, Minnesota's special district
//!   rows and Milwaukee's city row, from their SST rate files (`data/local/*-local.csv`);
//! * the local rates files of `data/local/us/` (county rates of Florida, Hawaii, North
//!   Carolina, Ohio, Pennsylvania and Virginia with Virginia's regional districts, and of
//!   Nevada, Tennessee and New York with New York's MCTD and Yonkers; where
//!   Minnesota's districts lie; Milwaukee as a city a buyer names);
//! * every county placed by ZIP through the census ZIP-to-county file
//!   (`data/local/zip-county.csv`).
//!
//! The same `levy build --usps-zips --data-dir data --cdtfa ... --sst-rates ...
//! --local-rates data/local/us --zip-county ...` gives the same content. Deterministic: the build time written into the
//! header is the IP data's snapshot time, not the clock.

use std::path::PathBuf;

use levy_build::curated::{CuratedSource, IpRanges};
use levy_build::{build, BuildOptions, Input, InputKind};

fn main() {
    if let Err(e) = run() {
        // A build script reports failure by exiting non-zero with a message.
        eprintln!("levy-data: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").map_err(|e| e.to_string())?);
    let data = manifest.join("../../data");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed={}", data.display());
    println!("cargo:rerun-if-changed={}", data.join("ip").display());
    println!("cargo:rerun-if-changed={}", data.join("local").display());
    for (name, _) in levy_build::curated::EMBEDDED {
        println!("cargo:rerun-if-changed={}", data.join(name).display());
    }
    // The taxability matrix: its folders (a file added or removed) and every file.
    for folder in [
        "taxability",
        "taxability/us",
        "taxability/ca",
        "taxability/intl",
    ] {
        println!("cargo:rerun-if-changed={}", data.join(folder).display());
    }
    let matrix = levy_build::curated::CuratedSource::Dir(data.clone())
        .taxability_files()
        .map_err(|e| e.to_string())?;
    for (name, _) in &matrix {
        println!("cargo:rerun-if-changed={}", data.join(name).display());
    }
    let local = data.join("local");
    let mut inputs = vec![Input::new(
        InputKind::Cdtfa,
        local.join("ca-cdtfa-1-1-26.csv"),
    )];
    for name in [
        "GAR2026Q2FEB19-local.csv",
        "MNR2026Q2FEB18-local.csv",
        "WIR2026Q2FEB18-local.csv",
    ] {
        println!("cargo:rerun-if-changed={}", local.join(name).display());
        inputs.push(Input::new(InputKind::SstRates, local.join(name)));
    }
    // The local rates files come after the SST rate files whose districts and cities they
    // place, and before the ZIP-to-county file, which places ZIPs in their counties.
    let us = local.join("us");
    println!("cargo:rerun-if-changed={}", us.display());
    for f in
        levy_build::expand(&Input::new(InputKind::LocalRates, &us)).map_err(|e| e.to_string())?
    {
        println!("cargo:rerun-if-changed={}", f.display());
    }
    inputs.push(Input::new(InputKind::LocalRates, us));
    inputs.push(Input::new(
        InputKind::ZipCounty,
        local.join("zip-county.csv"),
    ));
    println!(
        "cargo:rerun-if-changed={}",
        local.join("ca-cdtfa-1-1-26.csv").display()
    );
    println!(
        "cargo:rerun-if-changed={}",
        local.join("zip-county.csv").display()
    );

    let curated = CuratedSource::Dir(data.clone());
    let snapshot = IpRanges::load_from(&curated)
        .map_err(|e| e.to_string())?
        .and_then(|ip| ip.snapshot)
        .ok_or("data/ip/ipv4.txt has no `# snapshot:` header")?;
    let report = build(&BuildOptions {
        inputs,
        curated: Some(curated),
        strict: true,
        build_time: Some(snapshot),
        progress: None,
        usps_zips: true,
    })
    .map_err(|e| e.to_string())?;
    let out =
        PathBuf::from(std::env::var("OUT_DIR").map_err(|e| e.to_string())?).join("default.levy");
    std::fs::write(&out, &report.bytes).map_err(|e| format!("{}: {e}", out.display()))?;
    Ok(())
}
