//! The `ferry` command: parses arguments, sets up logging, calls the library.

fn main() {}
