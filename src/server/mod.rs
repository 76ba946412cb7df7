//! The sidecar: protocol v1 (JSON-RPC 2.0) over a byte stream, usually stdin/stdout.
//!
//! Layers, outside in: [`framing`] cuts the stream into messages, [`dispatch`] applies the
//! lifecycle, batches, cancellation and per-thread ordering, and [`methods`] is the jsonrpsee
//! module that turns params into calls on the thread service.

pub mod dispatch;
pub mod errors;
pub mod framing;
pub mod methods;
mod sniff;
mod turn_methods;

use crate::service::ThreadService;
use bytes::Bytes;
use bytes::BytesMut;
use dispatch::{Control, Dispatcher};
use framing::{Frame, FrameCodec, Framing};
use futures_util::StreamExt;
use std::io::{Read, Write};
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio::io::AsyncRead;
use tokio::sync::mpsc;
use tokio_util::codec::{Encoder, FramedRead};

/// How long `exit` (or end of input) waits for running requests to answer.
pub const EXIT_GRACE: Duration = Duration::from_secs(10);

/// Server settings that are not the service's.
#[derive(Clone, Copy, Debug)]
pub struct ServerConfig {
    /// Largest message accepted, in bytes.
    pub max_frame_bytes: usize,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig { max_frame_bytes: 64 << 20 }
    }
}

/// Serves one connection until `exit` or end of input; returns the exit status
/// (0 when `shutdown` came first, else 1).
///
/// Output is written by a thread of its own with plain blocking writes: a message goes from
/// the task that answered it to the pipe in one hand-off.
pub async fn serve<R, W>(input: R, output: W, service: Arc<ThreadService>, config: ServerConfig) -> i32
where
    R: AsyncRead + Unpin,
    W: Write + Send + 'static,
{
    let context = methods::Context { service, max_frame_bytes: config.max_frame_bytes };
    let framing = Arc::new(OnceLock::new());
    let (out_tx, out_rx) = mpsc::unbounded_channel::<String>();
    let (written_tx, written_rx) = tokio::sync::oneshot::channel::<()>();
    let writer_framing = framing.clone();
    let max_frame_bytes = config.max_frame_bytes;
    std::thread::Builder::new()
        .name("stdout".into())
        .spawn(move || {
            write_loop(output, out_rx, writer_framing, max_frame_bytes);
            let _ = written_tx.send(());
        })
        .expect("spawn output thread");
    let mut dispatcher = Dispatcher::new(methods::module(context), out_tx);
    let mut frames = FramedRead::new(input, FrameCodec::new(config.max_frame_bytes));

    while let Some(frame) = frames.next().await {
        if let Some(detected) = frames.decoder().framing() {
            let _ = framing.set(detected);
        }
        let frame = match frame {
            Ok(frame) => frame,
            Err(e) => {
                tracing::warn!(error = %e, "input failed");
                break;
            }
        };
        let control = match frame {
            Frame::Message(body) => dispatcher.handle(&body),
            Frame::TooLarge { len, max, id } => {
                let error = errors::limit_exceeded("maxFrameBytes", len as u64, max as u64);
                dispatcher.send_error_object(id.as_deref().unwrap_or("null"), &error);
                Control::Continue
            }
            Frame::Garbage { reason } => {
                dispatcher.send_error(errors::PARSE_ERROR, &format!("parse error: {reason}"));
                Control::Continue
            }
        };
        if control == Control::Exit {
            break;
        }
    }

    let status = if dispatcher.shutdown_requested() { 0 } else { 1 };
    let tracker = dispatcher.tracker().clone();
    tracker.close();
    if tokio::time::timeout(EXIT_GRACE, tracker.wait()).await.is_err() {
        tracing::warn!("exiting with requests still running");
    }
    drop(dispatcher); // closes the output channel, so the writer drains and ends
    if tokio::time::timeout(EXIT_GRACE, written_rx).await.is_err() {
        tracing::warn!("exiting before all output was written");
    }
    status
}

fn write_loop<W: Write>(
    mut output: W,
    mut rx: mpsc::UnboundedReceiver<String>,
    framing: Arc<OnceLock<Framing>>,
    max_frame_bytes: usize,
) {
    let mut codec: Option<FrameCodec> = None;
    let mut buffer = BytesMut::new();
    while let Some(message) = rx.blocking_recv() {
        // The framing is known once the first message has been read, before any answer exists.
        let codec = codec.get_or_insert_with(|| {
            FrameCodec::with_framing(framing.get().copied().unwrap_or(Framing::Lsp), max_frame_bytes)
        });
        // Frame everything queued, then write and flush once.
        let _ = codec.encode(message.as_bytes(), &mut buffer);
        while let Ok(more) = rx.try_recv() {
            let _ = codec.encode(more.as_bytes(), &mut buffer);
        }
        if let Err(e) = output.write_all(&buffer).and_then(|_| output.flush()) {
            tracing::warn!(error = %e, "output failed");
            return;
        }
        buffer.clear();
    }
}

/// Standard input as an async reader that never blocks shutdown.
///
/// tokio's stdin reads on a blocking-pool thread that cannot be cancelled, which can keep a
/// runtime from shutting down; a plain thread feeding a channel can simply be abandoned.
pub fn stdin_reader() -> impl AsyncRead + Unpin {
    let (tx, rx) = mpsc::channel::<std::io::Result<Bytes>>(16);
    std::thread::Builder::new()
        .name("stdin".into())
        .spawn(move || {
            let mut stdin = std::io::stdin().lock();
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                match stdin.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        if tx.blocking_send(Ok(Bytes::copy_from_slice(&buf[..n]))).is_err() {
                            break;
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => {
                        let _ = tx.blocking_send(Err(e));
                        break;
                    }
                }
            }
        })
        .expect("spawn stdin thread");
    tokio_util::io::StreamReader::new(tokio_stream_from(rx))
}

fn tokio_stream_from(
    mut rx: mpsc::Receiver<std::io::Result<Bytes>>,
) -> impl futures_util::Stream<Item = std::io::Result<Bytes>> + Unpin {
    Box::pin(futures_util::stream::poll_fn(move |cx| rx.poll_recv(cx)))
}
