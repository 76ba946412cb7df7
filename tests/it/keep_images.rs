//! `options.media.keepImages`: only the newest images go with their bytes, the frontier moving
//! in steps — golden requests before and after a move, a property over random runs (at most
//! `2N` images a request; between moves every request extends the one before it, up to its last
//! breakpoint), counts and rolling plans that see the images actually sent, and the option's
//! errors.
//!
//! Golden files: `tests/golden/keep_images/NAME.json`; `UPDATE_GOLDEN=1 cargo test --test it
//! keep_images::` rewrites them; review every changed byte.

use crate::support::{Server, Wire};
use base64::Engine as _;
use proptest::prelude::*;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use threadkeeper::media::{BlobId, MediaBytes};
use threadkeeper::messages::MessageOptions;
use threadkeeper::providers::keep_images::KeepImages;
use threadkeeper::providers::{anthropic, bedrock_converse, render_request_with_media, ProviderOptions};
use threadkeeper::{AgentEvent, Provider};

fn screenshot_bytes(i: usize) -> Vec<u8> {
    format!("screenshot {i}").into_bytes()
}

/// Step `i`: a `screenshot` call and its result holding one image.
fn step(i: usize, media: &mut MediaBytes) -> Vec<Value> {
    let bytes = screenshot_bytes(i);
    let id = BlobId::of(&bytes);
    media.insert(&id, bytes.into());
    let image = json!({"type": "image", "blob": id.as_str(), "mediaType": "image/png", "size": 13, "width": 750, "height": 1000});
    vec![
        json!({"type": "tool_call", "toolName": "screenshot", "toolCallId": format!("shot_{i}"), "args": {}, "iteration": i}),
        json!({"type": "tool_result", "toolCallId": format!("shot_{i}"), "result": "taken", "content": [{"type": "text", "text": format!("screen {i}")}, image], "iteration": i}),
    ]
}

fn run(steps: usize) -> (Vec<Vec<AgentEvent>>, MediaBytes) {
    let mut media = MediaBytes::new();
    let mut events =
        vec![json!({"type": "message", "role": "user", "content": "Click through the app.", "iteration": 0})];
    let mut runs = Vec::new();
    for i in 1..=steps {
        events.extend(step(i, &mut media));
        runs.push(AgentEvent::list_from_values(events.clone()).unwrap());
    }
    (runs, media)
}

fn options(keep: u64, provider: Provider) -> ProviderOptions {
    let mut options = ProviderOptions { keep_images: KeepImages::new(keep), ..ProviderOptions::default() };
    match provider {
        Provider::Anthropic => options.cache_control = anthropic::CacheControl::Auto { ttl: None },
        Provider::BedrockConverse => options.bedrock_cache = bedrock_converse::CacheControl::Auto,
        _ => {}
    }
    options
}

fn render(events: &[AgentEvent], provider: Provider, options: &ProviderOptions, media: &MediaBytes) -> Value {
    let message_options = MessageOptions { instructions: Some("Look closely.".into()), ..MessageOptions::default() };
    serde_json::from_str(&render_request_with_media(events, &message_options, provider, options, media, false)).unwrap()
}

/// Image blocks that carry bytes, in any provider's form.
fn images_with_bytes(request: &Value) -> usize {
    match request {
        Value::Object(fields) => {
            let own = match fields.get("type").and_then(Value::as_str) {
                Some("image") => fields.get("source").is_some_and(|s| s["type"] == "base64") as usize,
                Some("image_url") => 1,
                Some("input_image") => 1,
                // Bedrock's `{image: {format, source: {bytes}}}`, Gemini's `{inlineData}`.
                _ => {
                    usize::from(fields.get("image").is_some_and(|i| i.get("source").is_some()))
                        + usize::from(fields.contains_key("inlineData"))
                }
            };
            own + fields.values().map(images_with_bytes).sum::<usize>()
        }
        Value::Array(items) => items.iter().map(images_with_bytes).sum(),
        _ => 0,
    }
}

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/keep_images")
}

fn check_golden(name: &str, value: &Value) {
    let path = golden_dir().join(format!("{name}.json"));
    let text = serde_json::to_string_pretty(value).unwrap() + "\n";
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(golden_dir()).unwrap();
        std::fs::write(&path, &text).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(text, expected, "{name} differs from its golden file");
}

#[test]
fn keep_images_goldens_before_and_after_the_frontier_moves() {
    // keepImages 2: four images all go with bytes; the fifth moves the frontier past three.
    let (runs, media) = run(5);
    for provider in [Provider::Anthropic, Provider::OpenAiResponses, Provider::BedrockConverse, Provider::Gemini] {
        let before = render(&runs[3], provider, &options(2, provider), &media);
        let after = render(&runs[4], provider, &options(2, provider), &media);
        assert_eq!((images_with_bytes(&before), images_with_bytes(&after)), (4, 2), "{}", provider.name());
        check_golden(&format!("before_move.{}", provider.name()), &before);
        check_golden(&format!("after_move.{}", provider.name()), &after);
    }
}

#[test]
fn without_the_option_every_image_goes_as_today() {
    let (runs, media) = run(7);
    let plain = ProviderOptions::default();
    let huge = ProviderOptions { keep_images: KeepImages::new(100), ..plain };
    for provider in Provider::ALL {
        assert_eq!(render(&runs[6], provider, &plain, &media), render(&runs[6], provider, &huge, &media));
    }
}

/// The request's messages without cache marks (what a cache compares).
fn unmarked(request: &Value) -> Vec<Value> {
    fn strip(value: &mut Value) {
        match value {
            Value::Object(fields) => {
                fields.remove("cache_control");
                fields.retain(|key, _| key != "cachePoint");
                fields.values_mut().for_each(strip);
            }
            Value::Array(items) => {
                items.retain(|item| item.get("cachePoint").is_none());
                items.iter_mut().for_each(strip);
            }
            _ => {}
        }
    }
    let mut messages = request["messages"].clone();
    strip(&mut messages);
    messages.as_array().cloned().unwrap_or_default()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn requests_hold_at_most_2n_images_and_extend_each_other_between_moves(keep in 1u64..6, steps in 1usize..40) {
        let (runs, media) = run(steps);
        for provider in [Provider::Anthropic, Provider::OpenAiChat, Provider::BedrockConverse] {
            let options = options(keep, provider);
            let mut previous: Option<(Value, usize)> = None;
            for (at, events) in runs.iter().enumerate() {
                let request = render(events, provider, &options, &media);
                let images = images_with_bytes(&request);
                let total = at + 1;
                let frontier = KeepImages::new(keep).unwrap().frontier(total);
                prop_assert!(images as u64 <= 2 * keep, "{} images of {total}", images);
                prop_assert_eq!(images, total - frontier);
                if let Some((before, moved_at)) = &previous {
                    if *moved_at == frontier {
                        // The frontier stood still: the earlier request is a prefix of this one.
                        let (before, now) = (unmarked(before), unmarked(&request));
                        prop_assert!(before.len() <= now.len());
                        prop_assert_eq!(&before[..], &now[..before.len()]);
                    } else {
                        prop_assert_eq!(images as u64, keep, "a move leaves exactly N");
                    }
                }
                previous = Some((request, frontier));
            }
        }
    }
}

// --- through the protocol ---

/// A PNG header saying `width`×`height` (all the sniffer reads) and a few bytes more.
fn png(width: u32, height: u32, salt: usize) -> String {
    let mut bytes = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    bytes.extend_from_slice(&width.to_be_bytes());
    bytes.extend_from_slice(&height.to_be_bytes());
    bytes.extend_from_slice(&[8, 6, 0, 0, 0, 0, 0, 0, 0]);
    bytes.extend_from_slice(format!("{salt}").as_bytes());
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn screenshot_run(server: &mut Server, thread: &str, steps: usize) {
    server.ok("thread/open", json!({"threadId": thread}));
    let first = json!({"type": "message", "role": "user", "content": "Click through the app.", "iteration": 0});
    server.ok("thread/append", json!({"threadId": thread, "events": [first]}));
    for i in 1..=steps {
        let image = json!({"type": "image", "data": png(750, 1000, i), "mediaType": "image/png"});
        let events = json!([
            {"type": "tool_call", "toolName": "screenshot", "toolCallId": format!("shot_{i}"), "args": {}, "iteration": i},
            {"type": "tool_result", "toolCallId": format!("shot_{i}"), "result": "taken", "content": [image], "iteration": i},
        ]);
        server.ok("thread/append", json!({"threadId": thread, "events": events}));
    }
}

#[test]
fn renders_and_counts_see_only_the_images_sent() {
    let mut server = Server::start(Wire::Ndjson, "memory");
    screenshot_run(&mut server, "shots", 9);
    let media = json!({"keepImages": 3});
    let all = server
        .ok("thread/render", json!({"threadId": "shots", "format": "anthropic", "options": {"cacheControl": "auto"}}));
    let kept = server.ok(
        "thread/render",
        json!({"threadId": "shots", "format": "anthropic", "options": {"cacheControl": "auto", "media": media}}),
    );
    // 9 images, keep 3: the frontier is at 4 · ⌊(9 − 3) / 4⌋ = 4, so 5 go with bytes.
    assert_eq!((images_with_bytes(&all), images_with_bytes(&kept)), (9, 5));
    let xml_kept = server.ok(
        "thread/render",
        json!({"threadId": "shots", "format": "anthropic", "options": {"contextMode": "xml", "cacheControl": "auto", "media": media}}),
    );
    assert_eq!(images_with_bytes(&xml_kept), 5);
    for format in ["anthropic", "messages", "openai-chat", "gemini", "bedrock-converse"] {
        let mut tokens = |options: Value| {
            server.ok("thread/tokens", json!({"threadId": "shots", "format": format, "options": options}))["tokens"]
                .as_u64()
                .unwrap()
        };
        let (all, kept) = (tokens(json!({})), tokens(json!({"media": media})));
        // 750×1000 is 1,000 tokens by Anthropic's rule: four images fewer cost ~4,000 less.
        if format == "anthropic" || format == "messages" {
            assert!(all - kept >= 3_800 && all - kept <= 4_000, "{format}: {all} vs {kept}");
        }
        assert!(kept <= all, "{format}: {all} vs {kept}");
    }
}

#[test]
fn rolling_plans_list_the_media_of_the_iterations_they_cover() {
    let mut server = Server::start(Wire::Ndjson, "memory");
    screenshot_run(&mut server, "roll", 6);
    let plan = server.ok(
        "thread/planCompaction",
        json!({"threadId": "roll", "strategy": "rolling", "maxTokens": 3000, "compactTo": 2000, "format": "anthropic",
               "options": {"media": {"keepImages": 2}}}),
    );
    let step = &plan["step"];
    let media = step["media"].as_array().unwrap_or_else(|| panic!("{plan}"));
    let [first, last] = [step["iterations"][0].as_u64().unwrap(), step["iterations"][1].as_u64().unwrap()];
    assert_eq!(media.len() as u64, last - first + 1 - u64::from(first == 0), "{plan}");
    for listed in media {
        let blob = listed["blob"].as_str().unwrap();
        assert_eq!((listed["type"].as_str(), listed["mediaType"].as_str()), (Some("image"), Some("image/png")));
        assert!(listed["size"].as_u64().is_some(), "{listed}");
        // The summarizer's document names each image by its placeholder.
        assert!(step["prompt"].as_str().unwrap().contains(blob), "{listed}");
    }
    // The step goes back as planned, media list and all.
    let round = server.ok(
        "thread/compact",
        json!({"threadId": "roll", "strategy": "rolling", "step": step, "summary": "Took screenshots."}),
    );
    assert_eq!(round["round"], 1);
}

#[test]
fn bad_media_options_are_refused_where_they_are() {
    let mut server = Server::start(Wire::Ndjson, "memory");
    screenshot_run(&mut server, "bad", 1);
    let refused = [
        (json!({"keepImages": 0}), "options.media.keepImages"),
        (json!({"keepImages": -1}), "options.media.keepImages"),
        (json!({"keepImages": 2.5}), "options.media.keepImages"),
        (json!({"keepImages": "3"}), "options.media.keepImages"),
        (json!({"keepImages": 10_001}), "options.media.keepImages"),
        (json!({"keepImages": 3, "keepFiles": 1}), "options.media.keepFiles"),
        (json!("all"), "options.media"),
    ];
    for (media, path) in refused {
        let params = json!({"threadId": "bad", "format": "anthropic", "options": {"media": media}});
        let error = server.err("thread/render", params.clone());
        assert_eq!(error["code"], -32602, "{params}: {error}");
        assert!(error["message"].as_str().unwrap().contains(path), "{params}: {error}");
    }
    let ok = server.ok(
        "thread/render",
        json!({"threadId": "bad", "format": "anthropic", "options": {"media": {"keepImages": 10_000}}}),
    );
    assert_eq!(images_with_bytes(&ok), 1);
}
