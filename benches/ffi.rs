//! The cost of the C boundary: `levy_calculate` called through its `extern "C"` function
//! against the same work done in Rust (`table.resolve` + `table.calculate`), on the same
//! sale and the same table, in the same run. The difference is what a point-of-sale
//! program pays for calling levy through `liblevy` instead of linking levy-core directly:
//! reading the C strings, building the sale, boxing the result (and freeing it).
//!
//! Run with `cargo bench -p levy-benches --bench ffi`; `-- --test` runs each once.

use std::ffi::CString;
use std::ptr;

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use levy::{
    levy_calculate, levy_calculate_batch, levy_engine_free, levy_engine_open, levy_result_free,
    LevyAddress, LevyBatchResult, LevyEngine, LevyResult, LevySale, LevySaleLine, LevyStatus,
};
use levy_core::{
    Address, AnyTable, AutomaticTax, Calculation, Currency, Customer, Date, Decimal, Location,
    Sale, SaleLine,
};

/// Tennessee 7% and Davidson county 2.25% on general merchandise, ZIP 37203; CLOTHING a
/// child of general merchandise at the same rates (levy-testkit's `Tennessee::c_abi`, the
/// table of the C tests).
fn fixture() -> Vec<u8> {
    levy_testkit::tennessee::Tennessee::c_abi().bytes()
}

/// 2026-03-01T00:00:00Z.
const MARCH_2026: i64 = 1_772_323_200;

fn bench_ffi(c: &mut Criterion) {
    let bytes = fixture();
    let dir = levy_testkit::target_temp_dir!("levy-bench-ffi");
    let path = dir.join("fixture.levy");
    std::fs::write(&path, &bytes).unwrap();

    // The C side: an engine over the file, a sale of two lines at 37203.
    let c_path = CString::new(path.to_str().unwrap()).unwrap();
    let mut engine: *mut LevyEngine = ptr::null_mut();
    // SAFETY: valid NUL-terminated path and a valid out-pointer.
    assert_eq!(
        unsafe { levy_engine_open(c_path.as_ptr(), &mut engine) },
        LevyStatus::LEVY_OK
    );
    let (postal, region, country) = (c"37203", c"TN", c"US");
    let address = LevyAddress {
        line1: ptr::null(),
        line2: ptr::null(),
        city: ptr::null(),
        region: region.as_ptr(),
        postal_code: postal.as_ptr(),
        country: country.as_ptr(),
    };
    let lines = [
        LevySaleLine {
            amount: 1999,
            quantity: 1,
            category: c"GENERAL_MERCHANDISE".as_ptr(),
            tax_code: ptr::null(),
        },
        LevySaleLine {
            amount: 1000,
            quantity: 2,
            category: c"CLOTHING".as_ptr(),
            tax_code: ptr::null(),
        },
    ];
    let c_sale = LevySale {
        address: &address,
        ip: ptr::null(),
        ip_mode: 0,
        currency: c"USD".as_ptr(),
        flags: 0,
        transacted_at: MARCH_2026,
        lines: lines.as_ptr(),
        line_count: lines.len(),
        origin: ptr::null(),
        seller_sales_previous_year: 0,
        exchange_rate: ptr::null(),
    };

    // The Rust side: the same table (read the same way) and the same sale.
    let table = AnyTable::open_file(&path).unwrap();
    let rust_address = Address {
        region: "TN".into(),
        postal_code: "37203".into(),
        country: "US".into(),
        ..Address::default()
    };
    let date = Date::from_unix_seconds(MARCH_2026);
    let rust_sale = Sale {
        currency: Currency::USD,
        tax_included: false,
        customer: Customer::default(),
        automatic_tax: AutomaticTax::Auto,
        date,
        origin_country: None,
        rounding: levy_core::Rounding::Line,
        lines: vec![
            SaleLine {
                amount: Decimal::from(1999),
                quantity: 1,
                per_unit: false,
                tax_code: table.category("GENERAL_MERCHANDISE").unwrap(),
            },
            SaleLine {
                amount: Decimal::from(1000),
                quantity: 2,
                per_unit: false,
                tax_code: table.category("CLOTHING").unwrap(),
            },
        ],
    };
    // Both paths must agree before they are timed: 185 + 93 = 278 cents of tax.
    let calc = table
        .calculate(&table.resolve(&rust_address, date).unwrap(), &rust_sale)
        .unwrap();
    assert_eq!(calc.total_tax, Decimal::from(278));

    let mut g = c.benchmark_group("ffi/calculate_two_lines");
    g.bench_function("rust: resolve + calculate", |b| {
        b.iter(|| {
            let loc = table.resolve(black_box(&rust_address), date).unwrap();
            black_box(table.calculate(&loc, black_box(&rust_sale)).unwrap())
        })
    });
    // What levy_calculate does on top of the Rust call, done in Rust: look the categories
    // up by name and build the address from text. Separates the boundary's own cost from
    // the work any caller holding text (as a till does) must do.
    g.bench_function(
        "rust: from text (categories + address) + resolve + calculate",
        |b| {
            let mut sale = rust_sale.clone();
            let mut address = Address::default();
            b.iter(|| {
                for (line, name) in sale
                    .lines
                    .iter_mut()
                    .zip(["GENERAL_MERCHANDISE", "CLOTHING"])
                {
                    line.tax_code = table.category(black_box(name)).unwrap();
                }
                address.region.clear();
                address.region.push_str(black_box("TN"));
                address.postal_code.clear();
                address.postal_code.push_str(black_box("37203"));
                address.country.clear();
                address.country.push_str(black_box("US"));
                let loc = table.resolve(&address, date).unwrap();
                black_box(table.calculate(&loc, &sale).unwrap())
            })
        },
    );
    g.bench_function("c: levy_calculate + levy_result_free", |b| {
        b.iter(|| {
            let mut out: *mut LevyResult = ptr::null_mut();
            // SAFETY: engine is live; the sale's pointers outlive the call.
            let s = unsafe { levy_calculate(engine, black_box(&c_sale), &mut out) };
            debug_assert_eq!(s, LevyStatus::LEVY_OK);
            // SAFETY: out came from levy_calculate and is freed once.
            unsafe { levy_result_free(black_box(out)) };
        })
    });
    g.finish();

    // A batch of single-line sales at 37203, amounts from 1 cent up: the C batch call
    // against the Rust batch from the same text (each address resolved, then
    // `Table::calculate_batch` into kept buffers).
    const BATCH: usize = 1_000;
    let amounts: Vec<i64> = (0..BATCH as i64).map(|i| 1 + i * 997).collect();
    let c_lines: Vec<LevySaleLine> = amounts
        .iter()
        .map(|&amount| LevySaleLine {
            amount,
            quantity: 1,
            category: c"GENERAL_MERCHANDISE".as_ptr(),
            tax_code: ptr::null(),
        })
        .collect();
    // Each sale with an address struct of its own, as sales to many customers come (the
    // Rust side resolves each sale's address too); and every sale at one address struct,
    // as a store's till sells, where a sale shares the place of the sale before it.
    let c_addresses = vec![address; BATCH];
    let c_sales: Vec<LevySale> = c_lines
        .iter()
        .zip(&c_addresses)
        .map(|(line, address)| LevySale {
            address,
            lines: line,
            line_count: 1,
            ..c_sale
        })
        .collect();
    let c_till_sales: Vec<LevySale> = c_lines
        .iter()
        .map(|line| LevySale {
            lines: line,
            line_count: 1,
            ..c_sale
        })
        .collect();
    let general = table.category("GENERAL_MERCHANDISE").unwrap();
    let rust_sales: Vec<Sale> = amounts
        .iter()
        .map(|&amount| Sale {
            lines: vec![SaleLine {
                amount: Decimal::from(amount),
                quantity: 1,
                per_unit: false,
                tax_code: general,
            }],
            ..rust_sale.clone()
        })
        .collect();
    let mut out = vec![
        LevyBatchResult {
            status: LevyStatus::LEVY_OK,
            total_tax: 0,
            total_excluding_tax: 0,
            total_including_tax: 0,
            coverage: ptr::null(),
            stale_table: false,
        };
        BATCH
    ];
    let mut locations = vec![Location::default(); BATCH];
    let mut calcs: Vec<Calculation> = Vec::new();
    // Both must agree before they are timed: sale 999, 996,004 cents x 9.25% = 92,130.37.
    // SAFETY: engine is live; the sales' pointers outlive the call; out holds BATCH results.
    let s = unsafe { levy_calculate_batch(engine, c_sales.as_ptr(), BATCH, out.as_mut_ptr()) };
    assert_eq!(s, LevyStatus::LEVY_OK);
    for (loc, _) in locations.iter_mut().zip(&rust_sales) {
        table.resolve_into(&rust_address, date, loc).unwrap();
    }
    assert!(table
        .calculate_batch(locations.iter().zip(&rust_sales), &mut calcs)
        .is_empty());
    assert_eq!(out[999].total_tax, 92_130);
    let mut till_out = out.clone();
    // SAFETY: as above.
    let s = unsafe {
        levy_calculate_batch(engine, c_till_sales.as_ptr(), BATCH, till_out.as_mut_ptr())
    };
    assert_eq!(s, LevyStatus::LEVY_OK);
    assert!(
        out.iter()
            .zip(&till_out)
            .all(|(a, b)| (a.total_tax, a.total_including_tax)
                == (b.total_tax, b.total_including_tax))
    );
    assert_eq!(calcs[999].total_tax, Decimal::from(92_130));

    let mut g = c.benchmark_group("ffi/batch_1000_single_line_sales");
    g.throughput(Throughput::Elements(BATCH as u64));
    g.bench_function("rust: resolve_into each + calculate_batch", |b| {
        b.iter(|| {
            for loc in locations.iter_mut() {
                table
                    .resolve_into(black_box(&rust_address), date, loc)
                    .unwrap();
            }
            black_box(table.calculate_batch(locations.iter().zip(&rust_sales), &mut calcs))
        })
    });
    for (name, sales) in [
        ("c: levy_calculate_batch", &c_sales),
        ("c: levy_calculate_batch, one address struct", &c_till_sales),
    ] {
        g.bench_function(name, |b| {
            b.iter(|| {
                // SAFETY: as above.
                let s = unsafe {
                    levy_calculate_batch(engine, black_box(sales.as_ptr()), BATCH, out.as_mut_ptr())
                };
                debug_assert_eq!(s, LevyStatus::LEVY_OK);
                black_box(&out);
            })
        });
    }
    g.finish();

    // SAFETY: engine came from levy_engine_open and is freed once, after every use.
    unsafe { levy_engine_free(engine) };
    // The table file and its directory are removed when `dir` drops.
}

criterion_group!(benches, bench_ffi);
criterion_main!(benches);
