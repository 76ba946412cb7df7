//! The OTLP/HTTP protobuf exporter, set up for one endpoint and this service.

use super::convert::{scope, span_data};
use super::OtlpSettings;
use crate::core::trace::Span;
use opentelemetry::InstrumentationScope;
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::trace::SpanExporter as _;
use opentelemetry_sdk::Resource;
use std::time::Duration;

/// How long one export may take, retries included.
pub const EXPORT_TIMEOUT: Duration = Duration::from_secs(5);

/// Sends batches of spans; headers come from `OTEL_EXPORTER_OTLP_HEADERS` (or the traces one)
/// and the resource from `OTEL_SERVICE_NAME` / `OTEL_RESOURCE_ATTRIBUTES` (service name
/// `threadkeeper` by default). Needs a Tokio runtime.
pub struct Sender {
    exporter: opentelemetry_otlp::SpanExporter,
    scope: InstrumentationScope,
}

impl Sender {
    pub fn new(settings: &OtlpSettings) -> Result<Sender, String> {
        let mut exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(settings.traces_endpoint.clone())
            .with_timeout(EXPORT_TIMEOUT)
            .build()
            .map_err(|e| format!("{}: {e}", settings.traces_endpoint))?;
        exporter.set_resource(&resource());
        Ok(Sender { exporter, scope: scope() })
    }

    /// Sends `spans` in one request.
    pub async fn send(&self, spans: Vec<Span>) -> Result<(), String> {
        if spans.is_empty() {
            return Ok(());
        }
        let batch = spans.into_iter().map(|span| span_data(span, &self.scope)).collect();
        self.exporter.export(batch).await.map_err(|e| e.to_string())
    }
}

fn resource() -> Resource {
    let builder = Resource::builder();
    let named = std::env::var("OTEL_SERVICE_NAME").is_ok_and(|name| !name.trim().is_empty())
        || std::env::var("OTEL_RESOURCE_ATTRIBUTES").is_ok_and(|attrs| attrs.contains("service.name="));
    if named {
        builder.build()
    } else {
        builder.with_service_name("threadkeeper").build()
    }
}
