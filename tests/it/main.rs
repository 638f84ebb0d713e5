//! Integration tests: one binary, a module per area.

mod catalog;
mod problem_details;
mod upstream;
