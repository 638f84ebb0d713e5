//! Integration tests: one binary, a module per area.

mod http;
mod mcp;
mod stdio;
mod support;
