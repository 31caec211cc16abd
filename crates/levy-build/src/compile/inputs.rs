//! What a build reads: the kinds of input, their files, the options, and the publisher's
//! period of each file.

use std::path::PathBuf;

use levy_core::Date;

use crate::curated::CuratedSource;
use crate::error::io_err;
use crate::error::BuildError;

/// The kind of an input file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum InputKind {
    /// ZIP5 combined-rate table.
    Zip5,
    /// SST rate file.
    SstRates,
    /// SST boundary file.
    SstBoundaries,
    /// CDTFA California city and county list.
    Cdtfa,
    /// MaxMind-format IP database.
    IpMmdb,
    /// Plain CSV IP ranges.
    IpCsv,
    /// ZIP-to-county relationships (`zip,state,county_fips3`): places ZIP codes in the
    /// counties whose SST rates are loaded.
    ZipCounty,
    /// A state's local rates (`data/local/us/<ST>.toml`): county rates, districts over
    /// counties and cities a buyer may name, each with its dated rates and publication.
    LocalRates,
}

impl InputKind {
    /// The name written in the manifest (`zip5`, `sst-rates`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            InputKind::Zip5 => "zip5",
            InputKind::SstRates => "sst-rates",
            InputKind::SstBoundaries => "sst-boundaries",
            InputKind::Cdtfa => "cdtfa",
            InputKind::IpMmdb => "ip-mmdb",
            InputKind::IpCsv => "ip-csv",
            InputKind::ZipCounty => "zip-county",
            InputKind::LocalRates => "local-rates",
        }
    }

    fn extension(self) -> &'static str {
        match self {
            InputKind::IpMmdb => "mmdb",
            InputKind::LocalRates => "toml",
            _ => "csv",
        }
    }
}

/// One input: a file, or a folder whose files of the kind's extension (`.csv`, `.mmdb`) are
/// read in name order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Input {
    /// What the file is.
    pub kind: InputKind,
    /// File or folder.
    pub path: PathBuf,
}

impl Input {
    /// An input of `kind` at `path`.
    pub fn new(kind: InputKind, path: impl Into<PathBuf>) -> Input {
        Input {
            kind,
            path: path.into(),
        }
    }
}

/// What a build tells of its progress as it reads its input files, one by one.
pub trait Progress: Send + Sync + std::fmt::Debug {
    /// The build is to read `files` input files.
    fn start(&self, files: usize);
    /// It reads `file` (its name) now.
    fn reading(&self, file: &str);
    /// It has read the file it was reading.
    fn read(&self);
    /// It has read every file.
    fn done(&self);
}

/// What to build.
#[derive(Clone, Debug, Default)]
pub struct BuildOptions {
    /// Inputs, layered in this order.
    pub inputs: Vec<Input>,
    /// The curated rules: compiled in, or a folder laid out like `data/`; `None` builds
    /// with a minimal taxonomy only.
    pub curated: Option<CuratedSource>,
    /// Fail on the first bad row instead of skipping and counting it.
    pub strict: bool,
    /// Header build time in Unix seconds. `None`: `SOURCE_DATE_EPOCH` when set, else the
    /// latest period start among the inputs (never the wall clock).
    pub build_time: Option<i64>,
    /// Told of the build's progress as it reads its input files (a program draws it:
    /// `levy build`, a bar on stderr); `None` tells no one. The library draws nothing.
    pub progress: Option<std::sync::Arc<dyn Progress>>,
    /// Before the inputs, place every active USPS ZIP code (the `zipcodes` package) in its
    /// state for every date, marked `STATE_ONLY` (as the embedded default does), so that a
    /// table answers for every US ZIP and the inputs refine the ZIPs they know.
    pub usps_zips: bool,
}

/// The files an input stands for, in name order.
pub fn expand(input: &Input) -> Result<Vec<PathBuf>, BuildError> {
    let meta = std::fs::metadata(&input.path).map_err(|e| io_err(&input.path, e))?;
    if !meta.is_dir() {
        return Ok(vec![input.path.clone()]);
    }
    let ext = input.kind.extension();
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&input.path).map_err(|e| io_err(&input.path, e))? {
        let p = entry.map_err(|e| io_err(&input.path, e))?.path();
        let ok = p.is_file()
            && p.extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| e.eq_ignore_ascii_case(ext));
        if ok {
            files.push(p);
        }
    }
    files.sort();
    if files.is_empty() {
        return Err(BuildError::NoFiles {
            path: input.path.display().to_string(),
            ext,
        });
    }
    Ok(files)
}

/// The publisher's period of a file, from its name, and the first day of it.
///
/// * ZIP5 tables `..._YYYYMM.csv` -> `YYYY-MM`, the first of the month;
/// * SST files `SSR2026Q2...` / `SSB2026Q2...` -> `2026Q2`, the first day of the quarter;
/// * CDTFA `...M-D-YY.csv` -> `20YY-MM-DD`, that day.
pub fn period_of(kind: InputKind, name: &str) -> Option<(String, Date)> {
    let stem = name.rsplit_once('.').map(|(s, _)| s).unwrap_or(name);
    match kind {
        InputKind::Zip5 => {
            let digits: String = stem
                .chars()
                .rev()
                .take_while(|c| c.is_ascii_digit())
                .collect();
            let digits: String = digits.chars().rev().collect();
            if digits.len() < 6 {
                return None;
            }
            let d = &digits[digits.len() - 6..];
            let (y, m) = (d[..4].parse().ok()?, d[4..].parse().ok()?);
            Some((format!("{y:04}-{m:02}"), Date::from_ymd(y, m, 1)?))
        }
        InputKind::SstRates | InputKind::SstBoundaries => {
            let b = stem.as_bytes();
            (0..b.len().saturating_sub(5)).find_map(|i| {
                let y = std::str::from_utf8(&b[i..i + 4]).ok()?;
                if !y.bytes().all(|c| c.is_ascii_digit()) || b[i + 4] != b'Q' {
                    return None;
                }
                let q = (b[i + 5] as char)
                    .to_digit(10)
                    .filter(|q| (1..=4).contains(q))?;
                let y: i32 = y.parse().ok()?;
                Some((format!("{y}Q{q}"), Date::from_ymd(y, 3 * (q - 1) + 1, 1)?))
            })
        }
        InputKind::Cdtfa => {
            let tail: String = stem
                .chars()
                .rev()
                .take_while(|c| c.is_ascii_digit() || *c == '-')
                .collect::<String>()
                .chars()
                .rev()
                .collect();
            let parts: Vec<&str> = tail.split('-').filter(|p| !p.is_empty()).collect();
            if parts.len() != 3 {
                return None;
            }
            let (m, d): (u32, u32) = (parts[0].parse().ok()?, parts[1].parse().ok()?);
            let mut y: i32 = parts[2].parse().ok()?;
            if parts[2].len() == 2 {
                y += 2000;
            }
            let date = Date::from_ymd(y, m, d)?;
            Some((format!("{y:04}-{m:02}-{d:02}"), date))
        }
        InputKind::IpMmdb | InputKind::IpCsv | InputKind::ZipCounty | InputKind::LocalRates => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn periods_from_names() {
        let d = |y, m, d| Date::from_ymd(y, m, d).unwrap();
        assert_eq!(
            period_of(InputKind::Zip5, "TAXRATES_ZIP5_TN202512.csv"),
            Some(("2025-12".into(), d(2025, 12, 1)))
        );
        assert_eq!(
            period_of(InputKind::SstRates, "GAR2026Q2FEB19.csv"),
            Some(("2026Q2".into(), d(2026, 4, 1)))
        );
        assert_eq!(
            period_of(InputKind::SstBoundaries, "MNB2026Q2FEB18-sample.csv"),
            Some(("2026Q2".into(), d(2026, 4, 1)))
        );
        assert_eq!(
            period_of(InputKind::Cdtfa, "SalesTaxRates1-1-26.csv"),
            Some(("2026-01-01".into(), d(2026, 1, 1)))
        );
        assert_eq!(period_of(InputKind::Zip5, "rates.csv"), None);
    }
}
