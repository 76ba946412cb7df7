//! The cancellation token of the request a method runs for.
//!
//! The dispatcher runs each method inside [`scope`], so a handler reaches its request's token
//! with [`current`] without the method table passing it along.

use jsonrpsee::types::ErrorObjectOwned;
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

/// Runs `work` on a blocking thread as the current request, and answers
/// [`errors::CANCELLED`](super::errors::CANCELLED) at once when the request is cancelled. The work
/// must change nothing (parsing, converting, rendering); it may look at the token it is given to
/// stop early, or run out unobserved.
pub async fn off_loop<T, W>(work: W) -> Result<T, ErrorObjectOwned>
where
    T: Send + 'static,
    W: FnOnce(&CancellationToken) -> Result<T, ErrorObjectOwned> + Send + 'static,
{
    let token = current();
    let for_work = token.clone();
    let job = tokio::task::spawn_blocking(move || work(&for_work));
    tokio::select! {
        biased;
        _ = token.cancelled() => Err(cancelled()),
        done = job => done.unwrap_or_else(|e| Err(internal(&e.to_string()))),
    }
}

fn cancelled() -> ErrorObjectOwned {
    ErrorObjectOwned::owned(super::errors::CANCELLED, "request cancelled", None::<()>)
}

fn internal(reason: &str) -> ErrorObjectOwned {
    ErrorObjectOwned::owned(super::errors::INTERNAL_ERROR, format!("internal error: {reason}"), None::<()>)
}
