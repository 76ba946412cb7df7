//! The LSP base protocol: a header block (`Content-Length: N`, other headers ignored), a blank
//! line, then N bytes of body.
//!
//! Every read costs time in proportion to the bytes that arrived, not to the frame so far: the
//! body scan remembers where it stopped, and an over-limit body is dropped as it streams in.
//!
//! Resynchronisation: after a bad header block, or a body shown not to be one message, the
//! decoder reports it and skips to the next `Content-Length` (any case). A body is shown not to
//! be one message when a whole `Content-Length: N` line appears inside it (see [`header`]): the
//! frame before it was declared too long. The bytes before that line are then served as a
//! message when they are one JSON value, else reported; decoding goes on at the line.

use super::header::{
    find_content_length, header_line_ending_at, header_prefix, partial_name_suffix, unfinished_header_at_end,
    HeaderPrefix, MAX_HEADER_LINE,
};
use super::Frame;
use crate::server::sniff::{sniff_id, SNIFF_BYTES};
use bytes::{Buf, BytesMut};
use memchr::{memchr, memchr_iter};

/// Longest header block accepted before it is treated as garbage.
const MAX_HEADER_BYTES: usize = 8 * 1024;

/// Answer to a JSON message sent on its own line to an LSP connection.
pub const NOT_LSP: &str = "expected an LSP Content-Length header; this connection uses LSP framing";

#[derive(Debug)]
enum State {
    /// Reading a header block.
    Header,
    /// Reading a body of `len` bytes; line feeds before `scanned` were checked for a header.
    Body { len: usize, scanned: usize },
    /// Reading the first bytes (up to [`SNIFF_BYTES`]) of an over-limit body of `len` bytes,
    /// for the request's id to answer; line feeds before `scanned` were checked for a header.
    Sniff { len: usize, scanned: usize },
    /// Dropping an over-limit body: `remaining` bytes are still to come. The buffer's first
    /// `kept` bytes were already counted; they stay only so a header line split across two
    /// reads is still recognised.
    Skip { remaining: usize, kept: usize },
    /// Dropping bytes up to the next `Content-Length`.
    Resync,
}

#[derive(Debug)]
pub struct LspDecoder {
    max_frame: usize,
    state: State,
}

/// What one step of decoding did.
enum Step {
    Emit(Frame),
    /// Needs more bytes.
    Wait,
    /// Changed state; decode on.
    Again,
}

impl LspDecoder {
    pub fn new(max_frame: usize) -> Self {
        LspDecoder { max_frame, state: State::Header }
    }

    pub fn decode(&mut self, buf: &mut BytesMut) -> Option<Frame> {
        loop {
            let step = match self.state {
                State::Header => self.header(buf),
                State::Body { len, scanned } => self.body(buf, len, scanned),
                State::Sniff { len, scanned } => self.sniff(buf, len, scanned),
                State::Skip { remaining, kept } => self.skip(buf, remaining, kept),
                State::Resync => self.resync(buf),
            };
            match step {
                Step::Emit(frame) => return Some(frame),
                Step::Wait => return None,
                Step::Again => {}
            }
        }
    }

    /// At end of input: whatever the decoder still holds, as a last frame.
    pub fn decode_eof(&mut self, buf: &mut BytesMut) -> Option<Frame> {
        if let Some(frame) = self.decode(buf) {
            return Some(frame);
        }
        let state = std::mem::replace(&mut self.state, State::Header);
        let frame = match state {
            // Waiting only to see whether its tail starts a header: the body is all there is.
            State::Body { len, .. } if buf.len() >= len => Some(Frame::Message(buf.split_to(len).freeze())),
            State::Body { len, .. } => Some(Frame::Garbage {
                reason: format!("input ended inside a frame: {} of its {len} bytes arrived", buf.len()),
            }),
            // Input ended before the id could be looked for in all of the first bytes.
            State::Sniff { len, .. } => Some(self.too_large(len, buf)),
            // Already answered.
            State::Skip { .. } | State::Resync => None,
            State::Header if buf.trim_ascii().is_empty() => None,
            State::Header => Some(Frame::Garbage { reason: "input ended inside a header block".into() }),
        };
        buf.clear();
        frame
    }

    fn header(&mut self, buf: &mut BytesMut) -> Step {
        let blank = buf.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(buf.len());
        buf.advance(blank);
        if buf.is_empty() {
            return Step::Wait;
        }
        let mut length = None;
        let mut line_start = 0;
        loop {
            let window = &buf[..buf.len().min(MAX_HEADER_BYTES)];
            let Some(newline) = memchr(b'\n', &window[line_start..]).map(|i| line_start + i) else {
                if buf.len() < MAX_HEADER_BYTES {
                    return Step::Wait;
                }
                let reason = if matches!(buf[0], b'{' | b'[') { NOT_LSP } else { "header block longer than 8 KiB" };
                return self.garbage(buf, 1, reason.into());
            };
            let line = buf[line_start..newline].strip_suffix(b"\r").unwrap_or(&buf[line_start..newline]);
            if line.is_empty() {
                let Some(len) = length else {
                    return self.garbage(buf, 1, "header block has no Content-Length".into());
                };
                buf.advance(newline + 1);
                return self.start_body(buf, len);
            }
            let Some((name, value)) = split_header_line(line) else {
                if line_start > 0 {
                    let reason = format!("header block not ended by a blank line: {} is not a header", quote(line));
                    return self.garbage(buf, line_start, reason);
                }
                if is_json(line) {
                    // A message in the other framing: skip exactly that line.
                    buf.advance(newline + 1);
                    return Step::Emit(Frame::Garbage { reason: NOT_LSP.into() });
                }
                let reason = format!(
                    "expected an LSP Content-Length header, got {}; this connection uses LSP framing",
                    quote(line)
                );
                return self.garbage(buf, 1, reason);
            };
            if let Some(glued) = find_content_length(&line[1..]).map(|i| i + 1) {
                // Garbage glued to the front of a header: the header is where decoding resumes.
                let reason = format!("{} is not a header", quote(&line[..glued]));
                return self.garbage(buf, line_start + glued, reason);
            }
            if name.eq_ignore_ascii_case(b"content-length") {
                let parsed = std::str::from_utf8(value).ok().and_then(|v| v.trim().parse::<usize>().ok());
                match (parsed, length) {
                    (None, _) => return self.garbage(buf, 1, format!("bad Content-Length {}", quote(value))),
                    (Some(new), Some(old)) if new != old => {
                        return self.garbage(buf, 1, format!("two Content-Length headers ({old} and {new})"));
                    }
                    (Some(new), _) => length = Some(new),
                }
            }
            line_start = newline + 1;
        }
    }

    fn start_body(&mut self, buf: &mut BytesMut, len: usize) -> Step {
        if len > self.max_frame {
            self.state = State::Sniff { len, scanned: 0 };
            return Step::Again;
        }
        buf.reserve(len.saturating_sub(buf.len()));
        self.state = State::Body { len, scanned: 0 };
        Step::Again
    }

    fn body(&mut self, buf: &mut BytesMut, len: usize, scanned: usize) -> Step {
        let available = buf.len().min(len);
        let inner_header = memchr_iter(b'\n', &buf[scanned..available])
            .find_map(|i| header_line_ending_at(&buf[..available], scanned + i));
        if let Some(start) = inner_header {
            return self.cut_body(buf, len, start);
        }
        self.state = State::Body { len, scanned: available };
        if buf.len() < len {
            return Step::Wait;
        }
        // A Content-Length a few bytes too long ends the body inside the next header line.
        if let Some(start) = unfinished_header_at_end(&buf[..len]) {
            match header_prefix(&buf[start..]) {
                HeaderPrefix::Complete(_) => return self.cut_body(buf, len, start),
                HeaderPrefix::Partial => return Step::Wait,
                HeaderPrefix::No => {}
            }
        }
        self.state = State::Header;
        Step::Emit(Frame::Message(buf.split_to(len).freeze()))
    }

    /// The declared body of `len` bytes holds the next frame's header at `start`.
    fn cut_body(&mut self, buf: &mut BytesMut, len: usize, start: usize) -> Step {
        let before = buf[..start].trim_ascii();
        let frame = if before.is_empty() {
            Frame::Garbage { reason: format!("Content-Length {len} is followed by another header, not a body") }
        } else if is_json(before) {
            tracing::debug!(
                declared = len,
                actual = before.len(),
                "Content-Length too long; message cut at the next header"
            );
            Frame::Message(bytes::Bytes::copy_from_slice(before))
        } else {
            Frame::Garbage {
                reason: format!(
                    "Content-Length {len} runs into the next header at byte {start} of the body, and the bytes \
                     before it are not one JSON value"
                ),
            }
        };
        buf.advance(start);
        self.state = State::Header;
        Step::Emit(frame)
    }

    /// Refuses an over-limit body once its id is found or its first bytes have all arrived (the
    /// client's request then settles); what arrived is counted as dropped.
    fn sniff(&mut self, buf: &mut BytesMut, len: usize, scanned: usize) -> Step {
        let window = buf.len().min(len).min(SNIFF_BYTES);
        let inner_header =
            memchr_iter(b'\n', &buf[scanned..window]).find_map(|i| header_line_ending_at(&buf[..window], scanned + i));
        if let Some(start) = inner_header {
            // The length was a lie: what came before the next header is all the body there is.
            let frame = self.too_large(len, &buf[..start]);
            buf.advance(start);
            self.state = State::Header;
            return Step::Emit(frame);
        }
        let id = sniff_id(&buf[..window]);
        if id.is_none() && window < len.min(SNIFF_BYTES) {
            self.state = State::Sniff { len, scanned: window };
            return Step::Wait;
        }
        self.state = State::Skip { remaining: len - window, kept: window };
        Step::Emit(Frame::TooLarge { len, max: self.max_frame, id })
    }

    /// The refusal of an over-limit body of `len` bytes whose first bytes are `first`.
    fn too_large(&self, len: usize, first: &[u8]) -> Frame {
        Frame::TooLarge { len, max: self.max_frame, id: sniff_id(&first[..first.len().min(SNIFF_BYTES)]) }
    }

    fn skip(&mut self, buf: &mut BytesMut, remaining: usize, kept: usize) -> Step {
        let end = kept + remaining.min(buf.len() - kept);
        let inner_header =
            memchr_iter(b'\n', &buf[kept..end]).find_map(|i| header_line_ending_at(&buf[..end], kept + i));
        if let Some(start) = inner_header {
            tracing::debug!("a header inside an over-limit body; decoding goes on there");
            buf.advance(start);
            self.state = State::Header;
            return Step::Again;
        }
        let remaining = remaining - (end - kept);
        if remaining == 0 {
            buf.advance(end);
            self.state = State::Header;
            return Step::Again;
        }
        let keep = end.min(MAX_HEADER_LINE);
        buf.advance(end - keep);
        self.state = State::Skip { remaining, kept: keep };
        Step::Wait
    }

    fn resync(&mut self, buf: &mut BytesMut) -> Step {
        match find_content_length(buf) {
            Some(start) => {
                buf.advance(start);
                self.state = State::Header;
                Step::Again
            }
            None => {
                buf.advance(buf.len() - partial_name_suffix(buf));
                Step::Wait
            }
        }
    }

    /// Reports bad bytes and skips from `from` to the next `Content-Length`.
    fn garbage(&mut self, buf: &mut BytesMut, from: usize, reason: String) -> Step {
        buf.advance(from);
        self.state = State::Resync;
        Step::Emit(Frame::Garbage { reason: format!("{reason}; skipping to the next Content-Length header") })
    }
}

/// `name: value` when `line` is a header line (the name an RFC 9110 token).
fn split_header_line(line: &[u8]) -> Option<(&[u8], &[u8])> {
    let colon = memchr(b':', line)?;
    let name = &line[..colon];
    let is_token = |b: &u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(b);
    (!name.is_empty() && name.iter().all(is_token)).then(|| (name, &line[colon + 1..]))
}

fn is_json(bytes: &[u8]) -> bool {
    matches!(bytes.first(), Some(b'{' | b'[')) && serde_json::from_slice::<serde::de::IgnoredAny>(bytes).is_ok()
}

/// A short quotation of bytes for an error message.
fn quote(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(60)]);
    format!("{text:?}")
}
