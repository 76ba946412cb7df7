//! Properties of the frame decoder: any stream of valid messages, in either framing, cut into
//! reads at arbitrary byte boundaries and with garbage between the frames, yields every valid
//! message, in order.

use bytes::BytesMut;
use proptest::prelude::*;
use serde_json::{json, Value};
use threadkeeper::server::framing::{Frame, FrameCodec, Framing};
use tokio_util::codec::Decoder;

const MAX_FRAME: usize = 64 * 1024;

/// Text that looks like framing, so that messages carry it in their strings.
fn arb_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z ]{0,12}",
        Just("Content-Length: 12\r\n\r\n".to_owned()),
        Just("content-length:".to_owned()),
        Just("{\"id\":1}\n".to_owned()),
        Just("\u{feff}".to_owned()),
        any::<String>(),
    ]
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        arb_text().prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::vec((arb_text(), inner), 0..4)
                .prop_map(|entries| Value::Object(entries.into_iter().collect())),
        ]
    })
}

/// A message body as a client would write it: an object (so NDJSON detection sees `{`),
/// compact or, in LSP framing, pretty (raw line feeds in the body).
fn arb_message(framing: Framing) -> impl Strategy<Value = Vec<u8>> {
    (arb_json(), any::<u32>(), any::<bool>()).prop_map(move |(params, id, pretty)| {
        let message = json!({"jsonrpc": "2.0", "id": id, "method": "m", "params": params});
        if pretty && framing == Framing::Lsp {
            serde_json::to_vec_pretty(&message).unwrap()
        } else {
            serde_json::to_vec(&message).unwrap()
        }
    })
}

/// Bytes that are no frame, made of pieces of framing.
fn arb_garbage(framing: Framing) -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        Just(b"Content-Length".to_vec()),
        Just(b"Content-Length: ".to_vec()),
        Just(b"Content-Length: 5\r\n".to_vec()),
        Just(b"Content-Length: 3\r\n\r\n".to_vec()),
        Just(b"Content-Length: 99999999\r\n\r\n".to_vec()),
        Just(b"Content-Type: x\r\n".to_vec()),
        Just(b"Content-Le".to_vec()),
        Just(b"\r\n".to_vec()),
        Just(b"\n".to_vec()),
        Just(b":".to_vec()),
        Just(b"{\"id\":".to_vec()),
        Just(b"[1,2]".to_vec()),
        Just(b"\xEF\xBB\xBF".to_vec()),
        "[0-9a-zA-Z ]{1,6}".prop_map(String::into_bytes),
        prop::collection::vec(any::<u8>(), 1..8),
    ];
    prop::collection::vec(piece, 1..5).prop_map(move |pieces| {
        let mut garbage = pieces.concat();
        if framing == Framing::Ndjson {
            // In NDJSON a line is the unit: garbage is whole lines.
            garbage.push(b'\n');
        }
        garbage
    })
}

fn frame(framing: Framing, body: &[u8]) -> Vec<u8> {
    let mut out = BytesMut::new();
    tokio_util::codec::Encoder::encode(&mut FrameCodec::with_framing(framing, MAX_FRAME), body, &mut out).unwrap();
    out.to_vec()
}

/// A stream of framed messages with garbage between some of them (never before the first,
/// which picks the framing).
fn arb_stream(with_garbage: bool) -> impl Strategy<Value = (Vec<Vec<u8>>, Vec<u8>)> {
    prop_oneof![Just(Framing::Lsp), Just(Framing::Ndjson)].prop_flat_map(move |framing| {
        let garbage = if with_garbage { prop::option::of(arb_garbage(framing)).boxed() } else { Just(None).boxed() };
        prop::collection::vec((arb_message(framing), garbage), 1..8).prop_map(move |entries| {
            let mut stream = Vec::new();
            let mut messages = Vec::new();
            for (i, (message, garbage)) in entries.into_iter().enumerate() {
                if let Some(garbage) = garbage.filter(|_| i > 0) {
                    stream.extend(garbage);
                }
                stream.extend(frame(framing, &message));
                messages.push(message);
            }
            (messages, stream)
        })
    })
}

/// Decodes `stream` delivered in reads ending at `cuts` (offsets), then ends the input.
fn decode(stream: &[u8], cuts: &[usize]) -> Vec<Frame> {
    let mut codec = FrameCodec::new(MAX_FRAME);
    let mut buf = BytesMut::new();
    let mut frames = Vec::new();
    let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (stream.len() + 1)).collect();
    cuts.sort_unstable();
    cuts.push(stream.len());
    let mut from = 0;
    for cut in cuts {
        buf.extend_from_slice(&stream[from..cut]);
        from = cut;
        while let Some(frame) = codec.decode(&mut buf).unwrap() {
            frames.push(frame);
        }
    }
    while let Some(frame) = codec.decode_eof(&mut buf).unwrap() {
        frames.push(frame);
    }
    frames
}

fn messages_of(frames: &[Frame]) -> Vec<Vec<u8>> {
    frames.iter().filter_map(|f| if let Frame::Message(m) = f { Some(m.to_vec()) } else { None }).collect()
}

/// Whether `wanted` appears in `found` in order (other messages may come between).
fn is_subsequence(wanted: &[Vec<u8>], found: &[Vec<u8>]) -> bool {
    let mut found = found.iter();
    wanted.iter().all(|w| found.any(|f| f == w))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn valid_streams_decode_to_exactly_their_messages(
        (messages, stream) in arb_stream(false),
        cuts in prop::collection::vec(any::<usize>(), 0..12),
    ) {
        let frames = decode(&stream, &cuts);
        let expected: Vec<Frame> = messages.into_iter().map(|m| Frame::Message(m.into())).collect();
        prop_assert_eq!(frames, expected);
    }

    #[test]
    fn garbage_between_frames_loses_no_valid_message(
        (messages, stream) in arb_stream(true),
        cuts in prop::collection::vec(any::<usize>(), 0..12),
    ) {
        let frames = decode(&stream, &cuts);
        let found = messages_of(&frames);
        prop_assert!(
            is_subsequence(&messages, &found),
            "stream {:?}\nframes {:?}",
            String::from_utf8_lossy(&stream),
            frames
        );
    }

    #[test]
    fn any_bytes_decode_without_error(
        bytes in prop::collection::vec(any::<u8>(), 0..2048),
        cuts in prop::collection::vec(any::<usize>(), 0..12),
    ) {
        decode(&bytes, &cuts);
    }
}
