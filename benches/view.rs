//! The viewer page of a realistic 10k-event thread: everything `threadkeeper view FILE` does
//! after reading the file (model input, per-iteration estimates, links, the page), and the page
//! alone from a ready model input.
//!
//! `cargo bench --bench view -- --warm-up-time 1 --measurement-time 3`

#[path = "support/thread_gen.rs"]
mod thread_gen;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;
use threadkeeper::view::{iteration_tokens, render_page, ModelInput, Page, ViewOptions};
use threadkeeper::{build_messages, serialize_thread_to_xml, AgentEvent, EscapeMode, MessageOptions, XmlOptions};

fn whole_view(events: &[AgentEvent]) -> String {
    let xml = serialize_thread_to_xml(events, &XmlOptions::default());
    let messages = serde_json::to_string(&build_messages(events, &MessageOptions::default())).unwrap();
    let tokens = iteration_tokens(events, EscapeMode::Full);
    let model_input = ModelInput { xml, messages_json: messages };
    render_page(&Page {
        title: "bench",
        events,
        model_input: &model_input,
        options: ViewOptions::default(),
        tokens: Some(&tokens),
        media: None,
    })
}

fn view(c: &mut Criterion) {
    let events = AgentEvent::list_from_values(thread_gen::generate_thread(10_000, 42)).expect("valid events");
    let page_bytes = whole_view(&events).len() as u64;
    eprintln!("view page of 10k events: {page_bytes} bytes");
    let mut group = c.benchmark_group("view_10k_events");
    group.throughput(Throughput::Bytes(page_bytes));
    group.sample_size(10);
    group.bench_function("whole", |b| b.iter(|| black_box(whole_view(black_box(&events)))));
    let model_input = ModelInput {
        xml: serialize_thread_to_xml(&events, &XmlOptions::default()),
        messages_json: serde_json::to_string(&build_messages(&events, &MessageOptions::default())).unwrap(),
    };
    let tokens = iteration_tokens(&events, EscapeMode::Full);
    group.bench_function("page_only", |b| {
        b.iter(|| {
            black_box(render_page(&Page {
                title: "bench",
                events: black_box(&events),
                model_input: &model_input,
                options: ViewOptions::default(),
                tokens: Some(&tokens),
                media: None,
            }))
        })
    });
    group.finish();
}

criterion_group!(benches, view);
criterion_main!(benches);
