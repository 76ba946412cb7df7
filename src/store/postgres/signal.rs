//! The change signal across servers, without a global lock per change.
//!
//! PostgreSQL serializes the commits of every transaction that sent a `NOTIFY` (it takes one
//! database-wide lock at commit), so the store sends one only when it is useful:
//!
//! - **Only while someone watches.** A watcher (`watch_changes`, e.g. `view --serve`) holds a
//!   row in `threadkeeper_watchers` with a lease it renews every [`HEARTBEAT`]; a change
//!   notifies only when some lease is live, which the notifying statement itself checks (a
//!   read of a table of a few rows). A watcher that dies without a word stops counting when its
//!   lease runs out ([`LEASE`]).
//! - **At most a few times a second per server.** A change carries the notification only when
//!   the server's last one is [`NOTIFY_INTERVAL`] old; the changes in between are covered by one
//!   notification sent on its own at the end of the interval, after they committed.
//!
//! A watcher also signals when it (re)connects and at each heartbeat, so that a change made
//! while no lease was visible to it (one in flight when the watch began) is still seen.

use super::{chain, Database};
use crate::store::changes::bump;
use crate::store::StoreResult;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, watch};
use tokio_postgres::NoTls;

/// True while some watcher's lease is live: the condition of every notification (SQL).
macro_rules! watched {
    () => {
        "EXISTS (SELECT 1 FROM threadkeeper_watchers WHERE lease_until > now())"
    };
}

/// The notification itself (SQL), on the channel every watcher listens on.
macro_rules! notify {
    () => {
        "pg_notify('threadkeeper_changes', '')"
    };
}

/// The channel `notify!` names.
pub const CHANGES_CHANNEL: &str = "threadkeeper_changes";

/// How long a watcher counts after its last heartbeat.
pub const LEASE: Duration = Duration::from_secs(10);
/// How often a watcher renews its lease (and signals once, see the module's note).
pub const HEARTBEAT: Duration = Duration::from_secs(2);
/// A server notifies at most once per this interval (plus the one that closes it).
pub const NOTIFY_INTERVAL: Duration = Duration::from_millis(250);

/// A notification sent only when someone watches (forks, deletes and the interval's last).
pub const NOTIFY_IF_WATCHED_SQL: &str = concat!("SELECT ", notify!(), " WHERE ", watched!());

/// Decides which changes of this server carry a notification.
pub struct NotifyGate {
    state: Mutex<GateState>,
}

#[derive(Default)]
struct GateState {
    last_sent: Option<Instant>,
    flush_scheduled: bool,
}

impl NotifyGate {
    pub fn new() -> Self {
        NotifyGate { state: Mutex::new(GateState::default()) }
    }

    /// Whether the change about to be sent may carry the notification (if someone watches).
    pub fn may_carry(&self) -> bool {
        let mut state = self.state.lock().expect("notify gate");
        let due = state.last_sent.is_none_or(|at| at.elapsed() >= NOTIFY_INTERVAL);
        if due {
            state.last_sent = Some(Instant::now());
        }
        due
    }

    /// After a change committed without carrying the notification: makes sure one follows
    /// within the interval.
    pub fn committed_uncarried(&self, db: &Arc<Database>) {
        let wait = {
            let mut state = self.state.lock().expect("notify gate");
            if state.flush_scheduled {
                return;
            }
            state.flush_scheduled = true;
            let since = state.last_sent.map_or(NOTIFY_INTERVAL, |at| at.elapsed());
            NOTIFY_INTERVAL.saturating_sub(since)
        };
        let db = db.clone();
        tokio::spawn(async move {
            tokio::time::sleep(wait).await;
            {
                // From here on, a change that commits without carrying schedules the next one.
                let mut state = db.notify_gate.state.lock().expect("notify gate");
                state.flush_scheduled = false;
                state.last_sent = Some(Instant::now());
            }
            if let Err(e) = db.notify_if_watched().await {
                tracing::warn!(error = %e, "PostgreSQL: could not signal changes to watchers");
            }
        });
    }
}

impl Database {
    /// The standalone notification (only when someone watches).
    pub async fn notify_if_watched(&self) -> StoreResult<()> {
        self.query(NOTIFY_IF_WATCHED_SQL, &[]).await.map(drop)
    }
}

/// Watches on a connection of its own until nobody watches, reconnecting after a failure (a
/// reconnect counts as a change: notifications may have been missed meanwhile).
pub async fn watch_database(config: tokio_postgres::Config, sender: watch::Sender<u64>) {
    loop {
        let ended = listen(&config, &sender).await;
        if sender.is_closed() {
            return;
        }
        let reason = ended.err().map_or_else(|| "closed by the server".to_owned(), |e| chain(&e));
        tracing::warn!(%reason, "PostgreSQL change watch lost its connection; reconnecting");
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_secs(1)) => {}
            _ = sender.closed() => return,
        }
    }
}

/// `LISTEN`s, registers the lease and renews it, signalling on every notification.
async fn listen(config: &tokio_postgres::Config, sender: &watch::Sender<u64>) -> Result<(), tokio_postgres::Error> {
    use futures_util::StreamExt;
    use tokio_postgres::AsyncMessage;
    let (client, mut connection) = config.connect(NoTls).await?;
    // The connection is driven by a task of its own, which hands notifications over.
    let (messages_in, mut messages) = mpsc::unbounded_channel();
    let driver = tokio::spawn(async move {
        let mut stream = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(message) = stream.next().await {
            let end = message.is_err();
            if messages_in.send(message).is_err() || end {
                return;
            }
        }
    });
    let _stop_driver = AbortOnDrop(driver);
    let watcher_id = uuid::Uuid::new_v4().to_string();
    client.batch_execute(&format!("LISTEN {CHANGES_CHANNEL}")).await?;
    // Watchers gone for a minute are cleared by the next one to start.
    let lease = lease_sql(&watcher_id);
    client
        .batch_execute(&format!(
            "DELETE FROM threadkeeper_watchers WHERE lease_until < now() - interval '1 minute'; {lease}"
        ))
        .await?;
    bump(sender);
    let mut heartbeat = tokio::time::interval_at(tokio::time::Instant::now() + HEARTBEAT, HEARTBEAT);
    loop {
        tokio::select! {
            _ = heartbeat.tick() => {
                client.batch_execute(&lease).await?;
                bump(sender);
            }
            message = messages.recv() => match message {
                Some(Ok(AsyncMessage::Notification(_))) => bump(sender),
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(e),
                None => return Ok(()),
            },
            _ = sender.closed() => {
                // Leave at once rather than when the lease runs out; a failure only costs that.
                let _ = client
                    .batch_execute(&format!("DELETE FROM threadkeeper_watchers WHERE watcher_id = '{watcher_id}'"))
                    .await;
                return Ok(());
            }
        }
    }
}

/// Takes or renews the lease (again after it was cleared as stale).
fn lease_sql(watcher_id: &str) -> String {
    format!(
        "INSERT INTO threadkeeper_watchers (watcher_id, lease_until, backend_pid)
         VALUES ('{watcher_id}', now() + interval '{} seconds', pg_backend_pid())
         ON CONFLICT (watcher_id) DO UPDATE SET lease_until = excluded.lease_until",
        LEASE.as_secs()
    )
}

struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_change_carries_and_the_next_within_the_interval_does_not() {
        let gate = NotifyGate::new();
        assert!(gate.may_carry());
        assert!(!gate.may_carry());
        gate.state.lock().unwrap().last_sent = Some(Instant::now() - NOTIFY_INTERVAL);
        assert!(gate.may_carry());
    }
}
