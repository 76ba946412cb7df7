//! Token counting throughput (MB/s of counted text) per tokenizer on a realistic 10k-event
//! thread — its XML document and its `text` rendering — for upstream's estimate, GitHub's
//! `bpe-openai` (what the server uses) and `tiktoken-rs`; and the cost of a compaction-aware
//! render at 100k events (replaying the log into the compacted view, then rendering it)
//! against a plain render of the same events.
//!
//! `cargo bench --bench tokens -- --warm-up-time 1 --measurement-time 3`
//! With `THREADKEEPER_TOKENS_CORPUS=DIR` the counted texts are also written to DIR, for
//! `benches/tokens-vs-js.sh` to count with js-tiktoken in the same run.

#[path = "support/thread_gen.rs"]
mod thread_gen;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use serde_json::{json, Value};
use std::hint::black_box;
use threadkeeper::context::{estimate_tokens, CompactedView};
use threadkeeper::{build_messages, messages_to_prompt, serialize_thread_to_xml, AgentEvent, MessageOptions};
use threadkeeper::{XmlOptions, XmlRenderer};

type Counter = fn(&str) -> usize;

fn counters() -> Vec<(&'static str, Counter)> {
    vec![
        ("estimate", |t| estimate_tokens(t) as usize),
        ("bpe-openai/o200k_base", |t| bpe_openai::o200k_base().count(t)),
        ("bpe-openai/cl100k_base", |t| bpe_openai::cl100k_base().count(t)),
        ("tiktoken-rs/o200k_base", |t| tiktoken_rs::o200k_base_singleton().encode_ordinary(t).len()),
        ("tiktoken-rs/cl100k_base", |t| tiktoken_rs::cl100k_base_singleton().encode_ordinary(t).len()),
    ]
}

fn corpora() -> Vec<(&'static str, String)> {
    let events = AgentEvent::list_from_values(thread_gen::generate_thread(10_000, 42)).expect("valid events");
    let xml = serialize_thread_to_xml(&events, &XmlOptions::default());
    let text = messages_to_prompt(&build_messages(&events, &MessageOptions::default()));
    let corpora = vec![("xml", xml), ("text", text)];
    if let Ok(dir) = std::env::var("THREADKEEPER_TOKENS_CORPUS") {
        std::fs::create_dir_all(&dir).expect("corpus directory");
        for (name, text) in &corpora {
            std::fs::write(format!("{dir}/{name}.txt"), text).expect("corpus written");
        }
    }
    corpora
}

fn token_counting(c: &mut Criterion) {
    let mut group = c.benchmark_group("count_10k_events");
    group.sample_size(10);
    for (corpus, text) in corpora() {
        group.throughput(Throughput::Bytes(text.len() as u64));
        for (name, count) in counters() {
            // The first count loads the vocabulary; that is not what is measured.
            let tokens = count(&text);
            eprintln!("{corpus} {name}: {tokens} tokens in {} bytes", text.len());
            group.bench_with_input(BenchmarkId::new(name, corpus), &text, |b, text| b.iter(|| count(black_box(text))));
        }
    }
    group.finish();
}

/// 100k events with a compaction round after each 20k: summaries of the iterations then old.
fn compacted_log(events: usize) -> Vec<AgentEvent> {
    let mut values = thread_gen::generate_thread(events, 7);
    let mut out: Vec<Value> = Vec::with_capacity(values.len() + 1000);
    let mut round = 0;
    for (i, value) in values.drain(..).enumerate() {
        let iteration = value["iteration"].as_i64().unwrap_or(0);
        out.push(value);
        if i > 0 && i % 20_000 == 0 {
            round += 1;
            let cutoff = iteration - 3;
            for summarized in (cutoff - 50).max(0)..=cutoff {
                out.push(json!({"type": "summary", "summarizedIterations": [summarized], "summary": "did things",
                    "timestamp": 1, "iteration": summarized, "compaction": {"round": round, "cutoff": cutoff}}));
            }
        }
    }
    AgentEvent::list_from_values(out).expect("valid events")
}

fn compaction_aware_render(c: &mut Criterion) {
    let mut group = c.benchmark_group("render_100k_events");
    group.sample_size(10);
    let events = compacted_log(100_000);
    group.throughput(Throughput::Elements(events.len() as u64));
    let options = XmlOptions::default();
    group.bench_function("plain_xml", |b| {
        let mut out = String::new();
        b.iter(|| {
            XmlRenderer::render_document_into(black_box(&events), &options, &mut out);
            out.len()
        })
    });
    group.bench_function("view_replay", |b| {
        b.iter(|| {
            let mut view = CompactedView::new();
            for event in black_box(&events) {
                view.push(event);
            }
            view.len()
        })
    });
    group.bench_function("view_replay_and_xml", |b| {
        b.iter(|| {
            let mut view = CompactedView::new();
            for event in black_box(&events) {
                view.push(event);
            }
            let mut renderer = XmlRenderer::new(Default::default());
            for at in view.positions() {
                renderer.push(&events[at]);
            }
            renderer.document(None).len()
        })
    });
    group.finish();
}

criterion_group!(benches, token_counting, compaction_aware_render);
criterion_main!(benches);
