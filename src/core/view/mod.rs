//! A thread as one self-contained HTML page: a timeline grouped by iteration, tool calls beside
//! their answers, and the exact model input for a set of render options.
//!
//! The page is static text around one JSON document: the events as stored, how the standard
//! render links calls to answers ([`calls`]), per-iteration token counts, and the model input.
//! Its script builds the timeline from that JSON with `textContent` only, lazily, group by
//! group, so nothing in a thread can become markup and a 100k-event thread opens quickly. No
//! request leaves the page (its Content-Security-Policy forbids every fetch).

pub mod calls;
pub mod embed;
pub mod media;
pub mod tokens;

pub use calls::{link_events, AskLink, CallLink, CallOutcome, Links};
pub use media::{images_named, ImageBlob, PageMedia};
pub use tokens::iteration_tokens;

use crate::event::AgentEvent;
use crate::messages::{ContextMode, DanglingToolCalls};
use crate::xml::EscapeMode;
use serde::Serialize;
use serde_json::Number;

const CSS: &str = include_str!("assets/view.css");
const BODY: &str = include_str!("assets/body.html");
const JS: &str = include_str!("assets/view.js");

/// Blocks everything but the page's own inline style and script: no fetch, image, font or
/// frame can reach the network.
const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; \
                   img-src data:; base-uri 'none'; form-action 'none'";

/// A served page's policy: the file's, and requests back to the server it came from only (its
/// change feed, fresh model input, search, and the pictures of the thread's blobs).
const LIVE_CSP: &str = "default-src 'none'; connect-src 'self'; style-src 'unsafe-inline'; \
                        script-src 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; form-action 'none'";

/// Where a page served live (`threadkeeper view --serve`) asks for what is new; a written page
/// has none, and its script then never makes a request.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Live {
    /// The thread's server-sent events: appends as they happen.
    pub feed: String,
    /// The model input and estimates of the thread as it is now (JSON).
    pub model: String,
    /// The list of every thread.
    pub list: String,
    /// Where a blob's bytes are: this, the blob id, then [`Live::query`] (its thumbnail: the
    /// id, `/thumbnail`, then the query).
    pub blob: String,
    /// The query every request to the server carries (its access token).
    pub query: String,
}

/// The model input the page's second view shows, rendered for the options in `options`.
pub struct ModelInput {
    /// The `<thread>` document (with the response prefix).
    pub xml: String,
    /// JSON text of the `messages` render: an array of stored messages.
    pub messages_json: String,
}

/// The render options the model input was made with, named on the page as the protocol names
/// them.
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ViewOptions {
    pub context_mode: ContextMode,
    pub escape: EscapeMode,
    pub dangling_tool_calls: DanglingToolCalls,
}

pub struct Page<'a> {
    /// The file name or thread id the page is titled with.
    pub title: &'a str,
    /// Every event, as stored.
    pub events: &'a [AgentEvent],
    pub model_input: &'a ModelInput,
    pub options: ViewOptions,
    /// Upstream's estimate per iteration, when counted.
    pub tokens: Option<&'a [(Number, u64)]>,
    /// The thumbnails a written page embeds ([`media`]); a served page links to the server's.
    pub media: Option<&'a PageMedia>,
}

/// The whole HTML document.
pub fn render_page(page: &Page<'_>) -> String {
    document(page, CSP, None)
}

/// The document of a served page: the same page, updating itself from `live`.
pub fn render_live_page(page: &Page<'_>, live: &Live) -> String {
    document(page, LIVE_CSP, Some(live))
}

/// The Content-Security-Policy a served page's response carries in its header too.
pub fn live_csp() -> &'static str {
    LIVE_CSP
}

fn document(page: &Page<'_>, csp: &str, live: Option<&Live>) -> String {
    let data = page_data(page, live);
    let data = embed::json_for_script(&data);
    let mut html = String::with_capacity(data.len() + CSS.len() + JS.len() + 2048);
    html.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    html.push_str("<meta http-equiv=\"Content-Security-Policy\" content=\"");
    html.push_str(csp);
    html.push_str("\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    html.push_str("<meta name=\"color-scheme\" content=\"light dark\">\n<title>");
    html.push_str(&embed::html_text(page.title));
    html.push_str(" · threadkeeper</title>\n<style>\n");
    html.push_str(CSS);
    html.push_str("</style>\n</head>\n<body>\n");
    html.push_str(BODY);
    html.push_str("<script type=\"application/json\" id=\"thread-data\">");
    html.push_str(&data);
    html.push_str("</script>\n<script>\n");
    html.push_str(JS);
    html.push_str("</script>\n</body>\n</html>\n");
    html
}

/// The page's JSON document. Events and messages are spliced in as JSON text, not rebuilt.
fn page_data(page: &Page<'_>, live: Option<&Live>) -> String {
    #[derive(Serialize)]
    struct Head<'a> {
        title: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        live: Option<&'a Live>,
        options: &'a ViewOptions,
        links: &'a Links,
        tokens: Option<&'a [(Number, u64)]>,
        xml: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        media: Option<&'a PageMedia>,
    }
    let links = link_events(page.events);
    let head = Head {
        title: page.title,
        live,
        options: &page.options,
        links: &links,
        tokens: page.tokens,
        xml: &page.model_input.xml,
        media: page.media.filter(|media| !media.is_empty()),
    };
    let mut out = serde_json::to_string(&head).expect("page data serializes");
    out.pop(); // the closing brace: events and messages follow
    out.push_str(",\"events\":[");
    for (index, event) in page.events.iter().enumerate() {
        if index > 0 {
            out.push(',');
        }
        out.push_str(&serde_json::to_string(event.fields()).expect("events serialize"));
    }
    out.push_str("],\"messages\":");
    out.push_str(&page.model_input.messages_json);
    out.push('}');
    out
}
