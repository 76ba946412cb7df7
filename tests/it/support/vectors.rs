//! The protocol vectors in `protocol/vectors/`: loading them strictly and matching responses.
//!
//! A vector file is `{"name", "description", "args"?, "exitCode"?, "exchanges": [{"request" |
//! "requestText", "response"}]}`; `protocol/vectors/README.md` is the reference.

use serde::Deserialize;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// Matches any value in an expected response (timestamps, generated ids, the server version).
pub const ANY: &str = "<any>";

pub fn vectors_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("protocol").join("vectors")
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawVector {
    name: String,
    description: String,
    #[serde(default)]
    args: Vec<String>,
    exit_code: Option<i32>,
    exchanges: Vec<RawExchange>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawExchange {
    request: Option<Value>,
    request_text: Option<String>,
    /// Required; `null` means no response is expected.
    #[serde(default, deserialize_with = "present")]
    response: Option<Value>,
}

/// Reads a present `null` as `Some(Value::Null)` (plain `Option` would read it as absent).
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// One vector file.
#[derive(Debug)]
pub struct Vector {
    /// The file name, e.g. `thread-open.json`.
    pub file: String,
    pub description: String,
    /// Extra `serve` arguments.
    pub args: Vec<String>,
    /// The process's exit status once input ends after the last exchange, when checked.
    pub exit_code: Option<i32>,
    pub exchanges: Vec<Exchange>,
}

#[derive(Debug)]
pub struct Exchange {
    pub send: Send,
    /// The expected response; `Value::Null` when none is expected.
    pub response: Value,
}

/// What an exchange sends.
#[derive(Debug)]
pub enum Send {
    /// A JSON-RPC message (request, notification, batch, or any JSON value).
    Json(Value),
    /// Bytes sent verbatim as one message body (malformed JSON, exact byte counts).
    Text(String),
}

impl Exchange {
    /// The sent message as JSON, when it is JSON.
    pub fn request(&self) -> Option<Value> {
        match &self.send {
            Send::Json(value) => Some(value.clone()),
            Send::Text(text) => serde_json::from_str(text).ok(),
        }
    }

    /// A short description for failure messages: the method and id, or the first bytes.
    pub fn label(&self) -> String {
        match &self.send {
            Send::Json(Value::Object(m)) => {
                let method = m.get("method").map_or("?".into(), Value::to_string);
                match m.get("id") {
                    Some(id) => format!("{method} id {id}"),
                    None => format!("{method} notification"),
                }
            }
            Send::Json(Value::Array(items)) => format!("batch of {}", items.len()),
            Send::Json(other) => other.to_string(),
            Send::Text(text) => format!("text {:?}", text.chars().take(40).collect::<String>()),
        }
    }
}

impl Vector {
    /// Reads and checks one file; every format violation is an error naming the file.
    pub fn load(path: &Path) -> Result<Vector, String> {
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(path).map_err(|e| format!("{file}: {e}"))?;
        let raw: RawVector = serde_json::from_str(&text).map_err(|e| format!("{file}: not a vector file: {e}"))?;
        if Some(raw.name.as_str()) != file.strip_suffix(".json") {
            return Err(format!("{file}: name {:?} must be the file name without .json", raw.name));
        }
        if raw.exchanges.is_empty() {
            return Err(format!("{file}: no exchanges"));
        }
        let mut exchanges = Vec::new();
        for (i, ex) in raw.exchanges.into_iter().enumerate() {
            let send = match (ex.request, ex.request_text) {
                (Some(value), None) => Send::Json(value),
                (None, Some(text)) if !text.contains('\n') => Send::Text(text),
                (None, Some(_)) => return Err(format!("{file}: exchange {i}: requestText must be one line")),
                _ => return Err(format!("{file}: exchange {i}: exactly one of request and requestText")),
            };
            let Some(response) = ex.response else {
                return Err(format!("{file}: exchange {i}: response is required (null when none is expected)"));
            };
            exchanges.push(Exchange { send, response });
        }
        Ok(Vector { file, description: raw.description, args: raw.args, exit_code: raw.exit_code, exchanges })
    }
}

/// Every vector file, sorted by name; panics with every problem found.
pub fn load_all() -> Vec<Vector> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(vectors_dir())
        .expect("protocol/vectors exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    let (vectors, errors): (Vec<_>, Vec<_>) = paths.iter().map(|p| Vector::load(p)).partition(Result::is_ok);
    let errors: Vec<String> = errors.into_iter().map(Result::unwrap_err).collect();
    assert!(errors.is_empty(), "malformed vector files:\n{}", errors.join("\n"));
    vectors.into_iter().map(Result::unwrap).collect()
}

/// The differences between an expected and an actual value, as `pointer: what` lines.
///
/// Objects must have the same keys, arrays the same length; numbers compare by value; `"<any>"`
/// matches any value that is present. Key order counts inside `result.events` (events are
/// returned as stored, key order included) and nowhere else.
pub fn mismatches(expected: &Value, actual: &Value) -> Vec<String> {
    let mut out = Vec::new();
    compare(expected, actual, &mut String::new(), false, &mut out);
    out
}

fn compare(expected: &Value, actual: &Value, pointer: &mut String, ordered: bool, out: &mut Vec<String>) {
    let here = |p: &str| if p.is_empty() { "/".to_string() } else { p.to_string() };
    match (expected, actual) {
        (Value::String(s), _) if s == ANY => {}
        (Value::Object(e), Value::Object(a)) => {
            for (key, ev) in e {
                let len = pointer.len();
                pointer.push('/');
                pointer.push_str(&key.replace('~', "~0").replace('/', "~1"));
                match a.get(key) {
                    Some(av) => {
                        let events = key == "events" && pointer.ends_with("/result/events");
                        compare(ev, av, pointer, ordered || events, out);
                    }
                    None => out.push(format!("{}: missing", here(pointer))),
                }
                pointer.truncate(len);
            }
            for key in a.keys().filter(|k| !e.contains_key(*k)) {
                out.push(format!("{}/{key}: unexpected, got {}", pointer, a[key]));
            }
            if ordered && e.len() == a.len() && e.keys().zip(a.keys()).any(|(x, y)| x != y) {
                out.push(format!("{}: key order {:?}, expected {:?}", here(pointer), keys(a), keys(e)));
            }
        }
        (Value::Array(e), Value::Array(a)) => {
            if e.len() != a.len() {
                out.push(format!("{}: expected {} items, got {}: {}", here(pointer), e.len(), a.len(), actual));
                return;
            }
            for (i, (ev, av)) in e.iter().zip(a).enumerate() {
                let len = pointer.len();
                pointer.push_str(&format!("/{i}"));
                compare(ev, av, pointer, ordered, out);
                pointer.truncate(len);
            }
        }
        (Value::Number(e), Value::Number(a)) => {
            let same = match (e.as_u64(), a.as_u64(), e.as_i64(), a.as_i64()) {
                (Some(x), Some(y), _, _) => x == y,
                (_, _, Some(x), Some(y)) => x == y,
                _ => e.as_f64() == a.as_f64(),
            };
            if !same {
                out.push(format!("{}: expected {expected}, got {actual}", here(pointer)));
            }
        }
        _ if expected == actual => {}
        _ => out.push(format!("{}: expected {expected}, got {actual}", here(pointer))),
    }
}

fn keys(m: &Map<String, Value>) -> Vec<&str> {
    m.keys().map(String::as_str).collect()
}

/// JSON pointers of every `"<any>"` in a value.
pub fn any_pointers(value: &Value) -> Vec<String> {
    fn walk(v: &Value, pointer: String, out: &mut Vec<String>) {
        match v {
            Value::String(s) if s == ANY => out.push(pointer),
            Value::Object(m) => m.iter().for_each(|(k, v)| walk(v, format!("{pointer}/{k}"), out)),
            Value::Array(items) => items.iter().enumerate().for_each(|(i, v)| walk(v, format!("{pointer}/{i}"), out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(value, String::new(), &mut out);
    out
}
