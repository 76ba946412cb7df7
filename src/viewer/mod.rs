//! `threadkeeper view --serve`: every thread of a store as live pages, over HTTP.
//!
//! The list of threads and each thread's page (the page `threadkeeper view` writes, reading
//! its own change feed) follow the store as any process writes it: the store's change signal
//! wakes server-sent event streams, which carry what is new. Every request needs the server's
//! own `Host` and the access token ([`guard`]); thread text reaches pages as JSON data only.
//! The media threads name are served from the store ([`blobs`]), and the list page searches
//! every thread ([`search`]).

mod blobs;
mod feed;
mod guard;
mod list;
mod respond;
mod search;

pub use feed::{append_message, ThreadFeed};
pub use guard::authority;
pub use list::{one_line, ThreadList, ThreadRow};

use crate::service::{check_thread_id, Limits, RenderFormat, RenderOptions, Rendered, ServiceError, ThreadService};
use crate::store::{ChangeSignal, Store};
use crate::view::{embed, live_csp, Live};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use blobs::{blob_response, NamedBlobs, Want};
use futures_util::stream::Stream;
use respond::{html, json, text};
use search::{search_response, SearchQuery};
use serde::Deserialize;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

const LIST_CSS: &str = include_str!("assets/list.css");
const LIST_BODY: &str = include_str!("assets/list.html");
const LIST_JS: &str = include_str!("assets/list.js");

/// What the handlers share.
struct Viewer {
    store: Arc<dyn Store>,
    service: ThreadService,
    list: ThreadList,
    named: NamedBlobs,
    signal: ChangeSignal,
    stop: CancellationToken,
    token: String,
    options: RenderOptions,
}

/// A fresh access token: 128 random bits as hex.
pub fn new_token() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// Whether a token given with `--token` can sit in a URL as it is.
pub fn valid_token(token: &str) -> bool {
    !token.is_empty() && token.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~'))
}

/// The URL of the thread list, token included.
pub fn list_url(addr: SocketAddr, token: &str) -> String {
    format!("http://{}/?token={token}", authority(addr))
}

/// Serves the viewer of `store` on `listener` until `stop` is cancelled; pages render with
/// `options` (the thread's own settings where it leaves them unset).
pub async fn serve(
    listener: TcpListener,
    store: Arc<dyn Store>,
    token: String,
    options: RenderOptions,
    stop: CancellationToken,
) -> std::io::Result<()> {
    let addr = listener.local_addr()?;
    let signal = store.watch_changes().await.map_err(std::io::Error::other)?;
    let service = ThreadService::new(store.clone(), Limits::default());
    let viewer = Arc::new(Viewer {
        store,
        service,
        list: ThreadList::default(),
        named: NamedBlobs::default(),
        signal,
        stop: stop.clone(),
        token: token.clone(),
        options,
    });
    let access = Arc::new(guard::Access::new(addr, token));
    let app = Router::new()
        .route("/", get(list_page))
        .route("/feed", get(list_feed))
        .route("/thread/{id}", get(thread_page))
        .route("/thread/{id}/feed", get(thread_feed))
        .route("/thread/{id}/model", get(model_input))
        .route("/blob/{id}", get(blob))
        .route("/blob/{id}/thumbnail", get(blob_thumbnail))
        .route("/search", get(search))
        .fallback(|| async { text(StatusCode::NOT_FOUND, "not found".to_owned()) })
        .with_state(viewer)
        .layer(axum::middleware::from_fn_with_state(access, guard::guard));
    // Feeds end when `stop` is cancelled, so the graceful shutdown does not wait on them.
    axum::serve(listener, app).with_graceful_shutdown(stop.cancelled_owned()).await
}

fn service_error(thread_id: &str, e: ServiceError) -> Response {
    match e {
        ServiceError::NotFound { .. } | ServiceError::InvalidParams { .. } => {
            text(StatusCode::NOT_FOUND, format!("no thread {thread_id}"))
        }
        other => text(StatusCode::SERVICE_UNAVAILABLE, other.to_string()),
    }
}

async fn list_page(State(viewer): State<Arc<Viewer>>) -> Response {
    let rows = match viewer.list.rows(&*viewer.store).await {
        Ok(rows) => rows,
        Err(e) => return text(StatusCode::SERVICE_UNAVAILABLE, e.to_string()),
    };
    let data = serde_json::json!({
        "threads": rows,
        "token": viewer.token,
        "feed": format!("/feed?token={}", viewer.token),
        "search": format!("/search?token={}", viewer.token),
    });
    let data = embed::json_for_script(&data.to_string());
    let mut page = String::with_capacity(data.len() + LIST_CSS.len() + LIST_JS.len() + 1024);
    page.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    page.push_str("<meta http-equiv=\"Content-Security-Policy\" content=\"");
    page.push_str(live_csp());
    page.push_str("\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    page.push_str(
        "<meta name=\"color-scheme\" content=\"light dark\">\n<title>threads · threadkeeper</title>\n<style>\n",
    );
    page.push_str(LIST_CSS);
    page.push_str("</style>\n</head>\n<body>\n");
    page.push_str(LIST_BODY);
    page.push_str("<script type=\"application/json\" id=\"list-data\">");
    page.push_str(&data);
    page.push_str("</script>\n<script>\n");
    page.push_str(LIST_JS);
    page.push_str("</script>\n</body>\n</html>\n");
    html(page)
}

/// The list again after every change that altered it.
async fn list_feed(State(viewer): State<Arc<Viewer>>) -> Response {
    let mut signal = viewer.signal.clone();
    signal.mark_unchanged();
    let state = (viewer, signal, None::<String>);
    let stream = futures_util::stream::unfold(state, |(viewer, mut signal, mut last)| async move {
        loop {
            if last.is_some() {
                tokio::select! {
                    changed = signal.changed() => changed.ok()?,
                    _ = viewer.stop.cancelled() => return None,
                }
            }
            let rows = match viewer.list.rows(&*viewer.store).await {
                Ok(rows) => rows,
                Err(e) => {
                    tracing::warn!(error = %e, "live list could not read the store");
                    last.get_or_insert_with(String::new);
                    continue;
                }
            };
            let json = serde_json::json!({ "threads": rows }).to_string();
            if last.as_deref() != Some(&json) {
                last = Some(json.clone());
                return Some((Ok::<_, Infallible>(Event::default().data(json)), (viewer, signal, last)));
            }
        }
    });
    sse(stream)
}

fn sse(stream: impl Stream<Item = Result<Event, Infallible>> + Send + 'static) -> Response {
    Sse::new(stream).keep_alive(KeepAlive::default()).into_response()
}

fn live_links(viewer: &Viewer, thread_id: &str) -> Live {
    let token = &viewer.token;
    Live {
        feed: format!("/thread/{thread_id}/feed?token={token}"),
        model: format!("/thread/{thread_id}/model?token={token}"),
        list: format!("/?token={token}"),
        blob: "/blob/".to_owned(),
        query: format!("?token={token}"),
    }
}

async fn blob(State(viewer): State<Arc<Viewer>>, Path(id): Path<String>) -> Response {
    blob_response(&*viewer.store, &viewer.named, &id, Want::Bytes).await
}

async fn blob_thumbnail(State(viewer): State<Arc<Viewer>>, Path(id): Path<String>) -> Response {
    blob_response(&*viewer.store, &viewer.named, &id, Want::Thumbnail).await
}

async fn search(State(viewer): State<Arc<Viewer>>, Query(query): Query<SearchQuery>) -> Response {
    search_response(&viewer.service, query).await
}

async fn thread_page(State(viewer): State<Arc<Viewer>>, Path(thread_id): Path<String>) -> Response {
    if let Err(e) = check_thread_id(&thread_id) {
        return service_error(&thread_id, e);
    }
    let live = live_links(&viewer, &thread_id);
    let cancel = viewer.stop.child_token();
    match viewer.service.live_view_page(&thread_id, viewer.options.clone(), live, &cancel).await {
        Ok(page) => html(page),
        Err(e) => service_error(&thread_id, e),
    }
}

#[derive(Deserialize)]
struct FeedQuery {
    /// How many events the page holds.
    from: Option<usize>,
}

async fn thread_feed(
    State(viewer): State<Arc<Viewer>>,
    Path(thread_id): Path<String>,
    Query(query): Query<FeedQuery>,
    headers: HeaderMap,
) -> Response {
    if let Err(e) = check_thread_id(&thread_id) {
        return service_error(&thread_id, e);
    }
    // A browser reconnecting says what it got last; the page's own count otherwise.
    let resumed = headers.get("last-event-id").and_then(|v| v.to_str().ok()).and_then(|v| v.parse().ok());
    let from = resumed.or(query.from).unwrap_or(0);
    let mut signal = viewer.signal.clone();
    signal.mark_unchanged();
    let feed = ThreadFeed::new(viewer.store.clone(), thread_id, from, signal, viewer.stop.clone());
    let stream = futures_util::stream::unfold(feed, |mut feed| async move {
        let message = feed.next().await?;
        let event = Event::default().id(message.event_count.to_string()).data(message.json);
        Some((Ok::<_, Infallible>(event), feed))
    });
    sse(stream)
}

/// The model input and estimates of the thread as it is now:
/// `{"xml": "…", "messages": […], "tokens": [[iteration, tokens], …]}`.
async fn model_input(State(viewer): State<Arc<Viewer>>, Path(thread_id): Path<String>) -> Response {
    if let Err(e) = check_thread_id(&thread_id) {
        return service_error(&thread_id, e);
    }
    let cancel = viewer.stop.child_token();
    let service = &viewer.service;
    let options = viewer.options.clone();
    let read = async {
        let xml = service.render(&thread_id, RenderFormat::Xml, options.clone(), &cancel).await?;
        // Pages name media, never carry their bytes (as `thread/view`'s).
        let messages =
            service.render_naming_media(&thread_id, RenderFormat::Messages, options.clone(), &cancel).await?;
        let estimate = crate::context::Tokenizer::Estimate;
        let tokens = service.tokens(&thread_id, RenderFormat::Xml, options, estimate, &cancel).await?;
        Ok::<_, ServiceError>((xml, messages, tokens.by_iteration))
    };
    match read.await {
        Ok((Rendered::Xml { text: xml, .. }, Rendered::Messages { json: messages, .. }, tokens)) => {
            let head = serde_json::json!({ "xml": xml, "tokens": tokens }).to_string();
            // The messages are spliced in as the render's JSON text.
            json(format!("{},\"messages\":{messages}}}", &head[..head.len() - 1]))
        }
        Ok(_) => text(StatusCode::INTERNAL_SERVER_ERROR, "a render answered in another format".to_owned()),
        Err(e) => service_error(&thread_id, e),
    }
}
