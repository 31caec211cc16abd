//! Compiles the C programs in `tests/c/` with gcc against the freshly built `liblevy.a`
//! and `include/levy.h`, and runs them. Each program prints `N passed, N failed` and exits
//! non-zero on any failed check.
//!
//! `LEVY_C_CHECK` picks how the programs run:
//! * unset or `plain`: compiled with `-Wall -Wextra -Werror`, run directly;
//! * `asan`: compiled with AddressSanitizer and UndefinedBehaviorSanitizer (leak checks on);
//! * `valgrind`: run under valgrind memcheck; any error or definitely lost block fails.
//!
//! `crates/levy-ffi/ci.sh` runs all three.

use std::path::{Path, PathBuf};
use std::process::Command;

use levy_core::Table;
use levy_testkit::tennessee::Tennessee;
use levy_testkit::TempDir;

/// The fixture every C test computes its expected values from (`Tennessee::c_abi` in
/// levy-testkit): Tennessee general merchandise at 7% (state) and, in ZIP 37203, also
/// 2.25% (Davidson county); CLOTHING -> CLOTHING_GENERAL, a child of GENERAL_MERCHANDISE
/// without rules of its own; IPv4 192.0.2.0/24 placed in Nashville, TN 37203, and
/// 198.51.100.0/24 nowhere.
fn fixture_table() -> Vec<u8> {
    Tennessee::c_abi().bytes()
}

struct Setup {
    dir: TempDir,
    hash: String,
    lib_dir: PathBuf,
    include: PathBuf,
}

/// The fixtures, written afresh for each test in a directory of its own that is removed
/// when the test ends: the tests run in parallel, and a C program of one test maps
/// `fixture.levy` while another would rewrite it (a table file must be replaced by rename,
/// never rewritten in place, or its readers fault).
fn setup() -> Setup {
    let dir = levy_testkit::target_temp_dir!("levy-ffi-c");
    let bytes = fixture_table();
    let hash = Table::from_bytes(&bytes).unwrap().hash_hex();
    std::fs::write(dir.join("fixture.levy"), &bytes).unwrap();
    std::fs::write(
        dir.join("not-a-table.levy"),
        b"hello, this is not a rate table\n",
    )
    .unwrap();
    std::fs::write(dir.join("truncated.levy"), &bytes[..100]).unwrap();
    let mut flipped = bytes.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 0x55;
    std::fs::write(dir.join("flipped.levy"), &flipped).unwrap();

    // The test binary lives in target/<profile>/deps. `cargo test` leaves the static and
    // shared libraries beside it in deps/; `cargo build` also copies them to target/<profile>.
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap().to_path_buf();
    let lib_dir = [deps.clone(), deps.parent().unwrap().to_path_buf()]
        .into_iter()
        .find(|d| d.join("liblevy.a").exists())
        .unwrap_or_else(|| panic!("liblevy.a not found in {} or its parent", deps.display()));
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../include");
    Setup {
        dir,
        hash,
        lib_dir,
        include,
    }
}

fn mode() -> String {
    std::env::var("LEVY_C_CHECK").unwrap_or_else(|_| "plain".into())
}

/// Compiles `tests/c/<name>.c` and runs it with `args`; panics with its output on failure.
fn compile_and_run(s: &Setup, name: &str, args: &[&str]) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/c")
        .join(format!("{name}.c"));
    let mode = mode();
    let exe = s.dir.join(format!("{name}-{mode}"));
    let mut cc = Command::new(std::env::var("CC").unwrap_or_else(|_| "gcc".into()));
    cc.args([
        "-std=c11", "-g", "-O1", "-Wall", "-Wextra", "-Werror", "-pthread",
    ])
    .arg("-I")
    .arg(&s.include)
    .arg("-I")
    .arg(src.parent().unwrap());
    if mode == "asan" {
        cc.args([
            "-fsanitize=address,undefined",
            "-fno-omit-frame-pointer",
            "-fno-sanitize-recover=all",
        ]);
    }
    cc.arg(&src)
        .arg(s.lib_dir.join("liblevy.a"))
        .args(["-lpthread", "-ldl", "-lm", "-lrt", "-lutil"])
        .arg("-o")
        .arg(&exe);
    let out = cc
        .output()
        .expect("gcc must be installed to run the C tests");
    assert!(
        out.status.success(),
        "compiling {name}.c failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let mut run = if mode == "valgrind" {
        let mut c = Command::new("valgrind");
        c.args([
            "--quiet",
            "--error-exitcode=99",
            "--leak-check=full",
            "--show-leak-kinds=definite",
            "--errors-for-leak-kinds=definite",
        ])
        .arg(&exe);
        c
    } else {
        Command::new(&exe)
    };
    if mode == "asan" {
        run.env(
            "ASAN_OPTIONS",
            "detect_leaks=1:abort_on_error=0:exitcode=98",
        );
    }
    let out = run.args(args).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    print!("{name} ({mode}): {stdout}");
    assert!(
        out.status.success(),
        "{name} ({mode}) failed with {}:\n{stdout}\n{stderr}",
        out.status
    );
    let last = stdout.lines().last().unwrap_or("");
    assert!(
        last.ends_with(" passed, 0 failed") && !last.starts_with("0 passed"),
        "{name}: {last}"
    );
}

#[test]
fn c_engine() {
    let s = &setup();
    compile_and_run(s, "engine", &[s.dir.to_str().unwrap(), &s.hash]);
}

/// A ledger path that does not exist yet, unique to this run and mode.
fn fresh_ledger(s: &Setup, name: &str) -> String {
    let p = s.dir.join(format!("{name}-{}.sqlite", mode()));
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", p.display()));
    }
    p.to_str().unwrap().to_string()
}

#[test]
fn c_service() {
    let s = &setup();
    let ledger = fresh_ledger(s, "service");
    compile_and_run(s, "service", &[s.dir.to_str().unwrap(), &ledger]);
}

/// The same C program with the service's ledger on PostgreSQL (`ledger_path` a
/// `postgres://` URL, a new database on the test kit's server). Plain mode only: the
/// sanitizer and valgrind runs check liblevy's own memory, which this does not change.
#[test]
fn c_service_on_postgresql() {
    if mode() != "plain" {
        return;
    }
    let Some(server) = levy_testkit::postgres::server() else {
        return;
    };
    let s = &setup();
    compile_and_run(s, "service", &[s.dir.to_str().unwrap(), &server.database()]);
}

#[test]
fn c_registrations() {
    let s = &setup();
    let ledger = fresh_ledger(s, "registrations");
    compile_and_run(s, "registrations", &[s.dir.to_str().unwrap(), &ledger]);
}

/// Registrations from C with the service's ledger on PostgreSQL (plain mode only, as
/// [`c_service_on_postgresql`]).
#[test]
fn c_registrations_on_postgresql() {
    if mode() != "plain" {
        return;
    }
    let Some(server) = levy_testkit::postgres::server() else {
        return;
    };
    let s = &setup();
    compile_and_run(
        s,
        "registrations",
        &[s.dir.to_str().unwrap(), &server.database()],
    );
}

/// `levy_sync` from C: a till (the C program's own service and ledger) syncs to a central
/// levy served here, in-process, over the same fixture table, with the test kit's keys.
#[test]
fn c_sync() {
    let s = &setup();
    let central = std::sync::Arc::new(levy_testkit::service::with_ledger(
        Tennessee::c_abi().table(),
        &fresh_ledger(s, "central"),
    ));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = runtime
        .block_on(levy_server::serve(
            std::sync::Arc::clone(&central),
            levy_server::ServeOptions::loopback_ephemeral(),
            async {
                let _ = stopped.await;
            },
        ))
        .unwrap();
    let base = format!("http://{}", running.local_addr());
    runtime.spawn(async move {
        let _ = running.wait().await;
    });
    let till = fresh_ledger(s, "till");
    compile_and_run(
        s,
        "sync",
        &[
            s.dir.to_str().unwrap(),
            &till,
            &base,
            levy_testkit::keys::SHOP_TEST,
        ],
    );
    let _ = stop.send(());
    runtime.shutdown_timeout(std::time::Duration::from_secs(5));
}

#[test]
fn c_threads() {
    let s = &setup();
    let ledger = fresh_ledger(s, "threads");
    // Fewer rounds under the slow checkers; the interleavings are what matter there.
    let rounds = match mode().as_str() {
        "valgrind" => "40",
        "asan" => "200",
        _ => "1000",
    };
    compile_and_run(s, "threads", &[s.dir.to_str().unwrap(), &ledger, rounds]);
}

#[test]
fn c_default_table() {
    let s = &setup();
    let ledger = fresh_ledger(s, "default");
    compile_and_run(s, "default_table", &[&ledger]);
}
