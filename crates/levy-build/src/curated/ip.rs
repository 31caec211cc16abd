//! The IP ranges of `data/ip/`: country-level ranges for the whole address space and,
//! over them, ranges of US states and Canadian provinces.

use std::collections::HashMap;
use std::path::Path;

use levy_core::model::SourceEntry;
use levy_core::{Date, IpLocationSpec};

use super::values::{invalid, is_country, sha256_hex};
use super::{CuratedError, CuratedSource, FileEntry};

/// The IP ranges of `data/ip/` (see `data/README.md` for the format): country-level ranges
/// for the whole address space and, over them, ranges at the level of a US state or Canadian
/// province.
#[derive(Clone, Debug, Default)]
pub struct IpRanges {
    /// IPv4 ranges, `start..=end`, sorted and not overlapping.
    pub v4: Vec<(u32, u32, [u8; 2])>,
    /// IPv6 ranges, `start..=end`, sorted and not overlapping.
    pub v6: Vec<(u128, u128, [u8; 2])>,
    /// The finer ranges of `ipv4-regions.txt` and `ipv6-regions.txt`, when the folder has
    /// them; they refine the country ranges where both speak.
    pub regions: Option<IpRegionRanges>,
    /// When the data was taken, in seconds since the Unix epoch, from the IPv4 file's
    /// `# snapshot: YYYY-MM-DDTHH:MM:SSZ` header line, if it has one.
    pub snapshot: Option<i64>,
    files: Vec<FileEntry>,
}

/// Ranges at the level of a state or province, each pointing into `places`.
#[derive(Clone, Debug, Default)]
pub struct IpRegionRanges {
    /// The distinct places, in order of first use: country, region and, for a US range, the
    /// ZIP code that `ip_mode: approximate` resolves (`approx_postal`).
    pub places: Vec<IpLocationSpec>,
    /// IPv4 ranges, `start..=end`, sorted and not overlapping, with an index into `places`.
    pub v4: Vec<(u32, u32, u32)>,
    /// IPv6 ranges likewise.
    pub v6: Vec<(u128, u128, u32)>,
}

/// The `# snapshot: YYYY-MM-DDTHH:MM:SSZ` header of a range file, as Unix seconds.
fn snapshot(file: &str, text: &str) -> Result<Option<i64>, CuratedError> {
    let Some(line) = text
        .lines()
        .take_while(|l| l.starts_with('#'))
        .find_map(|l| l.strip_prefix("# snapshot:"))
    else {
        return Ok(None);
    };
    let v = line.trim();
    let bad = || {
        invalid(
            file,
            "# snapshot",
            format!("{v:?} is not YYYY-MM-DDTHH:MM:SSZ"),
        )
    };
    let b = v.as_bytes();
    if b.len() != 20
        || b[4] != b'-'
        || b[7] != b'-'
        || b[10] != b'T'
        || b[13] != b':'
        || b[16] != b':'
        || b[19] != b'Z'
    {
        return Err(bad());
    }
    let num =
        |r: std::ops::Range<usize>| v.get(r).and_then(|x| x.parse::<u32>().ok()).ok_or_else(bad);
    let day = Date::from_ymd(num(0..4)? as i32, num(5..7)?, num(8..10)?).ok_or_else(bad)?;
    let (h, m, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if h > 23 || m > 59 || sec > 59 {
        return Err(bad());
    }
    Ok(Some(
        i64::from(day.0) * 86_400 + i64::from(h * 3600 + m * 60 + sec),
    ))
}

/// The IPv4 file in `data/ip/`.
pub const IPV4_FILE: &str = "ipv4.txt";

/// The IPv6 file in `data/ip/`.
pub const IPV6_FILE: &str = "ipv6.txt";

/// The IPv4 file of state and province ranges in `data/ip/`.
pub const IPV4_REGIONS_FILE: &str = "ipv4-regions.txt";

/// The IPv6 file of state and province ranges in `data/ip/`.
pub const IPV6_REGIONS_FILE: &str = "ipv6-regions.txt";

/// Parses a range file: lines `PLACE,GAP,SIZE` (hex; GAP empty for zero) in units of
/// `1 << shift` addresses, `#` comments; `place` reads the first field. Returns
/// `(start, end, place)` ranges.
fn parse_ranges<P>(
    file: &str,
    text: &str,
    shift: u32,
    max: u128,
    mut place: impl FnMut(&str) -> Result<P, String>,
) -> Result<Vec<(u128, u128, P)>, CuratedError> {
    let mut out = Vec::new();
    // The next free address, in units; `None` once the space is used up.
    let mut next: Option<u128> = Some(0);
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let key = format!("line {}", n + 1);
        let mut fields = line.split(',');
        let (Some(p), Some(gap), Some(size), None) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            return Err(invalid(file, key, "expected PLACE,GAP,SIZE"));
        };
        let p = place(p).map_err(|m| invalid(file, &key, m))?;
        let hex = |s: &str| u128::from_str_radix(s, 16).ok();
        let gap = if gap.is_empty() { Some(0) } else { hex(gap) };
        let (Some(gap), Some(size)) = (gap, hex(size)) else {
            return Err(invalid(file, key, "GAP and SIZE must be hexadecimal"));
        };
        if size == 0 {
            return Err(invalid(file, key, "SIZE must not be zero"));
        }
        let start = next.and_then(|x| x.checked_add(gap));
        let end = start.and_then(|s| s.checked_add(size - 1));
        let (Some(start), Some(end)) = (start, end) else {
            return Err(invalid(
                file,
                key,
                "range runs past the end of the address space",
            ));
        };
        if end > (max >> shift) {
            return Err(invalid(
                file,
                key,
                "range runs past the end of the address space",
            ));
        }
        out.push((start << shift, (end << shift) | ((1u128 << shift) - 1), p));
        next = end.checked_add(1);
    }
    Ok(out)
}

/// A country-file place: an ISO 3166-1 alpha-2 code.
fn country_place(cc: &str) -> Result<[u8; 2], String> {
    if !is_country(cc) {
        return Err(format!("{cc:?} is not an ISO 3166-1 alpha-2 code"));
    }
    let b = cc.as_bytes();
    Ok([b[0], b[1]])
}

/// A regions-file place: `US-ST-ZIP`, `US-ST` or `CA-PR`, interned into `places`.
fn region_place(
    places: &mut Vec<IpLocationSpec>,
    ids: &mut HashMap<String, u32>,
    text: &str,
) -> Result<u32, String> {
    if let Some(&id) = ids.get(text) {
        return Ok(id);
    }
    let bad = || format!("{text:?} is not US-ST-ZIP, US-ST or CA-PR");
    let mut parts = text.split('-');
    let (Some(country), Some(region), zip, None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(bad());
    };
    let ok_region = match country {
        "US" => crate::mmdb::is_subdivision_code(country, region),
        "CA" => crate::mmdb::is_subdivision_code(country, region) && zip.is_none(),
        _ => false,
    };
    let ok_zip = zip.is_none_or(|z| z.len() == 5 && z.bytes().all(|b| b.is_ascii_digit()));
    if !ok_region || !ok_zip {
        return Err(bad());
    }
    let id = places.len() as u32;
    places.push(IpLocationSpec {
        country: country.to_string(),
        region: region.to_string(),
        approx_postal: zip.unwrap_or_default().to_string(),
        ..Default::default()
    });
    ids.insert(text.to_string(), id);
    Ok(id)
}

impl IpRegionRanges {
    /// Parses the two regions files from their text.
    pub fn from_strs(v4: &str, v6: &str) -> Result<IpRegionRanges, CuratedError> {
        let mut places = Vec::new();
        let mut ids = HashMap::new();
        let r4 = parse_ranges(IPV4_REGIONS_FILE, v4, 0, u128::from(u32::MAX), |p| {
            region_place(&mut places, &mut ids, p)
        })?;
        let r6 = parse_ranges(IPV6_REGIONS_FILE, v6, 64, u128::MAX, |p| {
            region_place(&mut places, &mut ids, p)
        })?;
        Ok(IpRegionRanges {
            places,
            v4: r4
                .into_iter()
                .map(|(s, e, p)| (s as u32, e as u32, p))
                .collect(),
            v6: r6,
        })
    }
}

impl IpRanges {
    /// Reads the files of `ip/` in `source`: `ipv4.txt` and `ipv6.txt` (together), then
    /// `ipv4-regions.txt` and `ipv6-regions.txt` (together, optional); `None` when a data
    /// folder has no `ip/` files.
    pub fn load_from(source: &CuratedSource) -> Result<Option<IpRanges>, CuratedError> {
        type Pair<'a> = Option<(std::borrow::Cow<'a, str>, std::borrow::Cow<'a, str>)>;
        let pair = |a: &str, b: &str| -> Result<Pair<'_>, CuratedError> {
            match (
                source.read(&format!("ip/{a}"))?,
                source.read(&format!("ip/{b}"))?,
            ) {
                (None, None) => Ok(None),
                (Some(x), Some(y)) => Ok(Some((x, y))),
                _ => Err(CuratedError::Io {
                    file: "ip/".into(),
                    message: format!("{a} and {b} come together; one is missing"),
                }),
            }
        };
        let Some((v4, v6)) = pair(IPV4_FILE, IPV6_FILE)? else {
            return Ok(None);
        };
        let mut r = IpRanges::from_strs(&v4, &v6)?;
        if let Some((v4, v6)) = pair(IPV4_REGIONS_FILE, IPV6_REGIONS_FILE)? {
            r.regions = Some(IpRegionRanges::from_strs(&v4, &v6)?);
            for (name, text) in [(IPV4_REGIONS_FILE, &v4), (IPV6_REGIONS_FILE, &v6)] {
                r.files.push(FileEntry {
                    name: name.into(),
                    sha256: sha256_hex(text),
                    rows: 0,
                    horizon: i32::MAX,
                });
            }
        }
        Ok(Some(r))
    }

    /// Reads the files of `dir` (the repository's `data/ip/`), as [`IpRanges::load_from`].
    pub fn load(dir: &Path) -> Result<IpRanges, CuratedError> {
        let parent = dir.parent().unwrap_or(dir).to_path_buf();
        IpRanges::load_from(&CuratedSource::Dir(parent))?.ok_or_else(|| CuratedError::Io {
            file: dir.join(IPV4_FILE).display().to_string(),
            message: "not found".into(),
        })
    }

    /// Parses the two country files from their text.
    pub fn from_strs(v4: &str, v6: &str) -> Result<IpRanges, CuratedError> {
        let r4 = parse_ranges(IPV4_FILE, v4, 0, u128::from(u32::MAX), country_place)?;
        let r6 = parse_ranges(IPV6_FILE, v6, 64, u128::MAX, country_place)?;
        Ok(IpRanges {
            snapshot: snapshot(IPV4_FILE, v4)?,
            v4: r4
                .into_iter()
                .map(|(s, e, c)| (s as u32, e as u32, c))
                .collect(),
            v6: r6,
            regions: None,
            files: vec![
                FileEntry {
                    name: IPV4_FILE.into(),
                    sha256: sha256_hex(v4),
                    rows: 0,
                    horizon: i32::MAX,
                },
                FileEntry {
                    name: IPV6_FILE.into(),
                    sha256: sha256_hex(v6),
                    rows: 0,
                    horizon: i32::MAX,
                },
            ],
        })
    }

    /// The name and SHA-256 of each file read (kind `ip-country`, or `ip-region` for the
    /// regions files).
    pub fn sources(&self) -> Vec<SourceEntry> {
        let (r4, r6) = self
            .regions
            .as_ref()
            .map_or((0, 0), |r| (r.v4.len() as u64, r.v6.len() as u64));
        let rows = [self.v4.len() as u64, self.v6.len() as u64, r4, r6];
        self.files
            .iter()
            .zip(rows)
            .map(|(f, rows)| SourceEntry {
                kind: if f.name.contains("regions") {
                    "ip-region"
                } else {
                    "ip-country"
                }
                .into(),
                name: f.name.clone(),
                sha256: f.sha256.clone(),
                rows_read: rows,
                rows_skipped: 0,
                period: String::new(),
                publication: String::new(),
                horizon: i32::MAX,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ip_ranges_decode_gaps_and_units() {
        // 1.0.0.0/24 AU after a gap of 0x1000000 addresses, then 1.0.1.0-1.0.3.255 CN.
        let r = IpRanges::from_strs("AU,1000000,100\nCN,,300\n", "JP,2001000200000000,10000\n")
            .unwrap();
        assert_eq!(
            r.v4,
            vec![
                (0x0100_0000, 0x0100_00ff, *b"AU"),
                (0x0100_0100, 0x0100_03ff, *b"CN")
            ]
        );
        // 2001:2::/48 is 0x10000 /64 blocks starting at block 0x2001000200000000.
        let start = 0x2001_0002_0000_0000u128 << 64;
        assert_eq!(r.v6, vec![(start, start + (0x10000u128 << 64) - 1, *b"JP")]);
        assert!(IpRanges::from_strs("AU,ffffffff,2\n", "").is_err());
        // 2026-06-17T19:00:00Z is 20621 days and 19 hours after the epoch.
        let r = IpRanges::from_strs("# snapshot: 2026-06-17T19:00:00Z\nAU,,1\n", "").unwrap();
        assert_eq!(r.snapshot, Some(20_621 * 86_400 + 19 * 3_600));
        assert!(IpRanges::from_strs("# snapshot: 2026-13-17T19:00:00Z\n", "").is_err());
        assert!(IpRanges::from_strs("au,,1\n", "").is_err());
    }

    #[test]
    fn region_ranges_read_states_provinces_and_zips() {
        // 8.8.8.0/22 in California near ZIP 94043, then 24.48.0.0
        // /22 in Quebec; one IPv6 /36 (2^28 /64 blocks) in Texas without a ZIP.
        let r = IpRegionRanges::from_strs(
            "US-CA-94043,8080800,400\nUS-CA-94043,,100\nCA-QC,1027f300,400\n",
            "US-TX,2001000000000000,10000000\n",
        )
        .unwrap();
        assert_eq!(
            r.v4,
            vec![
                (0x0808_0800, 0x0808_0bff, 0),
                (0x0808_0c00, 0x0808_0cff, 0),
                (0x1830_0000, 0x1830_03ff, 1)
            ]
        );
        let p = |i: usize| {
            let p = &r.places[i];
            (
                p.country.as_str(),
                p.region.as_str(),
                p.approx_postal.as_str(),
            )
        };
        assert_eq!(p(0), ("US", "CA", "94043"));
        assert_eq!(p(1), ("CA", "QC", ""));
        assert_eq!(p(2), ("US", "TX", ""));
        let start = 0x2001_0000_0000_0000u128 << 64;
        assert_eq!(r.v6, vec![(start, start + (0x1000_0000u128 << 64) - 1, 2)]);
        // Not a state, a province with a ZIP, a ZIP of four digits, another country: refused
        // with the line named.
        for bad in [
            "US-XX,,1",
            "CA-ON-12345,,1",
            "US-CA-9404,,1",
            "MX-JA,,1",
            "US,,1",
        ] {
            let e = IpRegionRanges::from_strs(bad, "").unwrap_err().to_string();
            assert!(
                e.contains("line 1") && e.contains("US-ST-ZIP"),
                "{bad}: {e}"
            );
        }
    }
}
