//! What an agent run's model input costs under each context strategy, with each provider's
//! documented prompt-caching rules replayed on the requests (`support/prompt_cache.rs`).
//!
//! A generated coding-agent run (`support/thread_gen.rs`) is appended to a real server
//! (`target/release/threadkeeper serve --store memory`, NDJSON over pipes) one iteration at a
//! time; after each, the request is rendered as the Anthropic request (`cacheControl: "auto"`)
//! and as OpenAI chat, under: plain growth; today's budget; the budget with `dropTo`;
//! upstream-style compaction (`thread/planCompaction` + `thread/compact`, fixed-length
//! summaries); rolling compaction (`strategy: "rolling"`, planned on the provider's own
//! request, fixed-length summaries). Budgets are counted in `o200k_base`, the tokens "peak
//! context" is reported in. Run with `bench/context-cost [STEPS]` (default 2000).
//!
//! Then prompt-caching rows of their own ([`cache_rows`]): XML context mode in cacheable
//! blocks, on Anthropic and on OpenAI; and OpenAI chat and Responses with `cacheControl`,
//! replayed under GPT-5.6's breakpoint rules.
//!
//! Each strategy is also rendered as `bedrock-converse` with `cacheControl: "auto"` and replayed
//! under Bedrock's rules for Claude (Anthropic's, at `cachePoint` blocks). And a computer-use run
//! of its own ([`screenshot_rows`], word `screenshot`): one ~1,000-token screenshot a step, on
//! Anthropic with `media: {keepImages: 10}` and without.

#[path = "support/thread_gen.rs"]
mod thread_gen;

#[path = "support/prompt_cache.rs"]
mod prompt_cache;

#[path = "support/rolling_host.rs"]
mod rolling_host;

#[path = "support/pipe_server.rs"]
mod pipe_server;

use pipe_server::Server;
use prompt_cache::{AnthropicCache, BedrockCache, OpenAiBreakpointCache, OpenAiCache, Usage};
use prompt_cache::{ANTHROPIC_READ, ANTHROPIC_WRITE, OPENAI_READ, OPENAI_WRITE};
use serde_json::{json, Value};

const MAX_TOKENS: u64 = 30_000;
const DROP_TO: u64 = 18_000;
/// Words in a rolling round's scripted summary (about 80 `o200k_base` tokens).
const ROLLING_SUMMARY_WORDS: usize = 60;
const SUMMARY: &str =
    "The agent read and edited files, ran the tests and fixed what failed; one call timed out and was retried. ";

#[derive(Clone, Copy)]
enum Strategy {
    Growth,
    Budget,
    BudgetDropTo,
    Compaction,
    /// Rolling compaction planned on this provider's request (`"anthropic"` or `"openai-chat"`).
    Rolling(&'static str),
}

impl Strategy {
    fn name(self) -> &'static str {
        match self {
            Strategy::Growth => "plain growth",
            Strategy::Budget => "budget (maxTokens 30k)",
            Strategy::BudgetDropTo => "budget, dropTo 18k",
            Strategy::Compaction => "compaction (30k, keep 3)",
            Strategy::Rolling(_) => "rolling compaction (30k → 18k)",
        }
    }

    fn options(self, anthropic: bool) -> Value {
        let mut options = json!({});
        if anthropic {
            options["cacheControl"] = json!("auto");
        }
        match self {
            Strategy::Budget => options["budget"] = json!({"maxTokens": MAX_TOKENS, "tokenizer": "o200k_base"}),
            Strategy::BudgetDropTo => {
                options["budget"] = json!({"maxTokens": MAX_TOKENS, "dropTo": DROP_TO, "tokenizer": "o200k_base"})
            }
            _ => {}
        }
        options
    }
}

/// The run's iterations, each a batch of events; summaries left out (compaction makes its own).
fn steps(count: usize) -> Vec<Vec<Value>> {
    let events = thread_gen::generate_thread(count * 5, 7);
    let mut steps: Vec<Vec<Value>> = Vec::new();
    for event in events.into_iter().filter(|e| e["type"] != "summary" && e["type"] != "completion") {
        let iteration = event["iteration"].as_u64().unwrap() as usize;
        while steps.len() <= iteration {
            steps.push(Vec::new());
        }
        steps[iteration].push(event);
    }
    steps.truncate(count);
    steps
}

/// A run's usage per provider, its summarizer calls, and its wall time.
struct Run {
    anthropic: Usage,
    openai: Usage,
    /// The same strategy rendered as `bedrock-converse` with `cacheControl: "auto"`.
    bedrock: Usage,
    summarizer_calls: u64,
    seconds: f64,
}

fn run(binary: &str, strategy: Strategy, steps: &[Vec<Value>]) -> Run {
    let mut server = Server::start(binary, "memory", "context-cost");
    let instructions = "You are a careful coding agent. ".repeat(100);
    server.call("thread/open", json!({"threadId": "run", "settings": {"instructions": instructions}}));
    let (mut anthropic, mut openai) = (AnthropicCache::default(), OpenAiCache::default());
    let mut bedrock = BedrockCache::default();
    let started = std::time::Instant::now();
    let mut summarizer_calls = 0;
    let mut rounds = rolling_host::Rounds::default();
    let mut peaks = (0u64, 0u64, 0u64);
    for step in steps {
        server.call("thread/append", json!({"threadId": "run", "events": step}));
        if let Strategy::Rolling(format) = strategy {
            let mut options = json!({});
            if format == "anthropic" {
                options["cacheControl"] = json!("auto");
            }
            let plan = json!({"strategy": "rolling", "maxTokens": MAX_TOKENS, "compactTo": DROP_TO,
                "tokenizer": "o200k_base", "format": format, "options": options});
            let mut summarize = |step: &Value| rolling_host::scripted_summary(step, ROLLING_SUMMARY_WORDS);
            let mut call = |method: &str, params: Value| server.call(method, params);
            rolling_host::compact_until_fits(&mut call, "run", &plan, &mut summarize, &mut rounds);
        }
        if let Strategy::Compaction = strategy {
            let plan = server.call("thread/planCompaction", json!({"threadId": "run", "maxContextTokens": MAX_TOKENS}));
            if plan["needed"] == true {
                let summaries: Vec<Value> = plan["iterations"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|i| json!({"iteration": i["iteration"], "summary": SUMMARY}))
                    .collect();
                summarizer_calls += summaries.len() as u64;
                server.call("thread/compact", json!({"threadId": "run", "summaries": summaries}));
            }
        }
        let request = server.call(
            "thread/render",
            json!({"threadId": "run", "format": "anthropic", "options": strategy.options(true)}),
        );
        anthropic.send(&request);
        peaks.0 = peaks.0.max(rolling_host::request_tokens(&request));
        let chat = server.call(
            "thread/render",
            json!({"threadId": "run", "format": "openai-chat", "options": strategy.options(false)}),
        );
        openai.send(&chat["messages"]);
        peaks.1 = peaks.1.max(rolling_host::request_tokens(&chat));
        let converse = server.call(
            "thread/render",
            json!({"threadId": "run", "format": "bedrock-converse", "options": strategy.options(true)}),
        );
        bedrock.send(&converse);
        peaks.2 = peaks.2.max(rolling_host::request_tokens(&converse));
    }
    summarizer_calls += rounds.calls();
    // Peak context in the bound's own measure: the request body's tokens.
    let (mut anthropic, mut openai, mut bedrock) = (anthropic.total, openai.total, bedrock.0.total);
    (anthropic.peak, openai.peak, bedrock.peak) = peaks;
    Run { anthropic, openai, bedrock, summarizer_calls, seconds: started.elapsed().as_secs_f64() }
}

fn main() {
    let count: usize = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(2000);
    // An optional word keeps only the strategies whose name holds it (`bench/context-cost 2000 rolling`).
    let only = std::env::args().skip(1).find(|a| a.parse::<usize>().is_err() && !a.starts_with('-'));
    let wanted = |strategy: Strategy| only.as_deref().is_none_or(|word| strategy.name().contains(word));
    let binary = std::env::var("THREADKEEPER_BIN").unwrap_or_else(|_| "target/release/threadkeeper".into());
    let steps = steps(count);
    println!("{} steps, tokens counted with o200k_base; cost relative to the same requests uncached\n", steps.len());
    println!(
        "| strategy | provider | input tokens | read from cache | written | peak context | cost | summarizer calls / 1,000 steps |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|");
    let row = |strategy: Strategy, provider: &str, usage: Usage, cost: f64, calls: u64| {
        print_row(strategy, provider, usage, cost, calls, steps.len())
    };
    for strategy in [Strategy::Growth, Strategy::Budget, Strategy::BudgetDropTo, Strategy::Compaction] {
        if !wanted(strategy) {
            continue;
        }
        let run = run(&binary, strategy, &steps);
        row(
            strategy,
            "Anthropic, auto breakpoints",
            run.anthropic,
            Replay::Anthropic.cost(&run.anthropic),
            run.summarizer_calls,
        );
        row(strategy, "OpenAI chat", run.openai, Replay::OpenAiAutomatic.cost(&run.openai), run.summarizer_calls);
        row(
            strategy,
            "Bedrock Converse, auto cachePoints",
            run.bedrock,
            Replay::Anthropic.cost(&run.bedrock),
            run.summarizer_calls,
        );
        eprintln!("{}: {:.1} s", strategy.name(), run.seconds);
    }
    if wanted(Strategy::Rolling("anthropic")) {
        rolling_rows(&binary, &steps);
    }
    // The prompt-caching rows run with every strategy, or alone with the word `cache`.
    if only.is_none() || only.as_deref() == Some("cache") {
        cache_rows(&binary, &steps);
    }
    // The screenshot run: with every strategy, or alone with the word `screenshot`.
    if only.is_none() || only.as_deref() == Some("screenshot") {
        screenshot_rows(&binary, count);
    }
}

/// Images kept with their bytes in the screenshot run.
const KEEP_IMAGES: u64 = 10;

/// A PNG whose header says 750×1000 (1,000 tokens by Anthropic's rule, which reads the size
/// only), made distinct by `salt`: a screenshot's cost without a screenshot's bytes.
fn screenshot_png(salt: usize) -> String {
    use base64::Engine as _;
    let mut bytes = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    bytes.extend_from_slice(&750u32.to_be_bytes());
    bytes.extend_from_slice(&1000u32.to_be_bytes());
    bytes.extend_from_slice(&[8, 6, 0, 0, 0, 0, 0, 0, 0]);
    bytes.extend_from_slice(format!("screenshot {salt}").as_bytes());
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Step `i` of a computer-use run: a note, a `click` call whose result holds a screenshot.
fn screenshot_step(i: usize) -> Value {
    let image = json!({"type": "image", "data": screenshot_png(i), "mediaType": "image/png"});
    json!([
        {"type": "message", "role": "assistant", "content": format!("Step {i}: clicking the next control."), "iteration": i},
        {"type": "tool_call", "toolName": "click", "toolCallId": format!("click_{i}"), "args": {"x": i % 750, "y": i % 1000}, "iteration": i},
        {"type": "tool_result", "toolCallId": format!("click_{i}"), "result": "clicked",
         "content": [{"type": "text", "text": format!("The screen after click {i}:")}, image], "iteration": i},
    ])
}

/// Image blocks with bytes in an Anthropic request.
fn images_in(request: &Value) -> usize {
    match request {
        Value::Object(fields) => {
            let own = usize::from(fields.get("type") == Some(&json!("image")) && fields["source"]["type"] == "base64");
            own + fields.values().map(images_in).sum::<usize>()
        }
        Value::Array(items) => items.iter().map(images_in).sum(),
        _ => 0,
    }
}

/// A computer-use run of `count` steps, one ~1,000-token screenshot each, rendered as the
/// Anthropic request with `cacheControl: "auto"` after every step, with `media: {keepImages}`
/// and without (every image every step).
fn screenshot_rows(binary: &str, count: usize) {
    let started = std::time::Instant::now();
    let mut server = Server::start(binary, "memory", "context-cost");
    let instructions = "You operate a desktop app through clicks; look at each screenshot. ".repeat(50);
    server.call("thread/open", json!({"threadId": "shots", "settings": {"instructions": instructions}}));
    let first =
        json!([{"type": "message", "role": "user", "content": "Fill in the form and submit it.", "iteration": 0}]);
    server.call("thread/append", json!({"threadId": "shots", "events": first}));
    let kept_options = json!({"cacheControl": "auto", "media": {"keepImages": KEEP_IMAGES}});
    let every_options = json!({"cacheControl": "auto"});
    let (mut kept, mut every) = (AnthropicCache::default(), AnthropicCache::default());
    let (mut kept_images, mut every_images) = (0usize, 0usize);
    for i in 1..=count {
        server.call("thread/append", json!({"threadId": "shots", "events": screenshot_step(i)}));
        let request =
            server.call("thread/render", json!({"threadId": "shots", "format": "anthropic", "options": kept_options}));
        kept_images = kept_images.max(images_in(&request));
        kept.send(&request);
        let request =
            server.call("thread/render", json!({"threadId": "shots", "format": "anthropic", "options": every_options}));
        every_images = every_images.max(images_in(&request));
        every.send(&request);
    }
    let every_uncached = every.total.input as f64;
    println!("\n{count} steps, one 750×1000 screenshot (1,000 tokens) each; Anthropic, `cacheControl: \"auto\"`\n");
    println!("| request | images a request, at most | input tokens | read from cache | written | cost | cost against every image uncached |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for (label, usage, images) in
        [("`media: {keepImages: 10}`", kept.total, kept_images), ("every image every step", every.total, every_images)]
    {
        let cost = Replay::Anthropic.cost(&usage);
        println!(
            "| {label} | {images} | {} | {} ({:.1}%) | {} | {cost:.3}× | {:.3}× |",
            usage.input,
            usage.read,
            usage.read_share() * 100.0,
            usage.written,
            cost * usage.input as f64 / every_uncached,
        );
    }
    eprintln!("screenshot run: {:.1} s", started.elapsed().as_secs_f64());
}

/// One row of the strategies' table.
fn print_row(strategy: Strategy, provider: &str, usage: Usage, cost: f64, calls: u64, steps: usize) {
    let per_thousand = calls as f64 * 1000.0 / steps.max(1) as f64;
    println!(
        "| {} | {provider} | {} | {} ({:.1}%) | {} | {} | {:.3}× | {:.0} |",
        strategy.name(),
        usage.input,
        usage.read,
        usage.read_share() * 100.0,
        usage.written,
        usage.peak,
        cost,
        per_thousand
    );
}

/// Rolling compaction measures the request it bounds: one run per provider.
fn rolling_rows(binary: &str, steps: &[Vec<Value>]) {
    let row = |strategy: Strategy, provider: &str, usage: Usage, cost: f64, calls: u64| {
        print_row(strategy, provider, usage, cost, calls, steps.len())
    };
    let on_anthropic = run(binary, Strategy::Rolling("anthropic"), steps);
    let strategy = Strategy::Rolling("anthropic");
    row(
        strategy,
        "Anthropic, auto breakpoints",
        on_anthropic.anthropic,
        Replay::Anthropic.cost(&on_anthropic.anthropic),
        on_anthropic.summarizer_calls,
    );
    row(
        strategy,
        "Bedrock Converse, auto cachePoints (planned on the Anthropic request)",
        on_anthropic.bedrock,
        Replay::Anthropic.cost(&on_anthropic.bedrock),
        on_anthropic.summarizer_calls,
    );
    let on_openai = run(binary, Strategy::Rolling("openai-chat"), steps);
    row(
        strategy,
        "OpenAI chat",
        on_openai.openai,
        Replay::OpenAiAutomatic.cost(&on_openai.openai),
        on_openai.summarizer_calls,
    );
    eprintln!("{}: {:.1} s + {:.1} s", strategy.name(), on_anthropic.seconds, on_openai.seconds);
}

/// Which provider's rules a render is replayed under.
#[derive(Clone, Copy)]
enum Replay {
    Anthropic,
    /// OpenAI before GPT-5.6: the longest repeated prefix, automatically.
    OpenAiAutomatic,
    /// GPT-5.6 and later: exact matches at breakpoints.
    Gpt56,
}

impl Replay {
    fn cost(self, usage: &Usage) -> f64 {
        match self {
            Replay::Anthropic => usage.relative_cost(ANTHROPIC_READ, ANTHROPIC_WRITE),
            Replay::OpenAiAutomatic => usage.relative_cost(OPENAI_READ, 0.0),
            Replay::Gpt56 => usage.relative_cost(OPENAI_READ, OPENAI_WRITE),
        }
    }
}

/// One request form rendered after every step: its row label, format, options (the strategy's
/// budget is added) and the rules it is priced under.
struct CacheRender {
    label: &'static str,
    format: &'static str,
    options: Value,
    replay: Replay,
}

/// The prompt-caching rows: XML context mode in blocks, and the OpenAI formats under GPT-5.6's
/// rules, for plain growth and the budget with `dropTo`.
fn cache_rows(binary: &str, steps: &[Vec<Value>]) {
    let auto = || json!({"cacheControl": "auto"});
    let xml = |cache: bool| {
        let mut options = json!({"contextMode": "xml"});
        if cache {
            options["cacheControl"] = json!("auto");
        }
        options
    };
    let renders = [
        CacheRender {
            label: "XML mode, Anthropic, auto",
            format: "anthropic",
            options: xml(true),
            replay: Replay::Anthropic,
        },
        CacheRender {
            label: "XML mode, OpenAI chat, GPT-5.6, auto",
            format: "openai-chat",
            options: xml(true),
            replay: Replay::Gpt56,
        },
        CacheRender {
            label: "XML mode, OpenAI Responses, GPT-5.6, auto",
            format: "openai-responses",
            options: xml(true),
            replay: Replay::Gpt56,
        },
        CacheRender {
            label: "XML mode, OpenAI chat, GPT-5.6, no option",
            format: "openai-chat",
            options: xml(false),
            replay: Replay::Gpt56,
        },
        CacheRender {
            label: "XML mode, OpenAI chat, before GPT-5.6, no option",
            format: "openai-chat",
            options: xml(false),
            replay: Replay::OpenAiAutomatic,
        },
        CacheRender {
            label: "OpenAI chat, GPT-5.6, auto",
            format: "openai-chat",
            options: auto(),
            replay: Replay::Gpt56,
        },
        CacheRender {
            label: "OpenAI Responses, GPT-5.6, auto",
            format: "openai-responses",
            options: auto(),
            replay: Replay::Gpt56,
        },
        CacheRender {
            label: "OpenAI chat, GPT-5.6, no option",
            format: "openai-chat",
            options: json!({}),
            replay: Replay::Gpt56,
        },
    ];
    println!("\n| strategy | request | input tokens | read from cache | written | cost |");
    println!("|---|---|---:|---:|---:|---:|");
    for strategy in [Strategy::Growth, Strategy::BudgetDropTo] {
        let started = std::time::Instant::now();
        let totals = run_cache_renders(binary, strategy, steps, &renders);
        for (render, usage) in renders.iter().zip(&totals) {
            println!(
                "| {} | {} | {} | {} ({:.1}%) | {} | {:.3}× |",
                strategy.name(),
                render.label,
                usage.input,
                usage.read,
                usage.read_share() * 100.0,
                usage.written,
                render.replay.cost(usage)
            );
        }
        eprintln!("cache rows, {}: {:.1} s", strategy.name(), started.elapsed().as_secs_f64());
    }
}

fn run_cache_renders(binary: &str, strategy: Strategy, steps: &[Vec<Value>], renders: &[CacheRender]) -> Vec<Usage> {
    let mut server = Server::start(binary, "memory", "context-cost");
    let instructions = "You are a careful coding agent. ".repeat(100);
    server.call("thread/open", json!({"threadId": "run", "settings": {"instructions": instructions}}));
    enum Cache {
        Anthropic(AnthropicCache),
        OpenAiAutomatic(OpenAiCache),
        Gpt56(OpenAiBreakpointCache),
    }
    let mut caches: Vec<Cache> = renders
        .iter()
        .map(|render| match render.replay {
            Replay::Anthropic => Cache::Anthropic(AnthropicCache::default()),
            Replay::OpenAiAutomatic => Cache::OpenAiAutomatic(OpenAiCache::default()),
            Replay::Gpt56 => Cache::Gpt56(OpenAiBreakpointCache::default()),
        })
        .collect();
    for step in steps {
        server.call("thread/append", json!({"threadId": "run", "events": step}));
        for (render, cache) in renders.iter().zip(&mut caches) {
            let mut options = strategy.options(false);
            for (key, value) in render.options.as_object().unwrap() {
                options[key] = value.clone();
            }
            let request =
                server.call("thread/render", json!({"threadId": "run", "format": render.format, "options": options}));
            match cache {
                Cache::Anthropic(cache) => drop(cache.send(&request)),
                Cache::OpenAiAutomatic(cache) => drop(cache.send(&request["messages"])),
                Cache::Gpt56(cache) => drop(cache.send(&request)),
            }
        }
    }
    caches
        .into_iter()
        .map(|cache| match cache {
            Cache::Anthropic(cache) => cache.total,
            Cache::OpenAiAutomatic(cache) => cache.total,
            Cache::Gpt56(cache) => cache.total,
        })
        .collect()
}
