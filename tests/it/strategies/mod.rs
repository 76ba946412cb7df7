//! proptest strategies for JSON values, shared by the property tests.

use proptest::prelude::*;
use serde_json::{Map, Number, Value};

/// The event types the event model knows; any other type is kept as an unknown type.
pub const KNOWN_EVENT_TYPES: &[&str] = &[
    "message",
    "tool_call",
    "tool_result",
    "error",
    "human_input_requested",
    "human_input_received",
    "completion",
    "summary",
];

/// Numbers that stress `JSON.stringify` formatting: integers of every width (beyond 2^53
/// included), arbitrary finite doubles, and the values with special spellings.
pub fn number() -> impl Strategy<Value = Number> {
    prop_oneof![
        any::<u32>().prop_map(Number::from),
        any::<i64>().prop_map(Number::from),
        any::<u64>().prop_map(Number::from),
        (0u64..100).prop_map(Number::from),
        any::<f64>().prop_filter_map("finite", Number::from_f64),
        prop::sample::select(
            &[0.0, -0.0, 0.1, 0.5, 1.0, 1.5, 1e16, 1e21, 1e-7, 123e-20, 123456789.0, 1.7976931348623157e308][..]
        )
        .prop_filter_map("finite", Number::from_f64),
    ]
}

/// Arbitrary JSON with strings (and keys) from `string()`, nested at most `depth` levels,
/// about `size` values in all and at most `items` per array or object.
pub fn json_value<S>(string: fn() -> S, depth: u32, size: u32, items: usize) -> impl Strategy<Value = Value>
where
    S: Strategy<Value = String> + 'static,
{
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number().prop_map(Value::Number),
        string().prop_map(Value::String),
    ];
    leaf.prop_recursive(depth, size, items as u32, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..items).prop_map(Value::Array),
            json_map(string(), inner, items).prop_map(Value::Object),
        ]
    })
}

/// Maps in arbitrary key order (the first occurrence of a repeated key keeps its place).
pub fn json_map(
    key: impl Strategy<Value = String>,
    value: impl Strategy<Value = Value>,
    items: usize,
) -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::vec((key, value), 0..items).prop_map(|entries| entries.into_iter().collect())
}
