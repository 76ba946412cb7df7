//! YAML text to a JSON value one parser event at a time.
//!
//! serde_yaml loads all of a document's events before it builds the first value (it replays
//! them for aliases): up to about 80 bytes per byte of text, so a 16 MiB document could take
//! more than a gigabyte. This reader drives the same parser (libyaml, through `unsafe-libyaml`,
//! which serde_yaml is built on) event by event and builds the value as the events come, so it
//! holds the text, the value being built and the anchored values, nothing more.
//!
//! What it reads is what serde_yaml reads: the same grammar, scalars resolved by the same rules
//! (YAML 1.2's core schema as serde_yaml applies it: `~`/`null`, `true`/`True`/`TRUE`, decimal,
//! `0x`/`0o`/`0b` integers, floats with `.inf`/`.nan`; `!!bool`, `!!int`, `!!float`, `!!null`
//! tags; any other `!tag` refused), and errors worded as serde_yaml words them, with the path
//! and position of the node.

use super::budget::Budget;
use serde_json::{Map, Number, Value};
use std::collections::HashMap;
use std::ffi::CStr;
use std::fmt::Write as _;
use std::mem::MaybeUninit;

const TAG_BOOL: &[u8] = b"tag:yaml.org,2002:bool";
const TAG_INT: &[u8] = b"tag:yaml.org,2002:int";
const TAG_FLOAT: &[u8] = b"tag:yaml.org,2002:float";
const TAG_NULL: &[u8] = b"tag:yaml.org,2002:null";

/// Parses one YAML document into a value within `budget`; the error is the message to report.
pub(super) fn parse(text: &str, budget: &Budget) -> Result<Value, String> {
    let mut parser = Parser::new(text);
    let mut builder = Builder { budget, stack: Vec::new(), anchors: HashMap::new(), root: None };
    let mut documents = 0usize;
    loop {
        let event = parser.next()?;
        match event.kind {
            Kind::StreamStart | Kind::DocumentEnd => {}
            Kind::DocumentStart => {
                documents += 1;
                if documents > 1 {
                    return Err("deserializing from YAML containing more than one document is not supported".to_owned());
                }
            }
            Kind::StreamEnd => break,
            _ => builder.event(event)?,
        }
    }
    // An empty stream is null, as serde_yaml reads it.
    match builder.root {
        Some(root) => Ok(root),
        None => {
            budget.count_value::<Fault>().map_err(|e| e.0)?;
            Ok(Value::Null)
        }
    }
}

/// A line and column, 0-based, as libyaml gives them.
#[derive(Clone, Copy, Debug, Default)]
struct Mark {
    line: u64,
    column: u64,
}

impl Mark {
    fn of(mark: &unsafe_libyaml::yaml_mark_t) -> Self {
        Mark { line: mark.line, column: mark.column }
    }

    fn is_start(self) -> bool {
        self.line == 0 && self.column == 0
    }
}

impl std::fmt::Display for Mark {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {} column {}", self.line + 1, self.column + 1)
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Style {
    Plain,
    Other,
}

#[derive(Debug)]
enum Kind {
    StreamStart,
    StreamEnd,
    DocumentStart,
    DocumentEnd,
    Alias(Vec<u8>),
    Scalar { value: String, style: Style },
    SequenceStart,
    SequenceEnd,
    MappingStart,
    MappingEnd,
}

/// One parser event, copied out of libyaml's.
struct Event {
    kind: Kind,
    anchor: Option<Vec<u8>>,
    tag: Option<Vec<u8>>,
    mark: Mark,
}

/// libyaml's parser over `text`, boxed so it never moves (it points into itself).
struct Parser<'a> {
    sys: Box<MaybeUninit<unsafe_libyaml::yaml_parser_t>>,
    _text: &'a str,
}

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Self {
        let mut sys = Box::new(MaybeUninit::<unsafe_libyaml::yaml_parser_t>::uninit());
        // SAFETY: the parser is initialized in place before any other use, and reads `text`,
        // which outlives it ('a); it is deleted once, in Drop.
        unsafe {
            let parser = sys.as_mut_ptr();
            if unsafe_libyaml::yaml_parser_initialize(parser).fail {
                panic!("libyaml could not allocate its parser");
            }
            unsafe_libyaml::yaml_parser_set_encoding(parser, unsafe_libyaml::YAML_UTF8_ENCODING);
            unsafe_libyaml::yaml_parser_set_input_string(parser, text.as_ptr(), text.len() as u64);
        }
        Parser { sys, _text: text }
    }

    fn next(&mut self) -> Result<Event, String> {
        let mut event = MaybeUninit::<unsafe_libyaml::yaml_event_t>::uninit();
        // SAFETY: the parser was initialized in `new`; an event libyaml filled is read, then
        // deleted once; C strings it holds are NUL-terminated and copied before the delete.
        unsafe {
            let parser = self.sys.as_mut_ptr();
            let failed_before = (&*parser).error;
            if failed_before != unsafe_libyaml::YAML_NO_ERROR
                || unsafe_libyaml::yaml_parser_parse(parser, event.as_mut_ptr()).fail
            {
                return Err(parse_error(&*parser));
            }
            let event = event.as_mut_ptr();
            let converted = convert(&*event);
            unsafe_libyaml::yaml_event_delete(event);
            Ok(converted)
        }
    }
}

impl Drop for Parser<'_> {
    fn drop(&mut self) {
        // SAFETY: initialized in `new`, deleted only here.
        unsafe { unsafe_libyaml::yaml_parser_delete(self.sys.as_mut_ptr()) }
    }
}

/// libyaml's error as serde_yaml words it.
unsafe fn parse_error(parser: &unsafe_libyaml::yaml_parser_t) -> String {
    let text = |ptr: *const std::ffi::c_char| -> Option<String> {
        (!ptr.is_null()).then(|| unsafe { CStr::from_ptr(ptr) }.to_string_lossy().into_owned())
    };
    let mut message =
        text(parser.problem.cast()).unwrap_or_else(|| "libyaml parser failed but there is no error".to_owned());
    let problem_mark = Mark::of(&parser.problem_mark);
    if !problem_mark.is_start() {
        let _ = write!(message, " at {problem_mark}");
    } else if parser.problem_offset != 0 {
        let _ = write!(message, " at position {}", parser.problem_offset);
    }
    if let Some(context) = text(parser.context.cast()) {
        let context_mark = Mark::of(&parser.context_mark);
        let _ = write!(message, ", {context}");
        if !context_mark.is_start()
            && (context_mark.line != problem_mark.line || context_mark.column != problem_mark.column)
        {
            let _ = write!(message, " at {context_mark}");
        }
    }
    message
}

unsafe fn bytes(ptr: *const u8) -> Option<Vec<u8>> {
    (!ptr.is_null()).then(|| unsafe { CStr::from_ptr(ptr.cast()) }.to_bytes().to_vec())
}

unsafe fn convert(event: &unsafe_libyaml::yaml_event_t) -> Event {
    let mark = Mark::of(&event.start_mark);
    let (kind, anchor, tag) = unsafe {
        match event.type_ {
            unsafe_libyaml::YAML_STREAM_START_EVENT => (Kind::StreamStart, None, None),
            unsafe_libyaml::YAML_STREAM_END_EVENT => (Kind::StreamEnd, None, None),
            unsafe_libyaml::YAML_DOCUMENT_START_EVENT => (Kind::DocumentStart, None, None),
            unsafe_libyaml::YAML_DOCUMENT_END_EVENT => (Kind::DocumentEnd, None, None),
            unsafe_libyaml::YAML_ALIAS_EVENT => {
                (Kind::Alias(bytes(event.data.alias.anchor).unwrap_or_default()), None, None)
            }
            unsafe_libyaml::YAML_SCALAR_EVENT => {
                let scalar = &event.data.scalar;
                let value = std::slice::from_raw_parts(scalar.value, scalar.length as usize);
                // The input is a &str and libyaml emits UTF-8, so this never replaces anything.
                let value = String::from_utf8_lossy(value).into_owned();
                let style =
                    if scalar.style == unsafe_libyaml::YAML_PLAIN_SCALAR_STYLE { Style::Plain } else { Style::Other };
                (Kind::Scalar { value, style }, bytes(scalar.anchor), bytes(scalar.tag))
            }
            unsafe_libyaml::YAML_SEQUENCE_START_EVENT => {
                let start = &event.data.sequence_start;
                (Kind::SequenceStart, bytes(start.anchor), bytes(start.tag))
            }
            unsafe_libyaml::YAML_SEQUENCE_END_EVENT => (Kind::SequenceEnd, None, None),
            unsafe_libyaml::YAML_MAPPING_START_EVENT => {
                let start = &event.data.mapping_start;
                (Kind::MappingStart, bytes(start.anchor), bytes(start.tag))
            }
            _ => (Kind::MappingEnd, None, None),
        }
    };
    Event { kind, anchor, tag, mark }
}

/// A value anchored for aliases, with what it counted when built (an alias counts it again).
struct Anchored {
    value: Value,
    values: usize,
    string_bytes: usize,
}

/// A collection being built.
enum Frame {
    Sequence { items: Vec<Value>, start: Counts, anchor: Option<Vec<u8>>, mark: Mark },
    Mapping { map: Map<String, Value>, key: Option<String>, start: Counts, anchor: Option<Vec<u8>>, mark: Mark },
}

/// The budget's counters when a collection began (an anchored one's size is the difference).
#[derive(Clone, Copy)]
struct Counts {
    values: usize,
    string_bytes: usize,
}

struct Builder<'b> {
    budget: &'b Budget,
    stack: Vec<Frame>,
    anchors: HashMap<Vec<u8>, Anchored>,
    root: Option<Value>,
}

impl Builder<'_> {
    fn counts(&self) -> Counts {
        Counts { values: self.budget.values(), string_bytes: self.budget.string_bytes() }
    }

    fn event(&mut self, event: Event) -> Result<(), String> {
        let Event { kind, anchor, tag, mark } = event;
        if let Some(tag) = tag.as_deref().filter(|tag| tag.starts_with(b"!")) {
            let name = if tag.len() > 1 { &tag[1..] } else { tag };
            return Err(self.fault(format!("unsupported YAML tag !{}", String::from_utf8_lossy(name)), mark));
        }
        match kind {
            Kind::Scalar { value, style } => {
                let start = self.counts();
                let value = self.scalar(value, style, tag.as_deref(), mark)?;
                self.done(value, anchor, start, mark)
            }
            Kind::Alias(name) => {
                let Some(anchored) = self.anchors.get(&name) else {
                    return Err(format!("unknown anchor at {mark}"));
                };
                // Counted before it is copied: a use past the budget copies nothing. One that
                // does not fit is counted value by value, as a replay of its events would be, to
                // stop where that would.
                if self.budget.fits(anchored.values, anchored.string_bytes) {
                    self.budget.add(anchored.values, anchored.string_bytes);
                } else {
                    replay_count(self.budget, &anchored.value).map_err(|e| e.0)?;
                }
                let value = anchored.value.clone();
                let start = self.counts();
                self.done(value, None, start, mark)
            }
            Kind::SequenceStart | Kind::MappingStart => {
                let start = self.counts();
                self.budget.count_value::<Fault>().map_err(|e| e.0)?;
                let depth = self.stack.len() + 1;
                self.budget.check_depth::<Fault>(depth).map_err(|e| e.0)?;
                self.stack.push(match kind {
                    Kind::SequenceStart => Frame::Sequence { items: Vec::new(), start, anchor, mark },
                    _ => Frame::Mapping { map: Map::new(), key: None, start, anchor, mark },
                });
                Ok(())
            }
            Kind::SequenceEnd | Kind::MappingEnd => {
                let (value, start, anchor, mark) = match self.stack.pop() {
                    Some(Frame::Sequence { items, start, anchor, mark }) => (Value::Array(items), start, anchor, mark),
                    Some(Frame::Mapping { map, start, anchor, mark, .. }) => (Value::Object(map), start, anchor, mark),
                    None => return Err("unexpected end of a collection".to_owned()),
                };
                self.done(value, anchor, start, mark)
            }
            Kind::StreamStart | Kind::StreamEnd | Kind::DocumentStart | Kind::DocumentEnd => Ok(()),
        }
    }

    /// Places a finished node (counted as it was built) in its collection, or as the root.
    fn done(&mut self, value: Value, anchor: Option<Vec<u8>>, start: Counts, mark: Mark) -> Result<(), String> {
        if let Some(anchor) = anchor {
            let now = self.counts();
            let anchored = Anchored {
                value: value.clone(),
                values: now.values - start.values,
                string_bytes: now.string_bytes - start.string_bytes,
            };
            self.anchors.insert(anchor, anchored);
        }
        let mapping_path = self.path_of(self.stack.len().saturating_sub(1));
        let key_fault = |what: &str| {
            let message = format!("invalid type: {what}, expected a string, number or boolean key");
            with_position(&mapping_path, message, mark)
        };
        let key_error = match (&value, self.stack.last()) {
            (Value::Null, Some(Frame::Mapping { key: None, .. })) => Some(key_fault("unit value")),
            (Value::Array(_), Some(Frame::Mapping { key: None, .. })) => Some(key_fault("sequence")),
            (Value::Object(_), Some(Frame::Mapping { key: None, .. })) => Some(key_fault("map")),
            _ => None,
        };
        if let Some(error) = key_error {
            return Err(error);
        }
        match self.stack.last_mut() {
            None => {
                self.root = Some(value);
                Ok(())
            }
            Some(Frame::Sequence { items, .. }) => {
                items.push(value);
                Ok(())
            }
            Some(Frame::Mapping { key: key @ None, .. }) => {
                *key = Some(match value {
                    Value::String(text) => text,
                    other => key_text(other),
                });
                Ok(())
            }
            Some(Frame::Mapping { map, key: key @ Some(_), mark, .. }) => {
                let key = key.take().unwrap_or_default();
                if map.contains_key(&key) {
                    // The mapping's own path and position, as serde_yaml reports it.
                    return Err(with_position(&mapping_path, format!("duplicate key {key:?}"), *mark));
                }
                map.insert(key, value);
                Ok(())
            }
        }
    }

    /// A scalar resolved as serde_yaml resolves it for a JSON value.
    fn scalar(&mut self, text: String, style: Style, tag: Option<&[u8]>, mark: Mark) -> Result<Value, String> {
        let invalid = |what: &str| format!("invalid value: string {text:?}, expected {what}");
        let value = match tag {
            Some(TAG_BOOL) => parse_bool(&text).map(Value::Bool).ok_or_else(|| invalid("a boolean")),
            Some(TAG_INT) => parse_int(&text).ok_or_else(|| invalid("an integer")).and_then(|n| n),
            Some(TAG_FLOAT) => match parse_f64(&text) {
                Some(v) => {
                    Number::from_f64(v).map(Value::Number).ok_or_else(|| format!("the number {v} has no JSON form"))
                }
                None => Err(invalid("a float")),
            },
            Some(TAG_NULL) => parse_null(&text).then_some(Value::Null).ok_or_else(|| invalid("null")),
            _ if style == Style::Plain => return self.untagged(text, mark),
            _ => {
                self.budget.count_value::<Fault>().map_err(|e| e.0)?;
                return Ok(Value::String(self.budget.count_string::<Fault>(&text).map_err(|e| e.0)?));
            }
        };
        let value = value.map_err(|message| self.fault(message, mark))?;
        self.budget.count_value::<Fault>().map_err(|e| e.0)?;
        Ok(value)
    }

    fn untagged(&mut self, text: String, mark: Mark) -> Result<Value, String> {
        self.budget.count_value::<Fault>().map_err(|e| e.0)?;
        if text.is_empty() || parse_null(&text) {
            return Ok(Value::Null);
        }
        if let Some(boolean) = parse_bool(&text) {
            return Ok(Value::Bool(boolean));
        }
        if let Some(int) = parse_int(&text) {
            return int.map_err(|message| self.fault(message, mark));
        }
        if !digits_but_not_number(&text) {
            if let Some(float) = parse_f64(&text) {
                return Number::from_f64(float)
                    .map(Value::Number)
                    .ok_or_else(|| self.fault(format!("the number {float} has no JSON form"), mark));
            }
        }
        Ok(Value::String(self.budget.count_string::<Fault>(&text).map_err(|e| e.0)?))
    }

    /// The path of the node being built, as serde_yaml writes it (`blocks[0].payload`).
    fn path(&self) -> String {
        self.path_of(self.stack.len())
    }

    /// The path within the first `frames` collections.
    fn path_of(&self, frames: usize) -> String {
        let mut path = String::new();
        for frame in &self.stack[..frames] {
            match frame {
                Frame::Sequence { items, .. } => {
                    // serde_yaml writes the root as `.` before an index (`.[1]`), as nothing
                    // before a key.
                    if path.is_empty() {
                        path.push('.');
                    }
                    let _ = write!(path, "[{}]", items.len());
                }
                Frame::Mapping { key: Some(key), .. } => {
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(key);
                }
                Frame::Mapping { key: None, .. } => {
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push('?');
                }
            }
        }
        path
    }

    fn fault(&self, message: String, mark: Mark) -> String {
        with_position(&self.path(), message, mark)
    }
}

/// Counts a value as building it from its events counts it, stopping at the first count past
/// a cap.
fn replay_count(budget: &Budget, value: &Value) -> Result<(), Fault> {
    budget.count_value::<Fault>()?;
    match value {
        Value::String(text) => budget.count_string_len(text.len()),
        Value::Array(items) => items.iter().try_for_each(|item| replay_count(budget, item)),
        Value::Object(map) => map.iter().try_for_each(|(key, value)| {
            budget.count_value::<Fault>()?;
            budget.count_string_len::<Fault>(key.len())?;
            replay_count(budget, value)
        }),
        _ => Ok(()),
    }
}

/// `path: message at line L column C`, leaving out the root path and the start position.
fn with_position(path: &str, message: String, mark: Mark) -> String {
    let mut text = if path.is_empty() { message } else { format!("{path}: {message}") };
    if !mark.is_start() {
        let _ = write!(text, " at {mark}");
    }
    text
}

/// A scalar key's text: numbers and booleans as JSON writes them.
fn key_text(value: Value) -> String {
    match value {
        Value::String(text) => text,
        other => other.to_string(),
    }
}

/// An error raised by the budget, carrying its message.
struct Fault(String);

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::fmt::Debug for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Fault {}

impl serde::de::Error for Fault {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        Fault(msg.to_string())
    }
}

fn parse_null(text: &str) -> bool {
    matches!(text, "null" | "Null" | "NULL" | "~")
}

fn parse_bool(text: &str) -> Option<bool> {
    match text {
        "true" | "True" | "TRUE" => Some(true),
        "false" | "False" | "FALSE" => Some(false),
        _ => None,
    }
}

/// An integer as serde_yaml reads one: `None` when the text is no integer; an error when it is
/// one no JSON number holds exactly (beyond 64 bits).
fn parse_int(text: &str) -> Option<Result<Value, String>> {
    if let Some(int) = parse_unsigned(text, u64::from_str_radix) {
        return Some(Ok(Value::Number(int.into())));
    }
    if let Some(int) = parse_negative(text, i64::from_str_radix) {
        return Some(Ok(Value::Number(int.into())));
    }
    if let Some(int) = parse_unsigned(text, u128::from_str_radix) {
        return Some(Err(format!("invalid type: integer `{int}` as u128, expected a JSON-compatible value")));
    }
    if let Some(int) = parse_negative(text, i128::from_str_radix) {
        return Some(Err(format!("invalid type: integer `{int}` as i128, expected a JSON-compatible value")));
    }
    None
}

fn parse_unsigned<T>(text: &str, from_str_radix: fn(&str, u32) -> Result<T, std::num::ParseIntError>) -> Option<T> {
    let unpositive = text.strip_prefix('+').unwrap_or(text);
    for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] {
        if let Some(rest) = unpositive.strip_prefix(prefix) {
            if rest.starts_with(['+', '-']) {
                return None;
            }
            if let Ok(int) = from_str_radix(rest, radix) {
                return Some(int);
            }
        }
    }
    if unpositive.starts_with(['+', '-']) || digits_but_not_number(text) {
        return None;
    }
    from_str_radix(unpositive, 10).ok()
}

fn parse_negative<T>(text: &str, from_str_radix: fn(&str, u32) -> Result<T, std::num::ParseIntError>) -> Option<T> {
    for (prefix, radix) in [("-0x", 16), ("-0o", 8), ("-0b", 2)] {
        if let Some(rest) = text.strip_prefix(prefix) {
            if let Ok(int) = from_str_radix(&format!("-{rest}"), radix) {
                return Some(int);
            }
        }
    }
    if digits_but_not_number(text) {
        return None;
    }
    from_str_radix(text, 10).ok()
}

fn parse_f64(text: &str) -> Option<f64> {
    let unpositive = match text.strip_prefix('+') {
        Some(rest) if rest.starts_with(['+', '-']) => return None,
        Some(rest) => rest,
        None => text,
    };
    if let ".inf" | ".Inf" | ".INF" = unpositive {
        return Some(f64::INFINITY);
    }
    if let "-.inf" | "-.Inf" | "-.INF" = text {
        return Some(f64::NEG_INFINITY);
    }
    if let ".nan" | ".NaN" | ".NAN" = text {
        return Some(f64::NAN);
    }
    unpositive.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// Leading zeros followed by digits is a string in YAML 1.2.
fn digits_but_not_number(text: &str) -> bool {
    let text = text.strip_prefix(['-', '+']).unwrap_or(text);
    text.len() > 1 && text.starts_with('0') && text[1..].bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::super::budget::Limits;
    use super::super::parse::{parse_value, serde_yaml_value, Format};

    /// The event-by-event reader reads what serde_yaml read, values and errors alike.
    #[test]
    fn reads_what_serde_yaml_reads() {
        let cases = [
            "",
            "---\n",
            "a: 1\n",
            "a: [1, -2, +3, 0x1f, -0x1f, 0o17, 0b101, 007, -007, 1.5, -1e3, .inf, -.Inf, 1e400, 18446744073709551615]\n",
            "a: [~, null, Null, NULL, true, True, TRUE, false, yes, no, on, '', \"x\", 'y']\n",
            "a: [!!str 1, !!int '2', !!float '3', !!bool 'true', !!null '', !!str ~, !!int x]\n",
            "a: !thing x\n",
            "a: !!binary aGk=\n",
            "a:\n  b: !<tag:example.com:x> [1]\n",
            "? [a]\n: 1\n",
            "{1: a, true: b, 1.5: c, 0x10: d}\n",
            "~: x\n",
            "a: &x {b: [1, 2]}\nc: *x\nd: *x\n",
            "a: *missing\n",
            "a: 1\na: 2\n",
            "b:\n  c: 1\n  c: 2\n",
            "- a: 1\n- {a: 1, a: 2}\n",
            "a: |\n  text\n   more\nb: >-\n  folded\n  lines\n",
            "a: [1, 2\nb: 3\n",
            "a: 'unterminated\n",
            "--- 1\n--- 2\n",
            "a: 1\n\t b: 2\n",
            "key: value: other\n",
            "list:\n- 1\n -2\n",
            "a: 340282366920938463463374607431768211456\n",
            "a: -9223372036854775809\n",
            "a: .nan\n",
            "blocks:\n- kind: user\n  payload: {text: \"é \\u00e9 \\U0001F600\"}\n",
        ];
        for text in cases {
            let limits = Limits::default();
            let streamed = parse_value(text, Format::Yaml, &limits).map_err(|e| e.to_string());
            let loaded = serde_yaml_value(text, &limits).map_err(|e| e.to_string());
            assert_eq!(streamed, loaded, "{text:?}");
        }
    }
}
