//! Stdin read without a wake-up when the host calls again soon: right after the reader has
//! answered everything, it polls its input for a while before it sleeps (`protocol/README.md`,
//! Latency). A wake-up through the reactor costs tens of microseconds on a virtual machine,
//! more than a small request's whole work.
//!
//! How long to poll follows the host ([`Pace`]): a window sized to how soon its recent requests
//! came after the answers, bounded, and no polling at all for a host slower than the bound. The
//! reader also polls only when no request is still running: a host waiting on one of its calls
//! (an append waiting on the database) sends nothing meanwhile, and polling would only take a
//! core from it and the database.

use std::io::Read;
use std::pin::Pin;
use std::sync::atomic::{AtomicU8, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, ReadBuf};

/// The shortest poll: what a host that calls again at once needs.
const MIN_WINDOW: Duration = Duration::from_micros(50);
/// The longest poll, and the slowest host turnaround still polled for.
const MAX_WINDOW: Duration = Duration::from_micros(250);
/// How many recent turnarounds size the window.
const RECENT: usize = 4;

/// What the reader is doing, for the input: set just before it waits for a message.
static READER: AtomicU8 = AtomicU8::new(READING);
const READING: u8 = 0;
const WAITING_ALL_ANSWERED: u8 = 1;
const WAITING_WHILE_RUNNING: u8 = 2;

/// Called by the reader once its answers are written, before it waits for the next message;
/// `all_answered`: no request is still running.
pub(super) fn before_waiting(all_answered: bool) {
    READER.store(if all_answered { WAITING_ALL_ANSWERED } else { WAITING_WHILE_RUNNING }, Ordering::Relaxed);
}

/// The host's recent turnarounds: how long after the server had answered everything its next
/// request came (measured exactly when a poll caught it, with the wake-up included otherwise).
#[derive(Debug, Default)]
pub(super) struct Pace {
    recent: [Duration; RECENT],
    next: usize,
}

impl Pace {
    pub(super) fn record(&mut self, turnaround: Duration) {
        self.recent[self.next] = turnaround;
        self.next = (self.next + 1) % RECENT;
    }

    /// How long to poll after the next answers; `None`: sleep at once.
    pub(super) fn window(&self) -> Option<Duration> {
        let mut sorted = self.recent;
        sorted.sort_unstable();
        // The second slowest of the last four: one late call (a pause in the host) neither stops
        // the polling nor stretches it.
        let typical = sorted[RECENT - 2];
        (typical <= MAX_WINDOW).then(|| (typical * 2).clamp(MIN_WINDOW, MAX_WINDOW))
    }
}

/// Non-blocking stdin polled for [`Pace::window`] after the answers went out.
pub(super) struct PollingInput {
    inner: Box<dyn AsyncRead + Unpin + Send>,
    /// A second handle on the same non-blocking open file, read directly while polling.
    polled: std::fs::File,
    pace: Pace,
    /// When the reader went to sleep with everything answered: the host's turnaround runs from there.
    slept_from: Option<Instant>,
}

impl PollingInput {
    pub(super) fn new(inner: Box<dyn AsyncRead + Unpin + Send>, polled: std::fs::File) -> Self {
        PollingInput { inner, polled, pace: Pace::default(), slept_from: None }
    }
}

impl AsyncRead for PollingInput {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let pending = Pin::new(&mut self.inner).poll_read(cx, buf);
        if pending.is_ready() {
            if let Some(from) = self.slept_from.take() {
                self.pace.record(from.elapsed());
            }
            return pending;
        }
        match READER.swap(READING, Ordering::Relaxed) {
            WAITING_ALL_ANSWERED => {}
            WAITING_WHILE_RUNNING => {
                // The next request may wait for a running one's answer: no turnaround to learn.
                self.slept_from = None;
                return pending;
            }
            _ => return pending,
        }
        let now = Instant::now();
        let Some(window) = self.pace.window() else {
            self.slept_from = Some(now);
            return pending;
        };
        let until = now + window;
        let unfilled = buf.initialize_unfilled();
        loop {
            match (&self.polled).read(unfilled) {
                Ok(n) => {
                    self.pace.record(now.elapsed());
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted) => {}
                Err(e) => return Poll::Ready(Err(e)),
            }
            if Instant::now() >= until {
                // The inner reader is registered for the next readiness, so sleeping is safe.
                self.slept_from = Some(now);
                return pending;
            }
            // Yield rather than spin: on a machine with fewer cores than runnable threads the
            // host itself (and whatever serves it) gets this core while the poll waits for it.
            std::thread::yield_now();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn micros(n: u64) -> Duration {
        Duration::from_micros(n)
    }

    #[test]
    fn a_host_that_calls_again_at_once_is_polled_for_the_shortest_window() {
        let mut pace = Pace::default();
        assert_eq!(pace.window(), Some(MIN_WINDOW), "polls from the start");
        (0..4).for_each(|_| pace.record(micros(8)));
        assert_eq!(pace.window(), Some(MIN_WINDOW));
    }

    #[test]
    fn the_window_covers_twice_the_typical_turnaround_up_to_the_bound() {
        let mut pace = Pace::default();
        (0..4).for_each(|_| pace.record(micros(70)));
        assert_eq!(pace.window(), Some(micros(140)));
        (0..4).for_each(|_| pace.record(micros(200)));
        assert_eq!(pace.window(), Some(MAX_WINDOW));
    }

    #[test]
    fn one_late_call_neither_stops_nor_stretches_the_polling() {
        let mut pace = Pace::default();
        [30, 30, 5_000, 30].into_iter().for_each(|n| pace.record(micros(n)));
        assert_eq!(pace.window(), Some(micros(60)));
    }

    #[test]
    fn a_slow_host_is_not_polled_until_it_is_quick_again() {
        let mut pace = Pace::default();
        (0..4).for_each(|_| pace.record(micros(400)));
        assert_eq!(pace.window(), None);
        pace.record(micros(40));
        assert_eq!(pace.window(), None, "one quick call is not a pace");
        (0..2).for_each(|_| pace.record(micros(40)));
        assert_eq!(pace.window(), Some(micros(80)));
    }
}
