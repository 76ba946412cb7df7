//! Kept Responses items with media (`responses/toEvents` with `keepItems` and
//! `keepMediaAsBlobs`): the bytes go into blobs once, the kept item names them, and
//! `responses/fromEvents` gives the very items back, data URLs and all; and LangChain blocks kept in
//! their own form (`messages/toEvents` with `keepBlockForms`).

use crate::support::{Server, Wire};
use serde_json::{json, Value};

/// A 2 × 1 PNG, as base64.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAABCAIAAAB7QOjdAAAADUlEQVR4nGP4z8AARAAI/gH/xp559wAAAABJRU5ErkJggg==";
/// A tiny PDF, as base64.
const PDF: &str = "JVBERi0xLjQKMSAwIG9iajw8Pj5lbmRvYmoKdHJhaWxlcjw8Pj4KJSVFT0YK";

/// Every media form an Agents SDK session adds: an image and a file as data URLs, an image as a
/// provider's file id and as a URL, and a tool output of text, image and file parts.
fn items() -> Value {
    json!([
        {"role": "user", "content": [
            {"type": "input_text", "text": "What is in these?"},
            {"type": "input_image", "image_url": format!("data:image/png;base64,{PNG}"), "detail": "auto"},
            {"type": "input_file", "file_data": format!("data:application/pdf;base64,{PDF}"), "filename": "r.pdf"},
            {"type": "input_image", "file_id": "file-abc", "detail": "high"},
            {"type": "input_image", "image_url": "https://example.com/a.png", "detail": "low"},
        ]},
        {"type": "function_call", "call_id": "c1", "name": "chart", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": [
            {"type": "input_text", "text": "the chart"},
            {"type": "input_image", "image_url": format!("data:image/png;base64,{PNG}")},
            {"type": "input_file", "file_data": format!("data:application/pdf;base64,{PDF}"), "filename": "c.pdf"},
        ]},
    ])
}

fn kept_events(server: &mut Server, items: Value) -> Value {
    server.ok("responses/toEvents", json!({"items": items, "keepItems": true, "keepMediaAsBlobs": true}))["events"]
        .clone()
}

#[test]
fn media_bytes_are_kept_once_as_blobs_and_come_back_exactly() {
    let mut server = Server::start(Wire::Lsp, "memory");
    let events = kept_events(&mut server, items());
    // Before an append, the bytes are in the parts only; the kept items name the blobs.
    for event in events.as_array().unwrap() {
        let kept = event["responsesItem"].to_string();
        assert!(!kept.contains(PNG) && !kept.contains(PDF), "{kept}");
    }
    server.ok("thread/open", json!({"threadId": "m"}));
    server.ok("thread/append", json!({"threadId": "m", "events": events}));
    let stored = server.ok("thread/events", json!({"threadId": "m"}))["events"].clone();
    let text = stored.to_string();
    assert!(!text.contains(PNG) && !text.contains(PDF), "no base64 of the bytes in the log: {text}");
    assert_eq!(stored[0]["responsesItemBlobs"].as_array().unwrap().len(), 2);
    assert_eq!(server.ok("responses/fromEvents", json!({"events": stored}))["items"], items());
    // The image the thread holds is one blob, however many items name it.
    let blob = stored[0]["responsesItemBlobs"][0]["blob"].as_str().unwrap().to_owned();
    assert_eq!(server.ok("blob/get", json!({"blob": blob}))["data"], PNG);
    assert_eq!(stored[0]["content"][1]["blob"], blob.as_str());
    server.stop();
}

#[test]
fn without_the_option_kept_items_stay_verbatim() {
    let mut server = Server::start(Wire::Lsp, "memory");
    let events = server.ok("responses/toEvents", json!({"items": items(), "keepItems": true}))["events"].clone();
    assert_eq!(events[0]["responsesItem"], items()[0]);
    assert!(events[0].get("responsesItemBlobs").is_none());
    let error = server.err("responses/toEvents", json!({"items": items(), "keepMediaAsBlobs": true}));
    assert_eq!(error["code"], -32602);
    assert_eq!(error["data"]["path"], "keepMediaAsBlobs");
    // Without keepItems, a provider's file id has no place to be kept: refused, naming it.
    let error = server.err("responses/toEvents", json!({"items": items()}));
    assert_eq!(error["data"]["path"], "items[0].content[3]");
    server.stop();
}

#[test]
fn base64_that_would_not_read_back_the_same_stays_in_the_item() {
    let mut server = Server::start(Wire::Lsp, "memory");
    let unpadded = format!("data:image/png;base64,{}", PNG.trim_end_matches('='));
    let item = json!({"role": "user", "content": [{"type": "input_image", "image_url": unpadded}]});
    let events = kept_events(&mut server, json!([item]));
    assert_eq!(events[0]["responsesItem"], item);
    assert!(events[0].get("responsesItemBlobs").is_none());
    server.ok("thread/open", json!({"threadId": "u"}));
    server.ok("thread/append", json!({"threadId": "u", "events": events}));
    let stored = server.ok("thread/events", json!({"threadId": "u"}))["events"].clone();
    assert_eq!(server.ok("responses/fromEvents", json!({"events": stored}))["items"], json!([item]));
    server.stop();
}

#[test]
fn a_blob_the_store_does_not_hold_or_a_bad_reference_is_refused_by_name() {
    let mut server = Server::start(Wire::Lsp, "memory");
    // Converted but never appended: the store holds no blob of these bytes.
    let events = kept_events(&mut server, items());
    let error = server.err("responses/fromEvents", json!({"events": events}));
    assert_eq!(error["code"], -32602);
    assert_eq!(error["data"]["path"], "events[0].responsesItemBlobs[0].blob");
    server.ok("thread/open", json!({"threadId": "b"}));
    server.ok("thread/append", json!({"threadId": "b", "events": events}));
    let mut stored = server.ok("thread/events", json!({"threadId": "b"}))["events"].clone();
    stored[0]["responsesItemBlobs"][1]["at"] = json!("/content/99/file_data");
    let error = server.err("responses/fromEvents", json!({"events": stored}));
    assert_eq!(error["data"]["path"], "events[0].responsesItemBlobs[1].at");
    stored[0]["responsesItemBlobs"] = json!("x");
    let error = server.err("responses/fromEvents", json!({"events": stored}));
    assert_eq!(error["data"]["path"], "events[0].responsesItemBlobs");
    server.stop();
}

/// LangChain blocks of every form, as `messages/toEvents` with `keepBlockForms` keeps them.
fn langchain_blocks() -> Value {
    json!([
        {"type": "text", "text": "see"},
        {"type": "image", "source_type": "base64", "data": PNG, "mime_type": "image/png"},
        {"type": "file", "source_type": "base64", "data": PDF, "mime_type": "application/pdf", "filename": "s.pdf"},
        {"type": "image", "base64": PNG, "mime_type": "image/png"},
        {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{PNG}"), "detail": "high"}},
        {"type": "image_url", "image_url": {"url": "https://example.com/c.png"}},
    ])
}

#[test]
fn langchain_blocks_come_back_in_the_form_they_were_written_in() {
    let mut server = Server::start(Wire::Lsp, "memory");
    let messages = json!([{"type": "human", "data": {"content": langchain_blocks()}}]);
    let events =
        server.ok("messages/toEvents", json!({"messages": messages, "keepBlockForms": true}))["events"].clone();
    server.ok("thread/open", json!({"threadId": "lc"}));
    server.ok("thread/append", json!({"threadId": "lc", "events": events}));
    let stored = server.ok("thread/events", json!({"threadId": "lc"}))["events"].to_string();
    assert!(!stored.contains(PNG) && !stored.contains(PDF), "{stored}");
    let rendered = server.ok("thread/render", json!({"threadId": "lc", "format": "messages"}));
    assert_eq!(rendered["messages"][0]["data"]["content"], langchain_blocks(), "{rendered}");
    // Without the option, the blocks come back in the v1 form, as before.
    server.ok("thread/open", json!({"threadId": "v1"}));
    let events = server.ok("messages/toEvents", json!({"messages": messages}))["events"].clone();
    server.ok("thread/append", json!({"threadId": "v1", "events": events}));
    let rendered = server.ok("thread/render", json!({"threadId": "v1", "format": "messages"}));
    assert_eq!(
        rendered["messages"][0]["data"]["content"][1],
        json!({"type": "image", "base64": PNG, "mime_type": "image/png"})
    );
    server.stop();
}
