//! A ZIP5 table is built in the memory of what it places, not of its rows: a table of
//! 300,000 rows over 1,000 ZIPs (each given 300 times) takes no more memory to build than
//! one of 3,000 rows over the same ZIPs. Before, every row was held twice over while the
//! state rates were counted (5 million rows: 1.55 GiB of peak RSS, `benches/README.md`).
//!
//! The heap is measured by a counting allocator, process-wide, so this file holds one test.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use levy_build::{build, BuildOptions, Input, InputKind};

/// The system allocator, counting the bytes in use and their peak.
struct Counting;

static IN_USE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(by: usize) {
    let now = IN_USE.fetch_add(by, Ordering::SeqCst) + by;
    PEAK.fetch_max(now, Ordering::SeqCst);
}

// SAFETY: every call is passed to the system allocator unchanged; the counters are atomics.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) };
        IN_USE.fetch_sub(layout.size(), Ordering::SeqCst);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            IN_USE.fetch_sub(layout.size(), Ordering::SeqCst);
            grew(new_size);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The peak heap, above what was in use before, of building a ZIP5 table of `rows` rows
/// that name ZIPs 37000 to 37999 in turn (Tennessee, 7% and a county rate per ZIP).
fn peak_of_building(dir: &std::path::Path, rows: usize) -> usize {
    let path = dir.join("TAXRATES_ZIP5_TN202512.csv");
    let mut text = String::with_capacity(rows * 70);
    text.push_str(&levy_build::parse::ZIP5_HEADER.join(","));
    text.push('\n');
    for i in 0..rows {
        let zip = 37_000 + i % 1000;
        let county = (i % 1000) % 40 * 500;
        text.push_str(&format!(
            "TN,{zip},REGION {},0.{:06},0.070000,0.{county:06},0.000000,0.000000,1\n",
            i % 1000,
            70_000 + county
        ));
    }
    std::fs::write(&path, text).unwrap();
    let opts = BuildOptions {
        inputs: vec![Input::new(InputKind::Zip5, &path)],
        curated: None,
        strict: true,
        build_time: Some(0),
        progress: None,
        usps_zips: false,
    };
    let before = IN_USE.load(Ordering::SeqCst);
    PEAK.store(before, Ordering::SeqCst);
    let report = build(&opts).unwrap();
    let peak = PEAK.load(Ordering::SeqCst) - before;
    assert_eq!(report.summary.bad_rows.len(), 0);
    drop(report);
    peak
}

#[test]
fn a_zip5_table_is_built_without_holding_its_rows() {
    let dir = levy_testkit::target_temp_dir!("levy-build-memory");
    let small = peak_of_building(&dir, 3_000);
    let large = peak_of_building(&dir, 300_000);
    // With every row held (twice over while the state rates were counted) the peaks were
    // 2.7 MB and 122 MB; without them the two builds differ by next to nothing.
    assert!(
        large < small + (8 << 20),
        "3,000 rows: {small} bytes at the peak; 300,000 rows: {large}"
    );
}
