//! Integration tests: one binary, a module per area.

mod apis;
mod architecture;
mod auth;
mod catalog;
mod clients;
mod confirm;
mod connections;
mod diff;
mod e2e;
mod fuzz_corpus;
mod http;
mod kubernetes;
mod mcp;
mod oas32;
mod observe;
mod packaging;
mod paging;
mod problem_details;
mod rate_limits;
mod reload;
mod state;
mod stdio;
mod support;
mod traces;
mod upstream;
mod workflows;
