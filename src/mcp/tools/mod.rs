//! The MCP tools: their definitions (input and output schemas) and one dispatcher.
//!
//! Each tool is a module with its arguments, its output and one `async fn` that turns the
//! one into the other. Failures the caller can act on (unknown thread, bad arguments, a path
//! outside the allowed directories) are tool errors, `isError: true` with the reason as text,
//! so the agent reads them; the server itself never fails a call for them.

pub mod get_event;
pub mod import_session;
pub mod list_threads;
pub mod read_thread;
pub mod search;

use super::import_guard::AllowedDirs;
use crate::service::{ServiceError, ThreadService};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// What a tool works with.
#[derive(Clone)]
pub struct ToolContext {
    pub service: Arc<ThreadService>,
    /// Where `import_session` may read; empty, the tool does not exist.
    pub allowed_imports: AllowedDirs,
}

/// A tool's answer: `structuredContent`, and the text a model reads.
pub struct ToolOutput {
    pub structured: Value,
    pub text: String,
}

impl ToolOutput {
    pub fn new(output: &impl Serialize, text: String) -> Self {
        let structured = serde_json::to_value(output).expect("tool outputs serialize");
        ToolOutput { structured, text }
    }
}

/// A failure the caller sees as a tool error.
pub type ToolResult = Result<ToolOutput, String>;

/// The tools this server lists.
pub fn definitions(context: &ToolContext) -> Vec<Tool> {
    let read_only = || ToolAnnotations::new().read_only(true).open_world(false);
    let mut tools = vec![
        tool::<list_threads::ListThreadsArgs, list_threads::ListThreadsOutput>(
            list_threads::NAME,
            list_threads::DESCRIPTION,
        )
        .annotate(read_only().idempotent(true)),
        tool::<read_thread::ReadThreadArgs, read_thread::ReadThreadOutput>(read_thread::NAME, read_thread::DESCRIPTION)
            .annotate(read_only().idempotent(true)),
        tool::<get_event::GetEventArgs, get_event::GetEventOutput>(get_event::NAME, get_event::DESCRIPTION)
            .annotate(read_only().idempotent(true)),
    ];
    if search::AVAILABLE {
        tools.push(
            tool::<search::SearchThreadsArgs, search::SearchThreadsOutput>(search::NAME, search::DESCRIPTION)
                .annotate(read_only().idempotent(true)),
        );
    }
    if !context.allowed_imports.is_empty() {
        tools.push(
            tool::<import_session::ImportSessionArgs, import_session::ImportSessionOutput>(
                import_session::NAME,
                import_session::DESCRIPTION,
            )
            .annotate(ToolAnnotations::new().read_only(false).destructive(false).idempotent(false).open_world(false)),
        );
    }
    tools
}

fn tool<Args: JsonSchema + 'static, Output: JsonSchema + 'static>(
    name: &'static str,
    description: &'static str,
) -> Tool {
    Tool::new(name, description, JsonObject::new()).with_input_schema::<Args>().with_output_schema::<Output>()
}

/// Runs the tool `name`; `None` when there is no tool of that name at all.
pub async fn call(
    context: &ToolContext,
    name: &str,
    arguments: Option<JsonObject>,
    cancel: CancellationToken,
) -> Option<CallToolResult> {
    let service = &context.service;
    let result = match name {
        list_threads::NAME => run(arguments, |args| list_threads::call(service, args)).await,
        read_thread::NAME => run(arguments, |args| read_thread::call(service, args)).await,
        get_event::NAME => run(arguments, |args| get_event::call(service, args)).await,
        search::NAME => run(arguments, |args| search::search_threads(service, args)).await,
        import_session::NAME => {
            if context.allowed_imports.is_empty() {
                Err(format!(
                    "{} is not enabled: the server was started without --allow-import DIR",
                    import_session::NAME
                ))
            } else {
                run(arguments, |args| import_session::call(service, &context.allowed_imports, args, cancel)).await
            }
        }
        _ => return None,
    };
    Some(match result {
        Ok(output) => {
            let mut result = CallToolResult::success(vec![ContentBlock::text(output.text)]);
            result.structured_content = Some(output.structured);
            result
        }
        Err(message) => {
            tracing::debug!(tool = name, error = %message, "tool error");
            CallToolResult::error(vec![ContentBlock::text(message)])
        }
    })
}

async fn run<Args, F, Fut>(arguments: Option<JsonObject>, tool: F) -> ToolResult
where
    Args: DeserializeOwned,
    F: FnOnce(Args) -> Fut,
    Fut: std::future::Future<Output = ToolResult>,
{
    tool(parse_arguments(arguments)?).await
}

/// The arguments as the tool's type; the error names the field at fault.
fn parse_arguments<Args: DeserializeOwned>(arguments: Option<JsonObject>) -> Result<Args, String> {
    let value = Value::Object(arguments.unwrap_or_default());
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        if path == "." {
            format!("invalid arguments: {}", e.inner())
        } else {
            format!("invalid arguments: {path}: {}", e.inner())
        }
    })
}

/// A service failure as the caller reads it.
pub fn service_error(error: ServiceError) -> String {
    match error {
        ServiceError::NotFound { thread_id } => format!("no thread {thread_id:?} in this store"),
        other => other.to_string(),
    }
}
