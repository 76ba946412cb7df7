//! Each thread as a resource, `thread://{threadId}`: its text rendering, bounded as
//! `read_thread`'s first page, with a line saying how to read on.

use super::listing::{self, ListingError};
use super::tools::read_thread::{read_page, with_footer, PageRequest, DEFAULT_MAX_TOKENS};
use crate::service::ThreadService;
use rmcp::model::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult, Resource, ResourceContents, ResourceTemplate,
};
use rmcp::ErrorData as McpError;

pub const SCHEME: &str = "thread://";
pub const TEMPLATE: &str = "thread://{threadId}";
pub const MIME_TYPE: &str = "text/plain";
/// Threads per `resources/list` page.
pub const PAGE_SIZE: usize = 50;

pub fn uri_of(thread_id: &str) -> String {
    format!("{SCHEME}{thread_id}")
}

pub async fn list(service: &ThreadService, cursor: Option<&str>) -> Result<ListResourcesResult, McpError> {
    let page = listing::page(service, cursor, PAGE_SIZE).await.map_err(|e| match e {
        ListingError::BadCursor => McpError::invalid_params("cursor is not one this server gave out", None),
        ListingError::Service(e) => McpError::internal_error(e.to_string(), None),
    })?;
    let resources = page
        .threads
        .into_iter()
        .map(|thread| {
            let description = format!("{} events, updatedAt {}", thread.event_count, thread.updated_at);
            let mut resource = Resource::new(uri_of(&thread.thread_id), thread.thread_id)
                .with_mime_type(MIME_TYPE)
                .with_description(description);
            if let Some(title) = thread.title {
                resource = resource.with_title(title);
            }
            resource
        })
        .collect();
    let mut result = ListResourcesResult::with_all_items(resources);
    result.next_cursor = page.next_cursor;
    Ok(result)
}

pub fn templates() -> ListResourceTemplatesResult {
    ListResourceTemplatesResult::with_all_items(vec![ResourceTemplate::new(TEMPLATE, "thread")
        .with_title("A stored agent thread")
        .with_description("The thread's events as text, bounded as read_thread's first page")
        .with_mime_type(MIME_TYPE)])
}

pub async fn read(service: &ThreadService, uri: &str) -> Result<ReadResourceResult, McpError> {
    let Some(thread_id) = uri.strip_prefix(SCHEME).filter(|id| !id.is_empty()) else {
        return Err(McpError::resource_not_found(format!("{uri} is not a thread:// resource"), None));
    };
    let page = match read_page(service, thread_id, PageRequest::first(DEFAULT_MAX_TOKENS)).await {
        Ok(page) => page,
        Err(message) => return Err(McpError::resource_not_found(message, None)),
    };
    let contents = ResourceContents::text(with_footer(&page), uri).with_mime_type(MIME_TYPE);
    Ok(ReadResourceResult::new(vec![contents]))
}
