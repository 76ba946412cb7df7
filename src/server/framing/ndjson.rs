//! Newline-delimited JSON: one message per line.
//!
//! Linear in the input: the search for the line feed resumes where the previous read left it,
//! and a line is refused as soon as it passes the limit, then dropped as it streams in.

use super::header::CONTENT_LENGTH;
use super::Frame;
use crate::server::sniff::{sniff_id, SNIFF_BYTES};
use bytes::{Buf, Bytes, BytesMut};
use memchr::memchr;

/// Answer to an LSP header sent to an NDJSON connection.
pub const NOT_NDJSON: &str =
    "expected a JSON message on one line, got an LSP Content-Length header; this connection uses NDJSON framing";

#[derive(Debug)]
pub struct NdjsonDecoder {
    max_frame: usize,
    /// Bytes of the buffer already known to hold no line feed.
    scanned: usize,
    /// Dropping the rest of an over-limit line.
    skipping: bool,
}

impl NdjsonDecoder {
    pub fn new(max_frame: usize) -> Self {
        NdjsonDecoder { max_frame, scanned: 0, skipping: false }
    }

    pub fn decode(&mut self, buf: &mut BytesMut) -> Option<Frame> {
        loop {
            if self.skipping {
                let Some(newline) = memchr(b'\n', buf) else {
                    buf.clear();
                    return None;
                };
                buf.advance(newline + 1);
                self.skipping = false;
            }
            let Some(newline) = memchr(b'\n', &buf[self.scanned..]).map(|i| self.scanned + i) else {
                self.scanned = buf.len();
                return self.refuse_if_over_limit(buf);
            };
            self.scanned = 0;
            let line = buf.split_to(newline + 1).freeze();
            if let Some(frame) = self.frame(line) {
                return Some(frame);
            }
        }
    }

    /// At end of input a last line needs no line feed.
    pub fn decode_eof(&mut self, buf: &mut BytesMut) -> Option<Frame> {
        if let Some(frame) = self.decode(buf) {
            return Some(frame);
        }
        self.scanned = 0;
        let line = buf.split().freeze();
        if self.skipping {
            self.skipping = false;
            return None;
        }
        self.frame(line)
    }

    /// The frame one line makes; `None` for a blank line.
    fn frame(&self, line: Bytes) -> Option<Frame> {
        let start = line.iter().position(|b| !b.is_ascii_whitespace())?;
        let end = line.iter().rposition(|b| !b.is_ascii_whitespace()).map_or(start, |i| i + 1);
        let body = line.slice(start..end);
        if body.len() > self.max_frame {
            let id = sniff_id(&body[..SNIFF_BYTES.min(body.len())]);
            return Some(Frame::TooLarge { len: body.len(), max: self.max_frame, id });
        }
        if body.len() >= CONTENT_LENGTH.len() && body[..CONTENT_LENGTH.len()].eq_ignore_ascii_case(CONTENT_LENGTH) {
            return Some(Frame::Garbage { reason: NOT_NDJSON.into() });
        }
        Some(Frame::Message(body))
    }

    /// A line still without its line feed that is already over the limit is refused now.
    fn refuse_if_over_limit(&mut self, buf: &mut BytesMut) -> Option<Frame> {
        if buf.len() <= self.max_frame {
            return None;
        }
        // Leading blanks are not part of the message; drop them so they are counted once.
        let blank = buf.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(buf.len());
        buf.advance(blank);
        self.scanned = buf.len();
        let len = buf.len();
        if len <= self.max_frame {
            return None;
        }
        let id = sniff_id(&buf[..SNIFF_BYTES.min(len)]);
        buf.clear();
        self.scanned = 0;
        self.skipping = true;
        Some(Frame::TooLarge { len, max: self.max_frame, id })
    }
}
