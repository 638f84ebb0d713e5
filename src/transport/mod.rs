//! Carrying MCP messages: Streamable HTTP ([`http`], over TLS with [`tls`]) and
//! newline-delimited stdio ([`stdio`]). Both hand every message to the one dispatcher,
//! [`crate::mcp::Server::handle`]. [`admin`] is the operators' listener beside them (metrics).

pub mod admin;
pub mod auth;
mod connection;
pub mod http;
pub mod spread;
mod sse;
pub mod stdio;
pub mod tls;
