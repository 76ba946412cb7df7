//! Opaque paging cursors for thread listings (`list_threads`, `resources/list`).
//!
//! A cursor names the last thread of the page it ends (its `updatedAt` and id), not a position:
//! threads made or updated between two calls then never shift a page under the reader.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;

/// Where the next page starts: after this thread in newest-first order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct After {
    pub updated_at: u64,
    pub thread_id: String,
}

const PREFIX: &str = "v1:";

pub fn encode(after: &After) -> String {
    URL_SAFE_NO_PAD.encode(format!("{PREFIX}{}:{}", after.updated_at, after.thread_id))
}

/// The position a cursor names; `None` when it is not one this server made.
pub fn decode(cursor: &str) -> Option<After> {
    let bytes = URL_SAFE_NO_PAD.decode(cursor).ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let rest = text.strip_prefix(PREFIX)?;
    let (updated_at, thread_id) = rest.split_once(':')?;
    Some(After { updated_at: updated_at.parse().ok()?, thread_id: thread_id.to_owned() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_round_trips_and_garbage_is_refused() {
        let after = After { updated_at: 1_700_000_000_123, thread_id: "a:b.c-d".into() };
        assert_eq!(decode(&encode(&after)), Some(after));
        assert_eq!(decode("not a cursor"), None);
        assert_eq!(decode(&URL_SAFE_NO_PAD.encode("v2:1:x")), None);
    }
}
