//! Which session files `import_session` may read: only files that lie, once every symlink is
//! resolved, inside one of the directories the operator allowed (`--allow-import DIR`).
//!
//! Both sides are canonicalized, so a symlink inside an allowed directory that points out of
//! it is refused, and so is a path with `..` (refused outright, before any lookup: an agent
//! has no reason to send one). The file is opened without following a final symlink, so one
//! swapped in after the check is not followed either.

use std::fs::File;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

/// Largest session file read, in bytes.
pub const MAX_SESSION_BYTES: u64 = 256 << 20;

/// The directories imports may read from, canonicalized.
#[derive(Clone, Debug, Default)]
pub struct AllowedDirs {
    dirs: Vec<PathBuf>,
}

impl AllowedDirs {
    /// Canonicalizes each directory; one that does not exist or is not a directory is a
    /// configuration error.
    pub fn new(dirs: &[PathBuf]) -> Result<Self, String> {
        let mut canonical = Vec::with_capacity(dirs.len());
        for dir in dirs {
            let resolved = dir.canonicalize().map_err(|e| format!("--allow-import {}: {e}", dir.display()))?;
            if !resolved.is_dir() {
                return Err(format!("--allow-import {}: not a directory", dir.display()));
            }
            canonical.push(resolved);
        }
        Ok(AllowedDirs { dirs: canonical })
    }

    /// Whether any directory is allowed (and so whether `import_session` exists at all).
    pub fn is_empty(&self) -> bool {
        self.dirs.is_empty()
    }

    /// The file's canonical path, when it may be read.
    pub fn check(&self, requested: &str) -> Result<PathBuf, String> {
        let path = Path::new(requested);
        if requested.is_empty() {
            return Err("path is empty".into());
        }
        if !path.is_absolute() {
            return Err(format!("path {requested:?} must be absolute"));
        }
        if path.components().any(|c| matches!(c, Component::ParentDir)) {
            return Err(format!("path {requested:?} must not contain `..`"));
        }
        let resolved = path.canonicalize().map_err(|e| format!("{requested}: {e}"))?;
        if !self.dirs.iter().any(|dir| resolved.starts_with(dir)) {
            return Err(format!(
                "{requested} is outside the directories this server may import from (resolved to {})",
                resolved.display()
            ));
        }
        if !resolved.is_file() {
            return Err(format!("{requested} is not a regular file"));
        }
        Ok(resolved)
    }

    /// The text of a file [`AllowedDirs::check`] let through.
    pub fn read(&self, resolved: &Path) -> Result<String, String> {
        let file = open_no_follow(resolved).map_err(|e| format!("{}: {e}", resolved.display()))?;
        let metadata = file.metadata().map_err(|e| format!("{}: {e}", resolved.display()))?;
        if !metadata.is_file() {
            return Err(format!("{} is not a regular file", resolved.display()));
        }
        if metadata.len() > MAX_SESSION_BYTES {
            return Err(format!(
                "{} is {} bytes, more than the {MAX_SESSION_BYTES} read",
                resolved.display(),
                metadata.len()
            ));
        }
        let mut bytes = Vec::with_capacity(metadata.len() as usize);
        file.take(MAX_SESSION_BYTES + 1).read_to_end(&mut bytes).map_err(|e| format!("{}: {e}", resolved.display()))?;
        String::from_utf8(bytes).map_err(|_| format!("{} is not UTF-8 text", resolved.display()))
    }
}

#[cfg(unix)]
fn open_no_follow(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW).open(path)
}

#[cfg(not(unix))]
fn open_no_follow(path: &Path) -> std::io::Result<File> {
    File::open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_files_inside_an_allowed_directory_pass() {
        let root = tempfile::tempdir().unwrap();
        let allowed = root.path().join("allowed");
        let outside = root.path().join("outside");
        std::fs::create_dir_all(&allowed).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(allowed.join("in.jsonl"), "{}\n").unwrap();
        std::fs::write(outside.join("out.jsonl"), "{}\n").unwrap();
        let guard = AllowedDirs::new(std::slice::from_ref(&allowed)).unwrap();
        let text = |p: PathBuf| p.to_str().unwrap().to_owned();

        let inside = guard.check(&text(allowed.join("in.jsonl"))).unwrap();
        assert_eq!(guard.read(&inside).unwrap(), "{}\n");
        assert!(guard.check(&text(outside.join("out.jsonl"))).unwrap_err().contains("outside"));
        assert!(guard.check(&text(allowed.join("../outside/out.jsonl"))).unwrap_err().contains(".."));
        assert!(guard.check("in.jsonl").unwrap_err().contains("absolute"));
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(outside.join("out.jsonl"), allowed.join("link.jsonl")).unwrap();
            assert!(guard.check(&text(allowed.join("link.jsonl"))).unwrap_err().contains("outside"));
        }
        assert!(guard.check(&text(allowed.clone())).unwrap_err().contains("regular file"));
    }
}
