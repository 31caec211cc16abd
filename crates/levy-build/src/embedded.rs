//! The taxability matrix compiled into this build (listed by `build.rs`).

include!(concat!(env!("OUT_DIR"), "/taxability.rs"));
