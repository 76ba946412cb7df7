//! The MCP server: rmcp's `ServerHandler` over the tools and resources.

use super::import_guard::AllowedDirs;
use super::resources;
use super::tools::{self, ToolContext};
use crate::service::ThreadService;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use std::sync::Arc;

const INSTRUCTIONS: &str = "Threads of agent runs kept by threadkeeper. list_threads gives the threads newest \
first; read_thread reads one in pages that fit a token budget (follow nextEvent); get_event gives one event whole. \
Each thread is also the resource thread://{threadId}.";

#[derive(Clone)]
pub struct McpServer {
    tools: ToolContext,
}

impl McpServer {
    pub fn new(service: Arc<ThreadService>, allowed_imports: AllowedDirs) -> Self {
        McpServer { tools: ToolContext { service, allowed_imports } }
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder().enable_tools().enable_resources().build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("threadkeeper", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(tools::definitions(&self.tools)))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        match tools::call(&self.tools, &request.name, request.arguments, context.ct).await {
            Some(result) => Ok(result.into()),
            None => Err(McpError::invalid_params(format!("no tool named {:?}", request.name), None)),
        }
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let cursor = request.as_ref().and_then(|r| r.cursor.as_deref());
        resources::list(&self.tools.service, cursor).await
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        Ok(resources::templates())
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        resources::read(&self.tools.service, &request.uri).await.map(Into::into)
    }
}

/// Serves MCP on stdin/stdout until the client closes its end.
pub async fn serve_stdio(server: McpServer) -> Result<(), String> {
    let running = server.serve(rmcp::transport::stdio()).await.map_err(|e| format!("cannot start: {e}"))?;
    let reason = running.waiting().await.map_err(|e| format!("server task failed: {e}"))?;
    tracing::debug!(?reason, "MCP session ended");
    Ok(())
}
