//! What can go wrong reading or writing a turn document.

/// A turn document that cannot be read or written.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TurnError {
    /// The text is not valid YAML or JSON; the parser's message, with line and column.
    #[error("not a valid document: {message}")]
    Syntax { message: String },
    /// The document exceeds one of the [`Limits`](super::Limits); `value` is the size found
    /// (for counted limits: the first count past the limit).
    #[error("{}", limit_message(limit, *max, *value))]
    Limit { limit: &'static str, max: usize, value: usize },
    /// The document declares a format version this crate does not read.
    #[error("unsupported turn document version {found}: this reader supports version {supported}")]
    UnsupportedVersion { found: String, supported: u32 },
    /// The document's structure is wrong at `path`, e.g. `blocks[2].payload`.
    #[error("{}", if path.is_empty() { reason.clone() } else { format!("{path}: {reason}") })]
    Invalid { path: String, reason: String },
}

impl TurnError {
    pub(crate) fn invalid(path: impl Into<String>, reason: impl Into<String>) -> Self {
        TurnError::Invalid { path: path.into(), reason: reason.into() }
    }
}

fn limit_message(limit: &str, max: usize, value: usize) -> String {
    match limit {
        "max_expansion" => format!(
            "document expands to more than {max} values or string bytes (found {value}): YAML aliases repeat too much (max_expansion)"
        ),
        limit => format!("document exceeds the {limit} limit of {max} (found {value})"),
    }
}
