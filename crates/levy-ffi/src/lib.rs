//! levy's C ABI: `liblevy.so` / `liblevy.a` and the header `include/levy.h`.
//!
//! Two ways in:
//!
//! 1. **The engine** ([`levy_engine_open`], [`levy_calculate`], [`LevyResult`] accessors):
//!    plain C structs in, plain C structs out, no JSON, no I/O after open. An engine is
//!    immutable and shared by any number of threads.
//! 2. **The service** ([`levy_service_open`], [`levy_service_request`]): the whole tax
//!    service interface in-process, JSON in and JSON out, exactly as `levy serve` answers,
//!    with a ledger file of the till's own.
//!
//! # Conventions
//!
//! * Every fallible function returns a [`LevyStatus`]; `LEVY_OK` is 0 and values are never
//!   reused. Results come back through out-pointers, which are written only on success.
//! * A failing call also leaves a message for the calling thread, read with
//!   [`levy_last_error_message`]. It describes the most recent failed call on that thread
//!   and stays valid until the next failed call on that thread.
//! * Every exported function catches panics at the boundary and answers `LEVY_PANIC`; no
//!   call unwinds into C or aborts the host process.
//! * NULL where a value is required is `LEVY_NULL_ARGUMENT`; text that is not UTF-8 is
//!   `LEVY_INVALID_UTF8`.
//! * Every string handed out is NUL-terminated UTF-8 and owned by the object it came from.

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

use std::cell::RefCell;
use std::ffi::{c_char, c_int, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

mod engine;
mod service;
mod sync;

pub use engine::*;
pub use service::*;
pub use sync::*;

/// Major version of this library; equals `levy_version()`'s first number.
pub const LEVY_VERSION_MAJOR: u32 = 0;
/// Minor version of this library.
pub const LEVY_VERSION_MINOR: u32 = 1;
/// Patch version of this library.
pub const LEVY_VERSION_PATCH: u32 = 0;

/// The outcome of a call. `LEVY_OK` is 0; the other values are never reused for another
/// meaning, so a program compiled against an older header reads newer libraries correctly.
#[repr(C)]
#[allow(non_camel_case_types)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LevyStatus {
    /// Success; the out-pointer was written.
    LEVY_OK = 0,
    /// A required pointer argument was NULL.
    LEVY_NULL_ARGUMENT = 1,
    /// A string argument was not valid UTF-8.
    LEVY_INVALID_UTF8 = 2,
    /// levy failed internally (a bug); the call had no effect. Please report it.
    LEVY_PANIC = 3,
    /// A file could not be read or written (missing, permissions).
    LEVY_IO_ERROR = 4,
    /// A table file is not a valid levy table (truncated, corrupt, wrong version).
    LEVY_INVALID_TABLE = 5,
    /// An argument has a value out of its range (unknown flag bit, IP mode, missing
    /// address and IP, malformed service configuration).
    LEVY_INVALID_ARGUMENT = 6,
    /// The sale's currency is not an ISO 4217 code levy knows.
    LEVY_UNKNOWN_CURRENCY = 7,
    /// A line's category or tax code is not in the table.
    LEVY_UNKNOWN_TAX_CODE = 8,
    /// The address or IP address could not be resolved to a taxing location.
    LEVY_RESOLUTION_FAILED = 9,
    /// The sale is invalid: a line's amount or quantity is out of range, or the totals do
    /// not fit in `int64_t`.
    LEVY_INVALID_SALE = 10,
    /// An index passed to an accessor is past the end.
    LEVY_INDEX_OUT_OF_RANGE = 11,
    /// The service could not be opened (ledger or keys).
    LEVY_SERVICE_ERROR = 12,
    /// A sync stopped (the ledger, the network or the central server); call it again.
    LEVY_SYNC_ERROR = 13,
    /// The sale is in another currency than its place's and a rule there has an amount in
    /// the place's currency (a band, a threshold, a cap, a fee): give
    /// `LevySale.exchange_rate`. Also an exchange rate that is not a positive decimal.
    LEVY_EXCHANGE_RATE_REQUIRED = 14,
}

/// An error on its way to the C caller: a status and the message for
/// `levy_last_error_message`.
#[derive(Debug)]
pub(crate) struct Error {
    pub(crate) status: LevyStatus,
    pub(crate) message: String,
    /// The front door's kind of a refused sale, for `levy_last_error_kind`.
    pub(crate) kind: Option<levy_core::QuoteErrorKind>,
}

impl Error {
    pub(crate) fn new(status: LevyStatus, message: impl Into<String>) -> Error {
        Error {
            status,
            message: message.into(),
            kind: None,
        }
    }

    /// A refused sale's error, with its kind.
    pub(crate) fn of_kind(
        status: LevyStatus,
        kind: levy_core::QuoteErrorKind,
        message: impl Into<String>,
    ) -> Error {
        Error {
            status,
            message: message.into(),
            kind: Some(kind),
        }
    }
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
    static LAST_KIND: std::cell::Cell<Option<levy_core::QuoteErrorKind>> =
        const { std::cell::Cell::new(None) };
}

/// A NUL-terminated copy of `s`; interior NUL bytes (possible only in damaged data) are
/// dropped rather than truncating the text.
pub(crate) fn cstring(s: &str) -> CString {
    CString::new(s.replace('\0', "")).unwrap_or_default()
}

fn set_last_error(message: &str) {
    let _ = LAST_KIND.try_with(|k| k.set(None));
    let message = cstring(message);
    // try_with: during thread teardown the slot may be gone; the status still tells.
    let _ = LAST_ERROR.try_with(|slot| *slot.borrow_mut() = message);
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> &str {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s
    } else {
        "unknown panic"
    }
}

/// Runs `f` behind the panic boundary: its error becomes the status and the thread's last
/// error message; a panic becomes `LEVY_PANIC`.
pub(crate) fn guard(f: impl FnOnce() -> Result<(), Error>) -> LevyStatus {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => LevyStatus::LEVY_OK,
        Ok(Err(e)) => {
            set_last_error(&e.message);
            let _ = LAST_KIND.try_with(|k| k.set(e.kind));
            e.status
        }
        Err(payload) => {
            set_last_error(&format!(
                "internal error in levy: {}",
                panic_message(payload.as_ref())
            ));
            LevyStatus::LEVY_PANIC
        }
    }
}

/// Runs `f` behind the panic boundary for functions that return a value instead of a
/// status; a panic answers `fallback`.
pub(crate) fn guard_value<T>(fallback: T, f: impl FnOnce() -> T) -> T {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => v,
        Err(payload) => {
            set_last_error(&format!(
                "internal error in levy: {}",
                panic_message(payload.as_ref())
            ));
            fallback
        }
    }
}

/// The panic boundary of every export. `ffi_guard!({ ... })` runs a block returning
/// `Result<(), Error>` and answers a [`LevyStatus`]; `ffi_guard!(fallback => { ... })` runs
/// a block returning a value and answers `fallback` on panic.
macro_rules! ffi_guard {
    ($fallback:expr => $body:block) => {
        $crate::guard_value($fallback, move || $body)
    };
    ($body:block) => {
        $crate::guard(move || $body)
    };
}
pub(crate) use ffi_guard;

/// `Err(LEVY_NULL_ARGUMENT)` naming the argument when `ptr` is NULL.
macro_rules! non_null {
    ($ptr:expr, $name:expr) => {
        if $ptr.is_null() {
            return Err($crate::Error::new(
                $crate::LevyStatus::LEVY_NULL_ARGUMENT,
                concat!("argument `", $name, "` is NULL"),
            ));
        }
    };
}
pub(crate) use non_null;

/// Reads a required NUL-terminated UTF-8 argument.
///
/// # Safety
///
/// `ptr` must be NULL or point to a NUL-terminated string that lives for `'a`.
pub(crate) unsafe fn str_arg<'a>(ptr: *const c_char, name: &str) -> Result<&'a str, Error> {
    if ptr.is_null() {
        return Err(Error::new(
            LevyStatus::LEVY_NULL_ARGUMENT,
            format!("argument `{name}` is NULL"),
        ));
    }
    // SAFETY: non-null, and the caller promises a NUL-terminated string living for 'a.
    let bytes = unsafe { CStr::from_ptr(ptr) }.to_bytes();
    std::str::from_utf8(bytes).map_err(|e| {
        Error::new(
            LevyStatus::LEVY_INVALID_UTF8,
            format!(
                "argument `{name}` is not valid UTF-8 (at byte {})",
                e.valid_up_to()
            ),
        )
    })
}

/// Reads an optional NUL-terminated UTF-8 argument: NULL is `None`.
///
/// # Safety
///
/// As for [`str_arg`].
pub(crate) unsafe fn opt_str_arg<'a>(
    ptr: *const c_char,
    name: &str,
) -> Result<Option<&'a str>, Error> {
    if ptr.is_null() {
        Ok(None)
    } else {
        // SAFETY: forwarded from the caller's promise.
        unsafe { str_arg(ptr, name) }.map(Some)
    }
}

/// The library's version, `"MAJOR.MINOR.PATCH"`, as a static NUL-terminated string (never
/// freed). Compare with the `LEVY_VERSION_*` macros of the header you compiled against.
#[no_mangle]
pub extern "C" fn levy_version() -> *const c_char {
    ffi_guard!(c"".as_ptr() => { concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast() })
}

/// A static, NUL-terminated English description of a status (never freed). Any `int`
/// is accepted; values this library does not know answer `"unknown status"`.
#[no_mangle]
pub extern "C" fn levy_status_message(status: c_int) -> *const c_char {
    ffi_guard!(c"".as_ptr() => { status_message(status).as_ptr() })
}

fn status_message(status: c_int) -> &'static CStr {
    LevyStatus::ALL
        .iter()
        .find(|&&s| s as c_int == status)
        .map_or(c"unknown status", |s| s.message())
}

/// The message of each status, by variant: the numbers are the enum's alone (written out
/// above, where cbindgen reads them), and this list gives [`LevyStatus::message`] and
/// [`LevyStatus::ALL`]. Its `match` is exhaustive, so a status added to the enum without
/// a message here does not compile, and `ALL` holds every status.
macro_rules! status_messages {
    ($($variant:ident => $message:literal,)*) => {
        impl LevyStatus {
            /// Every status, once each, in the order of their numbers.
            pub(crate) const ALL: &'static [LevyStatus] = &[$(LevyStatus::$variant,)*];

            /// The English description [`levy_status_message`] answers.
            pub(crate) const fn message(self) -> &'static CStr {
                match self {
                    $(LevyStatus::$variant => $message,)*
                }
            }
        }
    };
}

status_messages! {
    LEVY_OK => c"ok",
    LEVY_NULL_ARGUMENT => c"a required pointer argument was NULL",
    LEVY_INVALID_UTF8 => c"a string argument was not valid UTF-8",
    LEVY_PANIC => c"levy failed internally (a bug); the call had no effect",
    LEVY_IO_ERROR => c"a file could not be read or written",
    LEVY_INVALID_TABLE => c"the table file is not a valid levy table",
    LEVY_INVALID_ARGUMENT => c"an argument is out of its range",
    LEVY_UNKNOWN_CURRENCY => c"unknown currency",
    LEVY_UNKNOWN_TAX_CODE => c"unknown product category or tax code",
    LEVY_RESOLUTION_FAILED => c"the address or IP address could not be resolved",
    LEVY_INVALID_SALE => c"invalid sale (line amount or quantity out of range)",
    LEVY_INDEX_OUT_OF_RANGE => c"index out of range",
    LEVY_SERVICE_ERROR => c"the service could not be opened",
    LEVY_SYNC_ERROR => c"the sync stopped (ledger, network or central server); call it again",
    LEVY_EXCHANGE_RATE_REQUIRED => c"the sale's currency is not its place's: give the exchange rate",
}

/// The message of the most recent failed call on the calling thread (an empty string when
/// none has failed). NUL-terminated, owned by levy, valid until the next failed call on the
/// same thread; copy it to keep it. Thread-safe: each thread has its own message.
#[no_mangle]
pub extern "C" fn levy_last_error_message() -> *const c_char {
    ffi_guard!(c"".as_ptr() => {
        LAST_ERROR
            .try_with(|slot| slot.borrow().as_ptr())
            .unwrap_or(c"".as_ptr())
    })
}

/// The kind of the most recent failed call's refusal on the calling thread, when it
/// refused a sale: the front door's stable name (`"UNSUPPORTED_LOCATION"`,
/// `"EXCHANGE_RATE_REQUIRED"`, `"NO_PLACE"`, ...), the same that levy's other fronts give
/// (the service interface's error type for a place, the Python exception's `kind`, `levy
/// calc`'s `kind`); an empty string when the last failure was no refused sale (or none
/// failed). A static string: never free it. Thread-safe.
#[no_mangle]
pub extern "C" fn levy_last_error_kind() -> *const c_char {
    ffi_guard!(c"".as_ptr() => {
        LAST_KIND
            .try_with(|k| k.get())
            .ok()
            .flatten()
            .map_or(c"".as_ptr(), |k| kind_cstr(k).as_ptr())
    })
}

/// A kind's name as a static C string, made once per process.
fn kind_cstr(kind: levy_core::QuoteErrorKind) -> &'static CStr {
    static NAMES: std::sync::OnceLock<Vec<CString>> = std::sync::OnceLock::new();
    let names = NAMES.get_or_init(|| {
        levy_core::QuoteErrorKind::ALL
            .iter()
            .map(|k| cstring(k.name()))
            .collect()
    });
    levy_core::QuoteErrorKind::ALL
        .iter()
        .position(|k| *k == kind)
        .and_then(|i| names.get(i))
        .map_or(c"", |c| c.as_c_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_macros_match_cargo_toml() {
        // The header's LEVY_VERSION_* come from these constants; Cargo.toml is the truth.
        assert_eq!(
            LEVY_VERSION_MAJOR.to_string(),
            env!("CARGO_PKG_VERSION_MAJOR")
        );
        assert_eq!(
            LEVY_VERSION_MINOR.to_string(),
            env!("CARGO_PKG_VERSION_MINOR")
        );
        assert_eq!(
            LEVY_VERSION_PATCH.to_string(),
            env!("CARGO_PKG_VERSION_PATCH")
        );
        // SAFETY: levy_version returns a static NUL-terminated string.
        let v = unsafe { CStr::from_ptr(levy_version()) }.to_str().unwrap();
        assert_eq!(v, env!("CARGO_PKG_VERSION"));
    }

    #[test]
    fn a_panic_becomes_levy_panic_with_a_message() {
        let status = ffi_guard!({
            let v: Vec<u8> = Vec::new();
            // An out-of-bounds index panics; the boundary must catch it.
            let _ = v[std::hint::black_box(3)];
            Ok(())
        });
        assert_eq!(status, LevyStatus::LEVY_PANIC);
        // SAFETY: the message pointer is valid until the next failed call on this thread.
        let msg = unsafe { CStr::from_ptr(levy_last_error_message()) }
            .to_str()
            .unwrap();
        assert!(
            msg.starts_with("internal error in levy: index out of bounds"),
            "{msg}"
        );
        assert_eq!(ffi_guard!(7u16 => { panic!("boom") }), 7);
    }

    #[test]
    fn every_status_has_its_own_message() {
        // Every status once, in the order of their numbers, `LEVY_OK` first.
        assert_eq!(LevyStatus::ALL[0], LevyStatus::LEVY_OK);
        for pair in LevyStatus::ALL.windows(2) {
            assert!((pair[0] as c_int) < (pair[1] as c_int), "{pair:?}");
        }
        let known: Vec<&CStr> = LevyStatus::ALL
            .iter()
            // SAFETY: static strings.
            .map(|&s| unsafe { CStr::from_ptr(levy_status_message(s as c_int)) })
            .collect();
        for (i, m) in known.iter().enumerate() {
            assert_eq!(*m, LevyStatus::ALL[i].message());
            assert_ne!(m.to_bytes(), b"unknown status", "status {i}");
            assert_eq!(
                known.iter().filter(|o| *o == m).count(),
                1,
                "status {i} shares its message"
            );
        }
        let past_the_last = LevyStatus::ALL[LevyStatus::ALL.len() - 1] as c_int + 1;
        for unknown in [past_the_last, -1, c_int::MAX, c_int::MIN] {
            // SAFETY: static string.
            let m = unsafe { CStr::from_ptr(levy_status_message(unknown)) };
            assert_eq!(m.to_bytes(), b"unknown status", "{unknown}");
        }
    }
}
