//! Message framing on a byte stream: the LSP base protocol (`Content-Length` headers) or
//! newline-delimited JSON, chosen by the first byte of the stream that is not whitespace (a
//! UTF-8 byte order mark counts as whitespace).
//!
//! The decoder never fails on bad input and never lets one bad frame take the next good one
//! with it: oversized frames are refused as soon as they are known to be too large and dropped
//! as they stream in ([`Frame::TooLarge`]); bytes that are not a frame are reported
//! ([`Frame::Garbage`]) and decoding resumes at the next frame. The rules for each framing are in
//! the `lsp` and `ndjson` modules.

mod header;
mod lsp;
mod ndjson;

use bytes::{Buf, Bytes, BytesMut};
use lsp::LspDecoder;
use ndjson::NdjsonDecoder;
use std::io;
use tokio_util::codec::{Decoder, Encoder};

pub use lsp::NOT_LSP;
pub use ndjson::NOT_NDJSON;

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
    /// A frame longer than the limit; its bytes are dropped. `id` is the request id found in
    /// its first bytes (up to 4 KiB, read before it is refused).
    TooLarge { len: usize, max: usize, id: Option<String> },
    /// Bytes that are not a frame, dropped; `reason` says what was wrong.
    Garbage { reason: String },
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

#[derive(Debug)]
enum Decoding {
    /// Waiting for the first byte that is not whitespace.
    Detect,
    Lsp(LspDecoder),
    Ndjson(NdjsonDecoder),
}

/// Decodes and encodes frames in either framing.
#[derive(Debug)]
pub struct FrameCodec {
    framing: Option<Framing>,
    max_frame: usize,
    decoding: Decoding,
}

impl FrameCodec {
    pub fn new(max_frame: usize) -> Self {
        FrameCodec { framing: None, max_frame, decoding: Decoding::Detect }
    }

    /// A codec fixed to one framing (for the encoding side and for clients).
    pub fn with_framing(framing: Framing, max_frame: usize) -> Self {
        let mut codec = FrameCodec::new(max_frame);
        codec.set_framing(framing);
        codec
    }

    /// The framing detected so far (or fixed).
    pub fn framing(&self) -> Option<Framing> {
        self.framing
    }

    fn set_framing(&mut self, framing: Framing) {
        self.framing = Some(framing);
        self.decoding = match framing {
            Framing::Lsp => Decoding::Lsp(LspDecoder::new(self.max_frame)),
            Framing::Ndjson => Decoding::Ndjson(NdjsonDecoder::new(self.max_frame)),
        };
    }

    /// Picks the framing from the first byte that is not whitespace; `false` until one arrives.
    fn detect(&mut self, buf: &mut BytesMut) -> bool {
        loop {
            let blank = buf.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(buf.len());
            buf.advance(blank);
            if buf.starts_with(BOM) {
                buf.advance(BOM.len());
                continue;
            }
            if buf.is_empty() || BOM.starts_with(buf) {
                return false;
            }
            self.set_framing(if matches!(buf[0], b'{' | b'[') { Framing::Ndjson } else { Framing::Lsp });
            return true;
        }
    }
}

impl Decoder for FrameCodec {
    type Item = Frame;
    type Error = io::Error;

    fn decode(&mut self, buf: &mut BytesMut) -> io::Result<Option<Frame>> {
        if matches!(self.decoding, Decoding::Detect) && !self.detect(buf) {
            return Ok(None);
        }
        Ok(match &mut self.decoding {
            Decoding::Detect => None,
            Decoding::Lsp(lsp) => lsp.decode(buf),
            Decoding::Ndjson(ndjson) => ndjson.decode(buf),
        })
    }

    fn decode_eof(&mut self, buf: &mut BytesMut) -> io::Result<Option<Frame>> {
        if matches!(self.decoding, Decoding::Detect) && !self.detect(buf) {
            let partial_bom = !buf.is_empty();
            buf.clear();
            return Ok(partial_bom.then(|| Frame::Garbage { reason: "input ended inside a byte order mark".into() }));
        }
        Ok(match &mut self.decoding {
            Decoding::Detect => None,
            Decoding::Lsp(lsp) => lsp.decode_eof(buf),
            Decoding::Ndjson(ndjson) => ndjson.decode_eof(buf),
        })
    }
}

impl Encoder<&[u8]> for FrameCodec {
    type Error = io::Error;

    fn encode(&mut self, body: &[u8], dst: &mut BytesMut) -> io::Result<()> {
        dst.reserve(body.len() + 32);
        self.encode_head(body.len(), dst);
        dst.extend_from_slice(body);
        dst.extend_from_slice(self.tail());
        Ok(())
    }
}

impl FrameCodec {
    /// What goes before a body of `len` bytes: the header in LSP framing, nothing in NDJSON.
    /// With [`FrameCodec::tail`] it lets a large body be written from where it lies, uncopied.
    pub fn encode_head(&self, len: usize, dst: &mut BytesMut) {
        if self.framing.unwrap_or(Framing::Lsp) == Framing::Lsp {
            use std::fmt::Write;
            let _ = write!(dst, "Content-Length: {len}\r\n\r\n");
        }
    }

    /// What goes after a body: the line feed in NDJSON, nothing in LSP framing.
    pub fn tail(&self) -> &'static [u8] {
        match self.framing.unwrap_or(Framing::Lsp) {
            Framing::Lsp => b"",
            Framing::Ndjson => b"\n",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `input` in pieces of `chunk` bytes, then ends the input.
    fn decode_chunked(codec: &mut FrameCodec, input: &[u8], chunk: usize) -> Vec<Frame> {
        let mut buf = BytesMut::new();
        let mut frames = Vec::new();
        for piece in input.chunks(chunk.max(1)) {
            buf.extend_from_slice(piece);
            while let Some(frame) = codec.decode(&mut buf).unwrap() {
                frames.push(frame);
            }
        }
        while let Some(frame) = codec.decode_eof(&mut buf).unwrap() {
            frames.push(frame);
        }
        frames
    }

    fn decode_all(codec: &mut FrameCodec, input: &[u8]) -> Vec<Frame> {
        decode_chunked(codec, input, input.len())
    }

    /// Decodes whole and byte by byte, which must agree.
    fn decode_both_ways(max: usize, input: &[u8]) -> Vec<Frame> {
        let whole = decode_all(&mut FrameCodec::new(max), input);
        let bytewise = decode_chunked(&mut FrameCodec::new(max), input, 1);
        assert_eq!(whole, bytewise, "input {:?}", String::from_utf8_lossy(input));
        whole
    }

    fn msg(s: &str) -> Frame {
        Frame::Message(Bytes::copy_from_slice(s.as_bytes()))
    }

    fn garbage_containing(frame: &Frame, words: &str) -> bool {
        matches!(frame, Frame::Garbage { reason } if reason.contains(words))
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
    fn a_byte_order_mark_is_whitespace_to_detection() {
        let mut codec = FrameCodec::new(1024);
        assert_eq!(decode_chunked(&mut codec, b"\xEF\xBB\xBF {\"a\":1}\n", 1), vec![msg("{\"a\":1}")]);
        assert_eq!(codec.framing(), Some(Framing::Ndjson));
        let mut codec = FrameCodec::new(1024);
        assert_eq!(decode_all(&mut codec, b"\xEF\xBB\xBFContent-Length: 2\r\n\r\n{}"), vec![msg("{}")]);
        assert_eq!(codec.framing(), Some(Framing::Lsp));
    }

    #[test]
    fn oversized_lsp_frame_is_refused_on_its_first_bytes_and_dropped_as_it_streams() {
        let mut codec = FrameCodec::new(4);
        let mut buf = BytesMut::from(&b"Content-Length: 10\r\n\r\n"[..]);
        assert_eq!(codec.decode(&mut buf).unwrap(), None, "waits for the first bytes, where the id is");
        buf.extend_from_slice(b"12345");
        assert_eq!(codec.decode(&mut buf).unwrap(), None);
        buf.extend_from_slice(b"67890");
        assert_eq!(codec.decode(&mut buf).unwrap(), Some(Frame::TooLarge { len: 10, max: 4, id: None }));
        buf.extend_from_slice(b"Content-Length: 2\r\n\r\n{}");
        assert_eq!(codec.decode(&mut buf).unwrap(), Some(msg("{}")));
    }

    #[test]
    fn oversized_lsp_frame_answers_the_id_of_its_first_bytes_and_buffers_no_more() {
        let mut codec = FrameCodec::new(16);
        let mut buf = BytesMut::from(&b"Content-Length: 100000\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":\"a\","[..]);
        let refused = Frame::TooLarge { len: 100_000, max: 16, id: Some("\"a\"".into()) };
        assert_eq!(codec.decode(&mut buf).unwrap(), Some(refused), "answered as soon as the id is read");
        buf.extend_from_slice(&[b' '; 50_000]);
        assert_eq!(codec.decode(&mut buf).unwrap(), None);
        assert!(buf.len() <= header::MAX_HEADER_LINE, "the body is not buffered");
        // No id in the first 4 KiB: answered with id null once they have arrived.
        let mut codec = FrameCodec::new(16);
        let mut buf = BytesMut::from(&b"Content-Length: 100000\r\n\r\n{\"params\":\""[..]);
        assert_eq!(codec.decode(&mut buf).unwrap(), None);
        buf.extend_from_slice(&[b'x'; 5000]);
        assert_eq!(codec.decode(&mut buf).unwrap(), Some(Frame::TooLarge { len: 100_000, max: 16, id: None }));
        assert_eq!(codec.decode(&mut buf).unwrap(), None);
        assert!(buf.len() <= header::MAX_HEADER_LINE, "the body is not buffered");
    }

    #[test]
    fn an_oversized_length_that_is_a_lie_resyncs_at_the_next_header() {
        let frames = decode_both_ways(64, b"Content-Length: 99999999\r\n\r\n{}Content-Length: 2\r\n\r\n[]");
        assert_eq!(frames, vec![Frame::TooLarge { len: 99999999, max: 64, id: None }, msg("[]")]);
    }

    #[test]
    fn oversized_ndjson_line_is_refused_before_it_ends() {
        let mut codec = FrameCodec::new(16);
        let mut buf = BytesMut::from(&b"{\"id\":3,\"x\":\"aaaaaaaa"[..]);
        assert_eq!(codec.decode(&mut buf).unwrap(), Some(Frame::TooLarge { len: 21, max: 16, id: Some("3".into()) }));
        assert!(buf.is_empty());
        buf.extend_from_slice(b"aaaaaaa\"}\n{}\n");
        assert_eq!(codec.decode(&mut buf).unwrap(), Some(msg("{}")));
    }

    #[test]
    fn oversized_ndjson_line_arriving_whole_is_measured_exactly() {
        let frames = decode_all(&mut FrameCodec::new(4), b"{\"id\":3,\"x\":1}\n{}\n");
        assert_eq!(frames, vec![Frame::TooLarge { len: 14, max: 4, id: Some("3".into()) }, msg("{}")]);
    }

    #[test]
    fn garbage_resyncs_at_next_header() {
        let frames = decode_both_ways(1024, b"Bogus header\r\n\r\nxxContent-Length: 2\r\n\r\n{}");
        assert!(garbage_containing(&frames[0], "expected an LSP Content-Length header"), "{frames:?}");
        assert_eq!(frames.last(), Some(&msg("{}")));
    }

    #[test]
    fn a_header_block_without_length_resyncs() {
        let frames = decode_both_ways(1024, b"Content-Type: x\r\n\r\nnot a frame Content-Length: 2\r\n\r\n{}");
        assert!(garbage_containing(&frames[0], "no Content-Length"), "{frames:?}");
        assert_eq!(frames.last(), Some(&msg("{}")));
    }

    #[test]
    fn content_length_too_long_by_one_to_thirty_bytes_loses_nothing() {
        let first = r#"{"jsonrpc":"2.0","id":1}"#;
        let next = "Content-Length: 2\r\n\r\n{}";
        for extra in 1..=next.len() {
            let input =
                format!("Content-Length: {}\r\n\r\n{first}{next}Content-Length: 2\r\n\r\n[]", first.len() + extra);
            let frames = decode_both_ways(1024, input.as_bytes());
            assert_eq!(frames, vec![msg(first), msg("{}"), msg("[]")], "{extra} bytes too long");
        }
    }

    #[test]
    fn a_swallowed_header_after_a_body_that_is_not_json_is_reported() {
        let frames = decode_both_ways(1024, b"Content-Length: 27\r\n\r\n{\"a\"}Content-Length: 2\r\n\r\n{}");
        assert!(garbage_containing(&frames[0], "not one JSON value"), "{frames:?}");
        assert_eq!(frames[1..], [msg("{}")]);
    }

    #[test]
    fn a_header_with_no_body_is_reported_and_the_next_frame_served() {
        let frames = decode_both_ways(1024, b"Content-Length: 40\r\n\r\nContent-Length: 2\r\n\r\n{}");
        assert!(garbage_containing(&frames[0], "followed by another header"), "{frames:?}");
        assert_eq!(frames[1..], [msg("{}")]);
    }

    #[test]
    fn a_missing_blank_line_is_reported_and_the_next_frame_served() {
        let frames = decode_both_ways(1024, b"Content-Length: 2\r\n{}Content-Length: 2\r\n\r\n[]");
        assert!(garbage_containing(&frames[0], "not ended by a blank line"), "{frames:?}");
        assert_eq!(frames[1..], [msg("[]")]);
    }

    #[test]
    fn garbage_glued_to_a_header_is_cut_off_at_the_header() {
        // Read as a header line, "XContent-Length" would let the stale length eat the next body.
        let frames = decode_both_ways(1024, b"Content-Length: 5\r\nXContent-Length: 2\r\n\r\n{}");
        assert!(garbage_containing(&frames[0], "\"X\" is not a header"), "{frames:?}");
        assert_eq!(frames[1..], [msg("{}")]);
    }

    #[test]
    fn content_length_too_short_yields_bad_body_then_resyncs() {
        let frames = decode_both_ways(1024, b"Content-Length: 3\r\n\r\n{\"a\":1}Content-Length: 2\r\n\r\n{}");
        assert_eq!(frames[0], msg("{\"a"));
        assert!(matches!(frames[1], Frame::Garbage { .. }));
        assert_eq!(frames[2], msg("{}"));
    }

    #[test]
    fn json_text_holding_header_words_is_not_cut() {
        let body = r#"{"text":"Content-Length: 12\r\n\r\nContent-Len"}"#;
        let input = format!("Content-Length: {}\r\n\r\n{body}", body.len());
        assert_eq!(decode_both_ways(1024, input.as_bytes()), vec![msg(body)]);
        let pretty = "{\n\"a\": \"Content-Length: 1\"\n}";
        let input = format!("Content-Length: {}\r\n\r\n{pretty}", pretty.len());
        assert_eq!(decode_both_ways(1024, input.as_bytes()), vec![msg(pretty)]);
    }

    #[test]
    fn each_framing_names_itself_to_a_message_in_the_other() {
        let frames = decode_both_ways(1024, b"Content-Length: 2\r\n\r\n{}{\"id\":1}\nContent-Length: 2\r\n\r\n[]");
        assert_eq!(frames, vec![msg("{}"), Frame::Garbage { reason: NOT_LSP.into() }, msg("[]")]);
        let frames = decode_both_ways(1024, b"{}\nContent-Length: 2\r\n\r\n[]\n");
        assert_eq!(frames, vec![msg("{}"), Frame::Garbage { reason: NOT_NDJSON.into() }, msg("[]")]);
    }

    #[test]
    fn input_ending_inside_a_frame_is_reported() {
        let frames = decode_all(&mut FrameCodec::new(1024), b"Content-Length: 10\r\n\r\n{}");
        assert!(garbage_containing(&frames[0], "2 of its 10 bytes"), "{frames:?}");
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
