//! Golden files compared in one pass: each mismatch is collected, and [`Goldens::finish`] fails
//! naming them all. With `UPDATE_GOLDEN` set, each file is rewritten instead.

use std::path::Path;

pub struct Goldens {
    update: bool,
    mismatches: Vec<String>,
}

impl Goldens {
    pub fn new() -> Self {
        Goldens { update: std::env::var_os("UPDATE_GOLDEN").is_some(), mismatches: Vec::new() }
    }

    /// Compares `text` with the file at `path` byte for byte (or rewrites the file).
    pub fn check(&mut self, path: &Path, text: &str) {
        if self.update {
            std::fs::write(path, text).unwrap();
        } else if std::fs::read_to_string(path).ok().as_deref() != Some(text) {
            self.mismatches.push(path.display().to_string());
        }
    }

    /// [`Goldens::check`] of a JSON value in its golden form: pretty, with a final newline.
    pub fn check_json(&mut self, path: &Path, value: &serde_json::Value) {
        self.check(path, &(serde_json::to_string_pretty(value).unwrap() + "\n"));
    }

    pub fn finish(self) {
        assert!(
            self.mismatches.is_empty(),
            "golden mismatches (UPDATE_GOLDEN=1 rewrites):\n{}",
            self.mismatches.join("\n")
        );
    }
}
