//! Model input every provider accepts: standard mode (rule 8b) and the three provider
//! projections, checked against each provider's sequencing rules on every fixture thread and on
//! generated ones, with nothing of the thread lost on the way.
//!
//! Golden files: `tests/golden/providers/NAME.events.json` (`{"options": MessageOptions,
//! "events": [...]}`) and, per form, `NAME.FORM.json` with the exact expected bytes.
//! `UPDATE_GOLDEN=1 cargo test --test it providers::provider_goldens` rewrites them; review every changed byte.

use crate::support::golden::Goldens;
use proptest::prelude::*;
use serde_json::{json, Value};
use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};
use threadkeeper::js_json;
use threadkeeper::messages::{build_messages, ContextMode, DanglingToolCalls, MessageOptions};
use threadkeeper::{render_request, AgentEvent, Provider};

// ---- the four forms of one thread ----

const FORMS: [&str; 4] = ["messages", "openai-chat", "openai-responses", "anthropic"];

fn render(events: &[AgentEvent], options: &MessageOptions, form: &str) -> Value {
    match form {
        "messages" => serde_json::to_value(build_messages(events, options)).unwrap(),
        _ => {
            let provider: Provider = serde_json::from_value(json!(form)).unwrap();
            serde_json::from_str(&render_request(events, options, provider, false)).unwrap()
        }
    }
}

pub(crate) fn check(form: &str, rendered: &Value) -> Result<(), String> {
    match form {
        "messages" => check_langchain(rendered.as_array().unwrap()),
        "openai-chat" => check_openai_chat(rendered),
        "openai-responses" => check_openai_responses(rendered),
        "anthropic" => check_anthropic(rendered),
        other => unreachable!("{other}"),
    }
}

// ---- sequencing rules, one validator per provider ----

fn str_of<'a>(v: &'a Value, key: &str) -> Result<&'a str, String> {
    v.get(key).and_then(Value::as_str).ok_or_else(|| format!("{key} is not a string in {v}"))
}

/// Calls must be answered, each exactly once, by the answers that directly follow them.
struct CallLedger {
    seen: HashSet<String>,
    open: Vec<String>,
}

impl CallLedger {
    fn new() -> Self {
        CallLedger { seen: HashSet::new(), open: Vec::new() }
    }

    fn call(&mut self, id: &str) -> Result<(), String> {
        if !self.seen.insert(id.to_owned()) {
            return Err(format!("tool call id {id:?} used twice"));
        }
        self.open.push(id.to_owned());
        Ok(())
    }

    fn answer(&mut self, id: &str) -> Result<(), String> {
        let at = self.open.iter().position(|open| open == id).ok_or(format!("answer {id:?} answers no open call"))?;
        self.open.remove(at);
        Ok(())
    }

    /// Anything but an answer arrives: every call must be answered by now.
    fn close(&self, what: &str) -> Result<(), String> {
        match self.open.first() {
            Some(id) => Err(format!("{what} arrives while call {id:?} is unanswered")),
            None => Ok(()),
        }
    }
}

/// LangChain stored messages, by the rules OpenAI applies after LangChain's conversion.
fn check_langchain(messages: &[Value]) -> Result<(), String> {
    let mut ledger = CallLedger::new();
    for (i, message) in messages.iter().enumerate() {
        let kind = str_of(message, "type")?;
        let data = &message["data"];
        // A string, or LangChain standard content blocks where media are carried.
        check_content(data.get("content"), &["text", "image", "file", "audio"])
            .map_err(|e| format!("messages[{i}]: {e}"))?;
        match kind {
            "tool" => {
                ledger.answer(str_of(data, "tool_call_id")?).map_err(|e| format!("messages[{i}]: {e}"))?;
                if let Some(status) = data.get("status") {
                    if status != "error" && status != "success" {
                        return Err(format!("messages[{i}]: status {status}"));
                    }
                }
            }
            "system" if i > 0 => return Err(format!("messages[{i}]: system message after the start")),
            "system" | "human" | "ai" => {
                ledger.close(&format!("messages[{i}] ({kind})"))?;
                let calls = data.get("tool_calls").and_then(Value::as_array);
                if kind != "system" && calls.is_none() && data["content"].as_str().is_some_and(|c| c.trim().is_empty())
                {
                    return Err(format!("messages[{i}]: blank {kind} message (Anthropic refuses it)"));
                }
                let first_of_conversation = i == 0 || (i == 1 && messages[0]["type"] == "system");
                if first_of_conversation && kind == "ai" {
                    return Err(format!("messages[{i}]: the conversation opens with the assistant (Anthropic)"));
                }
                for call in calls.into_iter().flatten() {
                    if !call["args"].is_object() {
                        return Err(format!("messages[{i}]: args not an object"));
                    }
                    let id = str_of(call, "id")?;
                    check_openai_id(id)?;
                    ledger.call(id)?;
                }
            }
            other => return Err(format!("messages[{i}]: type {other}")),
        }
    }
    ledger.close("the end")
}

fn check_openai_id(id: &str) -> Result<(), String> {
    match id.chars().count() {
        1..=40 => Ok(()),
        n => Err(format!("OpenAI id {id:?} has {n} characters")),
    }
}

/// One OpenAI function call: a valid id, a name, and `arguments` holding a JSON object.
fn check_openai_call(id: &str, function: &Value, ledger: &mut CallLedger) -> Result<(), String> {
    check_openai_id(id)?;
    let arguments: Value =
        serde_json::from_str(str_of(function, "arguments")?).map_err(|e| format!("arguments: {e}"))?;
    if !arguments.is_object() {
        return Err(format!("arguments of {id:?} do not hold an object"));
    }
    str_of(function, "name")?;
    ledger.call(id)
}

/// The body has no key but `allowed`.
/// Content: a string, or a non-empty list of parts of the given types (media parts among them).
fn check_content(content: Option<&Value>, types: &[&str]) -> Result<(), String> {
    match content {
        Some(Value::String(_)) => Ok(()),
        Some(Value::Array(parts)) if !parts.is_empty() => parts.iter().try_for_each(|part| {
            let kind = str_of(part, "type")?;
            if types.contains(&kind) {
                Ok(())
            } else {
                Err(format!("a {kind} part where {types:?} go"))
            }
        }),
        other => Err(format!("content {other:?}")),
    }
}

fn check_keys(body: &Value, allowed: &[&str]) -> Result<(), String> {
    let keys: Vec<&String> = body.as_object().ok_or("the body is not an object")?.keys().collect();
    match keys.iter().find(|k| !allowed.contains(&k.as_str())) {
        Some(key) => Err(format!("unexpected key {key:?} (allowed: {allowed:?})")),
        None => Ok(()),
    }
}

fn check_openai_chat(body: &Value) -> Result<(), String> {
    check_keys(body, &["messages"])?;
    let mut ledger = CallLedger::new();
    for (i, message) in body["messages"].as_array().unwrap().iter().enumerate() {
        let role = str_of(message, "role")?;
        match role {
            "tool" => {
                let id = str_of(message, "tool_call_id")?;
                ledger.answer(id).map_err(|e| format!("messages[{i}]: {e}"))?;
                check_content(message.get("content"), &["text"])?;
            }
            "system" if i > 0 => return Err(format!("messages[{i}]: system after the start")),
            "system" => {
                ledger.close(&format!("messages[{i}] ({role})"))?;
                check_content(message.get("content"), &["text"])?;
            }
            "user" => {
                ledger.close(&format!("messages[{i}] ({role})"))?;
                check_content(message.get("content"), &["text", "image_url", "file", "input_audio"])?;
            }
            "assistant" => {
                ledger.close(&format!("messages[{i}] (assistant)"))?;
                let calls = message.get("tool_calls").and_then(Value::as_array);
                match (&message["content"], calls) {
                    (Value::String(_), _) | (Value::Null, Some(_)) => {}
                    (content, _) => return Err(format!("messages[{i}]: assistant content {content}")),
                }
                if calls.is_some_and(Vec::is_empty) {
                    return Err(format!("messages[{i}]: empty tool_calls"));
                }
                for call in calls.into_iter().flatten() {
                    assert_eq!(call["type"], "function");
                    check_openai_call(str_of(call, "id")?, &call["function"], &mut ledger)?;
                }
            }
            other => return Err(format!("messages[{i}]: role {other}")),
        }
    }
    ledger.close("the end")
}

fn check_openai_responses(body: &Value) -> Result<(), String> {
    check_keys(body, &["instructions", "input"])?;
    let items = body["input"].as_array().unwrap();
    let mut ledger = CallLedger::new();
    for (i, item) in items.iter().enumerate() {
        match str_of(item, "type")? {
            "message" => {
                ledger.close(&format!("input[{i}] (message)"))?;
                let role = str_of(item, "role")?;
                match role {
                    "user" => check_content(item.get("content"), &["input_text", "input_image", "input_file"])?,
                    "assistant" => drop(str_of(item, "content")?),
                    _ => return Err(format!("input[{i}]: role {role}")),
                }
            }
            "function_call" => {
                // Calls of one turn come together; a new turn starts once the last is answered.
                if !ledger.open.is_empty() && items[i - 1]["type"] != "function_call" {
                    ledger.close(&format!("input[{i}] (function_call)"))?;
                }
                check_openai_call(str_of(item, "call_id")?, item, &mut ledger)?;
            }
            "function_call_output" => {
                ledger.answer(str_of(item, "call_id")?).map_err(|e| format!("input[{i}]: {e}"))?;
                check_content(item.get("output"), &["input_text", "input_image", "input_file"])?;
            }
            "reasoning" => {
                ledger.close(&format!("input[{i}] (reasoning)"))?;
                str_of(item, "id")?;
                str_of(item, "encrypted_content")?;
                assert!(item["summary"].is_array());
                let next = items.get(i + 1).ok_or("reasoning without its following item")?;
                let follows = next["type"] == "function_call"
                    || next["type"] == "reasoning"
                    || (next["type"] == "message" && next["role"] == "assistant");
                if !follows {
                    return Err(format!("input[{i}]: reasoning followed by {next}"));
                }
            }
            other => return Err(format!("input[{i}]: type {other}")),
        }
    }
    ledger.close("the end")
}

pub(crate) fn check_anthropic(body: &Value) -> Result<(), String> {
    check_keys(body, &["system", "messages"])?;
    if let Some(system) = body.get("system") {
        if system.as_str().is_none_or(|s| s.trim().is_empty()) {
            return Err("system must be a non-empty string".into());
        }
    }
    let messages = body["messages"].as_array().unwrap();
    let mut seen_ids = HashSet::new();
    // The tool_use ids of the previous assistant turn, which the next user turn must answer first.
    let mut to_answer: Vec<String> = Vec::new();
    for (i, message) in messages.iter().enumerate() {
        let role = str_of(message, "role")?;
        let expected = if i % 2 == 0 { "user" } else { "assistant" };
        if role != expected {
            return Err(format!("messages[{i}]: role {role}, turns must alternate from user"));
        }
        let blocks = message["content"].as_array().ok_or(format!("messages[{i}]: content not a list"))?;
        if blocks.is_empty() {
            return Err(format!("messages[{i}]: no content"));
        }
        let mut answered = Vec::new();
        let mut past_results = false;
        let mut calls = Vec::new();
        for (b, block) in blocks.iter().enumerate() {
            match (role, str_of(block, "type")?) {
                // Thinking opens its assistant turn, and carries no breakpoint.
                ("assistant", "thinking" | "redacted_thinking") => {
                    if blocks[..b].iter().any(|earlier| !earlier["type"].as_str().unwrap().ends_with("thinking")) {
                        return Err(format!("messages[{i}]: thinking after other content"));
                    }
                    if block.get("cache_control").is_some() {
                        return Err(format!("messages[{i}]: thinking carries cache_control"));
                    }
                }
                (_, "text") => {
                    if str_of(block, "text")?.trim().is_empty() {
                        return Err(format!("messages[{i}]: blank text block"));
                    }
                    past_results = true;
                }
                ("user", "image" | "document") => {
                    assert!(block["source"].is_object());
                    past_results = true;
                }
                ("assistant", "tool_use") => {
                    let id = str_of(block, "id")?;
                    let valid = (1..=64).contains(&id.len())
                        && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
                    if !valid || !seen_ids.insert(id.to_owned()) {
                        return Err(format!("messages[{i}]: tool_use id {id:?} invalid or reused"));
                    }
                    assert!(block["input"].is_object());
                    str_of(block, "name")?;
                    calls.push(id.to_owned());
                }
                ("user", "tool_result") => {
                    if past_results {
                        return Err(format!("messages[{i}]: tool_result after other content"));
                    }
                    assert!(block["is_error"].is_boolean());
                    match block.get("content") {
                        None => {}
                        Some(Value::Array(blocks)) if !blocks.is_empty() => {
                            for inner in blocks {
                                match str_of(inner, "type")? {
                                    "text" if !str_of(inner, "text")?.trim().is_empty() => {}
                                    "image" | "document" => {}
                                    _ => return Err(format!("messages[{i}]: tool_result block {inner}")),
                                }
                            }
                        }
                        Some(content) if content.as_str().is_some_and(|s| !s.trim().is_empty()) => {}
                        Some(content) => return Err(format!("messages[{i}]: tool_result content {content}")),
                    }
                    answered.push(str_of(block, "tool_use_id")?.to_owned());
                }
                (role, kind) => return Err(format!("messages[{i}]: {kind} block in a {role} turn")),
            }
        }
        if role == "user" {
            let mut expected = std::mem::take(&mut to_answer);
            expected.sort();
            answered.sort();
            if answered != expected {
                return Err(format!("messages[{i}]: answers {answered:?}, the calls were {expected:?}"));
            }
        } else {
            to_answer = calls;
        }
    }
    match to_answer.first() {
        Some(id) => Err(format!("tool_use {id:?} is never answered")),
        None => Ok(()),
    }
}

// ---- nothing is lost ----

/// Every string in a rendering, and every argument object as `JSON.stringify` writes it.
fn corpus(value: &Value, out: &mut String) {
    match value {
        Value::String(s) => {
            out.push_str(s);
            out.push('\u{1}');
        }
        Value::Array(items) => items.iter().for_each(|item| corpus(item, out)),
        Value::Object(map) => {
            for (key, item) in map {
                if (key == "args" || key == "input") && item.is_object() {
                    js_json::write_value(out, item);
                    out.push('\u{1}');
                }
                corpus(item, out);
            }
        }
        _ => {}
    }
}

/// What an event says that standard mode and every projection must carry (rule 8b), or
/// `None` for what they leave out by design (protocol/README.md § Standard mode).
fn payload(event: &AgentEvent) -> Vec<String> {
    let mut said = said(event);
    // Whitespace says nothing; Anthropic refuses it, so no form need carry it.
    said.retain(|text| !text.trim().is_empty());
    said
}

fn said(event: &AgentEvent) -> Vec<String> {
    let fields = event.fields();
    let text = |key: &str| fields[key].as_str().unwrap().to_owned();
    // Content parts say their texts (media carry no text; their renders are checked in media_renders).
    let texts = |parts: &Value| -> Vec<String> {
        parts.as_array().unwrap().iter().filter_map(|p| p["text"].as_str().map(str::to_owned)).collect()
    };
    match event.event_type() {
        "message" if fields["content"].is_array() => texts(&fields["content"]),
        "message" => vec![text("content")],
        "tool_result" if !fields.contains_key("result") => texts(&fields["content"]),
        "human_input_received" => vec![text("response")],
        "error" => vec![text("error")],
        "summary" => vec![text("summary")],
        "tool_result" => vec![match &fields["result"] {
            Value::String(s) => s.clone(),
            other => js_json::to_string(other),
        }],
        "tool_call" => vec![text("toolName"), js_json::to_string(&fields["args"])],
        // Control events and unknown types are XML-only; reasoning is replayed only where the
        // provider can take it.
        _ => vec![],
    }
}

fn check_nothing_lost(events: &[AgentEvent], rendered: &Value) -> Result<(), String> {
    let mut text = String::new();
    corpus(rendered, &mut text);
    for (i, event) in events.iter().enumerate() {
        for said in payload(event) {
            if !text.contains(&said) {
                return Err(format!("events[{i}] ({}) lost: {said:?}", event.event_type()));
            }
        }
    }
    Ok(())
}

// ---- seed 001's form, the reference for threads it already gets right ----

fn seed_form(events: &[AgentEvent], instructions: Option<&str>) -> Value {
    let mut out: Vec<Value> = Vec::new();
    out.extend(threadkeeper::system_message(events, instructions).map(|m| serde_json::to_value(m).unwrap()));
    for event in events {
        let f = event.fields();
        let human = |content: String| json!({"type":"human","data":{"content":content}});
        let s = |key: &str| f[key].as_str().unwrap().to_owned();
        out.push(match event.event_type() {
            "message" => match f["role"].as_str().unwrap() {
                "user" => human(s("content")),
                "assistant" => json!({"type":"ai","data":{"content":s("content")}}),
                _ => human(format!("[System]: {}", s("content"))),
            },
            "human_input_received" => human(format!("[Human Response]: {}", s("response"))),
            "tool_call" => json!({"type":"ai","data":{"content":"","tool_calls":[
                {"id":f["toolCallId"],"name":f["toolName"],"args":f["args"],"type":"tool_call"}]}}),
            "tool_result" => json!({"type":"tool","data":{"content":said(event)[0],"tool_call_id":f["toolCallId"]}}),
            "error" => {
                let label = if f["recoverable"] == true { "[Error (recoverable)]" } else { "[Error]" };
                human(format!("{label}: {}", s("error")))
            }
            _ => continue,
        });
    }
    Value::Array(out)
}

// ---- fixtures: the provider goldens and every XML golden thread ----

fn golden_dir(kind: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden").join(kind)
}

pub(crate) struct Fixture {
    pub(crate) name: String,
    pub(crate) dir: PathBuf,
    pub(crate) options: MessageOptions,
    pub(crate) events: Vec<AgentEvent>,
}

pub(crate) fn fixtures(kind: &str) -> Vec<Fixture> {
    let dir = golden_dir(kind);
    let mut names: Vec<String> = fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().to_str()?.strip_suffix(".events.json").map(str::to_owned))
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|name| {
            let case: Value =
                serde_json::from_str(&fs::read_to_string(dir.join(format!("{name}.events.json"))).unwrap())
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
            let options = serde_json::from_value(case["options"].clone()).unwrap();
            let events = AgentEvent::list_from_values(case["events"].as_array().unwrap().clone()).unwrap();
            Fixture { name, dir: dir.clone(), options, events }
        })
        .collect()
}

/// The clients' shared fixture threads (`{name, events}`; those given as a turn document are
/// imported by the client suites, which check them).
fn client_fixtures() -> Vec<Fixture> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("clients/fixtures/provider-threads");
    let mut paths: Vec<PathBuf> = fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    paths.sort();
    paths
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .filter_map(|path| {
            let case: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
            let events = AgentEvent::list_from_values(case.get("events")?.as_array()?.clone()).unwrap();
            let name = case["name"].as_str().unwrap().to_owned();
            Some(Fixture { name, dir: dir.clone(), options: MessageOptions::default(), events })
        })
        .collect()
}

pub(crate) fn all_fixtures() -> Vec<Fixture> {
    let mut all = fixtures("providers");
    all.extend(fixtures("xml"));
    all.extend(client_fixtures());
    assert!(all.len() > 40, "fixtures missing: {}", all.len());
    all
}

/// Agent hosts' sessions, imported (their assistant messages group text and calls by
/// `messageId`, which the seed form does not know).
pub(crate) fn host_session_fixtures() -> Vec<Fixture> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/host-sessions");
    let threads = crate::host_sessions::provider_threads();
    threads
        .into_iter()
        .map(|(name, events)| Fixture { name, dir: dir.clone(), options: MessageOptions::default(), events })
        .collect()
}

pub(crate) fn variants(base: &MessageOptions) -> Vec<MessageOptions> {
    let mut out = Vec::new();
    for mode in [ContextMode::Standard, ContextMode::Xml] {
        for dangling in [DanglingToolCalls::Repair, DanglingToolCalls::Drop] {
            for instructions in [None, Some("Follow the plan.".to_owned())] {
                out.push(MessageOptions {
                    context_mode: mode,
                    dangling_tool_calls: dangling,
                    instructions: instructions.or(base.instructions.clone()),
                    ..base.clone()
                });
            }
        }
    }
    out
}

#[test]
fn every_fixture_renders_valid_in_all_four_forms_and_loses_nothing() {
    let mut failures = Vec::new();
    for fixture in all_fixtures().into_iter().chain(host_session_fixtures()) {
        for options in variants(&fixture.options) {
            for form in FORMS {
                let rendered = render(&fixture.events, &options, form);
                let mut result = check(form, &rendered);
                if options.dangling_tool_calls == DanglingToolCalls::Repair
                    && options.context_mode == ContextMode::Standard
                {
                    result = result.and_then(|()| check_nothing_lost(&fixture.events, &rendered));
                }
                if let Err(e) = result {
                    failures.push(format!("{} {form} {:?}: {e}", fixture.name, options.context_mode));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Claude Code threads leave no call interrupted: repairing dangling calls changes nothing, in
/// every form (parallel calls and their results, written on sibling branches of the session's
/// line tree, are all in the thread).
#[test]
fn claude_code_threads_leave_no_call_interrupted() {
    let mut failures = Vec::new();
    for (name, events) in crate::host_sessions::claude_code_threads() {
        for form in FORMS {
            let rendered = |dangling| {
                let options = MessageOptions { dangling_tool_calls: dangling, ..MessageOptions::default() };
                render(&events, &options, form)
            };
            if rendered(DanglingToolCalls::Repair) != rendered(DanglingToolCalls::Drop) {
                failures.push(format!("{name} {form}"));
            }
        }
    }
    assert!(failures.is_empty(), "calls interrupted: {failures:?}");
}

#[test]
fn provider_goldens() {
    let mut goldens = Goldens::new();
    for fixture in fixtures("providers") {
        for form in FORMS {
            let rendered = render(&fixture.events, &fixture.options, form);
            goldens.check_json(&fixture.dir.join(format!("{}.{form}.json", fixture.name)), &rendered);
        }
    }
    goldens.finish();
}

#[test]
fn threads_valid_in_the_seed_form_render_exactly_as_the_seed() {
    let mut compared = 0;
    for fixture in all_fixtures() {
        let instructions = fixture.options.instructions.as_deref();
        let seed = seed_form(&fixture.events, instructions);
        if check_langchain(seed.as_array().unwrap()).is_ok() {
            let options = MessageOptions { context_mode: ContextMode::Standard, ..fixture.options.clone() };
            assert_eq!(render(&fixture.events, &options, "messages"), seed, "{}", fixture.name);
            compared += 1;
        }
    }
    assert!(compared >= 8, "only {compared} fixtures are valid in the seed form");
}

// ---- each repair rule on its own thread ----

pub(crate) fn thread(values: Value) -> Vec<AgentEvent> {
    AgentEvent::list_from_values(values.as_array().unwrap().clone()).unwrap()
}

fn messages_of(events: &[AgentEvent], dangling: DanglingToolCalls) -> Vec<Value> {
    let options = MessageOptions { dangling_tool_calls: dangling, ..MessageOptions::default() };
    let rendered = render(events, &options, "messages");
    check_langchain(rendered.as_array().unwrap()).unwrap();
    rendered.as_array().unwrap().clone()
}

/// `type: content` of each message, tool messages as `tool(id, status?): content`.
fn summary(messages: &[Value]) -> Vec<String> {
    messages
        .iter()
        .map(|m| {
            let data = &m["data"];
            let content = data["content"].as_str().unwrap();
            match m["type"].as_str().unwrap() {
                "tool" => match data.get("status") {
                    Some(status) => format!(
                        "tool({}, {}): {content}",
                        data["tool_call_id"].as_str().unwrap(),
                        status.as_str().unwrap()
                    ),
                    None => format!("tool({}): {content}", data["tool_call_id"].as_str().unwrap()),
                },
                "ai" if data.get("tool_calls").is_some() => {
                    let ids: Vec<&str> =
                        data["tool_calls"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect();
                    format!("ai{ids:?}: {content}")
                }
                kind => format!("{kind}: {content}"),
            }
        })
        .collect()
}

fn call(id: &str) -> Value {
    json!({"type":"tool_call","toolName":"t","toolCallId":id,"args":{"id":id},"iteration":1})
}

fn result(id: &str, text: &str) -> Value {
    json!({"type":"tool_result","toolCallId":id,"result":text,"iteration":1})
}

fn user(text: &str) -> Value {
    json!({"type":"message","role":"user","content":text,"iteration":1})
}

#[test]
fn rule_pending_calls_share_one_ai_message() {
    let events = thread(json!([user("go"), call("a"), call("b"), result("b", "B"), result("a", "A")]));
    assert_eq!(
        summary(&messages_of(&events, DanglingToolCalls::Repair)),
        ["human: go", r#"ai["a", "b"]: "#, "tool(b): B", "tool(a): A"]
    );
}

#[test]
fn rule_error_naming_a_pending_call_answers_it() {
    let events = thread(json!([user("go"),
        call("a"),
        call("b"),
        {"type":"error","error":"boom","recoverable":false,"toolCallId":"a","iteration":1},
        {"type":"error","error":"retry","recoverable":true,"toolCallId":"b","iteration":1},
        {"type":"error","error":"late","recoverable":true,"toolCallId":"a","iteration":1},
    ]));
    assert_eq!(
        summary(&messages_of(&events, DanglingToolCalls::Repair)),
        [
            "human: go",
            r#"ai["a", "b"]: "#,
            "tool(a, error): [Error (non-recoverable)]: boom",
            "tool(b, error): [Error (recoverable)]: retry",
            "human: [Error (recoverable)]: late",
        ]
    );
}

#[test]
fn rule_unanswered_calls_are_answered_with_the_reason_or_dropped() {
    let events = thread(json!([
        user("go"),
        call("a"),
        {"type":"human_input_requested","question":"Proceed?","iteration":1},
        user("later"),
        call("b"),
        {"type":"error","error":"crashed","recoverable":false,"iteration":1},
        user("again"),
        call("c"),
    ]));
    assert_eq!(
        summary(&messages_of(&events, DanglingToolCalls::Repair)),
        [
            "human: go",
            r#"ai["a"]: "#,
            "tool(a, error): [Tool call not completed]: the run stopped to ask for human input: Proceed?",
            "human: later",
            r#"ai["b"]: "#,
            "tool(b, error): [Tool call not completed]: the run reported an error: crashed",
            "human: [Error]: crashed",
            "human: again",
            r#"ai["c"]: "#,
            "tool(c, error): [Tool call not completed]: no result was recorded for this call",
        ]
    );
    assert_eq!(
        summary(&messages_of(&events, DanglingToolCalls::Drop)),
        ["human: go", "human: later", "human: [Error]: crashed", "human: again"]
    );
}

#[test]
fn rule_a_human_answer_to_an_interrupting_request_answers_the_call() {
    let events = thread(json!([user("go"),
        call("other"),
        call("ask"),
        {"type":"human_input_requested","question":"Which city?","iteration":1},
        {"type":"human_input_received","response":"Oslo","iteration":1},
        result("other", "done"),
        {"type":"human_input_received","response":"unrelated","iteration":1},
    ]));
    assert_eq!(
        summary(&messages_of(&events, DanglingToolCalls::Repair)),
        [
            "human: go",
            r#"ai["other", "ask"]: "#,
            "tool(ask): Oslo",
            "tool(other): done",
            "human: [Human Response]: unrelated"
        ]
    );
}

#[test]
fn rule_messages_between_a_call_and_its_result_follow_the_results() {
    let events = thread(json!([user("go"),
        call("a"),
        {"type":"message","role":"system","content":"note","iteration":1},
        user("hurry"),
        result("a", "A"),
        user("thanks"),
    ]));
    assert_eq!(
        summary(&messages_of(&events, DanglingToolCalls::Repair)),
        ["human: go", r#"ai["a"]: "#, "tool(a): A", "human: [System]: note", "human: hurry", "human: thanks"]
    );
}

#[test]
fn rule_stray_results_are_kept_as_text() {
    let events = thread(json!([user("go"), result("ghost", "boo"), call("a"), result("a", "A"), result("a", "again")]));
    assert_eq!(
        summary(&messages_of(&events, DanglingToolCalls::Repair)),
        [
            "human: go",
            "human: [Tool Result for ghost]: boo",
            r#"ai["a"]: "#,
            "tool(a): A",
            "human: [Tool Result for a]: again"
        ]
    );
}

#[test]
fn rule_reused_ids_are_made_unique_and_answered_in_place() {
    let events = thread(json!([
        user("go"),
        call("x"),
        result("x", "1"),
        call("x"),
        result("x", "2"),
        call("x_2"),
        result("x_2", "3"),
    ]));
    assert_eq!(
        summary(&messages_of(&events, DanglingToolCalls::Repair)),
        [
            "human: go",
            r#"ai["x"]: "#,
            "tool(x): 1",
            r#"ai["x_2"]: "#,
            "tool(x_2): 2",
            r#"ai["x_2_2"]: "#,
            "tool(x_2_2): 3"
        ]
    );
}

#[test]
fn xml_context_mode_is_system_plus_one_user_message_in_every_projection() {
    let events = thread(json!([user("hi & bye"), call("a")]));
    let options = MessageOptions {
        context_mode: ContextMode::Xml,
        instructions: Some("Sys".into()),
        response_prefix: Some("ai_response:".into()),
        ..MessageOptions::default()
    };
    let document = threadkeeper::serialize_thread_to_xml(
        &events,
        &threadkeeper::XmlOptions { response_prefix: Some("ai_response:".into()), ..Default::default() },
    );
    assert_eq!(
        render(&events, &options, "openai-chat"),
        json!({"messages":[{"role":"system","content":"Sys"},{"role":"user","content":document}]})
    );
    assert_eq!(
        render(&events, &options, "openai-responses"),
        json!({"instructions":"Sys","input":[{"type":"message","role":"user","content":document}]})
    );
    assert_eq!(
        render(&events, &options, "anthropic"),
        json!({"system":"Sys","messages":[{"role":"user","content":[{"type":"text","text":document}]}]})
    );
}

#[test]
fn the_conversation_opens_with_a_user_turn_and_blank_messages_are_left_out() {
    let events = thread(json!([
        {"type":"message","role":"assistant","content":"Hello","iteration":0},
        user(""),
        {"type":"message","role":"assistant","content":" \n\t","iteration":0},
        user("hi"),
    ]));
    let opening = threadkeeper::messages::OPENING_TEXT;
    assert_eq!(
        summary(&messages_of(&events, DanglingToolCalls::Repair)),
        [format!("human: {opening}"), "ai: Hello".into(), "human: hi".into()]
    );
    let body = render(&events, &MessageOptions::default(), "anthropic");
    assert_eq!(
        body,
        json!({"messages":[
            {"role":"user","content":[{"type":"text","text":opening}]},
            {"role":"assistant","content":[{"type":"text","text":"Hello"}]},
            {"role":"user","content":[{"type":"text","text":"hi"}]},
        ]})
    );
    let blank = thread(json!([user("q"), call("a"), result("a", "   ")]));
    let options = MessageOptions { instructions: Some("  ".into()), ..MessageOptions::default() };
    let body = render(&blank, &options, "anthropic");
    assert_eq!(body.get("system"), None, "a blank system prompt is left out");
    assert_eq!(body["messages"][2]["content"][0], json!({"type":"tool_result","tool_use_id":"a","is_error":false}));
}

#[test]
fn responses_read_reasoning_ids_and_summaries_in_every_shape() {
    let events = thread(json!([
        user("q"),
        {"type":"turn_block","block":{"kind":"reasoning","id":"rs_block","payload":{"encrypted_content":"enc",
            "summary":[{"type":"summary_text","text":"first"},"second",{"text":""}]}},"iteration":0},
        call("a"),
        result("a", "A"),
    ]));
    let body = render(&events, &MessageOptions::default(), "openai-responses");
    assert_eq!(
        body["input"][1],
        json!({"type":"reasoning","id":"rs_block","summary":[
            {"type":"summary_text","text":"first"},{"type":"summary_text","text":"second"}],"encrypted_content":"enc"})
    );
}

#[test]
fn responses_replay_reasoning_only_before_an_assistant_item() {
    let reasoning = |id: &str| json!({"type":"turn_block","block":{"kind":"reasoning","payload":{"encrypted_content":"enc","item_id":id}},"iteration":0});
    let events =
        thread(json!([user("q"), reasoning("rs_1"), call("a"), result("a", "A"), reasoning("rs_2"), user("next")]));
    let body = render(&events, &MessageOptions::default(), "openai-responses");
    let types: Vec<&str> = body["input"].as_array().unwrap().iter().map(|i| i["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["message", "reasoning", "function_call", "function_call_output", "message"]);
    assert_eq!(body["input"][1], json!({"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"enc"}));
    for form in ["messages", "openai-chat", "anthropic"] {
        assert!(!render(&events, &MessageOptions::default(), form).to_string().contains("enc"), "{form}");
    }
}

#[test]
fn the_validators_reject_what_providers_reject() {
    // The seed's ungrouped parallel calls, an orphan answer, an unanswered call.
    let seed = seed_form(&thread(json!([call("a"), call("b"), result("a", "A"), result("b", "B")])), None);
    assert!(check_langchain(seed.as_array().unwrap()).is_err());
    assert!(check_openai_chat(&json!({"messages":[{"role":"tool","tool_call_id":"x","content":""}]})).is_err());
    let unanswered = json!({"messages":[{"role":"assistant","content":null,"tool_calls":[
        {"id":"a","type":"function","function":{"name":"t","arguments":"{}"}}]}]});
    assert!(check_openai_chat(&unanswered).is_err());
    assert!(
        check_anthropic(&json!({"messages":[{"role":"assistant","content":[{"type":"text","text":"x"}]}]})).is_err()
    );
    assert!(check_anthropic(&json!({"messages":[{"role":"user","content":[{"type":"text","text":""}]}]})).is_err());
    let bad_id = json!({"messages":[{"role":"user","content":[{"type":"text","text":"q"}]},
        {"role":"assistant","content":[{"type":"tool_use","id":"a b","name":"t","input":{}}]},
        {"role":"user","content":[{"type":"tool_result","tool_use_id":"a b","is_error":false}]}]});
    assert!(check_anthropic(&bad_id).is_err());
    assert!(
        check_openai_responses(&json!({"input":[{"type":"function_call_output","call_id":"a","output":""}]})).is_err()
    );
}

// ---- generated threads ----

pub(crate) fn event_strategy() -> impl Strategy<Value = Value> {
    let long = "l".repeat(45);
    let id = prop::sample::select(vec![
        "c0".to_owned(),
        "c1".into(),
        "c2".into(),
        "a b".into(),
        "".into(),
        "x.y/z".into(),
        long,
    ]);
    let text = prop::sample::select(vec!["", "  ", "ok", "& < > \" '", "\u{7}bell", "é🎉", "x_2"]);
    let iteration = 0u8..3;
    prop_oneof![
        (text.clone(), prop::sample::select(vec!["user", "assistant", "system"]), iteration.clone())
            .prop_map(|(t, r, i)| json!({"type":"message","role":r,"content":t,"iteration":i})),
        (id.clone(), iteration.clone(), any::<u8>())
            .prop_map(|(id, i, n)| json!({"type":"tool_call","toolName":"t","toolCallId":id,"args":{"n":n},"iteration":i})),
        (id.clone(), text.clone(), iteration.clone())
            .prop_map(|(id, t, i)| json!({"type":"tool_result","toolCallId":id,"result":t,"iteration":i})),
        (id.clone(), iteration.clone(), any::<bool>())
            .prop_map(|(id, i, r)| json!({"type":"error","error":"failed","recoverable":r,"toolCallId":id,"iteration":i})),
        (iteration.clone(), any::<bool>())
            .prop_map(|(i, r)| json!({"type":"error","error":"crash","recoverable":r,"iteration":i})),
        iteration.clone().prop_map(|i| json!({"type":"human_input_requested","question":"why?","iteration":i})),
        (text.clone(), iteration.clone())
            .prop_map(|(t, i)| json!({"type":"human_input_received","response":t,"iteration":i})),
        iteration.clone().prop_map(|i| json!({"type":"summary","summarizedIterations":[i],"summary":"s","iteration":i})),
        iteration.clone().prop_map(|i| json!({"type":"completion","result":"r","verified":true,"iteration":i})),
        iteration.clone().prop_map(|i| json!({"type":"turn_block","block":{"kind":"reasoning","payload":{"encrypted_content":"e","item_id":"rs"}},"iteration":i})),
        iteration.prop_map(|i| json!({"type":"approval","decision":"yes","iteration":i})),
    ]
}

/// Events as `event_strategy` makes them, some carrying a `messageId` (as `messages/toEvents`
/// gives them), so merged AI messages with text and calls are checked too.
fn event_with_id_strategy() -> impl Strategy<Value = Value> {
    (event_strategy(), prop::option::of(prop::sample::select(vec!["m1", "m2"]))).prop_map(|(mut event, id)| {
        if let Some(id) = id {
            event.as_object_mut().unwrap().insert("messageId".into(), json!(id));
        }
        event
    })
}

fn options_strategy() -> impl Strategy<Value = MessageOptions> {
    (any::<bool>(), any::<bool>(), any::<bool>()).prop_map(|(xml, drop, instructions)| MessageOptions {
        context_mode: if xml { ContextMode::Xml } else { ContextMode::Standard },
        dangling_tool_calls: if drop { DanglingToolCalls::Drop } else { DanglingToolCalls::Repair },
        instructions: instructions.then(|| "I".to_owned()),
        ..MessageOptions::default()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn any_thread_renders_valid_in_every_form(
        values in prop::collection::vec(event_with_id_strategy(), 0..30),
        options in options_strategy(),
    ) {
        let has_ids = values.iter().any(|v| v.get("messageId").is_some());
        let events = thread(Value::Array(values));
        for form in FORMS {
            let rendered = render(&events, &options, form);
            prop_assert!(check(form, &rendered).is_ok(), "{form}: {:?}\n{rendered:#}", check(form, &rendered));
            if options.context_mode == ContextMode::Standard && options.dangling_tool_calls == DanglingToolCalls::Repair {
                prop_assert!(check_nothing_lost(&events, &rendered).is_ok(), "{form}: {:?}", check_nothing_lost(&events, &rendered));
            }
        }
        // Threads the seed already renders validly come out exactly as the seed renders them.
        let seed = seed_form(&events, options.instructions.as_deref());
        if !has_ids && options.context_mode == ContextMode::Standard && check_langchain(seed.as_array().unwrap()).is_ok() {
            prop_assert_eq!(render(&events, &options, "messages"), seed);
        }
    }

    #[test]
    fn ids_map_the_same_way_in_every_rendering(values in prop::collection::vec(event_strategy(), 0..30)) {
        let events = thread(Value::Array(values));
        let options = MessageOptions::default();
        let first: Vec<String> = FORMS.iter().map(|f| render(&events, &options, f).to_string()).collect();
        let again: Vec<String> = FORMS.iter().map(|f| render(&events, &options, f).to_string()).collect();
        prop_assert_eq!(first, again);
    }
}

/// Rewritten ids still pair each call with its answer (the validators check the pairing).
#[test]
fn rewritten_ids_pair_calls_with_their_answers() {
    let long = "z".repeat(90);
    let events = thread(json!([call("a b"), call(&long), result(&long, "L"), result("a b", "AB")]));
    let chat = render(&events, &MessageOptions::default(), "openai-chat");
    check_openai_chat(&chat).unwrap();
    let ids: Vec<&str> =
        chat["messages"][1]["tool_calls"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert_eq!(ids[0], "a b", "OpenAI takes any character");
    assert_eq!(ids[1].len(), 40);
    assert_eq!(chat["messages"][2]["tool_call_id"], ids[1], "the answer to the long id comes first");
    let anthropic = render(&events, &MessageOptions::default(), "anthropic");
    check_anthropic(&anthropic).unwrap();
    assert!(anthropic["messages"][1]["content"][0]["id"].as_str().unwrap().starts_with("a_b_"));
    check_openai_responses(&render(&events, &MessageOptions::default(), "openai-responses")).unwrap();
}

/// The worked example of each page in `protocol/providers/` is what the code renders.
#[test]
fn provider_pages_show_what_the_code_renders() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let events: Vec<Value> =
        serde_json::from_str(&fs::read_to_string(root.join("examples/provider-thread.json")).unwrap()).unwrap();
    let events = thread(Value::Array(events));
    let options = MessageOptions { instructions: Some("Be brief.".into()), ..MessageOptions::default() };
    for form in ["openai-chat", "openai-responses", "anthropic", "gemini", "bedrock-converse"] {
        let page = fs::read_to_string(root.join(format!("protocol/providers/{form}.md"))).unwrap();
        let shown = page.split("```json\n").nth(1).and_then(|rest| rest.split("```").next()).unwrap();
        let provider: Provider = serde_json::from_value(json!(form)).unwrap();
        assert_eq!(shown, render_request(&events, &options, provider, true) + "\n", "protocol/providers/{form}.md");
    }
}

// ---- prefix stability: what a provider can cache ----

/// The items of a rendering a later one must begin with: messages, input items or turns.
fn items_of(form: &str, rendered: &Value) -> Vec<Value> {
    let list = match form {
        "messages" => rendered,
        "openai-responses" => &rendered["input"],
        _ => &rendered["messages"],
    };
    list.as_array().cloned().unwrap_or_default()
}

/// Whether, before the append, a call was waiting for its answer (or the run for a human): then
/// the append may answer it and change the rendering before the end (documented exception).
fn something_pending(events: &[Value]) -> bool {
    let mut pending: Vec<&str> = Vec::new();
    for event in events {
        let id = event["toolCallId"].as_str();
        match (event["type"].as_str().unwrap(), id) {
            ("tool_call", Some(id)) => pending.push(id),
            // One answer answers one call: a reused id may still have a call waiting.
            ("tool_result" | "error", Some(id)) => {
                if let Some(at) = pending.iter().position(|p| *p == id) {
                    pending.remove(at);
                }
            }
            ("human_input_requested", _) => return true,
            _ => {}
        }
    }
    !pending.is_empty()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// A render after an append begins with the previous render up to its last message (turn,
    /// item) — except after a summary (it is the system message's), when a call was waiting
    /// for its answer, or a call appended under `danglingToolCalls: "drop"`, as
    /// `protocol/README.md` says.
    #[test]
    fn a_render_after_an_append_extends_the_previous_one(
        values in prop::collection::vec(event_with_id_strategy(), 1..30),
        options in options_strategy(),
    ) {
        let events = thread(Value::Array(values.clone()));
        for k in 1..events.len() {
            // Under `drop`, a call appended before its answer is left out, and so is an AI
            // message it leaves with no call (documented exception).
            let dropped_call = options.dangling_tool_calls == DanglingToolCalls::Drop && values[k]["type"] == "tool_call";
            if values[k]["type"] == "summary" || something_pending(&values[..k]) || dropped_call {
                continue;
            }
            let (before, after) = (&events[..k], &events[..=k]);
            for form in FORMS {
                let (was, now) = (render(before, &options, form), render(after, &options, form));
                let (was, now) = (items_of(form, &was), items_of(form, &now));
                let stable = was.len().saturating_sub(1);
                prop_assert!(now.len() >= stable && now[..stable] == was[..stable], "{form} after event {k}: {was:?}\n{now:?}");
                if form == "openai-responses" || form == "anthropic" {
                    let (was_system, now_system) = (render(before, &options, form), render(after, &options, form));
                    let key = if form == "anthropic" { "system" } else { "instructions" };
                    prop_assert_eq!(&was_system[key], &now_system[key]);
                }
            }
            let xml_before = threadkeeper::serialize_thread_to_xml(before, &Default::default());
            let xml_after = threadkeeper::serialize_thread_to_xml(after, &Default::default());
            let lines = xml_before.strip_suffix("</thread>").unwrap();
            prop_assert!(xml_after.starts_with(lines));
        }
    }
}
