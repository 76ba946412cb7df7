//! `threadkeeper view --serve`: the live viewer of a whole store, until SIGTERM or SIGINT.

use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use threadkeeper::service::RenderOptions;
use threadkeeper::store::{open_store, StoreSpec};
use threadkeeper::viewer;
use tokio_util::sync::CancellationToken;

/// What `view --serve` takes from the command line: its own settings, so that this module does
/// not depend on the page writer's arguments.
pub struct LiveSettings {
    pub store: Option<StoreSpec>,
    pub host: IpAddr,
    pub port: u16,
    pub token: Option<String>,
    pub open: bool,
}

pub fn run(args: &LiveSettings, options: RenderOptions) -> i32 {
    let token = match &args.token {
        Some(token) if !viewer::valid_token(token) => {
            return super::finish(Err("--token: use letters, digits and - _ . ~ only".to_owned()))
        }
        Some(token) => token.clone(),
        None => viewer::new_token(),
    };
    let runtime = match super::serving_runtime() {
        Ok(runtime) => runtime,
        Err(message) => return super::finish(Err(message)),
    };
    let spec = args.store.clone().unwrap_or_default();
    let status = runtime.block_on(async {
        // Signals are caught from here on: a SIGTERM right after the URL is printed stops cleanly.
        let stop_signal = threadkeeper::server::stop_signal();
        let store = match open_store(&spec, u64::MAX).await {
            Ok(store) => store,
            Err(e) => return super::finish(Err(format!("cannot open the store {spec}: {e}"))),
        };
        let listener = match tokio::net::TcpListener::bind(SocketAddr::new(args.host, args.port)).await {
            Ok(listener) => listener,
            Err(e) => return super::finish(Err(format!("cannot listen on {}:{}: {e}", args.host, args.port))),
        };
        let addr = match listener.local_addr() {
            Ok(addr) => addr,
            Err(e) => return super::finish(Err(format!("cannot read the listening address: {e}"))),
        };
        let url = viewer::list_url(addr, &token);
        let mut stdout = std::io::stdout().lock();
        if writeln!(stdout, "{url}").and_then(|_| stdout.flush()).is_err() {
            return 1;
        }
        drop(stdout);
        if !addr.ip().is_loopback() {
            eprintln!(
                "threadkeeper: serving on {addr}, not loopback: anyone who can reach it and has the URL \
                 reads every thread of the store (plain HTTP, no TLS)"
            );
        }
        if args.open {
            open_browser(&url);
        }
        let stop = CancellationToken::new();
        let mut serving = tokio::spawn(viewer::serve(listener, store, token, options, stop.clone()));
        let ended = tokio::select! {
            _ = stop_signal => {
                stop.cancel();
                serving.await
            }
            ended = &mut serving => ended,
        };
        match ended {
            Ok(Ok(())) => 0,
            Ok(Err(e)) => super::finish(Err(format!("viewer failed: {e}"))),
            Err(e) => super::finish(Err(format!("viewer failed: {e}"))),
        }
    });
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    status
}

/// Hands the URL to the desktop's opener; a failure only says so.
fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        "xdg-open"
    };
    let spawned = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Err(e) = spawned {
        eprintln!("threadkeeper: cannot open a browser ({opener}: {e}); open the URL above");
    }
}
