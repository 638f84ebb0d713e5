//! Carrying MCP messages: Streamable HTTP ([`http`]) and newline-delimited stdio ([`stdio`]).
//! Both hand every message to the one dispatcher, [`crate::mcp::Server::handle`].

pub mod auth;
pub mod http;
pub mod spread;
pub mod stdio;
