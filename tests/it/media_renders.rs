//! Media in every render: a thread with images (bytes and a URL), a PDF, audio and a text file,
//! in user messages and tool results, rendered in every format with its bytes at hand —
//! checked against the provider schemas and sequencing rules, byte for byte against golden
//! files, without the bytes (placeholders, as in XML), and for a prefix that a later render
//! keeps.
//!
//! Golden files: `tests/golden/media/NAME.events.json` (`{"options", "blobs": {id: base64},
//! "events"}`) and `NAME.MODE.FORM.json`. `UPDATE_GOLDEN=1 cargo test --test it media::`
//! rewrites them; review every changed byte.

use crate::support::golden::Goldens;
use base64::Engine as _;
use serde_json::{json, Value};
use std::fs;
use std::path::{Path, PathBuf};
use threadkeeper::media::bytes::NO_MEDIA;
use threadkeeper::media::{BlobId, MediaBytes};
use threadkeeper::messages::{build_messages, with_media_blocks, ContextMode, MessageOptions};
use threadkeeper::providers::{anthropic, bedrock_converse, openai_cache, render_request_with_media, ProviderOptions};
use threadkeeper::{AgentEvent, Provider};

const FORMS: [&str; 8] =
    ["messages", "openai-chat", "openai-responses", "anthropic", "ai-sdk", "pydantic-ai", "gemini", "bedrock-converse"];

struct Case {
    options: MessageOptions,
    media: MediaBytes,
    events: Vec<AgentEvent>,
}

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/media")
}

fn case() -> Case {
    let text = fs::read_to_string(dir().join("media_parts.events.json")).unwrap();
    let case: Value = serde_json::from_str(&text).unwrap();
    let mut media = MediaBytes::new();
    for (id, data) in case["blobs"].as_object().unwrap() {
        let bytes = base64::engine::general_purpose::STANDARD.decode(data.as_str().unwrap()).unwrap();
        let blob = BlobId::parse(id).unwrap();
        assert_eq!(BlobId::of(&bytes), blob, "a fixture blob's id is the hash of its bytes");
        media.insert(&blob, bytes.into());
    }
    let events = AgentEvent::list_from_values(case["events"].as_array().unwrap().clone()).unwrap();
    Case { options: serde_json::from_value(case["options"].clone()).unwrap(), media, events }
}

fn with_mode(options: &MessageOptions, mode: ContextMode) -> MessageOptions {
    MessageOptions { context_mode: mode, ..options.clone() }
}

/// `form` of `events`; `messages` is LangChain's form (standard content blocks).
fn render(
    events: &[AgentEvent],
    options: &MessageOptions,
    form: &str,
    cache: &ProviderOptions,
    media: &MediaBytes,
) -> Value {
    match form {
        "messages" => {
            let messages = build_messages(events, options);
            let messages: Vec<_> = messages.iter().map(|m| with_media_blocks(m, media)).collect();
            serde_json::to_value(messages).unwrap()
        }
        _ => {
            let provider: Provider = serde_json::from_value(json!(form)).unwrap();
            serde_json::from_str(&render_request_with_media(events, options, provider, cache, media, false)).unwrap()
        }
    }
}

/// Caching as `cacheControl: "auto"` asks it, for the providers that have breakpoints.
fn auto_cache() -> ProviderOptions {
    ProviderOptions {
        cache_control: anthropic::CacheControl::Auto { ttl: None },
        openai_cache: openai_cache::CacheControl::On(openai_cache::Caching {
            key: None,
            breakpoints: openai_cache::Breakpoints::Auto,
            ttl: None,
        }),
        bedrock_cache: bedrock_converse::CacheControl::Auto,
        stable_prefix: 0,
        ..ProviderOptions::default()
    }
}

/// Schema errors of a rendering, by the provider schemas, and (`sequencing`) the provider
/// suite's sequencing rules, which know requests without caching fields.
fn problems(form: &str, rendered: &Value, sequencing: bool) -> Vec<String> {
    let definition = match form {
        "openai-chat" => Some("openaiChat"),
        "openai-responses" => Some("openaiResponses"),
        "anthropic" => Some("anthropic"),
        "pydantic-ai" => Some("pydanticAi"),
        _ => None,
    };
    let mut out = match (form, definition) {
        ("ai-sdk", _) => crate::ai_sdk::schema_errors(rendered),
        (_, Some(definition)) => {
            let validator = crate::schemas::validator(&format!("providers.json#/$defs/{definition}"));
            crate::schemas::errors(&validator, rendered)
        }
        _ => Vec::new(),
    };
    if sequencing && matches!(form, "messages" | "openai-chat" | "openai-responses" | "anthropic") {
        out.extend(crate::providers::check(form, rendered).err());
    }
    out
}

#[test]
fn media_renders_match_their_goldens() {
    let case = case();
    let mut goldens = Goldens::new();
    for (mode, name) in [(ContextMode::Standard, "standard"), (ContextMode::Xml, "xml")] {
        for form in FORMS {
            if mode == ContextMode::Xml && form == "messages" {
                continue; // The document alone: the service adds the media (see below).
            }
            let options = with_mode(&case.options, mode);
            let rendered = render(&case.events, &options, form, &ProviderOptions::default(), &case.media);
            goldens.check_json(&dir().join(format!("media_parts.{name}.{form}.json")), &rendered);
        }
    }
    goldens.finish();
}

#[test]
fn media_renders_are_valid_for_every_provider_with_and_without_bytes_and_caching() {
    let case = case();
    let mut failures = Vec::new();
    for mode in [ContextMode::Standard, ContextMode::Xml] {
        for cache in [ProviderOptions::default(), auto_cache()] {
            for media in [&case.media, &*NO_MEDIA] {
                for form in FORMS {
                    let options = with_mode(&case.options, mode);
                    let rendered = render(&case.events, &options, form, &cache, media);
                    let sequencing = cache == ProviderOptions::default();
                    for problem in problems(form, &rendered, sequencing) {
                        failures.push(format!("{form} {mode:?} bytes: {}: {problem}", !media.is_empty()));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_format_carries_what_its_provider_takes() {
    let case = case();
    let standard = |form: &str| {
        let rendered = render(&case.events, &case.options, form, &ProviderOptions::default(), &case.media);
        serde_json::to_string(&rendered).unwrap()
    };
    let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
    let chat = standard("openai-chat");
    assert!(chat.contains(&format!(r#""image_url":{{"url":"data:image/png;base64,{png}","detail":"high"}}"#)));
    assert!(chat.contains(r#""type":"input_audio","input_audio":{"data":"UklGR"#));
    assert!(chat.contains(r#""text":"Media of tool call call_memo:"}"#));
    let responses = standard("openai-responses");
    assert!(responses.contains(r#""type":"function_call_output","call_id":"call_shot","output":[{"type":"input_text","text":"{\"ok\":true}"},{"type":"input_image""#));
    let anthropic = standard("anthropic");
    assert!(anthropic.contains(r#"{"type":"document","source":{"type":"text","media_type":"text/plain","data":"Meeting notes: ship on Friday.\n"},"title":"notes.txt"}"#));
    assert!(anthropic.contains(r#"{"type":"image","source":{"type":"url","url":"https://example.com/chart.png"}}"#));
    // Anthropic takes no audio: the memo is named, not carried.
    assert!(!anthropic.contains("UklGR") && anthropic.contains("[audio audio/wav sha256:"));
    let ai_sdk = standard("ai-sdk");
    assert!(ai_sdk.contains(r#""output":{"type":"content","value":[{"type":"text","text":"Fetched memo.wav."},{"type":"media","data":"UklGR"#));
    let pydantic = standard("pydantic-ai");
    assert!(pydantic.contains(r#""kind":"binary""#) && pydantic.contains(r#""kind":"image-url""#));
    // Gemini: inline bytes; a tool result's right after its functionResponse.
    let gemini = standard("gemini");
    assert!(gemini.contains(&format!(r#"{{"inlineData":{{"mimeType":"image/png","data":"{png}"}}}}"#)), "{gemini}");
    assert!(
        gemini.contains(r#""name":"screenshot","response":{"ok":true}}},{"inlineData":{"mimeType":"image/png""#),
        "{gemini}"
    );
    // Bedrock: image and document blocks with base64 bytes, in messages and tool results.
    let bedrock = standard("bedrock-converse");
    assert!(bedrock.contains(&format!(r#"{{"image":{{"format":"png","source":{{"bytes":"{png}"}}}}}}"#)), "{bedrock}");
    assert!(bedrock.contains(r#"{"document":{"format":"pdf","name":"#), "{bedrock}");
    assert!(
        bedrock.contains(r#""toolResult":{"toolUseId":"call_shot","content":[{"json":"#)
            || bedrock.contains(r#""toolResult":{"toolUseId":"call_shot","content":[{"text":"#),
        "{bedrock}"
    );
}

/// The base64 runs of at least 16 characters in a render: the media bytes it carries.
fn carried_bytes(rendered: &Value) -> Vec<String> {
    let text = rendered.to_string();
    let mut found: Vec<String> = ["iVBOR", "JVBER", "UklGR", "/9j/"]
        .iter()
        .flat_map(|start| text.match_indices(start).map(|(at, _)| at).collect::<Vec<_>>())
        .map(|at| text[at..].chars().take_while(|c| c.is_ascii_alphanumeric() || "+/=".contains(*c)).collect())
        .collect();
    found.sort();
    found
}

#[test]
fn xml_mode_under_caching_carries_the_media_it_carries_without() {
    let case = case();
    let options = with_mode(&case.options, ContextMode::Xml);
    for form in FORMS.into_iter().filter(|form| *form != "messages") {
        let plain = carried_bytes(&render(&case.events, &options, form, &ProviderOptions::default(), &case.media));
        let cached = carried_bytes(&render(&case.events, &options, form, &auto_cache(), &case.media));
        assert_eq!(cached, plain, "{form}: the media carried in XML mode with and without caching");
    }
    let bedrock = render(&case.events, &options, "bedrock-converse", &auto_cache(), &case.media);
    assert!(!carried_bytes(&bedrock).is_empty() && bedrock.to_string().contains("cachePoint"), "{bedrock}");
}

#[test]
fn without_their_bytes_media_are_named_never_carried() {
    let case = case();
    for mode in [ContextMode::Standard, ContextMode::Xml] {
        for form in FORMS {
            let options = with_mode(&case.options, mode);
            let text =
                serde_json::to_string(&render(&case.events, &options, form, &ProviderOptions::default(), &NO_MEDIA))
                    .unwrap();
            assert!(!text.contains(";base64,") && !text.contains("UklGR") && !text.contains("iVBOR"), "{form}: {text}");
            assert!(text.contains("[file application/pdf sha256:"), "{form} names the PDF: {text}");
        }
    }
}

#[test]
fn threads_without_media_render_the_same_whatever_bytes_are_at_hand() {
    let case = case();
    let text_only: Vec<AgentEvent> = AgentEvent::list_from_values(vec![
        json!({"type": "message", "role": "user", "content": "hello", "iteration": 1}),
        json!({"type": "message", "role": "assistant", "content": "hi", "iteration": 1}),
    ])
    .unwrap();
    for form in FORMS {
        let with = render(&text_only, &case.options, form, &auto_cache(), &case.media);
        let without = render(&text_only, &case.options, form, &auto_cache(), &NO_MEDIA);
        assert_eq!(with, without, "{form}");
    }
}

/// Cache markers, which move to the newest content by design, taken out.
fn without_markers(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| *k != "cache_control" && *k != "prompt_cache_breakpoint")
                .map(|(k, v)| (k.clone(), without_markers(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_markers).collect()),
        other => other.clone(),
    }
}

fn items(form: &str, rendered: &Value) -> Vec<Value> {
    let list = match form {
        "messages" => rendered,
        "openai-responses" => &rendered["input"],
        "gemini" => &rendered["contents"],
        _ => &rendered["messages"],
    };
    list.as_array().unwrap().iter().map(without_markers).collect()
}

/// The compact JSON text of `items` up to (not including) the last one, as the list opens.
fn open_prefix(items: &[Value]) -> String {
    let text = serde_json::to_string(&items[..items.len() - 1]).unwrap();
    text.strip_suffix(']').unwrap().to_owned()
}

#[test]
fn after_an_append_the_earlier_request_is_a_byte_prefix_media_included() {
    let case = case();
    // Every point where no call waits for its answer (an answer may change what came before).
    let cuts = [1, 2, 4, 6, 7, 8];
    for cache in [ProviderOptions::default(), auto_cache()] {
        // Gemini signs the first call of each step of the current turn, which a new user text
        // ends: its earlier contents change by design, media or not.
        for form in FORMS.into_iter().filter(|&form| form != "gemini") {
            for pair in cuts.windows(2) {
                let (was, now) = (&case.events[..pair[0]], &case.events[..pair[1]]);
                let was = items(form, &render(was, &case.options, form, &cache, &case.media));
                let now = items(form, &render(now, &case.options, form, &cache, &case.media));
                let (was, now) = (open_prefix(&was), serde_json::to_string(&now).unwrap());
                assert!(now.starts_with(&was), "{form} from {} to {} events:\n{was}\n{now}", pair[0], pair[1]);
            }
        }
    }
}

// ---- through the service: bytes fetched for the render, media counted by their rule ----

/// A PNG header of the given size, enough for the sniffer that stores width and height.
fn png(width: u32, height: u32) -> Vec<u8> {
    let mut bytes = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    bytes.extend_from_slice(&width.to_be_bytes());
    bytes.extend_from_slice(&height.to_be_bytes());
    bytes.extend_from_slice(&[8, 6, 0, 0, 0, 0, 0, 0, 0]);
    bytes
}

fn thread_with_an_image(s: &mut crate::support::Server) -> String {
    let data = base64::engine::general_purpose::STANDARD.encode(png(1000, 1000));
    s.ok("thread/open", json!({"threadId": "t"}));
    let events = json!([
        {"type": "message", "role": "user", "content": [
            {"type": "text", "text": "What is this?"},
            {"type": "image", "data": data, "mediaType": "image/png"}], "iteration": 1},
        {"type": "message", "role": "assistant", "content": "A square.", "iteration": 1},
        {"type": "message", "role": "user", "content": "Thanks.", "iteration": 2},
    ]);
    s.ok("thread/append", json!({"threadId": "t", "events": events}));
    data
}

#[test]
fn a_render_carries_the_bytes_the_store_holds() {
    let mut s = crate::support::Server::start(crate::support::Wire::Ndjson, "memory");
    let data = thread_with_an_image(&mut s);
    for format in ["anthropic", "openai-chat", "openai-responses", "ai-sdk", "pydantic-ai", "messages"] {
        let rendered = s.ok("thread/render", json!({"threadId": "t", "format": format}));
        assert!(rendered.to_string().contains(&data), "{format}: {rendered}");
        let xml_mode =
            s.ok("thread/render", json!({"threadId": "t", "format": format, "options": {"contextMode": "xml"}}));
        assert!(xml_mode.to_string().contains(&data), "{format} in XML mode: {xml_mode}");
    }
    let xml = s.ok("thread/render", json!({"threadId": "t", "format": "xml"}));
    assert!(!xml.to_string().contains(&data) && xml.to_string().contains("1000x1000"));
}

#[test]
fn counts_take_media_by_the_providers_rule() {
    let mut s = crate::support::Server::start(crate::support::Wire::Ndjson, "memory");
    thread_with_an_image(&mut s);
    let mut tokens = |format: &str, rule: Option<&str>| {
        let mut params = json!({"threadId": "t", "format": format});
        if let Some(rule) = rule {
            params["options"] = json!({"mediaTokens": rule});
        }
        s.ok("thread/tokens", params)["tokens"].as_u64().unwrap()
    };
    // The placeholder's text gives way to the rule's tokens (1000×1000: Anthropic 1,334;
    // OpenAI's tiles 765), less the placeholder's own few dozen.
    let text = tokens("anthropic", Some("text"));
    let by_rule = tokens("anthropic", None) - text;
    assert!((1334 - 60..1334).contains(&by_rule), "{by_rule}");
    let by_tiles = tokens("openai-chat", None) - tokens("openai-chat", Some("text"));
    assert!((765 - 60..765).contains(&by_tiles), "{by_tiles}");
    assert_eq!(tokens("anthropic", Some("openai-tiles")) - text, by_tiles);
    // A budget the placeholder would fit drops the image's iteration.
    let budgeted = s.ok(
        "thread/render",
        json!({"threadId": "t", "format": "anthropic", "options": {"budget": {"maxTokens": 600}}}),
    );
    assert_eq!(budgeted["dropped"], json!({"iterations": [1]}), "{budgeted}");
    let unknown =
        s.err("thread/tokens", json!({"threadId": "t", "format": "anthropic", "options": {"mediaTokens": "pixels"}}));
    assert!(unknown.to_string().contains("mediaTokens"), "{unknown}");
}
