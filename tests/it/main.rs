//! Integration tests: one binary, a module per area.

mod auth;
mod catalog;
mod problem_details;
mod upstream;
