//! `levy serve` and `levy keys new` arguments, and keys made by `keys new` working over HTTP.

mod common;

use std::sync::Arc;

use clap::Parser;
use levy_server::cli::{Command, KeysCommand, KeysNewArgs};

#[derive(Parser)]
struct Levy {
    #[command(subcommand)]
    command: Command,
}

#[test]
fn serve_defaults_are_the_documented_ones() {
    let Levy {
        command: Command::Serve(args),
    } = Levy::parse_from(["levy", "serve"])
    else {
        panic!("not serve")
    };
    // Defaults from the task's command line: 127.0.0.1:8787, embedded table,
    // ./levy-ledger.sqlite, ./levy-keys.toml, 1 MiB body limit.
    assert_eq!(
        args.listen,
        "127.0.0.1:8787".parse::<std::net::SocketAddr>().unwrap()
    );
    assert_eq!(args.table, None);
    assert_eq!(
        args.ledger,
        std::path::PathBuf::from("./levy-ledger.sqlite")
    );
    assert_eq!(args.keys, std::path::PathBuf::from("./levy-keys.toml"));
    assert_eq!(args.body_limit, 1_048_576);

    let Levy {
        command: Command::Serve(args),
    } = Levy::parse_from([
        "levy",
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--table",
        "t.levy",
        "--ledger",
        "l.db",
        "--keys",
        "k.toml",
    ])
    else {
        panic!("not serve")
    };
    assert_eq!(args.listen.port(), 0);
    assert_eq!(args.table.as_deref(), Some(std::path::Path::new("t.levy")));

    // A listen address that is not one is a usage error, not a panic.
    assert!(Levy::try_parse_from(["levy", "serve", "--listen", "localhost"]).is_err());
    // keys new needs an account.
    assert!(Levy::try_parse_from(["levy", "keys", "new"]).is_err());
    let Levy {
        command: Command::Keys(k),
    } = Levy::parse_from(["levy", "keys", "new", "--account", "shop"])
    else {
        panic!("not keys")
    };
    let KeysCommand::New(new) = k.command;
    assert_eq!(new.account, "shop");
    assert_eq!(new.keys, std::path::PathBuf::from("./levy-keys.toml"));
}

#[test]
fn keys_new_prints_keys_that_work_and_stores_only_hashes() {
    let dir = common::scratch_dir("keys-new");
    let path = dir.join("keys.toml");
    let text = levy_server::cli::run_keys_new(&KeysNewArgs {
        account: "shop".into(),
        keys: path.clone(),
    })
    .unwrap();
    let find = |label: &str| -> String {
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with(label))
            .unwrap();
        line.split_whitespace().last().unwrap().to_string()
    };
    let (test, live) = (find("test key:"), find("live key:"));
    assert!(test.starts_with("sk_test_"), "{text}");
    assert!(live.starts_with("sk_live_"), "{text}");
    let stored = std::fs::read_to_string(&path).unwrap();
    assert!(
        !stored.contains(&test) && !stored.contains(&live),
        "plain keys in the keys file"
    );

    // A second account in the same file.
    let other = levy_server::cli::run_keys_new(&KeysNewArgs {
        account: "other".into(),
        keys: path.clone(),
    })
    .unwrap();
    assert!(other.contains("account other"));
    // An empty account name is refused with a message.
    let e = levy_server::cli::run_keys_new(&KeysNewArgs {
        account: " ".into(),
        keys: path.clone(),
    })
    .unwrap_err();
    assert!(e.to_string().contains("account"), "{e}");

    // The keys open a server: test key in test mode, live key in live mode.
    let service = Arc::new(
        levy_api::Service::open(levy_api::ServiceConfig {
            table: levy_api::TableSource::Table(common::table()),
            ledger: dir.join("ledger.sqlite").to_string_lossy().into_owned(),
            keys: levy_api::KeySource::File(path),
        })
        .unwrap(),
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = rt
        .block_on(levy_server::serve(
            service,
            levy_server::ServeOptions::loopback_ephemeral(),
            async {
                let _ = stopped.await;
            },
        ))
        .unwrap();
    let base = format!("http://{}", running.local_addr());
    let client = std::thread::spawn(move || {
        let c = common::Client::new(&base);
        let t = c.bare("GET", "/tax/ping", &test, None).json();
        let l = c.bare("GET", "/tax/ping", &live, None).json();
        let _ = stop.send(());
        (t, l)
    });
    rt.block_on(running.wait()).unwrap();
    let (t, l) = client.join().unwrap();
    assert_eq!(t["env"], "test");
    assert_eq!(l["env"], "prod");
}
