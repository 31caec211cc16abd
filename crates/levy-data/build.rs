//! Compiles the default table from the repository's `data/` and the `zipcodes` crate into
//! `$OUT_DIR/default.levy`. Deterministic: the same inputs give the same bytes, and the
//! build time written into the header is the IP data's snapshot time, not the clock.

use std::collections::BTreeMap;
use std::path::PathBuf;

use levy_build::curated::{self, IpRanges};
use levy_core::TableBuilder;

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
    println!(
        "cargo:rerun-if-changed={}",
        data.join(levy_build::local_taxes::FILE).display()
    );
    for f in curated::FILES {
        println!("cargo:rerun-if-changed={}", data.join(f).display());
    }
    for f in [curated::IPV4_FILE, curated::IPV6_FILE] {
        println!(
            "cargo:rerun-if-changed={}",
            data.join("ip").join(f).display()
        );
    }

    let c = curated::load(&data).map_err(|e| e.to_string())?;
    let mut b = TableBuilder::new();
    c.apply_base(&mut b).map_err(|e| e.to_string())?;

    // ZIP codes: each gets its state's jurisdiction set (the state alone: the default table
    // ships no local rates). `apply_rules` adds state-wide add-ons (Tennessee's single
    // article tax) to these sets afterwards.
    let states: BTreeMap<&str, (&str, &str)> = c
        .us_states()
        .map(|(abbr, fips, name)| (abbr, (fips, name)))
        .collect();
    let zip_source = b.add_source(levy_core::model::SourceEntry {
        kind: "zip5".into(),
        name: "zipcodes crate (zips.json.bz2)".into(),
        sha256: String::new(),
        rows_read: 0,
        rows_skipped: 0,
        period: String::new(),
    });
    let (mut read, mut skipped) = (0u64, 0u64);
    // Per state: city -> (standard ZIP count, lowest standard ZIP).
    let mut cities: BTreeMap<&str, BTreeMap<String, (u32, u32)>> = BTreeMap::new();
    for z in zipcodes::database() {
        let Some((fips, _)) = states.get(z.state.as_str()) else {
            skipped += 1; // military (AA, AE, AP) and territories without a state rate
            continue;
        };
        let Ok(zip) = z.zip_code.parse::<u32>() else {
            skipped += 1;
            continue;
        };
        if !z.active || z.zip_code.len() != 5 {
            skipped += 1;
            continue;
        }
        let Some(state) = b.find_jurisdiction(fips) else {
            return Err(format!("state {} has no jurisdiction", z.state));
        };
        let city = z.city.to_uppercase();
        // The state alone, for every date, and marked so: the ZIP's local taxes (if its
        // state has any) are not in this table.
        b.zip_period(
            zip,
            &z.state,
            &city,
            &[state],
            levy_core::Date::MIN,
            levy_core::Date::MAX,
            levy_core::Coverage::StateOnly,
            zip_source,
        )
        .map_err(|e| format!("ZIP {}: {e}", z.zip_code))?;
        read += 1;
        if z.zip_code_type == "STANDARD" {
            let (abbr, _) = states
                .get_key_value(z.state.as_str())
                .expect("looked up above");
            let e = cities
                .entry(abbr)
                .or_default()
                .entry(city)
                .or_insert((0, u32::MAX));
            e.0 += 1;
            e.1 = e.1.min(zip);
        }
    }
    if let Some(s) = b.source_mut(zip_source) {
        s.rows_read = read;
        s.rows_skipped = skipped;
    }
    // The package has no populations: a state's main postal code is the lowest standard
    // ZIP of the city with the most standard ZIP codes (its largest city, in practice).
    for (abbr, by_city) in &cities {
        let best = by_city
            .iter()
            .max_by_key(|(name, (count, _))| (*count, std::cmp::Reverse((*name).clone())));
        if let Some((_, (_, zip))) = best {
            b.region_main_postal("US", abbr, &format!("{zip:05}"))
                .map_err(|e| e.to_string())?;
        }
    }

    let ip = IpRanges::load(&data.join("ip")).map_err(|e| e.to_string())?;
    ip.apply(&mut b).map_err(|e| e.to_string())?;
    c.apply_rules(&mut b).map_err(|e| e.to_string())?;
    let no_local = levy_build::local_taxes::parse(
        &std::fs::read_to_string(data.join(levy_build::local_taxes::FILE))
            .map_err(|e| format!("{}: {e}", levy_build::local_taxes::FILE))?,
    )?;
    levy_build::local_taxes::apply(&no_local, &mut b);

    let build_time = ip
        .snapshot
        .ok_or("data/ip/ipv4.txt has no `# snapshot:` header")?;
    let bytes = b.build(build_time).map_err(|e| e.to_string())?;
    let out =
        PathBuf::from(std::env::var("OUT_DIR").map_err(|e| e.to_string())?).join("default.levy");
    std::fs::write(&out, &bytes).map_err(|e| format!("{}: {e}", out.display()))?;
    Ok(())
}
