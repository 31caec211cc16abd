//! Scratch directories that remove themselves.

use std::ffi::OsStr;
use std::fmt;
use std::ops::Deref;
use std::path::Path;

/// A fresh directory, removed with everything in it when the value is dropped (also when
/// the test panics and unwinds).
///
/// It dereferences to its [`Path`], so `dir.join("x")` and `&dir` as `AsRef<Path>` work as
/// they would with a `PathBuf`. Keep the value alive for as long as anything uses the
/// directory: `let _ = TempDir::new_in(..)` removes it at once.
pub struct TempDir(tempfile::TempDir);

impl TempDir {
    /// A new directory in `parent` (created first when missing), named `prefix` followed by
    /// random characters, so tests running in parallel, or several runs at once, never share
    /// one. Panics when the directory cannot be created.
    pub fn new_in(parent: impl AsRef<Path>, prefix: &str) -> TempDir {
        let parent = parent.as_ref();
        std::fs::create_dir_all(parent)
            .unwrap_or_else(|e| panic!("creating {}: {e}", parent.display()));
        let dir = tempfile::Builder::new()
            .prefix(&format!("{prefix}-"))
            .tempdir_in(parent)
            .unwrap_or_else(|e| panic!("a temporary directory in {}: {e}", parent.display()));
        TempDir(dir)
    }

    /// A new directory in the system's temporary directory ([`std::env::temp_dir`]).
    pub fn new(prefix: &str) -> TempDir {
        TempDir::new_in(std::env::temp_dir(), prefix)
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        self.0.path()
    }
}

impl Deref for TempDir {
    type Target = Path;

    fn deref(&self) -> &Path {
        self.path()
    }
}

impl AsRef<Path> for TempDir {
    fn as_ref(&self) -> &Path {
        self.path()
    }
}

impl AsRef<OsStr> for TempDir {
    fn as_ref(&self) -> &OsStr {
        self.path().as_os_str()
    }
}

impl fmt::Debug for TempDir {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("TempDir").field(&self.path()).finish()
    }
}

/// A [`TempDir`] under cargo's per-target temporary directory (`target/tmp`, the
/// `CARGO_TARGET_TMPDIR` of the calling integration test or bench), named `prefix-XXXXXX`.
///
/// ```ignore
/// let dir = levy_testkit::target_temp_dir!("levy-build-streets");
/// std::fs::write(dir.join("streets.csv"), "…").unwrap();
/// // removed here, when `dir` goes out of scope
/// ```
#[macro_export]
macro_rules! target_temp_dir {
    ($prefix:expr) => {
        $crate::TempDir::new_in(env!("CARGO_TARGET_TMPDIR"), $prefix)
    };
}
