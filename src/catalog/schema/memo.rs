//! What a referenced schema became, kept for the next tool that references it: most of a
//! large API's tools copy the same components into their `$defs`, and translating each copy
//! again was most of compiling their schemas.
//!
//! Only a copy that depends on nothing but the schema copied is kept: one that met no
//! `$ref`, recursive reference, `$anchor` or `$id` (each of which reads what the tool's
//! copy has met so far) and found no problem. Translating it again would give the same
//! value, patterns and warnings, so those are given instead, as long as the nesting it
//! reached still fits under the tool's depth limit.

use std::collections::HashMap;

use serde_json::Value;

use crate::openapi::FileId;

/// Translated schemas that depend on nothing but themselves, by their place in one
/// document. One per document and compile thread.
#[derive(Default)]
pub struct Translations {
    closed: HashMap<(FileId, String), Closed>,
}

/// One translation, and what making it said.
pub(super) struct Closed {
    pub(super) value: Value,
    /// The patterns met, in order, for the tool to check.
    pub(super) patterns: Vec<String>,
    /// Keywords left out: (file, pointer, what was lost).
    pub(super) warnings: Vec<(FileId, String, String)>,
    /// The deepest inline nesting reached, counted from the schema copied.
    pub(super) deepest: usize,
}

impl Translations {
    pub(super) fn get(&self, key: &(FileId, String)) -> Option<&Closed> {
        self.closed.get(key)
    }

    pub(super) fn keep(&mut self, key: (FileId, String), closed: Closed) {
        self.closed.insert(key, closed);
    }
}
