//! `threadkeeper view`: a thread file, or a stored thread, as one self-contained HTML page.

use super::input::{display_name, read_events, read_source};
use super::render::{Dangling, Escape, Mode};
use super::view_serve::LiveSettings;
use clap::Args;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use threadkeeper::media::{ingest_event, IngestLimits, Ingested};
use threadkeeper::service::{Limits, RenderOptions, ThreadService};
use threadkeeper::store::{open_store, StoreSpec};
use threadkeeper::view::{images_named, iteration_tokens, render_page, ModelInput, Page, PageMedia, ViewOptions};
use threadkeeper::AgentEvent;
use threadkeeper::{build_messages, serialize_thread_to_xml, ContextMode};
use threadkeeper::{MessageOptions, XmlOptions};

// Options of stored threads or of `--serve` conflict with FILE rather than require those: a
// flag such as `--serve` always counts as present for `requires`.
#[derive(Args, Debug)]
pub struct ViewArgs {
    /// Thread file: events as a JSON array or JSON Lines, or a turn document; `-` reads stdin.
    #[arg(value_name = "FILE", required_unless_present_any = ["thread", "serve"], conflicts_with_all = ["thread", "serve"])]
    file: Option<String>,
    /// A stored thread to show instead of a file (with `--store`, as `serve` takes it).
    #[arg(long, value_name = "ID", conflicts_with = "serve")]
    thread: Option<String>,
    /// The store holding `--thread`, or served (default: the default store of `serve`).
    #[arg(long, env = "THREADKEEPER_STORE", value_name = "STORE", conflicts_with = "file")]
    store: Option<StoreSpec>,
    /// Serve every thread of the store as live pages over HTTP instead of writing one page;
    /// prints the URL (with its access token) on the first line of stdout, then serves until
    /// SIGTERM or SIGINT.
    #[arg(long)]
    serve: bool,
    /// With `--serve`: the address to listen on. Loopback by default; any other address lets
    /// whoever reaches it and holds the token read every thread of the store.
    #[arg(long, value_name = "ADDRESS", default_value = "127.0.0.1", conflicts_with_all = ["file", "thread"])]
    host: IpAddr,
    /// With `--serve`: the port (0 picks a free one).
    #[arg(long, value_name = "N", default_value_t = 0, conflicts_with_all = ["file", "thread"])]
    port: u16,
    /// With `--serve`: the access token (letters, digits, `-_.~`); default: a new random one.
    #[arg(long, value_name = "TOKEN", conflicts_with_all = ["file", "thread"])]
    token: Option<String>,
    /// With `--serve`: open the URL in the default browser.
    #[arg(long, conflicts_with_all = ["file", "thread"])]
    open: bool,
    /// Where to write the page (`-` for stdout); default: FILE with `.html`, or `ID.html`.
    #[arg(long, value_name = "PATH")]
    out: Option<String>,
    /// Context mode of the model input the page shows.
    #[arg(long, value_enum)]
    context_mode: Option<Mode>,
    /// System instructions of the model input.
    #[arg(long, value_name = "TEXT")]
    instructions: Option<String>,
    /// Response prefix of the model input.
    #[arg(long, value_name = "TEXT")]
    response_prefix: Option<String>,
    /// Body escaping of the XML model input.
    #[arg(long, value_enum, default_value_t = Escape::Full)]
    escape: Escape,
    /// Standard mode: `repair` or `drop` calls that never got a result.
    #[arg(long, value_enum, default_value_t = Dangling::Repair)]
    dangling_tool_calls: Dangling,
}

pub fn run(args: ViewArgs) -> i32 {
    if args.serve {
        let live = LiveSettings {
            store: args.store.clone(),
            host: args.host,
            port: args.port,
            token: args.token.clone(),
            open: args.open,
        };
        return super::view_serve::run(&live, options(&args));
    }
    let page = match (&args.file, &args.thread) {
        (Some(file), _) => file_page(file, &args),
        (None, Some(thread_id)) => stored_page(thread_id, &args),
        (None, None) => Err("give a FILE or --thread ID".to_owned()),
    };
    let html = match page {
        Ok(html) => html,
        Err(message) => return super::finish(Err(message)),
    };
    let out = out_path(&args);
    if out.as_os_str() == "-" {
        return super::finish(Ok(html));
    }
    match std::fs::write(&out, html) {
        Ok(()) => {
            eprintln!("threadkeeper: wrote {}", out.display());
            0
        }
        Err(e) => super::finish(Err(format!("{}: {e}", out.display()))),
    }
}

fn out_path(args: &ViewArgs) -> PathBuf {
    if let Some(out) = &args.out {
        return PathBuf::from(out);
    }
    match (&args.file, &args.thread) {
        (Some(file), _) if file != "-" => Path::new(file).with_extension("html"),
        (_, Some(thread_id)) => PathBuf::from(format!("{thread_id}.html")),
        _ => PathBuf::from("thread.html"),
    }
}

fn options(args: &ViewArgs) -> RenderOptions {
    RenderOptions {
        context_mode: args.context_mode.map(ContextMode::from),
        instructions: args.instructions.clone(),
        response_prefix: args.response_prefix.clone(),
        escape: args.escape.into(),
        dangling_tool_calls: args.dangling_tool_calls.into(),
        from_event: None,
        provider: Default::default(),
        media_tokens: None,
    }
}

/// A file's page: the model input rendered as `threadkeeper render` renders the file.
fn file_page(file: &str, args: &ViewArgs) -> Result<String, String> {
    let text = read_source(file)?;
    let name = display_name(file);
    let (events, media) = with_pictures(read_events(&text, name)?)?;
    let o = options(args);
    let context_mode = o.context_mode.unwrap_or(ContextMode::Standard);
    let message_options = MessageOptions {
        context_mode,
        instructions: o.instructions.clone(),
        response_prefix: o.response_prefix.clone(),
        group_tool_calls: false,
        dangling_tool_calls: o.dangling_tool_calls,
        escape: o.escape,
    };
    let xml =
        serialize_thread_to_xml(&events, &XmlOptions { response_prefix: o.response_prefix.clone(), escape: o.escape });
    let messages = build_messages(&events, &message_options);
    let messages_json = serde_json::to_string(&messages).map_err(|e| e.to_string())?;
    let tokens = iteration_tokens(&events, o.escape);
    let model_input = ModelInput { xml, messages_json };
    // The file's name, not its path: the page may be passed on.
    let title = Path::new(name).file_name().map_or(name.into(), |n| n.to_string_lossy());
    Ok(render_page(&Page {
        title: &title,
        events: &events,
        model_input: &model_input,
        options: ViewOptions { context_mode, escape: o.escape, dangling_tool_calls: o.dangling_tool_calls },
        tokens: Some(&tokens),
        media: Some(&media),
    }))
}

/// A file's events as a store would keep them (parts' inline `data` set apart as blobs, so the
/// page does not carry the bytes twice), and the thumbnails of their images. A part naming a
/// blob by id has no bytes here: it shows as text.
fn with_pictures(events: Vec<AgentEvent>) -> Result<(Vec<AgentEvent>, PageMedia), String> {
    let limits = IngestLimits { max_blob_bytes: Limits::default().max_blob_bytes };
    let mut ingested = Ingested::default();
    let mut kept = Vec::with_capacity(events.len());
    for (index, event) in events.into_iter().enumerate() {
        let path = format!("events[{index}]");
        let mut value = event.into_value();
        ingest_event(&mut value, &path, limits, &mut ingested).map_err(|e| e.to_string())?;
        kept.push(AgentEvent::from_value(value, &path).map_err(|e| e.to_string())?);
    }
    let mut media = PageMedia::default();
    for image in images_named(&kept) {
        match ingested.new_blobs.iter().find(|blob| blob.info.id.as_str() == image.id) {
            Some(blob) => media.add(&image, &blob.bytes),
            None => media.note(&image, "named by id: its bytes are in a store, not in this file".to_owned()),
        }
    }
    Ok((kept, media))
}

fn stored_page(thread_id: &str, args: &ViewArgs) -> Result<String, String> {
    let runtime = super::command_runtime()?;
    let spec = args.store.clone().unwrap_or_default();
    runtime.block_on(async {
        let store = open_store(&spec, 1).await.map_err(|e| format!("cannot open the store {spec}: {e}"))?;
        let service = ThreadService::new(store, Limits::default());
        let cancel = tokio_util::sync::CancellationToken::new();
        service.view_page(thread_id, options(args), &cancel).await.map_err(|e| format!("thread {thread_id}: {e}"))
    })
}
