//! The cancellation token of the request a method runs for.
//!
//! The dispatcher runs each method inside [`scope`], so a handler reaches its request's token
//! with [`current`] without the method table passing it along.

use std::future::Future;
use tokio_util::sync::CancellationToken;

tokio::task_local! {
    static CURRENT: CancellationToken;
}

/// Runs `work` as the request `token` cancels.
pub async fn scope<F: Future>(token: CancellationToken, work: F) -> F::Output {
    CURRENT.scope(token, work).await
}

/// The token of the running request; one that never fires outside [`scope`].
pub fn current() -> CancellationToken {
    CURRENT.try_with(CancellationToken::clone).unwrap_or_default()
}
