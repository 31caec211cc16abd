//! The `levy build`, `levy info` and `levy diff` commands: clap arguments and runners.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{ArgMatches, Args, FromArgMatches};

use levy_build::{build, BuildError, BuildOptions, CuratedSource, Input, InputKind};

/// The flags of `levy build` as clap parses them; [`BuildArgs`] adds their order.
#[derive(Args, Clone, Debug, Default)]
pub struct BuildFlags {
    /// The table file to write (atomically: a temporary file, then a rename).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// ZIP5 combined-rate table, file or folder.
    #[arg(long, value_name = "PATH")]
    pub zip5: Vec<PathBuf>,
    /// SST rate file, file or folder.
    #[arg(long = "sst-rates", value_name = "PATH")]
    pub sst_rates: Vec<PathBuf>,
    /// SST boundary file, file or folder.
    #[arg(long = "sst-boundaries", value_name = "PATH")]
    pub sst_boundaries: Vec<PathBuf>,
    /// CDTFA California rate list, file or folder.
    #[arg(long, value_name = "PATH")]
    pub cdtfa: Vec<PathBuf>,
    /// MaxMind-format IP database, file or folder.
    #[arg(long = "ip-mmdb", value_name = "PATH")]
    pub ip_mmdb: Vec<PathBuf>,
    /// CSV IP ranges `start,end,country[,region,postal]`, file or folder.
    #[arg(long = "ip-csv", value_name = "PATH")]
    pub ip_csv: Vec<PathBuf>,
    /// ZIP-to-county relationships (`zip,state,county_fips3`, the census ZCTA file), file or
    /// folder: places ZIPs in the counties of the SST rate files and local rates files given
    /// before it.
    #[arg(long = "zip-county", value_name = "PATH")]
    pub zip_county: Vec<PathBuf>,
    /// A state's local rates (`data/local/us/<ST>.toml`: county rates, districts over
    /// counties, cities a buyer may name, each with its publication), file or folder of
    /// `.toml` files; give it before `--zip-county`, after the SST rate files it names.
    #[arg(long = "local-rates", value_name = "PATH")]
    pub local_rates: Vec<PathBuf>,
    /// Place every USPS ZIP code in its state first (STATE_ONLY), as the embedded default
    /// does, so that the table answers for every US ZIP.
    #[arg(long = "usps-zips")]
    pub usps_zips: bool,
    /// Build without the curated rules (a minimal taxonomy only).
    #[arg(long = "no-curated")]
    pub no_curated: bool,
    /// Fail on the first bad row instead of skipping and counting it.
    #[arg(long)]
    pub strict: bool,
    /// A curated rules folder laid out like the repository's `data/`, instead of the rules
    /// compiled into this levy.
    #[arg(long = "data-dir", value_name = "DIR", conflicts_with = "no_curated")]
    pub data_dir: Option<PathBuf>,
    /// Sign the table with this secret key (`levy signing-key`): writes OUT.sig beside it,
    /// for `levy update`.
    #[arg(long, value_name = "KEY")]
    pub sign: Option<PathBuf>,
}

/// `levy build`: its flags and the inputs in command-line order (sources are layered in
/// the order given, across flags).
#[derive(Clone, Debug, Default)]
pub struct BuildArgs {
    /// The flags.
    pub flags: BuildFlags,
    /// Inputs in command-line order.
    pub inputs: Vec<Input>,
}

const INPUT_IDS: [(&str, InputKind); 8] = [
    ("zip5", InputKind::Zip5),
    ("sst_rates", InputKind::SstRates),
    ("sst_boundaries", InputKind::SstBoundaries),
    ("cdtfa", InputKind::Cdtfa),
    ("ip_mmdb", InputKind::IpMmdb),
    ("ip_csv", InputKind::IpCsv),
    ("zip_county", InputKind::ZipCounty),
    ("local_rates", InputKind::LocalRates),
];

fn ordered_inputs(m: &ArgMatches) -> Vec<Input> {
    let mut found: Vec<(usize, Input)> = Vec::new();
    for (id, kind) in INPUT_IDS {
        if let (Some(idx), Some(vals)) = (m.indices_of(id), m.get_many::<PathBuf>(id)) {
            for (i, v) in idx.zip(vals) {
                found.push((i, Input::new(kind, v.clone())));
            }
        }
    }
    found.sort_by_key(|(i, _)| *i);
    found.into_iter().map(|(_, i)| i).collect()
}

impl FromArgMatches for BuildArgs {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        Ok(BuildArgs {
            flags: BuildFlags::from_arg_matches(m)?,
            inputs: ordered_inputs(m),
        })
    }
    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        self.flags.update_from_arg_matches(m)?;
        self.inputs = ordered_inputs(m);
        Ok(())
    }
}

impl Args for BuildArgs {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        BuildFlags::augment_args(cmd)
    }
    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        BuildFlags::augment_args_for_update(cmd)
    }
}

/// `levy info FILE`.
#[derive(Args, Clone, Debug)]
pub struct InfoArgs {
    /// The table file.
    pub file: PathBuf,
}

/// `levy diff OLD NEW [--json]`.
#[derive(Args, Clone, Debug)]
pub struct DiffArgs {
    /// The older table.
    pub old: PathBuf,
    /// The newer table.
    pub new: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// A command failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CliError {
    /// The build failed.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// A table could not be opened.
    #[error(transparent)]
    Table(#[from] levy_core::TableError),
    /// The output could not be written.
    #[error("{path}: {message}")]
    Write {
        /// Path.
        path: String,
        /// The operating system's message.
        message: String,
    },
}

/// Writes `bytes` to `path` atomically: a temporary file beside it, synced, then renamed.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    let err = |e: std::io::Error| CliError::Write {
        path: path.display().to_string(),
        message: e.to_string(),
    };
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "table".into());
    let tmp = dir.join(format!(".{name}.tmp{}", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(err)
}

/// Runs `levy build`: builds, writes the table, prints the summary on stderr.
pub fn run_build(args: &BuildArgs) -> Result<levy_build::Summary, CliError> {
    let opts = BuildOptions {
        inputs: args.inputs.clone(),
        curated: (!args.flags.no_curated).then(|| match &args.flags.data_dir {
            Some(dir) => CuratedSource::Dir(dir.clone()),
            None => CuratedSource::Embedded,
        }),
        strict: args.flags.strict,
        usps_zips: args.flags.usps_zips,
        build_time: None,
        progress: Some(std::sync::Arc::new(Bar::default())),
    };
    let report = build(&opts)?;
    write_atomic(&args.flags.out, &report.bytes)?;
    eprint!("{}", report.summary.render());
    eprintln!(
        "wrote {} ({} bytes)",
        args.flags.out.display(),
        report.bytes.len()
    );
    if let Some(key) = &args.flags.sign {
        let sig = crate::update::sign(&args.flags.out, key).map_err(|e| CliError::Write {
            path: args.flags.out.display().to_string(),
            message: e.to_string(),
        })?;
        eprintln!("signed {}", sig.display());
    }
    Ok(report.summary)
}

/// Runs `levy info`: the text it prints.
pub fn run_info(args: &InfoArgs) -> Result<String, CliError> {
    let t = levy_core::AnyTable::open_file(&args.file)?;
    Ok(levy_build::info(&t))
}

/// Runs `levy diff`: the text or JSON it prints.
pub fn run_diff(args: &DiffArgs) -> Result<String, CliError> {
    let old = levy_core::AnyTable::open_file(&args.old)?;
    let new = levy_core::AnyTable::open_file(&args.new)?;
    let d = levy_build::diff(&old, &new);
    Ok(if args.json { d.to_json() } else { d.to_text() })
}

/// `levy build`'s progress bar on stderr: a file at a time, the file's name beside it.
#[derive(Debug, Default)]
struct Bar(std::sync::OnceLock<indicatif::ProgressBar>);

impl Bar {
    fn bar(&self) -> Option<&indicatif::ProgressBar> {
        self.0.get()
    }
}

impl levy_build::Progress for Bar {
    fn start(&self, files: usize) {
        let bar = indicatif::ProgressBar::new(files as u64);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        let _ = self.0.set(bar);
    }

    fn reading(&self, file: &str) {
        if let Some(b) = self.bar() {
            b.set_message(file.to_string());
        }
    }

    fn read(&self) {
        if let Some(b) = self.bar() {
            b.inc(1);
        }
    }

    fn done(&self) {
        if let Some(b) = self.bar() {
            b.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cmd {
        #[command(flatten)]
        build: BuildArgs,
    }

    #[test]
    fn inputs_keep_command_line_order() {
        let cmd = Cmd::parse_from([
            "levy",
            "--out",
            "t.levy",
            "--sst-rates",
            "a.csv",
            "--zip5",
            "z",
            "--cdtfa",
            "c.csv",
            "--zip5",
            "y",
        ]);
        let kinds: Vec<(InputKind, String)> = cmd
            .build
            .inputs
            .iter()
            .map(|i| (i.kind, i.path.display().to_string()))
            .collect();
        assert_eq!(
            kinds,
            vec![
                (InputKind::SstRates, "a.csv".into()),
                (InputKind::Zip5, "z".into()),
                (InputKind::Cdtfa, "c.csv".into()),
                (InputKind::Zip5, "y".into()),
            ]
        );
        // No --data-dir: the curated rules compiled into levy.
        assert_eq!(cmd.build.flags.data_dir, None);
    }
}
