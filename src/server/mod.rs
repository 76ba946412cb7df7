//! The sidecar: protocol v1 (JSON-RPC 2.0) over a byte stream, usually stdin/stdout.
//!
//! Layers, outside in: [`framing`] cuts the stream into messages, [`dispatch`] applies the
//! lifecycle, batches, cancellation and per-thread ordering, and [`methods`] is the jsonrpsee
//! module that turns params into calls on the thread service.

mod cancel;
pub mod dispatch;
pub mod errors;
pub mod framing;
pub mod methods;
pub mod outbox;
#[cfg(unix)]
mod polling_input;
mod sniff;
pub mod table;
mod wire;

use crate::service::ThreadService;
use bytes::Bytes;
use bytes::BytesMut;
use dispatch::{Control, Dispatcher};
use framing::{Frame, FrameCodec, Framing};
use futures_util::{FutureExt, StreamExt};
use outbox::OutboxReceiver;
use std::future::Future;
use std::io::{Read, Write};
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio::io::AsyncRead;
use tokio::sync::mpsc;
use tokio_util::codec::{Encoder, FramedRead};

/// How long `exit` (or end of input) waits for running requests to answer.
pub const EXIT_GRACE: Duration = Duration::from_secs(10);
/// How long a stop signal waits for running requests to answer and their answers to be written.
pub const SIGNAL_GRACE: Duration = Duration::from_millis(1500);

/// Server settings that are not the service's.
#[derive(Clone, Copy, Debug)]
pub struct ServerConfig {
    /// Largest message accepted, in bytes.
    pub max_frame_bytes: usize,
    /// The OpenTelemetry export, when on (`initialize` reports it).
    pub tracing: Option<TracingCapability>,
}

/// What `initialize` says of the OpenTelemetry export.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TracingCapability {
    pub capture_content: bool,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig { max_frame_bytes: 64 << 20, tracing: None }
    }
}

/// Why the reader stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ending {
    /// The `exit` notification.
    Exit,
    /// End of input (or input failed).
    Input,
    /// A stop signal (SIGTERM, SIGINT).
    Signal,
}

/// Serves one connection until `exit` or end of input; returns the exit status
/// (0 when `shutdown` came first, else 1).
pub async fn serve<R, W>(input: R, output: W, service: Arc<ThreadService>, config: ServerConfig) -> i32
where
    R: AsyncRead + Unpin,
    W: Write + Send + 'static,
{
    serve_until(input, output, service, config, std::future::pending()).await
}

/// [`serve`], also ending when `stop` completes: the server stops reading, lets running
/// requests finish and writes their answers (for at most [`SIGNAL_GRACE`]), and returns 0.
///
/// Output is written by a thread of its own with plain blocking writes: a message goes from
/// the task that answered it to the pipe in one hand-off.
pub async fn serve_until<R, W, S>(
    input: R,
    output: W,
    service: Arc<ThreadService>,
    config: ServerConfig,
    stop: S,
) -> i32
where
    R: AsyncRead + Unpin,
    W: Write + Send + 'static,
    S: Future<Output = ()>,
{
    let context = methods::Context { service, max_frame_bytes: config.max_frame_bytes, tracing: config.tracing };
    let framing = Arc::new(OnceLock::new());
    let writer: outbox::SharedWriter = Arc::new(std::sync::Mutex::new(Box::new(FramedOutput {
        output,
        framing: framing.clone(),
        codec: None,
        max_frame_bytes: config.max_frame_bytes,
        buffer: BytesMut::new(),
        failed: false,
    })));
    let (out_tx, out_rx) = outbox::outbox(writer.clone());
    let (written_tx, written_rx) = tokio::sync::oneshot::channel::<()>();
    std::thread::Builder::new()
        .name("stdout".into())
        .spawn(move || {
            write_loop(writer, out_rx);
            let _ = written_tx.send(());
        })
        .expect("spawn output thread");
    let outbox = out_tx.clone();
    let mut dispatcher = Dispatcher::new(methods::table(context), out_tx);
    let running = dispatcher.tracker().clone();
    let mut frames = FramedRead::new(input, FrameCodec::new(config.max_frame_bytes));
    tokio::pin!(stop);

    // Answers to messages handled while more input was already read, written together.
    let mut held: Vec<String> = Vec::new();
    let ending = loop {
        let room = held.len() < MAX_HELD_ANSWERS && held.iter().map(String::len).sum::<usize>() < WRITE_BATCH_BYTES;
        let ready = if room { frames.next().now_or_never() } else { None };
        let frame = match ready {
            Some(frame) => frame,
            None => {
                outbox.send_all(&mut held);
                #[cfg(unix)]
                polling_input::before_waiting(running.is_empty());
                // Backpressure: the next message is read only when there is room for its answer.
                let next = async {
                    outbox.wait_for_room(&running).await;
                    frames.next().await
                };
                tokio::select! {
                    biased;
                    () = &mut stop => break Ending::Signal,
                    frame = next => frame,
                }
            }
        };
        if let Some(detected) = frames.decoder().framing() {
            let _ = framing.set(detected);
        }
        let frame = match frame {
            Some(Ok(frame)) => frame,
            Some(Err(e)) => {
                tracing::warn!(error = %e, "input failed");
                break Ending::Input;
            }
            None => break Ending::Input,
        };
        let control = match frame {
            Frame::Message(body) => {
                let control = outbox::corked(&mut held, || dispatcher.handle(&body));
                if body.len() >= GIVE_BACK_AFTER_MESSAGE_BYTES {
                    // A big message parsed into JSON values (an append of many events) freed
                    // several times its size when the reader finished with it.
                    drop(body);
                    release_read_buffer(frames.read_buffer_mut());
                    crate::service::give_back_memory();
                }
                control
            }
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
            break Ending::Exit;
        }
    };
    drop(frames); // stop reading
    outbox.send_all(&mut held);
    drop(outbox);

    let (status, grace) = match ending {
        Ending::Signal => {
            tracing::info!("stop signal: finishing running requests");
            (0, SIGNAL_GRACE)
        }
        Ending::Exit | Ending::Input => (if dispatcher.shutdown_requested() { 0 } else { 1 }, EXIT_GRACE),
    };
    let deadline = tokio::time::Instant::now() + grace;
    running.close();
    if tokio::time::timeout_at(deadline, running.wait()).await.is_err() {
        tracing::warn!("exiting with requests still running");
    }
    drop(dispatcher); // closes the output channel, so the writer drains and ends
    if tokio::time::timeout_at(deadline, written_rx).await.is_err() {
        tracing::warn!("exiting before all output was written");
    }
    status
}

/// Completes on SIGTERM or SIGINT (Ctrl-C). Handlers are installed when this is called, not
/// when the future is first polled.
pub fn stop_signal() -> impl Future<Output = ()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let term = signal(SignalKind::terminate());
        let int = signal(SignalKind::interrupt());
        async move {
            match (term, int) {
                (Ok(mut term), Ok(mut int)) => {
                    tokio::select! {
                        _ = term.recv() => {}
                        _ = int.recv() => {}
                    }
                }
                (term, int) => {
                    let error = term.err().or(int.err()).map(|e| e.to_string()).unwrap_or_default();
                    tracing::warn!(error, "cannot handle stop signals");
                    std::future::pending::<()>().await;
                }
            }
        }
    }
    #[cfg(not(unix))]
    {
        async {
            if tokio::signal::ctrl_c().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    }
}

/// The output and the framing it writes.
struct FramedOutput<W> {
    output: W,
    framing: Arc<OnceLock<Framing>>,
    codec: Option<FrameCodec>,
    max_frame_bytes: usize,
    buffer: BytesMut,
    failed: bool,
}

impl<W: Write + Send> outbox::AnswerWriter for FramedOutput<W> {
    fn write_answers(&mut self, answers: &[&str]) -> bool {
        if self.failed {
            return false;
        }
        // The framing is known once the first message has been read, before any answer exists.
        let (framing, max) = (&self.framing, self.max_frame_bytes);
        let codec = self
            .codec
            .get_or_insert_with(|| FrameCodec::with_framing(framing.get().copied().unwrap_or(Framing::Lsp), max));
        let mut result = Ok(());
        for answer in answers {
            if answer.len() <= WRITE_BATCH_BYTES {
                let _ = codec.encode(answer.as_bytes(), &mut self.buffer);
                continue;
            }
            // A large answer is written from where it lies rather than copied behind its header.
            codec.encode_head(answer.len(), &mut self.buffer);
            result = result
                .and_then(|_| self.output.write_all(&self.buffer))
                .and_then(|_| self.output.write_all(answer.as_bytes()));
            self.buffer.clear();
            self.buffer.extend_from_slice(codec.tail());
        }
        let result = result.and_then(|_| self.output.write_all(&self.buffer)).and_then(|_| self.output.flush());
        self.buffer.clear();
        if self.buffer.capacity() > 4 * WRITE_BATCH_BYTES {
            self.buffer = BytesMut::new(); // one large answer should not pin its size for good
        }
        if let Err(e) = result {
            tracing::warn!(error = %e, "output failed");
            self.failed = true;
        }
        !self.failed
    }
}

/// The writer thread: writes what the answering tasks queued, several answers at a time.
fn write_loop(writer: outbox::SharedWriter, mut rx: OutboxReceiver) {
    while let Some(message) = rx.blocking_recv() {
        // Take what is queued (up to a bound, so the copy stays small), then write and flush once.
        let mut batch = vec![message];
        let mut taken = batch[0].len();
        while taken < WRITE_BATCH_BYTES {
            let Some(more) = rx.try_recv() else { break };
            taken += more.len();
            batch.push(more);
        }
        let answers: Vec<&str> = batch.iter().map(String::as_str).collect();
        let ok = writer.lock().unwrap_or_else(|p| p.into_inner()).write_answers(&answers);
        drop(answers);
        batch.into_iter().for_each(outbox::freed_after_writing);
        rx.written(taken);
        if !ok {
            return;
        }
    }
}

/// The reader writes the answers it holds once this many wait, or [`WRITE_BATCH_BYTES`] of
/// them, even if more input is ready: held answers count against no backpressure bound.
const MAX_HELD_ANSWERS: usize = 256;

/// After handling a message of at least this many bytes, freed memory is given back at once.
const GIVE_BACK_AFTER_MESSAGE_BYTES: usize = 4 << 20;

/// Moves what the read buffer holds past a big message into a buffer of its own. A message is
/// cut from the read buffer without a copy, sharing its allocation, which the read buffer then
/// keeps (grown to the message's size) for as long as the server reads: freeing the message
/// did not free that memory, and a big request (a 16 MiB import) kept it resident while it ran.
fn release_read_buffer(buffer: &mut BytesMut) {
    if buffer.capacity() >= GIVE_BACK_AFTER_MESSAGE_BYTES {
        *buffer = BytesMut::from(&buffer[..]);
    }
}

/// Answers queued together are written in one go up to about this many bytes.
const WRITE_BATCH_BYTES: usize = 1 << 20;

/// Standard output for the server's answers, unbuffered: the answers of one batch are framed
/// into one buffer and go out in one write. `std::io::stdout()` is line-buffered, which cuts an
/// LSP frame after its header's last newline: the header went out in one write and the body in a
/// second one at the flush, so the host was woken twice for every answer.
pub fn stdout_output() -> Box<dyn Write + Send> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        if let Ok(stdout) = std::io::stdout().as_fd().try_clone_to_owned() {
            return Box::new(std::fs::File::from(stdout));
        }
    }
    Box::new(std::io::stdout())
}

/// Standard input for the server: read through the runtime's reactor when it is a pipe or a
/// socket (Python hosts spawn with pipes, Node's libuv with socket pairs), so a request wakes
/// the task that parses it directly, with no thread in between; any other stdin (a file, a
/// terminal) through [`stdin_reader`]. Call it inside the runtime.
pub fn stdin_input() -> Box<dyn AsyncRead + Unpin + Send> {
    #[cfg(unix)]
    if let Some(reader) = reactor_stdin() {
        return reader;
    }
    Box::new(stdin_reader())
}

/// Stdin registered with the reactor, when that cannot disturb stdout: reading this way makes
/// the open file non-blocking, so it is not done when stdin and stdout are the same file (a
/// socket handed over as both), where blocking writes would start to fail.
#[cfg(unix)]
fn reactor_stdin() -> Option<Box<dyn AsyncRead + Unpin + Send>> {
    use std::os::fd::AsFd;
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let stdin = std::fs::File::from(std::io::stdin().as_fd().try_clone_to_owned().ok()?);
    let stdout = std::fs::File::from(std::io::stdout().as_fd().try_clone_to_owned().ok()?);
    let (input, output) = (stdin.metadata().ok()?, stdout.metadata().ok()?);
    if (input.dev(), input.ino()) == (output.dev(), output.ino()) {
        return None;
    }
    let file_type = input.file_type();
    // A second handle on the same open file, non-blocking once the reactor's is.
    let polled = stdin.try_clone().ok()?;
    if file_type.is_fifo() {
        let inner = Box::new(tokio::net::unix::pipe::Receiver::from_file(stdin).ok()?);
        return Some(Box::new(polling_input::PollingInput::new(inner, polled)));
    }
    if file_type.is_socket() {
        let socket = std::os::unix::net::UnixStream::from(std::os::fd::OwnedFd::from(stdin));
        socket.set_nonblocking(true).ok()?;
        let inner = Box::new(tokio::net::UnixStream::from_std(socket).ok()?);
        return Some(Box::new(polling_input::PollingInput::new(inner, polled)));
    }
    None
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
