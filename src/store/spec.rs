//! Store selection: `memory`, `sqlite[:PATH]` or a PostgreSQL URL, and opening the store.

use super::data_dir::{create_private_dir, default_database_path};
use super::{MemoryStore, PostgresOptions, PostgresStore, SqliteStore, Store, StoreError};
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;

/// A store chosen on the command line (`--store`) or in `THREADKEEPER_STORE`.
#[derive(Clone, PartialEq, Eq)]
pub enum StoreSpec {
    /// `memory`: threads live as long as the process.
    Memory,
    /// `sqlite` (the default database in the data directory) or `sqlite:PATH`.
    Sqlite { path: Option<PathBuf> },
    /// `postgres://…` or `postgresql://…`, as libpq understands it.
    Postgres { url: String },
}

impl Default for StoreSpec {
    fn default() -> Self {
        StoreSpec::Sqlite { path: None }
    }
}

/// Why a store string was not understood.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct StoreSpecError(String);

const EXPECTED: &str = "expected `memory`, `sqlite`, `sqlite:PATH` or `postgres://USER@HOST/DATABASE`";

impl FromStr for StoreSpec {
    type Err = StoreSpecError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        if s == "memory" {
            return Ok(StoreSpec::Memory);
        }
        if s == "sqlite" {
            return Ok(StoreSpec::Sqlite { path: None });
        }
        if let Some(path) = s.strip_prefix("sqlite:") {
            if path.is_empty() {
                return Err(StoreSpecError(format!("store {s:?} has no path after `sqlite:` ({EXPECTED})")));
            }
            return Ok(StoreSpec::Sqlite { path: Some(PathBuf::from(path)) });
        }
        if s.starts_with("postgres://") || s.starts_with("postgresql://") {
            return match s.parse::<tokio_postgres::Config>() {
                Ok(_) => Ok(StoreSpec::Postgres { url: s.to_owned() }),
                Err(e) => Err(StoreSpecError(format!("store {}: invalid PostgreSQL URL: {e}", redact(s)))),
            };
        }
        Err(StoreSpecError(format!("unknown store {:?} ({EXPECTED})", redact(s))))
    }
}

/// Shows the spec without a password, for logs and errors.
impl fmt::Display for StoreSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreSpec::Memory => f.write_str("memory"),
            StoreSpec::Sqlite { path: None } => f.write_str("sqlite"),
            StoreSpec::Sqlite { path: Some(path) } => write!(f, "sqlite:{}", path.display()),
            StoreSpec::Postgres { url } => f.write_str(&redact(url)),
        }
    }
}

impl fmt::Debug for StoreSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "StoreSpec({self})")
    }
}

/// `scheme://user:secret@host` → `scheme://user:***@host`.
fn redact(url: &str) -> String {
    let Some(scheme_end) = url.find("://").map(|i| i + 3) else { return url.to_owned() };
    let rest = &url[scheme_end..];
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let Some(at) = rest[..authority_end].rfind('@') else { return url.to_owned() };
    match rest[..at].find(':') {
        Some(colon) => format!("{}{}:***{}", &url[..scheme_end], &rest[..colon], &rest[at..]),
        None => url.to_owned(),
    }
}

/// Opens the store the spec names: creates the default data directory (0700) on first use,
/// opens or creates the database and applies schema migrations. Errors say what to fix.
pub async fn open_store(spec: &StoreSpec, max_threads_in_memory: u64) -> Result<Arc<dyn Store>, StoreError> {
    open_store_with(spec, max_threads_in_memory, PostgresOptions::default()).await
}

/// As [`open_store`], with a PostgreSQL store's pool and group commit sized by `postgres`.
pub async fn open_store_with(
    spec: &StoreSpec,
    max_threads_in_memory: u64,
    postgres: PostgresOptions,
) -> Result<Arc<dyn Store>, StoreError> {
    match spec {
        StoreSpec::Memory => Ok(Arc::new(MemoryStore::new(max_threads_in_memory))),
        StoreSpec::Sqlite { path } => {
            let path = match path {
                Some(path) => path.clone(),
                None => {
                    let path = default_database_path().map_err(|e| StoreError::Unavailable(e.to_string()))?;
                    let dir = path.parent().expect("a file inside the data directory");
                    create_private_dir(dir).map_err(|e| {
                        StoreError::Unavailable(format!("cannot create data directory {}: {e}", dir.display()))
                    })?;
                    path
                }
            };
            let store = tokio::task::spawn_blocking(move || SqliteStore::open(&path))
                .await
                .map_err(|e| StoreError::Unavailable(format!("opening the database failed: {e}")))??;
            Ok(Arc::new(store))
        }
        StoreSpec::Postgres { url } => Ok(Arc::new(PostgresStore::connect_with(url, postgres).await?)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<StoreSpec, String> {
        s.parse::<StoreSpec>().map_err(|e| e.to_string())
    }

    #[test]
    fn parses_every_kind() {
        assert_eq!(parse("memory"), Ok(StoreSpec::Memory));
        assert_eq!(parse("sqlite"), Ok(StoreSpec::Sqlite { path: None }));
        assert_eq!(parse(" sqlite "), Ok(StoreSpec::Sqlite { path: None }));
        assert_eq!(parse("sqlite:/var/tk/t.db"), Ok(StoreSpec::Sqlite { path: Some("/var/tk/t.db".into()) }));
        assert_eq!(parse("sqlite:rel/t.db"), Ok(StoreSpec::Sqlite { path: Some("rel/t.db".into()) }));
        assert_eq!(
            parse("postgres://tk@127.0.0.1:5432/tk"),
            Ok(StoreSpec::Postgres { url: "postgres://tk@127.0.0.1:5432/tk".into() })
        );
        assert_eq!(
            parse("postgresql://tk@db/tk?connect_timeout=3"),
            Ok(StoreSpec::Postgres { url: "postgresql://tk@db/tk?connect_timeout=3".into() })
        );
    }

    #[test]
    fn the_default_is_sqlite_in_the_data_directory() {
        assert_eq!(StoreSpec::default(), StoreSpec::Sqlite { path: None });
    }

    #[test]
    fn rejects_what_it_does_not_know() {
        assert_eq!(
            parse("mysql://x"),
            Err("unknown store \"mysql://x\" (expected `memory`, `sqlite`, `sqlite:PATH` or `postgres://USER@HOST/DATABASE`)"
                .into())
        );
        assert_eq!(
            parse("sqlite:"),
            Err("store \"sqlite:\" has no path after `sqlite:` (expected `memory`, `sqlite`, `sqlite:PATH` or `postgres://USER@HOST/DATABASE`)".into())
        );
        assert!(parse("").is_err());
        assert!(parse("Memory").is_err());
        let bad_url = parse("postgres://u:pw@host:notaport/db").unwrap_err();
        assert!(bad_url.starts_with("store postgres://u:***@host:notaport/db: invalid PostgreSQL URL"), "{bad_url}");
    }

    #[test]
    fn display_hides_passwords() {
        assert_eq!(parse("postgres://tk:s3cret@db:5432/tk").unwrap().to_string(), "postgres://tk:***@db:5432/tk");
        assert_eq!(parse("postgres://tk@db/tk").unwrap().to_string(), "postgres://tk@db/tk");
        assert_eq!(parse("sqlite:/a/b.db").unwrap().to_string(), "sqlite:/a/b.db");
        assert_eq!(parse("memory").unwrap().to_string(), "memory");
        assert_eq!(redact("postgres://u:p@ss@h/db"), "postgres://u:***@h/db");
    }
}
