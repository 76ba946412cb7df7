//! Parsing YAML or JSON text into a JSON value within explicit limits.
//!
//! Turn files come from outside, so a few hundred bytes must not be able to cost gigabytes or
//! minutes. JSON text is read into a `serde_json::Value` by a visitor that counts as it builds;
//! YAML by the event-by-event reader of [`super::yaml_stream`], which counts the same way and
//! counts each use of a YAML alias again, so an alias bomb ("billion laughs") hits the
//! expansion budget after a few thousand values, long before it could exhaust memory. YAML text is first scanned for flow nesting (`[[[[...`), which libyaml
//! handles in quadratic time. Keys keep the document's order; a key repeated in one mapping
//! is an error.

use super::budget::{Budget, Limits};
use super::error::TurnError;
use super::yaml_scan::max_flow_depth;
use super::yaml_stream;
use serde::de::{self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use std::fmt;

/// Which text format a document is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Yaml,
    Json,
}

/// Parses `text` into a JSON value within `limits`.
pub fn parse_value(text: &str, format: Format, limits: &Limits) -> Result<Value, TurnError> {
    if format == Format::Yaml {
        if text.len() > limits.max_yaml_input_bytes {
            return Err(TurnError::Limit {
                limit: "max_yaml_input_bytes",
                max: limits.max_yaml_input_bytes,
                value: text.len(),
            });
        }
        let depth = max_flow_depth(text, limits.max_depth);
        if depth > limits.max_depth {
            return Err(TurnError::Limit { limit: "max_depth", max: limits.max_depth, value: depth });
        }
    }
    let budget = Budget::new(limits, text.len());
    let seed = ValueSeed { budget: &budget, depth: 0 };
    let result = match format {
        Format::Yaml => yaml_stream::parse(text, &budget),
        Format::Json => {
            let mut de = serde_json::Deserializer::from_str(text);
            seed.deserialize(&mut de).and_then(|v| de.end().map(|()| v)).map_err(|e| e.to_string())
        }
    };
    // A limit hit surfaces as a parser error; report the limit itself.
    let value = result.map_err(|message| match budget.hit() {
        Some((limit, max, value)) => TurnError::Limit { limit, max, value },
        None => TurnError::Syntax { message },
    })?;
    // What the values and strings caps let through is bounded; its size is known once built.
    let held = compact_json_bytes(&value);
    if held > limits.max_input_bytes {
        return Err(TurnError::Limit { limit: "max_input_bytes", max: limits.max_input_bytes, value: held });
    }
    Ok(value)
}

/// What reading a document's value counts against the [`Limits`]: its size as compact JSON,
/// its values (every key, scalar, mapping and sequence), the bytes of its keys and strings, and
/// its nesting (the root collection is level 1). For a value about to be written, it tells
/// whether the document will be read back.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Measure {
    pub held_bytes: usize,
    pub values: usize,
    pub string_bytes: usize,
    pub depth: usize,
}

impl Measure {
    pub fn of(value: &Value) -> Self {
        let mut measure = Measure { held_bytes: compact_json_bytes(value), ..Measure::default() };
        measure.count(value, 0);
        measure
    }

    fn count(&mut self, value: &Value, depth: usize) {
        self.values += 1;
        match value {
            Value::String(text) => self.string_bytes += text.len(),
            Value::Array(items) => {
                self.depth = self.depth.max(depth + 1);
                items.iter().for_each(|item| self.count(item, depth + 1));
            }
            Value::Object(map) => {
                self.depth = self.depth.max(depth + 1);
                for (key, item) in map {
                    self.values += 1;
                    self.string_bytes += key.len();
                    self.count(item, depth + 1);
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }

    /// The first of `limits` reading this value would exceed (the text limits aside).
    pub fn check(&self, limits: &Limits) -> Result<(), TurnError> {
        let checks = [
            ("max_input_bytes", self.held_bytes, limits.max_input_bytes),
            ("max_depth", self.depth, limits.max_depth),
            ("max_values", self.values, limits.max_values),
            ("max_string_bytes", self.string_bytes, limits.max_string_bytes),
        ];
        match checks.into_iter().find(|&(_, value, max)| value > max) {
            Some((limit, value, max)) => Err(TurnError::Limit { limit, max, value }),
            None => Ok(()),
        }
    }
}

/// The size of `value` as compact JSON, without writing it out.
fn compact_json_bytes(value: &Value) -> usize {
    struct Counter(usize);
    impl std::io::Write for Counter {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0);
    serde_json::to_writer(&mut counter, value).expect("a JSON value always serializes");
    counter.0
}

#[derive(Clone, Copy)]
struct ValueSeed<'b> {
    budget: &'b Budget,
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for ValueSeed<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl ValueSeed<'_> {
    fn nested<E: de::Error>(self) -> Result<Self, E> {
        let depth = self.depth + 1;
        let max = self.budget.max_depth();
        if depth > max {
            return Err(self.budget.exceeded("max_depth", max, depth));
        }
        Ok(ValueSeed { budget: self.budget, depth })
    }

    fn float<E: de::Error>(self, v: f64) -> Result<Value, E> {
        self.budget.count_value()?;
        Number::from_f64(v).map(Value::Number).ok_or_else(|| E::custom(format!("the number {v} has no JSON form")))
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-compatible value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        self.budget.count_value()?;
        Ok(Value::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        self.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        self.budget.count_value()?;
        Ok(Value::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        self.budget.count_value()?;
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        self.budget.count_value()?;
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        self.float(v)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        self.budget.count_value()?;
        Ok(Value::String(self.budget.count_string(v)?))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        self.budget.count_value()?;
        let inner = self.nested()?;
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(inner)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        self.budget.count_value()?;
        let inner = self.nested()?;
        let mut out = Map::new();
        while let Some(key) = map.next_key_seed(KeySeed { budget: self.budget })? {
            let value = map.next_value_seed(inner)?;
            if out.contains_key(&key) {
                return Err(de::Error::custom(format!("duplicate key {key:?}")));
            }
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Value, A::Error> {
        // serde_yaml reports a value with a custom tag (`!thing x`) as an enum.
        let (tag, _) = data.variant::<String>()?;
        Err(de::Error::custom(format!("unsupported YAML tag !{tag}")))
    }
}

/// Reads a mapping key as a string; YAML scalar keys (`200: ok`, `true: x`) become their text.
struct KeySeed<'b> {
    budget: &'b Budget,
}

impl<'de> DeserializeSeed<'de> for KeySeed<'_> {
    type Value = String;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<String, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for KeySeed<'_> {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string, number or boolean key")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<String, E> {
        self.budget.count_value()?;
        self.budget.count_string(v)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<String, E> {
        self.visit_str(if v { "true" } else { "false" })
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<String, E> {
        self.visit_str(&v.to_string())
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<String, E> {
        self.visit_str(&v.to_string())
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<String, E> {
        match Number::from_f64(v) {
            Some(n) => self.visit_str(&n.to_string()),
            None => Err(E::custom(format!("the key {v} has no JSON form"))),
        }
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<String, A::Error> {
        let (tag, _) = data.variant::<String>()?;
        Err(de::Error::custom(format!("unsupported YAML tag !{tag}")))
    }
}

/// The value serde_yaml's own loader reads, within the same budget: what the event-by-event
/// reader is tested against.
#[cfg(test)]
pub(super) fn serde_yaml_value(text: &str, limits: &Limits) -> Result<Value, TurnError> {
    let budget = Budget::new(limits, text.len());
    let seed = ValueSeed { budget: &budget, depth: 0 };
    seed.deserialize(serde_yaml::Deserializer::from_str(text)).map_err(|e| match budget.hit() {
        Some((limit, max, value)) => TurnError::Limit { limit, max, value },
        None => TurnError::Syntax { message: e.to_string() },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A flow list of ones, `bytes` long: the text libyaml needs the most memory for, per byte.
    fn flow_list(bytes: usize) -> String {
        let mut text = "[1".to_owned();
        while text.len() + 3 <= bytes {
            text.push_str(",1");
        }
        while text.len() + 1 < bytes {
            text.push(' ');
        }
        text.push(']');
        text
    }

    #[test]
    fn yaml_over_its_size_limit_is_refused_before_it_is_parsed() {
        // 15 MB: under the general limit, over a server's lower YAML one.
        let limits = Limits { max_yaml_input_bytes: 4 << 20, ..Limits::default() };
        let text = flow_list(15_000_000);
        let error = parse_value(&text, Format::Yaml, &limits).unwrap_err();
        assert_eq!(error, TurnError::Limit { limit: "max_yaml_input_bytes", max: 4 << 20, value: text.len() });
        // Broken syntax and nesting past the depth limit after the list change nothing: the
        // size is looked at first.
        let poisoned = format!("{text}{}\t: : ]", "[".repeat(1000));
        let error = parse_value(&poisoned, Format::Yaml, &limits).unwrap_err();
        assert_eq!(error, TurnError::Limit { limit: "max_yaml_input_bytes", max: 4 << 20, value: poisoned.len() });
    }

    #[test]
    fn yaml_text_may_be_as_long_as_a_message_by_default() {
        let limits = Limits::default();
        assert_eq!(limits.max_yaml_input_bytes, 64 << 20);
        // 15 MB of YAML is read (and stopped by what it builds, not by its size).
        let limits = Limits { max_values: 1000, ..limits };
        let error = parse_value(&flow_list(15_000_000), Format::Yaml, &limits).unwrap_err();
        assert!(matches!(error, TurnError::Limit { limit: "max_values", .. }), "{error}");
    }

    #[test]
    fn yaml_up_to_its_size_limit_is_parsed_and_json_has_only_the_general_limit() {
        let limits = Limits { max_yaml_input_bytes: 64, ..Limits::default() };
        let at_limit = flow_list(64);
        assert_eq!(at_limit.len(), 64);
        let value = parse_value(&at_limit, Format::Yaml, &limits).unwrap();
        assert_eq!(value.as_array().map(Vec::len), Some(31));
        let over = format!("{at_limit} ");
        let error = parse_value(&over, Format::Yaml, &limits).unwrap_err();
        assert_eq!(error, TurnError::Limit { limit: "max_yaml_input_bytes", max: 64, value: 65 });
        assert!(parse_value(&over, Format::Json, &limits).is_ok());
    }

    #[test]
    fn what_a_document_holds_is_measured_not_its_layout() {
        let limits = Limits { max_input_bytes: 32, ..Limits::default() };
        // [1,1,…] of 40 bytes holds 39 as compact JSON (the space before `]` is layout).
        let error = parse_value(&flow_list(40), Format::Yaml, &limits).unwrap_err();
        assert_eq!(error, TurnError::Limit { limit: "max_input_bytes", max: 32, value: 39 });
        let error = parse_value(&flow_list(40), Format::Json, &limits).unwrap_err();
        assert_eq!(error, TurnError::Limit { limit: "max_input_bytes", max: 32, value: 39 });
        // Indentation and line breaks are not counted: 1 KiB of text holding 22 bytes is read.
        let spaced = format!("{{\n{}\"id\": \"t\",\n  \"blocks\": [ ]\n}}\n", " ".repeat(1000));
        assert!(parse_value(&spaced, Format::Json, &limits).is_ok());
        let yaml = format!("{}id: t\nblocks: []\n", "# layout\n".repeat(100));
        assert!(parse_value(&yaml, Format::Yaml, &limits).is_ok());
    }

    /// [`Measure`] counts what reading counts: a value's document is read at each of its
    /// measures and refused one below, in YAML as in JSON.
    #[test]
    fn a_measure_is_what_reading_counts() {
        let text = r#"{"id": "t", "blocks": [{"kind": "tool_call", "payload": {"args": {"q": ["a", 1, 2.5, null, true, {"é": "ü\n"}]}}}], "metadata": {}}"#;
        let value = parse_value(text, Format::Json, &Limits::default()).unwrap();
        let measure = Measure::of(&value);
        assert_eq!((measure.held_bytes, measure.depth), (serde_json::to_string(&value).unwrap().len(), 7));
        let yaml = crate::turns::to_yaml_document(
            &crate::turns::document_from_value(value.clone()).unwrap().0,
            &crate::turns::Options::default(),
        )
        .unwrap();
        for (text, format) in [(text, Format::Json), (yaml.as_str(), Format::Yaml)] {
            let value = parse_value(text, format, &Limits::default()).unwrap();
            let measure = Measure::of(&value);
            let at = |limits: Limits| parse_value(text, format, &limits);
            for (limit, exact, below) in [
                (
                    "max_input_bytes",
                    Limits { max_input_bytes: measure.held_bytes, ..Limits::default() },
                    Limits { max_input_bytes: measure.held_bytes - 1, ..Limits::default() },
                ),
                (
                    "max_depth",
                    Limits { max_depth: measure.depth, ..Limits::default() },
                    Limits { max_depth: measure.depth - 1, ..Limits::default() },
                ),
                (
                    "max_values",
                    Limits { max_values: measure.values, ..Limits::default() },
                    Limits { max_values: measure.values - 1, ..Limits::default() },
                ),
                (
                    "max_string_bytes",
                    Limits { max_string_bytes: measure.string_bytes, ..Limits::default() },
                    Limits { max_string_bytes: measure.string_bytes - 1, ..Limits::default() },
                ),
            ] {
                assert!(at(exact).is_ok(), "{format:?} {limit}");
                assert!(
                    matches!(at(below), Err(TurnError::Limit { limit: l, .. }) if l == limit),
                    "{format:?} {limit}"
                );
                assert!(measure.check(&exact).is_ok() && measure.check(&below).is_err(), "{format:?} {limit}");
            }
        }
    }
}
