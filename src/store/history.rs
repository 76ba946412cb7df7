//! What every store decides the same way about pops and forks: which prefix a fork point
//! names, and the errors for numbers that do not fit the thread.
//!
//! Stores keep the event count after every version (the version log), so a fork at a version
//! knows its events; a pop is one version whose count is lower than the one before.

use super::{ForkPoint, StoreError, StoreResult};

/// What a store knows of the source thread when it resolves a fork point.
pub trait VersionLog {
    /// The event count right after `version` (0 at version 0), if recorded.
    fn count_at(&self, version: u64) -> StoreResult<Option<u64>>;
    /// The lowest event count of any version after `version`, if there is one.
    fn lowest_count_after(&self, version: u64) -> StoreResult<Option<u64>>;
}

/// The number of leading events a fork at `at` takes from a thread at `version` holding
/// `event_count` events.
pub fn prefix_len(at: ForkPoint, version: u64, event_count: u64, log: &impl VersionLog) -> StoreResult<u64> {
    match at {
        ForkPoint::Whole => Ok(event_count),
        ForkPoint::Events(n) if n > event_count => Err(StoreError::OutOfRange {
            field: "atEvent",
            reason: format!("the thread has {event_count} events, fewer than {n}"),
        }),
        ForkPoint::Events(n) => Ok(n),
        ForkPoint::Version(v) if v > version => Err(StoreError::OutOfRange {
            field: "atVersion",
            reason: format!("the thread is at version {version}, before {v}"),
        }),
        ForkPoint::Version(v) => {
            let Some(count) = (if v == 0 { Some(0) } else { log.count_at(v)? }) else {
                return Err(StoreError::OutOfRange {
                    field: "atVersion",
                    reason: format!(
                        "version {v} is not recorded (the database was upgraded after it); fork atEvent instead"
                    ),
                });
            };
            if log.lowest_count_after(v)?.is_some_and(|lowest| lowest < count) {
                return Err(StoreError::OutOfRange {
                    field: "atVersion",
                    reason: format!("events of version {v} were popped since, so its events are gone"),
                });
            }
            Ok(count)
        }
    }
}

/// Checks a pop of `count` events from a thread holding `event_count`.
/// An `expected_version` that is not the thread's version is a conflict; no expectation always
/// passes.
pub fn check_expected_version(thread_id: &str, expected: Option<u64>, current: u64) -> StoreResult<()> {
    match expected {
        Some(expected) if expected != current => {
            Err(StoreError::VersionConflict { thread_id: thread_id.to_owned(), current_version: current })
        }
        _ => Ok(()),
    }
}

pub fn check_pop(count: u64, event_count: u64) -> StoreResult<()> {
    if count == 0 {
        return Err(StoreError::OutOfRange { field: "count", reason: "must be at least 1".into() });
    }
    if count > event_count {
        return Err(StoreError::OutOfRange {
            field: "count",
            reason: format!("the thread has {event_count} events, fewer than {count}"),
        });
    }
    Ok(())
}

/// The version a fork starts at: its prefix counts as one append, an empty one as none.
pub fn fork_version(prefix: u64) -> u64 {
    u64::from(prefix > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Versions 1..: counts after each (index 0 is version 1).
    struct Counts(Vec<u64>);

    impl VersionLog for Counts {
        fn count_at(&self, version: u64) -> StoreResult<Option<u64>> {
            Ok(self.0.get(version as usize - 1).copied())
        }
        fn lowest_count_after(&self, version: u64) -> StoreResult<Option<u64>> {
            Ok(self.0.iter().skip(version as usize).min().copied())
        }
    }

    #[test]
    fn fork_points_resolve_to_prefixes() {
        // v1: 2 events, v2: 5, v3: pop to 3, v4: 4.
        let log = Counts(vec![2, 5, 3, 4]);
        let at = |point| prefix_len(point, 4, 4, &log);
        assert_eq!(at(ForkPoint::Whole), Ok(4));
        assert_eq!(at(ForkPoint::Events(0)), Ok(0));
        assert_eq!(at(ForkPoint::Events(4)), Ok(4));
        assert_eq!(at(ForkPoint::Version(0)), Ok(0));
        assert_eq!(at(ForkPoint::Version(1)), Ok(2));
        assert_eq!(at(ForkPoint::Version(3)), Ok(3));
        assert_eq!(at(ForkPoint::Version(4)), Ok(4));
        let reason = |r: StoreResult<u64>| match r {
            Err(StoreError::OutOfRange { field, reason }) => format!("{field}: {reason}"),
            other => panic!("{other:?}"),
        };
        assert_eq!(reason(at(ForkPoint::Events(5))), "atEvent: the thread has 4 events, fewer than 5");
        assert_eq!(reason(at(ForkPoint::Version(5))), "atVersion: the thread is at version 4, before 5");
        assert_eq!(
            reason(at(ForkPoint::Version(2))),
            "atVersion: events of version 2 were popped since, so its events are gone"
        );
        let unrecorded = Counts(vec![]);
        assert!(reason(prefix_len(ForkPoint::Version(1), 1, 1, &unrecorded)).contains("not recorded"));
    }

    #[test]
    fn pops_need_events_to_remove() {
        assert!(check_pop(1, 1).is_ok());
        assert_eq!(
            check_pop(3, 2),
            Err(StoreError::OutOfRange { field: "count", reason: "the thread has 2 events, fewer than 3".into() })
        );
        assert!(check_pop(0, 2).is_err());
        assert_eq!((fork_version(0), fork_version(7)), (0, 1));
    }
}
