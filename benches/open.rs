//! Opening a table file, as every levy process does at start and on reload, beside what a
//! loader that checks nothing would cost, in the same run on the same file.
//!
//! - `table_open/levy_open_file`: `AnyTable::open_file`: map the file, check the header,
//!   verify the BLAKE3 content hash over every byte, validate the archive (bytecheck).
//! - `table_open/fs_read`: `std::fs::read` of the same file into the heap, no check at all:
//!   the floor a loader that copies pays.
//! - `table_open/sha256`: SHA-256 over the same bytes (already in memory): what format 1's
//!   content check cost, for comparison with BLAKE3 inside `open_file`.
//!
//! The file is the full US table built from `../shared/data` with the curated rules (ZIP5
//! rates for every state, the SST files, the CDTFA list: about 28 MB) when that folder is
//! present, else the synthetic table of `lib.rs` written to a file.
//! `cargo bench -p levy-benches --bench open -- --test` runs each once.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use levy_benches::{Size, Synthetic};
use levy_build::{build, BuildOptions, Input, InputKind};
use levy_core::AnyTable;
use sha2::{Digest, Sha256};

/// Writes the table to open and names what it is.
fn table_file() -> (PathBuf, String) {
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bench-open.levy");
    std::fs::create_dir_all(out.parent().expect("a folder")).expect("target tmp dir");
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data");
    let bytes = if shared.is_dir() {
        let sst = |n: &str| Input::new(InputKind::SstRates, shared.join("sst").join(n));
        let opts = BuildOptions {
            inputs: vec![
                Input::new(InputKind::Zip5, shared.join("zip5-rates-2025-12")),
                sst("GAR2026Q2FEB19.csv"),
                sst("MNR2026Q2FEB18.csv"),
                sst("WIR2026Q2FEB18.csv"),
                Input::new(
                    InputKind::SstBoundaries,
                    shared.join("sst/MNB2026Q2FEB18-sample.csv"),
                ),
                Input::new(InputKind::Cdtfa, shared.join("ca-cdtfa-2026-01")),
            ],
            curated: Some(levy_build::CuratedSource::Embedded),
            strict: false,
            build_time: Some(0),
            progress: None,
            usps_zips: false,
        };
        build(&opts).expect("build the full US table").bytes
    } else {
        Synthetic::generate(Size::from_args())
            .levy_table()
            .bytes()
            .to_vec()
    };
    std::fs::write(&out, &bytes).expect("write the table");
    let what = format!(
        "{} ({} bytes)",
        if shared.is_dir() {
            "full US table from shared/data"
        } else {
            "synthetic table"
        },
        bytes.len()
    );
    (out, what)
}

fn benches(c: &mut Criterion) {
    let (path, what) = table_file();
    eprintln!("table_open: {what}");
    let mut g = c.benchmark_group("table_open");
    g.bench_function("levy_open_file", |b| {
        b.iter(|| {
            let t = AnyTable::open_file(black_box(&path)).expect("opens");
            black_box(t.header().archive_len)
        })
    });
    g.bench_function("fs_read", |b| {
        b.iter(|| black_box(std::fs::read(black_box(&path)).expect("reads").len()))
    });
    let bytes = std::fs::read(&path).expect("reads");
    g.bench_function("sha256", |b| {
        b.iter(|| black_box(Sha256::digest(black_box(&bytes))))
    });
    g.finish();
}

criterion_group! {
    name = open;
    config = Criterion::default().sample_size(20).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(3));
    targets = benches
}
criterion_main!(open);
