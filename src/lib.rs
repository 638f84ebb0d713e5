//! ferry: an OpenAPI description plus a curation file, compiled into an MCP server.
//!
//! The modules follow the pipeline: [`openapi`] and [`curation`] read what the user gave,
//! [`catalog`] compiles it into tools, [`mcp`] answers protocol requests, [`transport`]
//! carries them over HTTP and stdio, and [`upstream`] calls the real API (through [`client`],
//! ferry's HTTP client); [`trace`] continues a caller's W3C trace through them. [`load`]
//! reads the files and compiles them as every command does, and [`serve`] assembles what
//! serving runs (servers, workers, reloads) as `ferry serve` does.

pub mod access;
pub mod arazzo;
pub mod auth;
pub mod boxed;
pub mod catalog;
pub mod client;
pub mod clients;
pub mod curation;
pub mod demo;
pub mod diagnostic;
pub mod file;
#[doc(hidden)]
pub mod fuzzing;
pub mod json;
pub mod load;
pub mod lock;
pub mod mcp;
pub mod observe;
pub mod openapi;
pub mod parameter;
pub mod rate;
pub mod run;
pub mod serve;
pub mod state;
pub mod trace;
pub mod transport;
pub mod upstream;
