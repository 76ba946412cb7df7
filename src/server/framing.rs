//! Message framing on a byte stream: the LSP base protocol (`Content-Length` headers) or
//! newline-delimited JSON, chosen by the first non-whitespace byte of the stream.
//!
//! The decoder never fails on bad input: oversized frames are skipped without buffering them
//! and reported as [`Frame::TooLarge`]; garbage is skipped up to the next header and reported
//! as [`Frame::Garbage`], so one bad frame never ends the connection.

use super::sniff::{sniff_id, SNIFF_BYTES};
use bytes::{Buf, Bytes, BytesMut};
use std::io;
use tokio_util::codec::{Decoder, Encoder};

/// The two framings the server speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// `Content-Length: N\r\n\r\n` + N bytes (the LSP base protocol).
    Lsp,
    /// One JSON message per line.
    Ndjson,
}

/// What the decoder found in the stream.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// One message body (not yet parsed).
    Message(Bytes),
    /// A frame longer than the limit; its bytes are skipped. `id` is the request id found in
    /// its first bytes, if any, so the error can answer the request.
    TooLarge { len: usize, max: usize, id: Option<String> },
    /// Bytes that are not a frame, skipped; `reason` says what was wrong.
    Garbage { reason: String },
}

/// Longest header block accepted before it is treated as garbage.
const MAX_HEADER_BYTES: usize = 8 * 1024;
const CONTENT_LENGTH: &[u8] = b"content-length";

#[derive(Debug)]
enum State {
    /// Waiting for the first non-whitespace byte to pick the framing.
    Detect,
    Header,
    Body(usize),
    /// Waiting for the first bytes of an oversized LSP body, to find its id.
    SniffBody(usize),
    /// Skipping the rest of an oversized LSP body.
    SkipBody(usize),
    /// Skipping the rest of an oversized NDJSON line.
    SkipLine,
}

/// Decodes and encodes frames in either framing.
#[derive(Debug)]
pub struct FrameCodec {
    framing: Option<Framing>,
    max_frame: usize,
    state: State,
}

impl FrameCodec {
    pub fn new(max_frame: usize) -> Self {
        FrameCodec { framing: None, max_frame, state: State::Detect }
    }

    /// A codec fixed to one framing (for the encoding side and for clients).
    pub fn with_framing(framing: Framing, max_frame: usize) -> Self {
        let state = match framing {
            Framing::Lsp => State::Header,
            Framing::Ndjson => State::Header,
        };
        FrameCodec { framing: Some(framing), max_frame, state }
    }

    /// The framing detected so far (or fixed).
    pub fn framing(&self) -> Option<Framing> {
        self.framing
    }

    fn decode_lsp_header(&mut self, buf: &mut BytesMut) -> Option<Frame> {
        let window = &buf[..buf.len().min(MAX_HEADER_BYTES + 4)];
        let Some((end, terminator)) = find_header_end(window) else {
            if buf.len() > MAX_HEADER_BYTES {
                return Some(self.skip_garbage(buf, "header block too long or never terminated"));
            }
            return None;
        };
        let header = &buf[..end];
        match parse_content_length(header) {
            Ok(len) => {
                buf.advance(end + terminator);
                if len > self.max_frame {
                    self.state = State::SniffBody(len);
                    None
                } else {
                    self.state = State::Body(len);
                    None
                }
            }
            Err(reason) => Some(self.skip_garbage(buf, &reason)),
        }
    }

    /// Drops bytes up to the next `Content-Length` header (or all but a possible partial one).
    fn skip_garbage(&mut self, buf: &mut BytesMut, reason: &str) -> Frame {
        let skip = find_ignore_case(&buf[1..], CONTENT_LENGTH)
            .map(|i| i + 1)
            .unwrap_or_else(|| (buf.len() - partial_header_suffix(buf)).max(1));
        buf.advance(skip.min(buf.len()));
        self.state = State::Header;
        Frame::Garbage { reason: format!("{reason}; skipped {skip} bytes") }
    }

    fn decode_line(&mut self, buf: &mut BytesMut) -> Option<Frame> {
        loop {
            let Some(newline) = memchr(b'\n', buf) else {
                if buf.len() > self.max_frame {
                    let len = buf.len();
                    let id = sniff_id(&buf[..SNIFF_BYTES.min(len)]);
                    buf.clear();
                    self.state = State::SkipLine;
                    return Some(Frame::TooLarge { len, max: self.max_frame, id });
                }
                return None;
            };
            let line = buf.split_to(newline + 1);
            let body = trim_ascii(&line);
            if body.is_empty() {
                continue;
            }
            if body.len() > self.max_frame {
                let id = sniff_id(&body[..SNIFF_BYTES.min(body.len())]);
                return Some(Frame::TooLarge { len: body.len(), max: self.max_frame, id });
            }
            return Some(Frame::Message(Bytes::copy_from_slice(body)));
        }
    }
}

impl Decoder for FrameCodec {
    type Item = Frame;
    type Error = io::Error;

    fn decode(&mut self, buf: &mut BytesMut) -> io::Result<Option<Frame>> {
        loop {
            match self.state {
                State::Detect => {
                    let Some(first) = buf.iter().position(|b| !b.is_ascii_whitespace()) else {
                        buf.clear();
                        return Ok(None);
                    };
                    buf.advance(first);
                    self.framing = Some(if matches!(buf[0], b'{' | b'[') { Framing::Ndjson } else { Framing::Lsp });
                    self.state = State::Header;
                }
                State::Header if self.framing == Some(Framing::Ndjson) => return Ok(self.decode_line(buf)),
                State::Header => {
                    // Blank lines between frames are tolerated.
                    let blank = buf.iter().position(|b| !matches!(b, b'\r' | b'\n')).unwrap_or(buf.len());
                    buf.advance(blank);
                    if buf.is_empty() {
                        return Ok(None);
                    }
                    let frame = self.decode_lsp_header(buf);
                    if frame.is_some() {
                        return Ok(frame);
                    }
                    if matches!(self.state, State::Header) {
                        return Ok(None);
                    }
                }
                State::Body(len) => {
                    if buf.len() < len {
                        buf.reserve(len - buf.len());
                        return Ok(None);
                    }
                    let body = &buf[..len];
                    // A Content-Length longer than the body swallows the next frame's header.
                    // When the body is not JSON and holds a header, resynchronise there.
                    let cut = find_ignore_case(body, CONTENT_LENGTH)
                        .filter(|&i| i > 0 && serde_json::from_slice::<serde::de::IgnoredAny>(body).is_err());
                    self.state = State::Header;
                    let take = cut.unwrap_or(len);
                    return Ok(Some(Frame::Message(buf.split_to(take).freeze())));
                }
                State::SniffBody(len) => {
                    let want = SNIFF_BYTES.min(len);
                    if buf.len() < want {
                        return Ok(None);
                    }
                    let id = sniff_id(&buf[..want]);
                    self.state = State::SkipBody(len);
                    return Ok(Some(Frame::TooLarge { len, max: self.max_frame, id }));
                }
                State::SkipBody(remaining) => {
                    let n = remaining.min(buf.len());
                    buf.advance(n);
                    if remaining > n {
                        self.state = State::SkipBody(remaining - n);
                        return Ok(None);
                    }
                    self.state = State::Header;
                }
                State::SkipLine => match memchr(b'\n', buf) {
                    Some(i) => {
                        buf.advance(i + 1);
                        self.state = State::Header;
                    }
                    None => {
                        buf.clear();
                        return Ok(None);
                    }
                },
            }
        }
    }

    fn decode_eof(&mut self, buf: &mut BytesMut) -> io::Result<Option<Frame>> {
        if let Some(frame) = self.decode(buf)? {
            return Ok(Some(frame));
        }
        // A last NDJSON line without its newline still counts.
        if self.framing == Some(Framing::Ndjson) && matches!(self.state, State::Header) {
            let body = trim_ascii(buf).to_vec();
            buf.clear();
            if !body.is_empty() {
                return Ok(Some(Frame::Message(Bytes::from(body))));
            }
        }
        if !buf.is_empty() && !trim_ascii(buf).is_empty() {
            let len = buf.len();
            buf.clear();
            return Ok(Some(Frame::Garbage { reason: format!("stream ended inside a frame; dropped {len} bytes") }));
        }
        buf.clear();
        Ok(None)
    }
}

impl Encoder<&[u8]> for FrameCodec {
    type Error = io::Error;

    fn encode(&mut self, body: &[u8], dst: &mut BytesMut) -> io::Result<()> {
        match self.framing.unwrap_or(Framing::Lsp) {
            Framing::Lsp => {
                dst.reserve(body.len() + 32);
                dst.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
                dst.extend_from_slice(body);
            }
            Framing::Ndjson => {
                dst.reserve(body.len() + 1);
                dst.extend_from_slice(body);
                dst.extend_from_slice(b"\n");
            }
        }
        Ok(())
    }
}

/// End of the header block: the offset of the blank line and the terminator's length.
fn find_header_end(buf: &[u8]) -> Option<(usize, usize)> {
    let crlf = find(buf, b"\r\n\r\n").map(|i| (i, 4));
    let lf = find(buf, b"\n\n").map(|i| (i, 2));
    match (crlf, lf) {
        (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
        (a, b) => a.or(b),
    }
}

fn parse_content_length(header: &[u8]) -> Result<usize, String> {
    let text = std::str::from_utf8(header).map_err(|_| "header is not UTF-8".to_string())?;
    let mut length = None;
    for line in text.split('\n').map(|l| l.trim_end_matches('\r')) {
        let Some((name, value)) = line.split_once(':') else {
            return Err(format!("malformed header line {:?}", truncate(line)));
        };
        if name.trim().eq_ignore_ascii_case("content-length") {
            let value = value.trim();
            length = Some(value.parse::<usize>().map_err(|_| format!("bad Content-Length {:?}", truncate(value)))?);
        }
    }
    length.ok_or_else(|| "header block has no Content-Length".to_string())
}

fn truncate(s: &str) -> &str {
    match s.char_indices().nth(60) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// Length of the longest tail of `buf` that could begin a `Content-Length` header still arriving.
fn partial_header_suffix(buf: &[u8]) -> usize {
    (1..CONTENT_LENGTH.len().min(buf.len() + 1))
        .rev()
        .find(|&n| buf[buf.len() - n..].eq_ignore_ascii_case(&CONTENT_LENGTH[..n]))
        .unwrap_or(0)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn find_ignore_case(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if haystack.len() < needle.len() {
        return None;
    }
    haystack.windows(needle.len()).position(|w| w.eq_ignore_ascii_case(needle))
}

fn memchr(byte: u8, haystack: &[u8]) -> Option<usize> {
    haystack.iter().position(|&b| b == byte)
}

fn trim_ascii(bytes: &[u8]) -> &[u8] {
    bytes.trim_ascii()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_all(codec: &mut FrameCodec, input: &[u8]) -> Vec<Frame> {
        let mut buf = BytesMut::from(input);
        let mut frames = Vec::new();
        while let Some(frame) = codec.decode(&mut buf).unwrap() {
            frames.push(frame);
        }
        while let Some(frame) = codec.decode_eof(&mut buf).unwrap() {
            frames.push(frame);
        }
        frames
    }

    fn msg(s: &str) -> Frame {
        Frame::Message(Bytes::copy_from_slice(s.as_bytes()))
    }

    #[test]
    fn lsp_frames_with_extra_headers_and_any_case() {
        let mut codec = FrameCodec::new(1024);
        let input = b"content-length: 2\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}Content-Length: 4\r\n\r\n[1,]";
        assert_eq!(decode_all(&mut codec, input), vec![msg("{}"), msg("[1,]")]);
        assert_eq!(codec.framing(), Some(Framing::Lsp));
    }

    #[test]
    fn ndjson_detected_from_first_byte() {
        let mut codec = FrameCodec::new(1024);
        let frames = decode_all(&mut codec, b"  \n{\"a\":1}\r\n\n[2]\n{\"last\":true}");
        assert_eq!(frames, vec![msg("{\"a\":1}"), msg("[2]"), msg("{\"last\":true}")]);
        assert_eq!(codec.framing(), Some(Framing::Ndjson));
    }

    #[test]
    fn oversized_lsp_body_is_skipped_without_buffering() {
        let mut codec = FrameCodec::new(4);
        let mut buf = BytesMut::from(&b"Content-Length: 10\r\n\r\n12345"[..]);
        assert_eq!(codec.decode(&mut buf).unwrap(), None, "waits for the bytes that may hold the id");
        buf.extend_from_slice(b"67890");
        assert_eq!(codec.decode(&mut buf).unwrap(), Some(Frame::TooLarge { len: 10, max: 4, id: None }));
        assert_eq!(codec.decode(&mut buf).unwrap(), None);
        assert!(buf.is_empty());
        buf.extend_from_slice(b"Content-Length: 2\r\n\r\n{}");
        assert_eq!(codec.decode(&mut buf).unwrap(), Some(msg("{}")));
    }

    #[test]
    fn oversized_ndjson_line_is_skipped() {
        let mut codec = FrameCodec::new(4);
        let frames = decode_all(&mut codec, b"{\"id\":3,\"x\":1}\n{}\n");
        assert_eq!(frames, vec![Frame::TooLarge { len: 14, max: 4, id: Some("3".into()) }, msg("{}")]);
    }

    #[test]
    fn garbage_resyncs_at_next_header() {
        let mut codec = FrameCodec::new(1024);
        let frames = decode_all(&mut codec, b"Bogus header\r\n\r\nxxContent-Length: 2\r\n\r\n{}");
        assert!(matches!(&frames[0], Frame::Garbage { reason } if reason.contains("malformed header line")));
        assert_eq!(frames[1], msg("{}"));
    }

    #[test]
    fn content_length_too_long_resyncs_at_swallowed_header() {
        let mut codec = FrameCodec::new(1024);
        let frames = decode_all(
            &mut codec,
            b"Content-Length: 27\r\n\r\n{\"a\"}Content-Length: 2\r\n\r\n{}Content-Length: 2\r\n\r\n[]",
        );
        assert_eq!(frames, vec![msg("{\"a\"}"), msg("{}"), msg("[]")]);
    }

    #[test]
    fn content_length_too_short_yields_bad_body_then_resyncs() {
        let mut codec = FrameCodec::new(1024);
        let frames = decode_all(&mut codec, b"Content-Length: 3\r\n\r\n{\"a\":1}Content-Length: 2\r\n\r\n{}");
        assert_eq!(frames[0], msg("{\"a"));
        assert!(matches!(frames[1], Frame::Garbage { .. }));
        assert_eq!(frames[2], msg("{}"));
    }

    #[test]
    fn encodes_in_detected_framing() {
        let mut codec = FrameCodec::with_framing(Framing::Lsp, 1024);
        let mut out = BytesMut::new();
        codec.encode(&b"{}"[..], &mut out).unwrap();
        assert_eq!(&out[..], b"Content-Length: 2\r\n\r\n{}");
        let mut codec = FrameCodec::with_framing(Framing::Ndjson, 1024);
        let mut out = BytesMut::new();
        codec.encode(&b"{}"[..], &mut out).unwrap();
        assert_eq!(&out[..], b"{}\n");
    }
}
