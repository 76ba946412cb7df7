//! The change signal of a store (`Store::watch_changes`): a counter that moves on after changes.
//!
//! Each store sends it from its own source (an in-process notify, SQLite's `data_version`,
//! PostgreSQL's `LISTEN`); readers wait on it and read what changed from the store.

use tokio::sync::watch;

/// Moves on (its value counts up) after the store changed; `changed().await` waits for that.
pub type ChangeSignal = watch::Receiver<u64>;

/// The sending side: counts a change, whether or not anyone is watching.
pub(super) fn bump(sender: &watch::Sender<u64>) {
    sender.send_modify(|count| *count = count.wrapping_add(1));
}
