//! Media over the protocol, on real pipes: what the importers keep of images and files, blobs
//! kept once however often they are shown, and blobs living as long as a thread names them.

use crate::support::{Server, Wire};
use base64::Engine as _;
use serde_json::{json, Value};

/// A real PNG of `width` × `height` noise-free red pixels (signature, IHDR, IDAT, IEND).
fn png(width: u32, height: u32) -> Vec<u8> {
    fn chunk(kind: &[u8], data: &[u8]) -> Vec<u8> {
        let mut out = (data.len() as u32).to_be_bytes().to_vec();
        out.extend_from_slice(kind);
        out.extend_from_slice(data);
        let mut crc_input = kind.to_vec();
        crc_input.extend_from_slice(data);
        out.extend_from_slice(&crc32(&crc_input).to_be_bytes());
        out
    }
    let mut header = width.to_be_bytes().to_vec();
    header.extend_from_slice(&height.to_be_bytes());
    header.extend_from_slice(&[8, 2, 0, 0, 0]);
    let row: Vec<u8> = std::iter::once(0).chain([255, 0, 0].repeat(width as usize)).collect();
    let raw = row.repeat(height as usize);
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    out.extend(chunk(b"IHDR", &header));
    out.extend(chunk(b"IDAT", &stored_zlib(&raw)));
    out.extend(chunk(b"IEND", b""));
    out
}

/// Zlib with stored (uncompressed) blocks: valid, and needs no compressor.
fn stored_zlib(data: &[u8]) -> Vec<u8> {
    let mut out = vec![0x78, 0x01];
    let chunks: Vec<&[u8]> = data.chunks(65_535).collect();
    for (i, block) in chunks.iter().enumerate() {
        out.push(u8::from(i + 1 == chunks.len()));
        out.extend_from_slice(&(block.len() as u16).to_le_bytes());
        out.extend_from_slice(&(!(block.len() as u16)).to_le_bytes());
        out.extend_from_slice(block);
    }
    let (mut a, mut b) = (1u32, 0u32);
    for &byte in data {
        a = (a + u32::from(byte)) % 65_521;
        b = (b + a) % 65_521;
    }
    out.extend_from_slice(&((b << 16) | a).to_be_bytes());
    out
}

fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &byte in data {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn id_of(bytes: &[u8]) -> String {
    threadkeeper::media::BlobId::of(bytes).to_string()
}

fn append(server: &mut Server, thread: &str, events: Value) -> Value {
    server.ok("thread/append", json!({"threadId": thread, "events": events}))
}

fn events(server: &mut Server, thread: &str) -> Vec<Value> {
    server.ok("thread/events", json!({"threadId": thread}))["events"].as_array().unwrap().clone()
}

/// The media parts of a thread's events, each as `(type, blob, size)`.
fn media_of(events: &[Value]) -> Vec<(String, String, u64)> {
    events
        .iter()
        .filter_map(|e| e["content"].as_array())
        .flatten()
        .filter(|p| p["type"] != "text")
        .map(|p| {
            (
                p["type"].as_str().unwrap().to_owned(),
                p["blob"].as_str().unwrap_or_default().to_owned(),
                p["size"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

#[test]
fn responses_items_keep_their_images_and_files_as_blobs() {
    let mut server = Server::start(Wire::Ndjson, "memory");
    let image = png(3, 2);
    let pdf = b"%PDF-1.4\n% a report\n".to_vec();
    let items = json!([
        {"role": "user", "content": [
            {"type": "input_text", "text": "What changed?"},
            {"type": "input_image", "image_url": format!("data:image/png;base64,{}", b64(&image)), "detail": "high"},
            {"type": "input_file", "file_data": format!("data:application/pdf;base64,{}", b64(&pdf)), "filename": "report.pdf"}]},
        {"type": "function_call", "call_id": "c1", "name": "screenshot", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": [
            {"type": "input_text", "text": "taken"},
            {"type": "input_image", "image_url": format!("data:image/png;base64,{}", b64(&image))}]},
    ]);
    let converted = server.ok("responses/toEvents", json!({"items": items}));
    server.ok("thread/open", json!({"threadId": "r"}));
    append(&mut server, "r", converted["events"].clone());
    let kept = events(&mut server, "r");
    assert_eq!(
        media_of(&kept),
        vec![
            ("image".to_owned(), id_of(&image), image.len() as u64),
            ("file".to_owned(), id_of(&pdf), pdf.len() as u64),
            ("image".to_owned(), id_of(&image), image.len() as u64),
        ]
    );
    assert!(!serde_json::to_string(&kept).unwrap().contains("\"data\""), "events never hold bytes");
    assert_eq!(kept[0]["content"][1]["width"], 3);
    assert_eq!(kept[0]["content"][1]["detail"], "high");
    assert_eq!(kept[0]["content"][2]["filename"], "report.pdf");
    let got = server.ok("blob/get", json!({"blob": id_of(&pdf)}));
    assert_eq!(got["data"], b64(&pdf));
}

#[test]
fn langchain_blocks_and_ai_sdk_parts_keep_their_media() {
    let mut server = Server::start(Wire::Lsp, "memory");
    let image = png(2, 2);
    let messages = json!([
        {"type": "human", "data": {"content": [
            {"type": "text", "text": "and this?"},
            {"type": "image", "base64": b64(&image), "mime_type": "image/png"}]}},
        {"type": "ai", "data": {"content": "", "tool_calls": [{"id": "c1", "name": "look", "args": {}, "type": "tool_call"}]}},
        {"type": "tool", "data": {"content": [{"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{}", b64(&image))}}], "tool_call_id": "c1"}},
    ]);
    let from_langchain = server.ok("messages/toEvents", json!({"messages": messages}));
    let ai_sdk = json!([{"role": "user", "content": [
        {"type": "text", "text": "see"}, {"type": "image", "image": b64(&image), "mediaType": "image/png"}]}]);
    let from_ai_sdk = server.ok("aiSdk/toEvents", json!({"messages": ai_sdk}));
    server.ok("thread/open", json!({"threadId": "l"}));
    append(&mut server, "l", from_langchain["events"].clone());
    append(&mut server, "l", from_ai_sdk["events"].clone());
    let kept = events(&mut server, "l");
    let image_id = id_of(&image);
    assert_eq!(media_of(&kept).into_iter().map(|(_, id, _)| id).collect::<Vec<_>>(), vec![image_id.clone(); 3]);
    let result = kept.iter().find(|e| e["type"] == "tool_result").unwrap();
    assert!(result.get("result").is_none(), "a result of media alone is its content parts: {result}");
}

#[test]
fn an_importer_refuses_media_it_cannot_read_naming_the_block_and_nothing_is_stored() {
    let mut server = Server::start(Wire::Ndjson, "memory");
    let error = server.err(
        "messages/toEvents",
        json!({"messages": [{"type": "human", "data": {"content": [{"type": "image_url", "image_url": {"url": "file:///etc/passwd"}}]}}]}),
    );
    assert_eq!(error["data"]["path"], "messages[0].data.content[0].image_url.url");
    server.ok("thread/open", json!({"threadId": "x"}));
    let bad = json!([{"type": "message", "role": "user", "iteration": 0, "content": [
        {"type": "text", "text": "ok"}, {"type": "image", "data": "data:image/png;base64,not-base64!"}]}]);
    let error = server.err("thread/append", json!({"threadId": "x", "events": bad}));
    assert_eq!(error["data"]["path"], "events[0].content[1].data");
    assert_eq!(server.ok("thread/events", json!({"threadId": "x"}))["eventCount"], 0);
}

#[test]
fn a_screenshot_shown_a_hundred_times_in_three_threads_is_one_blob_named_until_the_last_thread_goes() {
    let mut server = Server::start(Wire::Ndjson, "memory");
    let image = png(64, 48);
    let id = id_of(&image);
    for thread in ["a", "b", "c"] {
        server.ok("thread/open", json!({"threadId": thread}));
    }
    for step in 0..100 {
        let thread = ["a", "b", "c"][step % 3];
        let event = json!({"type": "tool_result", "toolCallId": format!("c{step}"), "iteration": step,
            "content": [{"type": "image", "data": b64(&image)}]});
        append(&mut server, thread, json!([event]));
    }
    let parts = media_of(&events(&mut server, "a"));
    assert_eq!(parts.len(), 34);
    assert!(parts.iter().all(|(_, blob, size)| *blob == id && *size == image.len() as u64));
    let stat = server.ok("blob/stat", json!({"blob": id}));
    assert_eq!(stat, json!({"blob": id, "mediaType": "image/png", "size": image.len(), "width": 64, "height": 48}));
    // A fork names what its source names; the blob lives while any thread names it.
    server.ok("thread/fork", json!({"threadId": "a", "newThreadId": "a2"}));
    for thread in ["a", "b", "c"] {
        server.ok("thread/delete", json!({"threadId": thread}));
        server.ok("blob/stat", json!({"blob": id}));
    }
    server.ok("thread/delete", json!({"threadId": "a2"}));
    let gone = server.err("blob/stat", json!({"blob": id}));
    assert_eq!(gone["data"]["path"], "blob");
}

/// A thread holding an image in a user message (between two texts) and in a tool result.
fn media_thread(server: &mut Server, thread: &str, image: &[u8]) {
    server.ok("thread/open", json!({"threadId": thread}));
    append(
        server,
        thread,
        json!([
            {"type": "message", "role": "user", "iteration": 0, "content": [
                {"type": "text", "text": "before & <after>"}, {"type": "image", "data": b64(image), "detail": "low"}, {"type": "text", "text": "after"}]},
            {"type": "tool_call", "toolName": "shot", "toolCallId": "c1", "args": {}, "iteration": 1},
            {"type": "tool_result", "toolCallId": "c1", "iteration": 1, "content": [{"type": "image", "data": b64(image)}]},
            {"type": "tool_call", "toolName": "shot", "toolCallId": "c2", "args": {}, "iteration": 2},
            {"type": "tool_result", "toolCallId": "c2", "iteration": 2, "result": {"ok": true}, "content": [{"type": "text", "text": "seen"}, {"type": "image", "data": b64(image)}]},
        ]),
    );
}

#[test]
fn exports_carry_media_by_reference_or_inline_and_import_back_identical() {
    let image = png(5, 4);
    for format in ["yaml", "json"] {
        let mut server = Server::start(Wire::Ndjson, "memory");
        media_thread(&mut server, "m", &image);
        let original = events(&mut server, "m");
        let refs =
            server.ok("thread/export", json!({"threadId": "m", "format": format}))["text"].as_str().unwrap().to_owned();
        assert!(refs.contains("images") && refs.contains(&id_of(&image)) && !refs.contains(&b64(&image)), "{refs}");
        server.ok("thread/import", json!({"text": refs, "format": format, "threadId": "again"}));
        assert_eq!(events(&mut server, "again"), original, "refs, {format}");
        let inline = server.ok("thread/export", json!({"threadId": "m", "format": format, "blobs": "inline"}))["text"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(inline.contains(&b64(&image)) && !inline.contains("sha256:"), "{inline}");

        // A fresh server holds no blob: the inline document stands alone, the refs one does not.
        let mut fresh = Server::start(Wire::Ndjson, "memory");
        let refused = fresh.err("thread/import", json!({"text": refs, "format": format, "threadId": "r"}));
        assert_eq!(refused["code"], -32602);
        assert!(refused["data"]["path"].as_str().unwrap().ends_with(".blob"), "{refused}");
        assert_eq!(fresh.ok("thread/list", json!({}))["threads"], json!([]), "nothing stored by the refused import");
        fresh.ok("thread/import", json!({"text": inline, "format": format, "threadId": "m"}));
        assert_eq!(events(&mut fresh, "m"), original, "inline, {format}");
        assert_eq!(fresh.ok("blob/get", json!({"blob": id_of(&image)}))["data"], b64(&image));
    }
}

const BIN: &str = env!("CARGO_BIN_EXE_threadkeeper");

fn cli(args: &[&str]) -> std::process::Output {
    std::process::Command::new(BIN).args(args).env_remove("THREADKEEPER_STORE").output().unwrap()
}

#[test]
fn the_command_line_exports_media_inline_or_beside_the_document_and_imports_both_back() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite:{}", dir.path().join("a.db").display());
    let image = png(6, 2);
    {
        let mut server = Server::start(Wire::Ndjson, &store);
        media_thread(&mut server, "m", &image);
    }
    let original = {
        let mut server = Server::start(Wire::Ndjson, &store);
        events(&mut server, "m")
    };
    let blobs = dir.path().join("blobs");
    let doc = dir.path().join("m.yaml");
    for (form, extra) in [("inline", vec![]), ("dir", vec!["--blobs-dir", blobs.to_str().unwrap()])] {
        let mut args = vec!["export", "--store", &store, "--thread", "m", "--format", "yaml", "--blobs", form];
        args.extend(extra.iter().copied());
        args.extend(["--output", doc.to_str().unwrap()]);
        let out = cli(&args);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let other = format!("sqlite:{}", dir.path().join(format!("{form}.db")).display());
        let mut args = vec!["import", "--from", "yaml", "--store", &other, "--thread", "m"];
        if form == "dir" {
            args.extend(["--blobs-dir", blobs.to_str().unwrap()]);
        }
        args.push(doc.to_str().unwrap());
        let out = cli(&args);
        assert!(out.status.success(), "{form}: {}", String::from_utf8_lossy(&out.stderr));
        let mut server = Server::start(Wire::Ndjson, &other);
        assert_eq!(events(&mut server, "m"), original, "{form}");
    }
    assert_eq!(std::fs::read(blobs.join(&id_of(&image)["sha256:".len()..])).unwrap(), image);

    // A blob file whose bytes are not its name's is refused, naming it; nothing is stored.
    std::fs::write(blobs.join(&id_of(&image)["sha256:".len()..]), b"other bytes").unwrap();
    let other = format!("sqlite:{}", dir.path().join("lying.db").display());
    let out = cli(&[
        "import",
        "--from",
        "yaml",
        "--store",
        &other,
        "--blobs-dir",
        blobs.to_str().unwrap(),
        doc.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("the file's bytes are not blob"));

    // A document that names a path for its blob instead of a content address reads nothing
    // outside the folder: the file beside it is never opened, the import is refused whole.
    std::fs::write(dir.path().join("secret"), &image).unwrap();
    let hex = &id_of(&image)["sha256:".len()..];
    let text = std::fs::read_to_string(&doc).unwrap();
    assert!(text.contains(hex), "the dir export names its blob");
    let escaping = dir.path().join("escaping.yaml");
    std::fs::write(&escaping, text.replace(hex, "../secret")).unwrap();
    let other = format!("sqlite:{}", dir.path().join("escaping.db").display());
    let out = cli(&["import", "--from", "yaml", "--store", &other, "--thread", "m", "--blobs-dir"]
        .into_iter()
        .chain([blobs.to_str().unwrap(), escaping.to_str().unwrap()])
        .collect::<Vec<_>>());
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    let mut server = Server::start(Wire::Ndjson, &other);
    assert_eq!(server.ok("thread/list", json!({}))["threads"], json!([]), "nothing stored");
}
