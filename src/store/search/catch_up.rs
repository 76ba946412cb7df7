//! What the stores whose index trails their events (SQLite's and PostgreSQL's
//! `pending_index`) share about catching it up: what a catch-up did, and how it tells its
//! progress.
//!
//! At warn, which the default log filter shows: a large backlog (a big import, a store from
//! before the index) takes a while, and the operator should see why. A small one says nothing.

use super::BUILD_PROGRESS_EVERY;

/// What a catch-up did.
pub(crate) struct CaughtUp {
    pub indexed: u64,
    /// Events still pending (the budget ran out).
    pub left: bool,
}

/// The progress of one catch-up of `pending` events with room for `budget` of them.
pub(crate) struct Progress {
    of: u64,
    next_report: u64,
    told: bool,
}

impl Progress {
    pub(crate) fn start(pending: u64, budget: u64) -> Self {
        let told = pending >= BUILD_PROGRESS_EVERY && budget >= BUILD_PROGRESS_EVERY;
        let of = pending.min(budget);
        if told {
            tracing::warn!(events = of, "indexing events for search");
        }
        Progress { of, next_report: BUILD_PROGRESS_EVERY, told }
    }

    /// `indexed` events are indexed so far.
    pub(crate) fn indexed(&mut self, indexed: u64) {
        if self.told && indexed >= self.next_report {
            tracing::warn!(events = indexed, of = self.of, "indexing events for search");
            self.next_report += BUILD_PROGRESS_EVERY;
        }
    }
}

/// The build of the whole index of a store from before it, once, in its migration: it can take
/// minutes, and the operator should see why the start is slow. A store without events builds
/// nothing and says nothing.
pub(crate) struct WholeBuild {
    events: u64,
}

impl WholeBuild {
    pub(crate) fn start(events: u64) -> Self {
        if events > 0 {
            tracing::warn!(events, "building the search index (once, for the events already stored)");
        }
        WholeBuild { events }
    }

    pub(crate) fn done(self, built: &CaughtUp) {
        if self.events > 0 {
            tracing::warn!(events = built.indexed, "built the search index");
        }
    }
}
