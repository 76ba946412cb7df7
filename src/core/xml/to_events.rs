//! `<event>` elements back to [`AgentEvent`]s: the seed-000 type table read right to left.
//!
//! | XML `type` | event |
//! |---|---|
//! | `human` / `ai` / `system` | `message` with role `user` / `assistant` / `system`, `content` = body |
//! | `tool_input` | `tool_call`: `toolName` = `name`, `args` = the JSON body, `toolCallId` as below |
//! | `tool_output` | `tool_result`: `result` = body (always a string), `toolCallId` as below; `durationMs` from `duration_ms` (a number when it is one as JavaScript prints it, else the text), `parallelGroup` from `parallel_group` (text) |
//! | `error` | `error`: `recoverable` = `recoverable == "true"` (absent: false) |
//! | `human_input_requested` / `human_input_received` | `question` / `response` = body |
//! | `completion` | `completion`: `result` = body, `verified: false` (not in the XML) |
//! | `summary` | `summary`: `summarizedIterations` from the comma list |
//! | `custom:` + name | the unknown type `name` (see [`type_names`]), fields as below |
//! | anything else | that type, with the fields of the JSON-object body (else `content` = body) |
//!
//! Every event gets `iteration` from its attribute (a JSON number). Fields are ordered `type`,
//! the type's fields, `iteration`, then a tool result's `durationMs` and `parallelGroup`.
//!
//! Tool call ids: a `call_id` attribute (the seed-003 form) is used as is. Without one, a
//! `tool_input` gets `call_<index>` (its 0-based position in the thread) and a `tool_output` is
//! paired with the oldest earlier unanswered `tool_input` of the same `name` (so parallel calls
//! pair in order), else the latest earlier one of that name, else it is dangling and gets
//! `call_<index>` of its own. Any such pairing renders back to the same `name`.
//!
//! Lossy, because the XML does not carry it: `timestamp`; non-string tool results (they come
//! back as their JSON text); `error.toolCallId`; the optional fields of `human_input_requested`;
//! `completion.verified`; original tool call ids without `call_id`; the spelling of numbers
//! (`1.0` reads back as `1`); characters the serializer replaced with U+FFFD. An unknown event
//! type spelled like an XML type (`human`, `tool_input`, ...) is written `custom:human` and reads
//! back as itself.
//! A `tool_input` body that is not a JSON object (hand-written documents) becomes
//! `args: {"input": <the JSON value, or the body as a string>}`.

use super::parse::{read_xml_events, XmlEvent, XmlParseError};
use super::type_names;
use crate::event::AgentEvent;
use crate::js_json;
use serde_json::{Map, Number, Value};
use std::collections::{HashMap, VecDeque};

/// A parsed document: its events and the text after `</thread>`.
#[derive(Clone, Debug, PartialEq)]
pub struct ThreadDocument {
    pub events: Vec<AgentEvent>,
    /// The response prefix, without the newline that separates it from `</thread>`;
    /// `None` when nothing (or only that newline) follows `</thread>`.
    pub response_prefix: Option<String>,
}

/// The events of a `<thread>` document; a response prefix after `</thread>` is ignored.
pub fn parse_thread_xml(text: &str) -> Result<Vec<AgentEvent>, XmlParseError> {
    parse_thread_document(text).map(|doc| doc.events)
}

/// The events of a `<thread>` document and the response prefix that follows it.
pub fn parse_thread_document(text: &str) -> Result<ThreadDocument, XmlParseError> {
    let (xml_events, rest) = read_xml_events(text)?;
    let events = xml_events_to_agent_events(text, xml_events)?;
    let prefix = rest.strip_prefix('\n').unwrap_or(rest);
    Ok(ThreadDocument { events, response_prefix: (!prefix.is_empty()).then(|| prefix.to_owned()) })
}

pub(super) fn xml_events_to_agent_events(
    text: &str,
    xml_events: Vec<XmlEvent>,
) -> Result<Vec<AgentEvent>, XmlParseError> {
    let mut ids = ToolCallIds::default();
    xml_events
        .into_iter()
        .enumerate()
        .map(|(index, xml)| {
            let error = |message: String| XmlParseError::at(text, xml.offset, message);
            let fields = to_fields(&xml, index, &mut ids).map_err(error)?;
            AgentEvent::from_map(fields, &format!("events[{index}]")).map_err(|e| error(e.to_string()))
        })
        .collect()
}

fn to_fields(xml: &XmlEvent, index: usize, ids: &mut ToolCallIds) -> Result<Map<String, Value>, String> {
    let xml_type = xml.attribute("type").ok_or("<event> has no type attribute")?;
    let iteration = match xml.attribute("iteration") {
        Some(text) => parse_number(text).ok_or_else(|| format!("iteration {text:?} is not a number"))?,
        None => return Err("<event> has no iteration attribute".into()),
    };
    let body = || Value::String(xml.body.clone());
    let mut fields = Map::new();
    let mut set = |key: &str, value: Value| {
        fields.insert(key.to_owned(), value);
    };
    match xml_type {
        "human" | "ai" | "system" => {
            set("type", "message".into());
            set(
                "role",
                match xml_type {
                    "human" => "user",
                    "ai" => "assistant",
                    _ => "system",
                }
                .into(),
            );
            set("content", body());
        }
        "tool_input" => {
            let name = xml.attribute("name").ok_or("tool_input has no name attribute")?;
            let id = ids.call(name, xml.attribute("call_id"), index);
            set("type", "tool_call".into());
            set("toolName", name.into());
            set("toolCallId", id.into());
            set("args", Value::Object(args_from_body(&xml.body)));
        }
        "tool_output" => {
            let name = xml.attribute("name").unwrap_or("unknown");
            let id = ids.result(name, xml.attribute("call_id"), index);
            set("type", "tool_result".into());
            set("toolCallId", id.into());
            set("result", body());
        }
        unknown if type_names::unknown_type_from_attribute(unknown).is_some() => {
            let type_name = type_names::unknown_type_from_attribute(unknown).unwrap_or(unknown);
            set("type", type_name.into());
            set_body_fields(&xml.body, &mut set);
        }
        "error" => {
            let recoverable = match xml.attribute("recoverable") {
                None | Some("false") => false,
                Some("true") => true,
                Some(other) => return Err(format!("recoverable {other:?} is neither \"true\" nor \"false\"")),
            };
            set("type", "error".into());
            set("error", body());
            set("recoverable", recoverable.into());
        }
        "human_input_requested" => {
            set("type", xml_type.into());
            set("question", body());
        }
        "human_input_received" => {
            set("type", xml_type.into());
            set("response", body());
        }
        "completion" => {
            set("type", "completion".into());
            set("result", body());
            set("verified", false.into());
        }
        "summary" => {
            set("type", "summary".into());
            set("summarizedIterations", summarized_iterations(xml.attribute("summarizedIterations").unwrap_or(""))?);
            set("summary", body());
        }
        other => {
            set("type", other.into());
            set_body_fields(&xml.body, &mut set);
        }
    }
    set("iteration", Value::Number(iteration));
    if xml_type == "tool_output" {
        // After `iteration`, where extra fields of a tool result go.
        if let Some(duration) = xml.attribute("duration_ms") {
            set("durationMs", number_or_string(duration));
        }
        if let Some(group) = xml.attribute("parallel_group") {
            set("parallelGroup", group.into());
        }
    }
    Ok(fields)
}

/// An unknown event's fields: those of its JSON-object body, else `content` = the body.
fn set_body_fields(body: &str, set: &mut impl FnMut(&str, Value)) {
    match serde_json::from_str::<Value>(body) {
        Ok(Value::Object(rest)) => rest.into_iter().for_each(|(k, v)| set(&k, v)),
        _ => set("content", Value::String(body.to_owned())),
    }
}

/// A number when `text` is exactly how JavaScript prints one (so it renders back to `text`),
/// else the text itself.
fn number_or_string(text: &str) -> Value {
    match parse_number(text) {
        Some(n) if js_json::number_to_string(&n) == text => Value::Number(n),
        _ => Value::String(text.to_owned()),
    }
}

fn parse_number(text: &str) -> Option<Number> {
    match serde_json::from_str(text.trim()) {
        Ok(Value::Number(n)) => Some(n),
        _ => None,
    }
}

fn summarized_iterations(list: &str) -> Result<Value, String> {
    if list.trim().is_empty() {
        return Ok(Value::Array(Vec::new()));
    }
    list.split(',')
        .map(|item| {
            parse_number(item)
                .map(Value::Number)
                .ok_or_else(|| format!("summarizedIterations item {item:?} is not a number"))
        })
        .collect::<Result<_, _>>()
        .map(Value::Array)
}

fn args_from_body(body: &str) -> Map<String, Value> {
    match serde_json::from_str::<Value>(body) {
        Ok(Value::Object(args)) => args,
        Ok(other) => Map::from_iter([("input".to_owned(), other)]),
        Err(_) => Map::from_iter([("input".to_owned(), Value::String(body.to_owned()))]),
    }
}

/// Assigns tool call ids and pairs results with calls (see the module docs).
#[derive(Default)]
struct ToolCallIds {
    /// name → ids of earlier calls with that name that no result has claimed yet, oldest first.
    unanswered: HashMap<String, VecDeque<String>>,
    /// name → id of the latest call with that name.
    latest: HashMap<String, String>,
}

impl ToolCallIds {
    fn call(&mut self, name: &str, call_id: Option<&str>, index: usize) -> String {
        let id = call_id.map_or_else(|| format!("call_{index}"), str::to_owned);
        self.unanswered.entry(name.to_owned()).or_default().push_back(id.clone());
        self.latest.insert(name.to_owned(), id.clone());
        id
    }

    fn result(&mut self, name: &str, call_id: Option<&str>, index: usize) -> String {
        let queue = self.unanswered.get_mut(name);
        if let Some(id) = call_id {
            if let Some(queue) = queue {
                queue.retain(|queued| queued != id);
            }
            return id.to_owned();
        }
        queue
            .and_then(VecDeque::pop_front)
            .or_else(|| self.latest.get(name).cloned())
            .unwrap_or_else(|| format!("call_{index}"))
    }
}

#[cfg(test)]
mod tests {
    use crate::xml::parse_thread_xml;
    use serde_json::{json, Value};

    fn values(lines: &str) -> Value {
        let events = parse_thread_xml(&format!("<thread>\n{lines}</thread>")).unwrap();
        Value::Array(events.into_iter().map(|e| e.into_value()).collect())
    }

    fn err(lines: &str) -> String {
        parse_thread_xml(&format!("<thread>\n{lines}</thread>")).unwrap_err().to_string()
    }

    #[test]
    fn every_xml_type_maps_back() {
        let lines = r#"  <event type="human" id="0" iteration="0">q</event>
  <event type="ai" id="1" iteration="1">a</event>
  <event type="system" id="2" iteration="1.5">s</event>
  <event type="tool_input" id="3" name="calc" iteration="1">{"x":1.0,"y":[true]}</event>
  <event type="tool_output" id="4" name="calc" status="success" iteration="1">{"r":2}</event>
  <event type="error" id="5" iteration="1" recoverable="true">boom</event>
  <event type="human_input_requested" id="6" iteration="2">why?</event>
  <event type="human_input_received" id="7" iteration="2">because</event>
  <event type="completion" id="8" iteration="3">done</event>
  <event type="summary" id="9" iteration="4" summarizedIterations="1,2,1e+21">sum</event>
  <event type="approval" id="10" iteration="4">{"zeta":1,"alpha":{"b":null}}</event>
  <event type="note" id="11" iteration="4">free text</event>
"#;
        assert_eq!(
            values(lines),
            json!([
                {"type":"message","role":"user","content":"q","iteration":0},
                {"type":"message","role":"assistant","content":"a","iteration":1},
                {"type":"message","role":"system","content":"s","iteration":1.5},
                {"type":"tool_call","toolName":"calc","toolCallId":"call_3","args":{"x":1.0,"y":[true]},"iteration":1},
                {"type":"tool_result","toolCallId":"call_3","result":"{\"r\":2}","iteration":1},
                {"type":"error","error":"boom","recoverable":true,"iteration":1},
                {"type":"human_input_requested","question":"why?","iteration":2},
                {"type":"human_input_received","response":"because","iteration":2},
                {"type":"completion","result":"done","verified":false,"iteration":3},
                {"type":"summary","summarizedIterations":[1,2,1e21],"summary":"sum","iteration":4},
                {"type":"approval","zeta":1,"alpha":{"b":null},"iteration":4},
                {"type":"note","content":"free text","iteration":4},
            ])
        );
        // Key order is type, fields, iteration.
        let first = serde_json::to_string(&values(lines)[3]).unwrap();
        assert_eq!(
            first,
            r#"{"type":"tool_call","toolName":"calc","toolCallId":"call_3","args":{"x":1.0,"y":[true]},"iteration":1}"#
        );
    }

    #[test]
    fn results_pair_with_the_oldest_unanswered_call_of_the_same_name() {
        let lines = r#"  <event type="tool_input" id="0" name="read" iteration="1">{"p":"a"}</event>
  <event type="tool_input" id="1" name="read" iteration="1">{"p":"b"}</event>
  <event type="tool_input" id="2" name="grep" iteration="1">{}</event>
  <event type="tool_output" id="3" name="read" status="success" iteration="1">A</event>
  <event type="tool_output" id="4" name="grep" status="success" iteration="1">G</event>
  <event type="tool_output" id="5" name="read" status="success" iteration="1">B</event>
  <event type="tool_output" id="6" name="read" status="success" iteration="1">again</event>
  <event type="tool_output" id="7" name="unknown" status="success" iteration="1">lost</event>
"#;
        let ids: Vec<Value> = values(lines).as_array().unwrap().iter().map(|e| e["toolCallId"].clone()).collect();
        assert_eq!(ids, ["call_0", "call_1", "call_2", "call_0", "call_2", "call_1", "call_1", "call_7"]);
    }

    #[test]
    fn call_id_attributes_are_used_when_present() {
        let lines = r#"  <event type="tool_input" id="0" name="read" call_id="toolu_1" iteration="0">{}</event>
  <event type="tool_input" id="1" name="read" call_id="toolu_2" iteration="0">{}</event>
  <event type="tool_output" id="2" name="read" call_id="toolu_2" status="success" iteration="0">B</event>
  <event type="tool_output" id="3" name="read" status="success" iteration="0">A</event>
"#;
        let ids: Vec<Value> = values(lines).as_array().unwrap().iter().map(|e| e["toolCallId"].clone()).collect();
        assert_eq!(ids, ["toolu_1", "toolu_2", "toolu_2", "toolu_1"]);
    }

    #[test]
    fn tool_input_bodies_that_are_not_objects_are_kept_under_input() {
        let lines = r#"  <event type="tool_input" id="0" name="a" iteration="0">[1,2]</event>
  <event type="tool_input" id="1" name="b" iteration="0">ls -la</event>
"#;
        let v = values(lines);
        assert_eq!(v[0]["args"], json!({"input":[1,2]}));
        assert_eq!(v[1]["args"], json!({"input":"ls -la"}));
    }

    #[test]
    fn bad_attributes_are_errors_at_the_event() {
        assert_eq!(
            err("  <event id=\"0\" iteration=\"0\">x</event>\n"),
            "line 2, column 3: <event> has no type attribute"
        );
        assert_eq!(err("  <event type=\"ai\">x</event>\n"), "line 2, column 3: <event> has no iteration attribute");
        assert_eq!(
            err("  <event type=\"ai\" iteration=\"one\">x</event>\n"),
            "line 2, column 3: iteration \"one\" is not a number"
        );
        assert_eq!(
            err("  <event type=\"error\" iteration=\"0\" recoverable=\"yes\">x</event>\n"),
            "line 2, column 3: recoverable \"yes\" is neither \"true\" nor \"false\""
        );
        assert_eq!(
            err("  <event type=\"summary\" iteration=\"0\" summarizedIterations=\"1,,2\">x</event>\n"),
            "line 2, column 3: summarizedIterations item \"\" is not a number"
        );
        assert_eq!(
            err("  <event type=\"tool_input\" iteration=\"0\">{}</event>\n"),
            "line 2, column 3: tool_input has no name attribute"
        );
        assert_eq!(
            err("  <event type=\"ai\" iteration=\"0\">ok</event>\n  <event type=\"tool_call\" iteration=\"0\">{}</event>\n"),
            "line 3, column 3: events[1].toolName: missing"
        );
    }
}
