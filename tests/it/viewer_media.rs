//! The viewer's media and search: `/blob/<id>` and its thumbnail behind the token and `Host`
//! checks, only for blobs a thread names, typed as stored; `/search` as JSON with the
//! service's own refusals; and the written page's embedded thumbnails.

use crate::support::{Server, Wire};
use crate::viewer::Viewer;
use base64::Engine as _;
use image::{DynamicImage, ImageFormat, Rgb, RgbImage};
use serde_json::{json, Value};
use std::io::{Cursor, Read, Write};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_threadkeeper");
const PDF: &[u8] = b"%PDF-1.4\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n";

fn png(width: u32, height: u32, tint: u8) -> Vec<u8> {
    let image = RgbImage::from_fn(width, height, |x, y| Rgb([x as u8, y as u8, tint]));
    let mut bytes = Vec::new();
    DynamicImage::ImageRgb8(image).write_to(&mut Cursor::new(&mut bytes), ImageFormat::Png).unwrap();
    bytes
}

fn base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

struct Stored {
    store: String,
    writer: Server,
    image: String,
    image_bytes: Vec<u8>,
    pdf: String,
    orphan: String,
}

/// Thread `shots` names a 400x200 PNG and a PDF; a third blob is put but named by no thread.
fn stored_media(dir: &tempfile::TempDir) -> Stored {
    let store = format!("sqlite:{}", dir.path().join("threads.db").display());
    let mut writer = Server::start(Wire::Ndjson, &store);
    let image_bytes = png(400, 200, 9);
    let put = |writer: &mut Server, bytes: &[u8], media_type: &str| {
        let info = writer.ok("blob/put", json!({"data": base64(bytes), "mediaType": media_type}));
        info["blob"].as_str().unwrap().to_owned()
    };
    let image = put(&mut writer, &image_bytes, "image/png");
    let pdf = put(&mut writer, PDF, "application/pdf");
    let orphan = put(&mut writer, &png(8, 8, 200), "image/png");
    writer.ok("thread/open", json!({"threadId": "shots"}));
    writer.ok(
        "thread/append",
        json!({"threadId": "shots", "events": [
            {"type": "message", "role": "user", "iteration": 0, "content": [
                {"type": "text", "text": "the zebrafish screenshot and its report"},
                {"type": "image", "blob": image, "mediaType": "image/png"},
                {"type": "file", "blob": pdf, "mediaType": "application/pdf", "filename": "report.pdf"},
            ]},
            {"type": "message", "role": "assistant", "content": "a <b>bold</b> zebrafish answer", "iteration": 0},
        ]}),
    );
    Stored { store, writer, image, image_bytes, pdf, orphan }
}

struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

fn get(viewer: &Viewer, target: &str, host: &str) -> Answer {
    let mut stream = viewer.connect();
    write!(stream, "GET {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n").unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").expect("a head");
    let head = String::from_utf8(raw[..split].to_vec()).unwrap();
    let mut lines = head.lines();
    let status = lines.next().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    Answer { status, headers, body: raw[split + 4..].to_vec() }
}

fn own(viewer: &Viewer, target: &str) -> Answer {
    get(viewer, target, &viewer.authority)
}

#[test]
fn blobs_are_served_typed_as_stored_and_only_when_a_thread_names_them() {
    let dir = tempfile::tempdir().unwrap();
    let mut stored = stored_media(&dir);
    let viewer = Viewer::start(&stored.store);
    let token = viewer.token.clone();

    let full = own(&viewer, &format!("/blob/{}?token={token}", stored.image));
    assert_eq!(full.status, 200, "{}", full.text());
    assert_eq!(full.header("content-type"), Some("image/png"));
    assert_eq!(full.header("x-content-type-options"), Some("nosniff"));
    assert_eq!(full.header("content-disposition"), Some("inline"));
    let csp = full.header("content-security-policy").unwrap();
    assert!(csp.starts_with("default-src 'none'") && csp.contains("sandbox"), "{csp}");
    assert_eq!(full.body, stored.image_bytes);

    let thumb = own(&viewer, &format!("/blob/{}/thumbnail?token={token}", stored.image));
    assert_eq!(thumb.status, 200, "{}", thumb.text());
    assert_eq!(thumb.header("content-type"), Some("image/jpeg"));
    assert_eq!(thumb.header("x-content-type-options"), Some("nosniff"));
    let small = image::load_from_memory(&thumb.body).unwrap();
    assert_eq!((small.width(), small.height()), (160, 80));

    let pdf = own(&viewer, &format!("/blob/{}?token={token}", stored.pdf));
    assert_eq!(pdf.status, 200);
    assert_eq!(pdf.header("content-type"), Some("application/pdf"));
    let disposition = pdf.header("content-disposition").unwrap();
    assert!(
        disposition.starts_with("attachment; filename=\"blob-") && disposition.ends_with(".pdf\""),
        "{disposition}"
    );
    assert_eq!(pdf.body, PDF);
    assert_eq!(own(&viewer, &format!("/blob/{}/thumbnail?token={token}", stored.pdf)).status, 404);

    // Put, but named by no thread: refused, with nothing of it in the answer.
    let orphan = own(&viewer, &format!("/blob/{}?token={token}", stored.orphan));
    assert_eq!(orphan.status, 403);
    assert_eq!(orphan.text(), format!("forbidden: no thread names {}\n", stored.orphan));
    assert_eq!(own(&viewer, &format!("/blob/{}/thumbnail?token={token}", stored.orphan)).status, 403);
    let unknown = format!("sha256:{}", "0".repeat(64));
    let missing = own(&viewer, &format!("/blob/{unknown}?token={token}"));
    assert_eq!((missing.status, missing.text()), (404, format!("no blob {unknown}\n")));
    assert_eq!(own(&viewer, &format!("/blob/not-an-id?token={token}")).status, 404);

    // Once a thread names it (read from where the viewer left the thread), it is served.
    let part = json!({"type": "image", "blob": stored.orphan, "mediaType": "image/png"});
    let event = json!({"type": "tool_result", "toolCallId": "c9", "content": [part], "iteration": 1});
    stored.writer.ok("thread/append", json!({"threadId": "shots", "events": [event]}));
    assert_eq!(own(&viewer, &format!("/blob/{}?token={token}", stored.orphan)).status, 200);

    // The token and Host rules hold here as everywhere.
    let target = format!("/blob/{}", stored.image);
    assert_eq!(own(&viewer, &target).status, 401);
    assert_eq!(own(&viewer, &format!("{target}?token=wrong")).status, 403);
    let port = viewer.authority.split_once(':').unwrap().1;
    let foreign = get(&viewer, &format!("{target}?token={token}"), &format!("rebound.example:{port}"));
    assert_eq!(foreign.status, 403);
    assert!(!foreign.body.windows(4).any(|w| w == b"\x89PNG"));
}

#[test]
fn the_search_endpoint_answers_hits_and_clear_refusals() {
    let dir = tempfile::tempdir().unwrap();
    let stored = stored_media(&dir);
    let viewer = Viewer::start(&stored.store);
    let token = viewer.token.clone();

    let found = own(&viewer, &format!("/search?token={token}&q=zebrafish"));
    assert_eq!(found.status, 200, "{}", found.text());
    assert_eq!(found.header("content-type"), Some("application/json"));
    assert_eq!(found.header("x-content-type-options"), Some("nosniff"));
    let answer: Value = serde_json::from_slice(&found.body).unwrap();
    let hits = answer["hits"].as_array().unwrap();
    assert_eq!(hits.len(), 2, "{answer}");
    let mut indices: Vec<u64> = hits.iter().map(|h| h["eventIndex"].as_u64().unwrap()).collect();
    indices.sort();
    assert_eq!(indices, [0, 1]);
    assert!(hits.iter().all(|h| h["threadId"] == "shots" && h["snippet"].as_str().unwrap().contains("«zebrafish»")));

    for (query, reason) in
        [("%22unclosed", "a quote opened at character 1 is never closed"), ("", "the query is empty")]
    {
        let refused = own(&viewer, &format!("/search?token={token}&q={query}"));
        assert_eq!(refused.status, 400, "{}", refused.text());
        let error: Value = serde_json::from_slice(&refused.body).unwrap();
        assert_eq!(error, json!({"error": format!("query: {reason}")}));
    }
    assert_eq!(own(&viewer, "/search?q=zebrafish").status, 401);
    let port = viewer.authority.split_once(':').unwrap().1;
    let foreign = get(&viewer, &format!("/search?token={token}&q=zebrafish"), &format!("rebound.example:{port}"));
    assert_eq!(foreign.status, 403);
    assert!(!foreign.text().contains("zebrafish"));
}

fn page_data(html: &str) -> Value {
    const OPEN: &str = "<script type=\"application/json\" id=\"thread-data\">";
    let start = html.find(OPEN).unwrap() + OPEN.len();
    let end = start + html[start..].find("</script>").unwrap();
    serde_json::from_str(&html[start..end]).unwrap()
}

#[test]
fn a_written_page_embeds_image_thumbnails_and_names_other_media() {
    let dir = tempfile::tempdir().unwrap();
    let stored = stored_media(&dir);
    let output = crate::support::run_bounded(
        Command::new(BIN)
            .args(["view", "--store", &stored.store, "--thread", "shots", "--out", "-"])
            .env_remove("THREADKEEPER_STORE"),
        None,
    );
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let html = String::from_utf8(output.stdout).unwrap();
    assert!(html.contains("img-src data:;"), "the written page still fetches nothing");
    let data = page_data(&html);
    let media = data["media"].as_object().unwrap();
    assert_eq!(media.keys().collect::<Vec<_>>(), [&stored.image], "images only");
    let url = media[&stored.image]["thumbnail"].as_str().unwrap();
    let encoded = url.strip_prefix("data:image/jpeg;base64,").unwrap();
    let bytes = base64::engine::general_purpose::STANDARD.decode(encoded).unwrap();
    let small = image::load_from_memory(&bytes).unwrap();
    assert_eq!((small.width(), small.height()), (160, 80));
    assert!(!data["events"].to_string().contains(&base64(PDF)), "no PDF bytes in the timeline");
}

#[test]
fn a_files_inline_image_becomes_a_blob_part_with_its_thumbnail() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("inline.json");
    let data_url = format!("data:image/png;base64,{}", base64(&png(40, 320, 3)));
    let events = json!([
        {"type": "message", "role": "user", "iteration": 0, "content": [
            {"type": "image", "data": data_url},
            {"type": "image", "blob": format!("sha256:{}", "a".repeat(64)), "mediaType": "image/png"},
        ]},
    ]);
    std::fs::write(&file, events.to_string()).unwrap();
    let output = crate::support::run_bounded(
        Command::new(BIN).args(["view", file.to_str().unwrap(), "--out", "-"]).env_remove("THREADKEEPER_STORE"),
        None,
    );
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let data = page_data(&String::from_utf8(output.stdout).unwrap());
    let parts = data["events"][0]["content"].as_array().unwrap();
    let id = parts[0]["blob"].as_str().unwrap();
    assert!(parts[0].get("data").is_none(), "the bytes are not carried twice: {}", parts[0]);
    assert_eq!((parts[0]["width"].as_u64(), parts[0]["height"].as_u64()), (Some(40), Some(320)));
    let shown = &data["media"][id]["thumbnail"];
    assert!(shown.as_str().unwrap().starts_with("data:image/jpeg;base64,"));
    let named = &data["media"][format!("sha256:{}", "a".repeat(64))];
    assert_eq!(named, &json!({"note": "named by id: its bytes are in a store, not in this file"}));
}
