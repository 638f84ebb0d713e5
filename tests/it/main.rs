//! Integration tests: one binary, a module per area.

mod catalog;
