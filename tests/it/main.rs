//! Integration tests: one binary, a module per area.

mod catalog;
mod http;
mod mcp;
mod stdio;
mod support;
