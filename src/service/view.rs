//! The page of a stored thread (`thread/view`, `threadkeeper view --thread`): its events as
//! stored, with the model input and per-iteration estimates of the same version.

use super::{RenderFormat, RenderOptions, Rendered, ServiceError, ServiceResult, ThreadService};
use crate::context::Tokenizer;
use crate::event::AgentEvent;
use crate::media::BlobId;
use crate::view::{images_named, render_live_page, render_page, Live, ModelInput, Page, PageMedia, ViewOptions};
use tokio_util::sync::CancellationToken;

/// Reads of a thread that another writer's append slipped between (a store shared by several
/// servers) are tried again this many times.
const CONSISTENT_READ_ATTEMPTS: usize = 3;

impl ThreadService {
    /// The page of `thread_id`, its model input as `thread/render` gives it for `options` and its
    /// estimates as `thread/tokens` does (format `xml`), all of one version when the store allows.
    /// The page is built off the request loop; cancelling answers at once and drops it.
    pub async fn view_page(
        &self,
        thread_id: &str,
        options: RenderOptions,
        cancel: &CancellationToken,
    ) -> ServiceResult<String> {
        self.build_view_page(thread_id, options, None, cancel).await
    }

    /// The page as [`Self::view_page`] builds it, served live: it asks `live` for what comes next.
    pub async fn live_view_page(
        &self,
        thread_id: &str,
        options: RenderOptions,
        live: Live,
        cancel: &CancellationToken,
    ) -> ServiceResult<String> {
        self.build_view_page(thread_id, options, Some(live), cancel).await
    }

    async fn build_view_page(
        &self,
        thread_id: &str,
        options: RenderOptions,
        live: Option<Live>,
        cancel: &CancellationToken,
    ) -> ServiceResult<String> {
        let mut attempts = 0;
        let (events, xml, messages, context_mode, tokens) = loop {
            attempts += 1;
            let xml = self.render(thread_id, RenderFormat::Xml, options.clone(), cancel).await?;
            // The page names media, never carries their bytes.
            let messages = self.render_naming_media(thread_id, RenderFormat::Messages, options.clone(), cancel).await?;
            let tokens =
                self.tokens(thread_id, RenderFormat::Xml, options.clone(), Tokenizer::Estimate, cancel).await?;
            let page = self.events(thread_id, 0, None).await?;
            let (Rendered::Xml { version: xml_version, text: xml }, Rendered::Messages { version, context_mode, json }) =
                (xml, messages)
            else {
                return Err(ServiceError::Internal("a render answered in another format".to_owned()));
            };
            if (xml_version == version && version == page.version) || attempts == CONSISTENT_READ_ATTEMPTS {
                break (page.events, xml, json, context_mode, tokens.by_iteration);
            }
        };
        let title = thread_id.to_owned();
        let event_count = events.len();
        let view_options =
            ViewOptions { context_mode, escape: options.escape, dangling_tool_calls: options.dangling_tool_calls };
        let parse = tokio::task::spawn_blocking(move || events.parse_all());
        let parsed: Vec<AgentEvent> = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(ServiceError::Cancelled),
            done = parse => done.map_err(|e| ServiceError::Internal(e.to_string()))?,
        };
        // A written page carries its pictures; a served one links to the server's.
        let media = match live {
            None => Some(self.page_media(&parsed, cancel).await?),
            Some(_) => None,
        };
        let build = move || {
            let model_input = ModelInput { xml, messages_json: messages };
            let page = Page {
                title: &title,
                events: &parsed,
                model_input: &model_input,
                options: view_options,
                tokens: Some(&tokens),
                media: media.as_ref(),
            };
            match &live {
                Some(live) => render_live_page(&page, live),
                None => render_page(&page),
            }
        };
        let job = tokio::task::spawn_blocking(build);
        let html = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(ServiceError::Cancelled),
            done = job => done.map_err(|e| ServiceError::Internal(e.to_string()))?,
        };
        tracing::debug!(thread_id, events = event_count, bytes = html.len(), "view page built");
        Ok(html)
    }

    /// The thumbnails of the image blobs `events` name, read from the store one at a time and
    /// only while the page's bound leaves room (see [`crate::view::media`]).
    async fn page_media(&self, events: &[AgentEvent], cancel: &CancellationToken) -> ServiceResult<PageMedia> {
        let mut media = PageMedia::default();
        for image in images_named(events) {
            if cancel.is_cancelled() {
                return Err(ServiceError::Cancelled);
            }
            if !media.has_room() {
                media.over_budget(&image);
                continue;
            }
            let blob = match BlobId::parse(&image.id) {
                Ok(id) => self.store.blob(&id).await?,
                Err(_) => None,
            };
            let Some(blob) = blob else {
                media.note(&image, "not held by the store".to_owned());
                continue;
            };
            // Decoding is CPU work: off the request loop.
            let add = tokio::task::spawn_blocking(move || {
                media.add(&image, &blob.bytes);
                media
            });
            media = add.await.map_err(|e| ServiceError::Internal(e.to_string()))?;
        }
        Ok(media)
    }
}
