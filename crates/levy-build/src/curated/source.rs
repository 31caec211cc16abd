//! Where the curated files come from: compiled in ([`EMBEDDED`]) or a folder laid out like
//! `data/`.

use super::CuratedError;

/// Every curated file as this build of levy ships it, compiled in: `(path in data/, text)`.
/// A build that names no data folder uses these, so `levy build` works from any folder.
pub const EMBEDDED: &[(&str, &str)] = &[
    (
        "taxonomy.toml",
        include_str!("../../../../data/taxonomy.toml"),
    ),
    (
        "us-states.toml",
        include_str!("../../../../data/us-states.toml"),
    ),
    (
        "us-rules.toml",
        include_str!("../../../../data/us-rules.toml"),
    ),
    (
        "holidays.toml",
        include_str!("../../../../data/holidays.toml"),
    ),
    (
        "countries.toml",
        include_str!("../../../../data/countries.toml"),
    ),
    ("canada.toml", include_str!("../../../../data/canada.toml")),
    (
        crate::local_taxes::FILE,
        include_str!("../../../../data/us-local-taxes.toml"),
    ),
    (
        "ca-base.toml",
        include_str!("../../../../data/ca-base.toml"),
    ),
    (
        crate::sourcing::FILE,
        include_str!("../../../../data/us-sourcing.toml"),
    ),
    (
        crate::rounding::FILE,
        include_str!("../../../../data/us-rounding.toml"),
    ),
    (
        crate::fees::FILE,
        include_str!("../../../../data/us-fees.toml"),
    ),
    ("ip/ipv4.txt", include_str!("../../../../data/ip/ipv4.txt")),
    ("ip/ipv6.txt", include_str!("../../../../data/ip/ipv6.txt")),
    (
        "ip/ipv4-regions.txt",
        include_str!("../../../../data/ip/ipv4-regions.txt"),
    ),
    (
        "ip/ipv6-regions.txt",
        include_str!("../../../../data/ip/ipv6-regions.txt"),
    ),
];

/// Where the curated rules come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CuratedSource {
    /// The files compiled into this build ([`EMBEDDED`]).
    Embedded,
    /// A folder laid out like the repository's `data/` (`--data-dir`): it must hold every
    /// file of [`super::FILES`]; `ip/` and `us-local-taxes.toml` are optional there (without them,
    /// no curated IP ranges, and every US state's region-level answer is `STATE_ONLY`).
    Dir(std::path::PathBuf),
}

impl CuratedSource {
    /// The files of the taxability matrix (`taxability/<folder>/<place>.toml`), in path
    /// order, with their text; none when a folder has no `taxability/`.
    pub fn taxability_files(
        &self,
    ) -> Result<Vec<(String, std::borrow::Cow<'static, str>)>, CuratedError> {
        match self {
            CuratedSource::Embedded => Ok(crate::embedded::TAXABILITY
                .iter()
                .map(|(n, t)| (n.to_string(), std::borrow::Cow::Borrowed(*t)))
                .collect()),
            CuratedSource::Dir(dir) => {
                let mut out = Vec::new();
                for folder in ["ca", "intl", "us"] {
                    let path = dir.join(crate::matrix::DIR).join(folder);
                    let entries = match std::fs::read_dir(&path) {
                        Ok(e) => e,
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                        Err(e) => {
                            return Err(CuratedError::Io {
                                file: path.display().to_string(),
                                message: e.to_string(),
                            })
                        }
                    };
                    let mut names: Vec<String> = entries
                        .filter_map(|e| e.ok())
                        .map(|e| e.file_name().to_string_lossy().into_owned())
                        .filter(|n| n.ends_with(".toml"))
                        .collect();
                    names.sort();
                    for n in names {
                        let name = format!("{}/{folder}/{n}", crate::matrix::DIR);
                        let text = self.require(&name)?;
                        out.push((name, text));
                    }
                }
                Ok(out)
            }
        }
    }

    /// The text of `name` (a path inside `data/`, such as `ip/ipv4.txt`); `Ok(None)` when a
    /// folder lacks it.
    pub fn read(&self, name: &str) -> Result<Option<std::borrow::Cow<'static, str>>, CuratedError> {
        match self {
            CuratedSource::Embedded => Ok(EMBEDDED
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, text)| std::borrow::Cow::Borrowed(*text))),
            CuratedSource::Dir(dir) => {
                let path = dir.join(name);
                match std::fs::read_to_string(&path) {
                    Ok(text) => Ok(Some(std::borrow::Cow::Owned(text))),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                    Err(e) => Err(CuratedError::Io {
                        file: path.display().to_string(),
                        message: e.to_string(),
                    }),
                }
            }
        }
    }

    /// Like [`CuratedSource::read`], for a file that must be there.
    pub fn require(&self, name: &str) -> Result<std::borrow::Cow<'static, str>, CuratedError> {
        self.read(name)?.ok_or_else(|| CuratedError::Io {
            file: match self {
                CuratedSource::Embedded => format!("(embedded) {name}"),
                CuratedSource::Dir(dir) => dir.join(name).display().to_string(),
            },
            message: "no such file: a data folder holds every file of data/ (see data/README.md)"
                .into(),
        })
    }
}
