//! Calling the upstream API: one tool call becomes one HTTP request (plus retries where they
//! are safe), and the answer becomes a tool result that keeps what the API said.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::catalog::{Catalog, Tool};

/// A tool result, as MCP's `CallToolResult` without the era-specific parts: the protocol
/// layer adds `resultType` for modern clients and, for legacy clients, wraps a
/// `structuredContent` that is not an object as `{"result": value}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResult {
    pub content: Vec<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    #[serde(rename = "_meta", skip_serializing_if = "Map::is_empty")]
    pub meta: Map<String, Value>,
}

/// The pooled client that calls one upstream API for every tool of a catalog.
#[derive(Debug, Clone)]
pub struct Upstream {}

#[derive(Debug, thiserror::Error)]
pub enum UpstreamError {
    #[error("no upstream base URL: name one with `upstream:` or --upstream")]
    NoBaseUrl,
}

impl Upstream {
    /// Builds the client for `catalog`'s upstream; fails when it cannot be called at all
    /// (no base URL, credentials missing from the environment).
    pub fn new(catalog: &Catalog) -> Result<Upstream, UpstreamError> {
        let _ = catalog;
        todo!("upstream client")
    }

    /// Calls `tool` with arguments already validated against its input schema. Never fails:
    /// every outcome, the upstream's refusal included, is a tool result.
    pub async fn call(&self, tool: &Tool, arguments: &Map<String, Value>) -> ToolResult {
        let _ = (tool, arguments);
        todo!("upstream call")
    }
}
