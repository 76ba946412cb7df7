//! Where the default SQLite database lives: a private per-user data directory.

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

/// File name of the default database inside the data directory.
pub const DEFAULT_DATABASE_FILE: &str = "threads.sqlite3";

/// The data directory: `$THREADKEEPER_DATA_DIR`, else `$XDG_DATA_HOME/threadkeeper`, else
/// `$HOME/.local/share/threadkeeper`. `env` looks up a variable (empty counts as unset).
///
/// A relative `XDG_DATA_HOME` is ignored, as the XDG base directory specification says.
pub fn default_data_dir(env: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    let var = |name: &str| env(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = var("THREADKEEPER_DATA_DIR") {
        return Some(dir);
    }
    if let Some(xdg) = var("XDG_DATA_HOME").filter(|p| p.is_absolute()) {
        return Some(xdg.join("threadkeeper"));
    }
    var("HOME").map(|home| home.join(".local").join("share").join("threadkeeper"))
}

/// The default database path, from the process environment.
pub fn default_database_path() -> io::Result<PathBuf> {
    default_data_dir(|name| std::env::var_os(name)).map(|dir| dir.join(DEFAULT_DATABASE_FILE)).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::NotFound,
            "no data directory: set THREADKEEPER_DATA_DIR (or HOME), or pass --store sqlite:PATH",
        )
    })
}

/// Creates `dir` (and missing parents) readable by the user alone (0700). An existing
/// directory is left as it is.
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let map: HashMap<String, OsString> = pairs.iter().map(|(k, v)| (k.to_string(), OsString::from(v))).collect();
        move |name| map.get(name).cloned()
    }

    #[test]
    fn explicit_data_dir_wins() {
        let env = env_of(&[("THREADKEEPER_DATA_DIR", "/srv/tk"), ("XDG_DATA_HOME", "/x"), ("HOME", "/home/u")]);
        assert_eq!(default_data_dir(env), Some(PathBuf::from("/srv/tk")));
    }

    #[test]
    fn xdg_data_home_is_next() {
        let env = env_of(&[("THREADKEEPER_DATA_DIR", ""), ("XDG_DATA_HOME", "/x"), ("HOME", "/home/u")]);
        assert_eq!(default_data_dir(env), Some(PathBuf::from("/x/threadkeeper")));
    }

    #[test]
    fn relative_xdg_data_home_is_ignored() {
        let env = env_of(&[("XDG_DATA_HOME", "rel/dir"), ("HOME", "/home/u")]);
        assert_eq!(default_data_dir(env), Some(PathBuf::from("/home/u/.local/share/threadkeeper")));
    }

    #[test]
    fn home_is_the_fallback_and_nothing_is_none() {
        assert_eq!(
            default_data_dir(env_of(&[("HOME", "/home/u")])),
            Some(PathBuf::from("/home/u/.local/share/threadkeeper"))
        );
        assert_eq!(default_data_dir(env_of(&[])), None);
    }

    #[cfg(unix)]
    #[test]
    fn created_directories_are_private() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("a").join("threadkeeper");
        create_private_dir(&dir).unwrap();
        for d in [tmp.path().join("a"), dir.clone()] {
            let mode = std::fs::metadata(&d).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o700, "{}", d.display());
        }
        // Idempotent.
        create_private_dir(&dir).unwrap();
    }
}
