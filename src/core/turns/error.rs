//! What can go wrong reading or writing a turn document.

use std::fmt;

/// A turn document that cannot be read or written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TurnError {
    /// The text is not valid YAML or JSON; the parser's message, with line and column.
    Syntax { message: String },
    /// The document exceeds one of the [`Limits`](super::Limits); `value` is the size found
    /// (for counted limits: the first count past the limit).
    Limit { limit: &'static str, max: usize, value: usize },
    /// The document declares a format version this crate does not read.
    UnsupportedVersion { found: String, supported: u32 },
    /// The document's structure is wrong at `path`, e.g. `blocks[2].payload`.
    Invalid { path: String, reason: String },
}

impl TurnError {
    pub(crate) fn invalid(path: impl Into<String>, reason: impl Into<String>) -> Self {
        TurnError::Invalid { path: path.into(), reason: reason.into() }
    }
}

impl fmt::Display for TurnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TurnError::Syntax { message } => write!(f, "not a valid document: {message}"),
            TurnError::Limit { limit: "max_expansion", max, value } => write!(
                f,
                "document expands to more than {max} values or string bytes (found {value}): YAML aliases repeat too much (max_expansion)"
            ),
            TurnError::Limit { limit, max, value } => {
                write!(f, "document exceeds the {limit} limit of {max} (found {value})")
            }
            TurnError::UnsupportedVersion { found, supported } => write!(
                f,
                "unsupported turn document version {found}: this reader supports version {supported}"
            ),
            TurnError::Invalid { path, reason } if path.is_empty() => write!(f, "{reason}"),
            TurnError::Invalid { path, reason } => write!(f, "{path}: {reason}"),
        }
    }
}

impl std::error::Error for TurnError {}
