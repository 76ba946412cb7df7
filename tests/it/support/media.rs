//! Media through real server processes on a durable store: bytes given with an append become a
//! blob named by the stored event, which a fresh process serves and frees with the last thread
//! naming it.

use super::{Server, Wire};
use base64::Engine as _;
use serde_json::{json, Value};

/// A PNG header (signature and IHDR, as the sniffer reads them) followed by `size` bytes.
fn png(width: u32, height: u32, size: usize) -> Vec<u8> {
    let mut bytes = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    bytes.extend_from_slice(&width.to_be_bytes());
    bytes.extend_from_slice(&height.to_be_bytes());
    bytes.extend_from_slice(&[8, 6, 0, 0, 0, 0, 0, 0, 0]);
    bytes.extend((0..size).map(|i| (i * 7 % 251) as u8));
    bytes
}

/// Runs the check on the store `store` (a `--store` value) under thread ids prefixed `prefix`.
pub fn blobs_survive_a_restart_and_go_with_the_last_thread(store: &str, prefix: &str) {
    let (source, fork) = (format!("{prefix}-source"), format!("{prefix}-fork"));
    let data = base64::engine::general_purpose::STANDARD.encode(png(640, 480, 20_000));
    let mut first = Server::start(Wire::Ndjson, store);
    first.ok("thread/open", json!({"threadId": source}));
    let image = json!({"type": "image", "data": data, "mediaType": "image/png"});
    let event = json!({"type": "message", "iteration": 1, "role": "user", "content": [image]});
    first.ok("thread/append", json!({"threadId": source, "events": [event]}));
    let stored = first.ok("thread/events", json!({"threadId": source}));
    let part = &stored["events"][0]["content"][0];
    let blob = part["blob"].as_str().unwrap_or_else(|| panic!("the stored part names its blob: {part}")).to_owned();
    assert_eq!(part.get("data"), None, "the bytes moved into the blob");
    first.ok("thread/fork", json!({"threadId": source, "newThreadId": fork}));
    assert!(first.stop().success());

    let mut second = Server::start(Wire::Ndjson, store);
    let got = second.ok("blob/get", json!({"blob": blob}));
    assert_eq!(
        (got["data"].as_str(), got["width"].as_u64(), got["height"].as_u64()),
        (Some(&*data), Some(640), Some(480))
    );
    second.ok("thread/delete", json!({"threadId": source}));
    assert_eq!(second.ok("blob/stat", json!({"blob": blob}))["blob"], Value::from(blob.clone()), "the fork names it");
    second.ok("thread/delete", json!({"threadId": fork}));
    let gone = second.err("blob/stat", json!({"blob": blob}));
    assert!(gone["message"].as_str().is_some_and(|m| !m.is_empty()), "{gone}");
    assert!(second.stop().success());
}
