//! The model's spans as the SDK span data the OTLP exporter takes.

use crate::core::trace::{AttrValue, Span, SpanKind, SpanStatus};
use opentelemetry::trace::{self as api, SpanContext, SpanId, TraceFlags, TraceId, TraceState};
use opentelemetry::{Array, InstrumentationScope, KeyValue, StringValue, Value};
use opentelemetry_sdk::trace::{SpanData, SpanEvents, SpanLinks};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub fn scope() -> InstrumentationScope {
    InstrumentationScope::builder("threadkeeper").with_version(env!("CARGO_PKG_VERSION")).build()
}

pub fn span_data(span: Span, scope: &InstrumentationScope) -> SpanData {
    let context = SpanContext::new(
        TraceId::from_bytes(span.trace_id.to_be_bytes()),
        SpanId::from_bytes(span.span_id.to_be_bytes()),
        TraceFlags::SAMPLED,
        false,
        TraceState::default(),
    );
    // Non-exhaustive: made empty, then filled.
    let mut events = SpanEvents::default();
    events.events = span
        .events
        .into_iter()
        .map(|e| api::Event::new(e.name, time(e.time_ms), attributes(e.attributes), 0))
        .collect();
    SpanData {
        span_context: context,
        parent_span_id: span.parent_span_id.map_or(SpanId::INVALID, |id| SpanId::from_bytes(id.to_be_bytes())),
        parent_span_is_remote: false,
        span_kind: match span.kind {
            SpanKind::Internal => api::SpanKind::Internal,
            SpanKind::Client => api::SpanKind::Client,
        },
        name: span.name.into(),
        start_time: time(span.start_ms),
        end_time: time(span.end_ms),
        attributes: attributes(span.attributes),
        dropped_attributes_count: 0,
        events,
        links: SpanLinks::default(),
        status: match span.status {
            SpanStatus::Unset => api::Status::Unset,
            SpanStatus::Error { description } => api::Status::error(description.unwrap_or_default()),
        },
        instrumentation_scope: scope.clone(),
    }
}

fn time(ms: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(ms)
}

fn attributes(attributes: Vec<(&'static str, AttrValue)>) -> Vec<KeyValue> {
    attributes.into_iter().map(|(key, value)| KeyValue::new(key, self::value(value))).collect()
}

fn value(value: AttrValue) -> Value {
    match value {
        AttrValue::Str(s) => Value::String(s.into()),
        AttrValue::Int(n) => Value::I64(n),
        AttrValue::Bool(b) => Value::Bool(b),
        AttrValue::StrList(list) => Value::Array(Array::String(list.into_iter().map(StringValue::from).collect())),
        AttrValue::IntList(list) => Value::Array(Array::I64(list)),
    }
}
