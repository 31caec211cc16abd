//! Why a build fails: one error type for every part of the compiler.

use std::path::Path;

/// Why a build failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// A file or folder could not be read or written.
    #[error("{path}: {message}")]
    Io {
        /// The path.
        path: String,
        /// The operating system's message.
        message: String,
    },
    /// A folder input holds no file of the expected kind.
    #[error("{path}: no .{ext} files in this folder")]
    NoFiles {
        /// The folder.
        path: String,
        /// The extension looked for.
        ext: &'static str,
    },
    /// A bad row, in a `--strict` build.
    #[error("{file}:{line}: {message} (strict build)")]
    BadRow {
        /// File.
        file: String,
        /// 1-based line.
        line: u64,
        /// What is wrong.
        message: String,
    },
    /// A MaxMind database could not be read.
    #[error("{path}: not a readable MaxMind database: {message}")]
    Mmdb {
        /// The path.
        path: String,
        /// The reader's message.
        message: String,
    },
    /// The curated rules could not be loaded or applied.
    #[error("curated rules: {0}")]
    Curated(String),
    /// A local rates file (`--local-rates`) could not be read, or breaks its grammar; the
    /// message names the file and the key. Fix the file: a local rates file is read whole
    /// or not at all.
    #[error("local rates: {0}")]
    LocalRates(String),
    /// `SOURCE_DATE_EPOCH` is not a whole number of seconds.
    #[error("SOURCE_DATE_EPOCH {0:?} is not a whole number of seconds")]
    SourceDateEpoch(String),
    /// The table builder refused the data.
    #[error("table: {0}")]
    Table(#[from] levy_core::BuildError),
}

pub(crate) fn io_err(path: &Path, e: impl std::fmt::Display) -> BuildError {
    BuildError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}
