//! Integration tests: one binary, a module per area.

mod architecture;
mod auth;
mod catalog;
mod connections;
mod e2e;
mod fuzz_corpus;
mod http;
mod mcp;
mod packaging;
mod problem_details;
mod stdio;
mod support;
mod traces;
mod upstream;
