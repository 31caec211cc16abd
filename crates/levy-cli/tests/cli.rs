//! The `levy` binary as a user runs it.

use std::path::PathBuf;
use std::process::{Command, Output};

fn levy(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_levy"))
        .args(args)
        .output()
        .expect("run levy")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A fresh directory, removed when the test ends.
fn temp_dir(name: &str) -> levy_testkit::TempDir {
    levy_testkit::TempDir::new(&format!("levy-cli-test-{name}"))
}

#[test]
fn calc_on_the_embedded_default_tennessee() {
    // Nashville: Tennessee's 7% (Tenn. Code Ann. 67-6-202), Davidson County's 2.25% (the
    // Department of Revenue's County and City Local Tax Rates) and its 0.5% transit surcharge
    // from 2025-02-01 (Important Notice #24-11); Tennessee taxes clothing at the general rate.
    // Line by line: 100.00 x 9.75% = 9.75; 25.00 x 9.75% = 2.4375, rounded 2.44; 12.19 in all.
    // Every city of Davidson levies the county's rate, so the answer is complete: no warning.
    let o = levy(&[
        "calc",
        "--postal-code",
        "37203",
        "--province",
        "TN",
        "--line",
        "100.00",
        "--line",
        "25.00x2:CLOTHING",
        "--date",
        "2026-03-01",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = stdout(&o);
    assert!(out.contains("NASHVILLE, TN, 37203, US"), "{out}");
    assert!(
        out.contains("Total      125.00 + tax 12.19 = 137.19 USD"),
        "{out}"
    );
    assert!(out.contains("DAVIDSON COUNTY TRANSIT SURCHARGE"), "{out}");
    assert!(!out.contains("Warning"), "{out}");
}

#[test]
fn calc_json_is_exact_and_names_the_table() {
    // New York City clothing: the 4% state tax, New York City's 4.5% and the MCTD's 0.375% do
    // not apply to an item under $110 (N.Y. Tax Law 1115(a)(30), 1107; TB-ST-530); at $110.00
    // they do, 8.875% (Publication 718 (2/25), New York City): 440 + 495 + 41.25 = 976.25
    // cents, 976.
    let o = levy(&[
        "calc",
        "--postal-code",
        "10001",
        "--line",
        "109.99:CLOTHING",
        "--line",
        "110.00:CLOTHING",
        "--date",
        "2026-03-01",
        "--json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["line_items"][0]["tax_amount"].to_string(), "0");
    assert_eq!(
        v["line_items"][0]["tax_jurisdictions"][0]["note"],
        "BELOW_THRESHOLD"
    );
    assert_eq!(v["line_items"][1]["tax_amount"].to_string(), "976");
    assert_eq!(
        v["line_items"][1]["tax_jurisdictions"][0]["note"],
        "THRESHOLD"
    );
    assert_eq!(v["total_amount_including_tax"].to_string(), "22975");
    assert_eq!(v["table_hash"].as_str().unwrap().len(), 64);
}

#[test]
fn calc_tax_included_backs_out_exactly() {
    // Indiana 7% (IC 6-2.5-2-2, no local sales tax): 107.00 including tax is 100.00 + 7.00.
    let o = levy(&[
        "calc",
        "--postal-code",
        "46204",
        "--line",
        "107.00",
        "--tax-included",
        "--date",
        "2026-03-01",
    ]);
    assert!(o.status.success());
    assert!(
        stdout(&o).contains("Total      100.00 + tax 7.00 = 107.00 USD"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn calc_errors_are_clear_and_exit_nonzero() {
    let o = levy(&["calc", "--postal-code", "3720", "--line", "1.00"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("MALFORMED_ADDRESS"), "{err}");

    let o = levy(&[
        "calc",
        "--postal-code",
        "37203",
        "--province",
        "GA",
        "--line",
        "1.00",
    ]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("ZIP_STATE_MISMATCH"));

    let o = levy(&["calc", "--postal-code", "37203", "--line", "1.001"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("at most 2 decimal places"));

    let o = levy(&[
        "calc",
        "--postal-code",
        "37203",
        "--line",
        "1.00:NO_SUCH_CATEGORY",
    ]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown product category"));

    let o = levy(&[
        "calc",
        "--table",
        "/nonexistent/x.levy",
        "--postal-code",
        "37203",
        "--line",
        "1",
    ]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot read table"));
}

#[test]
fn build_info_diff_calc_round_trip() {
    let dir = temp_dir("build");
    let zip5 = |rate_county: &str, combined: &str| {
        format!(
            "State,ZipCode,TaxRegionName,EstimatedCombinedRate,StateRate,EstimatedCountyRate,EstimatedCityRate,EstimatedSpecialRate,RiskLevel\n\
             TN,37203,NASHVILLE,{combined},0.070000,{rate_county},0.000000,0.000000,0\n"
        )
    };
    std::fs::write(
        dir.join("TAXRATES_ZIP5_TN202512.csv"),
        zip5("0.022500", "0.092500"),
    )
    .unwrap();
    let old = dir.join("old.levy");
    let o = levy(&[
        "build",
        "--no-curated",
        "--out",
        old.to_str().unwrap(),
        "--zip5",
        dir.join("TAXRATES_ZIP5_TN202512.csv").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    // 9.25% of $100.00 (7% state + 2.25% county) = 9.25.
    let o = levy(&[
        "calc",
        "--table",
        old.to_str().unwrap(),
        "--postal-code",
        "37203",
        "--line",
        "100",
        "--date",
        "2026-03-01",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(stdout(&o).contains("tax 9.25 = 109.25"), "{}", stdout(&o));

    let o = levy(&["info", old.to_str().unwrap()]);
    assert!(o.status.success());
    assert!(
        stdout(&o).contains("TAXRATES_ZIP5_TN202512.csv"),
        "{}",
        stdout(&o)
    );

    // The county rate rises to 2.75%: the diff shows the change and nothing else unchanged.
    std::fs::write(
        dir.join("TAXRATES_ZIP5_TN202512.csv"),
        zip5("0.027500", "0.097500"),
    )
    .unwrap();
    let new = dir.join("new.levy");
    let o = levy(&[
        "build",
        "--no-curated",
        "--out",
        new.to_str().unwrap(),
        "--zip5",
        dir.join("TAXRATES_ZIP5_TN202512.csv").to_str().unwrap(),
    ]);
    assert!(o.status.success());
    let o = levy(&[
        "diff",
        old.to_str().unwrap(),
        new.to_str().unwrap(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = stdout(&o);
    assert!(text.contains("0.0275") && text.contains("0.0225"), "{text}");
}

#[test]
fn keys_new_prints_keys_once_and_stores_hashes() {
    let dir = temp_dir("keys");
    let keys = dir.join("keys.toml");
    let o = levy(&[
        "keys",
        "new",
        "--account",
        "shop",
        "--keys",
        keys.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = stdout(&o);
    let test_key = out
        .split_whitespace()
        .find(|w| w.starts_with("sk_test_"))
        .expect("a test key is printed");
    let stored = std::fs::read_to_string(&keys).unwrap();
    assert!(
        !stored.contains(test_key),
        "the keys file must hold hashes, not keys"
    );
}

#[test]
fn calc_says_when_local_taxes_are_missing() {
    // Memphis on the embedded default: the default holds no rate of Shelby County (the
    // copies of Tennessee's list that could be read stop at Davidson), and Tennessee has
    // county and city taxes everywhere, so the receipt warns and the JSON says STATE_ONLY.
    let args = [
        "calc",
        "--postal-code",
        "38103",
        "--line",
        "100.00",
        "--date",
        "2026-03-01",
    ];
    let o = levy(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = stdout(&o);
    assert!(out.contains("tax 7.00 = 107.00"), "{out}");
    assert!(
        out.contains("Warning    STATE_ONLY coverage: local taxes of 38103 TN US may be due"),
        "{out}"
    );
    let mut json_args = args.to_vec();
    json_args.push("--json");
    let v: serde_json::Value = serde_json::from_slice(&levy(&json_args).stdout).unwrap();
    assert_eq!(v["coverage"], "STATE_ONLY");
    // Indianapolis: Indiana levies no local sales tax (IC 6-2.5-2-2; listed in
    // data/us-local-taxes.toml), so the state's 7% is the whole answer: no warning.
    let o = levy(&[
        "calc",
        "--postal-code",
        "46204",
        "--line",
        "100.00",
        "--date",
        "2026-03-01",
    ]);
    let out = stdout(&o);
    assert!(out.contains("tax 7.00 = 107.00"), "{out}");
    assert!(!out.contains("Warning"), "{out}");
}

#[test]
fn calc_approximates_a_us_ip_to_a_zip_of_its_state() {
    // 8.8.8.8: DB-IP City Lite places it in Mountain View, California; the default's
    // region ranges carry the nearest California ZIP, 94043 (data/ip/ipv4-regions.txt), and
    // the CDTFA list of 2026-01-01 gives Mountain View 9.125%: $100.00 owes $9.13.
    let args = [
        "calc",
        "--ip",
        "8.8.8.8",
        "--ip-mode",
        "approximate",
        "--line",
        "100.00",
        "--date",
        "2026-03-01",
        "--json",
    ];
    let o = levy(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["address_used"]["address_postal_code"], "94043");
    assert_eq!(v["address_used"]["address_province"], "CA");
    assert_eq!(v["resolution_precision"], "APPROXIMATED");
    assert_eq!(v["total_tax_amount"], 913);
    // Strict mode (the default) will not guess a ZIP: the interface's US error.
    let o = levy(&["calc", "--ip", "8.8.8.8", "--line", "100.00"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("IP_RESOLUTION_INSUFFICIENT_US"), "{err}");
}

#[test]
fn a_table_that_is_not_a_regular_file_is_refused_at_once() {
    // `/dev/zero` would read forever (the issue measured 8-10 GB in 8 s): info, diff and
    // calc refuse it without reading, saying why.
    for args in [
        vec!["info", "/dev/zero"],
        vec!["diff", "/dev/zero", "/dev/zero"],
        vec![
            "calc",
            "--table",
            "/dev/zero",
            "--postal-code",
            "37203",
            "--line",
            "1",
        ],
    ] {
        let started = std::time::Instant::now();
        let o = levy(&args);
        assert!(!o.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("not a regular file"), "{args:?}: {err}");
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "{args:?}"
        );
    }
}

#[test]
fn build_refuses_an_input_that_is_not_a_regular_file_without_opening_it() {
    // A FIFO given as `--local-rates` (or any input) blocked the build in its open until a
    // writer came; `/dev/zero` would read forever. Each is refused, naming the path.
    let dir = temp_dir("fifo-input");
    let fifo = dir.join("TN.toml");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let out = dir.join("t.levy");
    for (flag, path) in [
        ("--local-rates", fifo.to_str().unwrap()),
        ("--zip5", "/dev/zero"),
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_levy"))
            .args([
                "build",
                "--no-curated",
                "--out",
                out.to_str().unwrap(),
                flag,
                path,
            ])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // A guard, not a measure: a build still blocked after a minute has hung.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while child.try_wait().unwrap().is_none() {
            if std::time::Instant::now() > deadline {
                child.kill().unwrap();
                child.wait().unwrap();
                panic!("levy build {flag} {path} blocked");
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let o = child.wait_with_output().unwrap();
        assert!(!o.status.success(), "{flag} {path}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(path) && err.contains("not a regular file"),
            "{flag} {path}: {err}"
        );
        assert!(!out.exists());
    }
}

#[test]
fn an_error_echoes_at_most_64_characters_of_an_argument() {
    // A 5,000-character `--state` was echoed whole (5,115 bytes of error). Every error,
    // levy's own and the argument parser's, echoes 64 characters of it and `…`.
    let dir = temp_dir("long-echo");
    let ledger = dir.join("ledger.sqlite");
    let long = "X".repeat(5000);
    let cut = format!("{}…", "X".repeat(64));
    for args in [
        vec![
            "report",
            "--ledger",
            ledger.to_str().unwrap(),
            "--account",
            "acct_echo",
            "--from",
            "2026-01-01",
            "--to",
            "2026-01-31",
            "--state",
            &long,
        ],
        vec![
            "report",
            "--ledger",
            ledger.to_str().unwrap(),
            "--account",
            "acct_echo",
            "--from",
            "2026-01-01",
            "--to",
            "2026-01-31",
            "--format",
            &long,
        ],
        vec!["calc", "--postal-code", "37203", "--line", &long],
    ] {
        let o = levy(&args);
        assert!(!o.status.success(), "{:?}", &args[..2]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(&cut), "{:?}: {err}", &args[..2]);
        assert!(!err.contains(&"X".repeat(65)), "{:?}: {err}", &args[..2]);
        assert!(err.len() < 1000, "{:?}: {} bytes", &args[..2], err.len());
    }
}

#[test]
fn a_damaged_table_is_refused_by_calc_and_info() {
    let dir = temp_dir("damaged");
    std::fs::write(
        dir.join("TAXRATES_ZIP5_TN202512.csv"),
        "State,ZipCode,TaxRegionName,EstimatedCombinedRate,StateRate,EstimatedCountyRate,EstimatedCityRate,EstimatedSpecialRate,RiskLevel\n\
         TN,37203,NASHVILLE,0.092500,0.070000,0.022500,0.000000,0.000000,0\n",
    )
    .unwrap();
    let good = dir.join("good.levy");
    let o = levy(&[
        "build",
        "--no-curated",
        "--out",
        good.to_str().unwrap(),
        "--zip5",
        dir.join("TAXRATES_ZIP5_TN202512.csv").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = levy(&["info", good.to_str().unwrap()]);
    assert!(stdout(&o).contains("(BLAKE3, verified)"), "{}", stdout(&o));
    // Change one byte in the middle of the archive, as a bad copy or disk would.
    let mut bytes = std::fs::read(&good).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x04;
    let bad = dir.join("bad.levy");
    std::fs::write(&bad, &bytes).unwrap();
    for args in [
        vec!["info", bad.to_str().unwrap()],
        vec![
            "calc",
            "--table",
            bad.to_str().unwrap(),
            "--postal-code",
            "37203",
            "--line",
            "100",
        ],
    ] {
        let o = levy(&args);
        assert!(!o.status.success(), "{args:?} accepted a damaged table");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("content hash mismatch") && err.contains("re-copy or rebuild"),
            "{args:?}: {err}"
        );
        assert!(o.stdout.is_empty(), "{args:?} printed an answer");
    }
}

/// A one-row Tennessee ZIP5 file (Nashville 37203: 7% state, 2.25% county) in `dir`.
fn nashville_zip5(dir: &std::path::Path) -> PathBuf {
    let path = dir.join("TAXRATES_ZIP5_TN202512.csv");
    std::fs::write(
        &path,
        "State,ZipCode,TaxRegionName,EstimatedCombinedRate,StateRate,EstimatedCountyRate,EstimatedCityRate,EstimatedSpecialRate,RiskLevel\n\
         TN,37203,NASHVILLE,0.092500,0.070000,0.022500,0.000000,0.000000,0\n",
    )
    .unwrap();
    path
}

/// `levy calc` of one $2,000.00 article in 37203 on `table`: its stdout.
fn nashville_2000(table: &std::path::Path) -> String {
    let o = levy(&[
        "calc",
        "--table",
        table.to_str().unwrap(),
        "--postal-code",
        "37203",
        "--line",
        "2000.00",
        "--date",
        "2026-03-01",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    stdout(&o)
}

#[test]
fn build_runs_from_any_folder_with_the_rules_compiled_in() {
    // The current directory is an empty folder with no data/ in it: the curated rules
    // come from the levy binary itself.
    let dir = temp_dir("anywhere");
    let input = nashville_zip5(&dir);
    let o = Command::new(env!("CARGO_BIN_EXE_levy"))
        .current_dir(&dir)
        .args(["build", "--out", "t.levy", "--zip5"])
        .arg(&input)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // With the curated Tennessee rules (Tenn. Code Ann. 67-6-702: local tax on the first
    // $1,600 of a single article; 67-6-202: the state single article tax of 2.75% on the
    // part from $1,600.01 to $3,200): 7% of 2,000.00 = 140.00, 2.25% of 1,600.00 = 36.00,
    // 2.75% of 400.00 = 11.00; tax 187.00. Without them the file's 9.25% would give 185.00.
    let out = nashville_2000(&dir.join("t.levy"));
    assert!(out.contains("tax 187.00 = 2187.00"), "{out}");

    // --data-dir: a copy of data/ whose Tennessee rate is 8% from 2026-01-01 changes the
    // state's part to 8% of 2,000.00 = 160.00: tax 207.00.
    let data = dir.join("data");
    let repo_data = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../data"));
    std::fs::create_dir_all(&data).unwrap();
    for entry in std::fs::read_dir(&repo_data).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            std::fs::copy(&path, data.join(path.file_name().unwrap())).unwrap();
        }
    }
    let states = std::fs::read_to_string(data.join("us-states.toml")).unwrap();
    let tn = r#"  { rate = "7%", from = 2002-07-15 },"#;
    assert_eq!(states.matches(tn).count(), 1, "the Tennessee chain moved");
    std::fs::write(
        data.join("us-states.toml"),
        states.replace(
            tn,
            &format!("{tn}\n  {{ rate = \"8%\", from = 2026-01-01 }},"),
        ),
    )
    .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_levy"))
        .current_dir(&dir)
        .args(["build", "--out", "t8.levy", "--data-dir", "data", "--zip5"])
        .arg(&input)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = nashville_2000(&dir.join("t8.levy"));
    assert!(out.contains("tax 207.00 = 2207.00"), "{out}");

    // A data folder without its files is refused, naming the missing file.
    let o = Command::new(env!("CARGO_BIN_EXE_levy"))
        .current_dir(&dir)
        .args([
            "build",
            "--out",
            "x.levy",
            "--data-dir",
            "nowhere",
            "--zip5",
        ])
        .arg(&input)
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("nowhere/taxonomy.toml"), "{err}");
    assert!(!dir.join("x.levy").exists());
}

#[test]
fn calc_taxes_shipping_by_the_taxable_share_of_the_order() {
    // Austin on the embedded default (Texas's 6.25%; 34 TAC 3.303: delivery is taxable in
    // proportion to the taxable items): $60.00 of clothing is taxed (3.75), $40.00 of
    // groceries is not, so 60% of the $10.00 shipping, $6.00, is taxed: 0.375 -> 0.38.
    let o = levy(&[
        "calc",
        "--postal-code",
        "78701",
        "--line",
        "60.00:CLOTHING",
        "--line",
        "40.00:GROCERIES",
        "--line",
        "10.00:SHIPPING",
        "--date",
        "2026-03-01",
        "--json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let ship = &v["line_items"][2];
    assert_eq!(ship["tax_amount"], 38);
    assert_eq!(ship["tax_jurisdictions"][0]["taxable_base"], 600);
    assert_eq!(
        ship["tax_jurisdictions"][0]["rate_type"],
        "DELIVERY, IN PROPORTION TO TAXABLE GOODS"
    );
    assert_eq!(v["total_tax_amount"], 413);
}

#[test]
fn calc_sources_an_intrastate_sale_by_the_states_rule() {
    // From San Jose (95132) to Mountain View (94043) on the embedded default: California's
    // modified origin rule takes the state and uniform local tax from the origin and the
    // district tax from the destination (CDTFA list of 2026-01-01: Mountain View 9.125%).
    let o = levy(&[
        "calc",
        "--postal-code",
        "94043",
        "--origin-postal-code",
        "95132",
        "--line",
        "100.00",
        "--date",
        "2026-03-01",
        "--json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["sourcing"], "MODIFIED_ORIGIN");
    assert_eq!(v["total_tax_amount"], 913);
    let js = v["line_items"][0]["tax_jurisdictions"].as_array().unwrap();
    assert_eq!(js[0]["jurisdiction_code"], "06");
    assert_eq!(js[0]["sourced_from"], "ORIGIN");
    assert_eq!(js.last().unwrap()["sourced_from"], "DESTINATION");
    // An origin in another state: taxed at the destination.
    let o = levy(&[
        "calc",
        "--postal-code",
        "94043",
        "--origin-postal-code",
        "37203",
        "--line",
        "100.00",
        "--date",
        "2026-03-01",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["sourcing"], "DESTINATION");
    assert_eq!(v["total_tax_amount"], 913);
}

#[test]
fn calc_rounds_once_per_invoice_where_the_state_allows_it() {
    // Ohio (SSUTA s. 324 lets a Streamlined state's seller round per invoice): Columbus
    // 43215 in Franklin County, 5.75% state + 2.25% county = 8% (Ohio Department of
    // Taxation, 2025 2nd quarter rate changes). Three 10-cent lines owe 0.8 cents each: 3
    // cents line by line, 2.4 -> 2 for the invoice.
    let args = |rounding: &'static str| {
        vec![
            "calc",
            "--postal-code",
            "43215",
            "--line",
            "0.10",
            "--line",
            "0.10",
            "--line",
            "0.10",
            "--date",
            "2026-03-01",
            "--rounding",
            rounding,
            "--json",
        ]
    };
    let v: serde_json::Value = serde_json::from_slice(&levy(&args("line")).stdout).unwrap();
    assert_eq!(
        (v["rounding"].as_str(), v["total_tax_amount"].as_i64()),
        (Some("LINE"), Some(3))
    );
    let v: serde_json::Value = serde_json::from_slice(&levy(&args("invoice")).stdout).unwrap();
    assert_eq!(
        (v["rounding"].as_str(), v["total_tax_amount"].as_i64()),
        (Some("INVOICE"), Some(2))
    );
    assert!(!levy(&args("banker")).status.success());
}

#[test]
fn bench_measures_the_embedded_default_beside_sqlite_as_json_lines() {
    // A short run: 300 keys, 3 rounds of 20. The figures vary; what a data team's scripts
    // rely on is the shape: one JSON object per measure, every field, and the ratio being
    // the baseline's median over levy's.
    let o = levy(&[
        "bench",
        "--json",
        "--keys",
        "300",
        "--rounds",
        "3",
        "--batch",
        "20",
        "--date",
        "2026-03-01",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let measures: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    let names: Vec<&str> = measures
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    // The default has ZIP codes and IP ranges (both families) but no ZIP+4 or street
    // ranges, so those two measures are left out.
    assert_eq!(
        names,
        [
            "open_verify",
            "zip5_resolve_calculate",
            "ipv4_lookup",
            "ipv6_lookup",
            "batch_calculate"
        ]
    );
    for m in &measures {
        let median = m["median_ns"].as_f64().unwrap();
        let base = m["baseline_median_ns"].as_f64().unwrap();
        assert!(median > 0.0 && base > 0.0, "{m}");
        assert!(m["p99_ns"].as_f64().unwrap() >= median, "{m}");
        let ratio = m["ratio"].as_f64().unwrap();
        assert!((ratio - base / median).abs() < 1e-9 * ratio.max(1.0), "{m}");
        assert!(m["keys"].as_u64().unwrap() >= 1, "{m}");
    }
    assert_eq!(measures[0]["baseline"], "memcpy");
    assert_eq!(measures[1]["baseline"], "sqlite");
    assert_eq!(measures[1]["keys"], 300);
    // Progress goes to stderr, never into the JSON, and names each measure left out and
    // why, so that a missing line does not read as a failure.
    let progress = String::from_utf8_lossy(&o.stderr);
    assert!(progress.contains("levy bench:"));
    for line in [
        "levy bench: ZIP+4 resolve + calculate: left out, the table holds no ZIP+4 range in force on 2026-03-01",
        "levy bench: street resolve + calculate: left out, the table holds no street range in force on 2026-03-01",
    ] {
        assert!(progress.lines().any(|l| l == line), "{line}\n{progress}");
    }
    assert!(!progress.contains("ipv4_lookup: left out"), "{progress}");
}

#[test]
fn bench_refuses_zero_keys_rounds_or_batch() {
    // A bench of nothing measures nothing: refused with what to fix, not run as one.
    for flag in ["--keys", "--rounds", "--batch"] {
        let o = levy(&["bench", flag, "0"]);
        assert!(!o.status.success(), "{flag} 0 accepted");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(flag) && err.contains("at least 1"), "{err}");
    }
}

#[test]
fn bench_refuses_a_missing_ip_database() {
    let o = levy(&["bench", "--mmdb", "/nonexistent/dbip.mmdb", "--keys", "10"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("/nonexistent/dbip.mmdb: no such file"));
}

/// Makes a ledger holding one live transaction through the service, as `levy serve` would
/// store it; returns the transaction id.
fn ledger_with_one_sale(path: &std::path::Path) -> String {
    let key = "sk_live_shop_cli_0001";
    let svc = levy_api::Service::open(levy_api::ServiceConfig {
        table: levy_api::TableSource::Table(std::sync::Arc::new(levy_data::open_default())),
        ledger: path.display().to_string(),
        keys: levy_api::KeySource::Inline(vec![levy_api::KeyEntry {
            account: "shop".into(),
            key: key.into(),
        }]),
    })
    .unwrap();
    let call = |path: &str, body: String| {
        let r = svc.handle(&levy_api::Request {
            method: "POST".into(),
            path: path.into(),
            query: String::new(),
            headers: vec![("authorization".into(), format!("Bearer {key}"))],
            body: body.into_bytes(),
            request_id: None,
        });
        assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
        serde_json::from_slice::<serde_json::Value>(&r.body).unwrap()
    };
    let calc = call(
        "/tax/calculations",
        r#"{"customer": {"address": {"address_line_1": "", "address_city": "NASHVILLE",
            "address_province": "TN", "address_postal_code": "37203", "address_country": "US",
            "address_type": "shipping"}},
           "order_details": {"customer_currency_code": "USD", "tax_included_in_amount": false,
            "line_items": [{"amount": 10000, "quantity": 1, "product_category": "GENERAL_MERCHANDISE"}]}}"#
            .to_string(),
    );
    let tx = call(
        "/tax/transactions",
        format!(
            r#"{{"calculation_id": "{}", "reference_order_id": "order-1"}}"#,
            calc["id"].as_str().unwrap()
        ),
    );
    tx["id"].as_str().unwrap().to_string()
}

#[test]
fn info_reports_a_ledgers_counts_and_finds_a_damaged_record_without_changing_the_file() {
    let dir = temp_dir("ledger-info");
    let path = dir.join("ledger.sqlite");
    let tx_id = ledger_with_one_sale(&path);
    let p = path.to_str().unwrap();

    let o = levy(&["info", "--ledger", p, "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let report: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    // One calculation made, one transaction from it, one live nexus total (TN).
    assert_eq!(report["rows"]["calculations"], 1);
    assert_eq!(report["rows"]["transactions"], 1);
    assert_eq!(report["rows"]["nexus"], 1);
    // And one month of sales in Tennessee.
    assert_eq!(report["rows"]["nexus_months"], 1);
    // And one day of liability: one state total (Tennessee, one currency, one rate table),
    // and a row for each of the sale's four jurisdiction entries: Tennessee's 7%, its
    // single article tax (2.75% on the part of an item over $1,600: Tenn. Code Ann.
    // 67-6-202; nothing on this $100 line, but an entry all the same), Davidson County's
    // 2.25% and its 0.5% transit surcharge.
    assert_eq!(report["rows"]["liability_totals"], 1);
    assert_eq!(report["rows"]["liability_rows"], 4);
    // Schema 11: the outbox of records to sync (4), no index on calculations' expiry (5),
    // each transaction's running refund total (6), registrations (7), monthly sales (8),
    // daily liability totals (9), answers kept under idempotency keys (10), and a
    // registration's seller and span with their index (11).
    assert_eq!(report["schema_version"], 11);
    assert_eq!(report["quick_check"], serde_json::json!(["ok"]));
    assert_eq!(report["damaged"], serde_json::json!([]));
    let text = stdout(&levy(&["info", "--ledger", p]));
    assert!(text.contains("every seal matches"), "{text}");

    // One digit of the stored transaction changed: reported, exit status failure, and
    // the file left exactly as it was.
    let mut bytes = std::fs::read(&path).unwrap();
    let id_at = bytes
        .windows(tx_id.len() + 7)
        .position(|w| w == format!(r#""id":"{tx_id}""#).as_bytes())
        .expect("the stored transaction");
    let digit = id_at
        + bytes[id_at..]
            .iter()
            .position(|b| b.is_ascii_digit() && *b != b'0')
            .unwrap();
    bytes[digit] = if bytes[digit] == b'9' {
        b'8'
    } else {
        bytes[digit] + 1
    };
    std::fs::write(&path, &bytes).unwrap();
    let o = levy(&["info", "--ledger", p]);
    assert!(!o.status.success());
    let text = stdout(&o);
    assert!(text.contains("1 DAMAGED"), "{text}");
    assert!(
        text.contains("transactions") && text.contains("digest mismatch"),
        "{text}"
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("is damaged"));
    assert_eq!(std::fs::read(&path).unwrap(), bytes);

    // Not a ledger: refused with the reason.
    let empty = dir.join("empty.sqlite");
    std::fs::write(&empty, b"").unwrap();
    let o = levy(&["info", "--ledger", empty.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("empty (0 bytes)"));
}

#[test]
fn calc_says_when_a_products_treatment_is_not_known() {
    // Missouri's matrix leaves prepared food at the state level unknown (RSMo 144.014: a
    // sandwich is SNAP food at 1.225% from a grocery, 4.225% from a restaurant, and the
    // code does not say which): the line is taxed at the rule it inherits (4.225% of 10.00
    // = 0.4225 -> 0.42) and marked, and the answer is PARTIAL. Candy is food there (RSMo
    // 144.014, SNAP definition): 1.225% of 5.00 = 0.06125 -> 0.06, known.
    let o = levy(&[
        "calc",
        "--postal-code",
        "63101",
        "--line",
        "10.00:PREPARED_FOOD",
        "--line",
        "5.00:CANDY",
        "--date",
        "2026-03-02",
        "--json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["taxability"], "UNKNOWN");
    assert_eq!(
        v["coverage"], "STATE_ONLY",
        "the place's lesser coverage stands"
    );
    let lines = v["line_items"].as_array().unwrap();
    assert_eq!(lines[0]["taxability"], "UNKNOWN");
    assert_eq!(lines[0]["taxability_unknown_in"][0], "US-MO state");
    assert_eq!(lines[0]["tax_amount"].to_string(), "42");
    assert_eq!(lines[1]["taxability"], "KNOWN");
    assert_eq!(lines[1]["tax_amount"].to_string(), "6");
    // The receipt says it in words.
    let o = levy(&[
        "calc",
        "--postal-code",
        "63101",
        "--line",
        "10.00:PREPARED_FOOD",
        "--date",
        "2026-03-02",
    ]);
    let out = stdout(&o);
    assert!(
        out.contains("treatment UNKNOWN in US-MO state") && out.contains("PARTIAL coverage"),
        "{out}"
    );
    // The District of Columbia has no local taxes: a restaurant meal is known (D.C. Code
    // 47-2002(a)(3) and 47-2002.02: 10%, 1.00 on 10.00) and the answer is FULL.
    let o = levy(&[
        "calc",
        "--postal-code",
        "20001",
        "--line",
        "10.00:RESTAURANT_MEALS",
        "--date",
        "2026-03-02",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (v["coverage"].as_str(), v["taxability"].as_str()),
        (Some("FULL"), Some("KNOWN"))
    );
    assert_eq!(v["total_tax_amount"].to_string(), "100");
}

#[test]
fn calc_jsonl_answers_a_sale_a_line_and_an_error_in_its_line() {
    // Three sales in, three lines out: Nashville groceries at Tennessee's 4% state food rate
    // (Tenn. Code Ann. 67-6-228) and the full local rate, Davidson's 2.25% and its 0.5%
    // transit surcharge (6.75 on 100.00), a ZIP that does not exist, and a line that is not
    // JSON.
    let dir = temp_dir("jsonl");
    let input = dir.path().join("sales.jsonl");
    std::fs::write(
        &input,
        concat!(
            "{\"postal_code\": \"37203\", \"lines\": [\"100.00:GROCERIES\"], \"date\": \"2026-03-02\"}\n",
            "{\"postal_code\": \"00000\", \"lines\": [\"1.00\"]}\n",
            "not json\n",
        ),
    )
    .unwrap();
    let o = levy(&["calc", "--jsonl", input.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = stdout(&o);
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert_eq!(lines[0]["total_tax_amount"].to_string(), "675");
    assert!(lines[1]["error"].as_str().unwrap().contains("00000") || lines[1]["error"].is_string());
    assert!(
        lines[2]["error"].as_str().unwrap().starts_with("line 3"),
        "{out}"
    );
    // The same sale through --json answers the same object.
    let o = levy(&[
        "calc",
        "--postal-code",
        "37203",
        "--line",
        "100.00:GROCERIES",
        "--date",
        "2026-03-02",
        "--json",
    ]);
    let single: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(single, lines[0]);
}

#[test]
fn taxability_prints_each_cell_with_its_source() {
    // The District of Columbia's restaurant meals: 10% (D.C. Code 47-2002(a)(3), 47-2002.02).
    let o = levy(&["taxability", "--state", "DC", "--code", "RESTAURANT_MEALS"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = stdout(&o);
    assert!(out.starts_with("US-DC  DISTRICT OF COLUMBIA"), "{out}");
    assert!(
        out.contains("rate: 10%") && out.contains("47-2002"),
        "{out}"
    );
    // As JSON, every cell of a place carries a source and an as-of date.
    let o = levy(&["taxability", "--state", "CA-ON", "--json"]);
    let cells: Vec<serde_json::Value> = serde_json::from_slice(&o.stdout).unwrap();
    assert!(cells.len() > 5);
    for c in &cells {
        assert_eq!(c["place"], "CA-ON");
        assert!(
            !c["source"].as_str().unwrap().is_empty() && c["as_of"].is_string(),
            "{c}"
        );
    }
    // Ontario's rebate on prepared food and drinks of $4.00 or less in one sale.
    assert!(
        cells.iter().any(|c| c["sale_at_most"] == "4.00"),
        "{cells:?}"
    );
    // An unknown code is refused with what to do.
    let o = levy(&["taxability", "--code", "NOT_A_CODE"]);
    assert!(!o.status.success());
}

#[test]
fn the_taxability_overview_pages_are_generated_from_the_default_table() {
    // docs/taxability/ is what `levy taxability --markdown` writes from the embedded default:
    // regenerate it with `levy taxability --markdown docs/taxability` after changing data/.
    let dir = temp_dir("overview");
    let o = levy(&["taxability", "--markdown", dir.path().to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let committed = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/taxability");
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut kept: Vec<String> = std::fs::read_dir(&committed)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    kept.sort();
    assert_eq!(names, kept, "docs/taxability/ is stale: regenerate it");
    for n in &names {
        let fresh = std::fs::read_to_string(dir.path().join(n)).unwrap();
        let old = std::fs::read_to_string(committed.join(n)).unwrap();
        assert!(
            fresh == old,
            "docs/taxability/{n} is stale: regenerate it (see this test)"
        );
    }
}

#[test]
fn taxability_markdown_never_writes_through_a_link_planted_in_its_folder() {
    // A link planted in DIR where a page goes (US-TN.md -> a file of the user's) would have
    // had `levy taxability --markdown DIR` overwrite the file it points to.
    let dir = temp_dir("markdown-link");
    let pages = dir.join("pages");
    std::fs::create_dir_all(&pages).unwrap();
    let victim = dir.join("victim.txt");
    std::fs::write(&victim, "the user's own file\n").unwrap();
    for planted in ["US-TN.md", "README.md"] {
        let link = pages.join(planted);
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let o = levy(&["taxability", "--markdown", pages.to_str().unwrap()]);
        assert!(!o.status.success(), "{planted}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(planted) && err.contains("symbolic link"),
            "{planted}: {err}"
        );
        assert_eq!(
            std::fs::read_to_string(&victim).unwrap(),
            "the user's own file\n"
        );
        // Nothing was written: the link is all the folder holds.
        let names: Vec<_> = std::fs::read_dir(&pages).unwrap().collect();
        assert_eq!(names.len(), 1, "{planted}");
        std::fs::remove_file(&link).unwrap();
    }
    // Without the link, the pages are written, as files of their own.
    let o = levy(&["taxability", "--markdown", pages.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let tn = std::fs::symlink_metadata(pages.join("US-TN.md")).unwrap();
    assert!(tn.is_file());
    assert!(!std::fs::read_dir(&pages).unwrap().any(|e| e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .contains(".tmp")));
}

#[test]
fn registrations_added_listed_and_expired_gate_the_services_sales() {
    let dir = temp_dir("registrations");
    let keys = dir.join("keys.toml");
    let ledger = dir.join("ledger.sqlite");
    let (keys_s, ledger_s) = (keys.to_str().unwrap(), ledger.to_str().unwrap());
    let o = levy(&["keys", "new", "--account", "shop", "--keys", keys_s]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = stdout(&o);
    let live_key = out
        .split_whitespace()
        .find(|w| w.starts_with("sk_live_"))
        .expect("a live key is printed")
        .to_string();
    let reg = |args: &[&str]| {
        let mut all = vec!["registrations"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["--account", "shop", "--keys", keys_s, "--ledger", ledger_s]);
        levy(&all)
    };
    // A $100.00 sale in Nashville 37203 on a day of March 2026, through the service on
    // the same ledger and keys: its total tax.
    let tax_on = |day: i64| {
        let svc = levy_api::Service::open(levy_api::ServiceConfig {
            table: levy_api::TableSource::Table(std::sync::Arc::new(levy_data::open_default())),
            ledger: ledger_s.to_string(),
            keys: levy_api::KeySource::File(keys.clone()),
        })
        .unwrap();
        let body = serde_json::json!({
            "customer": {"address": {"address_province": "TN", "address_postal_code": "37203",
                                     "address_country": "US"}},
            "origin_address": {"address_province": "TN", "address_postal_code": "37203",
                               "address_country": "US"},
            "order_details": {"customer_currency_code": "USD",
                              "line_items": [{"amount": 10000, "quantity": 1,
                                              "product_category": "GENERAL_MERCHANDISE"}]},
            // 2026-03-01T00:00:00Z is 1772323200.
            "transacted_at": 1_772_323_200 + (day - 1) * 86_400,
        });
        let r = svc.handle(&levy_api::Request {
            method: "POST".into(),
            path: "/tax/calculations".into(),
            query: String::new(),
            headers: vec![
                ("authorization".into(), format!("Bearer {live_key}")),
                ("x-api-version".into(), "2026-03-01".into()),
            ],
            body: body.to_string().into_bytes(),
            request_id: None,
        });
        assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
        let v: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
        v["total_tax_amount"].as_i64().unwrap()
    };
    // No registration: the table's Nashville rates, whatever they are, are collected.
    let everywhere = tax_on(16);
    assert!(everywhere > 0);
    // Registered in Texas only: nothing collected in Tennessee.
    let o = reg(&[
        "add",
        "--country",
        "US",
        "--region",
        "TX",
        "--from",
        "2026-01-01",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(stdout(&o).contains(" US-TX sales_tax 2026-01-01 .. (open) active"));
    assert_eq!(tax_on(16), 0);
    // And in Tennessee from the 15th: collected from that day.
    let o = reg(&[
        "add",
        "--country",
        "US",
        "--region",
        "TN",
        "--from",
        "2026-03-15",
        "--json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let tn: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(tn["active_from"], 1_773_532_800);
    assert_eq!(tax_on(14), 0);
    assert_eq!(tax_on(15), everywhere);
    // Both listed; the test mode has none.
    let listed = stdout(&reg(&["list"]));
    assert_eq!(listed.lines().count(), 2, "{listed}");
    assert!(stdout(&reg(&["list", "--test"])).is_empty());
    // Expired from the 20th: the 21st is not collected, the 16th still is.
    let id = tn["id"].as_str().unwrap();
    let o = reg(&["expire", id, "--at", "2026-03-20"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(stdout(&o).contains("2026-03-15 .. 2026-03-20 expired"));
    assert_eq!(tax_on(21), 0);
    assert_eq!(tax_on(16), everywhere);
    // Refusals say why and exit with failure.
    let o = reg(&["expire", id]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("REGISTRATION_ALREADY_EXPIRED"));
    let o = reg(&["add", "--country", "US", "--region", "ON"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("INVALID_REGION"));
    let o = reg(&[
        "add",
        "--country",
        "US",
        "--region",
        "TX",
        "--from",
        "2026-13-01",
    ]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("expected YYYY-MM-DD"));
}

#[test]
fn report_prints_what_the_ledgers_sales_owe() {
    let dir = temp_dir("report");
    let keys = dir.join("keys.toml");
    let ledger = dir.join("ledger.sqlite");
    let (keys_s, ledger_s) = (keys.to_str().unwrap(), ledger.to_str().unwrap());
    let o = levy(&["keys", "new", "--account", "shop", "--keys", keys_s]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let live_key = stdout(&o)
        .split_whitespace()
        .find(|w| w.starts_with("sk_live_"))
        .expect("a live key is printed")
        .to_string();
    // A $100.00 sale in Nashville 37203 on 2026-03-02, through the service on the same
    // ledger and keys.
    let svc = levy_api::Service::open(levy_api::ServiceConfig {
        table: levy_api::TableSource::Table(std::sync::Arc::new(levy_data::open_default())),
        ledger: ledger_s.to_string(),
        keys: levy_api::KeySource::File(keys.clone()),
    })
    .unwrap();
    let send = |path: &str, body: serde_json::Value| -> serde_json::Value {
        let r = svc.handle(&levy_api::Request {
            method: "POST".into(),
            path: path.into(),
            query: String::new(),
            headers: vec![("authorization".into(), format!("Bearer {live_key}"))],
            body: body.to_string().into_bytes(),
            request_id: None,
        });
        assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
        serde_json::from_slice(&r.body).unwrap()
    };
    let calc = send(
        "/tax/calculations",
        serde_json::json!({
            "customer": {"address": {"address_province": "TN", "address_postal_code": "37203",
                                     "address_country": "US"}},
            "order_details": {"customer_currency_code": "USD",
                              "line_items": [{"amount": 10000, "quantity": 1,
                                              "product_category": "GENERAL_MERCHANDISE"}]},
        }),
    );
    // 2026-03-02T00:00:00Z is 1772409600.
    send(
        "/tax/transactions",
        serde_json::json!({"calculation_id": calc["id"], "reference_order_id": "o-1",
                           "transaction_processed_at": 1_772_409_600}),
    );
    let tax = calc["total_tax_amount"]
        .as_i64()
        .expect("the calculation's tax");
    drop(svc);
    let report = |args: &[&str]| {
        let mut all = vec![
            "report",
            "--account",
            "shop",
            "--keys",
            keys_s,
            "--ledger",
            ledger_s,
        ];
        all.extend_from_slice(args);
        levy(&all)
    };
    let o = report(&["--from", "2026-03-01", "--to", "2026-03-31"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(r["object"], "tax.liability_report");
    assert_eq!(r["states"][0]["region"], "TN");
    assert_eq!(r["states"][0]["collected"].as_i64(), Some(tax));
    assert_eq!(r["states"][0]["sales"], 10000);
    // As CSV: Tennessee is written as rows, the state's line among them.
    let o = report(&[
        "--from",
        "2026-03-01",
        "--to",
        "2026-03-31",
        "--state",
        "tn",
        "--format",
        "csv",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let csv = stdout(&o);
    assert!(
        csv.starts_with("country,region,jurisdiction_code,"),
        "{csv}"
    );
    assert!(csv.lines().any(|l| l.starts_with("US,TN,47,")), "{csv}");
    // Recounted from the records, March is the same report: printed, exit status success.
    let o = report(&["--from", "2026-03-01", "--to", "2026-03-31", "--recount"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let recounted: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(recounted, r);
    // A daily total lost (Tennessee's 7% row of March 2, removed by hand): the report of
    // the totals no longer holds it, and the recount says where they differ.
    let conn = rusqlite::Connection::open(&ledger).unwrap();
    let removed = conn
        .execute(
            "DELETE FROM liability_rows WHERE code = '47' AND name = 'TENNESSEE'",
            [],
        )
        .unwrap();
    assert_eq!(removed, 1);
    drop(conn);
    let o = report(&["--from", "2026-03-01", "--to", "2026-03-31", "--recount"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("daily totals differ"), "{err}");
    assert!(err.contains("row TN 47 TENNESSEE STATE"), "{err}");
    // February has nothing; a period that ends before it starts is refused.
    let o = report(&["--from", "2026-02-01", "--to", "2026-02-28"]);
    let feb: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(feb["jurisdictions"], serde_json::json!([]));
    let o = report(&["--from", "2026-03-31", "--to", "2026-03-01"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("before from"));
}

#[test]
fn nexus_reports_each_states_crossing_from_the_ledgers_sales() {
    // Worked case "California: current-year sales pass $500,000 in June" (Cal. Rev. & Tax.
    // Code 6203(c)(4); Cal. Code Regs. tit. 18, 1684), one sale a month, recorded through the
    // service on the ledger and keys `levy nexus` reads.
    let dir = temp_dir("nexus");
    let keys = dir.join("keys.toml");
    let ledger = dir.join("ledger.sqlite");
    let (keys_s, ledger_s) = (keys.to_str().unwrap(), ledger.to_str().unwrap());
    let o = levy(&["keys", "new", "--account", "shop", "--keys", keys_s]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let live_key = stdout(&o)
        .split_whitespace()
        .find(|w| w.starts_with("sk_live_"))
        .expect("a live key is printed")
        .to_string();
    {
        let svc = levy_api::Service::open(levy_api::ServiceConfig {
            table: levy_api::TableSource::Table(std::sync::Arc::new(levy_data::open_default())),
            ledger: ledger_s.to_string(),
            keys: levy_api::KeySource::File(keys.clone()),
        })
        .unwrap();
        let call = |path: &str, body: serde_json::Value| {
            let r = svc.handle(&levy_api::Request {
                method: "POST".into(),
                path: path.into(),
                query: String::new(),
                headers: vec![
                    ("authorization".into(), format!("Bearer {live_key}")),
                    ("x-api-version".into(), "2026-03-01".into()),
                ],
                body: body.to_string().into_bytes(),
                request_id: None,
            });
            assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
            serde_json::from_slice::<serde_json::Value>(&r.body).unwrap()
        };
        let la = serde_json::json!({"address_province": "CA", "address_postal_code": "90012",
                                    "address_country": "US"});
        let months = [
            ("2025-03", 120_000),
            ("2026-01", 90_000),
            ("2026-02", 85_000),
            ("2026-03", 95_000),
            ("2026-04", 80_000),
            ("2026-05", 100_000),
            ("2026-06", 60_000),
            ("2026-07", 70_000),
        ];
        for (i, (month, dollars)) in months.iter().enumerate() {
            let (y, m) = month.split_once('-').unwrap();
            let day =
                levy_core::Date::from_ymd(y.parse().unwrap(), m.parse().unwrap(), 15).unwrap();
            let calc = call(
                "/tax/calculations",
                serde_json::json!({"customer": {"address": la}, "origin_address": la,
                    "order_details": {"customer_currency_code": "USD",
                        "line_items": [{"amount": dollars * 100, "quantity": 1,
                                        "product_category": "GENERAL_MERCHANDISE"}]}}),
            );
            call(
                "/tax/transactions",
                serde_json::json!({"calculation_id": calc["id"],
                    "reference_order_id": format!("o-{i}"),
                    "transaction_processed_at": i64::from(day.0) * 86_400}),
            );
        }
    }
    let nexus = |args: &[&str]| {
        let mut all = vec![
            "nexus",
            "--account",
            "shop",
            "--keys",
            keys_s,
            "--ledger",
            ledger_s,
        ];
        all.extend_from_slice(args);
        levy(&all)
    };
    let o = nexus(&["--state", "ca", "--date", "2026-08-20"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = stdout(&o);
    assert_eq!(text.lines().count(), 1, "{text}");
    // 2025: 120,000.00 in one sale; 2026 to August 20: 580,000.00 in seven, 116% of
    // more than 500,000, first passed in June.
    assert!(
        text.starts_with("US-CA exposed since 2026-06-01 116.00% | "),
        "{text}"
    );
    assert!(text.contains("2025-01-01..2025-12-31 120000.00 USD in 1 transaction; 2026-01-01..2026-08-20 580000.00 USD in 7 transactions"), "{text}");
    assert!(
        text.contains("| more than 500000 USD (gross sales, current_or_previous_calendar_year)"),
        "{text}"
    );
    let o = nexus(&["--state", "CA", "--date", "2026-05-31", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["states"][0]["status"], "approaching");
    assert_eq!(v["states"][0]["percent"], "90.00");
    // Every state with a threshold on the day; the test mode has no sales.
    let all = stdout(&nexus(&["--date", "2026-11-26", "--test"]));
    assert_eq!(all.lines().count(), 48, "{all}");
    assert!(
        all.lines()
            .any(|l| l.starts_with("US-PA unmeasured - | not measured |")),
        "{all}"
    );
    // Refusals say why and exit with failure.
    let o = nexus(&["--date", "2026-02-30"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("INVALID_QUERY_PARAMETER"));
    let o = nexus(&["--state", "ZZ"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("INVALID_REGION"));
}

#[test]
fn a_table_knows_its_age_from_build_to_calc() {
    let dir = temp_dir("age");
    let input = nashville_zip5(&dir);
    let table = dir.join("t.levy");
    let o = levy(&[
        "build",
        "--out",
        table.to_str().unwrap(),
        "--zip5",
        input.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // The ZIP5 table of December 2025 holds December 2025 (levy_build::horizon).
    let info = stdout(&levy(&["info", table.to_str().unwrap()]));
    assert!(info.contains("period 2025-12 horizon 2025-12-31"), "{info}");
    assert!(info.contains("US-TN   from "), "{info}");
    let calc = |date: &str, json: bool| {
        let mut args = vec![
            "calc",
            "--table",
            table.to_str().unwrap(),
            "--postal-code",
            "37203",
            "--line",
            "100.00",
            "--date",
            date,
        ];
        if json {
            args.push("--json");
        }
        levy(&args)
    };
    // Within it: no word of age.
    let o = calc("2025-12-31", false);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!stdout(&o).contains("STALE_TABLE"), "{}", stdout(&o));
    // After it: the receipt warns and names the file (the county's rate is the file's,
    // under the curated single-article band of data/us-rules.toml); the JSON says so too.
    let o = calc("2026-03-01", false);
    let out = stdout(&o);
    assert!(
        out.contains(
            "Warning    PARTIAL coverage: STALE_TABLE: curated us-rules.toml (over the rates \
             of zip5 TAXRATES_ZIP5_TN202512.csv) is in force to 2025-12-31"
        ),
        "{out}"
    );
    let v: serde_json::Value = serde_json::from_slice(&calc("2026-03-01", true).stdout).unwrap();
    assert_eq!(v["coverage"], "PARTIAL", "{v}");
    let note = v["stale_table"].as_str().unwrap();
    assert!(note.contains("zip5 TAXRATES_ZIP5_TN202512.csv"), "{v}");
    let v: serde_json::Value = serde_json::from_slice(&calc("2025-12-01", true).stdout).unwrap();
    assert!(v["stale_table"].is_null(), "{v}");
    // Before Tennessee's 7% began (2002-07-15, data/us-states.toml): refused, by kind.
    let o = calc("2001-01-01", false);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("before 2002-07-15"), "{err}");
    assert!(o.stdout.is_empty());
}

#[test]
fn a_zip5_file_named_without_its_month_is_dated_by_the_build() {
    // SOURCE_DATE_EPOCH 1795824000 is 2026-11-28: a file whose name gives no period is
    // dated by that day, and a change announced after it begins no sooner than
    // 2027-04-01 (the first quarter day 61 days on): its horizon is 2027-03-31.
    let dir = temp_dir("undated");
    let named = nashville_zip5(&dir);
    let input = dir.join("rates.csv");
    std::fs::rename(&named, &input).unwrap();
    let table = dir.join("t.levy");
    let o = Command::new(env!("CARGO_BIN_EXE_levy"))
        .env("SOURCE_DATE_EPOCH", "1795824000")
        .args(["build", "--out", table.to_str().unwrap(), "--zip5"])
        .arg(&input)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let info = stdout(&levy(&["info", table.to_str().unwrap()]));
    let row = info
        .lines()
        .find(|l| l.contains("rates.csv"))
        .unwrap_or_default();
    assert!(row.ends_with("period  horizon 2027-03-31"), "{info}");
}
