//! Integration tests: one binary, a module per area.

mod problem_details;
mod upstream;
