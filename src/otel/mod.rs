//! Threads as OpenTelemetry GenAI traces, sent over OTLP/HTTP (protobuf) to any backend.
//!
//! The spans themselves come from the pure [`crate::core::trace`] model; this module adds the
//! I/O: where to send ([`OtlpSettings`]), the span data the OTLP exporter takes ([`convert`]),
//! the exporter itself ([`sender`]), the live export of a serving process ([`live`]) and the
//! backfill of a stored thread ([`backfill`]).

pub mod backfill;
mod convert;
pub mod live;
mod sender;

pub use live::{LiveExport, LiveLimits};
pub use sender::Sender;

use crate::core::trace::TraceOptions;
use crate::store::ThreadRecord;
use std::collections::HashMap;

/// Where spans go and what they carry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OtlpSettings {
    /// The full URL spans are posted to (`…/v1/traces`).
    pub traces_endpoint: String,
    /// Adds the thread's text (messages, arguments, results) to the spans.
    pub capture_content: bool,
}

impl OtlpSettings {
    /// From `serve --otlp-endpoint` (a base URL) or the standard environment:
    /// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (the full URL), else `OTEL_EXPORTER_OTLP_ENDPOINT`
    /// (a base URL). `None` when none is set: nothing is exported.
    pub fn resolve(
        base_endpoint: Option<&str>,
        env: &HashMap<String, String>,
        capture_content: bool,
    ) -> Result<Option<OtlpSettings>, String> {
        let nonempty = |key: &str| env.get(key).map(|v| v.trim()).filter(|v| !v.is_empty());
        let traces_endpoint = match (base_endpoint, nonempty("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")) {
            (Some(base), _) => traces_url(base),
            (None, Some(full)) => full.to_owned(),
            (None, None) => match nonempty("OTEL_EXPORTER_OTLP_ENDPOINT") {
                Some(base) => traces_url(base),
                None => return Ok(None),
            },
        };
        check_endpoint(&traces_endpoint)?;
        // A protocol asked for in the environment that is not the one spoken here would make
        // every export fail at a collector's other port: refused at start instead.
        for key in ["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"] {
            if let Some(protocol) = nonempty(key).filter(|p| *p != "http/protobuf") {
                return Err(format!("{traces_endpoint}: {key}={protocol}, but only http/protobuf is spoken"));
            }
        }
        Ok(Some(OtlpSettings { traces_endpoint, capture_content }))
    }
}

/// A base URL's traces URL: `URL/v1/traces`, as OpenTelemetry's SDKs append it.
pub fn traces_url(base: &str) -> String {
    format!("{}/v1/traces", base.trim().trim_end_matches('/'))
}

/// Plain HTTP only: the exporter's client carries no TLS stack (a local collector or agent
/// forwards to an HTTPS backend).
fn check_endpoint(url: &str) -> Result<(), String> {
    let rest = url.strip_prefix("http://").ok_or_else(|| {
        if url.starts_with("https://") {
            format!("{url}: https is not supported; send to a local OpenTelemetry Collector over http")
        } else {
            format!("{url}: not an http:// URL")
        }
    })?;
    match url.parse::<axum::http::Uri>() {
        Ok(uri) if uri.host().is_some_and(|host| !host.is_empty()) && !rest.starts_with('/') => Ok(()),
        _ => Err(format!("{url}: not a valid URL")),
    }
}

/// The trace options of a thread: its id, the metadata's `agentName`, its instructions.
pub fn trace_options(record: &ThreadRecord, capture_content: bool) -> TraceOptions {
    TraceOptions {
        thread_id: record.thread_id.clone(),
        agent_name: record.metadata.get("agentName").and_then(|v| v.as_str()).map(str::to_owned),
        instructions: record.settings.instructions.clone(),
        capture_content,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn the_endpoint_comes_from_the_flag_then_the_standard_variables() {
        let resolve = |flag, pairs: &[(&str, &str)]| {
            OtlpSettings::resolve(flag, &env(pairs), false).unwrap().map(|s| s.traces_endpoint)
        };
        assert_eq!(resolve(None, &[]), None);
        assert_eq!(resolve(Some("http://h:4318/"), &[]).as_deref(), Some("http://h:4318/v1/traces"));
        assert_eq!(
            resolve(None, &[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:4318")]).as_deref(),
            Some("http://a:4318/v1/traces")
        );
        let both =
            [("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:4318"), ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://b/x")];
        assert_eq!(resolve(None, &both).as_deref(), Some("http://b/x"), "the traces URL is taken whole");
        assert_eq!(resolve(Some("http://c"), &both).as_deref(), Some("http://c/v1/traces"), "the flag wins");
        assert_eq!(resolve(None, &[("OTEL_EXPORTER_OTLP_ENDPOINT", " ")]), None);
    }

    #[test]
    fn bad_endpoints_are_refused_with_the_reason() {
        let err = |url| OtlpSettings::resolve(Some(url), &HashMap::new(), false).unwrap_err();
        assert!(err("https://h").contains("https is not supported"), "{}", err("https://h"));
        assert!(err("h:4318").contains("not an http:// URL"));
        assert!(err("http://a b").contains("not a valid URL"));
        assert!(err("http://").contains("not an http:// URL"), "nothing after the scheme");
        let grpc = env(&[("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")]);
        let refused = OtlpSettings::resolve(Some("http://h:4317"), &grpc, false).unwrap_err();
        assert!(refused.contains("OTEL_EXPORTER_OTLP_PROTOCOL=grpc, but only http/protobuf"), "{refused}");
        let fine = env(&[("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf")]);
        assert!(OtlpSettings::resolve(Some("http://h"), &fine, false).unwrap().is_some());
        assert_eq!(OtlpSettings::resolve(None, &grpc, false), Ok(None), "no endpoint: nothing to refuse");
    }
}
