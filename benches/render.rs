//! XML render throughput (MB/s of output) for generated threads of 100 to 100k events, each into a
//! fresh string and into one buffer kept across renders, and the cost of every message form
//! (LangChain messages, the three provider projections) at 10k events.
//!
//! `cargo bench --bench render -- --warm-up-time 1 --measurement-time 3`

#[path = "support/thread_gen.rs"]
mod thread_gen;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::hint::black_box;
use threadkeeper::messages::{DanglingToolCalls, Entry, StandardMessages, StoredMessage};
use threadkeeper::{
    build_messages, providers, render_request, serialize_thread_to_xml, AgentEvent, MessageOptions, Provider,
    XmlOptions, XmlRenderer,
};

fn xml_render(c: &mut Criterion) {
    let mut group = c.benchmark_group("xml_render");
    for size in [100, 1_000, 10_000, 100_000] {
        let events = AgentEvent::list_from_values(thread_gen::generate_thread(size, 42)).expect("valid events");
        let options = XmlOptions::default();
        let bytes = serialize_thread_to_xml(&events, &options).len();
        group.throughput(Throughput::Bytes(bytes as u64));
        group.sample_size(if size >= 10_000 { 10 } else { 50 });
        group.bench_with_input(BenchmarkId::new("one_shot", size), &events, |b, events| {
            b.iter(|| serialize_thread_to_xml(black_box(events), &options))
        });
        // The same render into one buffer kept across renders: no fresh memory to map and zero.
        let mut kept = String::new();
        group.bench_with_input(BenchmarkId::new("into_kept_buffer", size), &events, |b, events| {
            b.iter(|| {
                XmlRenderer::render_document_into(black_box(events), &options, &mut kept);
                kept.len()
            })
        });
    }
    group.finish();

    // Appending one event to a long-lived renderer: the per-event cost a sidecar pays.
    let events = AgentEvent::list_from_values(thread_gen::generate_thread(10_000, 7)).expect("valid events");
    let mut group = c.benchmark_group("xml_render_incremental");
    group.throughput(Throughput::Elements(events.len() as u64));
    group.sample_size(20);
    group.bench_function("push_10k_events", |b| {
        b.iter(|| {
            let mut renderer = XmlRenderer::new(Default::default());
            for event in &events {
                renderer.push(black_box(event));
            }
            renderer.len()
        })
    });
    group.finish();
}

/// Each message form of the same 10k-event thread, one-shot from the events (what a fresh
/// process or the CLI pays), beside the XML document of that thread.
fn message_forms(c: &mut Criterion) {
    let events = AgentEvent::list_from_values(thread_gen::generate_thread(10_000, 42)).expect("valid events");
    let options = MessageOptions::default();
    let mut group = c.benchmark_group("render_10k");
    group.sample_size(10);
    group.throughput(Throughput::Elements(events.len() as u64));
    group.bench_function("xml", |b| b.iter(|| serialize_thread_to_xml(black_box(&events), &XmlOptions::default())));
    group.bench_function("messages", |b| {
        b.iter(|| serde_json::to_string(&build_messages(black_box(&events), &options)).unwrap())
    });
    for provider in [Provider::OpenAiChat, Provider::OpenAiResponses, Provider::Anthropic] {
        group.bench_function(provider.name(), |b| {
            b.iter(|| render_request(black_box(&events), &options, provider, false))
        });
    }
    group.finish();

    // What the sidecar pays per render: its builders are kept up to date on append, so a render
    // only walks the entries and serializes.
    let mut builder = StandardMessages::new();
    builder.extend(&events);
    let mut renderer = XmlRenderer::new(Default::default());
    renderer.extend(&events);
    let mut group = c.benchmark_group("render_10k_kept");
    group.sample_size(10);
    group.throughput(Throughput::Elements(events.len() as u64));
    group.bench_function("xml", |b| b.iter(|| black_box(&renderer).document(None)));
    group.bench_function("messages", |b| {
        // As the sidecar serializes them: borrowed from the kept builder, not copied.
        b.iter(|| {
            let entries = black_box(&builder).entries(DanglingToolCalls::Repair);
            let messages: Vec<&StoredMessage> = entries.iter().filter_map(Entry::message).collect();
            serde_json::to_string(&messages).unwrap()
        })
    });
    for provider in [Provider::OpenAiChat, Provider::OpenAiResponses, Provider::Anthropic] {
        group.bench_function(provider.name(), |b| {
            b.iter(|| {
                providers::to_json(
                    provider,
                    None,
                    &black_box(&builder).entries(DanglingToolCalls::Repair),
                    &Default::default(),
                    &threadkeeper::media::bytes::NO_MEDIA,
                    false,
                )
            })
        });
    }
    group.finish();
}

criterion_group!(benches, xml_render, message_forms);
criterion_main!(benches);
