//! Which threads' next appends are due soon, so that a group commit may wait for them.
//!
//! A host that drives several agent loops through one server calls again as soon as each
//! answer arrives. Sent at once, the appends that happen to be waiting go out in small groups
//! that take turns, each paying its own commit. Held back until the threads answered a moment
//! ago are back (never longer than the hold), they go out together: one commit, one flush of
//! the log and one round trip for all of them. A thread counts as due only when it came back
//! within the hold last time; a loop that thinks (calls a model) between appends never holds
//! anyone up, and neither does a lone writer.

use std::collections::HashMap;
use std::time::{Duration, Instant};

/// How late past twice its usual turnaround a thread is still waited for: a task or process
/// is often scheduled that much later than usual.
const LATE: Duration = Duration::from_micros(100);

/// Threads not heard of for this long are forgotten.
const FORGET_AFTER: Duration = Duration::from_secs(10);

/// The pace of each thread that appended lately.
pub struct Pace {
    hold: Duration,
    threads: HashMap<String, Seen>,
    pruned: Instant,
}

struct Seen {
    /// When its last append was answered; `None` while one is waiting or in flight.
    answered: Option<Instant>,
    /// How long it took to come back after an answer (a moving average).
    turnaround: Option<Duration>,
    last: Instant,
}

impl Pace {
    /// `hold`: the longest a waiting append is held back for others (zero: never).
    pub fn new(hold: Duration) -> Self {
        Pace { hold, threads: HashMap::new(), pruned: Instant::now() }
    }

    pub fn hold(&self) -> Duration {
        self.hold
    }

    /// An append to `thread` arrived.
    pub fn arrived(&mut self, thread: &str, now: Instant) {
        if self.hold.is_zero() {
            return;
        }
        match self.threads.get_mut(thread) {
            Some(seen) => {
                if let Some(answered) = seen.answered.take() {
                    let sample = now.saturating_duration_since(answered);
                    // Weighted towards the newest, so a loop that slows down stops counting soon.
                    seen.turnaround = Some(match seen.turnaround {
                        Some(average) => (average + sample * 3) / 4,
                        None => sample,
                    });
                }
                seen.last = now;
            }
            None => {
                self.threads.insert(thread.to_owned(), Seen { answered: None, turnaround: None, last: now });
            }
        }
        self.prune(now);
    }

    /// An append to `thread` was answered.
    pub fn answered(&mut self, thread: &str, now: Instant) {
        if let Some(seen) = self.threads.get_mut(thread) {
            seen.answered = Some(now);
            seen.last = now;
        }
    }

    /// Until when to hold waiting appends back for the threads due, if any is due before
    /// `until` (and never past it). Due: answered, not back yet, and it usually comes back
    /// within the hold; each is waited for until twice its usual turnaround (and [`LATE`])
    /// after its answer, so one that is late is soon given up.
    pub fn wait_until(&self, now: Instant, until: Instant) -> Option<Instant> {
        if until <= now {
            return None;
        }
        self.threads
            .values()
            .filter_map(|seen| {
                let (answered, turnaround) = (seen.answered?, seen.turnaround?);
                let give_up = answered + turnaround * 2 + LATE;
                (turnaround <= self.hold && give_up > now && answered + turnaround < until).then_some(give_up)
            })
            .max()
            .map(|give_up| give_up.min(until))
    }

    fn prune(&mut self, now: Instant) {
        if now.saturating_duration_since(self.pruned) < FORGET_AFTER {
            return;
        }
        self.pruned = now;
        self.threads.retain(|_, seen| now.saturating_duration_since(seen.last) < FORGET_AFTER);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOLD: Duration = Duration::from_millis(1);

    fn us(n: u64) -> Duration {
        Duration::from_micros(n)
    }

    #[test]
    fn a_thread_that_comes_back_quickly_is_waited_for_up_to_twice_its_turnaround() {
        let t0 = Instant::now();
        let mut pace = Pace::new(HOLD);
        pace.arrived("a", t0);
        pace.answered("a", t0 + us(300));
        // Not known yet how quickly it comes back.
        assert_eq!(pace.wait_until(t0 + us(301), t0 + us(2000)), None);
        pace.arrived("a", t0 + us(500)); // back after 200 µs
        pace.answered("a", t0 + us(800));
        assert_eq!(pace.wait_until(t0 + us(850), t0 + us(2000)), Some(t0 + us(1300)));
        // Never past the limit, not at all when expected after it, nor once it has passed.
        assert_eq!(pace.wait_until(t0 + us(850), t0 + us(1100)), Some(t0 + us(1100)));
        assert_eq!(pace.wait_until(t0 + us(850), t0 + us(900)), None);
        assert_eq!(pace.wait_until(t0 + us(1100), t0 + us(1100)), None);
        // Late by more than its turnaround (and a little): given up.
        assert_eq!(pace.wait_until(t0 + us(1300), t0 + us(2000)), None);
        // Back: not waited for any more.
        pace.arrived("a", t0 + us(1000));
        assert_eq!(pace.wait_until(t0 + us(1001), t0 + us(2000)), None);
    }

    #[test]
    fn several_threads_due_are_all_waited_for() {
        let t0 = Instant::now();
        let mut pace = Pace::new(HOLD);
        for (thread, turnaround) in [("a", 100), ("b", 300)] {
            pace.arrived(thread, t0);
            pace.answered(thread, t0 + us(10));
            pace.arrived(thread, t0 + us(10 + turnaround));
            pace.answered(thread, t0 + us(1000));
        }
        assert_eq!(pace.wait_until(t0 + us(1001), t0 + us(5000)), Some(t0 + us(1700)));
    }

    #[test]
    fn a_thread_that_thinks_between_appends_never_holds_others() {
        let t0 = Instant::now();
        let mut pace = Pace::new(HOLD);
        pace.arrived("slow", t0);
        pace.answered("slow", t0 + us(300));
        pace.arrived("slow", t0 + Duration::from_millis(800)); // a model call in between
        pace.answered("slow", t0 + Duration::from_millis(801));
        assert_eq!(pace.wait_until(t0 + Duration::from_millis(801), t0 + Duration::from_secs(5)), None);
    }

    #[test]
    fn the_average_follows_a_loop_that_slows_down() {
        let t0 = Instant::now();
        let mut pace = Pace::new(HOLD);
        let mut at = t0;
        pace.arrived("a", at);
        for gap in [us(200), us(200), us(5000), us(5000)] {
            pace.answered("a", at);
            at += gap;
            pace.arrived("a", at);
        }
        pace.answered("a", at);
        assert_eq!(pace.wait_until(at, at + Duration::from_secs(1)), None);
    }

    #[test]
    fn no_hold_keeps_nothing() {
        let t0 = Instant::now();
        let mut pace = Pace::new(Duration::ZERO);
        pace.arrived("a", t0);
        pace.answered("a", t0 + us(10));
        pace.arrived("a", t0 + us(20));
        pace.answered("a", t0 + us(30));
        assert!(pace.threads.is_empty());
        assert_eq!(pace.wait_until(t0 + us(31), t0 + us(1000)), None);
    }
}
