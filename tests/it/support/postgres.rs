//! Which PostgreSQL server the store tests use, and what they do without one.
//!
//! `THREADKEEPER_TEST_PG` names the server (a connection URL); `scripts/with-postgres CMD`
//! starts a throwaway one and sets it. Without it a PostgreSQL test fails and says how to run
//! it, so a run without a server cannot pass by accident. `THREADKEEPER_SKIP_PG=1` skips them
//! instead, each saying so on stderr.
//!
//! Include with `#[path = "support/postgres.rs"] mod postgres;` (it is not part of `support`).

use std::sync::atomic::{AtomicU64, Ordering};

pub const URL_VAR: &str = "THREADKEEPER_TEST_PG";
pub const SKIP_VAR: &str = "THREADKEEPER_SKIP_PG";

/// Whether the PostgreSQL tests were explicitly skipped (`THREADKEEPER_SKIP_PG` set, not `0`).
pub fn skip_requested() -> bool {
    std::env::var(SKIP_VAR).is_ok_and(|v| !v.is_empty() && v != "0")
}

/// The server's URL for `test`; `None` (after saying why) when skipped. Panics when neither
/// a server nor a skip is configured.
pub fn database_url(test: &str) -> Option<String> {
    if skip_requested() {
        eprintln!("SKIPPED {test}: {SKIP_VAR} is set, so the PostgreSQL tests do not run");
        return None;
    }
    match std::env::var(URL_VAR) {
        Ok(url) if !url.is_empty() => Some(url),
        _ => panic!("{}", missing_server_message(test)),
    }
}

pub fn missing_server_message(test: &str) -> String {
    format!(
        "{test} needs a PostgreSQL server and {URL_VAR} is not set.\n\
         Run the tests with a throwaway server on loopback:  scripts/with-postgres cargo test\n\
         or set {URL_VAR}=postgres://USER@HOST/DATABASE (a user that may create databases),\n\
         or skip the PostgreSQL tests explicitly:            {SKIP_VAR}=1 cargo test"
    )
}

/// `url` with its database name replaced by `database` (any `?query` kept).
pub fn with_database(url: &str, database: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (url, None),
    };
    let scheme_end = base.find("://").map_or(0, |i| i + 3);
    let host_part = match base[scheme_end..].find('/') {
        Some(slash) => &base[..scheme_end + slash],
        None => base,
    };
    match query {
        Some(query) => format!("{host_part}/{database}?{query}"),
        None => format!("{host_part}/{database}"),
    }
}

/// A database made for one test on the server at `admin_url`, dropped when this is dropped.
pub struct ScratchDatabase {
    pub url: String,
    admin_url: String,
    name: String,
}

impl ScratchDatabase {
    /// Creates an empty database named after the process and a counter.
    pub async fn create(admin_url: &str) -> ScratchDatabase {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let name = format!("tk_scratch_{}_{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
        // template0: nobody is ever connected to it, so databases can be made from it in parallel.
        // Separate calls: several statements in one would run as one transaction, which
        // CREATE/DROP DATABASE refuse.
        admin(admin_url, &format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).await;
        admin(admin_url, &format!("CREATE DATABASE {name} TEMPLATE template0")).await;
        ScratchDatabase { url: with_database(admin_url, &name), admin_url: admin_url.to_owned(), name }
    }
}

impl Drop for ScratchDatabase {
    fn drop(&mut self) {
        let (admin_url, sql) = (self.admin_url.clone(), format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name));
        // Its own thread and runtime: this may run inside another runtime.
        let dropped = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            runtime.block_on(admin(&admin_url, &sql));
        })
        .join();
        if dropped.is_err() && !std::thread::panicking() {
            panic!("could not drop the scratch database {}", self.name);
        }
    }
}

/// Runs `sql` on the server at `url`; panics on failure.
pub async fn admin(url: &str, sql: &str) {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap_or_else(|e| panic!("cannot connect to {URL_VAR}: {e}"));
    let connection = tokio::spawn(connection);
    if let Err(e) = client.batch_execute(sql).await {
        match e.as_db_error() {
            Some(db) => panic!("{sql}: {}: {}", db.severity(), db.message()),
            None => panic!("{sql}: {e}"),
        }
    }
    drop(client);
    let _ = connection.await;
}

/// A runtime for store tests that drive a `PostgresStore` from a plain test.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}
